// A Fastify 5 site that reports its visitors to an agentwarden server and refuses spoofed bots.
// AGENTWARDEN_URL=http://127.0.0.1:8080 AGENTWARDEN_TOKEN=aw_... node server.mjs
import Fastify from 'fastify';
import { createEngine } from 'agentwarden';
import { createNodeHttpSink, createNodeVerifiers, flushOnExit } from 'agentwarden/node';
import { agentwarden } from 'agentwarden/fastify';

const token = process.env.AGENTWARDEN_TOKEN;
if (!token) throw new Error('Set AGENTWARDEN_TOKEN to your agentwarden project token');
const sink = createNodeHttpSink({ url: process.env.AGENTWARDEN_URL ?? 'http://127.0.0.1:8080', token });
flushOnExit(sink); // sends the last batch on SIGTERM, SIGINT and a normal exit

// Web Bot Auth signatures and the operators' published IP ranges ('reverse-dns' asks your resolver
// too). Without verifiers every agent is not_verifiable and denyVerificationFailed never fires.
const engine = createEngine({ verifiers: createNodeVerifiers({ methods: ['web-bot-auth', 'ip-ranges'] }) });

const app = Fastify();
await app.register(agentwarden, { engine, sink, policy: { denyVerificationFailed: true } });
app.get('/', async (request) => `Hello! agentwarden says: ${request.agentwarden?.result}\n`);

const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
console.log(`listening on ${address}`);
