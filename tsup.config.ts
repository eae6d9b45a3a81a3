// Build: ESM + CJS + declarations for the core ("."), the node adapter ("./node"), the ClickHouse store ("./clickhouse"), the CLI binary and the dashboard.
import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: { index: 'src/index.ts', node: 'src/adapters/node/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    splitting: false,
  },
  {
    // The ClickHouse store imports the core as the package itself ("agentwarden"), not a bundled
    // copy, so its VisitStoreUnavailableError is the class the core's API handler checks for.
    entry: { clickhouse: 'src/adapters/clickhouse/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    target: 'node20',
    splitting: false,
    esbuildPlugins: [
      {
        name: 'core-as-package',
        setup(build) {
          build.onResolve({ filter: /^\.\.\/\.\.\/index\.js$/ }, () => ({ path: 'agentwarden', external: true }));
        },
      },
    ],
  },
  {
    entry: { cli: 'src/adapters/node/cli.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
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
    outExtension: () => ({ js: '.js' }),
  },
]);
