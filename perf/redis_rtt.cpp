// bt-redis-rtt: the raw round trip of one Redis command, one client, one command in flight (the
// baseline of perf/redis_store.sh and perf/redis_store_cpu.sh): hiredis's synchronous API, each
// call timed with steady_clock, microsecond percentiles (redis-benchmark's are in 8 us buckets
// at this scale).
//
//   bt-redis-rtt [--between IP:PORT:HOTKEY] PORT COUNT ARG...   e.g.  bt-redis-rtt 6379 3000 PING
//
// An argument "@seq" is replaced, call i, by the wall clock at the start plus i nanoseconds as
// the replay store writes an int64 (20 digits, sign bit flipped): a newer nonce each call.
//
// --between: before each timed command, one signed ping (bt::synapse, as bt-ping's, from //Alice
// through a bt::dendrite) to the axon at IP:PORT:HOTKEY, untimed. The command then meets Redis
// as a ping through a Redis-backed axon does: after a dendrite and an axon signed, verified and
// answered on the same machine, with Redis's code and data no longer in the CPU's caches.
// Without it the commands run back to back and find them hot.
//
// Prints "p50 <us> p90 <us> p99 <us> mean <us>"; exits 1 when Redis fails or answers an error,
// or a ping is not answered 200.
#include <bt/dendrite.hpp>
#include <bt/keypair.hpp>

#include <hiredis/hiredis.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

int main(int argc, char** argv) {
  std::optional<bt::axon_info> between;
  if (argc > 2 && std::string_view(argv[1]) == "--between") {
    try {
      between = bt::axon_info::parse(argv[2], "--between");
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "bt-redis-rtt: %s\n", e.what());
      return 2;
    }
    argc -= 2;
    argv += 2;
  }
  if (argc < 4) {
    std::fprintf(stderr, "usage: bt-redis-rtt [--between IP:PORT:HOTKEY] PORT COUNT ARG...\n");
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const long count = std::atol(argv[2]);
  if (port <= 0 || port > 65535 || count <= 0) {
    std::fprintf(stderr, "bt-redis-rtt: bad PORT or COUNT\n");
    return 2;
  }
  redisContext* c = redisConnect("127.0.0.1", port);
  if (c == nullptr || c->err != 0) {
    std::fprintf(stderr, "bt-redis-rtt: cannot connect: %s\n", c ? c->errstr : "out of memory");
    return 1;
  }
  const int n = argc - 3;
  std::vector<const char*> args(argv + 3, argv + argc);
  std::vector<std::size_t> lens;
  std::vector<std::size_t> seq_at;  // indexes of "@seq"
  for (std::size_t i = 0; i < args.size(); ++i) {
    lens.push_back(std::string(args[i]).size());
    if (std::string(args[i]) == "@seq") seq_at.push_back(i);
  }
  const auto start_ns =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  std::optional<bt::dendrite> d;
  if (between) d.emplace(bt::keypair::from_uri("//Alice"));
  char seq[21];
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(count));
  for (long i = 0; i < count; ++i) {
    if (!seq_at.empty()) {
      std::snprintf(seq, sizeof seq, "%020llu",
                    static_cast<unsigned long long>((start_ns + static_cast<std::uint64_t>(i)) ^
                                                    (std::uint64_t{1} << 63)));
      for (const std::size_t k : seq_at) {
        args[k] = seq;
        lens[k] = 20;
      }
    }
    if (d) {
      const bt::synapse answer = d->call(*between, bt::synapse{});
      if (!answer.is_success()) {
        std::fprintf(stderr, "bt-redis-rtt: the ping between commands got %lld\n",
                     static_cast<long long>(answer.dendrite.status_code.value_or(-1)));
        return 1;
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto* reply = static_cast<redisReply*>(redisCommandArgv(c, n, args.data(), lens.data()));
    const auto t1 = std::chrono::steady_clock::now();
    if (reply == nullptr || reply->type == REDIS_REPLY_ERROR) {
      std::fprintf(stderr, "bt-redis-rtt: %s\n",
                   reply ? reply->str : (c->err ? c->errstr : "no reply"));
      return 1;
    }
    freeReplyObject(reply);
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  redisFree(c);
  double sum = 0;
  for (double v : us) sum += v;
  std::sort(us.begin(), us.end());
  const auto pct = [&](double p) {
    return us[std::min(us.size() - 1,
                       static_cast<std::size_t>(p * static_cast<double>(us.size())))];
  };
  std::printf("p50 %.0f p90 %.0f p99 %.0f mean %.0f\n", pct(0.5), pct(0.9), pct(0.99),
              sum / static_cast<double>(us.size()));
  return 0;
}
