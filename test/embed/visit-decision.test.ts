// The visit's `decision` field as POST /visits validates it: the policy rule, its action, report-only.
import { describe, expect, it } from 'vitest';
import { parseVisit } from '../../src/index.js';

const base = { request_path: '/', request_method: 'GET', request_headers: {} };

describe('visit decision', () => {
  it('keeps a valid decision, report_only defaulting to false', () => {
    expect(parseVisit({ ...base, decision: { rule: 'deny-agent-type', action: 'deny', report_only: true } })).toMatchObject({ ok: true, visit: { decision: { rule: 'deny-agent-type', action: 'deny', report_only: true } } });
    expect(parseVisit({ ...base, decision: { rule: 'custom.rule_1', action: 'allow' } })).toMatchObject({ ok: true, visit: { decision: { rule: 'custom.rule_1', action: 'allow', report_only: false } } });
    expect(parseVisit({ ...base, decision: null })).toEqual({ ok: true, visit: base });
  });

  it.each([
    [{ rule: 'x', action: 'block' }, '/3/decision/action'],
    [{ action: 'deny' }, '/3/decision/rule'],
    [{ rule: 'has space', action: 'deny' }, '/3/decision/rule'],
    [{ rule: 'x'.repeat(65), action: 'deny' }, '/3/decision/rule'],
    [{ rule: 'x', action: 'deny', report_only: 'yes' }, '/3/decision/report_only'],
    ['deny', '/3/decision'],
  ])('refuses %j at %s', (decision, pointer) => {
    const parsed = parseVisit({ ...base, decision }, 3);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok === false && parsed.errors.map((e) => e.pointer)).toEqual([pointer]);
  });
});
