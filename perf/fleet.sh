#!/usr/bin/env bash
# A fleet's figures, same run (docs/performance.md, "Fleet"):
#  scaling   bt-ping through HAProxy to scripts/fleet with 1, 2 and 3 axons (shared Redis, PROXY
#            protocol v2), COUNT calls at CONCURRENCY in flight, ROUNDS rounds in turn (1 2 3 1 2
#            3 ...); and, in the 1-axon fleet, one more bt-axon on the same Redis pinged directly
#            (no HAProxy, no PROXY header): HAProxy's own cost;
#  admin     two bt-axon processes (memory store) pinged in turn: one without an admin listener
#            (off), one with --admin.listen, pinged once idle and once while its /metrics is
#            scraped every second (on): the admin listener's and the scrapes' cost (the counters
#            themselves are always kept, in both processes).
#
#   perf/fleet.sh [BUILD_DIR] [COUNT] [CONCURRENCY] [ROUNDS]   (defaults: build-rel 5000 16 3)
#   (targets bt-axon and bt-ping of a Release build; redis-server and haproxy on PATH)
#
# Everything listens on free loopback ports and is stopped on exit. The run gets its own
# scheduling group at nice -20 on a shared machine, as perf/run_all.sh (BT_PERF_PRIORITY=0: not).
set -euo pipefail

