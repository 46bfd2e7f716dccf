#!/usr/bin/env bash
# perf/run_all.sh [--docs] [BUILD_DIR] [OUT_DIR]: one command for every performance figure.
#
# Builds bt-bench, bt-ping and bt-axon, then runs every microbenchmark (codec, crypto, dendrite:
# all perf/*_bench.cpp in bt-bench) and every bt-ping figure of docs/performance.md: the 10,000
# sequential pings with their floor and histogram (in-process and cross-process), framework
# overhead without crypto, payloads, throughput at several concurrencies, the axon's CPU per
# request and its memory idle and with 10,000 idle keep-alive connections. Logs and JSON go to
# OUT_DIR (default BUILD_DIR/perf-results); --docs also copies the histogram to
# docs/ping_histogram.svg. Takes about three minutes on a 2-core machine.
#
# On a machine shared with other work (builds), the runs get their own scheduling group at
# nice -20 (Linux autogroup: a new session, then /proc/self/autogroup), which affects only this
# script's processes; without it a sequential ping waits milliseconds for a core now and then.
# BT_PERF_PRIORITY=0 turns that off. (Ctrl-C then reaches only the outer setsid; use kill.)
set -euo pipefail

perf_name=run_all
# shellcheck source=perf/perf_lib.sh
source "$(dirname "$0")/perf_lib.sh"
perf_own_priority "$0" "$@"

root=$(cd "$(dirname "$0")/.." && pwd)
docs=0
if [[ ${1:-} == --docs ]]; then docs=1; shift; fi
build=${1:-$root/build}
out=${2:-$build/perf-results}
jobs=${BT_JOBS:-2}

if [[ ! -f $build/build.ninja && ! -f $build/Makefile ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target bt-ping bt-axon -j "$jobs"
if cmake --build "$build" --target help 2>/dev/null | grep -q '^bt-bench'; then
  cmake --build "$build" --target bt-bench -j "$jobs"
fi
mkdir -p "$out"
ping=$build/perf/bt-ping
bench=$build/perf/bt-bench

section() { printf '\n== %s\n' "$*"; }
run() {  # run NAME ARGS...: bt-ping with its output shown and kept in OUT_DIR/NAME.txt
  local name=$1; shift
  echo "\$ bt-ping $*"
  "$ping" "$@" | tee "$out/$name.txt" || echo "(bt-ping exited with status ${PIPESTATUS[0]})"
}

section "Machine"
{
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|CPU max MHz|L2|L3)' || true
  uname -srm
  grep -E '^MemTotal' /proc/meminfo || true
  git -C "$root" rev-parse --short HEAD 2>/dev/null | sed 's/^/commit /' || true
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "scheduling: $priority"
} | tee "$out/machine.txt"

if [[ -x $bench ]]; then
  section "Microbenchmarks (bt-bench: codec, crypto, dendrite)"
  "$bench" --benchmark_min_time=0.2 --benchmark_out="$out/bench.json" --benchmark_out_format=json |
    tee "$out/bench.txt"
fi

section "Ping: 10,000 sequential signed pings, in-process axon, with the floor and histogram"
run ping --count 10000 --baseline --json "$out/ping.json" --histogram "$out/ping_histogram.svg"

section "Ping: cross-process bt-axon"
run ping_cross --cross-process --count 10000 --baseline --json "$out/ping_cross.json"

section "Framework overhead without crypto (loopback only)"
run ping_nocrypto --no-crypto --count 10000 --baseline --json "$out/ping_nocrypto.json" 2>&1

section "Payloads: a required, hashed string field"
for spec in 1024:1000 65536:500 1048576:50; do
  bytes=${spec%:*} count=${spec#*:}
  run "ping_payload_$bytes" --payload "$bytes" --count "$count" --baseline --json "$out/ping_payload_$bytes.json"
done

section "Throughput at concurrency (in-process axon)"
for c in 4 16 64; do
  run "ping_c$c" --concurrency "$c" --count 20000 --json "$out/ping_c$c.json"
done

section "Axon CPU per request (bt-axon process, 10 s at concurrency 8)"
run axon_cpu --axon-cpu 10 --concurrency 8 --json "$out/axon_cpu.json"

section "Axon memory: idle and with 10,000 idle keep-alive connections"
run axon_memory --memory --connections 10000 --json "$out/axon_memory.json"

if ((docs)); then
  cp "$out/ping_histogram.svg" "$root/docs/ping_histogram.svg"
  echo "copied the histogram to docs/ping_histogram.svg"
fi
section "Done: results in $out (load average now $(cut -d' ' -f1-3 /proc/loadavg))"
