// Starts a real dnsmasq on 127.0.0.1 (free high port) serving only the records a test gives it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync } from 'node:fs';
import { Resolver } from 'node:dns/promises';

const DNSMASQ = '/usr/sbin/dnsmasq';

/** Records to serve: PTRs (address -> name) and forward records (name -> addresses, A or AAAA by family). */
export interface DnsRecords {
  readonly ptr?: readonly (readonly [ip: string, hostname: string])[];
  readonly hosts?: readonly (readonly [hostname: string, ...ips: string[]])[];
  /** Domains sent to the (empty) upstream list, so queries under them are answered REFUSED. */
  readonly broken?: readonly string[];
}

/** A running dnsmasq. */
export interface DnsServer {
  /** `127.0.0.1:PORT`, for `createNodeResolver({ servers: [server] })`. */
  readonly address: string;
  stop(): Promise<void>;
}

/** Whether dnsmasq can be used here; in CI its absence is a failure, not a skip. */
export function dnsmasqAvailable(): boolean {
  if (existsSync(DNSMASQ)) return true;
  if (process.env.CI === 'true') throw new Error(`dnsmasq is required in CI but ${DNSMASQ} is missing (.ci/run installs it)`);
  console.warn(`dnsmasq not found at ${DNSMASQ}: skipping real-DNS tests (install dnsmasq to run them)`);
  return false;
}

/** A UDP port on 127.0.0.1 that was free a moment ago. */
export async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** The in-addr.arpa / ip6.arpa name of an address (RFC 1035 §3.5, RFC 3596 §2.5). */
export function reverseName(ip: string): string {
  if (!ip.includes(':')) return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  const [head = '', tail = ''] = ip.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = groups(tail);
  const full = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right].map((g) => g.padStart(4, '0'));
  return `${[...full.join('')].reverse().join('.')}.ip6.arpa`;
}

/**
 * Starts dnsmasq answering only from the given records (`--local=/#/`: NXDOMAIN for anything
 * else, never forwarding), waits until it answers, and returns a handle to stop it.
 */
export async function startDnsmasq(records: DnsRecords): Promise<DnsServer> {
  const port = await freeUdpPort();
  const args = [
    '--no-daemon',
    '--no-resolv',
    '--no-hosts',
    '--conf-file=/dev/null',
    `--port=${port}`,
    '--listen-address=127.0.0.1',
    '--bind-interfaces',
    '--cache-size=0',
    '--local=/#/',
    '--ptr-record=1.0.0.127.in-addr.arpa,ready.test',
    ...(process.getuid?.() === 0 ? ['--user=root', '--group=root'] : []),
    ...(records.ptr ?? []).map(([ip, name]) => `--ptr-record=${reverseName(ip)},${name}`),
    ...(records.hosts ?? []).map(([name, ...ips]) => `--host-record=${name},${ips.join(',')}`),
    // `#` means "the default upstreams", of which there are none (--no-resolv): dnsmasq answers REFUSED.
    ...(records.broken ?? []).map((domain) => `--server=/${domain}/#`),
  ];
  const child: ChildProcess = spawn(DNSMASQ, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  let stopping = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      // A dnsmasq that dies mid-test makes every later query ECONNREFUSED: say why, loudly.
      if (!stopping) console.error(`dnsmasq on 127.0.0.1:${port} exited unexpectedly (code ${code}, signal ${signal}): ${stderr}`);
      resolve();
    }),
  );
  const stop = async () => {
    stopping = true;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };

  const probe = new Resolver({ timeout: 200, tries: 1 });
  probe.setServers([`127.0.0.1:${port}`]);
  for (let attempt = 0; attempt < 50; attempt++) {
    if (child.exitCode !== null) throw new Error(`dnsmasq exited with ${child.exitCode}: ${stderr}`);
    try {
      // A real PTR query: resolver.reverse() would answer 127.0.0.1 from /etc/hosts without
      // asking dnsmasq at all, and the tests would start before the server listens.
      const names = await probe.resolvePtr('1.0.0.127.in-addr.arpa');
      if (names.includes('ready.test')) return { address: `127.0.0.1:${port}`, stop };
      throw new Error(`unexpected readiness answer ${JSON.stringify(names)}`);
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  await stop();
  throw new Error(`dnsmasq did not answer on 127.0.0.1:${port}: ${stderr}`);
}

/** A UDP socket on 127.0.0.1 that receives DNS queries and never answers (a server that times out). */
export async function startBlackHole(): Promise<DnsServer> {
  const socket = createSocket('udp4');
  socket.on('message', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  return {
    address: `127.0.0.1:${socket.address().port}`,
    stop: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
