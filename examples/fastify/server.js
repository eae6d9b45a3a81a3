// A Fastify 5 site that reports its visitors to an agentwarden server and refuses spoofed bots.
//   AGENTWARDEN_URL=http://127.0.0.1:8080 AGENTWARDEN_TOKEN=aw_... node examples/fastify/server.js
// In your own project: npm install agentwarden fastify
import Fastify from 'fastify';
import { createEngine, createHttpSink } from 'agentwarden';
import { createNodeVerifiers, flushOnExit } from 'agentwarden/node';
import { agentwarden } from 'agentwarden/fastify';

const sink = createHttpSink({ url: process.env.AGENTWARDEN_URL ?? 'http://127.0.0.1:8080', token: process.env.AGENTWARDEN_TOKEN });
flushOnExit(sink); // batched visits are delivered on SIGTERM, SIGINT and a normal exit

const app = Fastify();
await app.register(agentwarden, {
  // Verification by the operators' published IP ranges (add 'reverse-dns' to ask your resolver too).
  engine: createEngine({ verifiers: createNodeVerifiers({ methods: ['web-bot-auth', 'ip-ranges'] }) }),
  sink,
  policy: { denyVerificationFailed: true },
});
app.get('/', async (request) => `Hello! agentwarden says: ${request.agentwarden?.result}\n`);

const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
console.log(`listening on ${address}`);
