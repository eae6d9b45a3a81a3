// Calls an API handler as a token-holding client would: JSON in, status and parsed JSON out.
import type { ApiHandler } from '../../src/index.js';

/** A caller of `handle` with a project's bearer token. */
export function apiCaller(handle: ApiHandler, token: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> => {
    const response = await handle({
      method,
      path,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : new TextEncoder().encode(JSON.stringify(body)),
    });
    return { status: response.status, json: JSON.parse(response.body as string) };
  };
}
