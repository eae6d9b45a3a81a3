// An HTTP proxy on 127.0.0.1 in front of a test ClickHouse that can break chosen requests, as a
// connection reset between agentwarden and ClickHouse would: the ClickHouse tests' fault injection.
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';

/** A running proxy; every request is forwarded unless a drop rule takes it. */
export interface ClickHouseProxy {
  /** `http://127.0.0.1:PORT`, to give the store in place of ClickHouse's URL. */
  readonly url: string;
  /**
   * Closes the connection of the next `count` requests whose statement matches, without
   * forwarding them. A statement is the `query` URL parameter (an INSERT's) followed by the body.
   */
  dropNext(matches: (statement: string) => boolean, count?: number): void;
  /**
   * Answers the next `count` requests whose statement matches with a 500 and `text`, as ClickHouse
   * answers an error, without forwarding them.
   */
  failNext(matches: (statement: string) => boolean, text: string, count?: number): void;
  /**
   * Forwards the next request whose statement matches with its body cut after `lines` lines, then
   * ends that connection (FIN), and breaks the client's: an INSERT whose sender died mid-body.
   */
  cutNext(matches: (statement: string) => boolean, lines: number): void;
  /** How many requests a rule has dropped so far. */
  dropped(): number;
  /** Every statement the proxy received so far, forwarded or dropped, in order. */
  statements(): readonly string[];
  close(): Promise<void>;
}

/**
 * Starts a proxy to `upstream` (a ClickHouse HTTP URL) on a free loopback port.
 * @example
 * const proxy = await startClickHouseProxy(clickhouse.url);
 * proxy.dropNext((sql) => sql.startsWith('SELECT project_id, id, visit'));
 */
export async function startClickHouseProxy(upstream: string): Promise<ClickHouseProxy> {
  const target = new URL(upstream);
  const rules: { matches: (statement: string) => boolean; left: number }[] = [];
  const failures: { matches: (statement: string) => boolean; text: string; left: number }[] = [];
  const cuts: { matches: (statement: string) => boolean; lines: number; done: boolean }[] = [];
  let dropped = 0;
  const received: string[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      const statement = `${new URL(incoming.url ?? '/', 'http://proxy').searchParams.get('query') ?? ''}${body.toString('utf8')}`;
      received.push(statement);
      const cut = cuts.find((candidate) => !candidate.done && candidate.matches(statement));
      if (cut !== undefined) {
        cut.done = true;
        let end = 0;
        for (let line = 0; line < cut.lines; line++) end = body.indexOf(0x0a, end) + 1;
        // One chunk announced for the whole body, and only its first lines sent before FIN.
        const upstream = connect(Number(target.port), target.hostname, () => {
          upstream.write(`${incoming.method} ${incoming.url} HTTP/1.1\r\nHost: ${target.host}\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n`);
          upstream.end(body.subarray(0, end));
        });
        upstream.on('error', () => undefined);
        upstream.resume();
        incoming.socket.destroy();
        return;
      }
      const failure = failures.find((candidate) => candidate.left > 0 && candidate.matches(statement));
      if (failure !== undefined) {
        failure.left--;
        outgoing.writeHead(500, { 'content-type': 'text/plain; charset=UTF-8' }).end(failure.text);
        return;
      }
      const rule = rules.find((candidate) => candidate.left > 0 && candidate.matches(statement));
      if (rule !== undefined) {
        rule.left--;
        dropped++;
        incoming.socket.destroy();
        return;
      }
      const headers = { ...incoming.headers, host: target.host, 'content-length': String(body.length) };
      delete headers['transfer-encoding'];
      const forwarded = request({ host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers }, (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      });
      forwarded.on('error', () => incoming.socket.destroy());
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    dropNext(matches, count = 1) {
      rules.push({ matches, left: count });
    },
    cutNext(matches, lines) {
      cuts.push({ matches, lines, done: false });
    },
    failNext(matches, text, count = 1) {
      failures.push({ matches, text, left: count });
    },
    dropped: () => dropped,
    statements: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
