// The endpoints the official WordPress plugin (Known Agents', formerly Dark Visitors') calls besides
// POST /robots-txts, so a WordPress site can report to this server and enforce its rules: its
// batched visit log, gzipped NDJSON posted every 30 s (POST /logs/wordpress), its account probe
// (GET /user), and the User-Agent strings it answers 403 to (POST /user-agent-strings-lists).
// Written from the plugin's wire format (../shared/reference/known-agents-api.md §1.3, §1.6) and
// checked against plugin 1.28.0 (includes/analytics.php, variables.php, blocking.php).
import { readBytesUpTo } from '../bounded-bytes.js';
import { resolveAgentType, type Catalog } from '../catalog/catalog.js';
import type { AgentType } from '../catalog/types.js';
import type { FieldError } from '../field-error.js';
import { createKeyedQueue } from './idempotency.js';
import { tooManyItems } from './items.js';
import { jsonBodyProblem, parseJsonBody, parseJsonText } from './json-body.js';
import type { ApiLimits } from './limits.js';
import { problem, unsupportedMediaType } from './problem.js';
import { headerValue } from './request-headers.js';
import type { RouteTable } from './route.js';
import type { ApiRequest, ApiResponse } from './types.js';
import type { VisitIngest, VisitItems } from './visit-ingest.js';
import type { VisitStore } from '../visits/visit-store.js';
import { JSON_NO_STORE_HEADERS } from './security-headers.js';

/** The most a log may hold once decompressed: the plugin's own cap on its log file (16 MiB). */
export const WORDPRESS_LOG_MAX_BYTES = 16 * 1024 * 1024;
/** The most visits (lines) one log may hold: a busy site's 30 s, with room; bounds the work of one request. */
export const WORDPRESS_LOG_MAX_VISITS = 50_000;

/** Visits of each type read for the User-Agent strings list: the latest, enough for the strings in use. */
const USER_AGENT_LIST_VISITS_PER_TYPE = 1000;

// Media types an NDJSON log may come as: the plugin sends text/plain.
const LOG_MEDIA_TYPES = new Set(['text/plain', 'application/x-ndjson', 'application/jsonl', 'application/jsonlines']);

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
// For a line after the first: a byte order mark there is no mark but a character, as in the whole log.
const strictUtf8KeepingBom = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

type Decompressed = { readonly ok: true; readonly bytes: Uint8Array } | { readonly ok: false; readonly response: ApiResponse };

function tooLarge(): ApiResponse {
  return problem('payload-too-large', `The log is larger than ${WORDPRESS_LOG_MAX_BYTES} bytes once decompressed (the plugin's own cap); send it in parts.`, {
    errors: [{ pointer: '', code: 'max-body-bytes', message: `at most ${WORDPRESS_LOG_MAX_BYTES} bytes decompressed` }],
  });
}

/**
 * A gzip body decompressed, read only up to `maxBytes`: a small body that inflates without end (a
 * "zip bomb") is refused once past it, having cost no more than that.
 */
