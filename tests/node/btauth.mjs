// An independent btauth/1 (Bittensor SDK v11's signed HTTP requests) for the cross-implementation
// tests, written from the definition in docs/protocol.md, "btauth/1", with node's SHA-256 and
// @polkadot/util-crypto's sr25519 and ed25519. It shares no code with the C++ or the Python ends.
//
// As a library: buildPayload, signRequest, verifyRequest, devKey (below).
// As a program, for tests in other languages:
//   node btauth.mjs payload <scheme> <method> <target> <body-hex> <nonce> <sender> <receiver|->
//     prints the payload's bytes as hex
//   node btauth.mjs sign <uri> <scheme> <method> <target> <body-hex> <nonce> <receiver|->
//     prints the headers as one JSON object (receiver "-": unbound)
//   node btauth.mjs verify <headers-json> <body-hex> <method> <target> <self-ss58> <now-ns>
//       [require_receiver 1|0]
//     prints {"hotkey", "nonce", "crypto"} or {"error": "<class>", "why": "..."}
import { createHash } from 'node:crypto';
import {
  cryptoWaitReady, decodeAddress, ed25519PairFromSeed, ed25519Sign, ed25519Verify, encodeAddress,
  keyExtractSuri, keyFromPath, mnemonicToMiniSecret, sr25519PairFromSeed, sr25519Sign, sr25519Verify,
} from '@polkadot/util-crypto';
import { u8aToHex, hexToU8a } from '@polkadot/util';

export const PROTOCOL = 'btauth/1';
const DEV_PHRASE = 'bottom drive obey lake curtain smoke basket hold race lonely fit walk';

/** A development key (`//Alice`, `//Dave`, ...) as Substrate derives it, sr25519 or ed25519. */
export function devKey(uri, scheme = 'sr25519') {
  const seed = mnemonicToMiniSecret(DEV_PHRASE);
  const root = scheme === 'ed25519' ? ed25519PairFromSeed(seed) : sr25519PairFromSeed(seed);
  const { path } = keyExtractSuri(`${DEV_PHRASE}${uri}`);
  const pair = keyFromPath(root, path, scheme);
  return { ...pair, scheme, address: encodeAddress(pair.publicKey, 42) };
}

/** The signed bytes, as a UTF-8 string. `receiver` empty or absent: "-". */
export function buildPayload({ scheme, method, target, body, nonce, sender, receiver }) {
  const bodyHash = createHash('sha256').update(body ?? Buffer.alloc(0)).digest('hex');
  return [PROTOCOL, scheme, method.toUpperCase(), target, bodyHash, String(nonce), sender,
    receiver || '-'].join('\n');
}

/** The request's X-Bittensor-* headers, signed by `key` (devKey). */
export function signRequest(key, { method, target, body, receiver, nonce }) {
  const n = String(nonce ?? nowNs());
  const payload = buildPayload({ scheme: key.scheme, method, target, body, nonce: n, sender: key.address, receiver });
  const message = Buffer.from(payload, 'utf8');
  const sig = key.scheme === 'ed25519' ? ed25519Sign(message, key) : sr25519Sign(message, key);
  const h = {
    'X-Bittensor-Version': '1',
    'X-Bittensor-Hotkey': key.address,
    'X-Bittensor-Nonce': n,
    'X-Bittensor-Signature': u8aToHex(sig),
  };
  if (key.scheme !== 'sr25519') h['X-Bittensor-Crypto'] = key.scheme;
  if (receiver) h['X-Bittensor-Receiver'] = receiver;
  return h;
}

export class Refusal extends Error {
  constructor(kind, why) {
    super(`${kind}: ${why}`);
    this.kind = kind;
  }
}

/**
 * Verifies a request. `headers`: name -> value (any case; a repeated name is the caller's to
 * refuse). `seen`: a Set of "hotkey/nonce" already accepted (the replay store). Returns
 * {hotkey, nonce, crypto}; throws a Refusal named as the SDK's classes.
 */
