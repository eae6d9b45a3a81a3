// A Cloudflare Worker (an ES module) that reports its visitors to an agentwarden server, keeps AI
// data scrapers out and serves the matching /robots.txt; each visit leaves with ctx.waitUntil.
// wrangler.toml: main = "worker.js", [vars] AGENTWARDEN_URL = "https://agentwarden.example.com";
// the token as a secret: npx wrangler secret put AGENTWARDEN_TOKEN
import { agentwardenResult, createHttpSink, withAgentwarden } from 'agentwarden';

// The site: a fetch handler, (request, env, ctx) => Response. A Hono app's is app.fetch.
function site(request) {
  return new Response(`Hello! agentwarden says: ${agentwardenResult(request)?.result}\n`);
}

let handler; // built on the first request: a Worker's configuration arrives with it, in env
export default {
  fetch(request, env, ctx) {
    handler ??= withAgentwarden(site, {
      sink: createHttpSink({ url: env.AGENTWARDEN_URL, token: env.AGENTWARDEN_TOKEN }),
      // denyAgentTypes needs no verifier; denyVerificationFailed would (see "Verification").
      policy: { denyAgentTypes: ['AI Data Scraper'], robotsTxt: true },
    });
    return handler(request, env, ctx);
  },
};
