// `agentwarden admin reset-password`: prints a new admin secret once, the old one stops working
// and every admin session ends; bad arguments exit 2 with the usage.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openAdminStore } from '../../src/adapters/node/admin-store.js';
import { adminCommand } from '../../src/adapters/node/commands/admin.js';
import { main } from '../../src/adapters/node/cli.js';
import { captureIo } from '../helpers/cli-io.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('agentwarden admin reset-password', () => {
  it('replaces the secret, prints the new one once, and logs every session out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentwarden-admin-cli-'));
    dirs.push(dir);
    const before = openAdminStore({ dataDir: dir });
    const old = (await before.ensureSecret())!;
    const login = await before.login(old, '127.0.0.1');
    if (!login.ok) throw new Error('login failed');
    before.close();

    const io = captureIo('', { AGENTWARDEN_DATA_DIR: dir });
    expect(await main(['admin', 'reset-password'], io)).toBe(0);
    const fresh = /admin login secret, shown only now: (aws_[A-Za-z0-9_-]{32})\n/.exec(io.out())?.[1];
    expect(fresh).toBeDefined();
    expect(io.out()).toContain('Every admin session was logged out.');

    const after = openAdminStore({ dataDir: dir });
    try {
      expect(after.findSession(login.cookieValue)).toBeUndefined();
      expect(await after.login(old, '127.0.0.1')).toEqual({ ok: false, reason: 'wrong-secret' });
      expect((await after.login(fresh!, '127.0.0.1')).ok).toBe(true);
      // The server's first-start path prints nothing now: a secret exists.
      expect(await after.ensureSecret()).toBeUndefined();
    } finally {
      after.close();
    }
  });

  it('exits 2 with the usage for a missing or unknown subcommand or option', async () => {
    for (const args of [[], ['reset'], ['reset-password', '--nope'], ['reset-password', 'extra']]) {
      const io = captureIo();
      expect(await adminCommand.run(args, io)).toBe(2);
      expect(io.err()).toContain('Usage: agentwarden admin reset-password');
    }
  });

  it('is listed in agentwarden --help', async () => {
    const io = captureIo();
    await main(['--help'], io);
    expect(io.out()).toMatch(/admin\s+Reset the dashboard admin login secret/);
  });
});
