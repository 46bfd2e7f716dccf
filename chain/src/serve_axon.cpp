// prepare_serve_axon / submit_serve_axon (contract in serve_axon.hpp).
#include <bt/chain/neuron_info.hpp>
#include <bt/chain/scale_reader.hpp>
#include <bt/chain/serve_axon.hpp>
#include <bt/hex.hpp>

#include "vec_reader.hpp"

#include <string>
#include <system_error>
#include <thread>

namespace bt {
namespace {

[[noreturn]] void bad_answer(const std::string& method, const std::string& problem) {
  throw std::system_error(make_error_code(chain_errc::invalid_value), method + ": " + problem);
}

std::string hex_result(const bt::json& r, const std::string& method) {
  if (!r.is_string()) bad_answer(method, "expected a hex string, got " + r.dump().substr(0, 80));
  return r.get<std::string>();
}

std::vector<std::uint8_t> bytes_result(const bt::json& r, const std::string& method) {
  auto b = from_hex(hex_result(r, method));
  if (!b) bad_answer(method, "not hex");
  return std::move(*b);
}

hash256 hash_result(const bt::json& r, const std::string& method) {
  const auto b = bytes_result(r, method);
  if (b.size() != 32) bad_answer(method, "expected a 32-byte hash");
  hash256 h{};
  std::copy(b.begin(), b.end(), h.begin());
  return h;
}

std::uint64_t uint_result(const bt::json& r, const std::string& method, const char* field) {
  const bt::json& v = field ? (r.is_object() && r.contains(field) ? r.at(field) : bt::json()) : r;
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_string()) {
    // Header numbers are "0x..." hex.
    const std::string s = v.get<std::string>();
    if (s.size() > 2 && s.size() <= 18 && s[0] == '0' && s[1] == 'x') {
      std::uint64_t out = 0;
      for (std::size_t i = 2; i < s.size(); ++i) {
        const char c = s[i];
        const int d = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
        if (d < 0) bad_answer(method, std::string(field ? field : "result") + ": not hex");
        out = out * 16 + static_cast<std::uint64_t>(d);
      }
      return out;
    }
  }
  bad_answer(method, std::string(field ? field : "result") + ": expected an unsigned integer");
}

std::string hex0x(std::span<const std::uint8_t> b) {
  return "0x" + to_hex(b);
}

}  // namespace

serve_axon_plan prepare_serve_axon(rpc_client& client, const keypair& hotkey,
                                   const serve_axon_args& args) {
  check_serve_axon_args(args);  // before any network traffic
  serve_axon_plan plan;
  plan.args = args;

  const bt::json header = client.call("chain_getHeader", bt::json::array());
  plan.head_block = uint_result(header, "chain_getHeader", "number");
  plan.context.era = mortal_era::from_block(serve_axon_era_period, plan.head_block);
  plan.era_block = plan.context.era.birth(plan.head_block);
  plan.context.era_block_hash = hash_result(
      client.call("chain_getBlockHash", bt::json::array({plan.era_block})), "chain_getBlockHash");
  plan.context.genesis_hash =
      hash_result(client.call("chain_getBlockHash", bt::json::array({0})), "chain_getBlockHash");
  const std::string at = hex0x(plan.context.era_block_hash);

  const bt::json version = client.call("state_getRuntimeVersion", bt::json::array({at}));
  const auto spec = uint_result(version, "state_getRuntimeVersion", "specVersion");
  const auto tx = uint_result(version, "state_getRuntimeVersion", "transactionVersion");
  if (spec > UINT32_MAX || tx > UINT32_MAX)
    bad_answer("state_getRuntimeVersion", "version above u32");
  plan.context.spec_version = static_cast<std::uint32_t>(spec);
  plan.context.transaction_version = static_cast<std::uint32_t>(tx);

  const auto md_bytes =
      bytes_result(client.call("state_getMetadata", bt::json::array({at})), "state_getMetadata");
  runtime_metadata md;
  try {
    md = decode_metadata(md_bytes);
  } catch (const chain_decode_error& e) {
    throw e.with_prefix("state_getMetadata");
  }
  plan.metadata_version = md.version;

  plan.context.nonce =
      uint_result(client.call("system_accountNextIndex", bt::json::array({hotkey.ss58_address()})),
                  "system_accountNextIndex", nullptr);
  plan.extrinsic = sign_extrinsic(md, encode_serve_axon_call(md, args), plan.context, hotkey);
  return plan;
}

bt::json dry_run_json(const serve_axon_plan& plan) {
  return {{"call_hex", hex0x(plan.extrinsic.call)},
          {"signing_payload_hex", hex0x(plan.extrinsic.signing_payload)},
          {"extrinsic_hex", hex0x(plan.extrinsic.extrinsic)},
          {"spec_version", plan.context.spec_version},
          {"transaction_version", plan.context.transaction_version},
          {"nonce", plan.context.nonce},
          {"era_block", plan.era_block}};
}

serve_axon_confirmation submit_serve_axon(rpc_client& client, const serve_axon_plan& plan,
                                          const keypair& hotkey, std::chrono::milliseconds timeout,
                                          std::chrono::milliseconds poll) {
  serve_axon_confirmation c;
  c.extrinsic_hash = hex_result(
      client.call("author_submitExtrinsic", bt::json::array({hex0x(plan.extrinsic.extrinsic)})),
      "author_submitExtrinsic");
  const std::string key = hex0x(axons_storage_key(plan.args.netuid, hotkey.public_key()));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    ++c.polls;
    const bt::json r = client.call("state_getStorage", bt::json::array({key}));
    if (!r.is_null()) {
      // The stored AxonInfo, read by the one decoder of that record (neuron_info.cpp); its
      // errors name "AxonInfo.<field>".
      const auto bytes = bytes_result(r, "state_getStorage");
      scale_reader rd(bytes);
      const chain_axon_info a = detail::with_prefix("AxonInfo", [&] { return read_axon_info(rd); });
      rd.expect_end("AxonInfo");
      if (a.version == plan.args.version && a.ip == plan.args.ip && a.port == plan.args.port &&
          a.ip_type == plan.args.ip_type && a.protocol == plan.args.protocol)
        return c;
    }
    if (std::chrono::steady_clock::now() + poll > deadline)
      throw std::system_error(make_error_code(chain_errc::timeout),
                              "SubtensorModule.Axons did not show the served axon within " +
                                  std::to_string(timeout.count()) + " ms (extrinsic " +
                                  c.extrinsic_hash + ")");
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace bt
