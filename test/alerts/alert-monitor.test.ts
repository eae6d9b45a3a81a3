// The alert rules on batches of stored visits: a first visit once per agent and project, a rise in
// spoofed visits by its stated thresholds and baseline with a cooldown, robots.txt violations once
// per agent per cooldown, all on an injected clock.
import { describe, expect, it } from 'vitest';
import { createAlertMonitor, createEngine, createMemoryProjectSettingsStore, createRobotsCheck, type StoredVisit } from '../../src/index.js';

const PROJECT = { id: 'prj_1', name: 'example.com' };
let sequence = 0;
function visit(over: Partial<StoredVisit> = {}): StoredVisit {
  return {
    id: String(++sequence),
    project_id: PROJECT.id,
    request_path: '/',
    request_method: 'GET',
    request_headers: { 'user-agent': 'GPTBot/1.2' },
    received: 0,
    time: 0,
    agent_id: 'gptbot',
    agent_type: 'AI Data Scraper',
    result: 'not_verifiable',
    client_ip: '192.0.2.1',
    referral: null,
    ...over,
  };
}

function monitorWith(options: { spoofedBefore?: number; robots?: Parameters<typeof createRobotsCheck>[0]; unlistedFirstVisits?: { max?: number; windowMs?: number } } = {}) {
  let now = Date.UTC(2026, 10, 25, 12);
  const seen = new Set<string>();
  const settings = options.robots ?? createMemoryProjectSettingsStore();
  const baselineAsked: [number, number][] = [];
  const catalog = createEngine().catalog;
  const monitor = createAlertMonitor({
    catalog,
    clock: { now: () => now },
    markAgentSeen: (projectId, agentId) => !seen.has(`${projectId}/${agentId}`) && seen.add(`${projectId}/${agentId}`) !== undefined,
    spoofedCount: async (_projectId, from, to) => {
      baselineAsked.push([from, to]);
      return options.spoofedBefore ?? 0;
    },
    robotsCheck: createRobotsCheck(settings, { catalog }),
    ...(options.unlistedFirstVisits === undefined ? {} : { unlistedFirstVisits: options.unlistedFirstVisits }),
  });
  return { monitor, at: () => now, advance: (ms: number) => (now += ms), baselineAsked };
}

describe('agent.first_visit', () => {
  it('fires once per agent and project, with the agent and the visit, never for browsers', async () => {
    const { monitor } = monitorWith();
    const events = await monitor.inspect(PROJECT, [visit({ request_path: '/a' }), visit({ request_path: '/b' }), visit({ agent_id: null, agent_type: null, result: 'unknown_agent' })]);
    expect(events.map((e) => e.type)).toEqual(['agent.first_visit']);
    expect(events[0]!).toMatchObject({ project: PROJECT, data: { agent: { id: 'gptbot', name: 'GPTBot', operator: 'OpenAI', type: 'AI Data Scraper' }, visit: { request_path: '/a' } } });
    expect(events[0]!.id).toMatch(/^evt_/);
    expect(await monitor.inspect(PROJECT, [visit()])).toEqual([]);
    expect((await monitor.inspect({ id: 'prj_2', name: 'other' }, [visit({ project_id: 'prj_2' })])).map((e) => e.type)).toEqual(['agent.first_visit']);
  });

  // Unlisted agents are named by whatever the traffic sends: one client with made-up names must not flood the owner's webhook.
  const unlisted = (name: string) => visit({ agent_id: `unlisted:${name}`, agent_type: 'Uncategorized', request_headers: { 'user-agent': `${name}/1.0` } });

  it('alerts at most 10 unlisted agents a day per project, says when the limit is reached and later how many were not alerted', async () => {
    const { monitor, advance } = monitorWith();
    const flood = Array.from({ length: 25 }, (_, i) => unlisted(`Made${i}bot`));
    const events = await monitor.inspect(PROJECT, flood);
    expect(events).toHaveLength(10);
    expect(events[0]!.data).toMatchObject({ agent: { id: 'unlisted:Made0bot', name: 'Made0bot', type: 'Uncategorized', operator: 'Unknown', listed: false } });
    expect(events.slice(0, 9).every((e) => e.data.unlisted_limit === undefined)).toBe(true);
    expect(events[9]!.data).toMatchObject({ agent: { id: 'unlisted:Made9bot' }, unlisted_limit: { max: 10, window_hours: 24, resumes: '2026-11-26T12:00:00.000Z' } });
    // Catalog agents are never capped; the muted unlisted ones stay known, so they never alert later.
    expect((await monitor.inspect(PROJECT, [visit(), unlisted('Another0bot')])).map((e) => e.data.agent)).toMatchObject([{ id: 'gptbot', listed: true }]);
    advance(86_400_000);
    expect(await monitor.inspect(PROJECT, flood)).toEqual([]);
    const next = await monitor.inspect(PROJECT, [unlisted('Newbot'), unlisted('Newer0bot')]);
    expect(next.map((e) => e.data.agent)).toMatchObject([{ id: 'unlisted:Newbot' }, { id: 'unlisted:Newer0bot' }]);
    // 15 of the flood and one more were not alerted; said once.
    expect(next[0]!.data.unlisted_not_alerted).toBe(16);
    expect(next[1]!.data.unlisted_not_alerted).toBeUndefined();
    // Another project has its own allowance.
    expect(await monitor.inspect({ id: 'prj_2', name: 'other' }, [unlisted('Made0bot')])).toHaveLength(1);
  });

  it('takes another limit, and refuses a bad one', () => {
    expect(() => monitorWith({ unlistedFirstVisits: { max: -1 } })).toThrow(/unlistedFirstVisits\.max/);
    expect(() => monitorWith({ unlistedFirstVisits: { max: 1.5 } })).toThrow(/unlistedFirstVisits\.max/);
    expect(() => monitorWith({ unlistedFirstVisits: { windowMs: 0 } })).toThrow(/unlistedFirstVisits\.windowMs/);
  });

  it('with a limit of 0 never alerts unlisted agents', async () => {
    const { monitor } = monitorWith({ unlistedFirstVisits: { max: 0 } });
    expect(await monitor.inspect(PROJECT, [unlisted('Abot'), unlisted('Bbot')])).toEqual([]);
    expect(await monitor.inspect(PROJECT, [visit()])).toHaveLength(1);
  });
});

