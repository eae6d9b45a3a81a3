// Web Bot Auth verification throughput: agentwarden's full verification (parse + signature base
// + Ed25519, key cached) vs a bare node:crypto Ed25519 verify of the same bytes, and vs the
// `web-bot-auth` package's own verify, in one process. Run `npx tsup` first.
import crypto from 'node:crypto';
import { createCatalog, nobleEd25519, normalizeHeaders, webBotAuthVerifier, webCryptoEd25519 } from '../dist/index.js';
import { nodeEd25519 } from '../dist/node.js';
import { signatureHeaders, verify as peerVerify } from 'web-bot-auth';
import { signerFromJWK, verifierFromJWK } from 'web-bot-auth/crypto';
import { median } from './harness.mjs';

const RUNS = Number(process.env.RUNS ?? 7);
const ITERATIONS = Number(process.env.ITERATIONS ?? 3000);
const DIRECTORY = 'https://agent.test/.well-known/http-message-signatures-directory';

const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
const privateJwk = privateKey.export({ format: 'jwk' });
const publicJwk = { kty: 'OKP', crv: 'Ed25519', x: privateJwk.x };

// The signed request, made by the web-bot-auth package (legacy string Signature-Agent), so all
// three verifiers judge the same bytes. Real time: the peer reads Date.now() in verify.
const url = 'https://example.com/docs/page?lang=en';
const agentHeaders = { 'Signature-Agent': '"https://agent.test"' };
const nowMs = Date.now();
const signed = await signatureHeaders(new Request(url, { headers: agentHeaders }), await signerFromJWK(privateJwk), {
  created: new Date(nowMs),
  expires: new Date(nowMs + 3_600_000),
});
const rawHeaders = { Host: 'example.com', ...agentHeaders, Signature: signed.Signature, 'Signature-Input': signed['Signature-Input'] };

const catalog = createCatalog({
  version: 1,
  agents: [{ id: 'bench-bot', name: 'BenchBot', type: 'AI Agent', operator: 'Bench', url: 'https://agent.test/', match: { tokens: ['BenchBot'] }, robots_tokens: ['BenchBot'], signature_agents: ['https://agent.test'] }],
});
const agent = catalog.getAgent('bench-bot');
const body = new TextEncoder().encode(JSON.stringify({ keys: [publicJwk] }));
const fetchDirectory = async () => ({ status: 200, headers: new Headers({ 'cache-control': 'max-age=86400' }), body });
const context = { now: () => nowMs };
// What the engine hands a verifier: normalised headers built once per request.
const request = { headers: normalizeHeaders(rawHeaders), method: 'GET', path: '/docs/page?lang=en' };

const ours = (verifyEd25519) => {
  const verifier = webBotAuthVerifier({ fetchDirectory, verifyEd25519 });
  return async () => {
    const check = await verifier.verify(agent, request, context);
    if (check.outcome !== 'pass') throw new Error(`not verified: ${check.reason}`);
  };
};

// The exact signature base and signature bytes, for the bare crypto baseline.
const base = new TextEncoder().encode(
  `"@authority": example.com\n"signature-agent": "https://agent.test"\n"@signature-params": ${signed['Signature-Input'].slice('sig1='.length)}`,
);
const signature = Buffer.from(signed.Signature.slice('sig1=:'.length, -1), 'base64');
if (!crypto.verify(null, base, publicKey, signature)) throw new Error('baseline bytes do not verify');
const raw = () => {
  if (!crypto.verify(null, base, publicKey, signature)) throw new Error('raw verify failed');
};

const peerKey = await verifierFromJWK(publicJwk);
const peerRequest = new Request(url, { headers: { ...agentHeaders, Signature: signed.Signature, 'Signature-Input': signed['Signature-Input'] } });
const peer = async () => {
  await peerVerify(peerRequest, peerKey);
};
// Without crypto: what each library adds around Ed25519 (parsing, signature base, checks).
const noCrypto = async () => true;
const peerNoCrypto = async () => {
  await peerVerify(peerRequest, noCrypto);
};

async function timeRun(fn) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) await fn();
  return ITERATIONS / (Number(process.hrtime.bigint() - start) / 1e9);
}

const cases = [
  ['raw node:crypto verify (same bytes)', raw],
  ['agentwarden, nodeEd25519()', ours(nodeEd25519())],
  ['agentwarden, webCryptoEd25519()', ours(webCryptoEd25519())],
  ['agentwarden, nobleEd25519()', ours(nobleEd25519())],
  ['web-bot-auth 0.1.3 verify (WebCrypto)', peer],
  ['agentwarden, no crypto (overhead only)', ours(noCrypto)],
  ['web-bot-auth 0.1.3, no crypto (overhead)', peerNoCrypto],
];
// Warm up every case, then interleave the runs so machine noise hits all cases alike.
for (const [, fn] of cases) for (let i = 0; i < Math.min(500, ITERATIONS); i++) await fn();
const samples = Object.fromEntries(cases.map(([name]) => [name, []]));
for (let run = 0; run < RUNS; run++) for (const [name, fn] of cases) samples[name].push(await timeRun(fn));
const measured = {};
for (const [name] of cases) {
  measured[name] = median(samples[name]);
  console.log(`${name.padEnd(40)} ${Math.round(measured[name]).toLocaleString('en-US').padStart(10)} ops/s (median of ${RUNS} runs x ${ITERATIONS})`);
}
const ratio = (a, b) => (measured[a] / measured[b]).toFixed(2);
console.log('');
console.log(`agentwarden (node:crypto) / raw node:crypto: ${ratio('agentwarden, nodeEd25519()', 'raw node:crypto verify (same bytes)')}  (goal >= 0.80)`);
console.log(`agentwarden (WebCrypto)   / raw node:crypto: ${ratio('agentwarden, webCryptoEd25519()', 'raw node:crypto verify (same bytes)')}`);
console.log(`agentwarden (node:crypto) / web-bot-auth:    ${ratio('agentwarden, nodeEd25519()', 'web-bot-auth 0.1.3 verify (WebCrypto)')}  (goal > 1)`);
console.log(`agentwarden (WebCrypto)   / web-bot-auth:    ${ratio('agentwarden, webCryptoEd25519()', 'web-bot-auth 0.1.3 verify (WebCrypto)')}  (same crypto, goal > 1)`);
console.log(`agentwarden / web-bot-auth, both without crypto: ${ratio('agentwarden, no crypto (overhead only)', 'web-bot-auth 0.1.3, no crypto (overhead)')}`);
const overheadMicros = 1e6 / measured['agentwarden, no crypto (overhead only)'];
console.log(`agentwarden overhead per verification: ${overheadMicros.toFixed(1)} µs; raw Ed25519: ${(1e6 / measured['raw node:crypto verify (same bytes)']).toFixed(1)} µs`);
