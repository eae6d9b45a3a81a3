// The ClickHouse project tables' failures: ClickHouse unreachable is a VisitStoreUnavailableError
// on every operation (a 503 with Retry-After), never a bare error answered 500.
import { describe, expect, it } from 'vitest';
import { VisitStoreUnavailableError } from '../../../src/index.js';
import { createProjectTables } from '../../../src/adapters/clickhouse/project-tables.js';

describe('ClickHouse project tables', () => {
  it('turn a connection failure into VisitStoreUnavailableError for reads and writes alike', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' });
    const tables = createProjectTables({ rows: () => Promise.reject(refused), insert: () => Promise.reject(refused), clock: { now: () => 0 }, tokenCacheMs: 0, retryAfterSeconds: 3 });
    for (const [what, call] of [
      ['listProjects', () => tables.listProjects()],
      ['getProjectSettings', () => tables.getProjectSettings('prj_a')],
      ['putProjectSettings', () => tables.putProjectSettings('prj_a', { robots: null } as never)],
      ['createProject', () => tables.createProject('a')],
      ['findProject', () => tables.findProject('prj_a')],
    ] as const) {
      const error = await call().then(() => undefined, (e: unknown) => e);
      expect(error, what).toBeInstanceOf(VisitStoreUnavailableError);
      expect((error as VisitStoreUnavailableError).retryAfterSeconds, what).toBe(3);
    }
  });
});
