// The client-IP rule: header order, X-Forwarded-For / Forwarded hop selection, validation.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CLOUDFLARE_IP_RANGES, createClientIpRule } from '../../src/index.js';
import { clientAddressFromPeer, clientIpHeader, remoteAddrPeerRule, parseClientAddress, parseIpLiteral } from '../../src/verify/client-ip.js';
import { normalizeIpAddress } from '../../src/verify/ip-ranges/ip-address.js';

const headers = (entries: Record<string, string>) => new Map(Object.entries(entries));

describe('parseClientAddress', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    [' 192.0.2.1 ', '192.0.2.1'],
    ['192.0.2.1:8080', '192.0.2.1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['[2001:DB8::1]:443', '2001:db8::1'],
    ['2001:db8:0::1', '2001:db8::1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['[fe80::1%25eth0]:80', 'fe80::1'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['[::ffff:192.0.2.1]:80', '192.0.2.1'],
  ])('%j -> %s', (input, expected) => {
    expect(parseClientAddress(input)).toBe(expected);
  });

  it.each(['unknown', '_hidden', '_SEVKISEK', '', 'example.com', '192.0.2.1:port', '192.0.2.1:123456', '[2001:db8::1', '[192.0.2.1]', '[2001:db8::1]x', '1.2.3.4.5', '<script>'])(
    'rejects %j',
    (input) => {
      expect(parseClientAddress(input)).toBeUndefined();
    },
  );
});

