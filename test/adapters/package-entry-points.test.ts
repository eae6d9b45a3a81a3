// The published entry points as an application imports them: one copy of the core, so errors
// thrown by an adapter's store are the classes the core's API handler recognises.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
// By name at run time: the type-check runs before the build, when dist/ (and its types) may not exist.
const load = (specifier: string): Promise<Record<string, any>> => import(specifier);

describe('package entry points (dist/, built by npm test before vitest)', () => {
  it('exist', () => {
    for (const file of ['index.js', 'index.cjs', 'node.js', 'node.cjs', 'clickhouse.js', 'clickhouse.cjs', 'express.js', 'express.cjs', 'fastify.js', 'fastify.cjs', 'hono.js', 'hono.cjs', 'cli.js', 'web/app.js']) {
      expect(existsSync(new URL(`../../dist/${file}`, import.meta.url)), file).toBe(true);
    }
  });

  it('agentwarden, agentwarden/node and agentwarden/clickhouse load by name (ESM and CJS)', async () => {
    const core = await load('agentwarden');
    const node = await load('agentwarden/node');
    const clickhouse = await load('agentwarden/clickhouse');
    expect(typeof node.openSqliteStore).toBe('function');
    expect(typeof clickhouse.openClickHouseVisitStore).toBe('function');
    const coreCjs = require('agentwarden');
    const nodeCjs = require('agentwarden/node');
    expect(typeof nodeCjs.openSqliteStore).toBe('function');
    expect(coreCjs.VisitStoreUnavailableError).toBeDefined();
    expect(core.VisitStoreUnavailableError).toBeDefined();
  });

  it('agentwarden/express, agentwarden/fastify and agentwarden/hono load by name (ESM and CJS) over the one core', async () => {
    const core = await load('agentwarden');
    for (const name of ['express', 'fastify', 'hono']) {
      const esm = await load(`agentwarden/${name}`);
      const cjs = require(`agentwarden/${name}`) as Record<string, any>;
      expect(typeof esm.agentwarden, name).toBe('function');
      expect(typeof cjs.agentwarden, name).toBe('function');
    }
    // A core made by the application is the one the adapter runs on.
    const { agentwarden } = await load('agentwarden/express');
    const shared = core.createAgentwarden();
    expect(agentwarden(shared).agentwarden).toBe(shared);
  });

  it('an SQLite store refusal is a VisitStoreUnavailableError of the core the application imports', async () => {
    const { VisitStoreUnavailableError } = await load('agentwarden');
    const { openSqliteVisitStore } = await load('agentwarden/node');
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(':memory:');
    const store = openSqliteVisitStore(db, { maxPendingVisits: 1 });
    const visit = {
      request_path: '/',
      request_method: 'GET',
      request_headers: {},
      received: 0,
      time: 0,
      agent_id: null,
      agent_type: null,
      result: 'unknown_agent' as const,
      client_ip: null,
      referral: null,
    };
    const first = store.append('prj_1', [visit, visit]);
    const refused = store.append('prj_1', [visit]).then(
      () => undefined,
      (error: unknown) => error,
    );
    await first;
    expect(await refused).toBeInstanceOf(VisitStoreUnavailableError);
    db.close();
  });
});
