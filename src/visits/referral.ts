// Referral classes: which AI product sent a human visitor, from the Referer host or `utm_source`.

/** The AI products a referral is attributed to. */
export const REFERRAL_CLASSES = [
  'chatgpt',
  'perplexity',
  'gemini',
  'claude',
  'copilot',
  'deepseek',
  'grok',
  'meta-ai',
  'mistral',
  'you',
  'phind',
  'poe',
] as const;

/** One AI product a human visitor arrived from. */
export type ReferralClass = (typeof REFERRAL_CLASSES)[number];

/**
 * Each referral class's product name as people write it, and the operator that runs it, spelled
 * as the catalog spells operators (so a product's referrals meet its operator's crawlers).
 */
export const REFERRAL_PRODUCTS: Readonly<Record<ReferralClass, { readonly name: string; readonly operator: string }>> = {
  chatgpt: { name: 'ChatGPT', operator: 'OpenAI' },
  perplexity: { name: 'Perplexity', operator: 'Perplexity' },
  gemini: { name: 'Gemini', operator: 'Google' },
  claude: { name: 'Claude', operator: 'Anthropic' },
  copilot: { name: 'Copilot', operator: 'Microsoft' },
  deepseek: { name: 'DeepSeek', operator: 'DeepSeek' },
  grok: { name: 'Grok', operator: 'xAI' },
  'meta-ai': { name: 'Meta AI', operator: 'Meta' },
  mistral: { name: 'Le Chat', operator: 'Mistral AI' },
  you: { name: 'You.com', operator: 'You.com' },
  phind: { name: 'Phind', operator: 'phind' },
  poe: { name: 'Poe', operator: 'Quora' },
};

// Hosts each product links out from (their chat apps and link-redirect hosts). A host matches
// itself and its subdomains, so "chatgpt.com" covers "www.chatgpt.com".
const HOSTS: ReadonlyArray<readonly [string, ReferralClass]> = [
  ['chatgpt.com', 'chatgpt'],
  ['chat.openai.com', 'chatgpt'],
  ['perplexity.ai', 'perplexity'],
  ['gemini.google.com', 'gemini'],
  ['bard.google.com', 'gemini'],
  ['claude.ai', 'claude'],
  ['copilot.microsoft.com', 'copilot'],
  ['copilot.cloud.microsoft', 'copilot'],
  ['chat.deepseek.com', 'deepseek'],
  ['grok.com', 'grok'],
  ['meta.ai', 'meta-ai'],
  ['chat.mistral.ai', 'mistral'],
  ['you.com', 'you'],
  ['phind.com', 'phind'],
  ['poe.com', 'poe'],
];

// `utm_source` values the products append to the links they cite (ChatGPT: utm_source=chatgpt.com).
const UTM_SOURCES = new Map<string, ReferralClass>([
  ...HOSTS.map(([host, referral]) => [host, referral] as const),
  ...REFERRAL_CLASSES.map((referral) => [referral, referral] as const),
  ['openai', 'chatgpt'],
  ['bing-copilot', 'copilot'],
  ['metaai', 'meta-ai'],
  ['lechat', 'mistral'],
]);

// Each host with its subdomain suffix (".chatgpt.com"), made once rather than on every lookup.
const HOST_SUFFIXES = HOSTS.map(([host, referral]) => [host, `.${host}`, referral] as const);

function classifyHost(host: string): ReferralClass | undefined {
  let name = host.toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  for (const [suffix, subdomains, referral] of HOST_SUFFIXES) {
    if (name === suffix || name.endsWith(subdomains)) return referral;
  }
  return undefined;
}

/**
 * The host of an http(s) Referer, as `new URL(referer).hostname` gives it, undefined when that
 * throws. Plain `https://name/...` referers, nearly all of them, are read directly: a host of
 * lower-case letters, digits, '-' and '.' is its own WHATWG serialisation (URL Standard §3.5:
 * ASCII lower case maps to itself) except for punycode ("xn--") labels, which may be invalid,
 * and a numeric last label, parsed as IPv4; any other shape (port, userinfo, upper case,
 * backslash, IDN) goes through URL.
 */
export function refererHost(referer: string): string | undefined {
  const start = referer.startsWith('https://') ? 8 : referer.startsWith('http://') ? 7 : -1;
  if (start !== -1) {
    let end = start;
    let lastDot = start - 1;
    for (; end < referer.length; end++) {
      const c = referer.charCodeAt(end);
      if (c === 0x2e) lastDot = end;
      else if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d)) break;
    }
    const next = end === referer.length ? -1 : referer.charCodeAt(end);
    // Ends the authority: '/', '?', '#' or the end of the string.
    const delimited = next === -1 || next === 0x2f || next === 0x3f || next === 0x23;
    if (delimited && end > start) {
      const host = referer.slice(start, end);
      const lastLabel = host.endsWith('.') ? host.slice(host.lastIndexOf('.', host.length - 2) + 1, -1) : referer.slice(lastDot + 1, end);
      if (!host.includes('xn--') && !/^(?:[0-9]*|0[xX][0-9a-fA-F]*)$/.test(lastLabel)) return host;
    }
  }
  try {
    return new URL(referer).hostname;
  } catch {
    return undefined;
  }
}

function utmSource(path: string): string | undefined {
  // RFC 3986 §3.5: the fragment ends the query, and a '?' inside a fragment starts nothing.
  const hash = path.indexOf('#');
  const query = path.indexOf('?');
  if (query === -1 || (hash !== -1 && hash < query)) return undefined;
  try {
    return new URLSearchParams(path.slice(query + 1, hash === -1 ? undefined : hash)).get('utm_source') ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * The AI product a visit was referred from: the Referer's host first, then the request path's
 * `utm_source` parameter; undefined when neither names one.
 * @example
 * classifyReferral('/pricing', 'https://chatgpt.com/'); // 'chatgpt'
 * classifyReferral('/docs?utm_source=perplexity', undefined); // 'perplexity'
 */
export function classifyReferral(path: string, referer: string | undefined): ReferralClass | undefined {
  if (referer !== undefined && referer !== '') {
    const host = refererHost(referer);
    const fromHost = host === undefined ? undefined : classifyHost(host);
    if (fromHost !== undefined) return fromHost;
  }
  const source = utmSource(path);
  if (source === undefined) return undefined;
  const normalised = source.trim().toLowerCase().replace(/^www\./, '');
  return UTM_SOURCES.get(normalised) ?? classifyHost(normalised);
}