describe('createClientIpRule defaults', () => {
  const rule = createClientIpRule();

  it('consults cf-connecting-ip, true-client-ip, x-real-ip, x-forwarded-for, forwarded in that order', () => {
    const all = { 'cf-connecting-ip': '192.0.2.1', 'true-client-ip': '192.0.2.2', 'x-real-ip': '192.0.2.3', 'x-forwarded-for': '192.0.2.4', forwarded: 'for=192.0.2.5' };
    expect(rule(headers(all))).toBe('192.0.2.1');
    const { 'cf-connecting-ip': _a, ...noCf } = all;
    expect(rule(headers(noCf))).toBe('192.0.2.2');
    const { 'true-client-ip': _b, ...noTrue } = noCf;
    expect(rule(headers(noTrue))).toBe('192.0.2.3');
    const { 'x-real-ip': _c, ...noReal } = noTrue;
    expect(rule(headers(noReal))).toBe('192.0.2.4');
    const { 'x-forwarded-for': _d, ...onlyForwarded } = noReal;
    expect(rule(headers(onlyForwarded))).toBe('192.0.2.5');
    expect(rule(headers({}))).toBeUndefined();
  });

  it('takes the rightmost public X-Forwarded-For hop, which the client cannot choose', () => {
    expect(rule(headers({ 'x-forwarded-for': '66.249.66.1, 203.0.113.9' }))).toBe('203.0.113.9');
    expect(rule(headers({ 'x-forwarded-for': '66.249.66.1,2001:db8::7' }))).toBe('2001:db8::7');
    expect(rule(headers({ 'x-forwarded-for': '[2001:db8::7]:1234' }))).toBe('2001:db8::7');
  });

  it('walks past non-public hops (the site\'s own proxies) to the first public one', () => {
    expect(rule(headers({ 'x-forwarded-for': '132.196.86.7, 10.0.0.1' }))).toBe('132.196.86.7');
    expect(rule(headers({ 'x-forwarded-for': '6.6.6.6, 132.196.86.7, 172.16.0.1, 192.168.0.1, 100.64.0.1, 127.0.0.1, 169.254.0.1' }))).toBe('132.196.86.7');
    expect(rule(headers({ 'x-forwarded-for': '2001:4860::1, fd00::1, fe80::2%eth0, ::1' }))).toBe('2001:4860::1');
    expect(rule(headers({ forwarded: 'for=66.249.66.1, for="[fc00::1]:80", for=10.0.0.1' }))).toBe('66.249.66.1');
    // Documentation ranges are ordinary addresses.
    expect(rule(headers({ 'x-forwarded-for': '66.249.66.1, 192.0.2.1' }))).toBe('192.0.2.1');
    expect(rule(headers({ 'x-forwarded-for': '66.249.66.1, 198.51.100.1, 10.0.0.1' }))).toBe('198.51.100.1');
    expect(rule(headers({ 'x-forwarded-for': '66.249.66.1, 2001:db8::1' }))).toBe('2001:db8::1');
    // Only non-public hops: the leftmost, the one farthest from the site.
    expect(rule(headers({ 'x-forwarded-for': '192.168.1.2, 10.0.0.1' }))).toBe('192.168.1.2');
    expect(rule(headers({ 'x-forwarded-for': '127.0.0.1' }))).toBe('127.0.0.1');
    // An unreadable hop reached on the walk ends it: nothing left of it can be vouched for.
    expect(rule(headers({ 'x-forwarded-for': '66.249.66.1, unknown, 10.0.0.1' }))).toBeUndefined();
    expect(rule(headers({ 'x-forwarded-for': ',10.0.0.1' }))).toBeUndefined();
    // Single-address headers are taken as they are.
    expect(rule(headers({ 'x-real-ip': '10.0.0.1' }))).toBe('10.0.0.1');
  });

  it('walks X-Forwarded-For as a reference walk over the split list does', () => {
    const nonPublic = ['10.1.2.3', '172.31.0.1', '192.168.9.9', '100.127.0.1', '127.0.0.2', '169.254.1.1', '0.0.0.0', '::1', '::', 'fd00::2', 'fe80::3', '::ffff:10.0.0.9'];
    const hop = fc.oneof(fc.constantFrom(...nonPublic), fc.constantFrom('', ' ', '192.0.2.1', ' 203.0.113.7 ', '[2001:db8::1]:443', '10.0.0.1:80', 'unknown', 'garbage'), fc.string({ maxLength: 6 }));
    const isNonPublic = (address: string) => nonPublic.map(normalizeIpAddress).includes(address) || /^(10\.|127\.|192\.168\.)/.test(address) || address === '::1' || /^(fd|fe80)/.test(address);
    fc.assert(
      fc.property(fc.array(hop, { minLength: 1, maxLength: 6 }), (hops) => {
        const value = hops.join(',');
        const parts = value.split(',');
        let expected: string | undefined;
        for (let i = parts.length - 1; i >= 0; i--) {
          expected = parseClientAddress(parts[i]!);
          if (expected === undefined || i === 0 || !isNonPublic(expected)) break;
        }
        expect(rule(headers({ 'x-forwarded-for': value }))).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('does not fall back to a later header when the first present one is garbage', () => {
    expect(rule(headers({ 'x-real-ip': 'garbage', 'x-forwarded-for': '192.0.2.4' }))).toBeUndefined();
    expect(rule(headers({ 'x-forwarded-for': '192.0.2.4, unknown' }))).toBeUndefined();
  });

  it('refuses a repeated single-address header as ambiguous', () => {
    expect(rule(headers({ 'x-real-ip': '192.0.2.1, 192.0.2.2' }))).toBeUndefined();
  });

  it('names the header an address came from: the first of its headers present', () => {
    expect(clientIpHeader(rule, headers({ 'x-forwarded-for': '192.0.2.4', 'x-real-ip': '192.0.2.3' }))).toBe('x-real-ip');
    expect(clientIpHeader(rule, headers({ forwarded: 'for=192.0.2.5' }))).toBe('forwarded');
    expect(clientIpHeader(createClientIpRule({ headers: ['Fly-Client-IP'] }), headers({ 'fly-client-ip': '192.0.2.6', 'x-real-ip': '192.0.2.3' }))).toBe('fly-client-ip');
    expect(clientIpHeader(rule, headers({}))).toBeUndefined();
    // A plain function does not say which headers it reads.
    expect(clientIpHeader(() => '192.0.2.1', headers({ 'x-real-ip': '192.0.2.3' }))).toBeUndefined();
  });
});

describe('RFC 7239 Forwarded', () => {
  const rule = createClientIpRule({ headers: ['forwarded'] });

  it.each([
    ['for=192.0.2.43', '192.0.2.43'],
    ['For="[2001:db8:cafe::17]:4711"', '2001:db8:cafe::17'],
    ['for=192.0.2.60;proto=http;by=203.0.113.43', '192.0.2.60'],
    ['proto=https;for="192.0.2.61:8443"', '192.0.2.61'],
    ['for=192.0.2.43, for=198.51.100.17', '198.51.100.17'],
    ['for=192.0.2.43, for="[2001:db8::1]"', '2001:db8::1'],
    ['for="_gazonk"', undefined],
    ['for=unknown', undefined],
    ['for=192.0.2.43, proto=https', undefined],
    ['for="192.0.2.1, 10.0.0.1";by=x', undefined],
    ['for="\\192.0.2.7"', '192.0.2.7'],
    ['', undefined],
    // A quote left open by the client swallows the element its proxy appended: unreadable, not the client's pick.
    ['for=132.196.86.1;x=", for=198.51.100.77', undefined],
    ['for="132.196.86.1, for=198.51.100.77', undefined],
  ])('%j -> %s', (value, expected) => {
    expect(rule(headers({ forwarded: value }))).toBe(expected);
  });
});

describe('trusted proxies', () => {
  it('skips a count of rightmost hops', () => {
    const rule = createClientIpRule({ headers: ['x-forwarded-for'], trustedProxies: 1 });
    expect(rule(headers({ 'x-forwarded-for': '203.0.113.1, 192.0.2.9, 10.0.0.2' }))).toBe('192.0.2.9');
    expect(rule(headers({ 'x-forwarded-for': '10.0.0.2' }))).toBeUndefined();
    const forwarded = createClientIpRule({ headers: ['forwarded'], trustedProxies: 2 });
    expect(forwarded(headers({ forwarded: 'for=198.51.100.1, for=10.0.0.1, for=10.0.0.2' }))).toBe('198.51.100.1');
  });

  it('picks the same X-Forwarded-For hop as splitting the list at every comma', () => {
    const hop = fc.oneof(fc.constantFrom('', ' ', '192.0.2.1', ' 203.0.113.7 ', '[2001:db8::1]:443', 'unknown', 'garbage'), fc.string({ maxLength: 6 }));
    fc.assert(
      fc.property(fc.array(hop, { minLength: 1, maxLength: 6 }), fc.integer({ min: 0, max: 7 }), (hops, skip) => {
        const value = hops.join(',');
        const parts = value.split(',');
        const expected = parts[parts.length - 1 - skip];
        const rule = createClientIpRule({ headers: ['x-forwarded-for'], trustedProxies: skip });
        expect(rule(headers({ 'x-forwarded-for': value }))).toBe(expected === undefined ? undefined : parseClientAddress(expected));
      }),
      { numRuns: 500 },
    );
  });

  it('walks past addresses in trusted CIDRs and stops at the first outside them', () => {
    const rule = createClientIpRule({ headers: ['x-forwarded-for', 'forwarded'], trustedProxies: ['10.0.0.0/8', '2001:db8:ffff::/48', '198.51.100.7'] });
    expect(rule(headers({ 'x-forwarded-for': '66.249.66.1, 203.0.113.5, 10.1.2.3, 198.51.100.7' }))).toBe('203.0.113.5');
    expect(rule(headers({ 'x-forwarded-for': '66.249.66.1, 2001:db8:ffff::1' }))).toBe('66.249.66.1');
    expect(rule(headers({ 'x-forwarded-for': '10.0.0.1, 10.0.0.2' }))).toBe('10.0.0.1');
    expect(rule(headers({ 'x-forwarded-for': '66.249.66.1, garbage, 10.0.0.2' }))).toBeUndefined();
    expect(rule(headers({ forwarded: 'for=192.0.2.1, for="[2001:db8:ffff::2]:80"' }))).toBe('192.0.2.1');
  });
});

describe('the client address of a request received from a peer', () => {
  const xff = (value: string) => headers({ 'x-forwarded-for': value });

  it('believes the headers only when the peer is one of the proxies the rule walks past', () => {
    const rule = createClientIpRule();
    // A private peer is the site's own proxy: its forwarded address decides.
    expect(clientAddressFromPeer(rule, xff('203.0.113.7'), '10.0.0.2')).toBe('203.0.113.7');
    expect(clientAddressFromPeer(rule, xff('198.51.100.1, 203.0.113.7'), '::ffff:127.0.0.1')).toBe('203.0.113.7');
    // A public peer speaks for itself, whatever it forwards.
    expect(clientAddressFromPeer(rule, xff('203.0.113.7'), '198.51.100.9')).toBe('198.51.100.9');
    // Nothing forwarded: the peer; no peer: the headers.
    expect(clientAddressFromPeer(rule, headers({}), '10.0.0.2')).toBe('10.0.0.2');
    expect(clientAddressFromPeer(rule, xff('203.0.113.7'), undefined)).toBe('203.0.113.7');
  });

  it("does not believe a public peer's headers by default, Cloudflare's included: a Worker of anyone's can connect from its ranges with a CF-Connecting-IP of its choice", () => {
    const rule = createClientIpRule();
    const viaCloudflare = headers({ 'cf-connecting-ip': '66.249.66.1', 'x-forwarded-for': '66.249.66.1' });
    expect(clientAddressFromPeer(rule, viaCloudflare, '104.16.0.1')).toBe('104.16.0.1');
    // Given as trustedProxies, Cloudflare's ranges are believed: the list, or "cloudflare" for it beside other CIDRs.
    expect(clientAddressFromPeer(createClientIpRule({ trustedProxies: CLOUDFLARE_IP_RANGES }), viaCloudflare, '104.16.0.1')).toBe('66.249.66.1');
    const named = createClientIpRule({ trustedProxies: ['10.0.0.0/8', 'Cloudflare'] });
    for (const peer of ['104.16.0.1', '2a06:98c0::1', '10.1.2.3']) expect(clientAddressFromPeer(named, viaCloudflare, peer), peer).toBe('66.249.66.1');
    expect(clientAddressFromPeer(named, viaCloudflare, '198.51.100.9')).toBe('198.51.100.9');
    expect(() => createClientIpRule({ trustedProxies: ['cloudflare.com'] })).toThrow(/trustedProxies\[0\] is not a valid CIDR/);
  });

  it('follows an explicit trustedProxies', () => {
    const cidrs = createClientIpRule({ trustedProxies: ['198.51.100.0/24'] });
    expect(clientAddressFromPeer(cidrs, xff('203.0.113.7'), '198.51.100.9')).toBe('203.0.113.7');
    expect(clientAddressFromPeer(cidrs, xff('203.0.113.7'), '10.0.0.2')).toBe('10.0.0.2');
    // A hop count declares a proxy in front, whatever its address.
    const count = createClientIpRule({ headers: ['x-forwarded-for'], trustedProxies: 0 });
    expect(clientAddressFromPeer(count, xff('203.0.113.7'), '198.51.100.9')).toBe('203.0.113.7');
    // A plain function cannot say whether the peer is a proxy: the peer.
    expect(clientAddressFromPeer(() => '203.0.113.7', xff('203.0.113.7'), '198.51.100.9')).toBe('198.51.100.9');
  });

  it("believes Cloudflare's CF-Connecting-IP from Cloudflare's published ranges only", () => {
    const rule = createClientIpRule({ headers: ['cf-connecting-ip'], trustedProxies: CLOUDFLARE_IP_RANGES });
    const viaCloudflare = headers({ 'cf-connecting-ip': '66.249.66.1' });
    // An edge of each family, the first and last addresses of a range, and IPv4-mapped as node:net reports it.
    for (const edge of ['172.70.1.1', '173.245.48.0', '104.27.255.255', '::ffff:162.158.4.2', '2606:4700:10::6816:1', '2a06:98c7:ffff::1']) {
      expect(clientAddressFromPeer(rule, viaCloudflare, edge), edge).toBe('66.249.66.1');
    }
    // Straight to the server (just past a range, or anywhere else): the sender's own address.
    for (const direct of ['104.28.0.1', '173.245.64.1', '81.2.69.160', '2606:4701::1']) {
      expect(clientAddressFromPeer(rule, viaCloudflare, direct), direct).toBe(direct);
    }
  });

  it('reads IP literals given as data', () => {
    expect(parseIpLiteral('::ffff:66.249.66.1')).toBe('66.249.66.1');
    expect(parseIpLiteral('2001:DB8::0:1')).toBe('2001:db8::1');
    expect(parseIpLiteral('fe80::1%eth0')).toBe('fe80::1');
    for (const bad of ['66.249.66.1:443', '[2001:db8::1]', 'example.com', '', '1.2.3', '01.2.3.4']) expect(parseIpLiteral(bad)).toBeUndefined();
  });
});

describe('a rule that trusts no header', () => {
  it('gives no address from any header, and the peer when there is one', () => {
    const none = createClientIpRule({ headers: [] });
    const forged = headers({ 'x-forwarded-for': '66.249.66.1', 'x-real-ip': '66.249.66.1', 'cf-connecting-ip': '66.249.66.1', forwarded: 'for=66.249.66.1' });
    expect(none(forged)).toBeUndefined();
    expect(none.headers).toEqual([]);
    expect(clientAddressFromPeer(none, forged, '10.0.0.2')).toBe('10.0.0.2');
    expect(clientAddressFromPeer(none, forged, undefined)).toBeUndefined();
  });
});

describe('configuration is validated at creation', () => {
  it.each([
    [{ headers: ['x forwarded'] }, RangeError, 'headers[0] must be a header name, got "x forwarded"'],
    [{ headers: [42] }, TypeError, 'headers[0] must be a string, got 42'],
    [{ headers: 'x-real-ip' }, TypeError, 'headers must be an array of header names, got x-real-ip'],
    [{ trustedProxies: -1 }, RangeError, 'trustedProxies must be an integer from 0 to 64 or a list of CIDRs, got -1'],
    [{ trustedProxies: 1.5 }, RangeError, 'trustedProxies must be an integer from 0 to 64 or a list of CIDRs, got 1.5'],
    [{ trustedProxies: ['10.0.0.1/8'] }, RangeError, 'trustedProxies[0] is not a valid CIDR (host-bits-set): "10.0.0.1/8"'],
    [{ trustedProxies: ['nope'] }, RangeError, 'trustedProxies[0] is not a valid CIDR (bad-address): "nope"'],
    [{ trustedProxies: 'all' }, TypeError, 'trustedProxies must be a number or an array of CIDRs, got all'],
  ])('%j', (options, type, message) => {
    expect(() => createClientIpRule(options as never)).toThrow(new type(message));
  });

  it('accepts mixed-case header names', () => {
    expect(createClientIpRule({ headers: ['X-Client-IP'] })(headers({ 'x-client-ip': '192.0.2.1' }))).toBe('192.0.2.1');
  });
});

describe('hostile header values', () => {
  it('never throw and yield only canonical addresses', () => {
    const rules = [createClientIpRule(), createClientIpRule({ headers: ['forwarded'], trustedProxies: ['10.0.0.0/8'] }), createClientIpRule({ headers: ['x-forwarded-for'], trustedProxies: 2 })];
    const piece = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom('for=', '"', ',', ';', '[', ']', ':', '%', '\\', 'unknown', '_x', '10.1.2.3', '2001:db8::1', '::ffff:1.2.3.4', '192.0.2.1:80'),
    );
    const value = fc.array(piece, { maxLength: 12 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.constantFrom('x-forwarded-for', 'forwarded', 'x-real-ip'), value, (name, text) => {
        for (const rule of rules) {
          const result = rule(headers({ [name]: text }));
          if (result !== undefined) expect(normalizeIpAddress(result)).toBe(result);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('a rule answers each request alike, whatever peers it saw before (it remembers the last peer it parsed)', () => {
    const peer = fc.constantFrom('127.0.0.1', '::ffff:127.0.0.1', '10.0.0.2', '203.0.113.9', '::1', '2001:db8::7', ' 10.0.0.2', '10.0.0.2:80', 'nonsense', '');
    const forwarded = fc.constantFrom('203.0.113.7', '198.51.100.1, 10.0.0.3', ' 192.0.2.9 ', '2001:db8::1', 'unknown', '10.1.1.1');
    const kinds = [{}, { trustedProxies: ['10.0.0.0/8'] }, { trustedProxies: 1 }] as const;
    fc.assert(
      fc.property(fc.array(fc.tuple(peer, forwarded), { minLength: 1, maxLength: 12 }), (requests) => {
        for (const options of kinds) {
          const longLived = createClientIpRule({ headers: ['x-forwarded-for'], ...options });
          for (const [from, value] of requests) {
            const fresh = createClientIpRule({ headers: ['x-forwarded-for'], ...options });
            const map = headers({ 'x-forwarded-for': value });
            expect(longLived.fromPeer!(map, from)).toBe(fresh.fromPeer!(map, from));
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("remoteAddrPeerRule: the address of a visit whose integration recorded the socket's as Remote-Addr (the WordPress plugin)", () => {
  const rule = remoteAddrPeerRule(createClientIpRule());
  const forged = { 'cf-connecting-ip': '132.196.86.0', 'true-client-ip': '132.196.86.0' };

  it("takes the socket address the site's integration recorded (Remote-Addr) as the peer: a visitor reaching the site directly cannot name its own address", () => {
    const direct = headers({ ...forged, 'remote-addr': '198.51.100.7' });
    expect(rule(direct)).toBe('198.51.100.7');
    expect(clientIpHeader(rule, direct)).toBe('remote-addr');
    // Behind the site's own proxy (a private Remote-Addr), the headers decide; behind Cloudflare, when its ranges are the rule's proxies.
    const viaProxy = headers({ 'x-forwarded-for': '203.0.113.7', 'remote-addr': '10.0.0.2' });
    expect(rule(viaProxy)).toBe('203.0.113.7');
    expect(clientIpHeader(rule, viaProxy)).toBe('x-forwarded-for');
    const viaCloudflare = headers({ 'cf-connecting-ip': '66.249.66.1', 'remote-addr': '172.64.0.1' });
    expect(rule(viaCloudflare)).toBe('172.64.0.1');
    const behindCloudflare = remoteAddrPeerRule(createClientIpRule({ trustedProxies: CLOUDFLARE_IP_RANGES }));
    expect(behindCloudflare(viaCloudflare)).toBe('66.249.66.1');
    expect(clientIpHeader(behindCloudflare, viaCloudflare)).toBe('cf-connecting-ip');
    // A proxy that forwarded nothing: its own address.
    expect(rule(headers({ 'remote-addr': '10.0.0.2' }))).toBe('10.0.0.2');
  });

  it('reads the headers as they are when no Remote-Addr was recorded, as the rule it wraps does', () => {
    const plain = createClientIpRule();
    for (const entries of [forged, { 'x-forwarded-for': '198.51.100.1, 203.0.113.7' }, {}] as Record<string, string>[]) {
      expect(rule(headers(entries))).toBe(plain(headers(entries)));
      expect(clientIpHeader(rule, headers(entries))).toBe(clientIpHeader(plain, headers(entries)));
    }
  });
});
