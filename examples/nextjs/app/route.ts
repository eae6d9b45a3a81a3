// The home page, as a route handler: it reads the verdict the proxy put on the request.
import { headers } from 'next/headers';

export async function GET() {
  return new Response(`Hello! agentwarden says: ${(await headers()).get('x-agentwarden-result')}\n`);
}
