// `agentwarden refresh-ip-ranges` against a local HTTP server: valid lists replace the old copy,
// every kind of failure leaves it byte-identical.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/adapters/node/cli.js';
import { IP_RANGE_SOURCES } from '../../src/adapters/node/index.js';
import { captureIo } from '../helpers/cli-io.js';

const NEW_LIST = JSON.stringify({ creationTime: '2026-11-21T10:00:00.000000', prefixes: [{ ipv4Prefix: '192.0.2.0/24' }, { ipv6Prefix: '2001:db8::/32' }] }, null, 4);
const OLD_LIST = '{"creationTime":"2025-01-01T00:00:00Z","prefixes":[{"ipv4Prefix":"198.51.100.0/24"}]}\n';

const routes: Record<string, (res: import('node:http').ServerResponse) => void> = {
  '/ok.json': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(NEW_LIST),
  '/moved.json': (res) => res.writeHead(301, { location: '/ok.json' }).end(),
  '/error.json': (res) => res.writeHead(500).end('oops'),
  '/invalid.json': (res) => res.writeHead(200).end('{"creationTime": "x", "prefixes": ['),
  '/bad-cidr.json': (res) => res.writeHead(200).end(JSON.stringify({ creationTime: 'x', prefixes: [{ ipv4Prefix: '192.0.2.0/24' }, { ipv4Prefix: '192.0.2.1/24' }] })),
  '/empty.json': (res) => res.writeHead(200).end(JSON.stringify({ creationTime: 'x', prefixes: [] })),
  '/not-jafar.json': (res) => res.writeHead(200).end(JSON.stringify({ gptbot: { ipv4Prefixes: ['192.0.2.0/24'] } })),
  '/slow.json': () => {}, // never answers
  // Answers without end (chunked, no length), as fast as the client reads.
  '/endless.json': (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, ' ');
    const more = () => {
      while (!res.destroyed && res.write(chunk));
    };
    res.on('drain', more);
    more();
  },
};

let server: Server;
let base: string;
let dir: string;

beforeAll(async () => {
  server = createServer((req, res) => (routes[req.url ?? ''] ?? ((r) => r.writeHead(404).end()))(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentwarden-ip-ranges-'));
  for (const name of ['a.json', 'b.json', 'google-common-crawlers.json']) writeFileSync(join(dir, name), OLD_LIST);
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function refresh(sources: Record<string, string>) {
  const io = captureIo();
  const args = ['refresh-ip-ranges', ...Object.keys(sources), '--dir', dir, '--timeout-ms', '300'];
  for (const [name, path] of Object.entries(sources)) args.push('--source-url', `${name}=${base}${path}`);
  const code = await main(args, io);
  return { code, out: io.out(), err: io.err() };
}

const read = (name: string) => readFileSync(join(dir, name), 'utf8');

describe('agentwarden refresh-ip-ranges', () => {
  it('replaces lists that download and validate, byte for byte, and exits 0', async () => {
    const { code, out } = await refresh({ 'a.json': '/ok.json', 'google-common-crawlers.json': '/moved.json' });
    expect(code).toBe(0);
    expect(read('a.json')).toBe(NEW_LIST);
    expect(read('google-common-crawlers.json')).toBe(NEW_LIST);
    expect(read('b.json')).toBe(OLD_LIST);
    expect(out).toMatch(/^ok +a\.json +1 IPv4 \/ 1 IPv6 prefixes, creationTime 2026-11-21T10:00:00\.000000$/m);
    expect(out).toMatch(/2 updated, 0 failed/);
    expect(readdirSync(dir).sort()).toEqual(['a.json', 'b.json', 'google-common-crawlers.json']);
  });

  it('creates a --dir that does not exist yet (one of your own, for serve --ip-ranges-dir)', async () => {
    const parent = dir;
    dir = join(parent, 'nested', 'ip-ranges');
    try {
      const { code } = await refresh({ 'a.json': '/ok.json' });
      expect(code).toBe(0);
      expect(read('a.json')).toBe(NEW_LIST);
      // A list that fails there has no previous copy to keep: serve reads the bundled one for it.
      const failed = await refresh({ 'b.json': '/error.json' });
      expect(failed.code).toBe(1);
      expect(failed.out).toMatch(new RegExp(`^FAILED +b\\.json +HTTP 500.*; no copy in ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} yet, so the bundled one is used$`, 'm'));
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it.each([
    ['/error.json', /HTTP 500/],
    ['/invalid.json', /invalid JSON/],
    ['/bad-cidr.json', /ipv4Prefix "192\.0\.2\.1\/24" is not a valid CIDR \(host bits are set\)/],
    ['/empty.json', /no prefixes/],
    ['/not-jafar.json', /"prefixes" must be an array/],
    ['/slow.json', /timed out after 300 ms/],
    ['/endless.json', /too large \(over 5242880 bytes\)/],
    ['/missing.json', /HTTP 404/],
  ])('keeps the previous copy when the source gives %s', async (path, reason) => {
    const { code, out } = await refresh({ 'a.json': path, 'b.json': '/ok.json' });
    expect(code).toBe(1);
    expect(read('a.json')).toBe(OLD_LIST);
    expect(read('b.json')).toBe(NEW_LIST);
    const line = out.split('\n').find((l) => l.includes('a.json'));
    expect(line).toMatch(/^FAILED +a\.json +/);
    expect(line).toMatch(reason);
    expect(line).toMatch(/kept the previous copy$/);
    expect(out).toMatch(/1 updated, 1 failed/);
    expect(readdirSync(dir).sort()).toEqual(['a.json', 'b.json', 'google-common-crawlers.json']);
  });

  it('rejects bad arguments with exit 2 before fetching anything', async () => {
    const cases = [
      ['refresh-ip-ranges', 'unknown.json', '--dir', dir],
      ['refresh-ip-ranges', '--source-url', 'nonsense'],
      ['refresh-ip-ranges', '--source-url', 'a.json=ftp://x'],
      ['refresh-ip-ranges', '--timeout-ms', '-5'],
      ['refresh-ip-ranges', '--bogus'],
      ['refresh-ip-ranges', '--dir'],
    ];
    for (const args of cases) {
      const io = captureIo();
      expect(await main(args, io), args.join(' ')).toBe(2);
      expect(io.err()).toMatch(/^agentwarden refresh-ip-ranges: /);
    }
    expect(read('a.json')).toBe(OLD_LIST);
  });

  it('knows the official URL of every bundled list', () => {
    const bundled = readdirSync(join(import.meta.dirname, '../../data/ip-ranges')).filter((name) => name.endsWith('.json'));
    expect(Object.keys(IP_RANGE_SOURCES).sort()).toEqual(bundled.sort());
    for (const url of Object.values(IP_RANGE_SOURCES)) expect(new URL(url).protocol).toBe('https:');
  });

  it('is listed in --help', async () => {
    const io = captureIo();
    await main(['--help'], io);
    expect(io.out()).toMatch(/refresh-ip-ranges/);
  });
});
