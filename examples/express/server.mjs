// An Express 5 site that reports its visitors to an agentwarden server and refuses spoofed bots.
// AGENTWARDEN_URL=http://127.0.0.1:8080 AGENTWARDEN_TOKEN=aw_... node server.mjs
import express from 'express';
import { createEngine } from 'agentwarden';
import { createNodeHttpSink, createNodeVerifiers, flushOnExit } from 'agentwarden/node';
import { agentwarden } from 'agentwarden/express';

const token = process.env.AGENTWARDEN_TOKEN;
if (!token) throw new Error('Set AGENTWARDEN_TOKEN to your agentwarden project token');
const sink = createNodeHttpSink({ url: process.env.AGENTWARDEN_URL ?? 'http://127.0.0.1:8080', token });
flushOnExit(sink); // sends the last batch on SIGTERM, SIGINT and a normal exit

// Web Bot Auth signatures and the operators' published IP ranges ('reverse-dns' asks your resolver
// too). Without verifiers every agent is not_verifiable and denyVerificationFailed never fires.
const engine = createEngine({ verifiers: createNodeVerifiers({ methods: ['web-bot-auth', 'ip-ranges'] }) });

const app = express();
app.use(agentwarden({ engine, sink, policy: { denyVerificationFailed: true } }));
app.get('/', (req, res) => {
  res.type('text').send(`Hello! agentwarden says: ${req.agentwarden?.result}\n`);
});

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', (error) => {
  if (error) throw error;
  const address = server.address(); // PORT=0 picks a free port
  console.log(`listening on http://127.0.0.1:${typeof address === 'object' ? address?.port : address}`);
});
