// An independent peer that behaves like a Python (bittensor 10.2.0) axon, for
// tests/node/dendrite_node_test.cpp. It checks every request our dendrite sends against
// PROTOCOL sections 2-4 and answers as sections 5.9-5.11 say a Python axon answers.
//
// Usage: node python_axon_peer.mjs <the axon's hotkey, SS58>
// Prints one JSON line {"port": N, "hotkey": "<ss58>"} once listening on 127.0.0.1:<ephemeral>,
// then serves until stdin closes or it gets SIGTERM.
//
// Routes (the subnet template's and a hashed one):
//   /Synapse  base synapse (ping)
//   /Dummy    dummy_input: int (required), dummy_output: Optional[int] = None; no hash fields
//   /Echo     text: str (required), reply: Optional[str] = None; required_hash_fields = ("text",)
// Verification as Axon.default_verify (5.5) with sr25519 from @polkadot/util-crypto; body
// integrity as verify_body_integrity (5.7) with node's own SHA3-256. On top, strict checks of
// the request format (header names, order and values of 2.1, body form of 1.4/4.5): a
// deviation answers 400 {"message": "peer check: ..."} so the C++ test sees exactly what failed.
import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { hexToU8a } from '@polkadot/util';
import { cryptoWaitReady, decodeAddress, encodeAddress, sr25519Verify } from '@polkadot/util-crypto';

const TERMINAL_FIELDS = ['status_code', 'status_message', 'process_time', 'ip', 'port', 'version',
  'nonce', 'uuid', 'hotkey', 'signature'];
const BASE_FIELDS = ['name', 'timeout', 'total_size', 'header_size', 'dendrite', 'axon',
  'computed_body_hash'];
const TYPES = {
  Synapse: { fields: [], required: [], hash: [] },
  Dummy: { fields: ['dummy_input', 'dummy_output'], required: ['dummy_input'], hash: [] },
  Echo: { fields: ['text', 'reply'], required: ['text'], hash: ['text'] },
};
const ALLOWED_DELTA_NS = 4_000_000_000n;

const sha3hex = (s) => createHash('sha3-256').update(Buffer.from(s, 'utf8')).digest('hex');

class PeerCheck extends Error {}
const check = (cond, what) => {
  if (!cond) throw new PeerCheck(what);
};

// Python str() of the values our routes hash (str at top level is the text itself).
function pyStr(v) {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  throw new PeerCheck(`cannot render ${JSON.stringify(v)} as Python str()`);
}
const bodyHash = (type, body) => sha3hex(type.hash.map((f) => sha3hex(pyStr(body[f]))).join(''));

// Python int() / float() acceptance of header values (what pydantic's casts do).
const isPyInt = (s) => /^\s*[+-]?\d+(_\d+)*\s*$/.test(s);
const isPyFloat = (s) => !Number.isNaN(Number(s.replaceAll('_', ''))) && s.trim() !== '';
const isUuid1 = (s) => /^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(s);

function checkSs58(addr, what) {
  let pub;
  try {
    pub = decodeAddress(addr);
  } catch (e) {
    throw new PeerCheck(`${what}: not SS58 (${e.message})`);
  }
  check(encodeAddress(pub, 42) === addr, `${what}: not SS58 format 42`);
  return pub;
}

