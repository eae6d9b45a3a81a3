// How a visit lies in a raw row of the SQLite `visits` table: the multi-row INSERT writer, and the
// row read back as a StoredVisit (fields with columns of their own, the rest as JSON in `extras`).
import type BetterSqlite3 from 'better-sqlite3';
import {
  pathWithoutQuery,
  type AgentType,
  type CheckOutcome,
  type EnrichedVisit,
  type IdentificationResult,
  type ReferralClass,
  type StoredVisit,
  type VerificationCheck,
  type VerificationReport,
  type VisitDecision,
} from '../../index.js';
import type { HeaderPairs } from './sqlite-header-pairs.js';

/** A raw row as `SELECT *` reads it. */
export interface VisitRow {
  id: number;
  project_id: string;
  time: number;
  received: number;
  request_method: string;
  request_path: string;
  agent_id: string | null;
  agent_type: string | null;
  result: string;
  client_ip: string | null;
  referral: string | null;
  response_status_code: number | null;
  response_duration_in_milliseconds: number | null;
  created: string | null;
  request_headers: string | null;
  response_headers: string | null;
  client_ip_header: string | null;
  verification: string | null;
  decision: string | null;
  extras: string;
}

// Visits written per INSERT statement: each statement costs a call into SQLite and an update of
// the AUTOINCREMENT counter, which a few rows per statement share (2 us less per visit).
const ROWS_PER_INSERT = 16;

// Visit fields with columns of their own; every other field is kept in `extras` (JSON; '' for none).
const COLUMN_FIELDS = new Set(['request_path', 'request_method', 'received', 'time', 'agent_id', 'agent_type', 'result', 'client_ip', 'referral', 'id', 'project_id']);
// Optional fields with columns of their own (NULL when absent) when their value has the type a
// visit gives them; a value of another type (a library caller's) stays in `extras`, so it reads
// back as it was. Headers are stored as JSON, encoded through the interned pairs when there are some;
// verification checks in a compact text (see encodeVerification).
const OPTIONAL_COLUMNS = ['response_status_code', 'response_duration_in_milliseconds', 'created', 'request_headers', 'response_headers', 'client_ip_header', 'verification', 'decision'] as const;
type OptionalColumn = (typeof OPTIONAL_COLUMNS)[number];
const OPTIONAL_FIELDS: ReadonlySet<string> = new Set(OPTIONAL_COLUMNS);
const HEADER_COLUMNS: ReadonlySet<string> = new Set(['request_headers', 'response_headers']);

const OUTCOME_CODES: Readonly<Record<string, string>> = { pass: 'p', fail: 'f', inconclusive: 'i' };
const OUTCOMES: Readonly<Record<string, CheckOutcome>> = { p: 'pass', f: 'fail', i: 'inconclusive' };
// Method names and reason codes are kebab-case words (custom verifiers may choose others: extras).
const CODE = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Verification checks as `method:outcome:reason` words (outcome p, f or i) joined by spaces:
 * about 30 bytes a check, where JSON in extras takes 60 and the keys of the report. The deciding
 * method is not stored: the chain stops at the first pass or fail, so it is the last check's when
 * that one decided, else none. Undefined for a report this cannot hold exactly (extras keeps it).
 */
export function encodeVerification(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const report = value as { method?: unknown; checks?: unknown };
  if (Object.keys(report).length !== 2 || !Array.isArray(report.checks) || report.checks.length === 0) return undefined;
  const words: string[] = [];
  for (const check of report.checks as unknown[]) {
    if (typeof check !== 'object' || check === null || Object.keys(check).length !== 3) return undefined;
    const { method, outcome, reason } = check as Record<string, unknown>;
    const code = typeof outcome === 'string' ? OUTCOME_CODES[outcome] : undefined;
    if (typeof method !== 'string' || !CODE.test(method) || code === undefined || typeof reason !== 'string' || !CODE.test(reason)) return undefined;
    words.push(`${method}:${code}:${reason}`);
  }
  const last = report.checks[report.checks.length - 1] as VerificationCheck;
  if (report.method !== (last.outcome === 'inconclusive' ? null : last.method)) return undefined;
  return words.join(' ');
}

/** The report `encodeVerification` wrote. */
export function decodeVerification(text: string): VerificationReport {
  const checks = text.split(' ').map((word): VerificationCheck => {
    const [method, code, reason] = word.split(':') as [string, string, string];
    return { method, outcome: OUTCOMES[code]!, reason };
  });
  const last = checks[checks.length - 1]!;
  return { method: last.outcome === 'inconclusive' ? null : last.method, checks };
}

/**
 * A policy decision as `rule action` plus ` report-only` when it was only reported; undefined for
 * a value this cannot hold exactly (extras keeps it).
 */
export function encodeDecision(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Object.keys(value).length !== 3) return undefined;
  const { rule, action, report_only: reportOnly } = value as Record<string, unknown>;
  if (typeof rule !== 'string' || !CODE.test(rule) || (action !== 'allow' && action !== 'deny') || typeof reportOnly !== 'boolean') return undefined;
  return `${rule} ${action}${reportOnly ? ' report-only' : ''}`;
}

/** The decision `encodeDecision` wrote. */
export function decodeDecision(text: string): VisitDecision {
  const [rule, action, reportOnly] = text.split(' ') as [string, 'allow' | 'deny', string | undefined];
  return { rule, action, report_only: reportOnly === 'report-only' };
}

/** The column value of an optional field, or undefined when its value belongs in extras. */
function optionalColumnValue(field: string, value: unknown, pairs: HeaderPairs | undefined): number | string | undefined {
  if (field === 'created' || field === 'client_ip_header') return typeof value === 'string' ? value : undefined;
  if (field === 'verification') return encodeVerification(value);
  if (field === 'decision') return encodeDecision(value);
  if (HEADER_COLUMNS.has(field)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    return JSON.stringify(pairs === undefined ? value : pairs.encode(value as Record<string, string>));
  }
  return typeof value === 'number' ? value : undefined;
}

