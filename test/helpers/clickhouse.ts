// Starts a private ClickHouse server on 127.0.0.1 (free ports, own config and data directory) that a
// test can stop and start again, for the ClickHouse visit store and its outage tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MonthlyCopy } from '../../src/adapters/clickhouse/schema.js';

const CANDIDATES = ['/usr/sbin/clickhouse-server', '/usr/bin/clickhouse-server'];

/** A running (or stopped, restartable) private ClickHouse server. */
export interface ClickHouseServer {
  /** `http://127.0.0.1:PORT`, the HTTP interface the store talks to. */
  readonly url: string;
  readonly httpPort: number;
  readonly dataDir: string;
  /** Whether the process is running now. */
  running(): boolean;
  /** Stops the server: SIGTERM (graceful) by default, SIGKILL to simulate a crash. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts it again on the same ports and data directory and waits until it answers. */
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT: a server that hangs (connections accepted, nothing answered), then wakes. */
  pause(): void;
  resume(): void;
  /** Runs one SQL statement over HTTP and returns the response text. @throws on a non-2xx answer. */
  query(sql: string): Promise<string>;
  /** Stops the server and removes its directory. */
  destroy(): Promise<void>;
}

/** The clickhouse-server binary, or undefined; in CI its absence is a failure, not a skip. */
export function clickhouseBinary(): string | undefined {
  const found = CANDIDATES.find((path) => existsSync(path));
  if (found !== undefined) return found;
  if (process.env.CI === 'true') throw new Error(`clickhouse-server is required in CI but none of ${CANDIDATES.join(', ')} exists (.ci/run installs it)`);
  console.warn('clickhouse-server not found: skipping ClickHouse tests (apt-get install clickhouse-server to run them)');
  return undefined;
}

/** Whether ClickHouse tests can run here. @throws when CI=true and the binary is missing. */
export function clickhouseAvailable(): boolean {
  return clickhouseBinary() !== undefined;
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freeTcpPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

// Only what a test server needs: loopback listeners, UTC, small caches, no interserver port, no
// graphite/metrics, logs in the temp directory. The default user may connect from loopback only.
function configXml(dir: string, httpPort: number, tcpPort: number): string {
  return `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>${dir}/log/server.log</log><errorlog>${dir}/log/error.log</errorlog><console>0</console></logger>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/data/tmp/</tmp_path>
  <user_files_path>${dir}/data/user_files/</user_files_path>
  <format_schema_path>${dir}/data/format_schemas/</format_schema_path>
  <users_config>${dir}/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <keep_alive_timeout>10</keep_alive_timeout>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
  <mlock_executable>false</mlock_executable>
</yandex>
`;
}

const USERS_XML = `<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`;

/**
 * Starts a private ClickHouse on loopback and waits until `SELECT 1` answers over HTTP.
 * @throws when the binary is missing or the server does not come up within 30 s (its error log is quoted).
 */
export async function startClickHouse(): Promise<ClickHouseServer> {
  const binary = clickhouseBinary();
  if (binary === undefined) throw new Error('clickhouse-server is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'aw-clickhouse-'));
  mkdirSync(join(dir, 'log'));
  mkdirSync(join(dir, 'data'));
  const httpPort = await freeTcpPort();
  const tcpPort = await freeTcpPort();
  writeFileSync(join(dir, 'config.xml'), configXml(dir, httpPort, tcpPort));
  writeFileSync(join(dir, 'users.xml'), USERS_XML);
  const url = `http://127.0.0.1:${httpPort}`;

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let output = '';
  const errorLog = () => {
    try {
      return readFileSync(join(dir, 'log', 'error.log'), 'utf8').split('\n').slice(-20).join('\n');
    } catch {
      return '';
    }
  };
  const killOnExit = () => child?.kill('SIGKILL');
  process.once('exit', killOnExit);

  const query = async (sql: string): Promise<string> => {
    const response = await fetch(url, { method: 'POST', body: sql, signal: AbortSignal.timeout(30_000) });
    const text = await response.text();
    if (!response.ok) throw new Error(`ClickHouse answered ${response.status} to ${sql.slice(0, 80)}: ${text}`);
    return text;
  };

  const start = async () => {
    if (child !== undefined) return;
    output = '';
    const process_ = spawn(binary, [`--config-file=${join(dir, 'config.xml')}`], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    process_.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    process_.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child = process_;
    exited = new Promise<void>((resolve) =>
      process_.once('exit', () => {
        if (child === process_) child = undefined;
        resolve();
      }),
    );
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (child !== process_) throw new Error(`clickhouse-server exited at start: ${output}\n${errorLog()}`);
      try {
        const response = await fetch(`${url}/?query=SELECT%201`, { signal: AbortSignal.timeout(1000) });
        if (response.ok && (await response.text()).trim() === '1') return;
      } catch {
        // Not listening yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    process_.kill('SIGKILL');
    await exited;
    throw new Error(`clickhouse-server did not answer on ${url} within 30 s: ${output}\n${errorLog()}`);
  };

  const stop = async (signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM') => {
    const current = child;
    if (current === undefined) return;
    current.kill(signal);
    // A graceful stop waits for running queries; never longer than 15 s, then it is killed.
    const timer = setTimeout(() => current.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };

  await start();
  return {
    url,
    httpPort,
    dataDir: dir,
    running: () => child !== undefined,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    stop,
    start,
    query,
    async destroy() {
      await stop('SIGKILL');
      process.off('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The statements of the schema's first migrations for database `db`, to build an older schema by
 * hand. @throws on a monthly copy, which only the store's migration runner runs.
 */
export function migrationStatements(migrations: readonly (readonly (string | MonthlyCopy)[])[], db: string): string[] {
  return migrations.flat().map((statement) => {
    if (typeof statement !== 'string') throw new Error('a monthly copy: open a store to run it');
    return statement.replaceAll('{db}', db);
  });
}
