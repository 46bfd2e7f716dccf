// What the Node peers that play a Python client share: the @polkadot packages, the check
// counter, the dev keys, Python's json.dumps for a synapse's values, the parts of a request
// every synapse has, a bt-axon child started on port 0, and a throwaway redis-server. Each peer
// keeps its own protocol logic (what it sends and how it judges the answer); only this
// scaffolding is written once.
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';

/** The peer's name in messages: its file name without .mjs. */
export const peerName = basename(process.argv[1] ?? 'peer', '.mjs');

let util;
let crypto;
try {
  util = await import('@polkadot/util');
  crypto = await import('@polkadot/util-crypto');
} catch (e) {
  console.error(`${peerName}: cannot load @polkadot packages (${e.message}); run scripts/setup (npm ci in tests/node)`);
  process.exit(1);
}
export { util, crypto };

// ---- checks ----

let failures = 0;
let checks = 0;
/** Counts a check; prints `what` when it failed. Returns cond. */
export function check(cond, what) {
  checks += 1;
  if (!cond) {
    failures += 1;
    console.error(`FAIL: ${what}`);
  }
  return cond;
}
/** Ends the peer: exit 1 with the count and `logs` (the axons' stderr) when a check failed. */
export function finish(logs) {
  if (failures) {
    console.error(`${peerName}: ${failures} of ${checks} checks failed\n--- bt-axon stderr ---\n${logs}`);
    process.exit(1);
  }
  console.log(`${peerName}: all ${checks} checks passed`);
}

// ---- keys, as Keypair.create_from_uri derives dev keys ----

const DEV_PHRASE = 'bottom drive obey lake curtain smoke basket hold race lonely fit walk';
export function fromUri(uri) {
  const { keyExtractSuri, keyFromPath, mnemonicToMiniSecret, sr25519PairFromSeed } = crypto;
  const root = sr25519PairFromSeed(mnemonicToMiniSecret(DEV_PHRASE));
  const { path } = keyExtractSuri(`${DEV_PHRASE}${uri}`);
  return keyFromPath(root, path, 'sr25519');
}
export const ss58 = (pair) => crypto.encodeAddress(pair.publicKey, 42);

// ---- Python's json.dumps (separators ", " and ": ") for the values a synapse holds ----

/** A number Python holds as a float (dumps writes 12.0, not 12). */
export class PyFloat {
  constructor(v) { this.v = v; }
}
/** repr() of a float: the shortest round trip, with ".0" on integral values. */
export const pyFloatRepr = (v) => (Number.isInteger(v) ? `${v}.0` : String(v));
export function dumps(v) {
  if (v === null || v === undefined) return 'null';
  if (v instanceof PyFloat) return pyFloatRepr(v.v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'string') return JSON.stringify(v).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (Array.isArray(v)) return `[${v.map(dumps).join(', ')}]`;
  return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${dumps(x)}`).join(', ')}}`;
}

// ---- what every synapse request has ----

export const sha3hex = (s) => createHash('sha3-256').update(Buffer.from(s, 'utf8')).digest('hex');
export const TERMINAL_FIELDS = ['status_code', 'status_message', 'process_time', 'ip', 'port',
  'version', 'nonce', 'uuid', 'hotkey', 'signature'];
/** A TerminalInfo block with every field, null where `values` has none. */
export const terminal = (values) => Object.fromEntries(TERMINAL_FIELDS.map((f) => [f, values[f] ?? null]));

let lastNonce = 0n;
/** time.time_ns() as a Python dendrite's nonce, strictly increasing within this process. */
export function timeNs() {
  let n = BigInt(Date.now()) * 1_000_000n;
  if (n <= lastNonce) n = lastNonce + 1n;
  lastNonce = n;
  return n;
}
/** A string shaped like str(uuid.uuid1()), as a Python dendrite's uuid. */
export function uuid1Like() {
  const h = randomBytes(16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-1${h.slice(13, 16)}-${(8 + (parseInt(h[16], 16) & 3)).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

// ---- a bt-axon child ----

/**
 * Starts bt-axon (//Bob on 127.0.0.1, port 0, then `args`) and waits up to 30 s for its ready
 * line. Returns the child with `info` (the ready line's JSON), `port`, `stderrText` and
 * `exited` (a promise of {code, signal}); when no line came, a check fails, the child is killed
 * and it throws with the child's stderr.
 */
export async function startAxon(binary, args = []) {
  const child = spawn(binary, ['--uri', '//Bob', '--axon.ip', '127.0.0.1', '--axon.port', '0', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderrText = '';
  child.stderr.on('data', (d) => { child.stderrText += d; });
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const lines = createInterface({ input: child.stdout });
  const first = await Promise.race([
    new Promise((resolve) => lines.once('line', resolve)),
    child.exited.then(() => null),
    // unref(): a pending guard timer must not keep node alive for 30 s after the checks.
    new Promise((resolve) => setTimeout(() => resolve(null), 30_000).unref()),
  ]);
  if (!check(first !== null, 'bt-axon printed its AxonInfo line')) {
    child.kill('SIGKILL');
    throw new Error(`bt-axon did not start:\n${child.stderrText}`);
  }
  child.info = JSON.parse(first);
  child.port = child.info.port;
  return child;
}

/** SIGTERM, then a check that bt-axon drained and exited with status 0 within 20 s. */
export async function stopAxon(child) {
  child.kill('SIGTERM');
  const { code, signal } = await Promise.race([child.exited,
    new Promise((resolve) => setTimeout(() => resolve({ code: 'timeout' }), 20_000).unref())]);
  check(code === 0 && signal === null, `bt-axon exits with status 0 on SIGTERM (got ${code}/${signal})`);
}

/** A TCP port free on 127.0.0.1 right now (the OS's choice). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts a throwaway redis-server (no persistence) on a free loopback port and waits up to 5 s
 * until it accepts connections. Returns {child, port}; `child.exited` is a promise of
 * {code, signal}. The caller stops it (SIGTERM).
 */
export async function startRedis(binary) {
  const port = await freePort();
  const child = spawn(binary, ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  for (let i = 0; i < 100; i += 1) {
    const up = await new Promise((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => { c.end(); resolve(true); });
      c.on('error', () => resolve(false));
    });
    if (up) return { child, port };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not listen on ${port}`);
}

/**
 * Sends `body` (a Buffer) as `method` to `target` on 127.0.0.1:`port` with JSON's Content-Type
 * and `headers` ({name: value}, or [[name, value], ...] to repeat a name), through `agent`.
 * Resolves {status, text, json (null when the body is not JSON), headers}.
 */
export function sendJson(port, headers, body, { method = 'POST', target = '/echo', agent } = {}) {
  const list = Array.isArray(headers) ? headers : Object.entries(headers);
  const raw = [['Host', `127.0.0.1:${port}`], ['Content-Type', 'application/json'], ...list];
  return new Promise((resolve, reject) => {
    const r = http.request({ host: '127.0.0.1', port, method, path: target, agent, headers: raw.flat(), timeout: 12000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json = null;
        try { json = JSON.parse(text); } catch { /* checked by the caller */ }
        resolve({ status: res.statusCode, text, json, headers: res.headers });
      });
    });
    r.on('timeout', () => r.destroy(new Error('request timed out')));
    r.on('error', reject);
    r.end(body);
  });
}
