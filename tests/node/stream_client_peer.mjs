// An independent streaming client shaped like a Python (bittensor 10.2.0) dendrite's call_stream
// (PROTOCOL 7), for the axon's streaming test (tests/axon_stream_node.cmake). It starts bt-axon
// with --stream.delay_ms, sends WordStream requests built as preprocess_synapse_for_request
// builds them (PROTOCOL 4, sr25519 by @polkadot/util-crypto), reads the bt headers from the
// response head as aiohttp exposes them, reads the body as it arrives (iter_any) and splits it
// with the type's chunk contract (each word followed by "\n"). Scenarios: a whole stream, many
// concurrent streams, the deadline cutting a slow stream, a client that pauses past the deadline, an error
// before streaming; then SIGTERM and a clean exit (status 0).
//
// Usage: node stream_client_peer.mjs <path to bt-axon>
// Exit status 0 when every check passed; 1 otherwise (each failure printed on stderr).
import http from 'node:http';

import {
  check, crypto, dumps, finish, fromUri, PyFloat, pyFloatRepr, sha3hex, ss58, startAxon, stopAxon,
  TERMINAL_FIELDS, terminal, timeNs, util, uuid1Like,
} from './peer_support.mjs';

const { u8aToHex, stringToU8a } = util;
const { cryptoWaitReady, sr25519Sign } = crypto;

const axonBinary = process.argv[2];
if (!axonBinary) {
  console.error('usage: node stream_client_peer.mjs <bt-axon>');
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// The request, as a Python dendrite builds it (see python_dendrite_peer.mjs)

/** WordStream(text=...) as preprocess_synapse_for_request + to_headers + json.dumps produce it. */
function wordStreamRequest({ text, keypair, uuid, axonHotkey, axonIp, axonPort, timeout = 12.0, sign = true }) {
  const nonce = timeNs();
  const dendrite = terminal({ ip: '127.0.0.1', version: 10002000, nonce, uuid, hotkey: ss58(keypair) });
  const axon = terminal({ ip: axonIp, port: axonPort, hotkey: axonHotkey });
  const bodyHash = sha3hex(sha3hex(text)); // required_hash_fields = ["text"]
  const message = `${nonce}.${dendrite.hotkey}.${axonHotkey}.${uuid}.${bodyHash}`;
  if (sign) dendrite.signature = u8aToHex(sr25519Sign(stringToU8a(message), keypair));
  const headers = [['name', 'WordStream'], ['timeout', pyFloatRepr(timeout)]];
  for (const f of TERMINAL_FIELDS) if (axon[f] !== null) headers.push([`bt_header_axon_${f}`, String(axon[f])]);
  for (const f of TERMINAL_FIELDS) if (dendrite[f] !== null) headers.push([`bt_header_dendrite_${f}`, String(dendrite[f])]);
  headers.push(['bt_header_input_obj_text', Buffer.from('""').toString('base64')]);
  headers.push(['header_size', '464'], ['total_size', '3004'], ['computed_body_hash', bodyHash]);
  const body = {
    name: 'WordStream', timeout: new PyFloat(timeout), total_size: 3004, header_size: 0, dendrite, axon,
    computed_body_hash: '', text, words: [],
  };
  return { path: '/WordStream', headers, body: dumps(body) };
}

// ---------------------------------------------------------------------------------------------
// call_stream, as aiohttp runs it: the head first (bt headers), then the body as it arrives

/**
 * Resolves to { status, rawHeaders, headers, words, reads, complete, cut, text } where `reads` is
 * the number of body reads (aiohttp's iter_any items), `complete` says the body ended with the
 * final chunk and `cut` that the connection closed before it. `pauseMs` makes the client stop
 * reading for that long after the head.
 */
function callStream(port, req, { pauseMs = 0 } = {}) {
  return new Promise((resolve, reject) => {
    const body = Buffer.from(req.body, 'utf8');
    const headers = [
      ['Host', `127.0.0.1:${port}`], ['Accept', '*/*'], ['Accept-Encoding', 'gzip, deflate'],
      ['User-Agent', 'Python/3.11 aiohttp/3.9.5'], ['Content-Length', String(body.length)],
      ['Content-Type', 'application/json'], ...req.headers,
    ];
    const r = http.request({ host: '127.0.0.1', port, method: 'POST', path: req.path, agent: false, headers: headers.flat() }, (res) => {
      const out = { status: res.statusCode, rawHeaders: res.rawHeaders, headers: res.headers, words: [], reads: 0, complete: false, cut: false, text: '' };
      let partial = '';
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        if (partial !== '') out.words.push(partial); // finish_stream: a last word without "\n"
        resolve(out);
      };
      if (pauseMs > 0) {
        res.pause();
        setTimeout(() => res.resume(), pauseMs);
      }
      res.on('data', (d) => {
        out.reads += 1;
        const s = d.toString('utf8');
        out.text += s;
        // process_streaming_response: split on "\n", keep a partial word for the next read.
        const parts = (partial + s).split('\n');
        partial = parts.pop();
        out.words.push(...parts);
      });
      res.on('end', () => { out.complete = res.complete; finish(); });
      res.on('aborted', () => { out.cut = true; });
      res.on('error', () => { out.cut = true; finish(); });
      res.on('close', () => { if (!res.complete) out.cut = true; finish(); });
    });
    r.on('error', reject);
    r.end(body);
  });
}

