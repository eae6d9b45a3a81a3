// Audit findings on `refresh-ip-ranges` and `serve --ip-ranges-dir`, against a local list server:
// lists matching every address are refused, the remote creationTime must be a date and is never
// printed raw, a failed download says why, --timeout-ms takes only what setTimeout can honour,
// and a URL's password is sent as Basic authentication and never printed.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/adapters/node/cli.js';
import { captureIo } from '../helpers/cli-io.js';

const OLD_LIST = '{"creationTime":"2025-01-01T00:00:00Z","prefixes":[{"ipv4Prefix":"198.51.100.0/24"}]}\n';
const GOOD = { creationTime: '2026-11-21T10:00:00.000000', prefixes: [{ ipv4Prefix: '192.0.2.0/24' }] };
const json = (document: unknown) => (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document));
const dated = (creationTime: string) => json({ ...GOOD, creationTime });
const listOf = (...prefixes: object[]) => json({ ...GOOD, prefixes });

let seen: IncomingHttpHeaders[] = [];
let otherSeen: IncomingHttpHeaders[] = [];
let server: Server;
let other: Server;
let base: string;
let otherBase: string;
let closedPort: number;

const routes: Record<string, (res: ServerResponse) => void> = {
  '/ok.json': json(GOOD),
  '/all.json': listOf({ ipv4Prefix: '0.0.0.0/0' }, { ipv6Prefix: '::/0' }),
  '/v6-all.json': listOf({ ipv6Prefix: '::/0' }),
  '/mapped.json': listOf({ ipv6Prefix: '::ffff:0:0/96' }),
  '/halves.json': listOf({ ipv4Prefix: '0.0.0.0/1' }, { ipv4Prefix: '128.0.0.0/1' }),
  '/forged.json': dated('\u001b[2K\rok      google-common-crawlers.json  1 IPv4 / 0 IPv6 prefixes\u001b[8m\u009b'),
  '/banana.json': dated('banana'),
  '/future.json': dated('2999-01-01T00:00:00Z'),
  // Not JSON: V8's error message quotes the text it stopped at.
  '/escape-not-json.json': (res) => res.writeHead(200).end('\u001b[31m\u009b2J'),
  '/loop.json': (res) => res.writeHead(302, { location: '/loop.json' }).end(),
  '/private.json': (res) => (seen.at(-1)?.authorization === `Basic ${Buffer.from('user:p@ss w').toString('base64')}` ? json(GOOD)(res) : res.writeHead(401).end()),
  '/elsewhere.json': (res) => res.writeHead(302, { location: `${otherBase}/ok.json` }).end(),
};

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers);
    (routes[req.url ?? ''] ?? ((r) => r.writeHead(404).end()))(res);
  });
  other = createServer((req, res) => {
    otherSeen.push(req.headers);
    json(GOOD)(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  // A port nothing listens on: one just closed.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
});

afterAll(async () => {
  for (const s of [server, other]) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

let dir: string;
beforeEach(() => {
  seen = [];
  otherSeen = [];
  dir = mkdtempSync(join(tmpdir(), 'agentwarden-refresh-audit-'));
  writeFileSync(join(dir, 'a.json'), OLD_LIST);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function run(args: string[]) {
  const io = captureIo();
  const code = await main(args, io);
  return { code, out: io.out(), err: io.err() };
}

/** Refreshes a.json from `url`; the line printed for it. */
async function refreshFrom(url: string, timeoutMs = '2000') {
  const result = await run(['refresh-ip-ranges', 'a.json', '--dir', dir, '--timeout-ms', timeoutMs, '--source-url', `a.json=${url}`]);
  return { ...result, line: result.out.split('\n')[0]! };
}

const read = () => readFileSync(join(dir, 'a.json'), 'utf8');

describe('refresh-ip-ranges refuses lists that would verify any address', () => {
  it.each([
    ['/all.json', 'ipv4Prefix "0.0.0.0/0" is wider than /8'],
    ['/v6-all.json', 'ipv6Prefix "::/0" reaches into ::ffff:0:0/96'],
    ['/mapped.json', 'ipv6Prefix "::ffff:0:0/96" reaches into ::ffff:0:0/96'],
    ['/halves.json', 'ipv4Prefix "0.0.0.0/1" is wider than /8'],
  ])('%s', async (path, reason) => {
    const { code, line } = await refreshFrom(`${base}${path}`);
    expect(code).toBe(1);
    expect(line).toMatch(/^FAILED +a\.json +IP list "a\.json": /);
    expect(line).toContain(reason);
    expect(read()).toBe(OLD_LIST);
  });
});

describe("refresh-ip-ranges and the list server's creationTime", () => {
  it('never prints control characters from the download, so a server cannot forge an "ok" line', async () => {
    for (const path of ['/forged.json', '/escape-not-json.json']) {
      const { code, out } = await refreshFrom(`${base}${path}`);
      expect(code, path).toBe(1);
      expect(out, path).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
      expect(out.split('\n').filter((line) => line.startsWith('ok')), path).toEqual([]);
      expect(read()).toBe(OLD_LIST);
    }
    expect((await refreshFrom(`${base}/forged.json`)).line).toContain('"creationTime" "\\u001b[2K\\rok ');
  });

  it.each([
    ['/banana.json', '"creationTime" "banana" is not an ISO 8601 date and time'],
    ['/future.json', '"creationTime" "2999-01-01T00:00:00Z" is more than a day in the future'],
  ])('refuses %s and keeps the previous copy', async (path, reason) => {
    const { code, line } = await refreshFrom(`${base}${path}`);
    expect(code).toBe(1);
    expect(line).toContain(reason);
    expect(read()).toBe(OLD_LIST);
  });
});

describe('refresh-ip-ranges says why a download failed', () => {
  it.each([
    ['a refused connection', () => `http://127.0.0.1:${closedPort}/x.json`, /download failed: fetch failed: connect ECONNREFUSED 127\.0\.0\.1:\d+;/],
    ['a redirect loop', () => `${base}/loop.json`, /download failed: fetch failed: redirect count exceeded;/],
    ['TLS to a plain HTTP server', () => base.replace('http:', 'https:') + '/ok.json', /download failed: fetch failed: .*(SSL|TLS|EPROTO)/],
  ])('%s', async (_, url, reason) => {
    const { code, line } = await refreshFrom(url());
    expect(code).toBe(1);
    expect(line).toMatch(reason);
    expect(read()).toBe(OLD_LIST);
  });
});

describe('refresh-ip-ranges --timeout-ms', () => {
  it.each(['2147483648', '4294967296', '1e3', '0x10', '0', '-5', '1.5', ' 15', ''])('refuses %j with exit 2, naming the flag', async (value) => {
    const { code, err } = await run(['refresh-ip-ranges', 'a.json', '--dir', dir, '--timeout-ms', value, '--source-url', `a.json=${base}/ok.json`]);
    expect(code).toBe(2);
    expect(err).toMatch(/^agentwarden refresh-ip-ranges: --timeout-ms must be a whole number of milliseconds from 1 to 2147483647/);
    expect(seen).toEqual([]);
  });

  it('takes 2147483647', async () => {
    const { code, line } = await refreshFrom(`${base}/ok.json`, '2147483647');
    expect(code).toBe(0);
    expect(line).toMatch(/^ok +a\.json/);
  });
});

describe('refresh-ip-ranges with credentials in a --source-url', () => {
  it('sends them as Basic authentication and prints no password', async () => {
    const { code, out, err } = await refreshFrom(`http://user:p%40ss%20w@${base.slice('http://'.length)}/private.json`);
    expect(out + err).not.toMatch(/p%40ss|p@ss/);
    expect(code).toBe(0);
    expect(JSON.parse(read())).toEqual(GOOD);
    expect(seen.at(-1)?.authorization).toBe(`Basic ${Buffer.from('user:p@ss w').toString('base64')}`);
  });

  it('does not send them on to another origin it is redirected to', async () => {
    const { code } = await refreshFrom(`http://user:pw@${base.slice('http://'.length)}/elsewhere.json`);
    expect(code).toBe(0);
    expect(otherSeen).toHaveLength(1);
    expect(otherSeen[0]!.authorization).toBeUndefined();
  });

  it('prints a refused URL with its password masked', async () => {
    const { code, err } = await run(['refresh-ip-ranges', 'a.json', '--dir', dir, '--source-url', 'a.json=ftp://user:secret@example.com/x']);
    expect(code).toBe(2);
    expect(err).toContain('"ftp://user:***@example.com/x"');
    expect(err).not.toContain('secret');
  });

  it('masks a password that a failure message repeats', async () => {
    const { code, out } = await refreshFrom(`http://user:secret@127.0.0.1:${closedPort}/x.json`);
    expect(code).toBe(1);
    expect(out).not.toContain('secret');
  });
});

describe('serve --ip-ranges-dir refuses a list that refresh-ip-ranges would refuse', () => {
  it.each([
    [{ creationTime: '2026-11-01T00:00:00Z', prefixes: [] }, 'no prefixes'],
    [{ prefixes: GOOD.prefixes }, 'no "creationTime" string'],
    [{ creationTime: '2999-01-01T00:00:00Z', prefixes: GOOD.prefixes }, 'more than a day in the future'],
    [{ creationTime: '2026-11-01T00:00:00Z', prefixes: [{ ipv4Prefix: '0.0.0.0/0' }] }, 'ipv4Prefix "0.0.0.0/0" is wider than /8'],
  ])('%j', async (document, reason) => {
    const lists = join(dir, 'lists');
    const data = join(dir, 'data');
    mkdirSync(lists);
    writeFileSync(join(lists, 'openai-gptbot.json'), JSON.stringify(document));
    const { code, err } = await run(['serve', '--port', '0', '--data-dir', data, '--verifiers', 'ip-ranges', '--ip-ranges-dir', lists]);
    expect(code).toBe(2);
    expect(err).toMatch(/^agentwarden serve: --ip-ranges-dir "[^"]+": /);
    expect(err).not.toContain('agentwarden: ');
    expect(err).toContain('IP list "openai-gptbot.json": ');
    expect(err).toContain(reason);
    expect(err).toContain(join(lists, 'openai-gptbot.json'));
    expect(existsSync(data)).toBe(false);
  });

  it('names the flag when the directory or a file in it cannot be read', async () => {
    const data = join(dir, 'data');
    const missing = await run(['serve', '--port', '0', '--data-dir', data, '--ip-ranges-dir', join(dir, 'nowhere')]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/^agentwarden serve: --ip-ranges-dir "[^"]+nowhere": cannot read the IP list directory [^:]+nowhere: ENOENT/);
    const lists = join(dir, 'lists');
    mkdirSync(lists);
    writeFileSync(join(lists, 'openai-gptbot.json'), '{');
    const broken = await run(['serve', '--port', '0', '--data-dir', data, '--ip-ranges-dir', lists]);
    expect(broken.code).toBe(2);
    expect(broken.err).toMatch(/^agentwarden serve: --ip-ranges-dir "[^"]+": cannot read IP list [^ ]+openai-gptbot\.json: /);
    expect(existsSync(data)).toBe(false);
  });
});
