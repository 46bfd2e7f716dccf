// An independent btauth/1 signer (tests/node/btauth.mjs, written from docs/protocol.md section 14
// with node's SHA-256 and @polkadot/util-crypto) against bt-axon's POST /echo, which accepts
// btauth/1 beside Epistula (tests/axon_node.cmake). It starts bt-axon (//Bob) and checks that a
// good request (sr25519 and ed25519 keys, a query string in the target) is accepted and answered
// with the verified sender, and that a replay, a stale, future or millisecond nonce, a wrong or
// missing receiver, a tampered body, another key's signature, a signed method or path other than
// the one sent and malformed headers are each refused with their status and the SDK's failure
// class. A second bt-axon started with --axon.btauth_require_receiver off and
// --axon.btauth_max_age_ms 20000 accepts an unbound request and an 11 s old nonce.
//
// With a second argument (the redis-server program) it runs the fleet case instead: a
// redis-server on a free loopback port, two bt-axon processes sharing it as their replay store
// (--nonce_store redis://...), and a request accepted by one is refused as a replay by the other.
//
// Usage: node btauth_signer_peer.mjs <bt-axon> [<redis-server>]
// Exit status 0 when every check passed; 1 otherwise (each failure printed on stderr).
import http from 'node:http';

import { devKey, nowNs, signRequest } from './btauth.mjs';
import { check, crypto, finish, startAxon as startBtAxon, sendJson, startRedis as startRedisServer, stopAxon } from './peer_support.mjs';

const axonBinary = process.argv[2];
const redisBinary = process.argv[3];
if (!axonBinary) {
  console.error('usage: node btauth_signer_peer.mjs <bt-axon> [<redis-server>]');
  process.exit(2);
}

const SECOND = 1_000_000_000n;
// Distinct nonces: nowNs() has millisecond resolution, and two requests of one sender with the
// same nonce are a replay by definition.
let sequence = 0n;
const freshNonce = () => nowNs() + (sequence += 1000n);

const agent = new http.Agent({ keepAlive: false });
/// Sends `body` as `method` to `target` with `headers` ({name: value} or [[name, value], ...]).
const send = (port, headers, body, options = {}) => sendJson(port, headers, body, { agent, ...options });

/// The refusal has `status` and a message that starts with `start` (the SDK's class, or the
/// axon's prefix for a malformed head).
function refused(res, status, start, what) {
  const message = res.json?.message ?? '';
  return check(res.status === status && message.startsWith(start),
    `${what}: ${status} "${start}..." (got ${res.status} ${res.text})`);
}

// ---- processes ----

const children = [];
async function startAxon(args) {
  const child = await startBtAxon(axonBinary, args);
  children.push(child);
  return child;
}

async function startRedis() {
  const redis = await startRedisServer(redisBinary);
  children.push(redis.child);
  return redis;
}

// ---- the checks ----

await crypto.cryptoWaitReady();
const alice = devKey('//Alice');
const charlie = devKey('//Charlie');
const daveEd = devKey('//Dave', 'ed25519');
const BOB = devKey('//Bob').address;

const killer = setTimeout(() => {
  console.error('btauth_signer_peer: overall timeout');
  for (const c of children) c.kill('SIGKILL');
  process.exit(1);
}, 100_000);

/// The headers of `key`'s request for `body`, signed for bt-axon (//Bob) unless told otherwise.
const sign = (key, body, { method = 'POST', target = '/echo', receiver = BOB, nonce = freshNonce() } = {}) =>
  signRequest(key, { method, target, body, receiver, nonce });

