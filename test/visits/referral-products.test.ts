// Referral products meet their operators' crawlers: each product's operator is spelled as the
// bundled catalog spells it, so the crawl-to-referral ratio pairs them.
import { describe, expect, it } from 'vitest';
import { createEngine, REFERRAL_CLASSES } from '../../src/index.js';
import { REFERRAL_PRODUCTS } from '../../src/visits/referral.js';

describe('REFERRAL_PRODUCTS', () => {
  const operators = new Set(createEngine().catalog.agents.map((agent) => agent.operator));

  it('names every referral class', () => {
    expect(Object.keys(REFERRAL_PRODUCTS).sort()).toEqual([...REFERRAL_CLASSES].sort());
  });

  it("spells each operator as the catalog does (xAI has no agent in the catalog yet)", () => {
    const missing = Object.values(REFERRAL_PRODUCTS)
      .map((product) => product.operator)
      .filter((operator) => !operators.has(operator));
    expect(missing).toEqual(['xAI']);
  });
});
