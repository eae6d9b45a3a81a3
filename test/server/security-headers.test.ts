// Every kind of answer of the API, over the real node server on 127.0.0.1, carries nosniff and the
// API's restrictive policy (dashboard audit #11): JSON, problem+json (also the transport's own
// refusals), CSV, the event stream, robots.txt text and its 304, and the admin routes. The
// dashboard's pages keep their own, stricter set unchanged.
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebRoutes } from '../../src/adapters/node/web-routes.js';
import { GPTBOT_UA, parseResponses, post, startAdminTestServer, type AdminTestServer } from './helpers.js';

const API_POLICY = "default-src 'none'; frame-ancestors 'none'";

let server: AdminTestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function start() {
  server = await startAdminTestServer((_store, dir) => {
    // A stand-in for the built dashboard, so the test needs no build.
    const web = join(dir, 'web');
    mkdirSync(web);
    for (const file of ['index.html', 'app.js', 'app.css']) writeFileSync(join(web, file), `/* ${file} */`);
    return { routes: [createWebRoutes({ dir: web })] };
  });
  const { id: projectId, token } = server.store.createProject('site');
  return { url: server.url, projectId, token, session: await server.login() };
}

/** The status and headers of a response whose body is not read to the end (a stream is cancelled). */
async function head(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; type: string }> {
  const response = await fetch(url, init);
  await response.body?.cancel();
  return { status: response.status, headers: response.headers, type: response.headers.get('content-type') ?? '(none)' };
}

/** One raw exchange: what node:http could not hand on as a request is refused by the transport itself. */
function raw(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

describe('security headers of the API', () => {
  it('are on every kind of answer, and the dashboard keeps its own', async () => {
    const { url, projectId, token, session } = await start();
    const { cookie } = session;
    const bearer = { authorization: `Bearer ${token}` };
    const json = { ...bearer, 'content-type': 'application/json' };
    const visit = JSON.stringify({ request_path: '/<script>alert(1)</script>', request_method: 'GET', request_headers: { 'user-agent': GPTBOT_UA } });
    expect((await post(`${url}/visits`, token, JSON.parse(visit))).status).toBe(202);
    const robots = await fetch(`${url}/robots-txts`, { method: 'POST', headers: json, body: JSON.stringify({ agent_types: ['AI Data Scraper'], disallow: '/' }) });
    const etag = robots.headers.get('etag')!;
    await robots.body?.cancel();

    const answers: Record<string, Awaited<ReturnType<typeof head>>> = {
      'POST /visits (202 JSON)': await head(`${url}/visits`, { method: 'POST', headers: json, body: visit }),
      'GET /visits (JSON)': await head(`${url}/visits`, { headers: bearer }),
      'GET /visits/1 (JSON)': await head(`${url}/visits/1`, { headers: bearer }),
      'GET /visits?format=csv (CSV)': await head(`${url}/visits?format=csv`, { headers: bearer }),
      'GET /stats/top-paths?format=csv (CSV)': await head(`${url}/stats/top-paths?format=csv`, { headers: bearer }),
      'GET /visits/stream (event stream)': await head(`${url}/visits/stream`, { headers: bearer }),
      'POST /robots-txts (text/plain)': await head(`${url}/robots-txts`, { method: 'POST', headers: json, body: JSON.stringify({ agent_types: ['AI Data Scraper'], disallow: '/' }) }),
      'POST /robots-txts (304)': await head(`${url}/robots-txts`, { method: 'POST', headers: { ...json, 'if-none-match': etag }, body: JSON.stringify({ agent_types: ['AI Data Scraper'], disallow: '/' }) }),
      'GET /nope/<b> (404 problem)': await head(`${url}/nope/%3Cb%3E`),
      'GET /visits (401 problem)': await head(`${url}/visits`),
      'DELETE /healthz (405 problem)': await head(`${url}/healthz`, { method: 'DELETE' }),
      'POST /visits (400 problem)': await head(`${url}/visits`, { method: 'POST', headers: json, body: '{' }),
      'GET /healthz (JSON)': await head(`${url}/healthz`),
      'GET /openapi.json (JSON)': await head(`${url}/openapi.json`),
      'GET /agents (JSON)': await head(`${url}/agents`),
      'GET /admin/session (admin JSON)': await head(`${url}/admin/session`, { headers: { cookie } }),
      'GET /visits?project= (admin JSON)': await head(`${url}/visits?project=${projectId}`, { headers: { cookie } }),
      'GET / (redirect)': await head(`${url}/`, { redirect: 'manual' }),
    };
    const missing: string[] = [];
    for (const [name, answer] of Object.entries(answers)) {
      if (answer.headers.get('x-content-type-options') !== 'nosniff') missing.push(`${name} [${answer.status} ${answer.type}]: no nosniff`);
      if (answer.headers.get('content-security-policy') !== API_POLICY) missing.push(`${name} [${answer.status} ${answer.type}]: policy ${answer.headers.get('content-security-policy')}`);
    }
    expect(missing).toEqual([]);
    // Each kind is in the list, with the status it was meant to have.
    const kinds = Object.values(answers).map((a) => `${a.status} ${a.type.split(';')[0]}`);
    for (const kind of ['202 application/json', '200 application/json', '200 text/csv', '200 text/event-stream', '200 text/plain', '304 (none)', '404 application/problem+json', '401 application/problem+json', '405 application/problem+json', '400 application/problem+json', '302 (none)']) {
      expect(kinds).toContain(kind);
    }

    // The transport's own refusal (no Host in HTTP/1.1), made before any route is found.
    const [refused] = parseResponses(await raw(url, 'GET /visits HTTP/1.1\r\n\r\n'));
    expect(refused!.status).toBe(400);
    expect(refused!.headers['content-type']).toBe('application/problem+json');
    expect(refused!.headers['x-content-type-options']).toBe('nosniff');
    expect(refused!.headers['content-security-policy']).toBe(API_POLICY);

    // The dashboard's page keeps its own policy and headers, not the API's.
    const page = await head(`${url}/ui/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/^default-src 'none'; script-src 'self'; .*frame-ancestors 'none'$/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
  });
});
