// Attack payloads sent as the User-Agent: Log4Shell lookups, Shellshock function definitions, SQL,
// script, code, command, template, XML, LDAP and CRLF injections, path traversals, request forgery.
// Scanners put them there because servers log and parse the header; no browser or crawler sends
// one. Such a header names no product, so it is named by what it tries: an *attack probe*, of
// type Security Scanner, never verifiable, with the id `probe:<kind>` (data/README.md "Attack probes").
// Log4Shell and Shellshock payloads are read in the other headers (and Log4Shell in the path) too.
import type { Agent } from './types.js';

/** The prefix of every attack probe's id; catalog ids are lower-case slugs, so never clash. */
const PROBE_ID_PREFIX = 'probe:';

/**
 * Bytes that most payloads below but few real headers carry, outside a word ("$", "{", "<", a
 * quote...). The matcher's scan notes them as it reads the header, at no cost of its own
 * (ua-matcher.ts), so the rules run only on headers that carry one of them or a PAYLOAD_WORDS word.
 */
export const PAYLOAD_BYTES: readonly number[] = [...'${}<>\'"`|\\=%&'].map((ch) => ch.charCodeAt(0));

/**
 * Whole words (as the scan reads words: [A-Za-z0-9_.-] runs) that start the payloads carrying no
 * PAYLOAD_BYTES: "../../boot.ini", "(select convert(int,CHAR(65)))", "javascript:alert(1)". Not
 * words that start like the words of most browser headers ("win.ini" like "Windows", "chmod" like
 * "Chrome", "insert" like "Intel", "opt" like "OPR", "netstat" like "Nexus"): the scan walks
 * further into the trie on those, and with them the probes cost the bench corpus about 6%, not 3%.
 * They named 24 of 41,955 payloads that nothing else did.
 */
export const PAYLOAD_WORDS: readonly string[] = [
  '..', 'etc', 'passwd', 'boot.ini', 'web-inf', 'usr', 'tmp', 'dev', 'var', 'proc', 'root',
  '169.254.169.254', 'metadata.google.internal', '169.254.170.2', 'fd00',
  'select', 'union', 'order', 'sleep', 'waitfor', 'delete', 'drop', 'declare', 'benchmark',
  'jndi', 'script', 'alert',
  'id', 'ls', 'dir', 'pwd', 'uname', 'nslookup', 'whoami', 'timeout', 'start-sleep', 'wget', 'curl', 'inetpub',
];

/** What a probe tries, in the order the rules are tried: the most specific first. */
interface ProbeKind {
  readonly kind: string;
  readonly name: string;
  /** A page describing the attack (the agent's url). */
  readonly url: string;
  /** Any of them matching names the kind. */
  readonly rules: readonly RegExp[];
}

// The rules are written from the attacks' grammar (the CVEs, OWASP's pages): a payload that showed
// a gap gave a shape to describe, never a string to copy. They must not backtrack far on any
// header: a repetition is bounded, or the text after it cannot be taken by it (no two \s* with only
// an optional token between: "\s*(?:\(\s*)?", not "\s*\(?\s*"); the tests time long runs of spaces.
const either = (...sources: string[]): RegExp[] => [new RegExp(sources.join('|'), 'i')];
const S = String.raw;

