// Building blocks the dashboard's pages share: panels with a CSV link, tables that become one
// labelled block per row in a narrow window, share bars, verification and decision badges and
// outcome tiles.
import type { VisitJson } from './api.js';
import { h, replace, type Child } from './dom.js';
import { formatCount, plural, RESULT_LABELS } from './format.js';

/** A table column: its header, how to draw a row's cell, and whether it holds numbers. */
export interface Column<T> {
  readonly label: string;
  readonly cell: (row: T) => Child;
  readonly numeric?: boolean;
  /** A header only screen readers hear (a column of bars or buttons). */
  readonly hiddenLabel?: boolean;
}

/**
 * A table with a caption for screen readers. With `stack`, a narrow window shows each row as a
 * block of "label: value" lines (the labels come from data-label), so no column is cut off.
 */
export function dataTable<T>(caption: string, columns: readonly Column<T>[], rows: readonly T[], options: { stack?: boolean; className?: string; rowClass?: (row: T) => string } = {}): HTMLElement {
  const classes = ['compact', options.stack === true ? 'stack' : '', options.className ?? ''].filter((c) => c !== '').join(' ');
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: classes },
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', {}, h('tr', {}, ...columns.map((column) => h('th', { scope: 'col', class: column.numeric === true ? 'num' : '' }, column.hiddenLabel === true ? h('span', { class: 'visually-hidden' }, column.label) : column.label)))),
      h(
        'tbody',
        {},
        ...rows.map((row) =>
          h(
            'tr',
            { class: options.rowClass?.(row) ?? '' },
            // One block per cell: stacked, a cell is a grid of its label and this block.
            ...columns.map((column) => h('td', { class: column.numeric === true ? 'num' : '', 'data-label': column.hiddenLabel === true ? '' : column.label }, h('div', {}, column.cell(row)))),
          ),
        ),
      ),
    ),
  );
}

/**
 * A path as a table shows it: its first three lines, whole in its tooltip (and on the visit page).
 * A bot picks its paths, up to 16 KiB: unclipped, one made a row thousands of pixels tall and
 * pushed every panel below it out of reach. `before` goes in front of it (a request's method).
 */
export function clippedPath(path: string, ...before: Child[]): HTMLElement {
  return h('span', { class: 'path clip', title: path }, ...before, path);
}

/**
 * Text too long to show whole at once (a 16 KiB path, a header value of tens of kilobytes): its
 * first lines, with a button that shows it all and folds it again. The button is there only when
 * lines are cut, which depends on the window's width, so a ResizeObserver decides it.
 */
export function collapsible(className: string, ...children: Child[]): HTMLElement {
  const text = h('span', { class: `${className} clip tall` }, ...children);
  const length = text.textContent?.length ?? 0;
  const button = h('button', { type: 'button', class: 'link-button', 'aria-expanded': 'false', hidden: true });
  const show = (all: boolean) => {
    text.classList.toggle('clip', !all);
    button.setAttribute('aria-expanded', String(all));
    button.textContent = all ? 'Show less' : `Show all (${formatCount(length)} characters)`;
  };
  show(false);
  button.addEventListener('click', () => show(button.getAttribute('aria-expanded') !== 'true'));
  new ResizeObserver(() => {
    button.hidden = button.getAttribute('aria-expanded') !== 'true' && text.scrollHeight <= text.clientHeight + 1;
  }).observe(text);
  return h('span', { class: 'collapsible' }, text, button);
}

/** A section with a heading, an optional CSV download and its content. */
export function panel(title: string, id: string, csv: string | undefined, ...children: Child[]): HTMLElement {
  return h(
    'section',
    { class: 'card panel', 'aria-labelledby': id },
    h('div', { class: 'panel-head' }, h('h2', { id }, title), csv === undefined ? null : h('a', { href: csv, class: 'csv', download: true, 'aria-label': `${title} as CSV` }, 'CSV')),
    ...children,
  );
}

/** A horizontal bar showing a share of the largest value (width set through the CSSOM, which the CSP allows). */
export function bar(value: number, max: number, className = ''): HTMLElement {
  const fill = h('span', { class: `bar-fill ${className}` });
  fill.style.width = `${max === 0 ? 0 : Math.max(2, (value / max) * 100)}%`;
  return h('span', { class: 'bar', 'aria-hidden': 'true' }, fill);
}

/** An empty state that says plainly what is (not) there. */
export function empty(...children: Child[]): HTMLElement {
  return h('p', { class: 'empty' }, ...children);
}

/** The verification result as a badge (spoofed agents in red); a link when `href` is given. */
export function resultBadge(result: string, href?: string): HTMLElement {
  const label = RESULT_LABELS[result] ?? result;
  if (href === undefined) return h('span', { class: `badge result-${result}` }, label);
  return h('a', { class: `badge result-${result}`, href, title: 'See the checks that decided it', 'aria-label': `${label}: see why` }, label);
}

