// Small DOM helpers for the dashboard: build elements from tag, properties and children, with
// text always set as text (never parsed as HTML), so visit data cannot inject markup.

/** Child nodes `h` accepts: nodes, text, or nothing (skipped). */
export type Child = Node | string | number | null | undefined | false;

/** Element properties `h` sets: attributes (strings), booleans, and `on<event>` listeners. */
export type Props = Record<string, string | number | boolean | null | undefined | EventListener>;

// Attributes that are shown (a tooltip) or read aloud as text: marked as text is (see `visibleText`).
const TEXT_ATTRIBUTES = new Set(['title', 'aria-label']);

/**
 * Creates an element. Keys starting with "on" add event listeners; `class` sets the class
 * attribute; `true` sets an empty attribute, `false`/null/undefined leave it out. `title` and
 * `aria-label` get the marks text gets.
 * @example
 * h('button', { type: 'button', onclick: () => save() }, 'Save');
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') element.addEventListener(key.slice(2), value);
    else if (key === 'value' && 'value' in element) (element as HTMLInputElement).value = String(value);
    else if (key === 'checked' && element instanceof HTMLInputElement) element.checked = value === true;
    else element.setAttribute(key, value === true ? '' : TEXT_ATTRIBUTES.has(key) ? visibleText(String(value)) : String(value));
  }
  append(element, ...children);
  return element;
}

// Characters that show as nothing or change how the text around them shows. Bidirectional-text
// controls (ALM, LRM, RLM, the embeddings and overrides, the isolates) reorder what follows them:
// in visit data they disguise a path or a user agent ("/\u202Egnicirp" shows as "/pricing", a
// reversed "(compatible; Googlebot/2.1 ...)" reads as Googlebot's). Format characters (Cf: zero-width
// space and joiners, word joiner, BOM, soft hyphen, tags), C0 and C1 controls (Cc), the other
// default-ignorable code points (variation selectors, Hangul fillers, the combining grapheme joiner)
// and the line and paragraph separators draw nothing, so "/pri\u200Bcing" reads as "/pricing". The
// bidi controls are Cf too. Tab, line feed and carriage return stay: they are the layout of the
// dashboard's own JSON and robots.txt previews, and show as space or a line break, not as nothing.
// Kept as well, as the emoji they belong to: a zero-width joiner between two pictographs (a
// pictograph may carry its presentation selector or a skin tone: 👩🏽‍💻, 🏳️‍🌈) and the
// presentation selector after a pictograph (❤️). A joiner elsewhere, and every other selector, is
// marked: that keeps the test to one pass with no emoji tables, and an emoji outside a ZWJ sequence
// (a subdivision flag's tag characters, a keycap's selector) shows its marks.
const HIDDEN = /((?<=\p{Extended_Pictographic}[\uFE0F\u{1F3FB}-\u{1F3FF}]?)\u200D(?=\p{Extended_Pictographic})|(?<=\p{Extended_Pictographic})\uFE0F)|(?![\t\n\r])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;

/**
 * Text as shown: each character that draws nothing or reorders the text around it replaced by a
 * visible mark ("⟨U+202E⟩", "⟨U+200B⟩"), so what a visitor sent cannot be made to read as something
 * else. Every text `h` and `append` add goes through it; form values keep the text as it is.
 * @example
 * visibleText('/\u202Egnicirp'); // '/⟨U+202E⟩gnicirp'
 * visibleText('/pri\u200Bcing'); // '/pri⟨U+200B⟩cing'
 */
export function visibleText(text: string): string {
  return text.replace(HIDDEN, (char: string, emoji: string | undefined) => (emoji !== undefined ? char : `\u27e8U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}\u27e9`));
}

/**
 * Sets the tab (and history) title from its parts, the page first, then "agentwarden", with the
 * marks headings get: a project name or an agent id from a link must not read differently there.
 * @example
 * setTitle('Timeline', project.name); // "Timeline · shop · agentwarden"
 */
export function setTitle(...parts: string[]): void {
  document.title = visibleText([...parts, 'agentwarden'].join(' · '));
}

/** Appends children (text as text nodes, hidden characters made visible; see `visibleText`). */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(visibleText(String(child))));
  }
}

/** Replaces every child of an element. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

let counter = 0;
/** A unique id for label/control pairs. */
export function uid(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}`;
}

/** A labelled form control: the label names it for screen readers and takes clicks. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  const id = control.id || uid('f');
  control.id = id;
  const hintId = hint === undefined ? undefined : `${id}-hint`;
  if (hintId !== undefined) control.setAttribute('aria-describedby', hintId);
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hint === undefined ? null : h('p', { class: 'hint', id: hintId }, hint));
}

/** Copies text to the clipboard, falling back to selecting it for a manual copy. */
export async function copyText(text: string, fallbackTarget?: HTMLElement): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (fallbackTarget !== undefined) {
      const range = document.createRange();
      range.selectNodeContents(fallbackTarget);
      const selection = window.getSelection();
      selection?.removeAllRanges();
      selection?.addRange(range);
    }
    return false;
  }
}
