// Shared setup of the server tests: a small fixed catalog, temporary data directories, an
// in-process server on 127.0.0.1 port 0, the CLI as a child process, and a fetch helper.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiHandler, createEngine, type ApiHandlerOptions, type CatalogDocument } from '../../src/index.js';
import { claudebotAgent, googlebotRecord, gptbotAgent } from '../helpers/agents.js';
import {
  createAdminRoutes,
  hashTokenNode,
  openAdminStore,
  openSqliteStore,
  startNodeServer,
  type AdminStore,
  type NodeServer,
  type NodeServerOptions,
  type ScryptCost,
  type SqliteStore,
} from '../../src/adapters/node/index.js';

export const ROOT = join(import.meta.dirname, '..', '..');
export const CLI = join(ROOT, 'dist', 'cli.js');

/** A catalog the tests control, so results do not move when data/agents.json is curated. */
export const TEST_CATALOG: CatalogDocument = {
  version: 1,
  agents: [gptbotAgent, claudebotAgent, googlebotRecord],
};

export { BROWSER_UA, GPTBOT_UA } from '../helpers/agents.js';

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'agentwarden-test-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** An in-process server over a real SQLite store in a temporary directory. */
export interface TestServer {
  readonly url: string;
  /** The data directory of the store (other stores may open it too: the admin's, the CLI's). */
  readonly dir: string;
  readonly store: SqliteStore;
  readonly server: NodeServer;
  readonly logs: Record<string, unknown>[];
  stop(): Promise<void>;
}

/**
 * Starts the API on the node server (127.0.0.1, port 0) with the test catalog and a SQLite store.
 * `overrides` may be a function of the store and its directory, for options built on them (admin
 * routes, a wrapped token lookup).
 */
export async function startTestServer(
  overrides: Partial<ApiHandlerOptions> | ((store: SqliteStore, dir: string) => Partial<ApiHandlerOptions>) = {},
  serverOptions: Partial<Omit<NodeServerOptions, 'handler' | 'port'>> = {},
): Promise<TestServer> {
  const { dir, cleanup } = tempDir();
  const store = openSqliteStore({ dataDir: dir });
  const logs: Record<string, unknown>[] = [];
  const handler = createApiHandler({
    engine: createEngine({ catalog: TEST_CATALOG }),
    projects: store,
    visits: store,
    settings: store,
    hashToken: hashTokenNode,
    rateLimit: false,
    ...(typeof overrides === 'function' ? overrides(store, dir) : overrides),
  });
  // Parsing each access-log line also checks it is valid JSON.
  const server = await startNodeServer({ handler, port: 0, log: (entry) => logs.push(entry), accessLog: (line) => logs.push(JSON.parse(line)), ...serverOptions });
  return {
    url: server.url,
    dir,
    store,
    server,
    logs,
    async stop() {
      await server.close();
      store.close();
      cleanup();
    },
  };
}

/** scrypt at a cost that makes a test login take about a millisecond. */
export const FAST_SCRYPT: ScryptCost = { N: 1024, r: 8, p: 1 };

/** A test server with the dashboard's admin store and routes. */
export interface AdminTestServer extends TestServer {
  readonly admin: AdminStore;
  /** Logs in with the admin secret: the session cookie (`name=value`) and its CSRF token. */
  login(): Promise<{ cookie: string; csrf: string }>;
}

/**
 * Starts `startTestServer` with an admin store in the same data directory (its sessions checked
 * by the API) and the admin routes; `overrides` may replace the API's view of either store, and
 * its routes come after the admin routes.
 */
