// A project's site hosts (PUT /project-settings `site_hosts`): a crawler's genuine Web Bot Auth
// signature made for another site and replayed to this one fails `authority-not-ours` in every
// REST path (identification, verification, stored visits); bad hosts are refused at their pointer.
import { describe, expect, it } from 'vitest';
import { createApiHandler, createEngine, createMemoryProjectSettingsStore, createMemoryProjectStore, createMemoryVisitStore, webBotAuthVerifier, type CatalogDocument } from '../../src/index.js';
import { apiCaller } from '../helpers/api-call.js';
import { generateKey, signRequest } from '../verify/web-bot-auth/support.js';

const NOW_SECONDS = 1_800_000_000;
const key = generateKey();

const CATALOG: CatalogDocument = {
  version: 1,
  agents: [{ id: 'signbot', name: 'SignBot', type: 'AI Agent', operator: 'Test', url: 'https://agent.test/', match: { tokens: ['SignBot'] }, robots_tokens: ['SignBot'], signature_agents: ['https://agent.test'] }],
};

async function setup() {
  const clock = { now: () => NOW_SECONDS * 1000 };
  const engine = createEngine({ catalog: CATALOG, clock, verifiers: [webBotAuthVerifier({ keys: [{ jwk: key.publicJwk, directory: 'https://agent.test' }] })] });
  const projects = createMemoryProjectStore();
  const settings = createMemoryProjectSettingsStore();
  const { id: projectId, token } = await projects.createProject('shop');
  const call = apiCaller(createApiHandler({ engine, projects, visits: createMemoryVisitStore(), settings, rateLimit: false, clock }), token);
  return { call, settings, projectId };
}

/** SignBot's request signed for `url` (its Host is that URL's host). */
const signedFor = (url: string) => signRequest({ key, url, headers: { 'User-Agent': 'SignBot/1.0', 'Signature-Agent': 'sig1="https://agent.test"' } }, NOW_SECONDS);

/** The verdict and the deciding reason of the three REST paths for one request. */
async function verdicts(call: Awaited<ReturnType<typeof setup>>['call'], item: Awaited<ReturnType<typeof signedFor>>) {
  const reasonOf = (json: { result: string; verification?: { checks: { reason: string }[] } }) => `${json.result} ${json.verification?.checks.at(-1)?.reason ?? '-'}`;
  const identification = (await call('POST', '/agent-identifications', item)).json;
  const verification = (await call('POST', '/agent-verifications', item)).json;
  expect((await call('POST', '/visits', item)).status).toBe(202);
  const visit = (await call('GET', '/visits?limit=1')).json.visits[0];
  return { identification: identification.result, verification: reasonOf(verification), visit: reasonOf(visit) };
}

const all = (result: string, reason: string) => ({ identification: result, verification: `${result} ${reason}`, visit: `${result} ${reason}` });