async function gunzipUpTo(body: Uint8Array, maxBytes: number): Promise<Decompressed> {
  let bytes: Uint8Array | undefined;
  try {
    bytes = await readBytesUpTo(new Blob([body as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('gzip')), maxBytes);
  } catch {
    const message = 'The body is not valid gzip data, or it was cut short (Content-Encoding: gzip).';
    return { ok: false, response: problem('validation-failed', message, { errors: [{ pointer: '', code: 'invalid-gzip', message }] }) };
  }
  return bytes === undefined ? { ok: false, response: tooLarge() } : { ok: true, bytes };
}

/**
 * The lines of a log (a `\r` before the line break dropped), each decoded as strict UTF-8 on its
 * own: a line that is not is undefined, so it alone is refused (a line break never occurs inside
 * a UTF-8 sequence). Nearly every log decodes whole, at once.
 */
function logLines(bytes: Uint8Array): (string | undefined)[] {
  const split = (text: string) => text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  try {
    return split(strictUtf8.decode(bytes));
  } catch {
    const lines: (string | undefined)[] = [];
    for (let start = 0; start <= bytes.length; ) {
      let end = bytes.indexOf(0x0a, start);
      if (end === -1) end = bytes.length;
      try {
        lines.push(...split((start === 0 ? strictUtf8 : strictUtf8KeepingBom).decode(bytes.subarray(start, end))));
      } catch {
        lines.push(undefined);
      }
      start = end + 1;
    }
    return lines;
  }
}

/**
 * NDJSON lines as visit items: one JSON object per non-empty line. A line that is not UTF-8 or
 * not JSON, nests past `maxDepth`, or is past the per-visit size limits is refused by its index
 * (non-empty lines counted from 0) while the other lines are read: the plugin empties its log
 * before it posts it and never reads the answer, so one line past a limit (a visitor's oversized
 * request) must not cost the log's other visits.
 */
function ndjsonVisits(lines: readonly (string | undefined)[], maxDepth: number): VisitItems {
  const items: unknown[] = [];
  const refused = new Map<number, FieldError[]>();
  for (const line of lines) {
    if (line !== undefined && line.trim() === '') continue;
    const index = items.length;
    if (index === WORDPRESS_LOG_MAX_VISITS) {
      return {
        ok: false,
        response: problem('payload-too-large', `The log has more than ${WORDPRESS_LOG_MAX_VISITS} visits; send it in parts.`, { errors: [{ pointer: '', code: 'max-items', message: `at most ${WORDPRESS_LOG_MAX_VISITS} lines` }] }),
      };
    }
    if (line === undefined) {
      items.push(undefined);
      refused.set(index, [{ pointer: `/${index}`, code: 'invalid-utf8', message: 'The line is not valid UTF-8.' }]);
      continue;
    }
    const parsed = parseJsonText(line, maxDepth, 'The line');
    items.push(parsed.ok ? parsed.value : undefined);
    if (!parsed.ok) refused.set(index, [{ pointer: `/${index}`, code: parsed.reason, message: parsed.message }]);
  }
  return { ok: true, single: false, items, refused, rejectOversized: true };
}

/** Reads a WordPress log request's visits: gzipped or not, strict UTF-8, one visit per line. */
async function readLog(request: ApiRequest, gzipped: boolean, maxDepth: number): Promise<VisitItems> {
  const body = request.body;
  if (body === undefined || body.byteLength === 0) {
    const message = 'The request body is empty; expected visits as NDJSON, one per line.';
    return { ok: false, response: problem('validation-failed', message, { errors: [{ pointer: '', code: 'empty', message }] }) };
  }
  let bytes = body;
  if (gzipped) {
    const inflated = await gunzipUpTo(body, WORDPRESS_LOG_MAX_BYTES);
    if (!inflated.ok) return inflated;
    bytes = inflated.bytes;
  } else if (body.byteLength > WORDPRESS_LOG_MAX_BYTES) return { ok: false, response: tooLarge() };
  return ndjsonVisits(logLines(bytes), maxDepth);
}

/** The most logs decompressed and stored at once, over all projects. */
const LOGS_AT_ONCE = 2;

/** Runs tasks with at most `max` under way at once; the others wait their turn, in order. */
function concurrencyLimit(max: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running < max) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      // A finished task hands its place to the next in line, so no newcomer can take it between.
      const next = waiting.shift();
      if (next !== undefined) next();
      else running--;
    }
  };
}

/**
 * The User-Agent strings of a project's latest visits by agents of these types, each a string that
 * names its agent by itself: the plugin blocks a request whose whole User-Agent is in the list, so
 * an agent known by its signature (ChatGPT agent sends Chrome's header) must not put a browser's
 * string there.
 */
async function observedUserAgents(visits: VisitStore, catalog: Catalog, projectId: string, types: readonly AgentType[]): Promise<string[]> {
  const strings = new Set<string>();
  for (const type of types) {
    const latest = await visits.timeline({ projectId, limit: USER_AGENT_LIST_VISITS_PER_TYPE, filter: { agent_type: type } });
    for (const visit of latest) {
      const header = visit.request_headers['user-agent'];
      const userAgent = typeof header === 'string' ? header : undefined;
      if (userAgent === undefined || strings.has(userAgent) || visit.agent_id === null) continue;
      if (catalog.matchUserAgent(userAgent)?.id === visit.agent_id) strings.add(userAgent);
    }
  }
  return [...strings].sort();
}

