// agentwarden/fastify: a Fastify 5 plugin over the core's createAgentwarden (identify + verify
// once, the policy, the visit after the response), applied to every route of the instance.
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import {
  createAgentwarden,
  isAgentwarden,
  lowerCaseHeaderMap,
  originFormPath,
  recordNodeResponse,
  recordsVisits,
  sentHeaders,
  type Agentwarden,
  type AgentwardenOptions,
  type AgentwardenResult,
  type CheckRequest,
  type RequestCheck,
} from '../../index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** What agentwarden learnt of this request (null before its hook ran, and for skipped requests' routes not yet checked). */
    agentwarden: AgentwardenResult | null;
  }
}

/** Options of the plugin: the core's options, or `{ agentwarden }` to share an existing core. */
export type AgentwardenPluginOptions = AgentwardenOptions | { readonly agentwarden: Agentwarden };

/** A request as the core checks it, its client address read only if the core asks (with `trustProxy`, Fastify's request.ip parses X-Forwarded-For). */
class FastifyCheckRequest implements CheckRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: ReadonlyMap<string, string>;
  readonly headerRecord: FastifyRequest['headers'];
  constructor(private readonly request: FastifyRequest) {
    this.method = request.method;
    // The target the client sent: a rewriteUrl hook's result is what Fastify routes, not what was asked.
    this.path = originFormPath(request.originalUrl);
    this.headers = lowerCaseHeaderMap(request.headers);
    this.headerRecord = request.headers;
  }
  get clientIp(): string | undefined {
    return this.request.ip;
  }
  get peer(): string | undefined {
    return this.request.socket.remoteAddress;
  }
}

function answer(request: FastifyRequest, reply: FastifyReply, check: RequestCheck): FastifyReply | undefined {
  const response = check.response;
  if (response === undefined) return undefined;
  reply.code(response.status).headers(response.headers);
  // A HEAD answer without its body: sent as '', Fastify would declare Content-Length: 0, which is
  // not the GET length (RFC 9110 §8.6); sent without a payload, it declares none.
  return request.method === 'HEAD' && response.body === '' ? reply.send() : reply.send(response.body);
}

/** The headers a reply sent: Fastify's own (it writes them to Node as an object), else those of a hijacked reply's head. */
function replyHeaders(reply: FastifyReply) {
  const headers = reply.getHeaders();
  for (const _name in headers) return headers;
  return sentHeaders(reply.raw);
}

/**
 * The plugin. It is not encapsulated (it applies to every route of the instance it is registered
 * on, as `fastify-plugin` would make it). The client address is Fastify's `request.ip`, which
 * honours the instance's `trustProxy`; the `clientIp` option's headers are believed only when that
 * address is one of the rule's proxies (a non-public address by default).
 * The result is on `request.agentwarden`; the visit is recorded when the response has been sent
 * (or the client went away); the sink is closed (flushed) when the instance closes.
 * @example
 * import Fastify from 'fastify';
 * import { createNodeHttpSink } from 'agentwarden/node';
 * import { agentwarden } from 'agentwarden/fastify';
 * const app = Fastify();
 * await app.register(agentwarden, { sink: createNodeHttpSink({ url: 'http://127.0.0.1:8080', token: process.env.AGENTWARDEN_TOKEN! }) });
 * app.get('/', async (request) => request.agentwarden?.result);
 */
export const agentwarden: FastifyPluginCallback<AgentwardenPluginOptions> = Object.assign(
  (fastify: FastifyInstance, options: AgentwardenPluginOptions, done: (error?: Error) => void) => {
    let core: Agentwarden;
    try {
      const shared = (options as { agentwarden?: unknown }).agentwarden;
      core = isAgentwarden(shared) ? shared : createAgentwarden(options as AgentwardenOptions);
    } catch (error) {
      return done(error as Error);
    }
    const watch = recordsVisits(core);
    fastify.decorateRequest('agentwarden', null);
    const respond = (request: FastifyRequest, reply: FastifyReply, next: (error?: Error) => void, check: RequestCheck) => {
      request.agentwarden = check;
      // The visit is recorded on the response's 'close', which follows 'finish' on every response
      // (and comes alone when the client went away), as in the Express adapter. An onResponse hook
      // would have Fastify time every response and add and remove 'finish' and 'error' listeners
      // to run it: a few µs a request on top of this one listener.
      // Without a sink nothing is recorded: no listener.
      if (watch) recordNodeResponse(core, check, request.raw, reply.raw, () => replyHeaders(reply));
      if (answer(request, reply, check) === undefined) next();
    };
    fastify.addHook('onRequest', (request, reply, next) => {
      const checked = core.check(new FastifyCheckRequest(request));
      if (checked instanceof Promise) checked.then((check) => respond(request, reply, next, check), next);
      else respond(request, reply, next, checked);
    });
    fastify.addHook('onClose', (_instance, next) => {
      core.close().then(() => next(), () => next());
    });
    done();
  },
  {
    // fastify-plugin's markers, without the dependency: apply to the parent instance, and a name for errors.
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: 'agentwarden',
  },
);

