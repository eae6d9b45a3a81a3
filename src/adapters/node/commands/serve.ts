// `agentwarden serve`: the reference server. Opens the store (SQLite in the data directory, or a
// shared ClickHouse), creates a first project on an empty one, serves the API and the dashboard on
// node:http and shuts down gracefully.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { openClickHouseVisitStore, type ClickHouseVisitStore } from '../../clickhouse/index.js';
import { createApiHandler, createClientIpRule, createEngine, DEFAULT_EVENT_STREAM_LIMITS, type AdminAuthenticator, type Project } from '../../../index.js';
import { createAdminRoutes, LOGIN_CLIENT_IP_HEADERS } from '../admin-routes.js';
import { openAdminStore, type AdminStore } from '../admin-store.js';
import { webhookUrlProblem } from '../directory-fetcher.js';
import { loadIpRangeLists, outdatedIpRangeLists } from '../ip-ranges-loader.js';
import { createJsonLog } from '../json-log.js';
import { startNodeServer } from '../server.js';
import { hashTokenNode, openSqliteStore, type SqliteStoreOptions } from '../sqlite-store.js';
import { createNodeVerifiers, NODE_VERIFIER_METHODS, type NodeVerifierMethod } from '../verifiers.js';
import { createWebRoutes, DASHBOARD_PATH, findWebDirectory } from '../web-routes.js';
import { createWebhookRoutes } from '../webhook-routes.js';
import { openWebhookStore } from '../webhook-store.js';
import { createNodeAlerts } from '../node-alerts.js';
import type { Command } from './command.js';
import { readStoreChoice, STORE_FLAGS } from './store-flags.js';
import { integerFlag, parseFlags, type FlagSpec } from './flags.js';

// IP lists older than this are named at start: operators publish new prefixes every few weeks.
const IP_LISTS_MAX_AGE_DAYS = 30;

/** The flags of `agentwarden serve`, each with the environment variable it is also read from. */
export const SERVE_FLAGS: Readonly<Record<string, FlagSpec>> = {
  host: { kind: 'string', env: 'AGENTWARDEN_HOST' },
  port: { kind: 'string', env: 'AGENTWARDEN_PORT' },
  'data-dir': { kind: 'string', env: 'AGENTWARDEN_DATA_DIR' },
  'base-path': { kind: 'string', env: 'AGENTWARDEN_BASE_PATH' },
  'rate-limit': { kind: 'string', env: 'AGENTWARDEN_RATE_LIMIT' },
  'rate-burst': { kind: 'string', env: 'AGENTWARDEN_RATE_BURST' },
  'max-body-bytes': { kind: 'string', env: 'AGENTWARDEN_MAX_BODY_BYTES' },
  'max-buffered-body-bytes': { kind: 'string', env: 'AGENTWARDEN_MAX_BUFFERED_BODY_BYTES' },
  'max-buffered-body-bytes-per-project': { kind: 'string', env: 'AGENTWARDEN_MAX_BUFFERED_BODY_BYTES_PER_PROJECT' },
  'max-connections': { kind: 'string', env: 'AGENTWARDEN_MAX_CONNECTIONS' },
  'max-uploads-per-project': { kind: 'string', env: 'AGENTWARDEN_MAX_UPLOADS_PER_PROJECT' },
  'max-items': { kind: 'string', env: 'AGENTWARDEN_MAX_ITEMS' },
  'max-streams': { kind: 'string', env: 'AGENTWARDEN_MAX_STREAMS' },
  'max-streams-per-token': { kind: 'string', env: 'AGENTWARDEN_MAX_STREAMS_PER_TOKEN' },
  'stream-queue-bytes': { kind: 'string', env: 'AGENTWARDEN_STREAM_QUEUE_BYTES' },
  'stream-queue-total-bytes': { kind: 'string', env: 'AGENTWARDEN_STREAM_QUEUE_TOTAL_BYTES' },
  log: { kind: 'string', env: 'AGENTWARDEN_LOG' },
  'log-requests': { kind: 'boolean', env: 'AGENTWARDEN_LOG_REQUESTS' },
  synchronous: { kind: 'string', env: 'AGENTWARDEN_SYNCHRONOUS' },
  catalog: { kind: 'string', env: 'AGENTWARDEN_CATALOG' },
  verifiers: { kind: 'string', env: 'AGENTWARDEN_VERIFIERS' },
  'dns-servers': { kind: 'string', env: 'AGENTWARDEN_DNS_SERVERS' },
  'ip-ranges-dir': { kind: 'string', env: 'AGENTWARDEN_IP_RANGES_DIR' },
  'client-ip-headers': { kind: 'string', env: 'AGENTWARDEN_CLIENT_IP_HEADERS' },
  'trusted-proxies': { kind: 'string', env: 'AGENTWARDEN_TRUSTED_PROXIES' },
  'retention-days': { kind: 'string', env: 'AGENTWARDEN_RETENTION_DAYS' },
  'min-free-disk-bytes': { kind: 'string', env: 'AGENTWARDEN_MIN_FREE_DISK_BYTES' },
  ...STORE_FLAGS,
  'secure-cookies': { kind: 'boolean', env: 'AGENTWARDEN_SECURE_COOKIES' },
  'webhooks-allow-loopback': { kind: 'boolean', env: 'AGENTWARDEN_WEBHOOKS_ALLOW_LOOPBACK' },
};

