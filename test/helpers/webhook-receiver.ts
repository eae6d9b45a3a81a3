// A real webhook receiver on loopback (node:http): records every request with its raw body and
// answers each with the next status of a script (then 200), and checks signatures independently
// of the library, with node:crypto's createHmac.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface ReceivedWebhook {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Receive time, ms since the epoch. */
  readonly at: number;
}

/** A running receiver. */
export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** Statuses for the next requests, in order (each with an optional Retry-After); 200 after them. */
  script(...answers: (number | { status: number; retryAfter?: string })[]): void;
  /** Resolves once `count` requests have arrived in all. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 with a free port. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const answers: { status: number; retryAfter?: string }[] = [];
  const waiters: (() => void)[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const answer = answers.shift() ?? { status: 200 };
      response.writeHead(answer.status, answer.retryAfter === undefined ? {} : { 'retry-after': answer.retryAfter });
      response.end('ok');
      for (const waiter of waiters.splice(0)) waiter();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/agentwarden`,
    received,
    script(...list) {
      answers.push(...list.map((a) => (typeof a === 'number' ? { status: a } : a)));
    },
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${received.length} of ${count} requests within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
      return received;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Checks an Agentwarden-Signature header as a receiver in another language would: parse
 * `t=...,v1=...`, HMAC-SHA256 of "<t>.<body>" with createHmac, constant-time compare, and the
 * timestamp within `toleranceSeconds` of `now`.
 */
export function independentlyVerified(secret: string, header: string | string[] | undefined, body: string, now = Date.now(), toleranceSeconds = 300): boolean {
  if (typeof header !== 'string') return false;
  const fields = Object.fromEntries(header.split(',').map((part) => part.split('=', 2) as [string, string]));
  const t = Number(fields['t']);
  const v1 = fields['v1'];
  if (!Number.isInteger(t) || v1 === undefined || Math.abs(now / 1000 - t) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  const given = Buffer.from(v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
