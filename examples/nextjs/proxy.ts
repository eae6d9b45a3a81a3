// A Next.js 16 site (proxy.ts beside app/; on Next.js 15, middleware.ts exporting `middleware`)
// that reports its visitors to an agentwarden server, refuses spoofed bots and AI data scrapers,
// and serves the matching /robots.txt; each visit leaves with its request's waitUntil.
// AGENTWARDEN_URL=http://127.0.0.1:8080 AGENTWARDEN_TOKEN=aw_... next start
import { NextResponse, type NextRequest } from 'next/server';
import { agentwardenResult, createEngine, withAgentwarden } from 'agentwarden';
import { createNodeHttpSink, createNodeVerifiers } from 'agentwarden/node';

const token = process.env.AGENTWARDEN_TOKEN;
if (!token) throw new Error('Set AGENTWARDEN_TOKEN to your agentwarden project token');

// The pages see the verdict in a request header that this proxy always sets, so no client can.
function site(request: NextRequest) {
  const headers = new Headers(request.headers);
  headers.set('x-agentwarden-result', agentwardenResult(request)?.result ?? 'unknown_agent');
  return NextResponse.next({ request: { headers } });
}

export const proxy = withAgentwarden(site, {
  // The proxy runs on Node.js (Next.js 16), so the Node verifiers, the bundled IP lists and the
  // Node sink work (each visit is a POST of its own here: node:http costs a third less CPU than fetch).
  engine: createEngine({ verifiers: createNodeVerifiers({ methods: ['web-bot-auth', 'ip-ranges'] }) }),
  sink: createNodeHttpSink({ url: process.env.AGENTWARDEN_URL ?? 'http://127.0.0.1:8080', token }),
  // Next.js gives no client address: on Vercel add clientIp: createClientIpRule({ headers: ['x-real-ip'] }),
  // behind your own proxy name the header it sets (see "Where the client address comes from").
  policy: { denyVerificationFailed: true, denyAgentTypes: ['AI Data Scraper'], robotsTxt: true },
});

// Not for the build's own files (every page load fetches several); /robots.txt stays covered.
export const config = { matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'] };
