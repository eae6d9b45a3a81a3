// A Worker with the runtime test app (the fetch middleware, or Hono's): the client address is the CF-Connecting-IP header that
// Cloudflare sets, and each visit is flushed with ctx.waitUntil.
import { createApp } from './app.js';

let handler;
export default {
  fetch(request, env, ctx) {
    handler ??= createApp({ ...JSON.parse(env.AGENTWARDEN_TEST_CONFIG), runtime: `workerd ${navigator.userAgent}` });
    return handler(request, env, ctx);
  },
};