const isPyInt = (s) => /^\s*[+-]?\d+(_\d+)*\s*$/.test(s);
const isPyFloat = (s) => s !== undefined && s.trim() !== '' && !Number.isNaN(Number(s));

/** The MUSTs of PROTOCOL 7 for the head of a streamed answer. */
function checkStreamHead(res, label, text) {
  check(res.status === 200, `${label}: HTTP 200 (got ${res.status})`);
  check(res.rawHeaders[0]?.toLowerCase() === 'content-type' && res.rawHeaders[1] === 'text/event-stream',
    `${label}: first header is content-type: text/event-stream (got ${res.rawHeaders[0]}: ${res.rawHeaders[1]})`);
  check(res.headers['transfer-encoding'] === 'chunked', `${label}: chunked transfer encoding`);
  check(res.headers['content-length'] === undefined, `${label}: no content-length`);
  // extract_response_json reads these from the head, then process_server_response casts them.
  check(res.headers.name === 'WordStream', `${label}: name header`);
  check(res.headers.bt_header_axon_status_code === '200', `${label}: bt_header_axon_status_code 200`);
  check(res.headers.bt_header_axon_status_message === 'Success', `${label}: bt_header_axon_status_message Success`);
  check(isPyFloat(res.headers.bt_header_axon_process_time), `${label}: process_time parses with float()`);
  for (let i = 0; i < res.rawHeaders.length; i += 2) {
    const k = res.rawHeaders[i];
    if (k.startsWith('bt_header_') && /_(status_code|port|version|nonce)$/.test(k))
      check(isPyInt(res.rawHeaders[i + 1]), `${label}: ${k} parses with int()`);
  }
  for (const k of ['header_size', 'total_size']) check(isPyInt(res.headers[k] ?? ''), `${label}: ${k} is an integer`);
  check(res.headers.computed_body_hash === sha3hex(sha3hex(text)), `${label}: computed_body_hash of text`);
}

const words = (text) => text.split(/\s+/).filter((w) => w !== '');

// ---------------------------------------------------------------------------------------------
// Scenario

await cryptoWaitReady();
const alice = fromUri('//Alice');
const bob = fromUri('//Bob');

const delayMs = 20;
let child;
const killer = setTimeout(() => { console.error('stream_client_peer: overall timeout'); child?.kill('SIGKILL'); process.exit(1); }, 60_000);

