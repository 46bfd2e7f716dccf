#!/usr/bin/env bash
# Where the Redis replay store's ping overhead goes (docs/performance.md, "Replay store in
# Redis"): redis-server, two bt-axon processes (//Bob; --nonce_store memory and redis://...) and
# bt-ping, ALL PINNED TO ONE CPU, so that a ping's latency is the sum of the CPU time its chain of
# processes spends (no cross-CPU wake-ups). For each axon it reports bt-ping's p50 and, per ping,
# the CPU time (perf stat task-clock) and context switches of bt-axon, redis-server and bt-ping,
# and bt-axon's and redis-server's user/system split (/proc/PID/stat); then the raw round trip
# of PING and of the store's own script (EVALSHA, accept path, as perf/redis_store.sh) from one
# bt-redis-rtt client on the same CPU, twice for EVALSHA: back to back (Redis's caches hot), and
# interleaved, one untimed ping through the memory-store axon before each timed EVALSHA
# (bt-redis-rtt --between: Redis meets each EVALSHA as in the Redis axon's ping chain, cold), and
# the same with PING, with the memory axon's CPU per ping in both.
#
#   perf/redis_store_cpu.sh [BUILD_DIR] [COUNT] [ROUNDS] [CPU]   (defaults: build-rel 3000 2 0)
#
# Needs perf (linux-perf), redis-server, redis-cli, taskset, python3, and bt-axon, bt-ping and
# bt-redis-rtt of a Release build. Everything listens on free loopback ports and is stopped on
# exit. Other work on the chosen CPU (a build) slows every figure alike; compare within a run.
set -euo pipefail
perf_name=redis_store_cpu
# shellcheck source=perf/perf_lib.sh
source "$(dirname "$0")/perf_lib.sh"

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build-rel}
[[ $build == /* ]] || build=$root/$build
count=${2:-3000}
rounds=${3:-2}
cpu=${4:-0}
axon=$build/tools/bt-axon/bt-axon
ping=$build/perf/bt-ping
rtt=$build/perf/bt-redis-rtt
perf_require_built "build bt-axon, bt-ping, bt-redis-rtt" "$axon" "$ping" "$rtt"
perf_require_tools perf redis-server redis-cli taskset python3
perf_workdir bt-redis-cpu

# pin CMD...: CMD on the chosen CPU, in the foreground. Background starts call taskset directly
# (a function run with & is a subshell: $! would not be the program's pid).
pin() { taskset -c "$cpu" "$@"; }

perf_start_redis taskset -c "$cpu"

start_axon() {  # name, flags...; sets <name>_pid and <name>_target
  local name=$1
  shift
  taskset -c "$cpu" "$axon" --uri //Bob --axon.ip 127.0.0.1 --axon.port 0 "$@" \
    >"$work/$name.out" 2>"$work/$name.err" </dev/null &
  pids+=($!)
  printf -v "${name}_pid" '%s' "$!"
  local port key
  read -r port key < <(perf_axon_ready "$name")
  [[ -n $port ]] || exit 1
  printf -v "${name}_target" '%s' "127.0.0.1:$port:$key"
}
start_axon mem --nonce_store memory
start_axon red --nonce_store "redis://127.0.0.1:$redis_port/0"

python3 - "$root/redis_store/src/redis_store_impl.hpp" "$work/script.lua" <<'PY'
import sys
src = open(sys.argv[1]).read()
start = src.index('R"lua(') + len('R"lua(')
open(sys.argv[2], "w").write(src[start:src.index(')lua"', start)])
PY
lua_sha=$(redis-cli -p "$redis_port" -x SCRIPT LOAD <"$work/script.lua")

# stat FILE EVENT: a counter of a perf stat output file (0 when "<not counted>": the process
# never ran meanwhile, e.g. redis-server while the memory-store axon is pinged).
stat() { awk -v e="$2" '$0 ~ e {gsub(",", "", $1); print ($1 ~ /^[0-9.]+$/ ? $1 : 0)}' "$1"; }
# ticks PID: user and system clock ticks of a process so far.
ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

echo "$(date -u '+%F %H:%M UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); everything on CPU $cpu; $count calls per run"
for r in $(seq 1 "$rounds"); do
  for a in mem red; do
    target_var=${a}_target pid_var=${a}_pid
    apid=${!pid_var}
    pin "$ping" --target "${!target_var}" --count 300 >/dev/null 2>&1 || true  # warm-up
    read -r au0 as0 < <(ticks "$apid")
    read -r ru0 rs0 < <(ticks "$redis_pid")
    perf stat -e task-clock,context-switches -p "$apid" -o "$work/axon.stat" -- \
      perf stat -e task-clock,context-switches -p "$redis_pid" -o "$work/redis.stat" -- \
      perf stat -e task-clock,context-switches -o "$work/ping.stat" -- \
      taskset -c "$cpu" "$ping" --target "${!target_var}" --count "$count" --json "$work/$a.json" \
      >/dev/null 2>&1 || echo "round $r ($a): bt-ping reported failures"
    read -r au1 as1 < <(ticks "$apid")
    read -r ru1 rs1 < <(ticks "$redis_pid")
    python3 - "$a" "$count" "$hz" "$work/$a.json" \
      "$(stat "$work/axon.stat" task-clock)" "$(stat "$work/axon.stat" context-switches)" \
      "$(stat "$work/redis.stat" task-clock)" "$(stat "$work/redis.stat" context-switches)" \
      "$(stat "$work/ping.stat" task-clock)" "$(stat "$work/ping.stat" context-switches)" \
      "$((au1 - au0))" "$((as1 - as0))" "$((ru1 - ru0))" "$((rs1 - rs0))" <<'PY'
import json, sys
a, n, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
j = json.load(open(sys.argv[4]))
v = [float(x) for x in sys.argv[5:]]
us = lambda ms: ms * 1000 / n          # task-clock msec -> us per ping
tk = lambda t: t * 1e6 / hz / n        # clock ticks -> us per ping
print(f"round {a}: p50 {j['p50_us']:.0f} us | CPU us/ping: bt-axon {us(v[0]):.0f} "
      f"(user {tk(v[6]):.0f} sys {tk(v[7]):.0f}), redis-server {us(v[2]):.0f} "
      f"(user {tk(v[8]):.0f} sys {tk(v[9]):.0f}), bt-ping {us(v[4]):.0f}; sum {us(v[0] + v[2] + v[4]):.0f} "
      f"| switches/ping: bt-axon {v[1] / n:.2f}, redis-server {v[3] / n:.2f}, bt-ping {v[5] / n:.2f}")
PY
  done
  # The script's arguments as the store sends them (perf/redis_store.sh).
  read -r now exp px < <(python3 -c '
import time
f = lambda v: str(v + 2**63).zfill(20)
n = time.time_ns()
print(f(n), f(n + 60 * 10**9), (n + 60 * 10**9) // 10**6 + 5001)')
  # PING_BETWEEN: the same interleaving with a PING, so that the memory axon's CPU per ping with
  # an EVALSHA between its pings, against with a PING, shows what Redis's script work alone
  # (no store code in that axon) costs the axon through the caches.
  for what in PING EVALSHA PING_BETWEEN EVALSHA_BETWEEN; do
    opt=() args=(PING)
    if [[ $what == EVALSHA* ]]; then
      args=(EVALSHA "$lua_sha" 2 "bt:cpu:w:{$what$r}" "bt:cpu:w:{$what$r}:n" w @seq "$now" "$exp" "$px" 256)
    fi
    if [[ $what == *_BETWEEN ]]; then
      opt=(--between "$mem_target")
      pin "$ping" --target "$mem_target" --count 300 >/dev/null 2>&1 || true  # warm-up
    fi
    perf stat -e task-clock -p "$mem_pid" -o "$work/mem_axon.stat" -- \
      perf stat -e task-clock,context-switches -p "$redis_pid" -o "$work/redis.stat" -- \
      perf stat -e task-clock,context-switches -o "$work/client.stat" -- \
      taskset -c "$cpu" "$rtt" "${opt[@]}" "$redis_port" "$count" "${args[@]}" >"$work/rtt_$what.txt"
    python3 - "$what" "$count" "$(stat "$work/redis.stat" task-clock)" \
      "$(stat "$work/client.stat" task-clock)" "$(tr '\n' ' ' <"$work/rtt_$what.txt")" \
      "$(stat "$work/mem_axon.stat" task-clock)" <<'PY'
import sys
what, n, redis_ms, client_ms, rtt = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
w = rtt.split()
p50 = w[w.index("p50") + 1] if "p50" in w else "?"
between = what.endswith("_BETWEEN")
label = ("accept path, " if what.startswith("EVALSHA") else "") + (
    "after a ping through the memory axon (cold)" if between else "back to back (hot)")
# With --between the client's CPU includes the untimed pings: not reported; the memory axon's is.
more = (f", memory bt-axon {float(sys.argv[6]) * 1000 / n:.0f} per ping between" if between
        else f", client {client_ms * 1000 / n:.0f}")
print(f"round raw {what.split('_')[0]} {label}: p50 {p50} us | CPU us/op: redis-server "
      f"{redis_ms * 1000 / n:.0f}{more}")
PY
  done
  # The overhead against both references: the goal's "one Redis round trip" measured hot (back
  # to back) and under the ping's conditions (after a ping, cold).
  python3 - "$work/mem.json" "$work/red.json" "$work/rtt_EVALSHA.txt" "$work/rtt_EVALSHA_BETWEEN.txt" <<'PY'
import json, sys
p50 = lambda f: json.load(open(f))["p50_us"]
rtt = lambda f: float(open(f).read().split()[1])
over, hot, cold = p50(sys.argv[2]) - p50(sys.argv[1]), rtt(sys.argv[3]), rtt(sys.argv[4])
print(f"round overhead p50 {over:.0f} us = {over / hot:.2f} hot EVALSHA ({hot:.0f} us), "
      f"{over / cold:.2f} interleaved EVALSHA ({cold:.0f} us)")
PY
done
