// The ctest of examples/v11_miner.cpp and examples/v11_validator.cpp, run together: the miner on
// 127.0.0.1 port 0 (its AxonInfo line gives the port), the validator against it (btauth/1 both
// ways: the request signed for the miner's hotkey, the answer's signature required), then against
// the same miner under another hotkey (exit 1: the miner refuses a request bound to someone else,
// and its refusal, signed by the miner's own key, is not an answer of the hotkey addressed: 421);
// SIGTERM must drain the miner with exit status 0.
//
//   example_v11_check <example_v11_miner> <example_v11_validator>
#include <bt/axon_info.hpp>
#include <bt/json_body.hpp>
#include <bt/keypair.hpp>

#include <proc.hpp>

#include <chrono>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::cout << (ok ? "ok: " : "FAILED: ") << what << std::endl;
  if (!ok) ++failures;
}

// Runs the validator with `target`; its stdout lines and exit status.
std::pair<std::vector<std::string>, int> run_validator(const std::string& exe,
                                                       const std::string& target) {
  using namespace std::chrono_literals;
  auto p = bt::perf::child_process::spawn({exe, target});
  std::vector<std::string> lines;
  while (auto line = p.read_line(60s)) lines.push_back(*line);
  return {lines, p.stop(30s)};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  if (argc != 3) {
    std::cerr << "usage: example_v11_check <example_v11_miner> <example_v11_validator>\n";
    return 2;
  }
  auto miner = bt::perf::child_process::spawn({argv[1], "0", "127.0.0.1", "//Bob"});
  const auto line = miner.read_line(30s);
  bt::json j;
  bt::axon_info info;
  const bool parsed = line && !bt::parse_json(*line, j) && !bt::axon_info_from_json(j, info);
  check(parsed && info.port != 0,
        "the miner prints its AxonInfo once listening: " + line.value_or("<nothing>"));
  if (!parsed) return 1;
  const std::string bob = bt::keypair::from_uri("//Bob").ss58_address();
  check(info.hotkey == bob, "the miner's hotkey is //Bob's");

  const std::string address = "127.0.0.1:" + std::to_string(info.port) + ":";
  const auto [lines, status] = run_validator(argv[2], address + bob);
  for (const auto& l : lines) std::cout << "  " << l << "\n";
  check(status == 0, "the validator exits 0 (got " + std::to_string(status) + ")");
  check(lines.size() == 1 && lines[0].rfind(bob + ": 200 ", 0) == 0,
        "one line: the miner answered 200");
  bt::json answer;
  const std::string alice = bt::keypair::from_uri("//Alice").ss58_address();
  check(lines.size() == 1 && !bt::parse_json(lines[0].substr(bob.size() + 6), answer) &&
            answer.value("dummy_output", bt::json()) == 42 &&
            answer.value("caller", bt::json()) == alice,
        "the answer is 2 * 21, and the miner saw //Alice's verified hotkey");

  // Addressed under another hotkey, the request is bound to it: the miner refuses it, and the
  // refusal is signed by //Bob, not by the hotkey the validator addressed, so the validator
  // (verify_responses = required) takes it for no answer of that hotkey.
  const std::string charlie = bt::keypair::from_uri("//Charlie").ss58_address();
  const auto [wrong_lines, wrong_status] = run_validator(argv[2], address + charlie);
  for (const auto& l : wrong_lines) std::cout << "  " << l << "\n";
  check(wrong_status == 1,
        "for another hotkey the validator exits 1 (got " + std::to_string(wrong_status) + ")");
  check(wrong_lines.size() == 1 &&
            wrong_lines[0].rfind(charlie + ": 421 Response not authenticated", 0) == 0,
        "the refusal is not authenticated as the addressed hotkey's: 421");

  const int miner_status = miner.stop(15s);
  check(miner_status == 0,
        "SIGTERM drains the miner, exit status 0 (got " + std::to_string(miner_status) + ")");
  return failures == 0 ? 0 : 1;
}
