// Rollup tables of the SQLite visit store: which tables count which keys at which bucket width, and
// the pass that folds committed raw rows into them behind a watermark (exact: queries add the rows
// past it), from cells remembered at commit when it can, from the table otherwise.
import type BetterSqlite3 from 'better-sqlite3';
import { pathWithoutQuery, type EnrichedVisit } from '../../index.js';
import { DAY_MS, floorTo, HOUR_MS, MINUTE_MS, NONE } from './sqlite-visit-sql.js';

type Database = BetterSqlite3.Database;

// Fine cells remembered from appends for the rollup pass at most: a pass every second keeps far
// fewer; past it (passes off, or extreme variety) the rows are read back from the table instead.
const MAX_RECENT_CELLS = 100_000;
// Raw rows folded per rollup transaction, then appends get their turn: at 10-30 us a visit (many
// distinct paths, or times spread over days) one transaction holds the event loop 100-300 ms. The
// more rows one fold sees, the more of them share a cell: 20,000 cost half what 4 x 5,000 do.
const ROLLUP_CHUNK = 10_000;

/** Rollup key columns of the combined tables (one row per bucket and combination seen). */
export const DIM_KEY = 'agent_id, agent_type, result, referral';

/** Columns a rollup is keyed by (besides project and bucket), as the pass derives them from a visit. */
type RollupColumn = 'agent_id' | 'agent_type' | 'result' | 'referral' | 'path' | 'request_path' | 'status';
/** One rollup table: its bucket width, key columns, columns that follow from the key, and whether it keeps the earliest and latest time. */
export interface Rollup {
  readonly table: string;
  readonly width: number;
  readonly key: readonly RollupColumn[];
  readonly extra?: readonly RollupColumn[];
  /** A `first` column: the earliest visit's time in the cell. */
  readonly first?: boolean;
  /** A `last` column: the latest visit's time in the cell. */
  readonly last?: boolean;
}
const DIMS = ['agent_id', 'agent_type', 'result', 'referral'] as const;
/** Every rollup table the pass keeps. */
export const ROLLUPS: readonly Rollup[] = [
  // With the exact times of their first and last visits: first and last seen, a project's last visit.
  { table: 'visit_dims_minute', width: MINUTE_MS, key: DIMS, first: true, last: true },
  { table: 'visit_dims_hour', width: HOUR_MS, key: DIMS, first: true, last: true },
  { table: 'visit_dims_day', width: DAY_MS, key: DIMS, first: true, last: true },
  ...(['agent_id', 'agent_type', 'result', 'referral', 'path'] as const).map((column) => ({ table: `visit_by_${column}_hour`, width: HOUR_MS, key: [column] })),
  { table: 'visit_by_path_day', width: DAY_MS, key: ['path'] },
  { table: 'visit_paths_hour', width: HOUR_MS, key: ['path', ...DIMS] },
  { table: 'visit_agent_paths_hour', width: HOUR_MS, key: [...DIMS, 'request_path'], extra: ['path'], last: true },
  { table: 'visit_agent_paths_day', width: DAY_MS, key: ['agent_id', 'agent_type', 'request_path'], extra: ['path'], last: true },
  // Status codes by the dimensions (not by path): stats by status, status filters.
  { table: 'visit_status_hour', width: HOUR_MS, key: [...DIMS, 'status'] },
  { table: 'visit_status_day', width: DAY_MS, key: [...DIMS, 'status'] },
];
/** A raw row as the rollup pass reads it: id, project, time, request path, path, agent, type, result, referral, status. */
type PassRow = [number, string, number, string, string, string | null, string | null, string, string | null, number | null];

/** The status a rollup counts a visit under: its response status code, 0 when it has none. */
export function rollupStatus(status: unknown): number {
  return typeof status === 'number' ? status : 0;
}

/** Visits of one (project, minute, agent, type, result, referral, request path): the finest rollup cell. */
interface FineCell {
  readonly projectId: string;
  readonly minute: number;
  readonly values: Readonly<Record<RollupColumn, string | number>>;
  count: number;
  first: number;
  last: number;
}

/** Fine cells of some visits, keyed so that equal cells merge. */
type FineCells = Map<string, FineCell>;

