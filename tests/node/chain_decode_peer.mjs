// Independent decoder for tests/chain/decode_node_test.cpp: @polkadot/types (version pinned in
// package.json / package-lock.json) decodes the recorded runtime-API answers of a subtensor
// session with the output types that the recorded runtime metadata (V15) declares for
// NeuronInfoRuntimeApi_get_neurons_lite and SubnetInfoRuntimeApi_get_subnet_state. Nothing here
// is written from our layout notes: the field names, order and types all come from the
// metadata's type registry.
//
// Usage: node chain_decode_peer.mjs <session.json> <metadata_v15.hex> <out.json> [ipv6.txt]
// Writes one JSON object to <out.json>:
//   {"neurons_lite": {"input_length", "encoded_length", "value"},
//    "subnet_state": {"input_length", "encoded_length", "value"},
//    "ipv6_text": [..]}
// `value` is the decoded value with struct fields in snake_case, integers as decimal strings,
// bools as booleans, 32-byte account ids as SS58 (format 42, @polkadot/util-crypto), Option
// as null or its value, Vec and tuples as arrays. ipv6.txt holds one u128 in hex per line;
// ipv6_text is each one written by the WHATWG URL serialiser (Node's URL), which compresses
// IPv6 the way RFC 5952 does except that it never uses the mixed IPv4 notation.
// Exits 1 with a message on stderr when anything cannot be decoded.
import { readFileSync, writeFileSync } from 'node:fs';
import { Bool, Compact, Metadata, Option, Struct, TypeRegistry, U8aFixed } from '@polkadot/types';
import { hexToU8a } from '@polkadot/util';
import { cryptoWaitReady, encodeAddress } from '@polkadot/util-crypto';

const [sessionPath, metadataPath, outPath, ipv6Path] = process.argv.slice(2);
if (!outPath) {
  console.error('usage: node chain_decode_peer.mjs <session.json> <metadata_v15.hex> <out.json> [ipv6.txt]');
  process.exit(2);
}

const snake = (k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function norm(c) {
  if (c instanceof Option) return c.isSome ? norm(c.unwrap()) : null;
  if (c instanceof Compact) return norm(c.unwrap());
  if (c instanceof Bool) return c.isTrue;
  if (c instanceof Struct) {
    const o = {};
    for (const [k, v] of c.entries()) o[snake(k)] = norm(v);
    return o;
  }
  if (c instanceof U8aFixed) {
    if (c.length !== 32) throw new Error(`unexpected fixed byte array of ${c.length}`);
    return encodeAddress(c.toU8a(), 42);
  }
  if (Array.isArray(c)) return c.map(norm); // Vec, VecFixed and Tuple are arrays
  if (typeof c.toBigInt === 'function') return c.toBigInt().toString();
  throw new Error(`no rule for ${c.toRawType()}`);
}

await cryptoWaitReady();
const registry = new TypeRegistry();
const metadata = new Metadata(registry, readFileSync(metadataPath, 'utf8').trim());
registry.setMetadata(metadata);
if (metadata.version !== 15) throw new Error(`expected metadata V15, got V${metadata.version}`);

function outputType(apiName, methodName) {
  for (const api of metadata.asV15.apis) {
    if (api.name.toString() !== apiName) continue;
    for (const m of api.methods) {
      if (m.name.toString() === methodName) return registry.createLookupType(m.output);
    }
  }
  throw new Error(`${apiName}_${methodName} is not in the metadata`);
}

const session = JSON.parse(readFileSync(sessionPath, 'utf8'));
function recorded(method) {
  const c = session.calls.find((x) => x.method === 'state_call' && x.params[0] === method);
  if (!c) throw new Error(`no recorded state_call ${method}`);
  return hexToU8a(c.response.result);
}

function decode(apiName, methodName) {
  const bytes = recorded(`${apiName}_${methodName}`);
  const value = registry.createType(outputType(apiName, methodName), bytes);
  return { input_length: bytes.length, encoded_length: value.encodedLength, value: norm(value) };
}

const out = {
  neurons_lite: decode('NeuronInfoRuntimeApi', 'get_neurons_lite'),
  subnet_state: decode('SubnetInfoRuntimeApi', 'get_subnet_state'),
  ipv6_text: [],
};
if (ipv6Path) {
  for (const line of readFileSync(ipv6Path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const v = BigInt(`0x${line.trim()}`);
    const groups = [];
    for (let i = 7; i >= 0; i--) groups.push(((v >> BigInt(16 * i)) & 0xffffn).toString(16));
    const host = new URL(`http://[${groups.join(':')}]/`).hostname;
    out.ipv6_text.push(host.slice(1, -1));
  }
}
writeFileSync(outPath, JSON.stringify(out));
