// Independent sr25519 peer for tests/libsynapse/node_crosscheck_test.cpp: polkadot-js
// @polkadot/util-crypto (pure JS, @scure/sr25519 inside) and @polkadot/wasm-crypto (Rust
// schnorrkel 0.11 compiled to WASM), at the versions pinned in package.json / package-lock.json.
//
// Usage: node sr25519_peer.mjs [requests.jsonl]   (reads stdin when no file is given)
// One JSON object per input line; one JSON object per output line, in order, carrying the same
// "id". Byte strings are hex (with or without 0x). Requests:
//   {"id", "op":"verify", "public_key", "message", "signature"}
//       -> {"id", "polkadot_js": bool, "schnorrkel_wasm": bool}
//          (a verifier that throws on malformed input counts as false)
//   {"id", "op":"sign", "seed", "message"}          seed = 32-byte mini secret
//       -> {"id", "public_key", "secret_key" (64 bytes, ed25519 form), "polkadot_js": sig, "schnorrkel_wasm": sig}
//   {"id", "op":"sign_secret", "secret_key" (64 bytes, ed25519 form), "public_key", "message"}
//       -> {"id", "polkadot_js": sig, "schnorrkel_wasm": sig}
//   {"id", "op":"derive_soft_public", "public_key", "chain_code"}
//       -> {"id", "polkadot_js": public_key, "schnorrkel_wasm": public_key}
// A request that cannot be served gets {"id", "error": "..."}; a broken input line exits 1.
import { readFileSync } from 'node:fs';
import { hexToU8a, u8aToHex } from '@polkadot/util';
import {
  cryptoWaitReady, sr25519DerivePublic, sr25519PairFromSeed, sr25519Sign, sr25519Verify,
} from '@polkadot/util-crypto';
import * as wasm from '@polkadot/wasm-crypto';

const hex = (s) => hexToU8a(s.startsWith('0x') ? s : `0x${s}`);
const out = (o) => u8aToHex(o).slice(2);

function safeVerify(fn) {
  try {
    return fn() === true;
  } catch {
    return false;
  }
}

function serve(req) {
  switch (req.op) {
    case 'verify': {
      const pub = hex(req.public_key);
      const msg = hex(req.message);
      const sig = hex(req.signature);
      return {
        polkadot_js: safeVerify(() => sr25519Verify(msg, sig, pub)),
        schnorrkel_wasm: safeVerify(() => wasm.sr25519Verify(sig, msg, pub)),
      };
    }
    case 'sign': {
      const pair = sr25519PairFromSeed(hex(req.seed));
      const wasmPair = wasm.sr25519KeypairFromSeed(hex(req.seed)); // secret(64) || public(32)
      if (out(wasmPair.subarray(64)) !== out(pair.publicKey)) throw new Error('polkadot-js and wasm disagree on the public key');
      const msg = hex(req.message);
      return {
        public_key: out(pair.publicKey),
        secret_key: out(pair.secretKey),
        polkadot_js: out(sr25519Sign(msg, pair)),
        schnorrkel_wasm: out(wasm.sr25519Sign(wasmPair.subarray(64), wasmPair.subarray(0, 64), msg)),
      };
    }
    case 'sign_secret': {
      const secretKey = hex(req.secret_key);
      const publicKey = hex(req.public_key);
      const msg = hex(req.message);
      return {
        polkadot_js: out(sr25519Sign(msg, { publicKey, secretKey })),
        schnorrkel_wasm: out(wasm.sr25519Sign(publicKey, secretKey, msg)),
      };
    }
    case 'derive_soft_public': {
      const pub = hex(req.public_key);
      const cc = hex(req.chain_code);
      return {
        polkadot_js: out(sr25519DerivePublic(pub, cc)),
        schnorrkel_wasm: out(wasm.sr25519DerivePublicSoft(pub, cc)),
      };
    }
    default:
      throw new Error(`unknown op ${JSON.stringify(req.op)}`);
  }
}

await cryptoWaitReady();
if (!wasm.isReady()) await wasm.waitReady();

const input = readFileSync(process.argv[2] ?? 0, 'utf8');
const lines = [];
for (const line of input.split('\n')) {
  if (line.trim() === '') continue;
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    process.stderr.write(`sr25519_peer: not JSON: ${line.slice(0, 80)}\n`);
    process.exit(1);
  }
  try {
    lines.push(JSON.stringify({ id: req.id, ...serve(req) }));
  } catch (e) {
    lines.push(JSON.stringify({ id: req.id, error: String(e && e.message ? e.message : e) }));
  }
}
process.stdout.write(lines.length ? `${lines.join('\n')}\n` : '');
