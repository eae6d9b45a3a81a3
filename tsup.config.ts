// Build: ESM + CJS + declarations for the core ("."), the node adapter ("./node"), the ClickHouse store ("./clickhouse"),
// the framework middleware ("./express", "./fastify", "./hono"), the CLI binary and the dashboard.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { defineConfig } from 'tsup';
import type { Plugin } from 'esbuild';

const CORE = resolve('src/index.js');
const packageVersion = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

// The adapters import the core as the package itself ("agentwarden"), not a bundled copy, so
// their errors (VisitStoreUnavailableError) are the classes the core's API handler checks for
// when an application imports both "agentwarden" and "agentwarden/node".
const coreAsPackage: Plugin = {
  name: 'core-as-package',
  setup(build) {
    build.onResolve({ filter: /\/index\.js$/ }, (args) => (resolve(args.resolveDir, args.path) === CORE ? { path: 'agentwarden', external: true } : undefined));
  },
};

// Source maps name each src/ file and line for stack traces (node --enable-source-maps); the
// package ships no src/, and copying the sources (the 1.2 MB catalog among them) into every map
// would double the package for text no one reads there.
const withoutSourcesContent = (options: { sourcesContent?: boolean }) => {
  options.sourcesContent = false;
};

// `import text from './file?text'`: the file's contents as a string. The dashboard shows the
// examples/ apps this way, so its "Connect your site" snippets are those files, word for word.
const textImports: Plugin = {
  name: 'text-imports',
  setup(build) {
    build.onResolve({ filter: /\?text$/ }, (args) => ({ path: resolve(args.resolveDir, args.path.slice(0, -'?text'.length)), namespace: 'text' }));
    build.onLoad({ filter: /.*/, namespace: 'text' }, async (args) => ({ contents: await readFile(args.path, 'utf8'), loader: 'text' }));
  },
};

export default defineConfig([
  {
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    esbuildOptions: withoutSourcesContent,
    clean: true,
    target: 'node20',
    splitting: false,
  },
  {
    entry: {
      node: 'src/adapters/node/index.ts',
      clickhouse: 'src/adapters/clickhouse/index.ts',
      express: 'src/adapters/express/index.ts',
      fastify: 'src/adapters/fastify/index.ts',
      hono: 'src/adapters/hono/index.ts',
    },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    esbuildOptions: withoutSourcesContent,
    target: 'node20',
    splitting: false,
    // import.meta.url in the CJS bundles (the node adapter finds its data and dashboard files by
    // it): tsup's shim defines it there, where esbuild alone would leave it empty with a warning.
    shims: true,
    esbuildPlugins: [coreAsPackage],
  },
  {
    entry: { cli: 'src/adapters/node/cli.ts' },
    format: ['esm'],
    sourcemap: true,
    esbuildOptions: withoutSourcesContent,
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    // The core (with its catalog) is the package's own dist/index.js, not a second copy in cli.js.
    esbuildPlugins: [coreAsPackage],
  },
  {
    // The dashboard (src/web/): one browser script and one stylesheet, uPlot bundled in, so the
    // page needs no CDN; index.html is copied from src/web/public/. Served from dist/web/.
    entry: { app: 'src/web/app.ts' },
    outDir: 'dist/web',
    format: ['iife'],
    platform: 'browser',
    target: 'es2020',
    minify: true,
    sourcemap: false,
    publicDir: 'src/web/public',
    esbuildPlugins: [textImports],
    // The install line of the "Connect your site" snippet names the tarball npm pack writes.
    define: { __AGENTWARDEN_VERSION__: JSON.stringify(packageVersion) },
    outExtension: () => ({ js: '.js' }),
  },
]);
