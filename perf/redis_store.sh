#!/usr/bin/env bash
# The Redis replay store's cost, same run (docs/performance.md, "Replay store in Redis"):
# two bt-axon processes (//Bob), one with --nonce_store memory and one with a redis:// store on a
# throwaway redis-server, pinged in turn by bt-ping (sequential calls, //Alice); then the raw
# round trip of the store's own script (EVALSHA, one client: perf/redis_rtt.cpp) and the axon's
# own view of it (bt_axon_replay_store_duration_seconds from its admin listener: async_record to
# verdict).
#
#   perf/redis_store.sh [BUILD_DIR] [COUNT] [ROUNDS] [OTHER_BT_AXON]   (defaults: build-rel 1000 10)
#   (targets bt-axon, bt-ping and bt-redis-rtt of a Release build; OTHER_BT_AXON, e.g. the bt-axon
#   of an older build, is pinged too, with the same redis:// store: a same-run A/B)
#
# Everything listens on free loopback ports and is stopped on exit. As perf/run_all.sh, the run
# gets its own scheduling group at nice -20 on a shared machine (BT_PERF_PRIORITY=0: not).
set -euo pipefail

perf_name=redis_store
# shellcheck source=perf/perf_lib.sh
source "$(dirname "$0")/perf_lib.sh"
perf_own_priority "$0" "$@"

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build-rel}
[[ $build == /* ]] || build=$root/$build
count=${2:-1000}
rounds=${3:-10}
other=${4:-}
axon=$build/tools/bt-axon/bt-axon
ping=$build/perf/bt-ping
rtt=$build/perf/bt-redis-rtt
perf_require_built "build bt-axon, bt-ping, bt-redis-rtt" "$axon" "$ping" "$rtt"
perf_require_tools redis-server redis-cli python3
perf_workdir bt-redis-perf
perf_start_redis

start_axon() {  # name, binary, extra flags...; sets <name>_port, <name>_hotkey, <name>_admin
  local name=$1 bin=$2
  shift 2
  local admin
  admin=$(free_port)
  "$bin" --uri //Bob --axon.ip 127.0.0.1 --axon.port 0 --admin.listen "127.0.0.1:$admin" "$@" \
    >"$work/$name.out" 2>"$work/$name.err" </dev/null &
  pids+=($!)
  local port key
  read -r port key < <(perf_axon_ready "$name")
  [[ -n $port ]] || exit 1
  printf -v "${name}_port" '%s' "$port"
  printf -v "${name}_hotkey" '%s' "$key"
  printf -v "${name}_admin" '%s' "$admin"
}
start_axon mem "$axon" --nonce_store memory
start_axon red "$axon" --nonce_store "redis://127.0.0.1:$redis_port/0"
axons="mem red"
if [[ -n $other ]]; then
  start_axon oth "$other" --nonce_store "redis://127.0.0.1:$redis_port/0"
  axons="mem red oth"
fi

# The store's Lua script, byte for byte (its SHA is the one the store runs with EVALSHA).
python3 - "$root/redis_store/src/redis_store_impl.hpp" "$work/script.lua" <<'PY'
import sys
src = open(sys.argv[1]).read()
start = src.index('R"lua(') + len('R"lua(')
open(sys.argv[2], "w").write(src[start:src.index(')lua"', start)])
PY
lua_sha=$(redis-cli -p "$redis_port" -x SCRIPT LOAD <"$work/script.lua")

json() { python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))[sys.argv[2]]))' "$1" "$2"; }

echo "$(date -u '+%F %H:%M UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), priority: $priority"
echo "$count calls per run (bt-ping after 200 untimed); the two axons (//Bob) in turn, then bt-redis-rtt"
echo "round  memory p50/p99  redis p50/p99  overhead p50  EVALSHA replay p50/p99  accept p50/p99  PING p50/p99  accept p50 same CPU/other CPU (us)"
for r in $(seq 1 "$rounds"); do
  for a in $axons; do  # a failed call (exit 1) is reported, not fatal: its figures exclude it
    port_var=${a}_port hotkey_var=${a}_hotkey
    "$ping" --target "127.0.0.1:${!port_var}:${!hotkey_var}" --uri //Alice --count "$count" \
      --warmup 200 --json "$work/$a$r.json" >"$work/$a$r.txt" ||
      echo "round $r ($a): failures $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["failures"])' "$work/$a$r.json")"
  done
  # The script's arguments as the store sends them (rule, nonce, now, expires_at, PEXPIREAT ms,
  # window; int64s as 20-digit order-preserving decimals).
  read -r now exp px < <(python3 -c '
import time
f = lambda v: str(v + 2**63).zfill(20)
n = time.time_ns()
print(f(n), f(n + 60 * 10**9), (n + 60 * 10**9) // 10**6 + 5001)')
  # Replay path: one endpoint and one nonce every time (HMGET, ZSCORE, return replayed).
  replay=$("$rtt" "$redis_port" "$count" EVALSHA "$lua_sha" 2 "bt:bench:w:{r$r}" \
    "bt:bench:w:{r$r}:n" w "$now" "$now" "$exp" "$px" 256)
  # Accept path, as a ping's: one endpoint, a newer nonce each time (HMGET, ZSCORE, ZADD, ZCARD,
  # HSET, two PEXPIREAT; ZPOPMIN and HSET once the window is full): bt-redis-rtt's @seq.
  accept=$("$rtt" "$redis_port" "$count" EVALSHA "$lua_sha" 2 "bt:bench:w:{a$r}" \
    "bt:bench:w:{a$r}:n" w @seq "$now" "$exp" "$px" 256)
  pingr=$("$rtt" "$redis_port" "$count" PING)
  # The same accept-path EVALSHA with Redis pinned to CPU 0 and the client on CPU 0 (a ping-pong
  # the scheduler keeps on one CPU, as it does for the unpinned client above) or on CPU 1 (each
  # hop wakes the other CPU, as in the axon's three-process chain).
  taskset -pc 0 "$redis_pid" >/dev/null
  same=$(taskset -c 0 "$rtt" "$redis_port" "$count" EVALSHA "$lua_sha" 2 "bt:bench:w:{s$r}" \
    "bt:bench:w:{s$r}:n" w @seq "$now" "$exp" "$px" 256)
  other_cpu=$(taskset -c 1 "$rtt" "$redis_port" "$count" EVALSHA "$lua_sha" 2 "bt:bench:w:{o$r}" \
    "bt:bench:w:{o$r}:n" w @seq "$now" "$exp" "$px" 256)
  taskset -pc "0-$(($(nproc) - 1))" "$redis_pid" >/dev/null
  m50=$(json "$work/mem$r.json" p50_us) r50=$(json "$work/red$r.json" p50_us)
  pick() { awk -v k="$1" '{for (i = 1; i < NF; ++i) if ($i == k) print $(i + 1)}' <<<"$2"; }
  printf '%5s  %6s/%-6s  %6s/%-6s  %12s  %14s/%-7s  %6s/%-7s  %6s/%-6s  %10s/%-5s\n' "$r" \
    "$m50" "$(json "$work/mem$r.json" p99_us)" "$r50" "$(json "$work/red$r.json" p99_us)" \
    "$((r50 - m50))" "$(pick p50 "$replay")" "$(pick p99 "$replay")" \
    "$(pick p50 "$accept")" "$(pick p99 "$accept")" "$(pick p50 "$pingr")" "$(pick p99 "$pingr")" \
    "$(pick p50 "$same")" "$(pick p50 "$other_cpu")"
  echo "$m50 $r50 $((r50 - m50)) $(pick p50 "$replay") $(pick p50 "$accept") $(pick p50 "$pingr")" \
    "$(pick p50 "$same") $(pick p50 "$other_cpu")" >>"$work/rounds"
  if [[ -n $other ]]; then
    o50=$(json "$work/oth$r.json" p50_us)
    echo "       other bt-axon, redis: p50/p99 $o50/$(json "$work/oth$r.json" p99_us), overhead p50 $((o50 - m50))"
    echo "$((o50 - m50))" >>"$work/other_rounds"
  fi
done
# Medians over the rounds: a busy neighbour slows a round now and then, whichever axon it hits.
python3 - "$work/rounds" <<'PY'
import statistics, sys
cols = list(zip(*[list(map(int, l.split())) for l in open(sys.argv[1])]))
m = [statistics.median(c) for c in cols]
print(f"median of {len(cols[0])} rounds: memory p50 {m[0]:.0f}, redis p50 {m[1]:.0f}, "
      f"overhead p50 {m[2]:.0f}; EVALSHA p50 replay {m[3]:.0f}, accept {m[4]:.0f}; "
      f"PING p50 {m[5]:.0f}; EVALSHA accept p50 same CPU {m[6]:.0f}, other CPU {m[7]:.0f} (us); "
      f"overhead / EVALSHA accept = {m[2] / m[4]:.2f}, / EVALSHA other CPU = {m[2] / m[7]:.2f}")
PY
if [[ -n $other ]]; then
  python3 -c 'import statistics,sys; print("median overhead p50 of the other bt-axon:", statistics.median(int(l) for l in open(sys.argv[1])), "us")' "$work/other_rounds"
fi
# The axon's own measure of the store: async_record() to the verdict, over every call above.
curl -s "http://127.0.0.1:$red_admin/metrics" | python3 -c '
import sys
s = c = 0.0
for line in sys.stdin:
    if line.startswith("bt_axon_replay_store_duration_seconds_sum"): s += float(line.split()[-1])
    if line.startswith("bt_axon_replay_store_duration_seconds_count"): c += float(line.split()[-1])
print(f"axon-side replay store duration (async_record to verdict): mean {s / c * 1e6:.0f} us over {c:.0f} calls" if c else
      "axon-side replay store duration: no samples")'