/** Counts one visit into `fine`. */
function addFine(
  fine: FineCells,
  projectId: string,
  time: number,
  requestPath: string,
  path: string,
  agentId: string | null,
  agentType: string | null,
  result: string,
  referral: string | null,
  status: number,
): void {
  const minute = floorTo(time, MINUTE_MS);
  // The request path last: every field before it is an id, a closed code, a number or '' (no separator).
  const key = `${projectId}\u0000${minute}\u0000${agentId ?? NONE}\u0000${agentType ?? NONE}\u0000${result}\u0000${referral ?? NONE}\u0000${status}\u0000${requestPath}`;
  const cell = fine.get(key);
  if (cell !== undefined) {
    cell.count++;
    if (time < cell.first) cell.first = time;
    if (time > cell.last) cell.last = time;
  } else {
    const values = { agent_id: agentId ?? NONE, agent_type: agentType ?? NONE, result, referral: referral ?? NONE, path, request_path: requestPath, status };
    fine.set(key, { projectId, minute, values, count: 1, first: time, last: time });
  }
}

/**
 * Adds fine cells into every rollup: runs inside the caller's transaction. Visits are first merged
 * into fine cells, then each rollup's cells are summed from those, so a chunk of live traffic
 * costs one upsert per distinct cell, not per visit.
 */
function createRollupWriter(db: Database) {
  const statements = ROLLUPS.map((rollup) => {
    const columns = [...rollup.key, ...(rollup.extra ?? [])];
    const times = [...(rollup.first === true ? ['first'] : []), ...(rollup.last === true ? ['last'] : [])];
    const updates = [...(rollup.first === true ? ['first = min(first, excluded.first)'] : []), ...(rollup.last === true ? ['last = max(last, excluded.last)'] : [])];
    return db.prepare(
      `INSERT INTO ${rollup.table} (project_id, bucket, ${columns.join(', ')}, count${times.map((column) => `, ${column}`).join('')})
       VALUES (?, ?, ${columns.map(() => '?').join(', ')}, ?${times.map(() => ', ?').join('')})
       ON CONFLICT (project_id, bucket, ${rollup.key.join(', ')}) DO UPDATE SET count = count + excluded.count${updates.map((update) => `, ${update}`).join('')}`,
    );
  });
  return {
    /** Folds raw rows read back from the table. */
    foldRows(rows: readonly PassRow[]): void {
      const fine: FineCells = new Map();
      for (const [, projectId, time, requestPath, path, agentId, agentType, result, referral, status] of rows) addFine(fine, projectId, time, requestPath, path, agentId, agentType, result, referral, rollupStatus(status));
      this.foldCells(fine);
    },
    foldCells(fine: FineCells): void {
      ROLLUPS.forEach((rollup, index) => {
        const cells = new Map<string, { params: unknown[]; count: number; first: number; last: number }>();
        const columns = [...rollup.key, ...(rollup.extra ?? [])];
        for (const { projectId, minute, values, count, first, last } of fine.values()) {
          const bucket = floorTo(minute, rollup.width);
          let key = `${projectId}\u0000${bucket}`;
          // Length-prefixed: no two key lists share a string, whatever a path holds.
          for (const column of rollup.key) {
            const value = String(values[column]);
            key += `\u0000${value.length}:${value}`;
          }
          const cell = cells.get(key);
          if (cell !== undefined) {
            cell.count += count;
            if (first < cell.first) cell.first = first;
            if (last > cell.last) cell.last = last;
          } else {
            cells.set(key, { params: [projectId, bucket, ...columns.map((column) => values[column])], count, first, last });
          }
        }
        const statement = statements[index]!;
        for (const { params, count, first, last } of cells.values()) {
          // In the statement's column order: the key, the count, then the times this rollup keeps.
          statement.run(...params, count, ...(rollup.first === true ? [first] : []), ...(rollup.last === true ? [last] : []));
        }
      });
    },
  };
}

/** The rollup pass of one open store; see `createRollupPass`. */
export interface RollupPass {
  /**
   * Remembers the fine cells of a just-committed group of appends (`ids[g][i]` is the id of
   * `group[g].visits[i]`), so the pass folds them without reading the rows back. Never throws: a
   * visit it cannot count (a library caller's oddly typed one) makes it forget, and the pass
   * reads the rows from the table.
   */
  noteCommitted(group: readonly { readonly projectId: string; readonly visits: readonly EnrichedVisit[] }[], ids: readonly (readonly number[])[]): void;
  /** Folds every visit committed so far, in chunks between which ingestion runs; resolves with how many. */
  rollUp(): Promise<number>;
  /** The id up to which raw rows are in the rollups, read from the database. */
  watermark(): number;
}

