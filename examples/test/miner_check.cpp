// The ctest of examples/miner.cpp: starts it on 127.0.0.1 port 0, reads the AxonInfo line it
// prints once listening, queries it with bt::dendrite (a signed Echo call, as a validator makes),
// checks the answer, then sends SIGTERM and requires a clean exit (status 0), which only
// axon::run()'s signal handling and drain give; then that a bad key gives a message and exit 1.
//
//   example_miner_check <path to example_miner>
#include <bt/axon_info.hpp>
#include <bt/dendrite.hpp>
#include <bt/json_body.hpp>

#include <proc.hpp>

#include <chrono>
#include <iostream>
#include <optional>
#include <string>

namespace {

// The validator's own declaration of the miner's synapse (the same wire shape as miner.cpp's).
struct echo : bt::synapse {
  std::string text;
  std::optional<std::string> reply;
  BT_SYNAPSE(echo, "Echo", BT_FIELD(text, bt::required, bt::hashed), BT_FIELD(reply))
};

int failures = 0;

void check(bool ok, const std::string& what) {
  std::cout << (ok ? "ok: " : "FAILED: ") << what << std::endl;
  if (!ok) ++failures;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  if (argc != 2) {
    std::cerr << "usage: example_miner_check <example_miner>\n";
    return 2;
  }
  auto miner = bt::perf::child_process::spawn({argv[1], "0", "127.0.0.1", "//Bob"});
  const auto line = miner.read_line(30s);
  if (!line) {
    check(false, "the miner prints its AxonInfo once listening");
    return 1;
  }
  bt::json j;
  bt::axon_info info;
  const bool parsed = !bt::parse_json(*line, j) && !bt::axon_info_from_json(j, info);
  check(parsed && info.port != 0, "AxonInfo line with the bound port: " + *line);
  if (!parsed) return 1;
  check(info.hotkey == bt::keypair::from_uri("//Bob").ss58_address(), "the miner's hotkey");

  bt::dendrite d(bt::keypair::from_uri("//Alice"));
  echo q;
  q.text = "hello, miner";
  const echo r = d.call(info, q, 10.0);
  check(r.is_success(), "the call succeeds (status " +
                            std::to_string(r.dendrite.status_code.value_or(-1)) + ": " +
                            r.dendrite.status_message.value_or("") + ")");
  check(r.reply == q.text, "the miner echoes the text: " + r.reply.value_or("<None>"));

  const int status = miner.stop(15s);
  check(status == 0, "SIGTERM drains and exits with status 0 (got " + std::to_string(status) + ")");

  // A key that cannot be made is said and gives exit status 1, not an uncaught exception (which
  // aborts: 134). The miner exits before printing anything, so read_line sees the end of stdout.
  auto bad = bt::perf::child_process::spawn({argv[1], "0", "127.0.0.1", "not a key//"}, true);
  check(!bad.read_line(30s), "with a bad key, the miner prints no AxonInfo");
  const int bad_status = bad.stop(15s);
  check(bad_status == 1,
        "with a bad key, the miner exits with status 1 (got " + std::to_string(bad_status) + ")");
  return failures == 0 ? 0 : 1;
}
