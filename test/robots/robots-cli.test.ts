// `agentwarden robots`: prints robots.txt for chosen types with no network; bad input exits 2.
import { describe, expect, it } from 'vitest';
import { main } from '../../src/adapters/node/cli.js';
import { robotsCommand } from '../../src/adapters/node/commands/robots.js';
import { createEngine } from '../../src/index.js';
import { captureIo } from '../helpers/cli-io.js';

describe('agentwarden robots', () => {
  it('prints the same text as engine.robotsTxt for the chosen types', async () => {
    const io = captureIo();
    expect(await robotsCommand.run(['--types', 'AI Data Scraper, AI Agent'], io)).toBe(0);
    expect(io.out()).toBe(createEngine().robotsTxt({ agent_types: ['AI Data Scraper', 'AI Agent'] }));
    expect(io.out()).toMatch(/^User-agent: .+\nDisallow: \/\n/);
    expect(io.err()).toBe('');
  });

  it('passes repeatable --disallow/--allow, --comments and --markers through', async () => {
    const io = captureIo();
    const args = ['--types', 'AI Data Scraper', '--types', 'Headless Browser', '--disallow', '/private', '--disallow=/drafts', '--allow', '/private/press', '--comments', '--markers'];
    expect(await robotsCommand.run(args, io)).toBe(0);
    expect(io.out()).toBe(
      createEngine().robotsTxt({ agent_types: ['AI Data Scraper', 'Automated Agent'], disallow: ['/private', '/drafts'], allow: ['/private/press'], comments: true, markers: true }),
    );
    expect(io.out()).toMatch(/^# BEGIN agentwarden\n# AI Data Scraper\n# https?:\/\/.+\nUser-agent: /);
    expect(io.out()).toContain('Allow: /private/press\nDisallow: /private\nDisallow: /drafts\n');
  });

  it('--allow-agent and --disallow-agent name agents by token or id on top of the types, with optional paths', async () => {
    const io = captureIo();
    const args = ['--types', 'AI Data Scraper', '--allow-agent', 'CCBot', '--disallow-agent', 'googlebot:/search', '--disallow-agent', 'Googlebot:/api/', '--allow-agent', 'GPTBot:/blog/'];
    expect(await robotsCommand.run(args, io)).toBe(0);
    const expected = createEngine().robotsTxt({
      agent_types: ['AI Data Scraper'],
      allow_agents: ['CCBot', { agent: 'GPTBot', allow: ['/blog/'] }],
      disallow_agents: [{ agent: 'googlebot', disallow: ['/search', '/api/'] }],
    });
    expect(io.out()).toBe(expected);
    expect(io.out()).toContain('User-agent: CCBot\nAllow: /\n');
    expect(io.out()).toContain('User-agent: GPTBot\nAllow: /blog/\nDisallow: /\n');
    expect(io.out()).toContain('User-agent: Googlebot\nDisallow: /search\nDisallow: /api/\n');
    // Agents alone, without --types.
    const alone = captureIo();
    expect(await robotsCommand.run(['--disallow-agent', 'GPTBot'], alone)).toBe(0);
    expect(alone.out()).toBe('User-agent: GPTBot\nDisallow: /\n');
  });

  it('--marker-label names the block', async () => {
    const io = captureIo();
    expect(await robotsCommand.run(['--types', 'AI Data Scraper', '--marker-label', 'AI crawlers'], io)).toBe(0);
    expect(io.out()).toMatch(/^# BEGIN AI crawlers\n[\s\S]*# END AI crawlers\n$/);
  });

  it('is registered in the CLI', async () => {
    const io = captureIo();
    expect(await main(['robots', '--types', 'AI Data Scraper'], io)).toBe(0);
    expect(io.out()).toContain('User-agent: ');
    const help = captureIo();
    expect(await main(['--help'], help)).toBe(0);
    expect(help.out()).toMatch(/robots\s+Print a robots.txt/);
  });

  it.each([
    [['--types', 'AI Data Scrapers'], /--types #1: "AI Data Scrapers" is not an agent type; allowed: AI Agent, /],
    [['--types', ','], /--types: agent_types must name at least one of/],
    [[], /missing --types/],
    [['--types', 'Scraper', '--allow-agent', 'CCBot', '--allow-agent', 'NoSuchBot'], /--allow-agent NoSuchBot: "NoSuchBot" is neither an agent id nor a robots token/],
    [['--disallow-agent', 'GPTBot:/ok', '--disallow-agent', 'GPTBot:private'], /--disallow-agent GPTBot path #2: a path must start with/],
    [['--disallow-agent', 'GPTBot', '--allow-agent', 'gptbot'], /--allow-agent gptbot: "gptbot" \(gptbot\) already has a rule/],
    [['--types', 'Scraper', '--disallow', 'private'], /--disallow #1: a path must start with "\/" or "\*": "private"/],
    [['--types', 'Scraper', '--disallow', '/a\nUser-agent: *'], /--disallow #1: a path must not contain control characters/],
    [['--types', 'Scraper', '--allow', '/ok', '--allow', '/b\r'], /--allow #2: a path must not contain control characters/],
    [['--types', 'Scraper', '--marker-label', 'x\ny'], /--marker-label: marker text must not contain control characters/],
    [['--types', 'Scraper', '--markers', '--marker-label', 'x'], /either --markers or --marker-label/],
    [['--types', 'Scraper', '--bogus'], /Unknown option '--bogus'/],
    [['--types', 'Scraper', 'extra'], /Unexpected argument 'extra'|positional/],
  ])('%j → exit 2, stderr names the problem, nothing on stdout', async (args, message) => {
    const io = captureIo();
    expect(await robotsCommand.run(args, io)).toBe(2);
    expect(io.err()).toMatch(message);
    expect(io.out()).toBe('');
  });
});