const USAGE = [
  'Usage: agentwarden serve [options]',
  '',
  'Serves the Known Agents compatible REST API (POST /agent-identifications, /agent-verifications,',
  '/robots-txts, /visits; GET /openapi.json, /healthz, /readyz) with projects, tokens and visits in SQLite, or in',
  'ClickHouse shared by several servers (--store clickhouse).',
  'Read APIs (token or admin session): GET /visits, /visits/stream (Server-Sent Events), /stats,',
  '/stats/top-paths, /robots-violations (CSV with format=csv); GET/PUT /project-settings; POST /test-visits.',
  'On first start with an empty store it creates a project and prints its token once.',
  '',
  'Options (each also read from the environment variable shown):',
  '  --host HOST            AGENTWARDEN_HOST            address to listen on (default 127.0.0.1)',
  '  --port PORT            AGENTWARDEN_PORT            port; 0 picks a free one (default 8080)',
  '  --data-dir DIR         AGENTWARDEN_DATA_DIR        data directory (default ./data-dir); with --store',
  '                                                     clickhouse it holds only this server\'s admin sessions',
  '  --base-path PATH       AGENTWARDEN_BASE_PATH       prefix of every route (default /)',
  '  --rate-limit N         AGENTWARDEN_RATE_LIMIT      requests per second per token; 0 disables (default 1000)',
  '  --rate-burst N         AGENTWARDEN_RATE_BURST      bucket size per token (default 2 x rate limit)',
  '  --max-body-bytes N     AGENTWARDEN_MAX_BODY_BYTES  largest request body (default 1048576)',
  '  --max-buffered-body-bytes N  AGENTWARDEN_MAX_BUFFERED_BODY_BYTES  request bodies held at once across all',
  '                                                     connections; past it 503 with Retry-After (default 67108864)',
  '  --max-buffered-body-bytes-per-project N  AGENTWARDEN_MAX_BUFFERED_BODY_BYTES_PER_PROJECT  of those, one project\'s',
  '                                                     at once; past it 429 for that project only (default half the cap)',
  '  --max-connections N    AGENTWARDEN_MAX_CONNECTIONS  connections open at once (default 1024); at the cap a new one',
  '                                                     replaces the oldest idle for 1 s, else it is dropped',
  '  --max-uploads-per-project N  AGENTWARDEN_MAX_UPLOADS_PER_PROJECT  request bodies one project may be sending',
  '                                                     at once; past it 429 for that project (default half the',
  '                                                     connections)',
  '  --max-items N          AGENTWARDEN_MAX_ITEMS       largest array per request (default 1000)',
  '  --max-streams N        AGENTWARDEN_MAX_STREAMS     event streams (GET /visits/stream) open at once; past it 429',
  '                                                     (default 1000)',
  '  --max-streams-per-token N  AGENTWARDEN_MAX_STREAMS_PER_TOKEN  event streams per project token or admin',
  '                                                     session; past it 429 (default 32)',
  '  --stream-queue-bytes N  AGENTWARDEN_STREAM_QUEUE_BYTES  bytes of events a stream keeps for a reader that fell',
  '                                                     behind; past it the stream ends and the client resumes',
  '                                                     with Last-Event-ID (default 16777216)',
  '  --stream-queue-total-bytes N  AGENTWARDEN_STREAM_QUEUE_TOTAL_BYTES  the same over all streams; past it the',
  '                                                     stream keeping the most ends (default 67108864)',
  '  --log json|off         AGENTWARDEN_LOG             JSON lines on stdout: a start-up summary, shutdown and',
  '                                                     transport errors (default json; handler errors go to stderr)',
  '  --log-requests         AGENTWARDEN_LOG_REQUESTS    also one JSON line per request (with --log json)',
  '  --synchronous normal|full  AGENTWARDEN_SYNCHRONOUS  SQLite durability: normal survives a process',
  '                                                     crash, full also power loss (default normal; --store sqlite)',
  '  --catalog FILE         AGENTWARDEN_CATALOG         agent catalog JSON (default: the bundled catalog)',
  '  --verifiers LIST       AGENTWARDEN_VERIFIERS       comma-separated: web-bot-auth, ip-ranges, reverse-dns,',
  '                                                     or none (default: all three, in that order)',
  '  --dns-servers LIST     AGENTWARDEN_DNS_SERVERS     DNS servers for reverse DNS, e.g. 1.1.1.1,127.0.0.1:5353',
  '                                                     (default: the system resolver)',
  '  --ip-ranges-dir DIR    AGENTWARDEN_IP_RANGES_DIR   the operators\' IP lists, as refresh-ip-ranges --dir keeps',
  '                                                     them (default: the bundled data/ip-ranges)',
  '  --client-ip-headers L  AGENTWARDEN_CLIENT_IP_HEADERS  request headers that carry the visitor address, in',
  '                                                     order (default: cf-connecting-ip, true-client-ip,',
  '                                                     x-real-ip, x-forwarded-for, forwarded), or none to',
  '                                                     trust no header; a project\'s settings',
  '                                                     (PUT /project-settings) may override both',
  '  --trusted-proxies N    AGENTWARDEN_TRUSTED_PROXIES  X-Forwarded-For hops appended by the site\'s own proxies',
  '                                                     beyond the first, or a comma-separated CIDR list, in which',
  '                                                     cloudflare stands for Cloudflare\'s published ranges (default 0)',
  '  --retention-days N     AGENTWARDEN_RETENTION_DAYS  days raw visits are kept, 0 keeps everything (default 90);',
  '                                                     SQLite keeps hourly and daily counts forever; ClickHouse',
  '                                                     drops whole months once they end N days ago and keeps',
  '                                                     per-minute counts forever; POST /visits refuses (by index)',
  '                                                     a visit whose created time is older than N days',
  '  --min-free-disk-bytes N  AGENTWARDEN_MIN_FREE_DISK_BYTES  with SQLite, GET /readyz answers 503 while the',
  '                                                     data directory\'s disk has less free (default 67108864; 0: never)',
  '  --store sqlite|clickhouse  AGENTWARDEN_STORE       where projects, tokens and visits live (default sqlite);',
  '                                                     clickhouse lets several servers share one database',
  '  --clickhouse-url URL   AGENTWARDEN_CLICKHOUSE_URL  ClickHouse HTTP interface, e.g. http://user:pass@host:8123;',
  '                                                     with a password, prefer the variable: ps shows arguments',
  '  --clickhouse-database NAME  AGENTWARDEN_CLICKHOUSE_DATABASE  database, created when missing (default agentwarden)',
  '  --secure-cookies       AGENTWARDEN_SECURE_COOKIES  always mark the admin session cookie Secure (behind a TLS',
  '                                                     proxy that sends no X-Forwarded-Proto)',
  '  --webhooks-allow-loopback  AGENTWARDEN_WEBHOOKS_ALLOW_LOOPBACK  also let webhooks reach loopback receivers',
  '                                                     (127.0.0.0/8, ::1, localhost), over http too: for development;',
  '                                                     otherwise webhooks are https to public addresses only',
  '',
  'Dashboard: /ui/ (also reached from /). The admin login secret and sessions are kept in the data',
  'directory, so each server has its own: the secret is printed once when it is created, and',
  '"agentwarden admin reset-password --data-dir DIR" replaces it.',
  '',
  'SIGTERM, SIGINT or SIGHUP: stop accepting, finish in-flight requests, close the store, exit 0.',
].join('\n');

