// Architecture boundaries (DESIGN.md §1): the core is platform-neutral and adapters use only its public API.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts)$/.test(entry.name) ? [path] : [];
  });
}

/** Source text with comments removed, so a comment that mentions `process.` is not a violation. */
function code(path: string): string {
  return readFileSync(path, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

const files = sourceFiles(SRC).map((path) => ({ path, rel: relative(ROOT, path).split('\\').join('/') }));
const core = files.filter((f) => !f.rel.startsWith('src/adapters/'));
const adapters = files.filter((f) => f.rel.startsWith('src/adapters/'));

describe('core stays platform-neutral', () => {
  it('finds the core files', () => {
    expect(core.length).toBeGreaterThan(5);
  });

  it('no core file imports node:* or uses process / Buffer / require', () => {
    const violations = core.flatMap(({ path, rel }) => {
      const text = code(path);
      const found: string[] = [];
      if (/from\s+['"]node:|import\(\s*['"]node:|require\(/.test(text)) found.push('imports a node: module or uses require');
      if (/\bprocess\s*\./.test(text)) found.push('uses process');
      if (/\bBuffer\b/.test(text)) found.push('uses Buffer');
      if (/from\s+['"](fs|path|os|http|https|net|dns|crypto|child_process|url)['"]/.test(text)) found.push('imports a bare Node built-in');
      if (/from\s+['"][^'"]*adapters\//.test(text)) found.push('imports from an adapter');
      return found.map((why) => `${rel}: ${why}`);
    });
    expect(violations).toEqual([]);
  });
});

describe('adapters use the core only through its public API', () => {
  it('every relative import from an adapter into the core goes through src/index.ts', () => {
    const violations = adapters.flatMap(({ path, rel }) => {
      const dir = rel.split('/').slice(0, -1).join('/');
      return [...code(path).matchAll(/from\s+['"](\.[^'"]+)['"]/g)].flatMap(([, spec]) => {
        const target = join(dir, spec!).split('\\').join('/');
        if (target.startsWith('src/adapters/')) return [];
        return target === 'src/index.js' || target === 'src/index' ? [] : [`${rel} imports ${spec}`];
      });
    });
    expect(violations).toEqual([]);
  });
});

describe('the core parts below the API stay below it', () => {
  // DESIGN.md §1: api/ builds on catalog/, identify/, verify/, robots/ and visits/; none of them
  // reaches up into api/ (what both need, such as FieldError and JSON pointers, lives below both).
  const LOWER = ['src/catalog/', 'src/identify/', 'src/verify/', 'src/robots/', 'src/visits/'];

  it('finds files in every lower part', () => {
    for (const part of LOWER) expect(core.some((f) => f.rel.startsWith(part)), part).toBe(true);
  });

  it('no file of catalog/, identify/, verify/, robots/ or visits/ imports from api/', () => {
    const violations = core
      .filter((f) => LOWER.some((part) => f.rel.startsWith(part)))
      .flatMap(({ path, rel }) => {
        const dir = rel.split('/').slice(0, -1).join('/');
        return [...code(path).matchAll(/(?:from|import)\s*\(?\s*['"](\.[^'"]+)['"]/g)].flatMap(([, spec]) => {
          const target = join(dir, spec!).split('\\').join('/');
          return target.startsWith('src/api/') ? [`${rel} imports ${spec}`] : [];
        });
      });
    expect(violations).toEqual([]);
  });
});

describe('public API hygiene', () => {
  it('src/index.ts uses explicit named exports only (no export *)', () => {
    expect(readFileSync(join(SRC, 'index.ts'), 'utf8')).not.toMatch(/export\s+\*/);
  });
});
