// A careless or hostile operator's input to the CLI, from an audit that ran every command with
// wrong values: each mistake is refused with a message naming the flag (exit 2), and no mistake
// quietly weakens the server (every interface, no verification, a proxy rule believing anyone,
// a world-readable database, a password echoed, a reset that revoked nothing).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClientIpRule } from '../../src/index.js';
import { main } from '../../src/adapters/node/cli.js';
import { captureIo } from '../helpers/cli-io.js';
import { CLI, spawnServe, stopServes, type ServeProcess } from '../server/helpers.js';

const dirs: string[] = [];
const serves: ServeProcess[] = [];
afterEach(async () => {
  await stopServes(serves.splice(0));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentwarden-operator-'));
  dirs.push(dir);
  return dir;
}

/** Runs a command in-process; its exit code and what it wrote. */
async function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo('', env);
  const code = await main(args, io);
  return { code, out: io.out(), err: io.err() };
}

describe('serve refuses option values that would silently weaken or break it', () => {
  it.each([
    [['--host', ''], '--host must not be empty'],
    [['--host='], '--host must not be empty'],
    [['--verifiers', ''], '--verifiers must name at least one'],
    [['--verifiers', ' , '], '--verifiers must name at least one'],
    [['--dns-servers', '127.0.0.1:0'], 'must be from 1 to 65535'],
    [['--dns-servers', '[::1]:99999'], 'must be from 1 to 65535'],
    [['--dns-servers', 'dns.example'], 'is not an IP address'],
    [['--max-buffered-body-bytes', '64'], '--max-buffered-body-bytes must be at least --max-body-bytes'],
    [['--max-buffered-body-bytes-per-project', '1'], '--max-buffered-body-bytes-per-project must be at least --max-body-bytes'],
    [['--base-path', 'nos'], '--base-path must be a path'],
    [['--base-path', '/a b'], '--base-path must be a path'],
    [['--base-path', '/a/../b'], '--base-path must be a path'],
    [['--base-path', '//'], '--base-path must be a path'],
    [['--data-dir', '--log-requests'], '--data-dir needs a value, got the option --log-requests'],
    [['--trusted-proxies', '0.0.0.0/0,::/0'], 'too wide'],
  ])('%j: exit 2, naming it', async (args, message) => {
    const dir = tempDir();
    const result = await run(['serve', '--port', '0', '--data-dir', join(dir, 'data'), '--log', 'off', ...args]);
    expect(result.code).toBe(2);
    expect(result.err).toContain(message);
  });

  it('reads a switch from the environment in its usual spellings, and refuses any other value naming the variable', async () => {
    const dir = tempDir();
    const bad = await run(['serve', '--port', '0', '--data-dir', dir], { AGENTWARDEN_SECURE_COOKIES: 'maybe' });
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('AGENTWARDEN_SECURE_COOKIES must be true or false');
    // "1" once left the admin cookie without Secure, as if the variable were unset.
    const proc = await spawnServe(['--data-dir', join(dir, 'data'), '--log', 'json'], { AGENTWARDEN_LOG_REQUESTS: '1' });
    serves.push(proc);
    expect(proc.stdout()).toContain('"log_requests":true');
  });

  it('never prints a ClickHouse password, whatever the mistake in its URL', async () => {
    for (const url of ['clickhouse://admin:S3cretPW@127.0.0.1:9000', 'tcp://admin:S3cretPW@127.0.0.1:9000']) {
      const result = await run(['serve', '--port', '0', '--data-dir', tempDir(), '--store', 'clickhouse', '--clickhouse-url', url]);
      expect(result.code).toBe(2);
      expect(result.err).toContain('--clickhouse-url must be an http(s) URL');
      expect(result.err).not.toContain('S3cretPW');
      expect(result.err).toContain('admin:***@');
    }
  });
});