async function singleAxon() {
  const axon = await startAxon([]);
  const port = axon.port;
  const body = Buffer.from(JSON.stringify({ prompt: 'hello', n: 3 }));

  // Accepted: the body back with the verified sender.
  const good = sign(alice, body);
  let res = await send(port, good, body);
  check(res.status === 200 && res.json?.prompt === 'hello' && res.json?.signed_by === alice.address,
    `sr25519: 200 with signed_by //Alice (got ${res.status} ${res.text})`);
  res = await send(port, sign(daveEd, body), body);
  check(res.status === 200 && res.json?.signed_by === daveEd.address,
    `ed25519 (//Dave): 200 with signed_by //Dave (got ${res.status} ${res.text})`);
  const target = '/echo?lang=en&n=2';
  res = await send(port, sign(alice, body, { target }), body, { target });
  check(res.status === 200, `a query string in the signed target: 200 (got ${res.status} ${res.text})`);

  // The same request again: a replay.
  res = await send(port, good, body);
  refused(res, 401, 'ReplayedRequest: ', 'the same request again');

  // Nonces outside the window (10 s past, 2 s ahead by default), and one in milliseconds.
  res = await send(port, sign(alice, body, { nonce: nowNs() - 11n * SECOND }), body);
  refused(res, 401, 'StaleRequest: ', 'a nonce 11 s old');
  res = await send(port, sign(alice, body, { nonce: nowNs() + 3n * SECOND }), body);
  refused(res, 401, 'StaleRequest: ', 'a nonce 3 s ahead');
  res = await send(port, sign(alice, body, { nonce: BigInt(Date.now()) }), body);
  refused(res, 401, 'StaleRequest: ', 'a nonce in milliseconds');

  // Signed for another receiver; for none (required by default).
  res = await send(port, sign(alice, body, { receiver: charlie.address }), body);
  refused(res, 401, 'WrongReceiver: ', 'signed for //Charlie');
  res = await send(port, sign(alice, body, { receiver: '' }), body);
  refused(res, 401, 'WrongReceiver: ', 'no X-Bittensor-Receiver');

  // A tampered body; another key's signature; another method or path than the one sent.
  res = await send(port, sign(alice, body), Buffer.from(JSON.stringify({ prompt: 'hellO', n: 3 })));
  refused(res, 401, 'BadSignature: ', 'a body changed after signing');
  const nonce = freshNonce();
  const forged = { ...sign(alice, body, { nonce }), 'X-Bittensor-Signature': sign(charlie, body, { nonce })['X-Bittensor-Signature'] };
  res = await send(port, forged, body);
  refused(res, 401, 'BadSignature: ', "//Charlie's signature under //Alice's hotkey");
  res = await send(port, sign(alice, body, { method: 'PUT' }), body);
  refused(res, 401, 'BadSignature: ', 'signed for PUT, sent as POST');
  res = await send(port, sign(alice, body, { target: '/other' }), body);
  refused(res, 401, 'BadSignature: ', 'signed for /other, sent to /echo');
  res = await send(port, sign(alice, body), body, { target: '/echo?x=1' });
  refused(res, 401, 'BadSignature: ', 'signed for /echo, sent to /echo?x=1');

  // Malformed headers: each a 400 naming MalformedAuth.
  const malformed = 'Malformed btauth/1 headers: MalformedAuth: ';
  res = await send(port, { ...sign(alice, body), 'X-Bittensor-Signature': `0x${'ab'.repeat(63)}` }, body);
  refused(res, 400, malformed, 'a short signature');
  res = await send(port, { ...sign(alice, body), 'X-Bittensor-Signature': `0x${'zz'.repeat(64)}` }, body);
  refused(res, 400, malformed, 'a signature that is not hex');
  res = await send(port, { ...sign(alice, body), 'X-Bittensor-Version': '2' }, body);
  refused(res, 400, malformed, 'version 2');
  const headers = sign(alice, body);
  res = await send(port, [...Object.entries(headers), ['X-Bittensor-Nonce', headers['X-Bittensor-Nonce']]], body);
  refused(res, 400, malformed, 'two X-Bittensor-Nonce headers');
  res = await send(port, { ...sign(alice, body), 'Epistula-Version': '2' }, body);
  refused(res, 400, 'Ambiguous authentication: ', 'X-Bittensor-* and Epistula-* headers together');

  // Still serving.
  res = await send(port, sign(alice, body), body);
  check(res.status === 200, `still serving after the refusals (got ${res.status})`);
  await stopAxon(axon);

  // bt-axon's btauth/1 flags: a receiver optional, a wider window.
  const relaxed = await startAxon(['--axon.btauth_require_receiver', 'off', '--axon.btauth_max_age_ms', '20000']);
  res = await send(relaxed.port, sign(alice, body, { receiver: '' }), body);
  check(res.status === 200 && res.json?.signed_by === alice.address,
    `--axon.btauth_require_receiver off: an unbound request is accepted (got ${res.status} ${res.text})`);
  res = await send(relaxed.port, sign(alice, body, { receiver: charlie.address }), body);
  refused(res, 401, 'WrongReceiver: ', '--axon.btauth_require_receiver off: signed for //Charlie still refused');
  res = await send(relaxed.port, sign(alice, body, { nonce: nowNs() - 11n * SECOND }), body);
  check(res.status === 200, `--axon.btauth_max_age_ms 20000: a nonce 11 s old is accepted (got ${res.status} ${res.text})`);
  await stopAxon(relaxed);
}

async function fleet() {
  const redis = await startRedis();
  const store = `redis://127.0.0.1:${redis.port}/0`;
  const a = await startAxon(['--nonce_store', store]);
  const b = await startAxon(['--nonce_store', store]);
  const body = Buffer.from(JSON.stringify({ fleet: true }));
  const headers = sign(alice, body);
  let res = await send(a.port, headers, body);
  check(res.status === 200 && res.json?.signed_by === alice.address, `fleet: the first axon accepts (got ${res.status} ${res.text})`);
  res = await send(b.port, headers, body);
  refused(res, 401, 'ReplayedRequest: ', 'fleet: the same request at the other axon');
  res = await send(a.port, headers, body);
  refused(res, 401, 'ReplayedRequest: ', 'fleet: and at the first one again');
  res = await send(b.port, sign(alice, body), body);
  check(res.status === 200, `fleet: a fresh nonce is accepted by the second axon (got ${res.status} ${res.text})`);
  await stopAxon(a);
  await stopAxon(b);
  redis.child.kill('SIGTERM');
  await redis.child.exited;
}

try {
  if (redisBinary) await fleet(); else await singleAxon();
} catch (e) {
  check(false, `unexpected: ${e.stack ?? e}`);
  for (const c of children) c.kill('SIGKILL');
} finally {
  clearTimeout(killer);
  agent.destroy();
}

finish(children.map((c) => c.stderrText ?? '').filter(Boolean).join('\n---\n'));
