// Text helpers the validators share: a length limit in characters, as JSON Schema's maxLength counts them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { longerThan } from '../src/index.js';

describe('longerThan', () => {
  it('counts code points, a surrogate pair as one and a lone surrogate as one, as Array.from does (property)', () => {
    const text = fc.string({ unit: fc.oneof(fc.constantFrom('a', 'é', '\u{1f600}', '\ud800', '\udc00'), fc.string({ unit: 'grapheme', maxLength: 1 })), maxLength: 40 });
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 45 }), (value, max) => {
        expect(longerThan(value, max)).toBe(Array.from(value).length > max);
      }),
      { numRuns: 2000 },
    );
  });
});