export function verifyRequest(headers, body, { method, target, self, nowNs, maxAgeNs = 10_000_000_000n,
  skewNs = 2_000_000_000n, requireReceiver = true, seen = null }) {
  const h = {};
  for (const [k, v] of Object.entries(headers)) h[k.toLowerCase()] = v;
  const malformed = (why) => { throw new Refusal('MalformedAuth', why); };
  if (h['x-bittensor-version'] !== '1') malformed(`version ${h['x-bittensor-version']}`);
  const sender = h['x-bittensor-hotkey'] ?? '';
  let pub;
  try { pub = decodeAddress(sender); } catch (e) { malformed(`hotkey (${e.message})`); }
  const nonceText = h['x-bittensor-nonce'] ?? '';
  if (!/^(0|[1-9][0-9]{0,18})$/.test(nonceText)) malformed(`nonce '${nonceText}'`);
  const scheme = (h['x-bittensor-crypto'] ?? 'sr25519').toLowerCase();
  if (scheme !== 'sr25519' && scheme !== 'ed25519') malformed(`crypto ${scheme}`);
  const sigHex = (h['x-bittensor-signature'] ?? '').replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]{128}$/.test(sigHex)) malformed('signature');
  const receiver = h['x-bittensor-receiver'];
  if (receiver === undefined ? requireReceiver : receiver !== self)
    throw new Refusal('WrongReceiver', `receiver ${receiver}`);
  const nonce = BigInt(nonceText);
  if (nowNs - nonce > maxAgeNs || nonce - nowNs > skewNs) throw new Refusal('StaleRequest', `nonce ${nonceText}`);
  const message = Buffer.from(buildPayload({ scheme, method, target, body, nonce: nonceText, sender, receiver }), 'utf8');
  const sig = hexToU8a(`0x${sigHex}`);
  const ok = scheme === 'ed25519' ? ed25519Verify(message, sig, pub) : sr25519Verify(message, sig, pub);
  if (!ok) throw new Refusal('BadSignature', `does not verify as ${scheme}`);
  const key = `${sender}/${nonceText}`;
  if (seen) {
    if (seen.has(key)) throw new Refusal('ReplayedRequest', key);
    seen.add(key);
  }
  return { hotkey: sender, nonce: nonceText, crypto: scheme };
}

/** Nanoseconds since the epoch, now. */
export function nowNs() {
  return BigInt(Date.now()) * 1_000_000n;
}

async function main(argv) {
  await cryptoWaitReady();
  const [cmd, ...a] = argv;
  const body = (hex) => Buffer.from(hex, 'hex');
  if (cmd === 'payload') {
    const [scheme, method, target, bodyHex, nonce, sender, receiver] = a;
    const p = buildPayload({ scheme, method, target, body: body(bodyHex), nonce, sender, receiver: receiver === '-' ? '' : receiver });
    console.log(Buffer.from(p, 'utf8').toString('hex'));
  } else if (cmd === 'sign') {
    const [uri, scheme, method, target, bodyHex, nonce, receiver] = a;
    console.log(JSON.stringify(signRequest(devKey(uri, scheme), { method, target, body: body(bodyHex), nonce, receiver: receiver === '-' ? '' : receiver })));
  } else if (cmd === 'verify') {
    const [headersJson, bodyHex, method, target, self, now, requireReceiver = '1'] = a;
    try {
      console.log(JSON.stringify(verifyRequest(JSON.parse(headersJson), body(bodyHex), {
        method, target, self, nowNs: BigInt(now), requireReceiver: requireReceiver === '1',
      })));
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      console.log(JSON.stringify({ error: e.kind, why: e.message }));
    }
  } else {
    console.error('usage: node btauth.mjs payload|sign|verify ...');
    process.exit(2);
  }
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  await main(process.argv.slice(2));
}
