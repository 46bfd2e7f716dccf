// bt::subtensor (subtensor.hpp): pin a block, then both runtime calls at once, then decode.
#include <bt/chain/subtensor.hpp>

#include <bt/chain/chain_error.hpp>
#include <bt/chain/neuron_info.hpp>
#include <bt/chain/subnet_state.hpp>
#include <bt/hex.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/post.hpp>

#include <charconv>
#include <future>
#include <mutex>

namespace bt {

namespace net = boost::asio;

subtensor_error::subtensor_error(bt::error e)
    : std::runtime_error(e.message()), error_(std::move(e)) {}

subtensor::subtensor(endpoint ep, rpc_client_options opt)
    : client_(std::make_shared<rpc_client>(std::move(ep), opt)) {}

subtensor::subtensor(std::shared_ptr<rpc_client> client) : client_(std::move(client)) {
  if (!client_) throw std::invalid_argument("bt::subtensor: null client");
}

std::string netuid_call_arg(std::uint16_t netuid) {
  const std::uint8_t le[2] = {static_cast<std::uint8_t>(netuid & 0xff),
                              static_cast<std::uint8_t>(netuid >> 8)};
  return "0x" + to_hex(le);
}

namespace {

constexpr const char* neurons_api = "NeuronInfoRuntimeApi_get_neurons_lite";
constexpr const char* state_api = "SubnetInfoRuntimeApi_get_subnet_state";

bool is_block_hash(const bt::json& j) {
  if (!j.is_string()) return false;
  const auto& s = j.get_ref<const std::string&>();
  return s.size() == 66 && s.starts_with("0x") && from_hex(s).has_value();
}

/// "0x689052" -> 6852690 (a header's number is a hex string).
std::optional<std::uint64_t> header_number(const bt::json& header) {
  if (!header.is_object()) return std::nullopt;
  auto it = header.find("number");
  if (it == header.end() || !it->is_string()) return std::nullopt;
  std::string_view s = it->get_ref<const std::string&>();
  if (!s.starts_with("0x") || s.size() < 3 || s.size() > 18) return std::nullopt;
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

bt::error bad_answer(const std::string& method, const std::string& what, const endpoint& ep,
                     const bt::json& got) {
  std::string g = got.dump();
  if (g.size() > 80) g = g.substr(0, 80) + "...";
  return bt::error{chain_errc::invalid_value, method, what + " from " + ep.url() + ", got " + g};
}

/// The state of one metagraph read between the two concurrent runtime calls.
struct metagraph_op {
  std::uint16_t netuid = 0;
  pinned_block block;
  std::mutex mutex;  // the two completions may come on different threads of a shared executor
  int waiting = 2;
  bt::error neurons_err, state_err;
  bt::json neurons_result, state_result;
};

}  // namespace

void subtensor::async_pin_impl(std::optional<std::uint64_t> number, pin_handler handler) {
  rpc_client* c = client_.get();
  auto finish = [c](pin_handler h, bt::error e, pinned_block b) {
    net::post(c->get_executor(), net::append(std::move(h), std::move(e), std::move(b)));
  };
  if (number) {
    c->async_call(
        "chain_getBlockHash", {*number},
        [c, finish, n = *number, h = std::move(handler)](bt::error e, bt::json r) mutable {
          if (e) return finish(std::move(h), std::move(e), {});
          if (r.is_null()) {
            return finish(std::move(h),
                          bt::error{chain_errc::invalid_value, "chain_getBlockHash",
                                    "block " + std::to_string(n) + " is unknown to " +
                                        c->get_endpoint().url() + " (null hash)"},
                          {});
          }
          if (!is_block_hash(r)) {
            return finish(
                std::move(h),
                bad_answer("chain_getBlockHash", "not a block hash", c->get_endpoint(), r), {});
          }
          finish(std::move(h), {}, pinned_block{n, r.get<std::string>()});
        });
    return;
  }
  c->async_call(
      "chain_getHead", bt::json::array(),
      [c, finish, h = std::move(handler)](bt::error e, bt::json head) mutable {
        if (e) return finish(std::move(h), std::move(e), {});
        if (!is_block_hash(head)) {
          return finish(std::move(h),
                        bad_answer("chain_getHead", "not a block hash", c->get_endpoint(), head),
                        {});
        }
        std::string hash = head.get<std::string>();
        c->async_call("chain_getHeader", {hash},
                      [c, finish, hash, h = std::move(h)](bt::error e, bt::json header) mutable {
                        if (e) return finish(std::move(h), std::move(e), {});
                        auto n = header_number(header);
                        if (!n) {
                          return finish(std::move(h),
                                        bad_answer("chain_getHeader", "no hex block number",
                                                   c->get_endpoint(), header),
                                        {});
                        }
                        finish(std::move(h), {}, pinned_block{*n, hash});
                      });
      });
}

void subtensor::async_metagraph_impl(std::uint16_t netuid, std::optional<std::uint64_t> number,
                                     metagraph_handler handler) {
  rpc_client* c = client_.get();
  auto finish = [c](metagraph_handler h, bt::error e, metagraph m) {
    net::post(c->get_executor(), net::append(std::move(h), std::move(e), std::move(m)));
  };
  async_pin_impl(number, [c, netuid, finish, h = std::move(handler)](bt::error e,
                                                                     pinned_block b) mutable {
    if (e) return finish(std::move(h), std::move(e), {});
    auto op = std::make_shared<metagraph_op>();
    op->netuid = netuid;
    op->block = std::move(b);
    // Both handlers share the user's handler through this holder; the second to finish
    // decodes and completes.
    auto holder = std::make_shared<metagraph_handler>(std::move(h));
    // Completes the read. No exception may leave it: it runs on the client's thread, and the
    // user's handler must be called exactly once (a read that never completes would stall its
    // caller, e.g. a miner's refresher, for good).
    auto done_or_throw = [c, op, holder, finish]() {
      // RPC errors already name the endpoint; the others get it here.
      const std::string at =
          " at block " + std::to_string(op->block.number) + " (" + op->block.hash + ")";
      const std::string from = " from " + c->get_endpoint().url();
      auto fail = [&](bt::error e) { finish(std::move(*holder), std::move(e), {}); };
      if (op->neurons_err) {
        op->neurons_err.what = std::string("state_call ") + neurons_api;
        op->neurons_err.detail += at;
        return fail(std::move(op->neurons_err));
      }
      const bool fallback = op->state_err.code == chain_errc::rpc_error;
      if (op->state_err && !fallback) {
        op->state_err.what = std::string("state_call ") + state_api;
        op->state_err.detail += at;
        return fail(std::move(op->state_err));
      }
      auto decode_hex = [&](const bt::json& r, const char* api,
                            std::vector<std::uint8_t>& out) -> bool {
        std::optional<std::vector<std::uint8_t>> bytes;
        if (r.is_string()) bytes = from_hex(r.get_ref<const std::string&>());
        if (!bytes) {
          fail(bad_answer(std::string("state_call ") + api, "not hex bytes" + at, c->get_endpoint(),
                          r));
          return false;
        }
        out = std::move(*bytes);
        return true;
      };
      auto decode_error = [&](const char* api, bt::error err) {
        err.what = std::string("state_call ") + api + ": " + err.what;
        err.detail += " of the result" + at + from;
        fail(std::move(err));
      };
      std::vector<std::uint8_t> bytes;
      if (!decode_hex(op->neurons_result, neurons_api, bytes)) return;
      bt::error err;
      auto neurons = decode_neurons_lite(bytes, err);
      if (!neurons) return decode_error(neurons_api, std::move(err));
      std::optional<subnet_state> state;
      if (!fallback) {
        if (!decode_hex(op->state_result, state_api, bytes)) return;
        if (!decode_subnet_state(bytes, state, err)) return decode_error(state_api, std::move(err));
        if (!state) {
          return fail(
              bt::error{chain_errc::invalid_value, std::string("state_call ") + state_api,
                        "subnet " + std::to_string(op->netuid) + " does not exist" + at + from});
        }
      }
      auto m = make_metagraph(op->netuid, op->block.number, op->block.hash, *neurons, state, err);
      if (!m) {
        err.detail += at + from;
        return fail(std::move(err));
      }
      finish(std::move(*holder), {}, std::move(*m));
    };
    auto done = [c, op, holder, finish, done_or_throw]() {
      try {
        done_or_throw();
      } catch (const std::exception& e) {
        // std::bad_alloc from a decode or the metagraph's construction: this read fails.
        if (*holder) {
          finish(std::move(*holder),
                 bt::error{chain_errc::invalid_value, "metagraph",
                           std::string("cannot decode the answers of ") + c->get_endpoint().url() +
                               " at block " + std::to_string(op->block.number) + ": " + e.what()},
                 {});
        }
      }
    };
    const bt::json arg = netuid_call_arg(netuid);
    c->async_call("state_call", {neurons_api, arg, op->block.hash},
                  [op, done](bt::error e, bt::json r) {
                    std::unique_lock lock(op->mutex);
                    op->neurons_err = std::move(e);
                    op->neurons_result = std::move(r);
                    if (--op->waiting == 0) {
                      lock.unlock();
                      done();
                    }
                  });
    c->async_call("state_call", {state_api, arg, op->block.hash},
                  [op, done](bt::error e, bt::json r) {
                    std::unique_lock lock(op->mutex);
                    op->state_err = std::move(e);
                    op->state_result = std::move(r);
                    if (--op->waiting == 0) {
                      lock.unlock();
                      done();
                    }
                  });
  });
}

pinned_block subtensor::pin_block(std::optional<std::uint64_t> number) {
  std::promise<std::pair<bt::error, pinned_block>> p;
  auto f = p.get_future();
  async_pin_block(number, [&p](bt::error e, pinned_block b) {
    p.set_value({std::move(e), std::move(b)});
  });
  auto [e, b] = f.get();
  if (e) throw subtensor_error(std::move(e));
  return b;
}

metagraph subtensor::get_metagraph(std::uint16_t netuid, std::optional<std::uint64_t> number) {
  std::promise<std::pair<bt::error, metagraph>> p;
  auto f = p.get_future();
  async_metagraph(netuid, number, [&p](bt::error e, metagraph m) {
    p.set_value({std::move(e), std::move(m)});
  });
  auto [e, m] = f.get();
  if (e) throw subtensor_error(std::move(e));
  return m;
}

metagraph read_metagraph(std::string_view node, std::uint16_t netuid) {
  bt::error err;
  const auto named = network_url(node);
  const auto ep = parse_endpoint(named ? std::string_view(*named) : node, &err);
  if (!ep) throw subtensor_error(std::move(err));
  return subtensor(*ep).get_metagraph(netuid);
}

}  // namespace bt