/**
 * Why a --dns-servers list is unusable, if it is: each entry an IP address, with an optional port
 * from 1 to 65535 (`1.1.1.1`, `127.0.0.1:5353`, `[::1]:53`). Port 0 made Node abort.
 */
function dnsServersProblem(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (entries.length === 0) return '--dns-servers must name at least one server, such as 1.1.1.1';
  for (const entry of entries) {
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    const hostAndPort = /^([^:]+):(\d+)$/.exec(entry);
    const [address, port]: [string, string | undefined] =
      bracketed !== null ? [bracketed[1]!, bracketed[2]] : isIP(entry) === 0 && hostAndPort !== null ? [hostAndPort[1]!, hostAndPort[2]] : [entry, undefined];
    if (isIP(address) === 0) return `--dns-servers: ${JSON.stringify(entry)} is not an IP address (with an optional :port)`;
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return `--dns-servers: the port of ${JSON.stringify(entry)} must be from 1 to 65535`;
  }
  return undefined;
}

/**
 * Claims a data directory for this server: a second `serve` on it would share its SQLite file but
 * not its live event streams, rate limits or stream caps (a client on one never sees the other's
 * visits). A lock left by a server that died (its process gone) is taken over. Returns why the
 * directory is taken, or the release.
 */
function lockDataDir(dataDir: string): { release(): void } | string {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    // A file of that name, a parent that is a file, no permission: say which option it was.
    return `cannot use --data-dir ${JSON.stringify(dataDir)}: ${(error as Error).message}`;
  }
  const file = join(dataDir, 'serve.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return { release: () => rmSync(file, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return `cannot lock the data directory ${JSON.stringify(dataDir)}: ${(error as Error).message}`;
      const holder = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder)) {
        return `another agentwarden serve (pid ${holder}) uses the data directory ${JSON.stringify(dataDir)}; one server per data directory (several servers share a ClickHouse store: --store clickhouse)`;
      }
      rmSync(file, { force: true });
    }
  }
  return `cannot lock the data directory ${JSON.stringify(dataDir)}`;
}

