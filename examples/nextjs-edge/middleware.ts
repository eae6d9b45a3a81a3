// A Next.js 15 site on Vercel (middleware.ts beside app/, on the edge runtime; app/route.ts as in
// examples/nextjs) that reports its visitors to an agentwarden server and refuses spoofed bots and
// AI data scrapers. The edge runtime has no Node APIs: the verifiers are the core's, with the IP
// lists imported as JSON, and each visit leaves with its request's waitUntil.
import { NextResponse, type NextRequest } from 'next/server';
import { agentwardenResult, createClientIpRule, createEngine, createHttpSink, ipRangeVerifier, webBotAuthVerifier, withAgentwarden } from 'agentwarden';
import googleCrawlers from 'agentwarden/ip-ranges/google-common-crawlers.json';
import gptbot from 'agentwarden/ip-ranges/openai-gptbot.json';

const token = process.env.AGENTWARDEN_TOKEN;
if (!token) throw new Error('Set AGENTWARDEN_TOKEN to your agentwarden project token');

// The pages see the verdict in a request header that this middleware always sets, so no client can.
function site(request: NextRequest) {
  const headers = new Headers(request.headers);
  headers.set('x-agentwarden-result', agentwardenResult(request)?.result ?? 'unknown_agent');
  return NextResponse.next({ request: { headers } });
}

export const middleware = withAgentwarden(site, {
  // Each list under the file name the catalog's agents give (data/README.md lists them all).
  engine: createEngine({
    verifiers: [webBotAuthVerifier(), ipRangeVerifier({ lists: { 'google-common-crawlers.json': googleCrawlers, 'openai-gptbot.json': gptbot } })],
  }),
  sink: createHttpSink({ url: process.env.AGENTWARDEN_URL ?? 'http://127.0.0.1:8080', token }),
  // Vercel sets (and overwrites) X-Real-IP; behind another host, name the header it sets.
  clientIp: createClientIpRule({ headers: ['x-real-ip'] }),
  policy: { denyVerificationFailed: true, denyAgentTypes: ['AI Data Scraper'], robotsTxt: true },
});

// Not for the build's own files (every page load fetches several); /robots.txt stays covered.
export const config = { matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'] };
