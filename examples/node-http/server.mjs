// A plain node:http site (no framework) that reports its visitors to an agentwarden server and
// refuses spoofed bots: the Express middleware is a Connect-style (req, res, next) function.
// AGENTWARDEN_URL=http://127.0.0.1:8080 AGENTWARDEN_TOKEN=aw_... node server.mjs
import { createServer } from 'node:http';
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
const middleware = agentwarden({ engine, sink, policy: { denyVerificationFailed: true } });

const server = createServer((req, res) => {
  middleware(req, res, (error) => {
    if (error) {
      res.statusCode = 500;
      res.end();
      return;
    }
    // The result is on req.agentwarden (typed on Express's Request only).
    res.setHeader('content-type', 'text/plain; charset=utf-8');
    res.end(`Hello! agentwarden says: ${req.agentwarden?.result}\n`);
  });
});
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
