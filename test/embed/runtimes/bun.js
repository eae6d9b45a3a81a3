// Bun.serve with the runtime test app (the fetch middleware, or Hono's): the client address comes
// from Bun's `server.requestIP`; `/ws` upgrades to a WebSocket as Bun does it, beside the response.
import { upgradeWebSocket, websocket as honoWebsocket } from 'hono/bun';
import { createApp } from './app.js';

const config = { ...JSON.parse(process.env.AGENTWARDEN_TEST_CONFIG), runtime: `bun ${Bun.version}`, flushIntervalMs: 0 };
const handler = createApp(config, {
  upgrade: (request, server) => server.upgrade(request),
  honoRoutes: (app) => app.get('/ws', upgradeWebSocket(() => ({ onOpen: (_event, ws) => ws.send('hi') }))),
});
const websocket = config.framework === 'hono' ? honoWebsocket : { open: (ws) => ws.send('hi'), message() {} };
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: handler, websocket });
console.log(`listening on http://127.0.0.1:${server.port}`);