const KINDS: readonly ProbeKind[] = [
  {
    kind: 'log4shell',
    name: 'Log4Shell probe',
    url: 'https://nvd.nist.gov/vuln/detail/CVE-2021-44228',
    // ${jndi:ldap://...}, and the lookups that hide it: ${${::-j}ndi:...}, ${${env:X:-j}ndi...},
    // ${lower:j}; Apache Commons Text's lookups of the same syntax (CVE-2022-42889: ${url:...},
    // ${script:...}, ${dns:...}) are counted here too.
    rules: either(
      S`\$\{[^{}]{0,40}(?:jndi|::-)`,
      S`\$\{\s*\$\{`,
      S`\$\{\s*(?:lower|upper|env|sys|java|date|base64|main|ctx|k8s|docker|web|spring|bundle|log4j|marker|map|sd|event|jvmrunargs|hostname|url|script|dns|file)\s*:`,
      S`\{\s*jndi\s*:`,
      S`\bjndi\s*:\s*(?:ldaps?|rmi|dns|iiop|corba|nds|nis|https?)\s*:`,
    ),
  },
  {
    kind: 'shellshock',
    name: 'Shellshock probe',
    url: 'https://nvd.nist.gov/vuln/detail/CVE-2014-6271',
    // A bash function definition: "() { :;};", "() { _; } >_[$($())] {", at the start of the
    // value or of a quoted or assigned one ("x='() { ...", "=() {"), never a script's "function(){".
    rules: either(S`(?:^|[\s='"])\(\s*\)\s*\{\s*[^\s}]`),
  },
  {
    kind: 'server-side-include',
    name: 'Server-side include probe',
    url: 'https://owasp.org/www-community/attacks/Server-Side_Includes_(SSI)_Injection',
    // SSI directives, and the Edge Side Includes that caches and CDNs evaluate.
    rules: either(S`<!--\s*#\s*(?:exec|include|echo|config|printenv|set|fsize|flastmod)\b`, S`<\s*esi:(?:include|vars|debug|eval|inline)\b`),
  },
  {
    kind: 'xml-injection',
    name: 'XML injection probe',
    url: 'https://owasp.org/www-community/vulnerabilities/XML_External_Entity_(XXE)_Processing',
    // External entities, XInclude, and schema locations a parser would fetch.
    rules: either(S`<!ENTITY\b`, S`<!DOCTYPE\s+\w+\s*\[`, S`<\s*xi:include\b`, S`\bxmlns:xi\s*=`, S`\bxsi:(?:no[a-z]*)?schemaLocation\s*=`),
  },
  {
    kind: 'ldap-injection',
    name: 'LDAP injection probe',
    url: 'https://owasp.org/www-community/attacks/LDAP_Injection',
    // A filter closed early and a new one opened: "*)(|(uid=*))", "admin)(&)", "*(|(objectclass=*))".
    rules: either(S`\(\s*[|&!]\s*\(\s*[\w-]+\s*[~<>]?=`, S`\*\s*\)\s*\(\s*[|&!]`, S`\)\s*\(\s*&\s*\)`),
  },
  {
    kind: 'template-injection',
    name: 'Template injection probe',
    url: 'https://owasp.org/www-project-web-security-testing-guide/latest/4-Web_Application_Security_Testing/07-Input_Validation_Testing/18-Testing_for_Server-side_Template_Injection',
    // Arithmetic a template engine would evaluate ("{{7*7}}", "${7*7}", "<%= 7*7 %>"), or the
    // objects Jinja and Twig payloads reach for; a bare "{{name}}" is an unfilled placeholder.
    rules: either(
      S`\{\{[^{}]{0,60}(?:\d\s*[*+]\s*['"]?\d|\bconfig\b|\bself\b|\brequest\b|__class__|_self|constructor|lipsum|cycler|joiner)`,
      S`[$#*@]\{\s*\d+\s*[*+]\s*\d+\s*\}`,
      S`<%[=!][^%]{0,60}%>`,
      S`\{%[^%]{0,60}%\}`,
      // Spring, FreeMarker, Velocity and Smarty: "${T(java.lang.Runtime)...}", "<#assign", "#set($x=", "{php}".
      S`\$\{\s*T\s*\(\s*java\.`,
      S`<#(?:assign|list|if)\b`,
      S`#set\s*\(\s*\$\w+\s*=`,
      S`\{php\}`,
    ),
  },
  {
    kind: 'code-injection',
    name: 'Code injection probe',
    url: 'https://owasp.org/www-community/attacks/Code_Injection',
    // Code a PHP, JavaScript, Ruby or Java (OGNL) interpreter would run if the header reached one:
    // "${@print(md5(31337))}", "'+(function(){...", "'.concat(70-3)", "#_memberAccess".
    rules: either(
      S`<\?(?:php\b|=)`,
      S`[;'"@{+]\s*(?:print|assert|eval|system|passthru|shell_exec|phpinfo|var_dump|die)\s*\(`,
      // An interpreter's call running a quoted command, and PHP's request superglobals: "eval('ls')", "{$_GET["cmd"]}".
      S`\b(?:eval|exec|system|passthru|shell_exec|popen|proc_open)\s*\(\s*['"]`,
      S`\$_(?:GET|POST|REQUEST|COOKIE|SERVER|FILES|ENV)\s*\[`,
      S`\bmd5\s*\(\s*acunetix`,
      // PHP's complex syntax calling a function: "{${sleep(20)}}", "{${phpinfo()}}".
      S`\{\$\{\s*\w+\s*\(`,
      S`\bbase64_decode\s*\(`,
      S`['"]\s*\+\s*(?:\(\s*)?function\s*\(`,
      S`\.concat\s*\(\s*\d+\s*[-*+]\s*\d+\s*\)`,
      S`\brequire\s*(?:\(\s*)?['"]\s*(?:socket|child_process|os)\b`,
      S`#_memberAccess|@java\.lang\.(?:Runtime|ProcessBuilder)|\bnew\s+java\.`,
      // A serialised PHP object (object injection): 'O:21:"JDatabaseDriverMysqli"'.
      S`\bO:\d{1,3}:\\?"`,
    ),
  },
  {
    kind: 'cross-site-scripting',
    name: 'Cross-site scripting probe',
    url: 'https://owasp.org/www-community/attacks/xss/',
    rules: either(
      S`(?:<|%3c)\s*(?:\/\s*)?(?:script|img|svg|iframe|body|object|embed|video|audio|input|details|marquee|style|link|meta|math|form|isindex|base|frameset|xss|xml|html|p)(?=[\s\/>]|%20|%3e|$)`,
      // The '<'">' a scanner sends to see which of them survive. (Not any '">' then a tag: smart
      // TVs' CE-HTML headers carry an XML profile list, '<ui_profile name="...">'.)
      S`<'">`,
      S`\b(?:java|vb)script\s*:`,
      S`\bon(?:error|load|mouseover|mouseenter|focus|click|toggle|begin|pageshow|animationstart)\s*=`,
      S`\b(?:alert|prompt|confirm)\s*(?:\(|\x60)`,
      S`\bdocument\s*\.\s*(?:cookie|domain|write)\b`,
      S`String\.fromCharCode\s*\(`,
    ),
  },
  {
    kind: 'sql-injection',
    name: 'SQL injection probe',
    url: 'https://owasp.org/www-community/attacks/SQL_Injection',
    rules: either(
      S`\bunion\b(?:\s|\+|\/\*[^*]{0,40}\*\/){1,8}(?:all\b(?:\s|\+|\/\*[^*]{0,40}\*\/){1,8}|distinct\s+)?\(?\s*select\b`,
      S`\bselect\b[^;]{1,120}?\bfrom\b`,
      S`\(\s*select\b`,
      // A quote or parenthesis closed early, then a tautology: "' OR '1'='1", "') AND (1=1".
      // Each optional token takes the spaces after it: two runs of \s* with only an optional
      // token between could split one long run of spaces in every way (cubic time, minutes at 16 KB).
      S`['"\x60)]\s*(?:or|and|xor|\|\||&&)\s*(?:\(\s*)?(?:(?:['"]\s*)?\w{1,20}(?:\s*['"])?|''|"")\s*(?:\)\s*)?(?:=|<|>|\blike\b|\bin\s*\()`,
      // A string closed, then a condition always true and a comment for the rest of the query: "1' or 1 --".
      S`['"\x60]\s*(?:or|\|\|)\s+\d{1,10}\s*(?:--|#|\/\*)`,
      // sqlmap's heuristic check: a run of quotes, parentheses, dots and commas with both quotes
      // in it, which makes any unescaped string break the query ("'\"(.)).)),").
      S`(?=[(),.'"]{6})[(),.]{0,8}(?:'[(),.']{0,8}"|"[(),."]{0,8}')`,
      // A numeric tautology, maybe with comments for spaces: "WHERE 9307=9307", "OR 2+933-933-1=0+0+0+1", "-1/**/oR/**/1=1".
      S`\b(?:or|and|where|having|xor)(?:\s|\/\*[^*]{0,40}\*\/){1,8}\s*(?:not\s+)?(?:\(\s*)?['"]?\d{1,10}(?:\s*[-+*]\s*\d{1,10}){0,8}['"]?\s*\)?(?:\s|\/\*[^*]{0,40}\*\/){0,8}(?:=|<|>|\blike\b)(?:\s|\/\*[^*]{0,40}\*\/){0,8}\(?\s*['"]?\d`,
      S`\b(?:sleep|benchmark|pg_sleep|extractvalue|updatexml|make_set|randomblob|group_concat|load_file)\s*\(`,
      S`\belt\s*\(\s*\d+\s*=`,
      S`\bwaitfor\s+(?:delay|time)\b`,
      S`\b(?:dbms_(?:pipe|lock|xmlgen|utility)|utl_(?:inaddr|http))\.`,
      S`\binformation_schema\b`,
      S`\bconvert\s*\(\s*int\b`,
      S`\bcast\s*\([^)]{0,60}\bas\s+(?:int|char|varchar|numeric|text|signed)\b`,
      S`\bcase\s+when\b[^;]{0,80}\bthen\b`,
      S`\bcha?r\s*\(\s*\d+\s*\)`,
      // A string closed, then a comment or a new statement: "admin'--", "1'; DROP TABLE".
      S`['"]\s*(?:--|#|\/\*|;\s*(?:drop|select|insert|update|delete|exec|declare|shutdown|waitfor|if\s*\())`,
      // A condition a database evaluates: "IIF(7907=8407,7907,1/0)", "IF(4288=4977) SELECT".
      S`\bi?if\s*\(\s*\d+\s*[=<>]\s*\d+\s*[,)]`,
      S`\/\*!\d{0,5}`,
      S`;\s*(?:drop\s+table|select\s|insert\s+into|update\s+\w+\s+set|delete\s+from|exec(?:ute)?\s|declare\s+@|shutdown\b|waitfor\s)`,
      S`\border\s+by\s+\d+\s*(?:--|#)`,
      S`\b(?:insert\s+into|drop\s+table|delete\s+from|xp_cmdshell|exec\s+master\.)`,
      S`\bdeclare\s+@\w+`,
      S`\b(?:lo_get|lo_import|pg_read_file|current_setting)\s*\(`,
    ),
  },
  {
    kind: 'command-injection',
    name: 'Command injection probe',
    url: 'https://owasp.org/www-community/attacks/Command_Injection',
    // A shell metacharacter before a command a probe runs; "; " is everywhere in real headers
    // ("; id;" is Indonesian, "; Cat Tablet" a device), so a command after it counts only when
    // unmistakable, or when ";" is not followed by a space as every header's list separator is.
    rules: [
      ...either(
        S`\$\(\s*[a-z]`,
        S`\x60\s*(?:(?:\/usr)?\/bin\/)?(?:id|whoami|uname|cat|sleep|nslookup|ping|curl|wget|echo|ls|ifconfig|dir)\b`,
        S`(?:[;&|\x60]|\$\(|%0a|%0d|%3b|%7c|%26)\s*(?:(?:\/usr)?\/s?bin\/)?(?:whoami|uname|nslookup|ifconfig|ipconfig|netstat|wget\s|curl\s|ping\s+-|sleep\s+\d|timeout\s+\/t|start-sleep\b|cat\s+\/|echo\s|powershell|bash\s+-|sh\s+-c|dir\s+[a-z]:)`,
        S`(?:[&|\x60]|\$\(|%0a|%0d|%7c|%26)\s*id\s*(?:[;&|\x60)]|%0a|$)`,
        S`\|\s*\/(?:usr\/)?s?bin\/`,
        S`\/dev\/(?:tcp|udp)\/`,
        S`\bchmod\s+(?:[0-7]{3,4}|\+x)\s`,
        S`\b(?:wget|curl)\s[^;|&]{0,200}(?:-O\s*\/tmp\/|\|\s*(?:ba)?sh\b)`,
        S`\/bin\/(?:ba|z|da)?sh\b`,
        S`\/bin\/(?:ls|cat|id|uname|ping|nc|busybox)\b`,
        // A command between escaped line breaks, as a list of payloads writes them: "\nid\n".
        S`\\n\s*(?:id|ls|pwd|whoami|uname|dir)(?=\\n|[;|&]|$)`,
        S`\|\s*(?:ba)?sh\b`,
        S`\bcmd(?:\.exe)?\s+\/c\b`,
        S`\bnslookup\s+[-\w]`,
        S`\|\|\s*(?:ping|nslookup|sleep|curl|wget|id|whoami)\b`,
      ),
      // A command right after ";", "|" or "&", in the lower case shells take ("a;id", "|ls -la"; a
      // header's "U;Id;" is a locale). "ls=DAM" in an app's key=value list is not a command.
      /(?:[;|&]|%3[bB]|%7[cC]|%26)(?:id|ls|pwd|whoami|uname|ifconfig|netstat|dir)(?=$|[\s;|&%)\x60])/,
    ],
  },
  {
    kind: 'path-traversal',
    name: 'Path traversal probe',
    url: 'https://owasp.org/www-community/attacks/Path_Traversal',
    rules: either(
      S`(?:\.\.|%2e%2e|%252e%252e|\.%2e|%2e\.|%c0%ae%c0%ae|%uff0e%uff0e)(?:[\/\\]|%2f|%5c|%252f|%255c|%25%2f|%25%5c|%c0%af|%c1%9c|%25c0%25af|%e0%80%af|%u2215|%u2216)`,
      S`\b[a-z]:[\\\/](?:windows|winnt|inetpub|boot\.ini)\b`,
      S`(?:^|[\/\\])(?:etc[\/\\](?:passwd|shadow|hosts|group|issue)|proc[\/\\](?:self|version|\d+)\b|windows[\/\\]win\.ini|boot\.ini|win\.ini|web-inf[\/\\]web\.xml|root[\/\\]\.ssh[\/\\])`,
      S`\bfile:\/\/\/`,
      S`\b(?:php:\/\/(?:filter|input|stdin)|phar:\/\/|expect:\/\/)`,
      S`^\.{4,}`,
      // A server's own file as the whole value, or after a shell or SQL character: "/var/log/apache2/access.log".
      S`(?:^|[\s'"=;|&(])\/(?:etc|proc|root|var\/(?:log|www|lib)|usr\/local|opt)\/[\w.-]`,
    ),
  },
  {
    kind: 'request-forgery',
    name: 'Server-side request forgery probe',
    url: 'https://owasp.org/www-community/attacks/Server_Side_Request_Forgery',
    // Cloud metadata services a server would fetch for the attacker (AWS, GCP, Azure, Alibaba, ECS).
    rules: either(S`\b169\.254\.169\.254\b`, S`\bmetadata\.google\.internal\b`, S`\/latest\/meta-data\b`, S`\b100\.100\.100\.200\b`, S`\b169\.254\.170\.2\b`, S`\[?fd00:ec2::254\]?`),
  },
  {
    kind: 'crlf-injection',
    name: 'CRLF injection probe',
    url: 'https://owasp.org/www-community/vulnerabilities/CRLF_Injection',
    // An encoded line break, then a header of the attacker's ("%0d%0aSet-Cookie: x=1"), also in the
    // UTF-8 forms that some servers fold into CR and LF ("%E5%98%8A%E5%98%8D").
    // (Not a backslash and "n": a real Baiduspider-image header carries one, from its own logging.)
    // One escape, not a run: a header matches when the last of any run does, and "+" retried
    // the run from each of its escapes (quadratic in a run of %0d).
    rules: either(S`(?:%0d|%0a|%e5%98%8a|%e5%98%8d)\s*[a-z][\w-]{1,40}\s*:`),
  },
];