describe('visits.spoofed_rise', () => {
  const spoofed = (n: number, received: number) => Array.from({ length: n }, () => visit({ result: 'verification_failed', received }));

  it('fires at 10 spoofed visits within 10 minutes over a quiet baseline, then keeps quiet for an hour', async () => {
    const { monitor, at, advance, baselineAsked } = monitorWith({ spoofedBefore: 0 });
    await monitor.inspect(PROJECT, [visit()]);
    expect(await monitor.inspect(PROJECT, spoofed(9, at()))).toEqual([]);
    advance(60_000);
    const events = await monitor.inspect(PROJECT, spoofed(1, at()));
    expect(events.map((e) => e.type)).toEqual(['visits.spoofed_rise']);
    expect(events[0]!.data).toMatchObject({ window_minutes: 10, count: 10, baseline_per_window: 0, rule: { min_count: 10, factor: 3, baseline_hours: 24 } });
    // The baseline is the 24 hours before the window.
    expect(baselineAsked).toEqual([[at() - 600_000 - 86_400_000, at() - 600_000]]);
    advance(59 * 60_000);
    expect(await monitor.inspect(PROJECT, spoofed(20, at()))).toEqual([]);
    advance(60_001);
    expect((await monitor.inspect(PROJECT, spoofed(10, at()))).map((e) => e.type)).toEqual(['visits.spoofed_rise']);
  });

  it('does not count spoofed visits older than the window', async () => {
    const { monitor, at, advance } = monitorWith();
    await monitor.inspect(PROJECT, [visit()]);
    await monitor.inspect(PROJECT, spoofed(9, at()));
    advance(600_001);
    expect(await monitor.inspect(PROJECT, spoofed(9, at()))).toEqual([]);
  });

  it('stays quiet when the count is below 3x the baseline: a site that always sees this many', async () => {
    // 720 spoofed visits a day: 5 per 10 minutes; 12 now is not 3x that, 15 is.
    const { monitor, at } = monitorWith({ spoofedBefore: 720 });
    await monitor.inspect(PROJECT, [visit()]);
    expect(await monitor.inspect(PROJECT, spoofed(12, at()))).toEqual([]);
    expect((await monitor.inspect(PROJECT, spoofed(3, at()))).map((e) => e.type)).toEqual(['visits.spoofed_rise']);
  });
});

