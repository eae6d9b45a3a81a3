// The fetch app the runtime tests run under workerd, Deno and Bun: the built package's fetch
// middleware (`withAgentwarden`) with IP-range verification, the policy, and an HTTP sink to the
// test's agentwarden server. Everything else (catalog, IP lists, server URL, token) comes from
// `config`, which the test writes.
import { agentwardenResult, createEngine, createHttpSink, ipRangeVerifier, withAgentwarden } from '../../../dist/index.js';

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
  const app = (request) => {
    const result = agentwardenResult(request);
    return Response.json({ result: result?.result, clientIp: result?.clientIp, runtime: config.runtime });
  };
  return withAgentwarden(app, { engine, sink, policy: { denyVerificationFailed: true } });
}
