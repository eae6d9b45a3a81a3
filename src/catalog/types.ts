// Catalog data model: agent types (display order), the Agent record and how it is matched.

/** The 17 agent types, exact strings, in display order (DESIGN.md §2). */
export const AGENT_TYPES = [
  'AI Agent',
  'AI Assistant',
  'AI Coding Agent',
  'AI Data Provider',
  'AI Data Scraper',
  'AI Search Crawler',
  'Archiver',
  'Developer Helper',
  'Fetcher',
  'Automated Agent',
  'Intelligence Gatherer',
  'Scraper',
  'SEO Crawler',
  'Search Engine Crawler',
  'Security Scanner',
  'Undocumented AI Agent',
  'Uncategorized',
] as const;

/** One of the 17 agent types. */
export type AgentType = (typeof AGENT_TYPES)[number];

/** Legacy type names accepted as input and what they mean today. */
export const AGENT_TYPE_ALIASES: Readonly<Record<string, AgentType>> = {
  'Headless Agent': 'Automated Agent',
  'Headless Browser': 'Automated Agent',
};

/**
 * What an agent is, for ranking when several agents match one header: software that other bots
 * are built with (`library`: curl, python-requests, Scrapy, Puppeteer) or run on (`platform`:
 * HeadlessChrome, PhantomJS, Java, AppEngine-Google) yields to any bot that names itself in the
 * same header, and a library to the platform. Bots leave it out.
 */
export type AgentLayer = 'library' | 'platform';

/**
 * How an agent is recognised in a User-Agent header (data/README.md "Matching rules").
 * `tokens` are product tokens matched case-insensitively on word boundaries, plus the members of
 * their family (`Baiduspider` also matches `Baiduspider-image/2.0` and `larbin` matches
 * `larbin_2.6.3`). A token may carry context: a leading `^` (it must start the header), a
 * trailing `$` (it must end it) and anything after its first word, compared verbatim
 * (`Nmap Scripting Engine`, `RED/`), but for a `*` there, which takes a version
 * (`facebookexternalhit/* Facebot Twitterbot`). `patterns` are regular expressions (case-insensitive) for the
 * rare agent a token cannot describe; they are tried only when no token matched.
 */
export interface AgentMatch {
  readonly tokens?: readonly string[];
  readonly patterns?: readonly string[];
  readonly layer?: AgentLayer;
  /**
   * Tokens match their whole word only, or with a version suffix (`Applebot/0.1`, `Applebot_2`),
   * never a family member: for an operator that documents no variants, when a real browser's UA
   * carries one (`Applebot-like` in the Orion browser's).
   */
  readonly exact?: boolean;
}

/** One agent of the catalog (DESIGN.md §2). */
export interface Agent {
  readonly id: string;
  readonly name: string;
  readonly type: AgentType;
  readonly operator: string;
  readonly url: string;
  readonly match: AgentMatch;
  /** Product tokens for robots.txt; the first is the agent's primary token. */
  readonly robots_tokens: readonly string[];
  readonly description?: string;
  /** Web Bot Auth origins (`https://chatgpt.com`) whose Signature-Agent names this agent. */
  readonly signature_agents?: readonly string[];
  /** File names under data/ip-ranges/ holding the operator's published prefixes. */
  readonly ip_ranges?: readonly string[];
  /** Hostname suffixes that the agent's reverse DNS must end with, on a label boundary. */
  readonly reverse_dns?: readonly string[];
  readonly respects_robots_txt?: boolean;
  readonly aliases?: readonly string[];
  /** Where the record came from: `<source>:<key>` references into data/sources/. */
  readonly sources?: readonly string[];
}

/** The catalog document stored in data/agents.json. */
export interface CatalogDocument {
  readonly version: number;
  readonly agents: readonly Agent[];
}
