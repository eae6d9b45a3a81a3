// Bun.serve with the runtime test app (the fetch middleware, or Hono's): the client address comes from Bun's `server.requestIP`.
import { createApp } from './app.js';

const handler = createApp({ ...JSON.parse(process.env.AGENTWARDEN_TEST_CONFIG), runtime: `bun ${Bun.version}`, flushIntervalMs: 0 });
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: handler });
console.log(`listening on http://127.0.0.1:${server.port}`);
