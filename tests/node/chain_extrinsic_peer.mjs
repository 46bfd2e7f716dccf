// Independent checker for tests/chain/extrinsic_node_test.cpp: @polkadot/types (version pinned
// in package.json / package-lock.json) decodes our signed serve_axon extrinsics with the runtime
// metadata each was built for, rebuilds the signing payload from what it decoded plus the chain
// values it is given, and verifies the sr25519 signature over that payload with
// @polkadot/util-crypto. Nothing here comes from our encoder: call and argument names, the
// extension list and its order come from the metadata.
//
// The runtime's own transaction extensions carry no data; @polkadot/types does not know them,
// so they are declared here as user extensions with empty extrinsic and payload types (as
// polkadot-js documents for chain-specific extensions).
//
// Usage: node chain_extrinsic_peer.mjs <cases.json> <out.json>
// cases.json: [{"name", "metadata_path", "extrinsic_hex", "spec_version", "transaction_version",
//               "genesis_hash", "block_hash"}]
// out.json:   [{"name", "metadata_version", "signed", "version", "section", "method",
//               "args": {name: decimal string}, "signer", "nonce", "tip", "era_period",
//               "era_phase", "extensions", "signing_payload_hex", "signature_valid"}]
// Exits 1 with a message on stderr when a case cannot be decoded at all.
import { readFileSync, writeFileSync } from 'node:fs';
import { Metadata, TypeRegistry } from '@polkadot/types';
import { hexToU8a, u8aToHex } from '@polkadot/util';
import { blake2AsU8a, cryptoWaitReady, decodeAddress, sr25519Verify } from '@polkadot/util-crypto';

const [casesPath, outPath] = process.argv.slice(2);
if (!outPath) {
  console.error('usage: node chain_extrinsic_peer.mjs <cases.json> <out.json>');
  process.exit(2);
}

// Subtensor's no-data transaction extensions (runtime source: each is a unit struct whose
// implicit data is ()).
const noData = { extrinsic: {}, payload: {} };
const userExtensions = {
  SubtensorTransactionExtension: noData,
  DrandPriority: noData,
  SudoTransactionExtension: noData,
  CheckShieldedTxValidity: noData,
};

await cryptoWaitReady();
const cases = JSON.parse(readFileSync(casesPath, 'utf8'));
const results = [];
for (const c of cases) {
  try {
    const registry = new TypeRegistry();
    const metadata = new Metadata(registry, readFileSync(c.metadata_path, 'utf8').trim());
    registry.setMetadata(metadata, undefined, userExtensions);
    const ext = registry.createType('Extrinsic', hexToU8a(c.extrinsic_hex));
    const args = {};
    ext.method.meta.args.forEach((a, i) => {
      args[a.name.toString()] = ext.method.args[i].toString();
    });
    const era = ext.era.isMortalEra ? ext.era.asMortalEra : null;
    const payload = registry.createType(
      'ExtrinsicPayload',
      {
        method: ext.method.toHex(),
        era: ext.era,
        nonce: ext.nonce,
        tip: ext.tip,
        mode: 0,
        metadataHash: null,
        specVersion: c.spec_version,
        transactionVersion: c.transaction_version,
        genesisHash: c.genesis_hash,
        blockHash: c.block_hash,
      },
      { version: 4 },
    );
    let signed = payload.toU8a({ method: true });
    if (signed.length > 256) signed = blake2AsU8a(signed, 256);
    results.push({
      name: c.name,
      metadata_version: metadata.version,
      signed: ext.isSigned,
      version: ext.version,
      section: ext.method.section,
      method: ext.method.method,
      args,
      signer: ext.signer.toString(),
      nonce: ext.nonce.toString(),
      tip: ext.tip.toString(),
      era_period: era ? era.period.toString() : null,
      era_phase: era ? era.phase.toString() : null,
      extensions: registry.signedExtensions,
      signing_payload_hex: u8aToHex(signed).slice(2),
      signature_valid: sr25519Verify(signed, ext.signature.toU8a(), decodeAddress(ext.signer.toString())),
      encoded_length: ext.toU8a().length,
    });
  } catch (e) {
    console.error(`${c.name}: ${e.stack || e}`);
    process.exit(1);
  }
}
writeFileSync(outPath, JSON.stringify(results, null, 1));
