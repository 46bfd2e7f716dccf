// What the Node receivers our dendrite is tested against share (epistula_verifier_peer.mjs,
// btauth_verifier_peer.mjs): an HTTP server on 127.0.0.1:<ephemeral> that reads each request's
// body and answers JSON, its ready line, and its end. Each receiver keeps its own verification.
import { createServer } from 'node:http';

/**
 * Serves until stdin closes or SIGTERM. `answer(req, body)` (body a Buffer) returns
 * [status, json] for the answer, or null when it has dealt with the connection itself. Prints
 * one line {"port": N, "hotkey": hotkey} once listening.
 */
export function serveReceiver(hotkey, answer) {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const reply = answer(req, Buffer.concat(chunks));
      if (reply === null) return;
      const text = JSON.stringify(reply[1]);
      res.writeHead(reply[0], {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ port: server.address().port, hotkey })}\n`);
  });
  process.on('SIGTERM', () => process.exit(0));
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}
