// "Connect your site" on a project's settings page: the README's middleware snippet for the chosen
// framework, with this server's URL and the project's token filled in. Tokens are stored hashed,
// so the token itself appears only while it is revealed (just issued); otherwise its prefix says
// which one to paste.
import { copyText, field, h } from '../dom.js';
import { toast } from '../toast.js';

/**
 * A Node framework's snippet: the sink, flushed on exit, and the line that adds the middleware.
 * Its text is a template in index.html: Node code, shown and never run here.
 */
const nodeSnippet = (subpath: string, use: string) => () =>
  (document.querySelector<HTMLTemplateElement>('#connect-node-snippet')?.content.textContent ?? '').replace('{{subpath}}', subpath).replace('{{use}}', use);

const FRAMEWORKS = {
  express: {
    label: 'Express 5 / Connect / Node http server',
    install: 'npm install agentwarden express',
    code: nodeSnippet('express', 'app.use(agentwarden({ sink, policy: { denyVerificationFailed: true } }));'),
  },
  fastify: {
    label: 'Fastify 5',
    install: 'npm install agentwarden fastify',
    code: nodeSnippet('fastify', 'await app.register(agentwarden, { sink, policy: { denyVerificationFailed: true } });'),
  },
  hono: {
    label: 'Hono 4 (Node)',
    install: 'npm install agentwarden hono',
    code: nodeSnippet('hono', 'app.use(agentwarden({ sink, policy: { denyVerificationFailed: true } }));'),
  },
  worker: {
    label: 'Cloudflare Worker',
    install: 'npm install agentwarden',
    code: () => `// wrangler.toml [vars] AGENTWARDEN_URL; npx wrangler secret put AGENTWARDEN_TOKEN
import { createHttpSink, withAgentwarden } from 'agentwarden';

let handler;
export default {
  fetch(request, env, ctx) {
    handler ??= withAgentwarden(app, { sink: createHttpSink({ url: env.AGENTWARDEN_URL, token: env.AGENTWARDEN_TOKEN }) });
    return handler(request, env, ctx);
  },
};`,
  },
} as const;

type Framework = keyof typeof FRAMEWORKS;

/**
 * The section: a framework choice and its snippet. `token` is the full token while it is
 * revealed, else undefined; `tokenPrefix` names the live token to use then.
 */
export function connectSection(serverUrl: string, token: string | undefined, tokenPrefix: string | undefined): HTMLElement {
  const tokenLine = token ?? (tokenPrefix === undefined ? '<issue a token above>' : `<the token starting ${tokenPrefix}>`);
  const snippet = (framework: Framework) => {
    const { install, code } = FRAMEWORKS[framework];
    return `# ${install}\nAGENTWARDEN_URL=${serverUrl}\nAGENTWARDEN_TOKEN=${tokenLine}\n\n${code()}\n`;
  };
  const preview = h('pre', { class: 'preview', 'data-testid': 'connect-snippet' }, snippet('express'));
  const choice = h('select', { onchange: () => (preview.textContent = snippet(choice.value as Framework)) }, ...Object.entries(FRAMEWORKS).map(([value, { label }]) => h('option', { value }, label)));
  const copy = h('button', { type: 'button', onclick: async () => toast((await copyText(preview.textContent ?? '', preview)) ? 'Snippet copied.' : 'Select the snippet and copy it.') }, 'Copy snippet');
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'connect-title' },
    h('h2', { id: 'connect-title' }, 'Connect your site'),
    h('p', {}, 'Add the middleware to your site: each request is identified and verified there, and its visit is sent here in batches. Deno, Bun and Next.js: see the README.'),
    field('Framework', choice),
    preview,
    copy,
  );
}