describe('robots.violation', () => {
  it('fires for an agent of a disallowed type on a disallowed path, once per agent per hour', async () => {
    const settings = createMemoryProjectSettingsStore();
    settings.putProjectSettings(PROJECT.id, { robots: { agent_types: ['AI Data Scraper'], disallow: ['/private/'] }, client_ip: {} });
    const { monitor, advance } = monitorWith({ robots: settings });
    await monitor.inspect(PROJECT, [visit({ request_path: '/warmup' })]);
    expect(await monitor.inspect(PROJECT, [visit({ request_path: '/public' }), visit({ request_path: '/robots.txt' })])).toEqual([]);
    // A search engine crawler's type is not disallowed.
    await monitor.inspect(PROJECT, [visit({ agent_id: 'googlebot', agent_type: 'Search Engine Crawler', request_path: '/x' })]);
    expect(await monitor.inspect(PROJECT, [visit({ agent_id: 'googlebot', agent_type: 'Search Engine Crawler', request_path: '/private/a' })])).toEqual([]);
    const events = await monitor.inspect(PROJECT, [visit({ request_path: '/private/report?x=1' }), visit({ request_path: '/private/other' })]);
    expect(events).toHaveLength(1);
    expect(events[0]!).toMatchObject({ type: 'robots.violation', data: { agent: { id: 'gptbot' }, path: '/private/report?x=1', rule: 'Disallow: /private/' } });
    advance(3_600_001);
    expect((await monitor.inspect(PROJECT, [visit({ request_path: '/private/again' })])).map((e) => e.type)).toEqual(['robots.violation']);
  });

  it('follows the per-agent rules: an agent allowed by name never fires, one disallowed by name does', async () => {
    const settings = createMemoryProjectSettingsStore();
    settings.putProjectSettings(PROJECT.id, { robots: { agent_types: ['AI Data Scraper'], disallow: ['/private/'], allow_agents: ['gptbot'], disallow_agents: ['googlebot'] }, client_ip: {} });
    const { monitor } = monitorWith({ robots: settings });
    await monitor.inspect(PROJECT, [visit({ request_path: '/warmup' }), visit({ agent_id: 'googlebot', agent_type: 'Search Engine Crawler', request_path: '/warmup' })]);
    expect(await monitor.inspect(PROJECT, [visit({ request_path: '/private/a' })])).toEqual([]);
    const events = await monitor.inspect(PROJECT, [visit({ agent_id: 'googlebot', agent_type: 'Search Engine Crawler', request_path: '/private/a' })]);
    expect(events.map((e) => e.type)).toEqual(['robots.violation']);
  });

  it('never fires for a spoofed visit (verification failed): it is not the agent that broke the rule', async () => {
    const settings = createMemoryProjectSettingsStore();
    settings.putProjectSettings(PROJECT.id, { robots: { agent_types: ['AI Data Scraper'], disallow: ['/private/'] }, client_ip: {} });
    const { monitor } = monitorWith({ robots: settings });
    await monitor.inspect(PROJECT, [visit({ request_path: '/warmup' })]);
    expect((await monitor.inspect(PROJECT, [visit({ request_path: '/private/a', result: 'verification_failed' })])).map((e) => e.type)).not.toContain('robots.violation');
    // The agent's own visit still does (the spoofed one started no hour of quiet).
    expect((await monitor.inspect(PROJECT, [visit({ request_path: '/private/b' })])).map((e) => e.type)).toEqual(['robots.violation']);
  });

  it('never counts fetching /robots.txt itself, even where the rules disallow everything', async () => {
    const settings = createMemoryProjectSettingsStore();
    settings.putProjectSettings(PROJECT.id, { robots: { agent_types: ['AI Data Scraper'], disallow: ['/'] }, client_ip: {} });
    const { monitor } = monitorWith({ robots: settings });
    // (Any other path would fire here and start the agent's hour of quiet.)
    expect((await monitor.inspect(PROJECT, [visit({ request_path: '/robots.txt' })])).map((e) => e.type)).not.toContain('robots.violation');
    expect(await monitor.inspect(PROJECT, [visit({ request_path: '/robots.txt' })])).toEqual([]);
    expect((await monitor.inspect(PROJECT, [visit({ request_path: '/anything' })])).map((e) => e.type)).toEqual(['robots.violation']);
  });
});
