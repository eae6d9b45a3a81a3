// A Cloudflare Worker that reports its visitors to an agentwarden server, keeps AI data scrapers
// out and serves the matching /robots.txt. Visits are sent with ctx.waitUntil after each response.
// wrangler.toml: main = "worker.js", [vars] AGENTWARDEN_URL = "https://agentwarden.example.com";
// the token as a secret: npx wrangler secret put AGENTWARDEN_TOKEN
// In your own project: npm install agentwarden
import { agentwardenResult, createHttpSink, withAgentwarden } from 'agentwarden';

function site(request) {
  return new Response(`Hello! agentwarden says: ${agentwardenResult(request)?.result}\n`);
}

let handler; // built on the first request: a Worker's configuration arrives with it, in env
export default {
  fetch(request, env, ctx) {
    handler ??= withAgentwarden(site, {
      sink: createHttpSink({ url: env.AGENTWARDEN_URL, token: env.AGENTWARDEN_TOKEN }),
      policy: { denyAgentTypes: ['AI Data Scraper'], robotsTxt: true },
    });
    return handler(request, env, ctx);
  },
};
