// Deno.serve with the runtime test app (the fetch middleware, or Hono's): the client address comes from Deno's `info.remoteAddr`.
import { createApp } from './app.js';

const handler = createApp({ ...JSON.parse(Deno.env.get('AGENTWARDEN_TEST_CONFIG')), runtime: `deno ${Deno.version.deno}`, flushIntervalMs: 0 });
Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: ({ port }) => console.log(`listening on http://127.0.0.1:${port}`) }, handler);
