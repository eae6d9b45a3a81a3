// "Connect your site" on a project's settings page: the example app of the chosen framework (the
// README's snippet, the same file), with this server's URL (in the file too) and the project's token filled in.
// Tokens are stored hashed, so the token itself appears only while it is revealed (just issued);
// otherwise its prefix says which one to paste.
import express from '../../../examples/express/server.mjs?text';
import fastify from '../../../examples/fastify/server.mjs?text';
import hono from '../../../examples/hono/server.mjs?text';
import nextjsEdge from '../../../examples/nextjs-edge/middleware.ts?text';
import nextjs from '../../../examples/nextjs/proxy.ts?text';
import worker from '../../../examples/worker/worker.js?text';
import { copyText, field, h } from '../dom.js';
import { toast } from '../toast.js';

// The package is installed from a tarball packed in a clone (README "Install"), named by npm pack
// after this server's version; the env lines are what the Node examples read at start.
const TARBALL = `/path/to/agentwarden-${__AGENTWARDEN_VERSION__}.tgz`;
const FRAMEWORKS = {
  express: { label: 'Express 5 / Connect / Node http server', install: `npm install ${TARBALL} express@5`, file: 'server.mjs', code: express },
  fastify: { label: 'Fastify 5', install: `npm install ${TARBALL} fastify@5`, file: 'server.mjs', code: fastify },
  hono: { label: 'Hono 4 (Node)', install: `npm install ${TARBALL} hono@4 @hono/node-server@1`, file: 'server.mjs', code: hono },
  worker: { label: 'Cloudflare Worker', install: `npm install ${TARBALL}`, file: 'worker.js', code: worker },
  nextjs: { label: 'Next.js 16 (proxy)', install: `npm install ${TARBALL}`, file: 'proxy.ts', code: nextjs },
  'nextjs-edge': { label: 'Next.js 15 (edge middleware)', install: `npm install ${TARBALL}`, file: 'middleware.ts', code: nextjsEdge },
} as const;

type Framework = keyof typeof FRAMEWORKS;

/** The server URL the examples fall back to (`npm start`'s); the snippet puts this server's in its place. */
const EXAMPLE_SERVER_URL = 'http://127.0.0.1:8080';

/**
 * The section: a framework choice and its snippet. `token` is the full token while it is
 * revealed, else undefined; `tokenPrefix` names the live token to use then.
 */
export function connectSection(serverUrl: string, token: string | undefined, tokenPrefix: string | undefined): HTMLElement {
  const tokenLine = token ?? (tokenPrefix === undefined ? '<issue a token above>' : `<the token starting ${tokenPrefix}>`);
  const snippet = (framework: Framework) => {
    const { install, file, code } = FRAMEWORKS[framework];
    // A Worker reads them from wrangler.toml [vars] and a secret; a Next.js proxy and a Node app from
    // their environment (Next.js also loads .env.local).
    const run =
      framework === 'worker'
        ? `# wrangler.toml: [vars] AGENTWARDEN_URL = "${serverUrl}"\n# npx wrangler secret put AGENTWARDEN_TOKEN, then paste ${tokenLine}`
        : framework === 'nextjs' || framework === 'nextjs-edge'
          ? `# save the file below as ${file} beside app/, and in .env.local:\nAGENTWARDEN_URL=${serverUrl}\nAGENTWARDEN_TOKEN=${tokenLine}`
          : `# save the file below as ${file}, then:\nAGENTWARDEN_URL=${serverUrl} AGENTWARDEN_TOKEN=${tokenLine} node ${file}`;
    // The file's own fallback and comment name this server too: run without AGENTWARDEN_URL, it still reports here.
    return `# ${install}\n${run}\n\n// ${file}\n${code.replaceAll(EXAMPLE_SERVER_URL, serverUrl)}`;
  };
  const preview = h('pre', { class: 'preview', 'data-testid': 'connect-snippet' }, snippet('express'));
  const choice = h('select', { onchange: () => (preview.textContent = snippet(choice.value as Framework)) }, ...Object.entries(FRAMEWORKS).map(([value, { label }]) => h('option', { value }, label)));
  const copy = h('button', { type: 'button', onclick: async () => toast((await copyText(preview.textContent ?? '', preview)) ? 'Snippet copied.' : 'Select the snippet and copy it.') }, 'Copy snippet');
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'connect-title' },
    h('h2', { id: 'connect-title' }, 'Connect your site'),
    h('p', {}, 'Add the middleware to your site: each request is identified and verified there, and its visit is sent here in batches. Deno and Bun: see the README.'),
    field('Framework', choice),
    preview,
    copy,
  );
}
