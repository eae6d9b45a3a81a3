// An Express 5 site that reports its visitors to an agentwarden server and refuses spoofed bots.
//   AGENTWARDEN_URL=http://127.0.0.1:8080 AGENTWARDEN_TOKEN=aw_... node examples/express/server.js
// In your own project: npm install agentwarden express
import express from 'express';
import { createEngine, createHttpSink } from 'agentwarden';
import { createNodeVerifiers, flushOnExit } from 'agentwarden/node';
import { agentwarden } from 'agentwarden/express';

const sink = createHttpSink({ url: process.env.AGENTWARDEN_URL ?? 'http://127.0.0.1:8080', token: process.env.AGENTWARDEN_TOKEN });
flushOnExit(sink); // batched visits are delivered on SIGTERM, SIGINT and a normal exit

const app = express();
app.use(
  agentwarden({
    // Verification by the operators' published IP ranges (add 'reverse-dns' to ask your resolver too).
    engine: createEngine({ verifiers: createNodeVerifiers({ methods: ['web-bot-auth', 'ip-ranges'] }) }),
    sink,
    policy: { denyVerificationFailed: true },
  }),
);
app.get('/', (req, res) => {
  res.type('text').send(`Hello! agentwarden says: ${req.agentwarden?.result}\n`);
});

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
