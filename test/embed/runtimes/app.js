// The fetch app the runtime tests run under workerd, Deno and Bun: the built package's fetch
// middleware (`withAgentwarden`), or with `config.framework` 'hono' a Hono app with its middleware
// (`agentwarden/hono`), with IP-range verification, the policy, and an HTTP sink to the test's
// agentwarden server. Everything else (catalog, IP lists, server URL, token) comes from `config`,
// which the test writes.
import { Hono } from 'hono';
import { agentwardenResult, createEngine, createHttpSink, ipRangeVerifier, withAgentwarden } from '../../../dist/index.js';
import { agentwarden } from '../../../dist/hono.js';

export function createApp(config) {
  const ipRanges = ipRangeVerifier({ lists: config.lists });
  // Loopback is never evidence (a site's own network), so the verifier sees the loopback client
  // as the public stand-in the test's lists give Googlebot (see test/embed/fixtures.ts).
  const standIn = (request) => (request.clientIp === '127.0.0.1' ? { headers: request.headers, method: request.method, path: request.path, clientIp: config.loopbackStandIn } : request);
  const verifier = { name: ipRanges.name, appliesTo: (agent, request) => ipRanges.appliesTo(agent, request), verify: (agent, request, context) => ipRanges.verify(agent, standIn(request), context) };
  const engine = createEngine({ catalog: config.catalog, verifiers: [verifier] });
  // Deno and Bun have no waitUntil to flush with: their entries send each visit at once
  // (flushIntervalMs 0); on workerd the default 30 s stands, and ctx.waitUntil delivers.
  const sink = createHttpSink({ url: config.url, token: config.token, flushIntervalMs: config.flushIntervalMs });
  const options = { engine, sink, policy: { denyVerificationFailed: true } };
  const answer = (result, framework) => ({ result: result?.result, clientIp: result?.clientIp, runtime: config.runtime, framework });
  if (config.framework === 'hono') {
    const app = new Hono().use(agentwarden(options));
    app.get('*', (c) => c.json(answer(c.get('agentwarden'), 'hono')));
    return app.fetch;
  }
  return withAgentwarden((request) => Response.json(answer(agentwardenResult(request), 'fetch')), options);
}
