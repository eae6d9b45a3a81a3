// agentwarden/express: the middleware for Express 5, Connect and plain node:http servers, over the
// core's createAgentwarden (identify + verify once, the policy, the visit after the response).
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createAgentwarden,
  isAgentwarden,
  lowerCaseHeaderMap,
  originFormPath,
  recordNodeResponse,
  recordsVisits,
  type Agentwarden,
  type AgentwardenOptions,
  type AgentwardenResult,
  type CheckRequest,
  type RequestCheck,
} from '../../index.js';

declare global {
  // Express's own request type gains the result (typed on `req.agentwarden`).
  namespace Express {
    interface Request {
      /** What agentwarden learnt of this request (set by its middleware). */
      agentwarden?: AgentwardenResult;
    }
  }
}

/** A Connect-style middleware, as Express, Connect and node:http (`middleware(req, res, next)`) call it. */
export type NodeMiddleware = ((req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void) & { readonly agentwarden: Agentwarden };

/** A request as the core checks it, its client address read only if the core asks (Express's req.ip parses X-Forwarded-For per the app's trust proxy setting). */
class NodeCheckRequest implements CheckRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: ReadonlyMap<string, string>;
  readonly headerRecord: IncomingMessage['headers'];
  constructor(private readonly req: IncomingMessage) {
    this.method = req.method ?? 'GET';
    // Express rewrites req.url below a mount point; originalUrl is the path the client asked for.
    this.path = originFormPath((req as { originalUrl?: string }).originalUrl ?? req.url ?? '/');
    this.headers = lowerCaseHeaderMap(req.headers);
    this.headerRecord = req.headers;
  }
  get clientIp(): string | undefined {
    const ip = (this.req as { ip?: unknown }).ip;
    return typeof ip === 'string' ? ip : this.req.socket.remoteAddress;
  }
  get peer(): string | undefined {
    return this.req.socket.remoteAddress;
  }
}

/**
 * The agentwarden middleware. The client address is Express's `req.ip` (which honours the app's
 * `trust proxy` setting), else the socket's; the `clientIp` option's headers are believed only when
 * that address is one of the rule's proxies (a non-public address by default), so a client
 * reaching the site directly cannot name its own. The result is on `req.agentwarden`; a denial
 * or `/robots.txt` is answered here; the visit is recorded when the response has been sent (or
 * the client went away).
 * @throws {TypeError | RangeError} for a bad option (the message names it).
 * @example
 * import express from 'express';
 * import { createNodeHttpSink } from 'agentwarden/node';
 * import { agentwarden } from 'agentwarden/express';
 * const app = express();
 * app.use(agentwarden({ sink: createNodeHttpSink({ url: 'http://127.0.0.1:8080', token: process.env.AGENTWARDEN_TOKEN! }), policy: { denyVerificationFailed: true } }));
 * app.get('/', (req, res) => res.send(req.agentwarden?.result));
 */
export function agentwarden(options: AgentwardenOptions | Agentwarden = {}): NodeMiddleware {
  const core = isAgentwarden(options) ? options : createAgentwarden(options);
  // Without a sink nothing is recorded: no listener on the response.
  const watch = recordsVisits(core);
  const respond = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void, check: RequestCheck) => {
    (req as IncomingMessage & { agentwarden?: AgentwardenResult }).agentwarden = check;
    if (watch) recordNodeResponse(core, check, req, res);
    const answer = check.response;
    if (answer === undefined) return next();
    res.statusCode = answer.status;
    for (const name in answer.headers) res.setHeader(name, answer.headers[name]!);
    res.end(answer.body);
  };
  const middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => {
    const checked = core.check(new NodeCheckRequest(req));
    if (checked instanceof Promise) checked.then((check) => respond(req, res, next, check), next);
    else respond(req, res, next, checked);
  };
  return Object.assign(middleware, { agentwarden: core });
}