try {
  child = await startAxon(axonBinary, ['--stream.delay_ms', String(delayMs)]);
  const { info } = child;
  const port = info.port;
  const base = { keypair: alice, axonHotkey: ss58(bob), axonIp: info.ip, axonPort: port };

  // --- one whole stream ---
  const text = 'the quick brown fox jumps over the lazy dog';
  {
    const res = await callStream(port, wordStreamRequest({ ...base, text, uuid: uuid1Like() }));
    checkStreamHead(res, 'stream', text);
    check(res.complete && !res.cut, 'stream: ended with the final chunk');
    check(JSON.stringify(res.words) === JSON.stringify(words(text)), `stream: the words in order (got ${JSON.stringify(res.words)})`);
    check(res.text === words(text).map((w) => `${w}\n`).join(''), 'stream: body bytes are word + "\\n" each');
    // With a delay before each word the body arrives in pieces, not at the end.
    check(res.reads >= 2, `stream: body read as it arrived (${res.reads} reads)`);
  }

  // --- many concurrent streams (one dendrite instance each, as many validators) ---
  {
    const n = 16;
    const texts = Array.from({ length: n }, (_, i) => Array.from({ length: 10 }, (_, k) => `c${i}w${k}`).join(' '));
    const results = await Promise.all(texts.map((t) => callStream(port, wordStreamRequest({ ...base, text: t, uuid: uuid1Like() }))));
    const good = results.filter((res, i) => res.status === 200 && res.complete && JSON.stringify(res.words) === JSON.stringify(words(texts[i])));
    check(good.length === n, `concurrent: ${good.length} of ${n} streams complete and correct`);
  }

  // --- the deadline bounds the whole stream: 60 words x 20 ms do not fit in 0.5 s ---
  {
    const long = Array.from({ length: 60 }, (_, k) => `w${k}`).join(' ');
    const res = await callStream(port, wordStreamRequest({ ...base, text: long, uuid: uuid1Like(), timeout: 0.5 }));
    check(res.status === 200, `deadline: the stream started (HTTP ${res.status})`);
    check(res.cut && !res.complete, 'deadline: the stream was cut, not ended as complete');
    check(res.words.length > 0 && res.words.length < 60, `deadline: some words, not all (${res.words.length})`);
    check(res.words.every((w, k) => w === `w${k}`), 'deadline: the words received are a prefix');
  }

  // --- a client that stops reading after the head for longer than the deadline: when it reads
  //     again it finds what was sent before the deadline, then the cut ---
  {
    const long = Array.from({ length: 500 }, (_, k) => `word${k}`).join(' ');
    const res = await callStream(port, wordStreamRequest({ ...base, text: long, uuid: uuid1Like(), timeout: 1.0 }), { pauseMs: 2000 });
    check(res.status === 200, 'stalled client: head received');
    check(res.cut && !res.complete, 'stalled client: the axon cut the stream');
    check(res.words.length < 500 && res.words.every((w, k) => w === `word${k}`), `stalled client: a prefix of the words (${res.words.length})`);
  }

  // --- errors before streaming are ordinary JSON answers ---
  {
    const res = await callStream(port, wordStreamRequest({ ...base, text, uuid: uuid1Like(), sign: false }));
    check(res.status === 401, `unsigned: 401 (got ${res.status})`);
    check(res.headers['content-type'] === 'application/json', 'unsigned: JSON answer');
    let message = null;
    try { message = JSON.parse(res.text).message; } catch { /* checked below */ }
    check(message === 'Not Verified with error: Missing Signature', `unsigned: message (got ${message})`);
    check(res.headers.bt_header_axon_status_code === '401', 'unsigned: bt_header_axon_status_code 401');
  }

  // --- still serving, then a clean stop ---
  {
    const res = await callStream(port, wordStreamRequest({ ...base, text: 'still here', uuid: uuid1Like() }));
    check(res.complete && JSON.stringify(res.words) === '["still","here"]', 'still serving after the cut streams');
  }
  await stopAxon(child);
} catch (e) {
  check(false, `unexpected: ${e.stack ?? e}`);
  child?.kill('SIGKILL');
} finally {
  clearTimeout(killer);
}

finish(child?.stderrText ?? '');