/** Each kind's agent record with its rules, in the order they are tried. */
const PROBES: readonly { readonly agent: Agent; readonly rules: readonly RegExp[] }[] = KINDS.map(({ kind, name, url, rules }) => ({
  agent: Object.freeze({
    id: `${PROBE_ID_PREFIX}${kind}`,
    name,
    type: 'Security Scanner',
    operator: 'Unknown',
    url,
    match: Object.freeze({}),
    // Nothing for robots.txt: a probe reads none.
    robots_tokens: Object.freeze([]),
    description: 'Not in the catalog: an attack payload sent as the User-Agent (Log4Shell and Shellshock in any header, Log4Shell in the path too), named by what it tries.',
  }),
  rules,
}));
const PROBE_BY_ID: ReadonlyMap<string, Agent> = new Map(PROBES.map(({ agent }) => [agent.id, agent]));
const LOG4SHELL = PROBE_BY_ID.get(`${PROBE_ID_PREFIX}log4shell`)!;
const SHELLSHOCK = PROBE_BY_ID.get(`${PROBE_ID_PREFIX}shellshock`)!;
const LOG4SHELL_RULES = PROBES.find(({ agent }) => agent === LOG4SHELL)!.rules;
/** The Log4Shell probe, when `text` holds a lookup. */
const lookupIn = (text: string): Agent | undefined => (LOG4SHELL_RULES.some((rule) => rule.test(text)) ? LOG4SHELL : undefined);

