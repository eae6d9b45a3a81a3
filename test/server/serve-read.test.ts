// `agentwarden serve` wiring of the read side: the --client-ip-headers rule is the one stored with
// visits, project settings survive a restart, and SIGTERM ends an open event stream promptly.
import { afterAll, describe, expect, it } from 'vitest';
import { post, spawnServe, tempDir } from './helpers.js';

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const cleanup of cleanups) cleanup();
});

describe('agentwarden serve: read APIs', () => {
  it('stores the client IP by the server rule, keeps settings across a restart, and ends streams on SIGTERM', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const args = ['--data-dir', dir, '--log', 'off', '--verifiers', 'none', '--client-ip-headers', 'x-real-ip'];
    const first = await spawnServe(args);
    const token = first.firstToken!;
    const auth = { authorization: `Bearer ${token}` };
    try {
      const visit = { request_path: '/', request_method: 'GET', request_headers: { 'user-agent': 'curl/8', 'x-real-ip': '192.0.2.7', 'x-forwarded-for': '198.51.100.9' } };
      expect((await post(`${first.url}/visits`, token, visit)).status).toBe(202);
      const listed = (await (await fetch(`${first.url}/visits`, { headers: auth })).json()) as any;
      expect(listed.visits[0].client_ip).toBe('192.0.2.7');
      const put = await fetch(`${first.url}/project-settings`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ robots: { agent_types: ['AI Search Crawler'], disallow: ['/drafts/'] }, client_ip: { headers: ['x-forwarded-for'] }, site_hosts: ['Site.Example'] }),
      });
      expect(put.status).toBe(200);
      expect((await post(`${first.url}/visits`, token, visit)).status).toBe(202);
      const after = (await (await fetch(`${first.url}/visits?limit=1`, { headers: auth })).json()) as any;
      expect(after.visits[0].client_ip).toBe('198.51.100.9');

      const stream = await fetch(`${first.url}/visits/stream`, { headers: auth });
      expect(stream.status).toBe(200);
      const reader = stream.body!.getReader();
      await reader.read();
      const stopped = performance.now();
      first.child.kill('SIGTERM');
      for (;;) if ((await reader.read()).done) break;
      expect(performance.now() - stopped).toBeLessThan(2000);
      expect(await first.exited).toBe(0);
    } finally {
      first.child.kill('SIGKILL');
    }

    const second = await spawnServe(args);
    try {
      const settings = (await (await fetch(`${second.url}/project-settings`, { headers: auth })).json()) as any;
      expect(settings).toEqual({ robots: { agent_types: ['AI Search Crawler'], disallow: ['/drafts/'] }, client_ip: { headers: ['x-forwarded-for'] }, site_hosts: ['site.example'] });
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});

describe('agentwarden serve --client-ip-headers none', () => {
  it('trusts no header: a visit has an address only when sent with client_ip', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const serve = await spawnServe(['--data-dir', dir, '--log', 'off', '--verifiers', 'none', '--client-ip-headers', 'none']);
    const token = serve.firstToken!;
    try {
      const headers = { 'user-agent': 'curl/8', 'x-real-ip': '192.0.2.7', 'x-forwarded-for': '198.51.100.9', 'cf-connecting-ip': '192.0.2.8' };
      expect((await post(`${serve.url}/visits`, token, [{ request_path: '/forged', request_method: 'GET', request_headers: headers }, { request_path: '/sent', request_method: 'GET', request_headers: headers, client_ip: '203.0.113.5' }])).status).toBe(202);
      const listed = (await (await fetch(`${serve.url}/visits`, { headers: { authorization: `Bearer ${token}` } })).json()) as any;
      const byPath = Object.fromEntries(listed.visits.map((visit: any) => [visit.request_path, visit.client_ip]));
      expect(byPath).toEqual({ '/forged': null, '/sent': '203.0.113.5' });
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });
});