export async function startAdminTestServer(
  overrides: (store: SqliteStore, dir: string, admin: AdminStore) => Partial<ApiHandlerOptions> = () => ({}),
  serverOptions: Partial<Omit<NodeServerOptions, 'handler' | 'port'>> = {},
): Promise<AdminTestServer> {
  let admin!: AdminStore;
  const started = await startTestServer((store, dir) => {
    admin = openAdminStore({ dataDir: dir, scrypt: FAST_SCRYPT, findProject: (id) => store.listProjects().find((p) => p.id === id) });
    const options = overrides(store, dir, admin);
    return { admin, ...options, routes: [createAdminRoutes({ admin, projects: store, visits: store }), ...(options.routes ?? [])] };
  }, serverOptions);
  const secret = (await admin.ensureSecret())!;
  return {
    ...started,
    admin,
    async login() {
      const response = await post(`${started.url}/admin/login`, undefined, { secret });
      if (response.status !== 200) throw new Error(`login answered ${response.status}: ${response.text}`);
      return { cookie: response.headers.get('set-cookie')!.split(';')[0]!, csrf: response.json.csrf_token };
    },
    async stop() {
      await started.stop();
      admin.close();
    },
  };
}

/** POSTs JSON with a bearer token and returns status, headers and the parsed (or raw) body. */
export async function post(url: string, token: string | undefined, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json: json as any };
}

/** Writes the test catalog into a directory and returns its path (for `serve --catalog`). */
export function writeTestCatalog(dir: string): string {
  const file = join(dir, 'catalog.json');
  writeFileSync(file, JSON.stringify(TEST_CATALOG));
  return file;
}

/** A `serve` child process with everything it printed so far. */
export interface ServeProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: string;
  /** The token printed on first start, if one was. */
  readonly firstToken: string | undefined;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

/** Spawns `node dist/cli.js serve --port 0 ...` and waits for its `listening on` line. */
export async function spawnServe(args: readonly string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { env: { ...process.env, ...env }, stdio: 'pipe' });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start within 15 s\nstdout: ${out}\nstderr: ${err}`)), 15_000);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^agentwarden listening on (http:\/\/\S+)$/m.exec(out);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before listening\nstdout: ${out}\nstderr: ${err}`));
    });
  });
  return {
    child,
    url,
    firstToken: /access token, shown only now: (aw_[A-Za-z0-9_-]+)/.exec(out)?.[1],
    stdout: () => out,
    stderr: () => err,
    exited,
  };
}

/** Runs `node dist/cli.js <args>` to completion. */
export function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Stops `serve` processes still running (SIGTERM) and waits for each to exit: test teardown. */
export async function stopServes(procs: readonly (ServeProcess | undefined)[]): Promise<void> {
  for (const proc of procs) {
    if (proc === undefined || proc.child.exitCode !== null) continue;
    proc.child.kill('SIGTERM');
    await proc.exited;
  }
}

/** A memory figure of a process from Linux's /proc, in kB: VmRSS (resident now) or VmHWM (its peak since the last reset). */
export function processMemoryKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no ${field} in /proc/${pid}/status: this test needs Linux`);
  return Number(match[1]);
}

/** Resets a process's VmHWM (its peak resident memory) to its resident memory now (Linux >= 4.0, proc(5) clear_refs). */
export function resetPeakMemory(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Splits a byte stream of responses into responses (Content-Length or chunked framing). */
export function parseResponses(text: string, bodiless: (index: number) => boolean = () => false): RawResponse[] {
  const responses: RawResponse[] = [];
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end === -1) throw new Error(`incomplete head at ${at}: ${JSON.stringify(text.slice(at))}`);
    const [statusLine, ...lines] = text.slice(at, end).split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine!)?.[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).toLowerCase();
      if (name in headers) throw new Error(`duplicate response header ${name}`);
      headers[name] = line.slice(colon + 1).trim();
    }
    at = end + 4;
    let body = '';
    if (status === 100) {
      responses.push({ status, headers, body });
      continue;
    }
    if (bodiless(responses.length) || status === 204 || status === 304) {
      // no body
    } else if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const lineEnd = text.indexOf('\r\n', at);
        const size = parseInt(text.slice(at, lineEnd), 16);
        at = lineEnd + 2;
        if (size === 0) {
          at += 2;
          break;
        }
        body += text.slice(at, at + size);
        at += size + 2;
      }
    } else {
      const length = Number(headers['content-length']);
      body = text.slice(at, at + length);
      at += length;
    }
    responses.push({ status, headers, body });
  }
  return responses;
}