describe('site_hosts in project settings', () => {
  it("refuses a signature made for another site once the project names its hosts, and takes any host again when they are cleared", async () => {
    const { call } = await setup();
    const replayed = await signedFor('https://other-site.example/page');
    const own = await signedFor('https://www.shop.example/cart');
    // Without hosts any authority is judged: the replay verifies.
    expect(await verdicts(call, replayed)).toEqual(all('verified', 'signature-valid'));

    const saved = await call('PUT', '/project-settings', { site_hosts: ['Shop.Example', 'WWW.shop.example:443', 'shop.example.'] });
    expect(saved.status).toBe(200);
    // Lower-case, the default port and the root's dot dropped, each once.
    expect(saved.json.site_hosts).toEqual(['shop.example', 'www.shop.example']);
    expect((await call('GET', '/project-settings')).json.site_hosts).toEqual(['shop.example', 'www.shop.example']);
    // Applied at once on the server that saved them.
    expect(await verdicts(call, replayed)).toEqual(all('verification_failed', 'authority-not-ours'));
    expect(await verdicts(call, own)).toEqual(all('verified', 'signature-valid'));

    // Saving other settings keeps the hosts; clearing them takes any host again.
    expect((await call('PUT', '/project-settings', { client_ip: { headers: ['x-real-ip'] } })).json.site_hosts).toEqual(['shop.example', 'www.shop.example']);
    expect((await call('PUT', '/project-settings', { site_hosts: [] })).json.site_hosts).toEqual([]);
    expect(await verdicts(call, replayed)).toEqual(all('verified', 'signature-valid'));
  });

  it('refuses what is not a host, naming each at its pointer, and keeps the saved hosts', async () => {
    const { call } = await setup();
    await call('PUT', '/project-settings', { site_hosts: ['shop.example'] });
    const refused = await call('PUT', '/project-settings', { site_hosts: ['shop.example/path', 42, '', 'a..b', '.example', 'https://shop.example', 'shop example', 'x'.repeat(300), 'ok.example'] });
    expect(refused.status).toBe(400);
    expect(refused.json.errors.map((error: { pointer: string; code: string }) => `${error.pointer} ${error.code}`)).toEqual([
      '/site_hosts/0 invalid-host',
      '/site_hosts/1 type',
      '/site_hosts/2 invalid-host',
      '/site_hosts/3 invalid-host',
      '/site_hosts/4 invalid-host',
      '/site_hosts/5 invalid-host',
      '/site_hosts/6 invalid-host',
      '/site_hosts/7 invalid-host',
    ]);
    // Found by an outside check: a wildcard was saved as literal text (and refused every subdomain),
    // a stray NUL, newline or space was trimmed away, and over-long labels and port 0 were kept.
    const quiet = await call('PUT', '/project-settings', {
      site_hosts: ['*.shop.example', 'shop.example\u0000', 'shop.example\n', ' shop.example', 'shop.example:0', `${'a'.repeat(64)}.example`, `${'abcdefghi.'.repeat(25)}example`],
    });
    expect(quiet.json.errors.map((error: { pointer: string; message: string }) => `${error.pointer} ${error.message.split(',')[0]}`)).toEqual([
      '/site_hosts/0 wildcards are not supported: list each host the site answers on',
      '/site_hosts/1 a host holds no spaces or control characters',
      '/site_hosts/2 a host holds no spaces or control characters',
      '/site_hosts/3 a host holds no spaces or control characters',
      '/site_hosts/4 a port is 1 to 65535',
      '/site_hosts/5 must be a host or host:port such as "example.com" or "example.com:8443"',
      '/site_hosts/6 must be a host or host:port such as "example.com" or "example.com:8443"',
    ]);
    // An international name is saved as the punycode a Host header carries.
    expect((await call('PUT', '/project-settings', { site_hosts: ['bücher.example', 'shop.example'] })).json.site_hosts).toEqual(['xn--bcher-kva.example', 'shop.example']);
    expect((await call('PUT', '/project-settings', { site_hosts: 'shop.example' })).json.errors).toMatchObject([{ pointer: '/site_hosts', code: 'type' }]);
    const tooMany = Array.from({ length: 101 }, (_, i) => `h${i}.example`);
    expect((await call('PUT', '/project-settings', { site_hosts: tooMany })).json.errors).toMatchObject([{ pointer: '/site_hosts', code: 'max-items' }]);
    expect((await call('GET', '/project-settings')).json.site_hosts).toEqual(['xn--bcher-kva.example', 'shop.example']);
  });

  it('answers settings saved before site_hosts existed with an empty list, and judges any host for them', async () => {
    const { call, settings, projectId } = await setup();
    settings.putProjectSettings(projectId, { robots: null, client_ip: { headers: ['x-real-ip'] } });
    expect((await call('GET', '/project-settings')).json).toEqual({ robots: null, client_ip: { headers: ['x-real-ip'] }, site_hosts: [] });
    expect(await verdicts(call, await signedFor('https://other-site.example/page'))).toEqual(all('verified', 'signature-valid'));
  });
});
