// agentwarden/fastify: a Fastify 5 plugin over the core's createAgentwarden (identify + verify
// once, the policy, the visit after the response), applied to every route of the instance.
import type { FastifyInstance, FastifyPluginCallback, FastifyReply } from 'fastify';
import { createAgentwarden, isAgentwarden, lowerCaseHeaderMap, type Agentwarden, type AgentwardenOptions, type AgentwardenResult, type RequestCheck } from '../../index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** What agentwarden learnt of this request (null before its hook ran, and for skipped requests' routes not yet checked). */
    agentwarden: AgentwardenResult | null;
  }
}

/** Options of the plugin: the core's options, or `{ agentwarden }` to share an existing core. */
export type AgentwardenPluginOptions = AgentwardenOptions | { readonly agentwarden: Agentwarden };

function answer(reply: FastifyReply, check: RequestCheck): FastifyReply | undefined {
  const response = check.response;
  if (response === undefined) return undefined;
  return reply.code(response.status).headers(response.headers).send(response.body);
}

/**
 * The plugin. It is not encapsulated (it applies to every route of the instance it is registered
 * on, as `fastify-plugin` would make it). The client address is Fastify's `request.ip`, which
 * honours the instance's `trustProxy`, unless the `clientIp` option's trusted headers give one.
 * The result is on `request.agentwarden`; the visit is recorded in the `onResponse` hook; the
 * sink is closed (flushed) when the instance closes.
 * @example
 * import Fastify from 'fastify';
 * import { createHttpSink } from 'agentwarden';
 * import { agentwarden } from 'agentwarden/fastify';
 * const app = Fastify();
 * await app.register(agentwarden, { sink: createHttpSink({ url: 'http://127.0.0.1:8080', token: process.env.AGENTWARDEN_TOKEN! }) });
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
    fastify.decorateRequest('agentwarden', null);
    fastify.addHook('onRequest', (request, reply, next) => {
      const checked = core.check({ method: request.method, path: request.url, headers: lowerCaseHeaderMap(request.headers), headerRecord: request.headers, clientIp: request.ip });
      const proceed = (check: RequestCheck) => {
        // The check itself is the result on the request: onResponse records it from there.
        request.agentwarden = check;
        if (answer(reply, check) === undefined) next();
      };
      if (checked instanceof Promise) checked.then(proceed, (error: Error) => next(error));
      else proceed(checked);
    });
    fastify.addHook('onResponse', (request, reply, next) => {
      const check = request.agentwarden as RequestCheck | null;
      if (check !== null) core.record(check, { status: reply.statusCode, headers: reply.getHeaders() });
      next();
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