/// Checks the raw request head against PROTOCOL 2.1/2.2/4.5. Returns the headers as a map.
function checkHeaders(req, type, name) {
  const raw = req.rawHeaders;
  const names = [];
  const h = {};
  for (let i = 0; i < raw.length; i += 2) {
    const n = raw[i];
    check(!(n.toLowerCase() in h), `duplicate header ${n}`);
    h[n.toLowerCase()] = raw[i + 1];
    if (/^(bt_header_|name$|timeout$|header_size$|total_size$|computed_body_hash$)/i.test(n)) {
      check(n === n.toLowerCase(), `header name not lower case: ${n}`);
      names.push(n);
    }
  }
  check((h['content-type'] ?? '') === 'application/json', `content-type ${h['content-type']}`);
  // Order of 2.1: name, timeout, axon fields, dendrite fields (each in TerminalInfo order),
  // input_obj placeholders (field order), header_size, total_size, computed_body_hash.
  const expected = ['name', 'timeout'];
  for (const side of ['axon', 'dendrite'])
    for (const f of TERMINAL_FIELDS) if (`bt_header_${side}_${f}` in h) expected.push(`bt_header_${side}_${f}`);
  for (const f of type.fields) if (`bt_header_input_obj_${f}` in h) expected.push(`bt_header_input_obj_${f}`);
  expected.push('header_size', 'total_size', 'computed_body_hash');
  check(JSON.stringify(names) === JSON.stringify(expected),
    `bt header order ${JSON.stringify(names)} != ${JSON.stringify(expected)}`);
  check(h.name === name, `name header ${h.name}`);
  check(isPyFloat(h.timeout) && /^\d+\.\d+(e[+-]\d+)?$|^\d+e[+-]\d+$/.test(h.timeout),
    `timeout not a Python float repr: ${h.timeout}`);
  for (const f of ['header_size', 'total_size']) check(isPyInt(h[f]), `${f} not an int: ${h[f]}`);
  check(/^[0-9a-f]{64}$/.test(h.computed_body_hash), 'computed_body_hash not 64 hex');
  for (const [k, v] of Object.entries(h)) {
    check(!/[\r\n\x00-\x1f\x7f]/.test(v), `control character in ${k}`);
    if (/^bt_header_(axon|dendrite)_(status_code|port|version|nonce)$/.test(k)) check(isPyInt(v), `${k} not an int`);
    if (/^bt_header_(axon|dendrite)_process_time$/.test(k)) check(isPyFloat(v), `${k} not a float`);
  }
  // The dendrite block a Python dendrite sends (4.2): ip, version, nonce, uuid, hotkey, signature.
  for (const f of ['ip', 'version', 'nonce', 'uuid', 'hotkey', 'signature'])
    check(`bt_header_dendrite_${f}` in h, `missing bt_header_dendrite_${f}`);
  for (const f of ['status_code', 'status_message', 'process_time', 'port'])
    check(!(`bt_header_dendrite_${f}` in h), `unexpected bt_header_dendrite_${f}`);
  for (const f of ['ip', 'port', 'hotkey']) check(`bt_header_axon_${f}` in h, `missing bt_header_axon_${f}`);
  check(BigInt(h.bt_header_dendrite_version) >= 7002000n, 'dendrite version < 7002000');
  check(isUuid1(h.bt_header_dendrite_uuid), `uuid not uuid1 text: ${h.bt_header_dendrite_uuid}`);
  check(/^0x[0-9a-f]{128}$/.test(h.bt_header_dendrite_signature), 'signature not 0x + 128 hex');
  checkSs58(h.bt_header_dendrite_hotkey, 'bt_header_dendrite_hotkey');
  checkSs58(h.bt_header_axon_hotkey, 'bt_header_axon_hotkey');
  // Placeholders (2.3): one per required field, base64 of the JSON of the empty value.
  for (const f of type.required) {
    check(`bt_header_input_obj_${f}` in h, `missing bt_header_input_obj_${f}`);
    const decoded = Buffer.from(h[`bt_header_input_obj_${f}`], 'base64').toString('utf8');
    check(['0', '""', '[]', '{}', '0.0', 'false'].includes(decoded), `placeholder of ${f} is ${decoded}`);
  }
  return h;
}

/// The request body: json.dumps form (", " / ": " separators, ensure_ascii), keys in order.
function checkBody(text, type, h) {
  check(/^[\x00-\x7f]*$/.test(text), 'body not ASCII (json.dumps ensure_ascii)');
  let body;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw new PeerCheck(`body not JSON: ${e.message}`);
  }
  check(body && typeof body === 'object' && !Array.isArray(body), 'body not an object');
  check(JSON.stringify(Object.keys(body)) === JSON.stringify([...BASE_FIELDS, ...type.fields]),
    `body keys ${JSON.stringify(Object.keys(body))}`);
  for (const side of ['dendrite', 'axon'])
    check(JSON.stringify(Object.keys(body[side])) === JSON.stringify(TERMINAL_FIELDS), `body.${side} keys`);
  // Re-serialise as json.dumps would and compare byte for byte (numbers as written).
  check(text.startsWith(`{"name": "${body.name}", "timeout": `), 'body not in json.dumps form');
  check(!/":[^ ]|,[^ ]/.test(text.replace(/"(?:[^"\\]|\\.)*"/g, '""')), 'body separators are not ", " and ": "');
  check(body.computed_body_hash === '', 'body computed_body_hash is not ""');
  // Body and header views agree on the signed identity.
  check(text.includes(`"nonce": ${h.bt_header_dendrite_nonce},`), 'body nonce differs from header');
  check(body.dendrite.hotkey === h.bt_header_dendrite_hotkey, 'body dendrite.hotkey differs');
  check(body.dendrite.signature === h.bt_header_dendrite_signature, 'body signature differs');
  check(body.dendrite.uuid === h.bt_header_dendrite_uuid, 'body uuid differs');
  check(body.axon.hotkey === h.bt_header_axon_hotkey, 'body axon.hotkey differs');
  check(String(body.axon.port) === h.bt_header_axon_port, 'body axon.port differs');
  check(body.timeout === Number(h.timeout), 'body timeout differs');
  for (const f of type.required) check(body[f] !== undefined && body[f] !== null, `body misses ${f}`);
  return body;
}