/** The columns of `visits` the writer fills and reads take back. */
export const VISIT_ROW_COLUMNS: readonly string[] = ['id', 'project_id', 'time', 'received', 'request_method', 'request_path', 'path', 'agent_id', 'agent_type', 'result', 'client_ip', 'referral', ...OPTIONAL_COLUMNS, 'extras'];

/** Writes raw visit rows; see `createVisitRowWriter`. */
export interface VisitRowWriter {
  /** Stores the visits (in order; `id` only when migrating, for every visit) and returns their ids. */
  write(batch: readonly { projectId: string; visit: EnrichedVisit; id?: number }[]): number[];
}

/**
 * Inserts visits (raw rows only: the rollup pass counts them later); runs inside the caller's
 * transaction. With `pairs`, headers are stored encoded; the caller reports the commit to it.
 */
export function createVisitRowWriter(db: BetterSqlite3.Database, pairs?: HeaderPairs): VisitRowWriter {
  const columns = VISIT_ROW_COLUMNS.join(', ');
  const row = `(${columns.split(', ').map(() => '?').join(', ')})`;
  // One INSERT per ROWS_PER_INSERT visits, by the number of rows it takes (prepared when first needed).
  const inserts = new Map<number, BetterSqlite3.Statement>();
  const insertOf = (rows: number) => {
    let statement = inserts.get(rows);
    if (statement === undefined) inserts.set(rows, (statement = db.prepare(`INSERT INTO visits (${columns}) VALUES ${Array.from({ length: rows }, () => row).join(', ')}`)));
    return statement;
  };
  return {
    write(batch) {
      const ids: number[] = new Array(batch.length);
      const params: unknown[] = [];
      const explicit = batch.length > 0 && batch[0]!.id !== undefined;
      let first = 0;
      for (let i = 0; i < batch.length; i++) {
        const { projectId, visit, id } = batch[i]!;
        const { request_path, request_method, received, time, agent_id, agent_type, result, client_ip, referral } = visit;
        // A loop, not rest/spread syntax: on Node 20 spreading a visit object costs microseconds.
        const optional: Partial<Record<OptionalColumn, number | string>> = {};
        let extras: Record<string, unknown> | undefined;
        for (const field in visit) {
          if (COLUMN_FIELDS.has(field)) continue;
          const value = visit[field as keyof EnrichedVisit];
          const column = OPTIONAL_FIELDS.has(field) ? optionalColumnValue(field, value, pairs) : undefined;
          if (column !== undefined) optional[field as OptionalColumn] = column;
          else if (value !== undefined) (extras ??= {})[field] = value;
        }
        // The minute index divides integers (an enricher's times are whole milliseconds already).
        params.push(
          id ?? null,
          projectId,
          Math.floor(time),
          received,
          request_method,
          request_path,
          pathWithoutQuery(request_path),
          agent_id,
          agent_type,
          result,
          client_ip,
          referral,
          optional.response_status_code ?? null,
          optional.response_duration_in_milliseconds ?? null,
          optional.created ?? null,
          optional.request_headers ?? null,
          optional.response_headers ?? null,
          optional.client_ip_header ?? null,
          optional.verification ?? null,
          optional.decision ?? null,
          extras === undefined ? '' : JSON.stringify(extras),
        );
        const rows = i - first + 1;
        if (rows < ROWS_PER_INSERT && i < batch.length - 1) continue;
        const last = Number(insertOf(rows).run(params).lastInsertRowid);
        // One statement's rows take consecutive ids (AUTOINCREMENT, and this transaction is the only writer).
        for (let k = 0; k < rows; k++) ids[first + k] = explicit ? batch[first + k]!.id! : last - rows + 1 + k;
        params.length = 0;
        first = i + 1;
      }
      return ids;
    },
  };
}

/** The stored form of an appended visit: a copy with its id and project. */
export function storedVisit(visit: EnrichedVisit, id: number, projectId: string): StoredVisit {
  // Object.assign of the visit alone, then the new fields: as in enrich.ts, the fast copy on Node 20.
  const stored = Object.assign({}, visit) as unknown as Record<string, unknown>;
  stored['id'] = String(id);
  stored['project_id'] = projectId;
  return stored as unknown as StoredVisit;
}

/** A raw row read back as the visit it stored (headers decoded through the interned pairs). */
export function toStoredVisit(row: VisitRow, pairs: HeaderPairs): StoredVisit {
  const extras = (row.extras === '' ? {} : JSON.parse(row.extras)) as Record<string, unknown>;
  for (const field of OPTIONAL_COLUMNS) {
    const value = row[field];
    if (value === null) continue;
    if (field === 'verification') extras[field] = decodeVerification(value as string);
    else if (field === 'decision') extras[field] = decodeDecision(value as string);
    else if (!HEADER_COLUMNS.has(field)) extras[field] = value;
    else {
      const headers = JSON.parse(value as string) as unknown;
      extras[field] = Array.isArray(headers) ? pairs.decode(headers) : headers;
    }
  }
  return Object.assign(extras, {
    request_path: row.request_path,
    request_method: row.request_method,
    received: row.received,
    time: row.time,
    agent_id: row.agent_id,
    agent_type: row.agent_type as AgentType | null,
    result: row.result as IdentificationResult,
    client_ip: row.client_ip,
    referral: row.referral as ReferralClass | null,
    id: String(row.id),
    project_id: row.project_id,
  }) as unknown as StoredVisit;
}
