// Builds dist/ with tsup unless it is already newer than everything it is built from, so
// `npm start` starts at once after the first build. Used by `npm start` and the `prepare` script
// (which npm runs on `npm ci` and when the package is installed from git). The packed package
// ships this file but not src/: there dist/ is the build, and there is nothing to rebuild it from.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const INPUTS = ['src', 'tsup.config.ts', 'package.json', 'package-lock.json', 'tsconfig.json'];

/** The newest (or oldest) modification time of a file or of everything in a folder, folders included. */
function mtimes(path, pick) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((time, name) => pick(time, mtimes(join(path, name), pick)), stat.mtimeMs);
}

function isCurrent() {
  const dist = join(ROOT, 'dist');
  if (!existsSync(join(dist, 'cli.js')) || !existsSync(join(dist, 'web', 'index.html'))) return false;
  const newestInput = Math.max(...INPUTS.map((input) => join(ROOT, input)).filter(existsSync).map((path) => mtimes(path, Math.max)));
  // Files only: tsup rewrites every output, so the oldest output is the build's time.
  const oldestOutput = Math.min(...readdirSync(dist, { recursive: true }).map((name) => join(dist, name)).filter((path) => statSync(path).isFile()).map((path) => statSync(path).mtimeMs));
  return oldestOutput >= newestInput;
}

// An installed tarball: dist/ came built in it (prepack), with no sources or tsup beside it.
const packed = !existsSync(join(ROOT, 'src'));
if (packed && !existsSync(join(ROOT, 'dist', 'index.js'))) {
  console.error('agentwarden: dist/ is missing and there is no src/ to build it from: reinstall the package.');
  process.exit(1);
}
if (!packed && !isCurrent()) {
  const tsup = join(ROOT, 'node_modules', '.bin', 'tsup');
  if (!existsSync(tsup)) {
    console.error('dist/ is missing or out of date and tsup is not installed: run `npm ci` first.');
    process.exit(1);
  }
  // A first build takes a while on a small machine: say what is happening rather than stay silent.
  console.log('agentwarden: building dist/ (only when the sources changed) ...');
  const result = spawnSync(tsup, ['--silent'], { cwd: ROOT, stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