perf_name=fleet
# shellcheck source=perf/perf_lib.sh
source "$(dirname "$0")/perf_lib.sh"
perf_own_priority "$0" "$@"

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build-rel}
[[ $build == /* ]] || build=$root/$build
count=${2:-5000}
conc=${3:-16}
rounds=${4:-3}
axon=$build/tools/bt-axon/bt-axon
ping=$build/perf/bt-ping
perf_require_built "build bt-axon and bt-ping" "$axon" "$ping"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bt-perf-fleet.XXXXXX")
pids=()
fleet=
stop_fleet() {
  [[ -n $fleet ]] || return 0
  kill -TERM "$fleet" 2>/dev/null || true
  wait "$fleet" 2>/dev/null || true
  fleet=
}
cleanup() {
  stop_fleet
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# ready PID OUT: "PORT HOTKEY" from a bt-axon's ready line (waits up to 30 s).
ready() {
  for _ in $(seq 300); do
    if [[ -s $2 ]] && head -1 "$2" | grep -q '}$'; then
      python3 -c 'import json, sys; j = json.loads(open(sys.argv[1]).readline()); print(j["port"], j["hotkey"])' "$2"
      return 0
    fi
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  echo "fleet: bt-axon did not start" >&2
  return 1
}
# pingit NAME TARGET CONCURRENCY: one bt-ping run, its JSON in $tmp/NAME.<n>.json.
runs=0
pingit() {
  runs=$((runs + 1))
  "$ping" --target "$2" --count "$count" --concurrency "$3" --warmup 200 \
    --json "$tmp/$1.$runs.json" >/dev/null 2>&1
}

echo "== fleet: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$root" rev-parse --short HEAD)," \
     "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), scheduling: $priority"
echo "== scaling: $count calls, $conc in flight, $rounds rounds"
for r in $(seq "$rounds"); do
  for n in 1 2 3; do
    rm -f "$tmp/info"
    mkdir -p "$tmp/work"
    TMPDIR=$tmp/work BT_AXON_EXE=$axon BT_FLEET_INFO=$tmp/info "$root/scripts/fleet" "$n" \
      >"$tmp/fleet.out" 2>&1 &
    fleet=$!
    for _ in $(seq 600); do [[ -f $tmp/info ]] && break; sleep 0.1; done
    [[ -f $tmp/info ]] || { cat "$tmp/fleet.out" >&2; exit 1; }
    # shellcheck disable=SC1091
    source "$tmp/info"
    sleep 2  # HAProxy's first health check of every axon (inter 1 s, rise 1)
    pingit "haproxy$n" "127.0.0.1:$public_port:$hotkey" "$conc"
    if ((n == 1)); then
      "$axon" --uri //Bob --axon.ip 127.0.0.1 --axon.port 0 \
        --nonce_store "redis://127.0.0.1:$redis_port/0" >"$tmp/direct.out" 2>"$tmp/direct.log" &
      direct=$!
      read -r port key < <(ready "$direct" "$tmp/direct.out")
      sleep 1
      pingit direct "127.0.0.1:$port:$key" "$conc"
      kill -TERM "$direct"
      wait "$direct" || true
    fi
    stop_fleet
  done
done

echo "== admin listener: $count sequential calls, $((2 * rounds)) rounds in turn (off, idle, scraped ...)"
"$axon" --uri //Bob --axon.ip 127.0.0.1 --axon.port 0 >"$tmp/off.out" 2>"$tmp/off.log" &
off=$!
pids+=("$off")
"$axon" --uri //Bob --axon.ip 127.0.0.1 --axon.port 0 --admin.listen 127.0.0.1:0 \
  >"$tmp/on.out" 2>"$tmp/on.log" &
on=$!
pids+=("$on")
read -r off_port key < <(ready "$off" "$tmp/off.out")
read -r on_port _ < <(ready "$on" "$tmp/on.out")
admin_port=$(sed -n 's/.*admin listener .* port \([0-9]*\).*/\1/p' "$tmp/on.log" | head -1)
[[ -n $admin_port ]] || { echo "fleet: no admin port in the log" >&2; cat "$tmp/on.log" >&2; exit 1; }
for r in $(seq $((2 * rounds))); do
  pingit admin_off "127.0.0.1:$off_port:$key" 1
  pingit admin_idle "127.0.0.1:$on_port:$key" 1
  # One scraper process for the whole run, as Prometheus would (a process per scrape would cost
  # the machine more than the scrape costs the axon).
  python3 -c 'import sys, time, urllib.request
while True:
    urllib.request.urlopen(sys.argv[1], timeout=5).read()
    time.sleep(1)' "http://127.0.0.1:$admin_port/metrics" &
  scraper=$!
  sleep 1.5  # the interpreter's start-up is not the scrapes' cost
  pingit admin_on "127.0.0.1:$on_port:$key" 1
  kill "$scraper" 2>/dev/null || true
  wait "$scraper" 2>/dev/null || true
done
scrapes=$(python3 -c 'import sys, urllib.request; t = urllib.request.urlopen(sys.argv[1]).read().decode(); print(sum(float(l.split()[-1]) for l in t.splitlines() if l.startswith("bt_axon_requests_total{")))' "http://127.0.0.1:$admin_port/metrics")
echo "   the 'on' axon's bt_axon_requests_total after the runs: $scrapes"

python3 - "$tmp" "$conc" <<'EOF'
import glob, json, os, statistics, sys
tmp, conc = sys.argv[1], sys.argv[2]
def runs(name):
    out = []
    for f in glob.glob(os.path.join(tmp, name + ".*.json")):
        j = json.load(open(f))
        if j["successes"] != j["count"]:
            print(f"   {name}: {j['count'] - j['successes']} failures {j['failures']}")
        out.append(j)
    return out
def med(rs, key):
    return statistics.median(r[key] for r in rs)
print(f"   {'':14} {'req/s':>8} {'p50 us':>8} {'p99 us':>8}  (medians over rounds; req/s min-max)")
base = runs("haproxy1")
for name in ["direct", "haproxy1", "haproxy2", "haproxy3"]:
    rs = runs(name)
    print(f"   {name:14} {med(rs, 'requests_per_s'):8.0f} {med(rs, 'p50_us'):8.0f} {med(rs, 'p99_us'):8.0f}"
          f"  throughput x{med(rs, 'requests_per_s') / med(base, 'requests_per_s'):.3f} of haproxy1,"
          f" p99 x{med(rs, 'p99_us') / med(base, 'p99_us'):.3f};"
          f" {min(r['requests_per_s'] for r in rs):.0f}-{max(r['requests_per_s'] for r in rs):.0f}")
off = runs("admin_off")
for arm in ["admin_idle", "admin_on"]:
    on = runs(arm)
    for key in ["p50_us", "mean_us", "p99_us", "requests_per_s"]:
        print(f"   {arm}/off {key:14}: {med(on, key):8.1f} vs {med(off, key):8.1f},"
              f" ratio of medians {med(on, key) / med(off, key):.4f};"
              f" {min(r[key] for r in on):.0f}-{max(r[key] for r in on):.0f}"
              f" vs {min(r[key] for r in off):.0f}-{max(r[key] for r in off):.0f}")
EOF
