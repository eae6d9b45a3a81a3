// The WordPress plugin's log upload against a real `serve` process, as the plugin sends it: gzipped
// NDJSON as text/plain with Content-Encoding: gzip, stored durably before the 202; the compressed
// body is held to the server's body cap like any other.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GPTBOT_UA, spawnServe, stopServes, tempDir, type ServeProcess } from './helpers.js';

let serve: ServeProcess;
let token: string;
const temp = tempDir();

beforeAll(async () => {
  serve = await spawnServe(['--data-dir', temp.dir, '--max-body-bytes', String(64 * 1024)]);
  token = serve.firstToken!;
});

afterAll(async () => {
  await stopServes([serve]);
  temp.cleanup();
});

const upload = (body: Buffer) =>
  fetch(`${serve.url}/logs/wordpress`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain', 'content-encoding': 'gzip' }, body: new Uint8Array(body) });

describe('POST /logs/wordpress on serve', () => {
  it('stores a gzipped log, and GET /user answers the plugin', async () => {
    const lines = ['/a', '/b', '/c'].map((path) => JSON.stringify({ request_path: path, request_method: 'GET', request_headers: { 'User-Agent': GPTBOT_UA }, wordpress_plugin_version: '1.28.0' }));
    const response = await upload(gzipSync(`${lines.join('\n')}\n`));
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ accepted: 3, rejected: [] });
    const stored = (await (await fetch(`${serve.url}/visits?limit=10`, { headers: { authorization: `Bearer ${token}` } })).json()) as { visits: { request_path: string; agent_id: string }[] };
    expect(stored.visits.map((v) => `${v.request_path} ${v.agent_id}`).sort()).toEqual(['/a gptbot', '/b gptbot', '/c gptbot']);
    const user = await fetch(`${serve.url}/user`, { headers: { authorization: `Bearer ${token}` } });
    expect(await user.json()).toMatchObject({ is_analytics_allowed: true });
  });

  it('refuses a compressed body past the body cap with 413 before decompressing it', async () => {
    // Random bytes do not compress: a gzip body larger than --max-body-bytes (64 KiB).
    const noise = Array.from({ length: 20_000 }, () => Math.random().toString(36)).join('\n');
    const body = gzipSync(noise);
    expect(body.byteLength).toBeGreaterThan(64 * 1024);
    const response = await upload(body);
    expect(response.status).toBe(413);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
  });
});
