// An independent Epistula v2 signer, written from the convention (docs/protocol.md section 12),
// against bt-axon's POST /echo (tests/axon_node.cmake). It starts bt-axon (//Bob), signs requests
// with @polkadot/util-crypto's sr25519Sign over "{sha256(body) hex}.{uuid}.{timestamp}.{signed_for}"
// and checks that a good request is accepted and answered with the verified signer, and that a
// replay, a stale or future timestamp, a wrong Signed-For, a tampered body, another key's
// signature and malformed headers are each refused with their status and reason. A second
// bt-axon started with --axon.epistula_past_ms 1000, --axon.epistula_future_ms 500 and
// --axon.epistula_require_signed_for off refuses timestamps the default window accepts and
// accepts a request without Signed-For.
//
// With a second argument (the redis-server program) it runs the fleet case instead: a
// redis-server on a free loopback port, two bt-axon processes sharing it as their replay store
// (--nonce_store redis://...), and a request accepted by one is refused as a replay by the other.
//
// Usage: node epistula_signer_peer.mjs <bt-axon> [<redis-server>]
// Exit status 0 when every check passed; 1 otherwise (each failure printed on stderr).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  check, crypto, finish, fromUri, ss58, startAxon as startBtAxon, sendJson, startRedis as startRedisServer, stopAxon, util,
} from './peer_support.mjs';

const { u8aToHex, stringToU8a } = util;
const { cryptoWaitReady, sr25519PairFromSeed, sr25519Sign } = crypto;

const axonBinary = process.argv[2];
const redisBinary = process.argv[3];
if (!axonBinary) {
  console.error('usage: node epistula_signer_peer.mjs <bt-axon> [<redis-server>]');
  process.exit(2);
}

// ---- the convention ----

const sha256hex = (bytes) => createHash('sha256').update(bytes).digest('hex');

/// The headers of one Epistula v2 request: `body` a Buffer, `signedFor` an address or '' (then
/// no Epistula-Signed-For header is sent and the signed text ends in '.').
function sign(pair, body, signedFor, { timestamp = Date.now(), uuid = randomUUID(), signer = pair } = {}) {
  const message = `${sha256hex(body)}.${uuid}.${timestamp}.${signedFor}`;
  const signature = u8aToHex(sr25519Sign(stringToU8a(message), signer));
  const headers = {
    'Epistula-Version': '2',
    'Epistula-Timestamp': String(timestamp),
    'Epistula-Uuid': uuid,
    'Epistula-Signed-By': ss58(pair),
    'Epistula-Request-Signature': signature,
  };
  if (signedFor !== '') headers['Epistula-Signed-For'] = signedFor;
  return headers;
}

const agent = new http.Agent({ keepAlive: false });
/// Sends `body` to /echo with `headers` ({name: value} or [[name, value], ...] for repeated names).
const send = (port, headers, body, options = {}) => sendJson(port, headers, body, { agent, ...options });

