// visibleText, the rule every text the dashboard draws goes through: characters that show as
// nothing (format characters, controls, other default-ignorable code points) or reorder what
// follows (bidirectional controls) become visible marks, so two different paths never read alike;
// ordinary text, emoji included, is left as it is.
import { describe, expect, it } from 'vitest';
import { visibleText } from '../../src/web/dom.js';

describe('visibleText', () => {
  it.each([
    ['a zero-width space', '/pri\u200bcing', '/pri\u27e8U+200B\u27e9cing'],
    ['a zero-width joiner outside an emoji', '/pricing\u200d', '/pricing\u27e8U+200D\u27e9'],
    ['a zero-width non-joiner', '/pri\u200ccing', '/pri\u27e8U+200C\u27e9cing'],
    ['a word joiner', '/pricing\u2060', '/pricing\u27e8U+2060\u27e9'],
    ['a byte order mark', '\ufeff/pricing', '\u27e8U+FEFF\u27e9/pricing'],
    ['a soft hyphen', '/pricing\u00ad', '/pricing\u27e8U+00AD\u27e9'],
    ['a C1 control (next line)', '/\u0085nel', '/\u27e8U+0085\u27e9nel'],
    ['a C0 control and DEL', 'a\u0000b\u001bc\u007f', 'a\u27e8U+0000\u27e9b\u27e8U+001B\u27e9c\u27e8U+007F\u27e9'],
    ['a right-to-left override', '/\u202egnicirp', '/\u27e8U+202E\u27e9gnicirp'],
    ['an isolate', '/a\u2066b\u2069', '/a\u27e8U+2066\u27e9b\u27e8U+2069\u27e9'],
    ['a variation selector after a letter', '/pricing\ufe0f', '/pricing\u27e8U+FE0F\u27e9'],
    ['a combining grapheme joiner', '/pri\u034fcing', '/pri\u27e8U+034F\u27e9cing'],
    ['a Hangul filler', '/pricing\u3164', '/pricing\u27e8U+3164\u27e9'],
    ['a tag character (hidden ASCII), by its code point', '/pricing\u{e0041}', '/pricing\u27e8U+E0041\u27e9'],
    ['a line separator', '/a\u2028b', '/a\u27e8U+2028\u27e9b'],
  ])('marks %s', (_name, text, shown) => {
    expect(visibleText(text)).toBe(shown);
  });

  it('leaves every path that differs by a hidden character distinguishable', () => {
    const disguises = ['/pri\u200bcing', '/pricing\u00ad', '/pricing\u2060', '/pricing\ufeff', '/pri\u200dcing', '/\u0085pricing', '/pricing\u180e'];
    for (const path of disguises) expect(visibleText(path), JSON.stringify(path)).not.toBe('/pricing');
  });

  it.each([
    ['ASCII', '/blog/first-post?utm_source=chatgpt.com'],
    ['accented and non-Latin text', '/café/straße/日本語/مرحبا'],
    ['a line break and a tab (the layout of JSON and robots.txt previews)', '{\n\t"a": 1\r\n}'],
    ['a lone emoji', 'shop 🛒'],
    ['an emoji with presentation selector', 'I ❤️ bots'],
    ['an emoji ZWJ sequence', 'team 👩‍💻 and 🏳️‍🌈'],
    ['a ZWJ sequence with a skin tone', '👩🏽‍💻'],
  ])('leaves %s as it is', (_name, text) => {
    expect(visibleText(text)).toBe(text);
  });

  it('is idempotent: text shown twice is shown the same', () => {
    const once = visibleText('/a\u200bb\u202ec');
    expect(visibleText(once)).toBe(once);
  });
});