/** Whether an agent id is an attack probe's (`probe:sql-injection`). */
export function isAttackProbeId(id: string): boolean {
  return id.startsWith(PROBE_ID_PREFIX);
}

/** The attack probe an id names, if any. */
export function attackProbeById(id: string): Agent | undefined {
  return PROBE_BY_ID.get(id);
}

/**
 * The attack probe a User-Agent header is, if it carries a payload; the first kind whose rule
 * matches. For the matcher, which calls it only when its scan saw a payload byte or word.
 */
export function attackProbeIn(userAgent: string): Agent | undefined {
  return inDecodings(userAgent, firstKindIn);
}

/**
 * What `find` names in `text` as it is or, for a percent-encoded payload ("1%27%20or%20%271%27=%271"),
 * decoded once and, if still encoded, twice.
 */
function inDecodings(text: string, find: (text: string) => Agent | undefined): Agent | undefined {
  const found = find(text);
  if (found !== undefined || !PERCENT_ESCAPE.test(text)) return found;
  const once = percentDecoded(text);
  return find(once) ?? (PERCENT_ESCAPE.test(once) ? find(percentDecoded(once)) : undefined);
}

/**
 * The probe the request's headers or its path carry, if any. Scanners spray Log4Shell lookups
 * over every header a server might log (Referer, X-Api-Version, X-Forwarded-For, Cookie) and the
 * path, and Shellshock over every header a CGI script receives as a variable, often behind a
 * browser's User-Agent. Only these two kinds are read there: their grammar is in no real value,
 * while the other kinds' shapes (a quote, `<`, `../`, `;`) are ordinary in a Cookie or a
 * Referer's query. The User-Agent is the matcher's to read. A value with no `{` costs one search.
 */
