// The robots.txt renderer: one group per robots token of every agent the options give a rule (its
// type chosen, or named in disallow_agents/allow_agents; RFC 9309 §2.1), memoized per canonical
// options, with a strong ETag for cheap daily fetches.
import type { Catalog } from '../catalog/catalog.js';
import { AGENT_TYPES } from '../catalog/types.js';
import { compileRobotsAgentRules, type AgentRobotsRule } from './agent-rules.js';
import { strongEtag } from './etag.js';
import { RobotsOptionsError } from './errors.js';
import { validateRobotsOptions, type RobotsTxtOptions, type ValidatedRobotsOptions } from './options.js';
import { compileRobotsGroups, groupsInsideToken, type RobotsGroup } from './tokens.js';

/** RFC 9309 §2.5: crawlers must parse at least 500 KiB; Google ignores the rest, so never emit more. */
export const MAX_ROBOTS_TXT_BYTES = 512_000;

/** A rendered robots.txt: the text (UTF-8, LF line endings) and its strong ETag. */
export interface RenderedRobotsTxt {
  readonly text: string;
  /** Strong, quoted validator of the text (`"9f1c…"`), equal for equal text. */
  readonly etag: string;
  /** Size of the text in UTF-8 bytes (what `Content-Length` is). */
  readonly bytes: number;
}

/** Renders robots.txt text for one catalog. */
export interface RobotsRenderer {
  /**
   * The robots.txt text for these options.
   * @throws {RobotsOptionsError} when the options are invalid or the text would pass 500 KiB.
   */
  robotsTxt(options: RobotsTxtOptions): string;
  /**
   * The text with its ETag and size; the same (frozen) object for equal options while cached.
   * @throws {RobotsOptionsError} when the options are invalid or the text would pass 500 KiB.
   */
  renderRobotsTxt(options: RobotsTxtOptions): RenderedRobotsTxt;
}

/** Options of `createRobotsRenderer`. */
export interface RobotsRendererOptions {
  /** How many distinct renderings to keep (least recently used dropped first); 0 disables the cache. */
  readonly cacheSize?: number;
}

const encoder = new TextEncoder();

/**
 * Compiles a catalog's groups once and returns a memoizing renderer.
 * @throws {RangeError} for a bad `cacheSize` or a catalog token that cannot be written safely.
 * @example
 * const robots = createRobotsRenderer(catalog);
 * robots.robotsTxt({ agent_types: ['AI Data Scraper'] });
 * // "User-agent: CCBot\nDisallow: /\n\nUser-agent: GPTBot\nDisallow: /\n"
 * robots.robotsTxt({ agent_types: ['AI Data Scraper'], allow_agents: ['CCBot'] });
 * // "User-agent: CCBot\nAllow: /\n\nUser-agent: GPTBot\nDisallow: /\n"
 * robots.renderRobotsTxt({ agent_types: ['AI Data Scraper'], disallow: ['/private', '/drafts'], comments: true, markers: true });
 * // { text: "# BEGIN agentwarden\n# AI Data Scraper\n# https://commoncrawl.org/ccbot\nUser-agent: CCBot\n...", etag: '"…"', bytes: … }
 */
export function createRobotsRenderer(catalog: Catalog, options: RobotsRendererOptions = {}): RobotsRenderer {
  const cacheSize = options.cacheSize ?? 64;
  if (!Number.isInteger(cacheSize) || cacheSize < 0) throw new RangeError(`cacheSize must be a non-negative integer, got ${String(cacheSize)}`);
  const groups = compileRobotsGroups(catalog);
  const inside = groupsInsideToken(groups);
  // Each group's head with and without comments, built once: rendering is then string joins.
  const heads = new Map(
    [...groups].map(([type, list]) => [
      type,
      list.map((group) => {
        const names = group.userAgents.map((ua) => `User-agent: ${ua}\n`).join('');
        return { group, agentId: group.agentId, plain: names, commented: `# ${type}\n# ${group.url}\n${names}` };
      }),
    ]),
  );
  const cache = new Map<string, RenderedRobotsTxt>();

  const render = (validated: ValidatedRobotsOptions): RenderedRobotsTxt => {
    const agentRules = compileRobotsAgentRules(validated, catalog);
    // Allow lines first: longest-match parsers do not care about order, and first-match legacy
    // parsers (Python's urllib.robotparser) then honour the exceptions too.
    const linesOf = new Map<AgentRobotsRule, string>();
    const lines = (rule: AgentRobotsRule) => {
      let text = linesOf.get(rule);
      if (text === undefined) linesOf.set(rule, (text = [...rule.allow.map((path) => `Allow: ${path}\n`), ...rule.disallow.map((path) => `Disallow: ${path}\n`)].join('')));
      return text;
    };
    // Parsers that take the first group whose User-agent value is found inside a crawler's name
    // (Python's urllib.robotparser, Scrapy's Protego) would give Googlebot-Image the Googlebot
    // group written before its own, and so ignore an exception made for it. A group goes before
    // every group whose value its token contains; the rest keep their order (by type, then token).
    const blocks: { readonly group: RobotsGroup; readonly text: string }[] = [];
    for (const type of AGENT_TYPES) {
      if (!agentRules.types.has(type)) continue;
      for (const head of heads.get(type) ?? []) {
        const rule = agentRules.ruleFor(head.agentId);
        if (rule === undefined) continue;
        const block = { group: head.group, text: (validated.comments ? head.commented : head.plain) + lines(rule) };
        const within = inside.get(head.group);
        const before = within === undefined ? -1 : blocks.findIndex((placed) => within.has(placed.group));
        if (before === -1) blocks.push(block);
        else blocks.splice(before, 0, block);
      }
    }
    // One blank line between groups, as the seed emits (blank lines never end a group: RFC 9309 §2.2).
    let text = blocks.map((block) => block.text).join('\n');
    if (validated.markers !== null) text = `# ${validated.markers.begin}\n${text}# ${validated.markers.end}\n`;
    const bytes = encoder.encode(text);
    if (bytes.length > MAX_ROBOTS_TXT_BYTES) {
      throw new RobotsOptionsError([
        {
          path: '',
          code: 'output-too-large',
          message: `the robots.txt would be ${bytes.length} bytes, over RFC 9309's ${MAX_ROBOTS_TXT_BYTES}-byte parse limit; choose fewer types, agents or paths`,
        },
      ]);
    }
    return Object.freeze({ text, etag: strongEtag(bytes), bytes: bytes.length });
  };

  const renderRobotsTxt = (input: RobotsTxtOptions): RenderedRobotsTxt => {
    const validated = validateRobotsOptions(input, catalog);
    const hit = cache.get(validated.key);
    if (hit !== undefined) {
      // Re-insert so Map order is least-recently-used first.
      cache.delete(validated.key);
      cache.set(validated.key, hit);
      return hit;
    }
    const rendered = render(validated);
    if (cacheSize > 0) {
      if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!);
      cache.set(validated.key, rendered);
    }
    return rendered;
  };

  return {
    robotsTxt: (input) => renderRobotsTxt(input).text,
    renderRobotsTxt,
  };
}
