// A Hono 4 site on Node (@hono/node-server) that reports its visitors to an agentwarden server and
// refuses spoofed bots. The same middleware runs on Workers, Deno and Bun (see ../worker).
//   AGENTWARDEN_URL=http://127.0.0.1:8080 AGENTWARDEN_TOKEN=aw_... node examples/hono/server.js
// In your own project: npm install agentwarden hono @hono/node-server
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createEngine, createHttpSink } from 'agentwarden';
import { createNodeVerifiers, flushOnExit } from 'agentwarden/node';
import { agentwarden } from 'agentwarden/hono';

const sink = createHttpSink({ url: process.env.AGENTWARDEN_URL ?? 'http://127.0.0.1:8080', token: process.env.AGENTWARDEN_TOKEN });
flushOnExit(sink); // batched visits are delivered on SIGTERM, SIGINT and a normal exit

const app = new Hono();
app.use(
  agentwarden({
    // Verification by the operators' published IP ranges (add 'reverse-dns' to ask your resolver too).
    engine: createEngine({ verifiers: createNodeVerifiers({ methods: ['web-bot-auth', 'ip-ranges'] }) }),
    sink,
    policy: { denyVerificationFailed: true },
  }),
);
app.get('/', (c) => c.text(`Hello! agentwarden says: ${c.get('agentwarden').result}\n`));

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' }, (info) => {
  console.log(`listening on http://127.0.0.1:${info.port}`);
});
