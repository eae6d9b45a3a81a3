// IP-range lookup speed: ipRangeVerifier over every bundled list vs node:net BlockList (run `npx tsup` first).
import { BlockList } from 'node:net';
import { ipRangeVerifier, parseIpRangeList } from '../dist/index.js';
import { loadIpRangeLists } from '../dist/node.js';

const RUNS = 9;
// Rounds per run are calibrated so one run takes about 40 ms (BlockList is linear in the rules).
const RUN_MS = 40;

const lists = loadIpRangeLists();
const names = Object.keys(lists);
const agent = (id, ipRanges) => ({ id, name: id, type: 'Fetcher', operator: 'x', url: 'https://example.com', match: { tokens: [id] }, robots_tokens: [id], ip_ranges: ipRanges });
const allLists = agent('all', names);
const googlebot = agent('googlebot', ['google-common-crawlers.json']);
const context = { now: () => 0 };

const started = process.hrtime.bigint();
const verifier = ipRangeVerifier({ lists });
const compileMs = Number(process.hrtime.bigint() - started) / 1e6;

// The peer: one node:net BlockList per list, as a Node app would build it.
const blockLists = new Map(
  names.map((name) => {
    const block = new BlockList();
    for (const entry of lists[name].prefixes) {
      const cidr = entry.ipv4Prefix ?? entry.ipv6Prefix;
      if (typeof cidr !== 'string') continue;
      const [network, length] = cidr.split('/');
      block.addSubnet(network, Number(length), entry.ipv4Prefix ? 'ipv4' : 'ipv6');
    }
    return [name, block];
  }),
);

// Deterministic addresses: hits are the first host of published prefixes, misses come from documentation ranges.
let seed = 12345;
const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const prefixes = names.flatMap((name) => parseIpRangeList(lists[name], name).prefixes.map((p) => ({ name, ...p })));
const text = (p) => {
  const a = p.address;
  if (a.family === 4) {
    const v = (a.value + (p.length < 32 ? 1 : 0)) >>> 0;
    return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
  }
  const groups = a.words.flatMap((w) => [w >>> 16, w & 0xffff]).map((g) => g.toString(16));
  return p.length === 128 ? groups.join(':') : `${groups.slice(0, 7).join(':')}:1`;
};
const sample = (family, only) => {
  const pool = prefixes.filter((p) => p.address.family === family && (only === undefined || p.name === only));
  return Array.from({ length: 1024 }, () => text(pool[Math.floor(random() * pool.length)]));
};
const misses4 = Array.from({ length: 1024 }, (_, i) => `203.0.${113 + (i % 2)}.${i % 256}`);
const misses6 = Array.from({ length: 1024 }, (_, i) => `2001:db8:${(i * 7919).toString(16)}::${i.toString(16)}`);

function timeNs(addresses, lookup) {
  for (let i = 0; i < 3; i++) for (const ip of addresses) lookup(ip);
  const t = process.hrtime.bigint();
  for (const ip of addresses) lookup(ip);
  const roundMs = Number(process.hrtime.bigint() - t) / 1e6;
  const rounds = Math.max(1, Math.round(RUN_MS / Math.max(roundMs, 0.001)));
  const results = [];
  for (let run = 0; run < RUNS; run++) {
    const t0 = process.hrtime.bigint();
    for (let round = 0; round < rounds; round++) for (const ip of addresses) lookup(ip);
    results.push(Number(process.hrtime.bigint() - t0) / (rounds * addresses.length));
  }
  return results.sort((a, b) => a - b)[RUNS >> 1];
}

const ours = (agentRecord) => (ip) => verifier.verify(agentRecord, { headers: new Map(), clientIp: ip }, context).outcome === 'pass';
const peer = (agentRecord) => (ip) => {
  const family = ip.includes(':') ? 'ipv6' : 'ipv4';
  for (const name of agentRecord.ip_ranges) if (blockLists.get(name).check(ip, family)) return true;
  return false;
};

const cases = [
  ['googlebot list, IPv4 hit', googlebot, sample(4, 'google-common-crawlers.json'), true],
  ['googlebot list, IPv6 hit', googlebot, sample(6, 'google-common-crawlers.json'), true],
  ['googlebot list, IPv4 miss', googlebot, misses4, false],
  ['googlebot list, IPv6 miss', googlebot, misses6, false],
  ['all 18 lists, IPv4 hit', allLists, sample(4), true],
  ['all 18 lists, IPv6 hit', allLists, sample(6), true],
  ['all 18 lists, IPv4 miss', allLists, misses4, false],
  ['all 18 lists, IPv6 miss', allLists, misses6, false],
];

console.log(`ipRangeVerifier: ${names.length} lists, ${prefixes.length} prefixes, compiled in ${compileMs.toFixed(1)} ms`);
console.log(`median of ${RUNS} runs of ~${RUN_MS} ms over 1024 addresses; ns per lookup (verify() incl. address parse)\n`);
console.log(`${'case'.padEnd(28)}${'ours'.padStart(10)}${'BlockList'.padStart(12)}${'ours/peer'.padStart(12)}`);
for (const [label, agentRecord, addresses, expected] of cases) {
  for (const ip of addresses) {
    if (ours(agentRecord)(ip) !== expected || peer(agentRecord)(ip) !== expected) throw new Error(`${label}: ${ip} should be ${expected ? 'in' : 'outside'} the lists`);
  }
  const a = timeNs(addresses, ours(agentRecord));
  const b = timeNs(addresses, peer(agentRecord));
  console.log(`${label.padEnd(28)}${a.toFixed(0).padStart(10)}${b.toFixed(0).padStart(12)}${(a / b).toFixed(3).padStart(12)}`);
}