const pyFloatRepr = (x) => (Number.isInteger(x) ? `${x}.0` : String(x));

function respond(res, status, bodyObj, headers) {
  const text = JSON.stringify(bodyObj); // Starlette: compact separators
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function statusHeaders(status, message, processTime) {
  const h = { bt_header_axon_status_code: String(status) };
  if (message !== null && message !== undefined) h.bt_header_axon_status_message = message;
  h.bt_header_axon_process_time = pyFloatRepr(processTime);
  return h;
}

async function main() {
  await cryptoWaitReady();
  const myHotkey = process.argv[2];
  checkSs58(myHotkey, 'axon hotkey argument');
  const nonces = new Map();

  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const start = process.hrtime.bigint();
      const elapsed = () => Number(process.hrtime.bigint() - start) / 1e9;
      const name = (req.url ?? '/').slice(1);
      const type = TYPES[name];
      if (req.method !== 'POST' || !type) {
        const msg = `Synapse name '${name}' not found. Available synapses ${
          `[${Object.keys(TYPES).map((n) => `'${n}'`).join(', ')}]`}`;
        return respond(res, 404, { message: msg }, statusHeaders(404, msg, elapsed()));
      }
      try {
        const h = checkHeaders(req, type, name);
        const text = Buffer.concat(chunks).toString('utf8');
        check(Number(h['content-length']) === Buffer.byteLength(text), 'content-length mismatch');

        // Stage 3, as Axon.default_verify (5.5).
        const nonce = BigInt(h.bt_header_dendrite_nonce);
        const dhot = h.bt_header_dendrite_hotkey;
        const key = `${dhot}:${h.bt_header_dendrite_uuid}`;
        const message = `${h.bt_header_dendrite_nonce}.${dhot}.${myHotkey}.${h.bt_header_dendrite_uuid}.${h.computed_body_hash}`;
        let fail = null;
        const now = BigInt(Date.now()) * 1_000_000n;
        const window = now - ALLOWED_DELTA_NS - BigInt(Math.round(Number(h.timeout) * 1e9));
        if (!nonces.has(key) && nonce <= window) fail = 'Nonce is too old: acceptable delta exceeded';
        else if (nonces.has(key) && nonce <= nonces.get(key)) fail = 'Nonce is too old, a newer one was last processed';
        else if (!sr25519Verify(message, hexToU8a(h.bt_header_dendrite_signature), decodeAddress(dhot)))
          fail = `Signature mismatch with ${message} and ${h.bt_header_dendrite_signature}`;
        if (fail) {
          const msg = `Not Verified with error: ${fail}`;
          return respond(res, 401, { message: msg }, { ...statusHeaders(401, msg, elapsed()), name, timeout: h.timeout });
        }
        nonces.set(key, nonce);

        // Stage 5 (verify_body_integrity) and the request-format checks.
        const body = checkBody(text, type, h);
        const calc = bodyHash(type, body);
        if (calc !== h.computed_body_hash) {
          const msg = `Internal Server Error #${randomUUID()}`;
          return respond(res, 500, { message: msg }, statusHeaders(500, msg, elapsed()));
        }

        // Forward, then synapse_to_response (5.8/5.11): the body echoed with outputs and status.
        if (name === 'Dummy') body.dummy_output = body.dummy_input * 2;
        if (name === 'Echo') body.reply = body.text.toUpperCase();
        const pt = elapsed();
        body.axon.status_code = 200;
        body.axon.status_message = 'Success';
        body.axon.process_time = pt;
        const headers = {
          name,
          timeout: h.timeout,
          ...statusHeaders(200, 'Success', pt),
          bt_header_axon_ip: h.bt_header_axon_ip,
          bt_header_axon_port: h.bt_header_axon_port,
          bt_header_axon_hotkey: h.bt_header_axon_hotkey,
        };
        for (const f of ['ip', 'version', 'nonce', 'uuid', 'hotkey', 'signature'])
          headers[`bt_header_dendrite_${f}`] = h[`bt_header_dendrite_${f}`];
        for (const f of type.required) headers[`bt_header_input_obj_${f}`] = h[`bt_header_input_obj_${f}`];
        headers.header_size = '464';
        headers.total_size = '3168';
        headers.computed_body_hash = calc;
        return respond(res, 200, body, headers);
      } catch (e) {
        const msg = e instanceof PeerCheck ? `peer check: ${e.message}` : `peer error: ${e.stack}`;
        const clean = msg.replace(/[^\x20-\x7e]/g, ' ');
        return respond(res, 400, { message: msg }, statusHeaders(400, clean, elapsed()));
      }
    });
  });
  server.keepAliveTimeout = 5000; // uvicorn's
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ port: server.address().port, hotkey: myHotkey })}\n`);
  });
  process.on('SIGTERM', () => process.exit(0));
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

main().catch((e) => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
