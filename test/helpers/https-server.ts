// A real HTTPS server on loopback with a throwaway self-signed certificate made by the openssl CLI.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A PEM certificate and its private key; the certificate is also its own CA. */
export interface SelfSignedCert {
  readonly cert: string;
  readonly key: string;
}

/** One request the server received. */
export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

/** A running HTTPS test server and what reached it. */
export interface TestHttpsServer {
  readonly host: string;
  readonly port: number;
  /** TCP connections accepted (counted on the server's `connection` event, before TLS). */
  connections(): number;
  /** Requests received, in order. */
  readonly requests: ReceivedRequest[];
  /** `https://<host>:<port><path>` (IPv6 hosts bracketed). */
  url(path: string): string;
  close(): Promise<void>;
}

/**
 * True when the openssl CLI runs. When it is missing and CI=true this throws, so CI fails
 * loudly instead of skipping the HTTPS tests.
 */
export function opensslAvailable(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    if (process.env.CI === 'true') throw new Error('openssl CLI is required for the HTTPS key-directory tests (CI=true)');
    return false;
  }
}

/** Makes a one-day self-signed P-256 certificate for the given DNS names and IP addresses. */
export function makeSelfSignedCert(dnsNames: readonly string[], ips: readonly string[]): SelfSignedCert {
  const dir = mkdtempSync(join(tmpdir(), 'agentwarden-cert-'));
  try {
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    const san = [...dnsNames.map((n) => `DNS:${n}`), ...ips.map((ip) => `IP:${ip}`)].join(',');
    execFileSync(
      'openssl',
      [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
        '-keyout', keyPath, '-out', certPath, '-days', '1', '-subj', `/CN=${dnsNames[0] ?? ips[0] ?? 'test'}`,
        '-addext', `subjectAltName=${san}`,
      ],
      { stdio: 'ignore' },
    );
    return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts an HTTPS server on `host` (default 127.0.0.1), port 0, answering with `handler`. */
export async function startHttpsServer(
  cert: SelfSignedCert,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  host = '127.0.0.1',
): Promise<TestHttpsServer> {
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // Clients that hang up mid-handshake are expected in these tests.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('server has no port');
  const port = address.port;
  const authority = host.includes(':') ? `[${host}]` : host;
  return {
    host,
    port,
    connections: () => connections,
    requests,
    url: (path) => `https://${authority}:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