/** The SQLite store, the admin store and the webhooks of a data directory; what opened is closed again when a later one fails. */
function openLocalStores(dataDir: string, options: Omit<SqliteStoreOptions, 'dataDir'>) {
  const store = openSqliteStore({ dataDir, ...options });
  let admin: AdminStore | undefined;
  try {
    admin = openAdminStore({ dataDir, findProject: (id) => store.listProjects().find((p) => p.id === id) });
    // Webhooks live beside the admin sessions, in this server's data directory.
    return { store, admin, webhooks: openWebhookStore({ dataDir }) };
  } catch (error) {
    admin?.close();
    store.close();
    throw error;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The admin sessions of this server, finding the projects a session names (`?project=`) in ClickHouse when projects live there. */
function adminAuthenticator(admin: AdminStore, clickhouse: ClickHouseVisitStore | undefined): AdminAuthenticator {
  if (clickhouse === undefined) return admin;
  return { authenticate: (request) => admin.authenticate(request), findProject: (projectId) => clickhouse.findProject(projectId), sessionsVersion: () => admin.sessionsVersion() };
}

/** Where the first project is made (and unmade): the SQLite store's calls are synchronous, ClickHouse's not. */
interface FirstProjectStore {
  listProjects(): readonly FirstProjectInfo[] | Promise<readonly FirstProjectInfo[]>;
  createProject(name: string): FirstProject | Promise<FirstProject>;
  issueToken(projectId: string): { token: string } | Promise<{ token: string }>;
  deleteProject(projectId: string): boolean | Promise<boolean>;
}
interface FirstProjectInfo {
  readonly id: string;
  readonly name: string;
  /** Revoked ones too: a project that never had one was left by a start that failed making it. */
  readonly tokens: readonly unknown[];
}
interface FirstProject {
  readonly id: string;
  readonly name: string;
  readonly token: string;
}

/**
 * Makes what a first start shows once: the first project of an empty store (or a token for it,
 * when an older version's start failed between the project and its token, which ClickHouse
 * writes apart; it now writes the token first), and this
 * server's admin login secret when its data directory has none. Called once the port is held, and
 * nothing that can fail comes between it and printing what it returns. When a step fails, what
 * the start made is undone, so the next start makes and shows it anew; `lines` then holds only
 * what could not be undone, to be shown rather than lost.
 */
async function makeFirstStartSecrets(admin: AdminStore, projects: FirstProjectStore): Promise<{ lines: string[] } | { problem: string; lines: string[] }> {
  const why = (error: unknown) => (error instanceof Error ? error.message : String(error)).replace(/^agentwarden: /, '');
  let projectLine: string | undefined;
  // The project this start created, which it may remove again; not an older one it only gave a
  // token (another server's admin may have set that one up).
  let created: string | undefined;
  try {
    // The project before the secret: with --store clickhouse this is the step a network fault can break.
    const existing = await projects.listProjects();
    if (existing.length === 0) {
      const project = await projects.createProject('default');
      created = project.id;
      projectLine = `agentwarden created project "${project.name}" (${project.id}); its access token, shown only now: ${project.token}\n`;
    } else if (existing.every((project) => project.tokens.length === 0)) {
      const first = existing[0]!;
      const { token } = await projects.issueToken(first.id);
      projectLine = `agentwarden project "${first.name}" (${first.id}) had no access token (a start failed while creating it); its access token, shown only now: ${token}\n`;
    }
  } catch (error) {
    return { problem: `cannot create the first project: ${why(error)}; no secret was shown, and the next start that succeeds makes and shows them`, lines: [] };
  }
  let adminSecret: string | undefined;
  try {
    adminSecret = await admin.ensureSecret();
  } catch (error) {
    const problem = `cannot create the admin login secret: ${why(error)}`;
    if (projectLine === undefined) return { problem: `${problem}; the next start that succeeds makes and shows it`, lines: [] };
    // Nobody could have used a project made a moment ago: its one token and the admin secret are both unseen.
    try {
      if (created !== undefined) {
        await projects.deleteProject(created);
        return { problem: `${problem}; the first project was removed again, and the next start that succeeds makes both and shows them`, lines: [] };
      }
    } catch {
      // Not removed: its token is shown rather than lost.
    }
    return { problem: `${problem}; the first project's new token is printed all the same and stays valid; the next start that succeeds makes and shows the secret`, lines: [projectLine] };
  }
  return { lines: [...(adminSecret === undefined ? [] : [`agentwarden admin login secret, shown only now: ${adminSecret}\n`]), ...(projectLine === undefined ? [] : [projectLine])] };
}

/** `agentwarden serve`: the reference server (API, dashboard, store). */
export const serveCommand: Command = {
  name: 'serve',
  summary: 'Run the REST API server (Known Agents compatible) and dashboard over SQLite or ClickHouse',
  usage: USAGE,
  async run(args, io) {
    const fail = (message: string) => {
      io.stderr.write(`agentwarden serve: ${message}\n\n${USAGE}\n`);
      return 2;
    };
    // What a file says (the catalog, an IP list) or an option's value the engine refuses: the
    // message alone, which the usage text (some 60 lines) would push off the screen.
    const refuse = (message: string) => {
      io.stderr.write(`agentwarden serve: ${message}\n(agentwarden serve --help lists the options)\n`);
      return 2;
    };
    const parsed = parseFlags(args, SERVE_FLAGS, io.env);
    if (typeof parsed === 'string') return fail(parsed);
    if (parsed.positionals.length > 0) return fail(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
    const v = parsed.values;
    const port = integerFlag('port', v['port'], 8080, 0, 65535);
    const rate = integerFlag('rate-limit', v['rate-limit'], 1000, 0, 1e9);
    const maxBodyBytes = integerFlag('max-body-bytes', v['max-body-bytes'], 1024 * 1024, 1, 1024 * 1024 * 1024);
    const maxItems = integerFlag('max-items', v['max-items'], 1000, 1, 1e6);
    const maxStreams = integerFlag('max-streams', v['max-streams'], DEFAULT_EVENT_STREAM_LIMITS.maxStreams, 1, 1e6);
    const maxStreamsPerToken = integerFlag('max-streams-per-token', v['max-streams-per-token'], DEFAULT_EVENT_STREAM_LIMITS.maxStreamsPerToken, 1, 1e6);
    const streamQueueBytes = integerFlag('stream-queue-bytes', v['stream-queue-bytes'], DEFAULT_EVENT_STREAM_LIMITS.maxQueuedBytes, 1, 1024 * 1024 * 1024);
    const streamQueueTotalBytes = integerFlag('stream-queue-total-bytes', v['stream-queue-total-bytes'], DEFAULT_EVENT_STREAM_LIMITS.maxQueuedBytesTotal, 1, 64 * 1024 * 1024 * 1024);
    const maxBufferedBodyBytes = integerFlag('max-buffered-body-bytes', v['max-buffered-body-bytes'], 64 * 1024 * 1024, 1, 2 ** 40);
    const maxConnections = integerFlag('max-connections', v['max-connections'], 1024, 1, 1e6);
    // Unset: the server's default (half the cap, and at least one largest body).
    const perProjectFlag = v['max-buffered-body-bytes-per-project'];
    const maxBufferedBodyBytesPerProject = perProjectFlag === undefined ? undefined : integerFlag('max-buffered-body-bytes-per-project', perProjectFlag, 0, 1, 2 ** 40);
    // Unset: the server's default (half the connections).
    const uploadsFlag = v['max-uploads-per-project'];
    const maxUploadsPerProject = uploadsFlag === undefined ? undefined : integerFlag('max-uploads-per-project', uploadsFlag, 0, 1, 1e6);
    for (const value of [port, rate, maxBodyBytes, maxItems, maxStreams, maxStreamsPerToken, streamQueueBytes, streamQueueTotalBytes, maxBufferedBodyBytes, maxConnections, maxBufferedBodyBytesPerProject, maxUploadsPerProject]) {
      if (typeof value === 'string') return fail(value);
    }
    if (maxBufferedBodyBytesPerProject !== undefined && (maxBufferedBodyBytesPerProject as number) > (maxBufferedBodyBytes as number)) {
      return fail(`--max-buffered-body-bytes-per-project must be at most --max-buffered-body-bytes (${maxBufferedBodyBytes as number}), got ${maxBufferedBodyBytesPerProject as number}`);
    }
    if (maxUploadsPerProject !== undefined && (maxUploadsPerProject as number) > (maxConnections as number)) {
      return fail(`--max-uploads-per-project must be at most --max-connections (${maxConnections as number}), got ${maxUploadsPerProject as number}`);
    }
    // A cap below one largest body would refuse every upload, forever (64 meant as MiB, say).
    for (const [name, cap] of [['max-buffered-body-bytes', maxBufferedBodyBytes], ['max-buffered-body-bytes-per-project', maxBufferedBodyBytesPerProject]] as const) {
      if (cap !== undefined && (cap as number) < (maxBodyBytes as number)) return fail(`--${name} must be at least --max-body-bytes (${maxBodyBytes as number}): a smaller cap refuses every request of that size; got ${cap as number}`);
    }
    if (v['data-dir'] === '') return fail('--data-dir must not be empty');
    const host = v['host'];
    // An empty value (a template's --host=${HOST} with HOST unset) would listen on every interface.
    if (host === '') return fail('--host must not be empty: it would listen on every interface; give an address (127.0.0.1, or 0.0.0.0 for all)');
    const basePath = v['base-path'] ?? '/';
    // What clients can reach as it is: no empty, "." or ".." segment (clients normalise them away), no characters they would percent-encode.
    if (!/^\/(?:[A-Za-z0-9_~-][A-Za-z0-9._~-]*\/?)*$/.test(basePath)) {
      return fail(`--base-path must be a path of segments of letters, digits, "-", "_", "~" and inner dots, such as /agentwarden; got ${JSON.stringify(basePath)}`);
    }
    const dnsProblem = dnsServersProblem(v['dns-servers']);
    if (dnsProblem !== undefined) return fail(dnsProblem);
    const burst = integerFlag('rate-burst', v['rate-burst'], Math.max(1, (rate as number) * 2), 1, 2e9);
    if (typeof burst === 'string') return fail(burst);
    const logMode = v['log'] ?? 'json';
    if (logMode !== 'json' && logMode !== 'off') return fail(`--log must be json or off, got ${JSON.stringify(logMode)}`);
    const retentionDays = integerFlag('retention-days', v['retention-days'], 90, 0, 1e6);
    if (typeof retentionDays === 'string') return fail(retentionDays);
    const minFreeDiskBytes = integerFlag('min-free-disk-bytes', v['min-free-disk-bytes'], 64 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER);
    if (typeof minFreeDiskBytes === 'string') return fail(minFreeDiskBytes);
    const synchronous = v['synchronous'] ?? 'normal';
    if (synchronous !== 'normal' && synchronous !== 'full') return fail(`--synchronous must be normal or full, got ${JSON.stringify(synchronous)}`);
    const storeChoice = readStoreChoice(v);
    if (typeof storeChoice === 'string') return fail(storeChoice);

    let catalog: unknown;
    if (v['catalog'] !== undefined) {
      try {
        catalog = JSON.parse(readFileSync(v['catalog'], 'utf8'));
      } catch (error) {
        return refuse(`cannot read --catalog ${JSON.stringify(v['catalog'])}: ${(error as Error).message}`);
      }
    }
    const list = (value: string | undefined) => value?.split(',').map((item) => item.trim()).filter((item) => item !== '');
    const methods = list(v['verifiers']);
    // Only the word "none" turns verification off: an empty list is a slip (--verifiers= with nothing after it).
    if (methods !== undefined && methods.length === 0) return fail('--verifiers must name at least one of web-bot-auth, ip-ranges, reverse-dns, or none');
    const ipRangesDir = v['ip-ranges-dir'] === undefined || v['ip-ranges-dir'] === '' ? undefined : v['ip-ranges-dir'];
    let engine: ReturnType<typeof createEngine>;
    // The same rule picks the address for IP verification and the one stored with each visit.
    let clientIpRule: ReturnType<typeof createClientIpRule>;
    // The login limit's: the site's headers when named, else only those a proxy appends to (createAdminRoutes' clientIp).
    let loginClientIpRule: ReturnType<typeof createClientIpRule>;
    // Read once: for the verifier, and for the start-up warning about lists out of date.
    let ipRangeLists: Record<string, unknown> | undefined;
    try {
      if (methods === undefined || methods.includes('ip-ranges')) ipRangeLists = loadIpRangeLists(ipRangesDir);
    } catch (error) {
      const message = (error as Error).message.replace(/^agentwarden: /, '');
      return refuse(ipRangesDir === undefined ? `the bundled IP lists: ${message}` : `--ip-ranges-dir ${JSON.stringify(ipRangesDir)}: ${message}`);
    }
    try {
      const proxies = list(v['trusted-proxies']);
      const trustedProxies = proxies === undefined ? undefined : proxies.length === 1 && /^\d+$/.test(proxies[0]!) ? Number(proxies[0]) : proxies;
      // "none": trust no header (no proxy in front of the sites, so their clients write them all).
      const named = list(v['client-ip-headers']);
      const headers = named?.length === 1 && named[0] === 'none' ? [] : named;
      // Built before the store opens, so a bad catalog or option fails fast without touching the data directory.
      engine = createEngine({
        ...(catalog === undefined ? {} : { catalog }),
        clientIp: (clientIpRule = createClientIpRule({ ...(headers === undefined ? {} : { headers }), ...(trustedProxies === undefined ? {} : { trustedProxies }) })),
        verifiers: methods?.length === 1 && methods[0] === 'none' ? [] : createNodeVerifiers({ methods: methods as NodeVerifierMethod[] | undefined, dnsServers: list(v['dns-servers']), ...(ipRangeLists === undefined ? {} : { ipRangeLists }) }),
      });
      loginClientIpRule = headers === undefined ? createClientIpRule({ headers: LOGIN_CLIENT_IP_HEADERS, ...(trustedProxies === undefined ? {} : { trustedProxies }) }) : clientIpRule;
    } catch (error) {
      return refuse((error as Error).message);
    }

    const jsonLog = logMode === 'off' ? undefined : createJsonLog(io.stdout);
    const log = jsonLog?.write;
    // Visits past --retention-days leave the timeline for good: say when some did (an upgrade
    // from a version that kept everything deletes a history's raw visits at its first start).
    const retention = {
      deleted: (counts: Record<string, unknown>) => log?.({ time: new Date().toISOString(), level: 'info', msg: 'retention deleted', detail: `raw visits older than ${retentionDays as number} days (their counts stay in the stats)`, ...counts }),
      failed: (error: unknown) => log?.({ time: new Date().toISOString(), level: 'error', msg: 'retention failed', detail: 'retried at the next hourly pass', error: error instanceof Error ? error.message : String(error) }),
    };
    // A migration that reads every visit keeps a large store from starting for a while: say why
    // first, at once (SQLite's holds the event loop, so a queued line would wait for its end).
    const migrating = (store: 'sqlite' | 'clickhouse') => (migration: { readonly from: number; readonly to: number }) => {
      log?.({ time: new Date().toISOString(), level: 'info', msg: 'migrating', store, from: migration.from, to: migration.to, detail: 'the stored visits are brought to this version\'s schema once; on a large store this takes a while (some steps read every visit): let it finish' });
      jsonLog?.flush();
    };
    // With --store clickhouse, projects, tokens and visits live in ClickHouse, shared by every
    // server; the data directory keeps only this server's admin sessions.
    let clickhouse: ClickHouseVisitStore | undefined;
    if (storeChoice.kind === 'clickhouse') {
      try {
        clickhouse = await openClickHouseVisitStore({
          url: storeChoice.url,
          database: storeChoice.database,
          ...((retentionDays as number) > 0 ? { retentionDays: retentionDays as number } : {}),
          onRetention: (outcome) => ('error' in outcome ? retention.failed(outcome.error) : retention.deleted({ months: outcome.droppedMonths })),
          onMigration: migrating('clickhouse'),
        });
      } catch (error) {
        if (error instanceof TypeError || error instanceof RangeError) return fail(error.message.replace(/^url /, '--clickhouse-url '));
        io.stderr.write(`agentwarden serve: cannot open ClickHouse at ${new URL(storeChoice.url).origin}: ${(error as Error).message}\n`);
        return 1;
      }
    }
    const dataDir = v['data-dir'] ?? './data-dir';
    const lock = lockDataDir(dataDir);
    if (typeof lock === 'string') {
      await clickhouse?.close();
      io.stderr.write(`agentwarden serve: ${lock}\n`);
      return 1;
    }
    let local: ReturnType<typeof openLocalStores>;
    try {
      local = openLocalStores(dataDir, {
        synchronous,
        retentionDays,
        minFreeDiskBytes,
        onRetention: (outcome) =>
          'error' in outcome ? retention.failed(outcome.error) : retention.deleted({ visits: outcome.deleted.visits, rollup_rows: outcome.deleted.rollupRows, idempotency_keys: outcome.deleted.idempotencyKeys }),
        onMigration: migrating('sqlite'),
      });
    } catch (error) {
      // A database this code cannot open (a newer schema, a failed migration): the next start must find the directory free.
      lock.release();
      await clickhouse?.close();
      throw error;
    }
    const { store, admin, webhooks } = local;
    const visitStore = clickhouse ?? store;
    const findProject = async (id: string): Promise<Project | undefined> => (clickhouse !== undefined ? clickhouse.findProject(id) : store.listProjects().find((p) => p.id === id));
    const allowLoopbackWebhooks = v['webhooks-allow-loopback'] === 'true';
    const alerts = createNodeAlerts({
      webhooks,
      visits: visitStore,
      settings: clickhouse ?? store,
      catalog: engine.catalog,
      findProject,
      allowLoopback: allowLoopbackWebhooks,
      onError: (error) => log?.({ time: new Date().toISOString(), level: 'error', msg: 'alerts failed', error: error instanceof Error ? error.stack : String(error) }),
    });
    // Stops the readiness watch before the stores close, so their closing is not logged as an outage.
    const readinessWatch = new AbortController();
    try {
      await alerts.start();
      const webDir = findWebDirectory();
      if (webDir === undefined) io.stderr.write('agentwarden serve: the dashboard is not built (run "npm run build"); serving the API only\n');
      // Projects are administered where they live; the sessions stay in this server's data directory.
      const adminRoutes = createAdminRoutes({
        admin,
        projects: clickhouse ?? store,
        visits: visitStore,
        onProjectDeleted: async (id) => {
          webhooks.deleteProject(id);
          await alerts.webhookRemoved(id);
        },
        cookiePath: `${basePath.replace(/\/+$/, '')}/`,
        secureCookies: v['secure-cookies'] === 'true',
        clientIp: loginClientIpRule,
      });
      const handler = createApiHandler({
        engine,
        projects: clickhouse ?? store,
        visits: clickhouse ?? store,
        basePath,
        limits: { maxBodyBytes: maxBodyBytes as number, maxItems: maxItems as number },
        rateLimit: rate === 0 ? false : { ratePerSecond: rate as number, burst },
        hashToken: hashTokenNode,
        // With --store clickhouse, settings are shared by every server like projects and tokens.
        settings: clickhouse ?? store,
        clientIp: clientIpRule,
        eventStream: {
          maxStreams: maxStreams as number,
          maxStreamsPerToken: maxStreamsPerToken as number,
          maxQueuedBytes: streamQueueBytes as number,
          maxQueuedBytesTotal: streamQueueTotalBytes as number,
        },
        admin: adminAuthenticator(admin, clickhouse),
        routes: [
          adminRoutes,
          createWebhookRoutes({ webhooks, alerts, findProject, urlProblem: (url) => webhookUrlProblem(url, { allowLoopback: allowLoopbackWebhooks }) }),
          ...(webDir === undefined ? [] : [createWebRoutes({ dir: webDir, basePath })]),
        ],
        // Asked every 5 s as well, so an outage is logged while no balancer polls GET /readyz.
        watchReadiness: { everyMs: 5000, signal: readinessWatch.signal },
        // Why the store is not ready goes to the log only: it may name hosts and files.
        onReadinessChange(health) {
          const time = new Date().toISOString();
          if (health.status === 'ok') log?.({ time, level: 'info', msg: 'ready again', store: 'ok' });
          else log?.({ time, level: 'warn', msg: 'not ready', store: health.status, detail: health.detail });
        },
        onError(error, request) {
          // Internals go here, never into the response; the request is named by method and path only.
          io.stderr.write(
            `${JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: 'unexpected error', method: request.method, path: request.path.split('?')[0], error: error instanceof Error ? error.stack : String(error) })}\n`,
          );
        },
      });
      const logRequests = v['log-requests'] === 'true';
      let server: Awaited<ReturnType<typeof startNodeServer>>;
      try {
        server = await startNodeServer({
          handler,
          host: host ?? '127.0.0.1',
          port: port as number,
          maxBodyBytes: maxBodyBytes as number,
          maxBufferedBodyBytes: maxBufferedBodyBytes as number,
          ...(maxBufferedBodyBytesPerProject === undefined ? {} : { maxBufferedBodyBytesPerProject: maxBufferedBodyBytesPerProject as number }),
          maxConnections: maxConnections as number,
          ...(maxUploadsPerProject === undefined ? {} : { maxUploadsPerProject: maxUploadsPerProject as number }),
          log,
          // Off by default: a line per request (the dashboard polls every few seconds) drowns the errors.
          accessLog: logRequests ? jsonLog?.writeLine : undefined,
        });
      } catch (error) {
        // EADDRINUSE, ENOTFOUND for a mistyped --host: say which options to look at.
        io.stderr.write(`agentwarden serve: cannot listen on --host ${JSON.stringify(host ?? '127.0.0.1')} --port ${port as number}: ${(error as Error).message}\n`);
        return 1;
      }
      // The port is held: only now are the one-time secrets made, so a start that cannot listen
      // (or fails before) makes none, and the next start that does listen makes and prints them.
      const firstStart = await makeFirstStartSecrets(admin, clickhouse ?? store);
      if ('problem' in firstStart) {
        // Whatever could not be undone is shown all the same: stored and unseen, it would be lost.
        for (const line of firstStart.lines) io.stdout.write(line);
        io.stderr.write(`agentwarden serve: ${firstStart.problem}\n`);
        await server.close();
        return 1;
      }
      for (const line of firstStart.lines) io.stdout.write(line);
      const base = basePath.replace(/\/+$/, '');
      // Before the listening line, which tools (and tests) wait for as the sign that all is printed.
      log?.({
        time: new Date().toISOString(),
        level: 'info',
        msg: 'started',
        url: `${server.url}${base}`,
        store: storeChoice.kind,
        verifiers: methods ?? NODE_VERIFIER_METHODS,
        dashboard: webDir !== undefined,
        max_body_bytes: maxBodyBytes,
        max_connections: maxConnections,
        rate_limit: rate,
        retention_days: retentionDays,
        log_requests: logRequests,
      });
      const outdated = ipRangeLists === undefined ? [] : outdatedIpRangeLists(ipRangeLists, Date.now(), IP_LISTS_MAX_AGE_DAYS);
      if (outdated.length > 0) {
        log?.({
          time: new Date().toISOString(),
          level: 'warn',
          msg: 'IP lists out of date',
          detail: `published more than ${IP_LISTS_MAX_AGE_DAYS} days ago: a crawler's newer addresses fail verification until "agentwarden refresh-ip-ranges --dir DIR" runs and serve reads DIR (--ip-ranges-dir DIR; now ${ipRangesDir === undefined ? 'the bundled lists' : `${ipRangesDir}, and the bundled copy of each list it lacks`})`,
          lists: outdated,
        });
      }
      jsonLog?.flush();
      // Before the listening line: a supervisor may send SIGTERM the moment it reads that line,
      // and a signal in between would end the process at once, mid-request.
      const signalled = new Promise<string>((resolve) => {
        // SIGHUP too: a closed terminal or a "reload" habit ends the server gracefully, not mid-request.
        const signals = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
        const stop = (name: string) => {
          for (const other of signals) process.off(other, stop);
          resolve(name);
        };
        for (const name of signals) process.on(name, stop);
      });
      if (webDir !== undefined) io.stdout.write(`agentwarden dashboard: ${server.url}${base}${DASHBOARD_PATH}\n`);
      io.stdout.write(`agentwarden listening on ${server.url}${base}\n`);
      const signal = await signalled;
      log?.({ time: new Date().toISOString(), level: 'info', msg: 'shutting down', signal, in_flight: server.inFlight() });
      await server.close();
      log?.({ time: new Date().toISOString(), level: 'info', msg: 'stopped' });
      return 0;
    } finally {
      lock.release();
      readinessWatch.abort();
      alerts.close();
      webhooks.close();
      admin.close();
      store.close();
      await clickhouse?.close();
      jsonLog?.flush();
    }
  },
};
