// An independent peer that streams like a Python (bittensor 10.2.0) axon serving a
// StreamingSynapse (PROTOCOL 7), for tests/node/dendrite_stream_node_test.cpp. Node 20's built-in
// http server; signatures checked with @polkadot/util-crypto, the body hash with node's SHA3-256.
//
// Usage: node python_stream_axon_peer.mjs <the axon's hotkey, SS58> [delay_ms]
// Prints one JSON line {"port": N, "hotkey": "<ss58>"} once listening on 127.0.0.1:<ephemeral>,
// then serves until stdin closes or it gets SIGTERM.
//
// Route /WordStream: text: str (required, hashed), words: List[str] = []. Verification as
// Axon.default_verify (5.5: freshness, nonce order per hotkey:uuid, sr25519) and
// verify_body_integrity (5.7); failures answer the ordinary JSON error responses of 5.9. A
// verified request gets what BTStreamingResponse sends: status 200, `content-type:
// text/event-stream` as the first header, then the bt headers of synapse_to_response (axon
// status 200 / Success / process_time, the echoed blocks, placeholders, sizes, body hash), no
// Content-Length (chunked), then each word of `text` followed by "\n" as one chunk, waiting
// delay_ms before each, then the empty final chunk.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { hexToU8a } from '@polkadot/util';
import { cryptoWaitReady, decodeAddress, sr25519Verify } from '@polkadot/util-crypto';

const ALLOWED_DELTA_NS = 4_000_000_000n;
const sha3hex = (s) => createHash('sha3-256').update(Buffer.from(s, 'utf8')).digest('hex');
const pyFloatRepr = (x) => (Number.isInteger(x) ? `${x}.0` : String(x));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function respondJson(res, status, message, processTime) {
  const text = JSON.stringify({ message });
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    bt_header_axon_status_code: String(status),
    bt_header_axon_status_message: message.replace(/[^\x20-\x7e]/g, ' '),
    bt_header_axon_process_time: pyFloatRepr(processTime),
  });
  res.end(text);
}

async function main() {
  await cryptoWaitReady();
  const myHotkey = process.argv[2];
  const delayMs = Number(process.argv[3] ?? '0');
  const nonces = new Map();

  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const start = process.hrtime.bigint();
      const elapsed = () => Number(process.hrtime.bigint() - start) / 1e9;
      const name = (req.url ?? '/').slice(1);
      if (req.method !== 'POST' || name !== 'WordStream') {
        return respondJson(res, 404, `Synapse name '${name}' not found. Available synapses ['Synapse', 'WordStream']`, elapsed());
      }
      const h = req.headers;
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch (e) {
        return respondJson(res, 400, `peer check: body not JSON: ${e.message}`, elapsed());
      }
      if (typeof body.text !== 'string') return respondJson(res, 400, 'peer check: text missing', elapsed());

      // Axon.default_verify (5.5).
      const nonce = BigInt(h.bt_header_dendrite_nonce ?? '0');
      const dhot = h.bt_header_dendrite_hotkey ?? '';
      const uuid = h.bt_header_dendrite_uuid ?? '';
      const key = `${dhot}:${uuid}`;
      const message = `${h.bt_header_dendrite_nonce}.${dhot}.${myHotkey}.${uuid}.${h.computed_body_hash}`;
      let fail = null;
      const now = BigInt(Date.now()) * 1_000_000n;
      const window = now - ALLOWED_DELTA_NS - BigInt(Math.round(Number(h.timeout) * 1e9));
      if (!nonces.has(key) && nonce <= window) fail = 'Nonce is too old: acceptable delta exceeded';
      else if (nonces.has(key) && nonce <= nonces.get(key)) fail = 'Nonce is too old, a newer one was last processed';
      else {
        let ok = false;
        try {
          ok = sr25519Verify(message, hexToU8a(h.bt_header_dendrite_signature), decodeAddress(dhot));
        } catch {
          ok = false;
        }
        if (!ok) fail = `Signature mismatch with ${message} and ${h.bt_header_dendrite_signature}`;
      }
      if (fail) return respondJson(res, 401, `Not Verified with error: ${fail}`, elapsed());
      nonces.set(key, nonce);

      // verify_body_integrity (5.7): required_hash_fields = ["text"].
      const calc = sha3hex(sha3hex(body.text));
      if (calc !== h.computed_body_hash) return respondJson(res, 500, 'Internal Server Error #body-hash', elapsed());

      // BTStreamingResponse: the headers are fixed before the first chunk (D17).
      const headers = [
        ['content-type', 'text/event-stream'],
        ['name', 'WordStream'],
        ['timeout', h.timeout],
        ['bt_header_axon_status_code', '200'],
        ['bt_header_axon_status_message', 'Success'],
        ['bt_header_axon_process_time', pyFloatRepr(elapsed())],
        ['bt_header_axon_ip', h.bt_header_axon_ip],
        ['bt_header_axon_port', h.bt_header_axon_port],
        ['bt_header_axon_hotkey', h.bt_header_axon_hotkey],
      ];
      for (const f of ['ip', 'version', 'nonce', 'uuid', 'hotkey', 'signature'])
        headers.push([`bt_header_dendrite_${f}`, h[`bt_header_dendrite_${f}`]]);
      headers.push(['bt_header_input_obj_text', h.bt_header_input_obj_text ?? 'IiI=']);
      headers.push(['header_size', '0'], ['total_size', '0'], ['computed_body_hash', calc]);
      res.writeHead(200, headers.flat());
      let gone = false;
      res.on('close', () => {
        gone = true;
      });
      for (const w of body.text.split(/[ \t\n\v\f\r]+/).filter((x) => x.length > 0)) {
        if (delayMs > 0) await sleep(delayMs);
        if (gone) return;
        res.write(`${w}\n`);
      }
      res.end();
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