/**
 * The routes: token auth as for POST /visits. A project's logs are decompressed and stored one at
 * a time, and at most LOGS_AT_ONCE over all projects, so the memory they take at once is that many
 * logs' (WORDPRESS_LOG_MAX_BYTES and its visits each); the others wait their turn, held only as
 * their compressed bodies (the transport's body cap). One project's queue of slow logs delays
 * only its own: another project's log takes the other place.
 */
export function createWordPressRoutes(options: { readonly ingest: VisitIngest; readonly limits: ApiLimits; readonly visits: VisitStore; readonly catalog: Catalog }): RouteTable {
  const { ingest, limits, visits, catalog } = options;
  const oneAtATimePerProject = createKeyedQueue();
  const logsAtOnce = concurrencyLimit(LOGS_AT_ONCE);
  return {
    '/logs/wordpress': {
      POST: {
        auth: 'token',
        json: false,
        run({ request, project }) {
          const type = headerValue(request.headers, 'content-type')?.split(';')[0]!.trim().toLowerCase();
          if (type !== undefined && !LOG_MEDIA_TYPES.has(type)) {
            return unsupportedMediaType('Content-Type', `Send the log as NDJSON, one visit per line, with "Content-Type: text/plain" or "application/x-ndjson"; got ${JSON.stringify(type.slice(0, 64))}.`, 'text/plain, application/x-ndjson');
          }
          const coding = headerValue(request.headers, 'content-encoding')?.trim().toLowerCase();
          const gzipped = coding === 'gzip' || coding === 'x-gzip';
          if (!gzipped && coding !== undefined && coding !== '' && coding !== 'identity') {
            return unsupportedMediaType('Content-Encoding', `Send the log gzip-compressed or as it is; got Content-Encoding ${JSON.stringify(coding.slice(0, 64))}.`, 'gzip, identity');
          }
          return oneAtATimePerProject.run(project!.id, () => logsAtOnce(() => ingest(request, project!.id, (req) => readLog(req, gzipped, limits.maxJsonDepth))));
        },
      },
    },
    '/user': {
      // What the plugin asks before it tracks and blocks: both are allowed; this server has no
      // browser script for it to add.
      GET: {
        auth: 'token',
        json: false,
        run: ({ project }) => ({
          status: 200,
          headers: JSON_NO_STORE_HEADERS,
          body: JSON.stringify({ is_analytics_allowed: true, is_robots_txt_enforcement_allowed: true, analytics_script_tag: '' }),
          projectId: project?.id,
        }),
      },
    },
    '/user-agent-strings-lists': {
      // The plugin's "enforce robots.txt": it answers 403 to a request whose whole User-Agent is in
      // this list, which it fetches once a day. Only strings this project's visits carried are
      // known here, so an agent is blocked from its second visit with a string on.
      POST: {
        auth: 'token',
        json: true,
        async run({ request, project }) {
          const parsed = parseJsonBody(request.body, limits.maxJsonDepth);
          if (!parsed.ok) return jsonBodyProblem(parsed);
          const names = (parsed.value as { agent_types?: unknown } | null)?.agent_types;
          if (!Array.isArray(names) || names.length === 0) {
            return problem('validation-failed', 'agent_types must be a non-empty array of agent types.', { errors: [{ pointer: '/agent_types', code: 'required', message: 'a non-empty array of agent types' }] });
          }
          const tooMany = tooManyItems(names, '/agent_types', limits);
          if (tooMany !== undefined) return tooMany;
          const types = names.map((name) => (typeof name === 'string' ? resolveAgentType(name) : undefined));
          const errors = types.flatMap((type, i) => (type === undefined ? [{ pointer: `/agent_types/${i}`, code: 'enum', message: 'not an agent type' }] : []));
          if (errors.length > 0) return problem('validation-failed', 'agent_types names an unknown agent type; see errors.', { errors });
          const strings = await observedUserAgents(visits, catalog, project!.id, [...new Set(types as AgentType[])]);
          return { status: 200, headers: JSON_NO_STORE_HEADERS, body: JSON.stringify(strings), projectId: project?.id };
        },
      },
    },
  };
}
