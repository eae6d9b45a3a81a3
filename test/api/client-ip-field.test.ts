// The client address as data (issue 16): visits and identification/verification items may carry
// `client_ip`, an IP literal validated at the API and used before any header.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createApiHandler, createEngine, createMemoryProjectStore, createMemoryVisitStore, ipRangeVerifier } from '../../src/index.js';
import { apiCaller } from '../helpers/api-call.js';
import { GPTBOT_UA, TEST_CATALOG } from '../server/helpers.js';

const GPTBOT_LIST = JSON.parse(readFileSync(new URL('../../data/ip-ranges/openai-gptbot.json', import.meta.url), 'utf8'));
const CATALOG = { ...TEST_CATALOG, agents: TEST_CATALOG.agents.map((agent) => (agent.id === 'gptbot' ? { ...agent, ip_ranges: ['openai-gptbot.json'] } : agent)) };

async function setup() {
  const engine = createEngine({ catalog: CATALOG, verifiers: [ipRangeVerifier({ lists: { 'openai-gptbot.json': GPTBOT_LIST } })] });
  const projects = createMemoryProjectStore();
  const { token } = await projects.createProject('site');
  const handle = createApiHandler({ engine, projects, visits: createMemoryVisitStore(), rateLimit: false });
  return apiCaller(handle, token);
}

// A forged header that would make the request a spoof if it were believed.
const FORGED = { 'user-agent': GPTBOT_UA, 'x-forwarded-for': '203.0.113.66' };

describe('client_ip on visits', () => {
  it('is stored in canonical form and used before any header, for the address and the checks', async () => {
    const call = await setup();
    const sent = await call('POST', '/visits', [
      { request_path: '/a', request_method: 'GET', request_headers: FORGED, client_ip: '132.196.86.7' },
      { request_path: '/b', request_method: 'GET', request_headers: FORGED, client_ip: '::ffff:132.196.86.8' },
      { request_path: '/c', request_method: 'GET', request_headers: FORGED, client_ip: '10.0.0.1' },
      { request_path: '/d', request_method: 'GET', request_headers: FORGED },
    ]);
    expect(sent.json).toEqual({ accepted: 4, rejected: [] });
    const visits = (await call('GET', '/visits?limit=10')).json.visits as Record<string, unknown>[];
    const byPath = Object.fromEntries(visits.map((visit) => [visit['request_path'], visit]));
    expect(byPath['/a']).toMatchObject({ client_ip: '132.196.86.7', result: 'verified' });
    expect(byPath['/a']).not.toHaveProperty('client_ip_header');
    expect(byPath['/b']).toMatchObject({ client_ip: '132.196.86.8', result: 'verified' });
    expect(byPath['/c']).toMatchObject({ client_ip: '10.0.0.1', result: 'not_verifiable', verification: { checks: [{ reason: 'client-ip-not-public' }] } });
    // Without the field the header decides, as before.
    expect(byPath['/d']).toMatchObject({ client_ip: '203.0.113.66', client_ip_header: 'x-forwarded-for', result: 'verification_failed' });
  });

  it.each([['not an address'], ['132.196.86.7:443'], ['[2001:db8::1]'], ['example.com'], [42], [['132.196.86.7']]])('refuses %j with a 400 naming the field', async (value) => {
    const call = await setup();
    const visit = { request_path: '/', request_method: 'GET', request_headers: FORGED };
    const single = await call('POST', '/visits', { ...visit, client_ip: value });
    expect(single.status).toBe(400);
    expect(single.json.errors).toEqual([expect.objectContaining({ pointer: '/client_ip' })]);
    const batch = await call('POST', '/visits', [visit, { ...visit, client_ip: value }]);
    // A batch keeps its good visits and names the bad one.
    expect(batch.json).toMatchObject({ accepted: 1, rejected: [{ index: 1, errors: [{ pointer: '/1/client_ip' }] }] });
  });
});

describe('client_ip on identification and verification items', () => {
  it('is used before any header', async () => {
    const call = await setup();
    const item = { request_headers: FORGED, client_ip: '132.196.86.7' };
    expect((await call('POST', '/agent-identifications', item)).json).toMatchObject({ result: 'verified', agent_id: 'gptbot' });
    expect((await call('POST', '/agent-verifications', item)).json).toMatchObject({ result: 'verified', verification: { checks: [{ reason: 'ip-in-range' }] } });
    expect((await call('POST', '/agent-identifications', [item, { request_headers: FORGED }])).json.map((r: { result: string }) => r.result)).toEqual(['verified', 'verification_failed']);
    expect((await call('POST', '/agent-verifications', { request_headers: FORGED, client_ip: 'fe80::1%eth0' })).json).toMatchObject({
      result: 'not_verifiable',
      verification: { checks: [{ reason: 'client-ip-not-public' }] },
    });
  });

  it('refuses an address that is not one with a 400 naming the field', async () => {
    const call = await setup();
    for (const path of ['/agent-identifications', '/agent-verifications']) {
      const single = await call('POST', path, { request_headers: FORGED, client_ip: '1.2.3' });
      expect(single.status).toBe(400);
      expect(single.json.errors).toEqual([expect.objectContaining({ pointer: '/client_ip' })]);
      const batch = await call('POST', path, [{ request_headers: FORGED }, { request_headers: FORGED, client_ip: true }]);
      expect(batch.status).toBe(400);
      expect(batch.json.errors).toEqual([expect.objectContaining({ pointer: '/1/client_ip' })]);
    }
  });
});

describe('a project that trusts no client-IP header (client_ip.headers: [])', () => {
  it('takes no address from any header, so a forged one neither verifies nor unmasks; client_ip still counts', async () => {
    const call = await setup();
    expect((await call('PUT', '/project-settings', { client_ip: { headers: [] } })).json.client_ip).toEqual({ headers: [] });
    expect((await call('GET', '/project-settings')).json.client_ip).toEqual({ headers: [] });
    // OpenAI's own address in every header a client can write: believed, it would verify the spoofer.
    const inRange = { 'user-agent': GPTBOT_UA, 'x-forwarded-for': '132.196.86.7', 'x-real-ip': '132.196.86.7', 'cf-connecting-ip': '132.196.86.7' };
    await call('POST', '/visits', [
      { request_path: '/forged', request_method: 'GET', request_headers: inRange },
      { request_path: '/sent', request_method: 'GET', request_headers: inRange, client_ip: '203.0.113.66' },
    ]);
    const visits = (await call('GET', '/visits?limit=10')).json.visits as Record<string, unknown>[];
    const byPath = Object.fromEntries(visits.map((visit) => [visit['request_path'], visit]));
    expect(byPath['/forged']).toMatchObject({ client_ip: null, result: 'not_verifiable' });
    expect(byPath['/forged']).not.toHaveProperty('client_ip_header');
    expect(byPath['/sent']).toMatchObject({ client_ip: '203.0.113.66', result: 'verification_failed' });
    expect((await call('POST', '/agent-identifications', { request_headers: inRange })).json).toMatchObject({ result: 'not_verifiable', agent_id: 'gptbot' });
    // A list that is not one is still refused, naming it.
    const refused = await call('PUT', '/project-settings', { client_ip: { headers: 'none' } });
    expect(refused.status).toBe(400);
    expect(refused.json.errors).toEqual([expect.objectContaining({ pointer: '/client_ip/headers', code: 'type' })]);
  });
});
