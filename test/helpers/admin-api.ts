// Calls an in-process API handler as the dashboard would (JSON bodies, parsed JSON answers) and
// opens an admin session with the store's secret, for the admin API tests.
import type { AdminStore } from '../../src/adapters/node/index.js';
import type { ApiHandler } from '../../src/index.js';

/** An answer with its JSON body parsed (undefined for other types). */
export type CallResult = Awaited<ReturnType<ApiHandler>> & { json: any };

/** A function that sends one request to the handler. */
export type ApiCall = (method: string, path: string, options?: { body?: unknown; headers?: Record<string, string> }) => Promise<CallResult>;

const encoder = new TextEncoder();

/** Calls `handle()` (looked up at each call, so tests may replace the handler) from 127.0.0.1. */
export function apiCaller(handle: () => ApiHandler): ApiCall {
  return async (method, path, options = {}) => {
    const response = await handle()({
      method,
      path,
      headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      body: options.body === undefined ? undefined : encoder.encode(JSON.stringify(options.body)),
      remoteAddress: '127.0.0.1',
    });
    return { ...response, json: typeof response.body === 'string' && /json/.test(response.headers['content-type'] ?? '') ? JSON.parse(response.body) : undefined };
  };
}

/** Logs in (creating the admin secret) and returns the session cookie and CSRF header. */
export async function adminSession(admin: AdminStore, call: ApiCall): Promise<{ cookie: string; 'x-csrf-token': string }> {
  const secret = (await admin.ensureSecret())!;
  const response = await call('POST', '/admin/login', { body: { secret } });
  return { cookie: response.headers['set-cookie']!.split(';')[0]!, 'x-csrf-token': response.json.csrf_token as string };
}
