// An independent peer that behaves like a Python (bittensor 10.2.0) dendrite, for the axon's
// cross-implementation test (tests/axon_node.cmake). It starts a bt-axon process, builds requests
// exactly as DendriteMixin.preprocess_synapse_for_request / call build them (PROTOCOL 4: headers of
// 2.1 in order, json.dumps body, sr25519 signature from @polkadot/util-crypto), and judges every
// answer as process_server_response would (6.2-6.5) plus the MUSTs of 6.7. Then it sends SIGTERM
// and requires a clean exit (status 0).
//
// Usage: node python_dendrite_peer.mjs <path to bt-axon>
// Exit status 0 when every check passed; 1 otherwise (each failure printed on stderr).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  check, crypto, dumps, finish, fromUri, PyFloat, pyFloatRepr, sha3hex, ss58, startAxon, stopAxon,
  TERMINAL_FIELDS, terminal, timeNs, util, uuid1Like,
} from './peer_support.mjs';

const { u8aToHex, stringToU8a } = util;
const { cryptoWaitReady, sr25519PairFromSeed, sr25519Sign, sr25519Verify, decodeAddress } = crypto;

const axonBinary = process.argv[2];
if (!axonBinary) {
  console.error('usage: node python_dendrite_peer.mjs <bt-axon>');
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// The types this peer sends (json.dumps and the TerminalInfo fields are in peer_support.mjs)

const INT_FIELDS = new Set(['status_code', 'port', 'version', 'nonce']);
const FLOAT_FIELDS = new Set(['process_time']);
const TYPES = {
  Synapse: { fields: {}, required: [], hash: [] },
  Dummy: { fields: { dummy_input: null, dummy_output: null }, required: ['dummy_input'], hash: [] },
};

// ---------------------------------------------------------------------------------------------
// The request, as a Python dendrite builds it

/**
 * preprocess_synapse_for_request + to_headers + json.dumps(model_dump()).
 * opts: { name, values, keypair, axonHotkey, axonIp, axonPort, timeout, nonce, uuid, sign, version }
 */
function buildRequest(opts) {
  const type = TYPES[opts.name];
  const timeout = opts.timeout ?? 12.0;
  const nonce = opts.nonce ?? timeNs();
  const uuid = opts.uuid;
  const dendrite = terminal({ ip: '127.0.0.1', version: opts.version ?? 10002000, nonce, uuid, hotkey: ss58(opts.keypair) });
  const axon = terminal({ ip: opts.axonIp, port: opts.axonPort, hotkey: opts.axonHotkey });
  const values = { ...type.fields, ...(opts.values ?? {}) };
  const bodyHash = sha3hex(type.hash.map((f) => sha3hex(String(values[f]))).join(''));
  const message = `${nonce}.${dendrite.hotkey}.${opts.axonHotkey}.${uuid}.${bodyHash}`;
  if (opts.sign !== false) dendrite.signature = u8aToHex(sr25519Sign(stringToU8a(message), opts.keypair));

  // to_headers (2.1): name, timeout, non-None axon fields, non-None dendrite fields,
  // placeholders of required non-None fields, header_size, total_size, computed_body_hash.
  const headers = [['name', opts.name], ['timeout', pyFloatRepr(timeout)]];
  for (const f of TERMINAL_FIELDS) if (axon[f] !== null) headers.push([`bt_header_axon_${f}`, String(axon[f])]);
  for (const f of TERMINAL_FIELDS) if (dendrite[f] !== null) headers.push([`bt_header_dendrite_${f}`, String(dendrite[f])]);
  for (const f of type.required) {
    if (values[f] === null) continue;
    const kind = typeof values[f];
    const empty = kind === 'number' || kind === 'bigint' ? '0' : kind === 'string' ? '""' : '[]';
    headers.push([`bt_header_input_obj_${f}`, Buffer.from(empty).toString('base64')]);
  }
  const totalSize = 3004;
  headers.push(['header_size', '464'], ['total_size', String(totalSize)], ['computed_body_hash', bodyHash]);

  const body = {
    name: opts.name, timeout: new PyFloat(timeout), total_size: totalSize, header_size: 0, dendrite, axon,
    computed_body_hash: '', ...values,
  };
  return { path: `/${opts.name}`, headers, body: dumps(body), message, dendrite };
}

// aiohttp's ClientSession: one keep-alive pool, default headers, Content-Type application/json.
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function send(port, req, { method = 'POST', rawBody } = {}) {
  return new Promise((resolve, reject) => {
    const body = Buffer.from(rawBody ?? req.body, 'utf8');
    const headers = [
      ['Host', `127.0.0.1:${port}`], ['Accept', '*/*'], ['Accept-Encoding', 'gzip, deflate'],
      ['User-Agent', 'Python/3.11 aiohttp/3.9.5'], ['Content-Length', String(body.length)],
      ['Content-Type', 'application/json'], ...req.headers,
    ];
    const r = http.request({ host: '127.0.0.1', port, method, path: req.path, agent, headers: headers.flat(), timeout: 12000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, rawHeaders: res.rawHeaders, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    r.on('timeout', () => r.destroy(new Error('request timeout')));
    r.on('error', reject);
    r.end(body);
  });
}

// ---------------------------------------------------------------------------------------------
// The answer, as process_server_response sees it (6.2-6.5), and the MUSTs of 6.7

const isPyInt = (s) => /^\s*[+-]?\d+(_\d+)*\s*$/.test(s);
const isPyFloat = (s) => s.trim() !== '' && !Number.isNaN(Number(s.replaceAll('_', '').replace(/^\s*([+-]?)inf(inity)?\s*$/i, '$1Infinity')));

/** Returns {status_code, status_message, synapse} as the Python dendrite would end up with. */
function pythonDendriteView(name, res, label) {
  const type = TYPES[name];
  check(res.headers['content-type'] === 'application/json', `${label}: content-type is application/json (got ${res.headers['content-type']})`);
  let json;
  try {
    json = JSON.parse(res.text);
  } catch {
    check(false, `${label}: body is JSON`);
    return {};
  }
  check(json !== null && typeof json === 'object' && !Array.isArray(json), `${label}: body is a JSON object`);

  // Header names as sent: the Python dendrite's substring match is case-sensitive (D21).
  const sent = [];
  for (let i = 0; i < res.rawHeaders.length; i += 2) sent.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
  const axon = {};
  const dendrite = {};
  for (const [k, v] of sent) {
    if (k.toLowerCase().startsWith('bt_header_')) check(k === k.toLowerCase(), `${label}: header ${k} is lower case`);
    const m = /^bt_header_(axon|dendrite)_(.*)$/.exec(k);
    if (!m) continue;
    (m[1] === 'axon' ? axon : dendrite)[m[2]] = v;
    // Every value must survive the casts of PROTOCOL 1.1, or the Python dendrite answers 422.
    if (INT_FIELDS.has(m[2])) check(isPyInt(v), `${label}: ${k}: ${v} parses with int()`);
    if (FLOAT_FIELDS.has(m[2])) check(isPyFloat(v), `${label}: ${k}: ${v} parses with float()`);
  }
  for (const k of ['header_size', 'total_size']) {
    if (res.headers[k] !== undefined) check(isPyInt(res.headers[k]), `${label}: ${k} is an integer`);
  }
  if (res.headers.timeout !== undefined) check(isPyFloat(res.headers.timeout), `${label}: timeout parses with float()`);

  let statusCode;
  let statusMessage;
  if (res.status === 200) {
    // 6.2: the body must validate as the class and carry every field the validator reads.
    for (const f of ['name', 'timeout', 'total_size', 'header_size', 'dendrite', 'axon', 'computed_body_hash', ...Object.keys(type.fields)]) {
      check(f in json, `${label}: 200 body has field ${f}`);
    }
    for (const f of type.required) check(json[f] !== null && json[f] !== undefined, `${label}: required ${f} present`);
    for (const blk of ['dendrite', 'axon']) {
      for (const f of TERMINAL_FIELDS) check(json[blk] && f in json[blk], `${label}: ${blk}.${f} in body`);
    }
    statusCode = json.axon?.status_code ?? null;
    statusMessage = json.axon?.status_message ?? null;
  } else {
    statusCode = res.status;
    statusMessage = json.message ?? null;
  }
  // 6.4: non-null header values win.
  if (axon.status_code !== undefined) statusCode = Number(axon.status_code);
  if (axon.status_message !== undefined) statusMessage = axon.status_message;
  // 6.7 item 4: the header status equals the status line.
  check(Number(axon.status_code) === res.status, `${label}: bt_header_axon_status_code ${axon.status_code} equals HTTP ${res.status}`);
  check('process_time' in axon, `${label}: bt_header_axon_process_time present`);
  return { status_code: statusCode, status_message: statusMessage, synapse: json, axonHeaders: axon, dendriteHeaders: dendrite };
}

// ---------------------------------------------------------------------------------------------
// Scenario

await cryptoWaitReady();
const alice = fromUri('//Alice');
const bob = fromUri('//Bob');
const dave = fromUri('//Dave');
const eve = fromUri('//Eve');
const stranger = sr25519PairFromSeed(randomBytes(32));
check(ss58(alice) === '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY', 'polkadot-js derives //Alice as expected');

const work = mkdtempSync(join(tmpdir(), 'bt-axon-node-'));
const metagraph = join(work, 'metagraph.json');
const denyList = join(work, 'deny.txt');
writeFileSync(metagraph, JSON.stringify([
  { hotkey: ss58(alice), stake: 1000.5, validator_permit: true },
  { hotkey: ss58(dave), stake: 10, validator_permit: false },
  { hotkey: ss58(eve), stake: 99, validator_permit: true },
]));
writeFileSync(denyList, `# deny list\n${ss58(eve)}\n`);

let child;
const killer = setTimeout(() => { console.error('python_dendrite_peer: overall timeout'); child?.kill('SIGKILL'); process.exit(1); }, 90_000);

try {
  // bt-axon's first stdout line, its AxonInfo: exactly these keys, the real port.
  child = await startAxon(axonBinary, ['--metagraph', metagraph, '--blacklist.hotkeys', denyList,
    '--blacklist.force_validator_permit']);
  const { info } = child;
  check(JSON.stringify(Object.keys(info)) === JSON.stringify(['version', 'ip', 'port', 'ip_type', 'hotkey', 'coldkey', 'protocol']),
    `AxonInfo keys in order (got ${Object.keys(info)})`);
  check(info.hotkey === ss58(bob), 'AxonInfo hotkey is //Bob');
  check(info.ip === '127.0.0.1' && info.ip_type === 4 && info.protocol === 4 && info.version === 10002000, 'AxonInfo fields');
  check(Number.isInteger(info.port) && info.port > 0, 'AxonInfo has the real port');
  const port = info.port;
  const base = { axonHotkey: ss58(bob), axonIp: info.ip, axonPort: port };
  const aliceUuid = uuid1Like();

  // --- success paths (6.7) ---
  {
    const req = buildRequest({ ...base, name: 'Dummy', values: { dummy_input: 21 }, keypair: alice, uuid: aliceUuid });
    const res = await send(port, req);
    check(res.status === 200, `Dummy: HTTP 200 (got ${res.status} ${res.text})`);
    const v = pythonDendriteView('Dummy', res, 'Dummy');
    check(v.status_code === 200 && v.status_message === 'Success', `Dummy: dendrite sees 200/Success (got ${v.status_code}/${v.status_message})`);
    check(v.synapse?.dummy_output === 42, 'Dummy: dummy_output = 42');
    check(v.synapse?.dummy_input === 21, 'Dummy: input echoed');
    check(typeof v.synapse?.axon?.process_time === 'number', 'Dummy: axon.process_time is a number');
    check(v.synapse?.dendrite?.hotkey === ss58(alice) && v.synapse?.dendrite?.uuid === aliceUuid, 'Dummy: dendrite block echoed');
    check(v.synapse?.axon?.hotkey === ss58(bob), 'Dummy: axon block echoed');
    check(v.synapse?.computed_body_hash === '', 'Dummy: computed_body_hash echoed as ""');
    check(res.headers.computed_body_hash === sha3hex(''), 'Dummy: computed_body_hash header is the response body hash');
    check(res.headers['bt_header_axon_signature'] === undefined, 'Dummy: success carries no axon signature');
    check(!res.text.includes('": '), 'Dummy: compact JSON, as Starlette');
  }
  {
    const req = buildRequest({ ...base, name: 'Synapse', keypair: alice, uuid: aliceUuid });
    const res = await send(port, req);
    const v = pythonDendriteView('Synapse', res, 'ping');
    check(res.status === 200 && v.status_code === 200 && v.status_message === 'Success', `ping: 200/Success (got ${res.status} ${res.text})`);
  }
  {
    const req = buildRequest({ ...base, name: 'Dummy', values: { dummy_input: 5 }, keypair: alice, uuid: aliceUuid });
    const res = await send(port, req, { method: 'GET' });
    check(res.status === 200, `GET is served as POST (got ${res.status})`);
  }
  // Concurrent callers (each its own dendrite uuid, as separate validators).
  {
    const reqs = Array.from({ length: 24 }, (_, i) => buildRequest({ ...base, name: 'Dummy', values: { dummy_input: i }, keypair: alice, uuid: uuid1Like() }));
    const results = await Promise.all(reqs.map((r) => send(port, r)));
    check(results.every((r, i) => r.status === 200 && JSON.parse(r.text).dummy_output === 2 * i), 'concurrent: 24 answers of 200 with the right outputs');
  }

  // --- errors: status, {"message"}, bt headers carrying the same ---
  const expectError = async (label, name, req, status, message, sendOpts) => {
    const res = await send(port, req, sendOpts);
    check(res.status === status, `${label}: HTTP ${status} (got ${res.status} ${res.text})`);
    const v = pythonDendriteView(name, res, label);
    if (message instanceof RegExp) check(message.test(v.status_message ?? ''), `${label}: message ${v.status_message} matches ${message}`);
    else check(v.status_message === message, `${label}: message "${v.status_message}" is "${message}"`);
    check(v.status_code === status, `${label}: dendrite sees status ${status}`);
    return { res, v };
  };

  await expectError('missing signature', 'Dummy',
    buildRequest({ ...base, name: 'Dummy', values: { dummy_input: 1 }, keypair: alice, uuid: aliceUuid, sign: false }),
    401, 'Not Verified with error: Missing Signature');
  {
    const other = buildRequest({ ...base, axonHotkey: ss58(alice), name: 'Dummy', values: { dummy_input: 1 }, keypair: alice, uuid: aliceUuid });
    const { res } = await expectError('signed for another axon', 'Dummy', other, 401, /^Not Verified with error: Signature mismatch with /);
    // D29: a request that failed verification gets no axon signature (5.13's signature over
    // claimed hotkeys would make the axon a signing oracle).
    const h = res.headers;
    check(h.bt_header_axon_signature === undefined, 'no axon signature on an unverified request\'s error');
    check(h.bt_header_dendrite_ip === '127.0.0.1' && isPyInt(h.bt_header_dendrite_port ?? ''), 'error headers carry the observed peer address');
  }
  {
    const req = buildRequest({ ...base, name: 'Dummy', values: { dummy_input: 3 }, keypair: alice, uuid: aliceUuid });
    check((await send(port, req)).status === 200, 'replay: first copy 200');
    await expectError('replay', 'Dummy', req, 401, 'Not Verified with error: Nonce was already used');
  }
  await expectError('too old', 'Dummy',
    buildRequest({ ...base, name: 'Dummy', values: { dummy_input: 1 }, keypair: alice, uuid: uuid1Like(), nonce: BigInt(Date.now() - 60_000) * 1_000_000n }),
    401, /^Not Verified with error: Nonce is too old: acceptable delta is 16\.00 seconds but request was 6\d\.\d\d seconds old$/);
  {
    const { res } = await expectError('deny list', 'Dummy',
      buildRequest({ ...base, name: 'Dummy', values: { dummy_input: 1 }, keypair: eve, uuid: uuid1Like() }),
      403, 'Forbidden. Key is blacklisted: Blacklisted hotkey.');
    // 5.13: a verified request's error answer is signed by the axon over
    // {axon nonce}.{verified dendrite hotkey}.{the axon's own hotkey}.{axon uuid}.
    const h = res.headers;
    const msg = `${h.bt_header_axon_nonce}.${ss58(eve)}.${ss58(bob)}.${h.bt_header_axon_uuid}`;
    check(typeof h.bt_header_axon_signature === 'string' && sr25519Verify(stringToU8a(msg), h.bt_header_axon_signature, decodeAddress(ss58(bob))),
      'axon signature on a verified request\'s error verifies with //Bob');
  }
  await expectError('no validator permit', 'Dummy',
    buildRequest({ ...base, name: 'Dummy', values: { dummy_input: 1 }, keypair: dave, uuid: uuid1Like() }),
    403, 'Forbidden. Key is blacklisted: Non-validator hotkey.');
  await expectError('not registered', 'Synapse',
    buildRequest({ ...base, name: 'Synapse', keypair: stranger, uuid: uuid1Like() }),
    403, 'Forbidden. Key is blacklisted: Unrecognized hotkey.');
  {
    const req = buildRequest({ ...base, name: 'Dummy', values: { dummy_input: 1 }, keypair: alice, uuid: aliceUuid });
    req.path = '/Nope';
    const { res } = await expectError('unknown synapse', 'Synapse', req, 404, "Synapse name 'Nope' not found. Available synapses ['Synapse', 'Dummy', 'WordStream']");
    check(res.headers.name === 'Synapse', '404 headers come from a base Synapse');
  }
  await expectError('malformed body', 'Dummy',
    buildRequest({ ...base, name: 'Dummy', values: { dummy_input: 1 }, keypair: alice, uuid: aliceUuid }),
    400, /^Malformed body: /, { rawBody: '{"name": "Dummy", "dummy_input": ' });
  await expectError('overflowing input', 'Dummy',
    buildRequest({ ...base, name: 'Dummy', values: { dummy_input: 2n ** 62n }, keypair: alice, uuid: aliceUuid }),
    400, 'dummy_input * 2 does not fit in 64 bits');

  // The server is still fine after all that.
  {
    const req = buildRequest({ ...base, name: 'Dummy', values: { dummy_input: 100 }, keypair: alice, uuid: aliceUuid });
    const res = await send(port, req);
    check(res.status === 200 && JSON.parse(res.text).dummy_output === 200, 'still serving after the errors');
  }

  // --- graceful stop: SIGTERM drains and exits 0 ---
  agent.destroy();
  await stopAxon(child);
} catch (e) {
  check(false, `unexpected: ${e.stack ?? e}`);
  child?.kill('SIGKILL');
} finally {
  clearTimeout(killer);
  agent.destroy();
  rmSync(work, { recursive: true, force: true });
}

finish(child?.stderrText ?? '');