export function attackProbeInRequest(headers: ReadonlyMap<string, string>, path: string | undefined): Agent | undefined {
  let probe: Agent | undefined;
  headers.forEach((value, name) => {
    if (probe === undefined && name !== 'user-agent' && value.includes('{')) probe = probeInHeaderValue(value);
  });
  if (probe !== undefined || path === undefined) return probe;
  return probeInPath(path);
}

// Bash reads a function from a variable only when the value starts with one.
const SHELLSHOCK_AT_START = /^\s*\(\s*\)\s*\{/;

function probeInHeaderValue(value: string): Agent | undefined {
  return SHELLSHOCK_AT_START.test(value) ? SHELLSHOCK : lookupIn(value);
}

// A `{` as itself, percent-encoded, or encoded twice (`%257B`).
const MAY_HOLD_LOOKUP = /\{|%7b|%25/i;

/** A Log4Shell lookup in the path or query, as the server decodes it (once, or twice). */
function probeInPath(path: string): Agent | undefined {
  return MAY_HOLD_LOOKUP.test(path) ? inDecodings(path, lookupIn) : undefined;
}

function firstKindIn(text: string): Agent | undefined {
  return PROBES.find(({ rules }) => rules.some((rule) => rule.test(text)))?.agent;
}

const PERCENT_ESCAPE = /%[0-9a-f]{2}/i;

/** Each %XX escape as the byte it stands for (a Latin-1 character: a malformed UTF-8 sequence cannot throw). */
function percentDecoded(text: string): string {
  return text.replace(/%([0-9a-f]{2})/gi, (_escape, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}