/**
 * The rollup pass over `db`. Rows past the watermark are read, counted and the watermark advanced
 * in one transaction, so a crash leaves both or neither; the watermark is read from the database
 * inside it (never cached), so two processes on one file never fold a row twice. Ids grow in
 * commit order (AUTOINCREMENT, one writer at a time), so no row can later appear below the
 * watermark. `closed()` stops a pass between chunks.
 */
export function createRollupPass(db: Database, closed: () => boolean): RollupPass {
  // Fine cells of the rows this process committed, from the first id on while ids run on without
  // a gap: the pass folds them without reading the rows back (a third of its cost). Rows another
  // writer put between them, rows before a restart and a map past its bound are read from the table.
  let recent: { readonly first: number; last: number; readonly fine: FineCells } | undefined;
  const watermarkOf = db.prepare<[], { watermark: number }>('SELECT watermark FROM visit_rollup_state WHERE id = 1');
  const setWatermark = db.prepare('UPDATE visit_rollup_state SET watermark = ? WHERE id = 1');
  const passRows = db
    .prepare<[number, number, number]>('SELECT id, project_id, time, request_path, path, agent_id, agent_type, result, referral, response_status_code FROM visits WHERE id > ? AND id <= ? ORDER BY id LIMIT ?')
    .raw();
  const rollupWriter = createRollupWriter(db);
  /** Folds the next rows past the watermark: the remembered ones when they come next, else a chunk read from the table. */
  const foldChunk = db.transaction((remembered: typeof recent): { folded: number; fromMemory: boolean } => {
    const watermark = watermarkOf.get()!.watermark;
    if (remembered !== undefined && watermark === remembered.first - 1) {
      rollupWriter.foldCells(remembered.fine);
      setWatermark.run(remembered.last);
      return { folded: remembered.last - watermark, fromMemory: true };
    }
    // Up to the remembered rows only, so they can follow from memory; past them (another process
    // folded them), all of them.
    const upTo = remembered !== undefined && watermark < remembered.first ? remembered.first - 1 : Number.MAX_SAFE_INTEGER;
    const rows = passRows.all(watermark, upTo, ROLLUP_CHUNK) as PassRow[];
    if (rows.length === 0) return { folded: 0, fromMemory: false };
    rollupWriter.foldRows(rows);
    setWatermark.run(rows[rows.length - 1]![0]);
    return { folded: rows.length, fromMemory: false };
  });
  const readWatermark = () => watermarkOf.get()!.watermark;
  const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  let rolling: Promise<number> | undefined;
  const runRollUp = async (): Promise<number> => {
    let folded = 0;
    let memoryUsed = false;
    for (;;) {
      if (closed() || !db.open) return folded;
      const { folded: n, fromMemory } = foldChunk.immediate(memoryUsed ? undefined : recent);
      folded += n;
      if (fromMemory) {
        // Committed: the remembered rows are in the rollups (no append runs during the transaction).
        // Rows another writer appended after them are read from the table next.
        recent = undefined;
        memoryUsed = true;
        continue;
      }
      // Remembered rows folded from the table (another process folded them, or they arrived while
      // this pass read the table) are of no use any more: the next append starts afresh.
      const watermark = readWatermark();
      if (recent !== undefined && watermark >= recent.first) recent = undefined;
      const rememberedNext = !memoryUsed && recent !== undefined && watermark === recent.first - 1;
      if (n < ROLLUP_CHUNK && !rememberedNext) return folded;
      await yieldTurn();
    }
  };

  return {
    noteCommitted(group, ids) {
      try {
        for (let g = 0; g < group.length; g++) {
          const { projectId, visits } = group[g]!;
          const groupIds = ids[g]!;
          for (let i = 0; i < visits.length; i++) {
            const visit = visits[i]!;
            const id = groupIds[i]!;
            if (recent === undefined || id !== recent.last + 1 || recent.fine.size >= MAX_RECENT_CELLS) recent = { first: id, last: id - 1, fine: new Map() };
            addFine(recent.fine, projectId, Math.floor(visit.time), visit.request_path, pathWithoutQuery(visit.request_path), visit.agent_id, visit.agent_type, visit.result, visit.referral, rollupStatus(visit.response_status_code));
            recent.last = id;
          }
        }
      } catch {
        recent = undefined;
      }
    },
    rollUp() {
      rolling ??= runRollUp().finally(() => {
        rolling = undefined;
      });
      return rolling;
    },
    watermark: readWatermark,
  };
}
