#!/usr/bin/env bash
# perf/demo.sh [BUILD_DIR]: the ping demo that scripts/demo runs once everything is built.
#
# Creates a throwaway wallet in a temporary folder (bt-wallet; dev keys if it is unavailable),
# starts bt-axon on a free loopback port, runs bt-ping against it with 10,000 sequential signed
# queries (the original Bittensor measurement, made as a Python dendrite makes it, the answer's
# signature unchecked) in BT_DEMO_ROUNDS (default 5) rounds alternated with as many rounds of its
# floor, prints the summary and one verdict line
#   demo verdict: met|missed: ratio R <= 1.15 (best of N alternated rounds; spread ...)
# (the best ping round over the best floor round: the machine's noise, which only ever adds
# time, mostly spares one round of each), stops the axon and removes the folder, whatever
# happens (trap).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
[[ $build == /* ]] || build=$root/$build
count=${BT_DEMO_COUNT:-10000}
rounds=${BT_DEMO_ROUNDS:-5}

find_tool() {  # the first executable named $1 under the build folder
  find "$build" -maxdepth 4 -type f -name "$1" -perm -u+x 2>/dev/null | head -n 1
}
ping=$build/perf/bt-ping
axon=$(find_tool bt-axon)
wallet_tool=$(find_tool bt-wallet)
[[ -x $ping ]] || { echo "demo: $ping is missing (build first)" >&2; exit 1; }
[[ -n $axon ]] || { echo "demo: bt-axon is missing under $build (build first)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bt-demo.XXXXXX")
axon_pid=
cleanup() {
  if [[ -n $axon_pid ]] && kill -0 "$axon_pid" 2>/dev/null; then
    kill -TERM "$axon_pid" 2>/dev/null || true
    wait "$axon_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== A throwaway wallet in $work"
wallet_flags=(--wallet.path "$work/wallets" --wallet.name demo)
if [[ -n $wallet_tool ]] &&
   "$wallet_tool" new-coldkey "${wallet_flags[@]}" --no-password >"$work/wallet.log" 2>&1 </dev/null &&
   "$wallet_tool" new-hotkey "${wallet_flags[@]}" --wallet.hotkey miner >>"$work/wallet.log" 2>&1 </dev/null &&
   "$wallet_tool" new-hotkey "${wallet_flags[@]}" --wallet.hotkey validator >>"$work/wallet.log" 2>&1 </dev/null; then
  axon_key=("${wallet_flags[@]}" --wallet.hotkey miner)
  ping_key=("${wallet_flags[@]}" --wallet.hotkey validator)
  echo "wallet 'demo' with hotkeys 'miner' (axon) and 'validator' (dendrite)"
else
  echo "bt-wallet unavailable or failed; using dev keys //Bob (axon) and //Alice (dendrite)"
  [[ -s $work/wallet.log ]] && sed 's/^/  bt-wallet: /' "$work/wallet.log" >&2
  axon_key=(--uri //Bob)
  ping_key=(--uri //Alice)
fi

echo "== bt-axon on a free loopback port"
"$axon" "${axon_key[@]}" --axon.ip 127.0.0.1 --axon.port 0 >"$work/axon.out" 2>"$work/axon.err" </dev/null &
axon_pid=$!
info=
for _ in $(seq 1 200); do  # up to 20 s for its AxonInfo line
  info=$(grep -m 1 '"port"' "$work/axon.out" 2>/dev/null || true)
  [[ -n $info ]] && break
  if ! kill -0 "$axon_pid" 2>/dev/null; then
    echo "demo: bt-axon exited before listening:" >&2; cat "$work/axon.err" >&2; exit 1
  fi
  sleep 0.1
done
[[ -n $info ]] || { echo "demo: bt-axon printed no AxonInfo line within 20 s" >&2; cat "$work/axon.err" >&2; exit 1; }
echo "$info"
port=$(sed -E 's/.*"port": *([0-9]+).*/\1/' <<<"$info")
hotkey=$(sed -E 's/.*"hotkey": *"([^"]*)".*/\1/' <<<"$info")

echo "== bt-ping: $count sequential queries of the base Synapse (timeout 5), as the original measurement,"
echo "   in $rounds rounds alternated with $rounds rounds of the floor (floor, ping, floor, ping, ...)"
status=0
# As a Python dendrite calls: the answer's bt-response-signature (ours; docs/protocol.md 5.15) is
# not checked, so the ping does the crypto the floor counts, and the floor's goal applies.
"$ping" --target "127.0.0.1:$port:$hotkey" "${ping_key[@]}" --count "$count" --baseline \
  --rounds "$rounds" --no-response-signatures | tee "$work/ping.out" || status=$?
echo "(ratio = the best ping round's mean over the best floor round's, each round measured in this"
echo " same run, alternated: a floor round is a bare HTTP round trip of the same sizes, plus the"
echo " sr25519 signing and verifying a signed exchange needs, as the Floor line shows; the least a"
echo " signed ping can cost on this machine. The goal is a target measured on a 2-vCPU machine"
echo " (docs/performance.md), not a promise for yours; the demo's exit status is that of the pings,"
echo " not of the goal.)"
# bt-ping's verdict line, "ratio goal met: R <= G (best of N ...)", restated as the demo's with
# the 1-minute load average: on a machine whose vCPUs are all busy (load at or above their
# number) every round is slowed and no choice of rounds gives a stable ratio.
load=$(cut -d ' ' -f 1 /proc/loadavg 2>/dev/null || echo unknown)
line=$(grep -m 1 -E '^ratio goal (met|missed): [0-9]' "$work/ping.out" || true)
if [[ -n $line ]]; then
  line=${line#ratio goal }  # "met: R <= G (best of N ...)", or without the rounds with BT_DEMO_ROUNDS=1
  rest=${line#*: }
  if [[ $rest == *")" ]]; then rest="${rest%)}; load average $load)"; else rest="$rest (one round; load average $load)"; fi
  echo "demo verdict: ${line%%:*}: ratio $rest"
else
  echo "demo verdict: missed: no ratio (no ping succeeded)"
fi

echo "== Stopping bt-axon"
kill -TERM "$axon_pid"
axon_status=0
wait "$axon_pid" || axon_status=$?
axon_pid=
echo "bt-axon exited with status $axon_status"
# Constants, not measured here (docs/performance.md, "Ping (bt-ping)").
echo "For comparison, constants not measured by this run: the original Bittensor measurement of the"
echo "same loop in Python bittensor, on another machine, reported 43.9 ms per ping before the"
echo "per-class schema cache, 2.7 ms with it and 8.3 ms without it (docs/performance.md, \"Ping\")."
echo "Python clients measured on this machine: python/perf/ping_compare.py (docs/performance.md, \"Python\")."
exit "$status"