function refused(res, status, fragment, what) {
  const message = res.json?.message ?? '';
  return check(res.status === status && message.includes(fragment),
    `${what}: ${status} with "${fragment}" (got ${res.status} ${res.text})`);
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

await cryptoWaitReady();
const alice = fromUri('//Alice');
const bob = fromUri('//Bob');
const charlie = fromUri('//Charlie');
const eve = fromUri('//Eve');
const stranger = sr25519PairFromSeed(randomBytes(32));
const BOB = ss58(bob);

const work = mkdtempSync(join(tmpdir(), 'bt-epistula-node-'));
const killer = setTimeout(() => {
  console.error('epistula_signer_peer: overall timeout');
  for (const c of children) c.kill('SIGKILL');
  process.exit(1);
}, 100_000);

async function singleAxon() {
  const denyList = join(work, 'deny.txt');
  writeFileSync(denyList, `${ss58(eve)}\n`);
  const axon = await startAxon(['--blacklist.hotkeys', denyList]);
  const port = axon.port;

  // Accepted: the body back with the verified signer.
  const body = Buffer.from(JSON.stringify({ prompt: 'hello', n: 3 }));
  const good = sign(alice, body, BOB);
  let res = await send(port, good, body);
  check(res.status === 200 && res.headers['content-type'] === 'application/json',
    `signed request: 200 application/json (got ${res.status} ${res.text})`);
  check(res.json?.prompt === 'hello' && res.json?.n === 3 && res.json?.signed_by === ss58(alice),
    `signed request: body echoed with signed_by //Alice (got ${res.text})`);

  // The same request again: a replay.
  res = await send(port, good, body);
  refused(res, 401, 'Epistula-Uuid was already used', 'the same request again');

  // The same uuid with a new timestamp (a fresh signature): still a replay of the uuid.
  res = await send(port, sign(alice, body, BOB, { uuid: good['Epistula-Uuid'], timestamp: Date.now() + 1 }), body);
  refused(res, 401, 'Epistula-Uuid was already used', 'a uuid reused with another timestamp');

  // The same uuid by another signer is that signer's own: accepted.
  res = await send(port, sign(charlie, body, BOB, { uuid: good['Epistula-Uuid'] }), body);
  check(res.status === 200 && res.json?.signed_by === ss58(charlie), `another signer's uuid space is its own (got ${res.status} ${res.text})`);

  // Timestamps outside the window (8 s past, 2 s future by default).
  res = await send(port, sign(alice, body, BOB, { timestamp: Date.now() - 20_000 }), body);
  refused(res, 401, 'seconds old', 'a timestamp 20 s old');
  res = await send(port, sign(alice, body, BOB, { timestamp: Date.now() + 10_000 }), body);
  refused(res, 401, 'in the future', 'a timestamp 10 s ahead');

  // Signed for another axon; for nobody (this axon requires Signed-For by default).
  res = await send(port, sign(alice, body, ss58(charlie)), body);
  refused(res, 401, 'Epistula-Signed-For', 'signed for //Charlie');
  res = await send(port, sign(alice, body, ''), body);
  refused(res, 400, 'missing Epistula-Signed-For', 'no Signed-For');

  // A tampered body; a signature by another key.
  res = await send(port, sign(alice, body, BOB), Buffer.from(JSON.stringify({ prompt: 'hellO', n: 3 })));
  refused(res, 401, 'does not verify', 'a tampered body');
  res = await send(port, sign(alice, body, BOB, { signer: stranger }), body);
  refused(res, 401, 'does not verify', 'a signature by another key');

  // Malformed headers: each a 400 naming the header.
  const bad = (patch) => ({ ...sign(alice, body, BOB), ...patch });
  res = await send(port, bad({ 'Epistula-Version': '1' }), body);
  refused(res, 400, 'Epistula-Version must be 2', 'version 1');
  res = await send(port, bad({ 'Epistula-Timestamp': `${Date.now()}.5` }), body);
  refused(res, 400, 'Epistula-Timestamp must be', 'a fractional timestamp');
  res = await send(port, bad({ 'Epistula-Uuid': randomUUID().toUpperCase() }), body);
  refused(res, 400, 'Epistula-Uuid must be a uuid4', 'an upper-case uuid');
  res = await send(port, bad({ 'Epistula-Signed-By': 'not-an-address' }), body);
  refused(res, 400, 'Epistula-Signed-By', 'a Signed-By that is no SS58 address');
  res = await send(port, bad({ 'Epistula-Request-Signature': `0x${'ab'.repeat(63)}` }), body);
  refused(res, 400, 'Epistula-Request-Signature must be 0x', 'a short signature');
  res = await send(port, bad({ 'Epistula-Request-Signature': 'x'.repeat(4000) }), body);
  refused(res, 400, 'Epistula-Request-Signature must be 0x', 'a 4000-byte signature');
  const headers = sign(alice, body, BOB);
  const { 'Epistula-Version': _v, ...noVersion } = headers;
  res = await send(port, noVersion, body);
  refused(res, 400, 'missing Epistula-Version', 'no Epistula-Version');
  res = await send(port, [...Object.entries(headers), ['Epistula-Uuid', randomUUID()]], body);
  refused(res, 400, 'more than one Epistula-Uuid', 'two Epistula-Uuid headers');

  // Secret-Signature fields are accepted and ignored.
  res = await send(port, { ...sign(alice, body, BOB), 'Epistula-Secret-Signature-0': 'x', 'Epistula-Secret-Signature-1': 'y',
    'Epistula-Secret-Signature-2': 'z' }, body);
  check(res.status === 200, `Epistula-Secret-Signature-0/1/2 ignored (got ${res.status} ${res.text})`);

  // A body that is not an object; an empty body; a body that is not JSON.
  const arr = Buffer.from('[1,2,3]');
  res = await send(port, sign(alice, arr, BOB), arr);
  check(res.status === 200 && JSON.stringify(res.json?.body) === '[1,2,3]' && res.json?.signed_by === ss58(alice),
    `an array comes back under "body" (got ${res.text})`);
  const empty = Buffer.alloc(0);
  res = await send(port, sign(alice, empty, BOB), empty);
  check(res.status === 200 && res.json?.body === null, `an empty body (sha256 of no bytes) is null (got ${res.status} ${res.text})`);
  const notJson = Buffer.from('{"a": 1');
  res = await send(port, sign(alice, notJson, BOB), notJson);
  refused(res, 400, 'Malformed body', 'a signed body that is not JSON');

  // The deny list applies to the verified signer; the route's method.
  res = await send(port, sign(eve, body, BOB), body);
  refused(res, 403, 'Forbidden. Key is blacklisted', 'a blacklisted signer');
  res = await send(port, sign(alice, empty, BOB), empty, { method: 'GET' });
  check(res.status === 405, `GET /echo: 405 (got ${res.status})`);

  // Still serving.
  res = await send(port, sign(alice, body, BOB), body);
  check(res.status === 200, `still serving after the refusals (got ${res.status})`);
  // Inside the default window: 3 s old, 1.5 s ahead (the narrowed axon below refuses both).
  res = await send(port, sign(alice, body, BOB, { timestamp: Date.now() - 3_000 }), body);
  check(res.status === 200, `default window: a timestamp 3 s old is accepted (got ${res.status} ${res.text})`);
  res = await send(port, sign(alice, body, BOB, { timestamp: Date.now() + 1_500 }), body);
  check(res.status === 200, `default window: a timestamp 1.5 s ahead is accepted (got ${res.status} ${res.text})`);
  await stopAxon(axon);

  // bt-axon's Epistula flags: a narrowed window and Signed-For optional.
  const narrow = await startAxon(['--axon.epistula_past_ms', '1000', '--axon.epistula_future_ms', '500',
    '--axon.epistula_require_signed_for', 'off']);
  res = await send(narrow.port, sign(alice, body, BOB, { timestamp: Date.now() - 3_000 }), body);
  refused(res, 401, 'this axon accepts 1.000 seconds into the past', '--axon.epistula_past_ms 1000: a timestamp 3 s old');
  res = await send(narrow.port, sign(alice, body, BOB, { timestamp: Date.now() + 1_500 }), body);
  refused(res, 401, 'in the future', '--axon.epistula_future_ms 500: a timestamp 1.5 s ahead');
  res = await send(narrow.port, sign(alice, body, ''), body);
  check(res.status === 200 && res.json?.signed_by === ss58(alice),
    `--axon.epistula_require_signed_for off: no Signed-For accepted (got ${res.status} ${res.text})`);
  res = await send(narrow.port, sign(alice, body, ss58(charlie)), body);
  refused(res, 401, 'Epistula-Signed-For', '--axon.epistula_require_signed_for off: signed for //Charlie still refused');
  await stopAxon(narrow);
}

async function fleet() {
  const redis = await startRedis();
  const store = `redis://127.0.0.1:${redis.port}/0`;
  const a = await startAxon(['--nonce_store', store]);
  const b = await startAxon(['--nonce_store', store]);
  const body = Buffer.from(JSON.stringify({ fleet: true }));
  const headers = sign(alice, body, BOB);
  let res = await send(a.port, headers, body);
  check(res.status === 200 && res.json?.signed_by === ss58(alice), `fleet: the first axon accepts (got ${res.status} ${res.text})`);
  res = await send(b.port, headers, body);
  refused(res, 401, 'Epistula-Uuid was already used', 'fleet: the same request at the other axon');
  res = await send(a.port, headers, body);
  refused(res, 401, 'Epistula-Uuid was already used', 'fleet: and at the first one again');
  const other = sign(alice, body, BOB);
  res = await send(b.port, other, body);
  check(res.status === 200, `fleet: a fresh uuid is accepted by the second axon (got ${res.status} ${res.text})`);
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
  rmSync(work, { recursive: true, force: true });
}

finish(children.map((c) => c.stderrText ?? '').filter(Boolean).join('\n---\n'));
