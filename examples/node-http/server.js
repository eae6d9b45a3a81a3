// A plain node:http site (no framework) that reports its visitors to an agentwarden server and
// refuses spoofed bots: the Express middleware is a Connect-style (req, res, next) function.
//   AGENTWARDEN_URL=http://127.0.0.1:8080 AGENTWARDEN_TOKEN=aw_... node examples/node-http/server.js
// In your own project: npm install agentwarden
import { createServer } from 'node:http';
import { createEngine, createHttpSink } from 'agentwarden';
import { createNodeVerifiers, flushOnExit } from 'agentwarden/node';
import { agentwarden } from 'agentwarden/express';

const sink = createHttpSink({ url: process.env.AGENTWARDEN_URL ?? 'http://127.0.0.1:8080', token: process.env.AGENTWARDEN_TOKEN });
flushOnExit(sink); // batched visits are delivered on SIGTERM, SIGINT and a normal exit

const middleware = agentwarden({
  // Verification by the operators' published IP ranges (add 'reverse-dns' to ask your resolver too).
  engine: createEngine({ verifiers: createNodeVerifiers({ methods: ['web-bot-auth', 'ip-ranges'] }) }),
  sink,
  policy: { denyVerificationFailed: true },
});

const server = createServer((req, res) => {
  middleware(req, res, (error) => {
    if (error) {
      res.statusCode = 500;
      res.end();
      return;
    }
    res.setHeader('content-type', 'text/plain; charset=utf-8');
    res.end(`Hello! agentwarden says: ${req.agentwarden?.result}\n`);
  });
});
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
