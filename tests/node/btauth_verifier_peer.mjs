// An independent btauth/1 receiver for tests/node/btauth_node_test.cpp: it verifies requests made
// by our dendrite (dendrite::btauth_call, bt-dendrite btauth) with btauth.mjs's verifyRequest, an
// implementation written from docs/protocol.md ("btauth/1") that shares no code with ours.
//
// Usage: node btauth_verifier_peer.mjs <this receiver's hotkey, SS58>
// Prints one JSON line {"port": N, "hotkey": "<ss58>"} once listening on 127.0.0.1:<ephemeral>,
// then serves until stdin closes or it gets SIGTERM.
//
// Every request, any method and target: verified (receiver required, the SDK's freshness window,
// a replay set of hotkey/nonce kept by this process), then answered
//   200 {"hotkey", "nonce", "crypto", "method", "target", "body": <the JSON body, null if empty>}
//   401 {"error": "<the failure class>", "why": "..."}
// A repeated X-Bittensor-* header is refused as MalformedAuth.
// A target starting with /drop-once is, the first time it is seen, verified (its nonce recorded
// as used) and then dropped: the connection is destroyed without an answer, the keep-alive race
// a client retries on a new connection. Later requests to it are answered as above, with
// "dropped_nonce": the nonce of the dropped request.
import { cryptoWaitReady } from '@polkadot/util-crypto';
import { Refusal, nowNs, verifyRequest } from './btauth.mjs';
import { serveReceiver } from './receiver_support.mjs';

function headersOnce(req) {
  const h = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const n = req.rawHeaders[i].toLowerCase();
    if (n.startsWith('x-bittensor-') && n in h)
      throw new Refusal('MalformedAuth', `repeated header ${req.rawHeaders[i]}`);
    h[n] = req.rawHeaders[i + 1];
  }
  return h;
}

function verify(req, raw, self, seen) {
  const h = headersOnce(req);
  const v = verifyRequest(h, raw, { method: req.method, target: req.url, self, nowNs: nowNs(), seen });
  let body = null;
  if (raw.length > 0) {
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch (e) {
      throw new Refusal('MalformedAuth', `body is not JSON (${e.message})`);
    }
  }
  return { ...v, method: req.method, target: req.url, body };
}

async function main() {
  const self = process.argv[2];
  if (!self) throw new Error('usage: node btauth_verifier_peer.mjs <hotkey ss58>');
  await cryptoWaitReady();
  const seen = new Set();
  const dropped = new Map();  // target -> the nonce of the request dropped
  serveReceiver(self, (req, raw) => {
    try {
      const out = verify(req, raw, self, seen);
      if (req.url.startsWith('/drop-once')) {
        if (!dropped.has(req.url)) {
          dropped.set(req.url, out.nonce);
          req.socket.destroy();
          return null;
        }
        out.dropped_nonce = dropped.get(req.url);
      }
      return [200, out];
    } catch (e) {
      return [401, e instanceof Refusal ? { error: e.kind, why: e.message } : { error: `peer error: ${e.stack}` }];
    }
  });
}

main().catch((e) => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
