// An independent Epistula v2 receiver shaped like the subnets' reference verifiers, for
// tests/node/epistula_node_test.cpp: it checks requests made by our dendrite (and bt-dendrite
// epistula) from the definition in docs/protocol.md ("Epistula"), with node's own SHA-256 and
// signatureVerify from @polkadot/util-crypto.
//
// Usage: node epistula_verifier_peer.mjs <this receiver's hotkey, SS58>
// Prints one JSON line {"port": N, "hotkey": "<ss58>"} once listening on 127.0.0.1:<ephemeral>,
// then serves until stdin closes or it gets SIGTERM.
//
// Every request, any method and path: verified as below, then answered
//   200 {"signed_by", "uuid", "method", "path", "body": <the JSON body, null when empty>}
//   401 {"error": "<the first check that failed>"}
// Checks, in order: Epistula-Version 2; Epistula-Timestamp decimal milliseconds, at most 8 s old
// and 2 s ahead; Epistula-Uuid a lower-case uuid4, never seen before by this process (our
// dendrite must never repeat one); Epistula-Signed-By SS58; Epistula-Signed-For equal to this
// receiver's hotkey; Epistula-Request-Signature 0x + 128 hex digits verifying over
// "{sha256(body) hex}.{uuid}.{timestamp}.{signed_for}" for Signed-By; each header at most once;
// Content-Type application/json; a non-empty body is JSON.
import { createHash } from 'node:crypto';
import { cryptoWaitReady, decodeAddress, encodeAddress, signatureVerify } from '@polkadot/util-crypto';

import { serveReceiver } from './receiver_support.mjs';

const STALE_MS = 8000;
const AHEAD_MS = 2000;
const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

class Refusal extends Error {}
const check = (cond, what) => {
  if (!cond) throw new Refusal(what);
};

function headersOnce(req) {
  const h = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const n = req.rawHeaders[i].toLowerCase();
    check(!(n in h), `duplicate header ${req.rawHeaders[i]}`);
    h[n] = req.rawHeaders[i + 1];
  }
  return h;
}

function verify(req, raw, myHotkey, seen) {
  const h = headersOnce(req);
  check(h['epistula-version'] === '2', `Epistula-Version ${h['epistula-version']}`);
  const ts = h['epistula-timestamp'] ?? '';
  check(/^[0-9]{1,16}$/.test(ts), `Epistula-Timestamp not decimal milliseconds: '${ts}'`);
  const now = Date.now();
  check(Number(ts) + STALE_MS >= now, 'Request is too stale');
  check(Number(ts) <= now + AHEAD_MS, 'Request is from the future');
  const uuid = h['epistula-uuid'] ?? '';
  check(UUID4.test(uuid), `Epistula-Uuid not a uuid4: '${uuid}'`);
  check(!seen.has(uuid), 'Epistula-Uuid reused');
  const signedBy = h['epistula-signed-by'] ?? '';
  let pub;
  try {
    pub = decodeAddress(signedBy);
  } catch (e) {
    throw new Refusal(`Epistula-Signed-By not SS58 (${e.message})`);
  }
  check(encodeAddress(pub, 42) === signedBy, 'Epistula-Signed-By not SS58 format 42');
  const signedFor = h['epistula-signed-for'] ?? '';
  check(signedFor === myHotkey, `Epistula-Signed-For '${signedFor}' is not this receiver`);
  const sig = h['epistula-request-signature'] ?? '';
  check(/^0x[0-9a-f]{128}$/.test(sig), 'Epistula-Request-Signature not 0x + 128 hex digits');
  check((h['content-type'] ?? '') === 'application/json', `content-type ${h['content-type']}`);
  const message = `${createHash('sha256').update(raw).digest('hex')}.${uuid}.${ts}.${signedFor}`;
  const result = signatureVerify(message, sig, signedBy);
  check(result.isValid && result.crypto === 'sr25519', 'Signature Mismatch');
  seen.add(uuid);
  let body = null;
  if (raw.length > 0) {
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch (e) {
      throw new Refusal(`body is not JSON (${e.message})`);
    }
  }
  return { signed_by: signedBy, uuid, method: req.method, path: req.url, body };
}

async function main() {
  const myHotkey = process.argv[2];
  if (!myHotkey) throw new Error('usage: node epistula_verifier_peer.mjs <hotkey ss58>');
  await cryptoWaitReady();
  const seen = new Set();
  serveReceiver(myHotkey, (req, raw) => {
    try {
      return [200, verify(req, raw, myHotkey, seen)];
    } catch (e) {
      return [401, { error: e instanceof Refusal ? e.message : `peer error: ${e.stack}` }];
    }
  });
}

main().catch((e) => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
