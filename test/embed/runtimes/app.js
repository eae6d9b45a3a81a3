// The fetch app the runtime tests run under workerd, Deno and Bun: the built package's fetch
// middleware (`withAgentwarden`), or with `config.framework` 'hono' a Hono app with its middleware
// (`agentwarden/hono`), with IP-range verification, the policy, and an HTTP sink to the test's
// agentwarden server. Everything else (catalog, IP lists, server URL, token) comes from `config`,
// which the test writes. Besides `/page`, routes for the platform's edge cases: a streamed body
// (`/stream?ms=`), a slow answer (`/slow?ms=`), no answer (`/nothing`), a throw that is not an
// Error (`/throw-string`), and with `extras.upgrade` a WebSocket upgrade (`/ws`, Bun's own way).
import { Hono } from 'hono';
import { agentwardenResult, createEngine, createHttpSink, ipRangeVerifier, withAgentwarden } from '../../../dist/index.js';
import { agentwarden } from '../../../dist/hono.js';

const encoder = new TextEncoder();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const milliseconds = (request) => Number(new URL(request.url).searchParams.get('ms') ?? 0);

/** A body of one chunk every 100 ms for `ms`. */
function streamed(ms) {
  const started = Date.now();
  return new Response(
    new ReadableStream({
      async pull(controller) {
        await sleep(100);
        if (Date.now() - started >= ms) controller.close();
        else controller.enqueue(encoder.encode('chunk\n'));
      },
    }),
  );
}

/**
 * @param config the test's settings
 * @param extras `upgrade(request, ...args)` for `/ws` with the fetch middleware (answers nothing
 *   once upgraded, as Bun's server.upgrade wants), `honoRoutes(app)` to add Hono routes
 */
export function createApp(config, extras = {}) {
  const ipRanges = ipRangeVerifier({ lists: config.lists });
  // Loopback is never evidence (a site's own network), so the verifier sees the loopback client
  // as the public stand-in the test's lists give Googlebot (see test/embed/fixtures.ts).
  const standIn = (request) => (request.clientIp === '127.0.0.1' ? { headers: request.headers, method: request.method, path: request.path, clientIp: config.loopbackStandIn } : request);
  const verifier = { name: ipRanges.name, appliesTo: (agent, request) => ipRanges.appliesTo(agent, request), verify: (agent, request, context) => ipRanges.verify(agent, standIn(request), context) };
  const engine = createEngine({ catalog: config.catalog, verifiers: [verifier] });
  // Deno and Bun have no waitUntil to flush with: their entries send each visit at once
  // (flushIntervalMs 0); on workerd the default 30 s stands, and ctx.waitUntil delivers.
  const sink = createHttpSink({ url: config.url, token: config.token, flushIntervalMs: config.flushIntervalMs });
  const policy = { denyVerificationFailed: true, ...(config.robotsUrl === undefined ? {} : { robotsTxt: { url: config.robotsUrl, token: config.token, agentTypes: ['AI Data Scraper'], refreshMs: 1000 } }) };
  const options = { engine, sink, policy };
  const answer = (result, framework) => ({ result: result?.result, clientIp: result?.clientIp, runtime: config.runtime, framework });
  if (config.framework === 'hono') {
    const app = new Hono().use(agentwarden(options));
    extras.honoRoutes?.(app);
    app.get('/stream', (c) => streamed(milliseconds(c.req.raw)));
    app.get('/slow', async (c) => (await sleep(milliseconds(c.req.raw)), c.text('late\n')));
    app.get('/nothing', () => undefined);
    app.get('/throw-string', () => {
      throw 'a string';
    });
    app.get('*', (c) => c.json(answer(c.get('agentwarden'), 'hono')));
    return app.fetch;
  }
  return withAgentwarden(async (request, ...args) => {
    const path = new URL(request.url).pathname;
    if (path === '/ws' && extras.upgrade?.(request, ...args)) return undefined;
    if (path === '/stream') return streamed(milliseconds(request));
    if (path === '/slow') return (await sleep(milliseconds(request)), new Response('late\n'));
    if (path === '/nothing') return undefined;
    if (path === '/throw-string') throw 'a string';
    return Response.json(answer(agentwardenResult(request), 'fetch'));
  }, options);
}