describe('the data directory', () => {
  it('is created readable by its owner only, and so is its database', async () => {
    const dir = join(tempDir(), 'data');
    const result = await run(['project', 'create', '--name', 'site', '--data-dir', dir]);
    expect(result.code).toBe(0);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'agentwarden.db')).mode & 0o777).toBe(0o600);
  });

  it('must hold a database for commands that act on an existing server: a mistyped --data-dir resets nothing', async () => {
    const dir = join(tempDir(), 'typo');
    for (const args of [['admin', 'reset-password', '--data-dir', dir], ['project', 'list', '--data-dir', dir]]) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.err).toContain('no agentwarden database at');
      expect(result.out).not.toContain('shown only now');
    }
  });

  it('names the path when it is a file rather than a directory', async () => {
    const file = join(tempDir(), 'afile');
    writeFileSync(file, 'x');
    // The program prints the message of what main() throws (exit 1).
    await expect(run(['project', 'create', '--name', 'site', '--data-dir', file])).rejects.toThrow(/cannot open the data directory's database ".*afile.*": it is not a directory/);
    // serve says so too, naming the option, instead of a bare EEXIST from mkdir.
    const served = await run(['serve', '--port', '0', '--data-dir', file]);
    expect(served.code).toBe(1);
    expect(served.err).toMatch(/^agentwarden serve: cannot use --data-dir ".*afile": EEXIST/);
    expect(served.out).not.toContain('shown only now');
  });

  it('takes project names up to the dashboard\'s 200 characters', async () => {
    const result = await run(['project', 'create', '--name', 'x'.repeat(201), '--data-dir', join(tempDir(), 'data')]);
    expect(result.code).toBe(2);
    expect(result.err).toContain('at most 200 characters');
  });
});

describe('a running serve', () => {
  it('keeps serving when the reader of its stdout goes away (no unhandled EPIPE)', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'data'));
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', join(dir, 'data'), '--log-requests'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 15_000);
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /agentwarden listening on (http:\/\/\S+)/.exec(out);
        if (match !== null) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
    });
    // The reader leaves; the next access-log line meets a closed pipe.
    child.stdout.destroy();
    for (let i = 0; i < 5; i++) expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(child.exitCode).toBeNull();
    child.kill('SIGHUP');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    // SIGHUP (a closed terminal) shuts it down gracefully, as SIGTERM does.
    expect(code).toBe(0);
    expect(err).not.toContain('EPIPE');
  });
});

describe('usage and start-up errors', () => {
  it('prints the help on stderr with exit 2 when no command is given, on stdout with exit 0 when asked for', async () => {
    const none = await run([]);
    expect(none.code).toBe(2);
    expect(none.out).toBe('');
    expect(none.err).toContain('Commands:');
    const asked = await run(['--help']);
    expect(asked.code).toBe(0);
    expect(asked.out).toContain('Commands:');
  });

  it('refuses an empty --data-dir as a usage error, and names --host and --port when it cannot listen', async () => {
    const empty = await run(['serve', '--port', '0', '--data-dir', '']);
    expect(empty.code).toBe(2);
    expect(empty.err).toContain('--data-dir must not be empty');
    const dir = tempDir();
    const unknown = await run(['serve', '--port', '0', '--data-dir', join(dir, 'data'), '--host', 'no-such-host.invalid', '--log', 'off']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('cannot listen on --host "no-such-host.invalid" --port 0');
  });
});

describe('one server per data directory', () => {
  it('refuses a second serve on a data directory a live server uses, and takes over the lock of one that died', async () => {
    const dir = join(tempDir(), 'data');
    const first = await spawnServe(['--data-dir', dir, '--log', 'off']);
    serves.push(first);
    const second = await run(['serve', '--port', '0', '--data-dir', dir, '--log', 'off']);
    expect(second.code).toBe(1);
    expect(second.err).toContain(`another agentwarden serve (pid ${first.child.pid}) uses the data directory`);
    // A server killed outright leaves its lock; the next start takes it over.
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    const again = await spawnServe(['--data-dir', dir, '--log', 'off']);
    serves.push(again);
    expect((await fetch(`${again.url}/healthz`)).status).toBe(200);
  });
});

describe('createClientIpRule', () => {
  it('refuses trusted-proxy ranges too wide to be a site\'s own proxies', () => {
    for (const cidr of ['0.0.0.0/0', '::/0', '0.0.0.0/7', '2000::/3']) expect(() => createClientIpRule({ trustedProxies: [cidr] }), cidr).toThrow(/too wide/);
    for (const cidr of ['10.0.0.0/8', '192.168.0.0/16', 'fd00::/16', '203.0.113.7']) expect(() => createClientIpRule({ trustedProxies: [cidr] }), cidr).not.toThrow();
  });
});

