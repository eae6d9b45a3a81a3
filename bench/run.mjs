// Runs every benchmark in bench/ (ours and peers side by side, ratios printed by each).
import { readdirSync } from 'node:fs';

const only = process.argv.slice(2);
const files = readdirSync(import.meta.dirname)
  .filter((f) => f.endsWith('.mjs') && !['run.mjs', 'harness.mjs'].includes(f))
  .filter((f) => only.length === 0 || only.some((name) => f.startsWith(name)))
  .sort();
for (const file of files) {
  console.log(`\n== bench/${file}`);
  const mod = await import(`./${file}`);
  if (typeof mod.run === 'function') await mod.run();
}
