// A Hono 4 site on Node (@hono/node-server) that reports its visitors to an agentwarden server and
// refuses spoofed bots. AGENTWARDEN_URL=http://127.0.0.1:8080 AGENTWARDEN_TOKEN=aw_... node server.mjs
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createEngine } from 'agentwarden';
import { createNodeHttpSink, createNodeVerifiers, flushOnExit } from 'agentwarden/node';
import { agentwarden } from 'agentwarden/hono';

const token = process.env.AGENTWARDEN_TOKEN;
if (!token) throw new Error('Set AGENTWARDEN_TOKEN to your agentwarden project token');
const sink = createNodeHttpSink({ url: process.env.AGENTWARDEN_URL ?? 'http://127.0.0.1:8080', token });
flushOnExit(sink); // sends the last batch on SIGTERM, SIGINT and a normal exit

// Web Bot Auth signatures and the operators' published IP ranges ('reverse-dns' asks your resolver
// too). Without verifiers every agent is not_verifiable and denyVerificationFailed never fires.
const engine = createEngine({ verifiers: createNodeVerifiers({ methods: ['web-bot-auth', 'ip-ranges'] }) });

// use() chained to new Hono(): the app's type then has c.get('agentwarden') (TypeScript).
const app = new Hono().use(agentwarden({ engine, sink, policy: { denyVerificationFailed: true } }));
app.get('/', (c) => c.text(`Hello! agentwarden says: ${c.get('agentwarden').result}\n`));

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' }, (info) => {
  console.log(`listening on http://127.0.0.1:${info.port}`);
});