// The rules of agentwarden's access policies (src/embed/access-policy.ts), in the visit page's
// words. A Map: a site's own rule may be named "constructor", which a plain object would find.
const POLICY_RULES = new Map([
  ['deny-verification-failed', 'Deny spoofed agents'],
  ['deny-agent', 'Deny chosen agents'],
  ['deny-agent-type', 'Deny chosen agent types'],
  ['allow-verified', 'Allow verified agents'],
]);

/** An access-policy rule in words; a site's own rule shows by its name. */
export function policyRuleName(rule: string): string {
  return POLICY_RULES.get(rule) ?? rule;
}

/**
 * What the site's access policy did with a visit, as a badge and the rule: "Blocked", "Would
 * block (report only)" (report-only mode let it through) or "Allowed"; "Blocked" alone when the
 * site reported a block without a decision (the WordPress plugin). Null when there is neither.
 */
export function decisionBadge(visit: Pick<VisitJson, 'decision' | 'is_blocked'>): HTMLElement | null {
  const { decision } = visit;
  const [label, kind] =
    decision?.action === 'deny'
      ? decision.report_only === true
        ? ['Would block (report only)', 'warn-badge']
        : ['Blocked', 'bad-badge']
      : decision?.action === 'allow'
        ? ['Allowed', 'ok']
        : visit.is_blocked === true
          ? ['Blocked', 'bad-badge']
          : [];
  if (label === undefined) return null;
  const rule = typeof decision?.rule === 'string' ? decision.rule : undefined;
  return h(
    'span',
    { class: 'decision' },
    h('span', { class: `badge ${kind}` }, label),
    // Said aloud, the badge and the rule read as one sentence.
    rule === undefined ? null : h('span', { class: 'decision-rule', title: rule }, h('span', { class: 'visually-hidden' }, ' by the rule '), policyRuleName(rule)),
  );
}

/** The order outcome tiles are shown in: spoofed first. */
export const RESULT_ORDER = ['verification_failed', 'verified', 'not_verifiable', 'unknown_agent'] as const;

/**
 * One tile per verification result with its count; the spoofed tile turns red when there are any.
 * `agentsOnly` leaves out "Not an agent" (pages of one agent or type, where it is always 0).
 */
export function outcomeTiles(totals: ReadonlyMap<string | null, number>, link?: (result: string) => string, agentsOnly = false): HTMLElement {
  return h(
    'div',
    { class: `tiles${agentsOnly ? ' three' : ''}` },
    ...RESULT_ORDER.filter((key) => !agentsOnly || key !== 'unknown_agent').map((key) => {
      const n = totals.get(key) ?? 0;
      const content = [h('span', { class: 'tile-n' }, formatCount(n)), h('span', { class: 'tile-label' }, RESULT_LABELS[key] ?? key)];
      const className = `tile result-${key}${key === 'verification_failed' && n > 0 ? ' alarm' : ''}`;
      return link === undefined || n === 0 ? h('div', { class: className }, ...content) : h('a', { class: className, href: link(key) }, ...content);
    }),
  );
}

/**
 * What the verification outcomes say, honestly: nothing checked is not "all genuine".
 * `totals` are visits by result.
 */
export function outcomeSummary(totals: ReadonlyMap<string | null, number>): string {
  const spoofed = totals.get('verification_failed') ?? 0;
  const verified = totals.get('verified') ?? 0;
  const unverifiable = totals.get('not_verifiable') ?? 0;
  const agents = spoofed + verified + unverifiable;
  if (agents === 0) return 'No agent visits in this range, so nothing could be checked.';
  if (spoofed + verified === 0) return 'Nothing could be checked: no verification method could confirm or refute these agents (no published ranges, signatures or reverse DNS for them, or no client address).';
  const unchecked = unverifiable > 0 ? ` (${plural(unverifiable, 'other visit')} could not be checked)` : '';
  if (spoofed === 0) return `No spoofed agents: ${verified === 1 ? 'the one visit that could be checked was' : `all ${formatCount(verified)} visits that could be checked were`} genuine${unchecked}.`;
  return `${formatCount(spoofed)} of ${plural(spoofed + verified, 'checked visit')} came from ${spoofed === 1 ? 'an agent that is' : 'agents that are'} not who ${spoofed === 1 ? 'it claims' : 'they claim'} to be${unchecked}.`;
}

/** What identifies a control across redraws: its tag, target and text. */
function focusKey(element: Element): string {
  return `${element.tagName}|${element.getAttribute('href') ?? ''}|${element.textContent ?? ''}`;
}

/**
 * Replaces a container's content and, when keyboard focus was inside it, puts focus back on the
 * same control in the new content: a live redraw must not throw a keyboard user back to the top.
 */
export function replaceKeepingFocus(container: HTMLElement, ...children: Child[]): void {
  const active = document.activeElement;
  const key = active !== null && active !== container && container.contains(active) ? focusKey(active) : undefined;
  replace(container, ...children);
  if (key === undefined || active === null) return;
  const same = Array.from(container.querySelectorAll<HTMLElement>(active.tagName)).find((element) => focusKey(element) === key);
  same?.focus({ preventScroll: true });
}
