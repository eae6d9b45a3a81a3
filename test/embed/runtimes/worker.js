// A Worker with the runtime test app (the fetch middleware, or Hono's): the client address is the CF-Connecting-IP header that
// Cloudflare sets, and each visit is flushed with ctx.waitUntil (with `withoutContext` in the config, the handler is not given ctx).
// `/platform-of-own-request` reports what the middleware reads of a request made inside the Worker, which no Cloudflare edge set headers on.
import { detectPlatform } from '../../../dist/index.js';
import { createApp } from './app.js';

let handler;
export default {
  fetch(request, env, ctx) {
    const config = { ...JSON.parse(env.AGENTWARDEN_TEST_CONFIG), runtime: `workerd ${navigator.userAgent}` };
    if (new URL(request.url).pathname === '/platform-of-own-request') return Response.json(detectPlatform(new Request(request.url, { headers: request.headers }), []));
    handler ??= createApp(config);
    return config.withoutContext ? handler(request, env) : handler(request, env, ctx);
  },
};
