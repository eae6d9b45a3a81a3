// Admin login behind a reverse proxy (issue 17): the login limit counts attempts per client
// address read through the proxy by the server's client-IP rule, so one client's wrong guesses
// lock out that client only. A real `serve` on loopback; the loopback peer plays the proxy.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, spawnServe, tempDir, type ServeProcess } from './helpers.js';

let server: ServeProcess;
let secret: string;
const data = tempDir();

beforeAll(async () => {
  server = await spawnServe(['--data-dir', data.dir, '--verifiers', 'none']);
  secret = /admin login secret, shown only now: (aws_[A-Za-z0-9_-]+)/.exec(server.stdout())![1]!;
});

afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  data.cleanup();
});

const login = (secretText: string, forwardedFor?: string) => post(`${server.url}/admin/login`, undefined, { secret: secretText }, forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor });

describe('admin login behind a proxy', () => {
  it('locks out the client that guessed wrong 10 times, not the others behind the same proxy', async () => {
    // The proxy (loopback, a non-public peer) appends each client's address.
    for (let i = 0; i < 10; i++) expect((await login('aws_wrong', '203.0.113.5')).status).toBe(401);
    const locked = await login(secret, '203.0.113.5');
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    // A left-hand entry the client wrote does not move its bucket: the proxy's entry decides.
    expect((await login(secret, '198.51.100.77, 203.0.113.5')).status).toBe(429);
    // Other clients behind the same proxy still log in with the right secret.
    expect((await login(secret, '198.51.100.6')).status).toBe(200);
    expect((await login(secret, '198.51.100.6, 10.0.0.2')).status).toBe(200);
    // Requests without a forwarded address count as the proxy's own, a bucket of their own.
    expect((await login(secret)).status).toBe(200);
  });

  it("keys on no header a proxy may pass on as the client wrote it: CF-Connecting-IP or X-Real-IP through a proxy that only appends X-Forwarded-For neither locks out the admin's address nor escapes the count", async () => {
    const attempt = (secretText: string, headers: Record<string, string>) => post(`${server.url}/admin/login`, undefined, { secret: secretText }, headers);
    // The attacker (198.51.100.40, as the proxy appends it) names the admin's address in every header it may write.
    const forged = { 'cf-connecting-ip': '192.0.2.10', 'true-client-ip': '192.0.2.10', 'x-real-ip': '192.0.2.10' };
    for (let i = 0; i < 10; i++) expect((await attempt('aws_wrong', { ...forged, 'x-forwarded-for': '198.51.100.40' })).status).toBe(401);
    expect((await attempt('aws_wrong', { ...forged, 'x-forwarded-for': '198.51.100.40' })).status).toBe(429);
    // Rotating the forged headers does not give it a fresh bucket.
    expect((await attempt('aws_wrong', { 'cf-connecting-ip': '198.51.100.250', 'x-forwarded-for': '198.51.100.40' })).status).toBe(429);
    // The admin, at the address the attacker named, still logs in.
    expect((await attempt(secret, { 'x-forwarded-for': '192.0.2.10' })).status).toBe(200);
  });

  it("logs in behind a proxy that rewrites Host (nginx's and Apache's default) and forwards the host asked for", async () => {
    const attempt = (headers: Record<string, string>) => post(`${server.url}/admin/login`, undefined, { secret }, { 'x-forwarded-for': '198.51.100.60', origin: 'https://dash.example.com', ...headers });
    expect((await attempt({ 'x-forwarded-host': 'dash.example.com', 'x-forwarded-proto': 'https' })).status).toBe(200);
    expect((await attempt({ forwarded: 'for=198.51.100.60;host=dash.example.com;proto=https' })).status).toBe(200);
    // Another site's Origin is still refused, forwarded host or not.
    expect((await attempt({ 'x-forwarded-host': 'other.example' })).status).toBe(403);
    expect((await attempt({})).status).toBe(403);
  });

  it('reads at most 4 KiB of a login body, before anyone is authenticated: a larger declared body is answered 413 at once', async () => {
    const { port } = new URL(server.url);
    const started = Date.now();
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(`POST /admin/login HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024}\r\n\r\n{"secret":`));
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(data));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('at most 4096 bytes');
    expect(Date.now() - started).toBeLessThan(2000);
    const padded = await post(`${server.url}/admin/login`, undefined, { secret: secret, padding: 'x'.repeat(5000) });
    expect(padded.status).toBe(413);
  });
});
