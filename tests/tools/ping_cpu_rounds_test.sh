#!/usr/bin/env bash
# bt-ping's CPU per request and alternated rounds: every mode prints "CPU: X us per request" and
# writes cpu_us_per_request (both ends: in process, or bt-ping plus the spawned bt-axon); with
# --baseline the bare round trip's CPU (bare_rtt_cpu_us) and their ratio (cpu ratio line,
# baseline.cpu_ratio, goal 1.15 without crypto); with --rounds N the ratio is the best ping round
# over the best floor round, the verdict line says "(best of N alternated rounds; spread ...)",
# and --rounds without --baseline is bad usage (exit 2). No timing is asserted, only that the
# figures exist, are positive and agree with each other. Usage: ping_cpu_rounds_test.sh <bt-ping>
set -euo pipefail
PING="$1"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/bt-cpu-rounds-XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$PING" --no-crypto --count 200 --baseline --rounds 4 --json "$TMP/rounds.json" \
  >"$TMP/rounds.out" 2>&1 || { cat "$TMP/rounds.out" >&2; fail "bt-ping --rounds 4 exited $?"; }
grep -qE '^CPU: [0-9.]+ us per request \(user [0-9.]+ \+ sys [0-9.]+ us; axon and dendrite, this process\)$' \
  "$TMP/rounds.out" || { cat "$TMP/rounds.out" >&2; fail "no in-process CPU line"; }
grep -qE '^cpu ratio = [0-9.]+ \(CPU per request [0-9.]+ us / bare round trip CPU [0-9.]+ us; goal <= 1.15\)$' \
  "$TMP/rounds.out" || { cat "$TMP/rounds.out" >&2; fail "no cpu ratio line"; }
verdict=$(grep -E '^ratio goal (met|missed): ' "$TMP/rounds.out") ||
  { cat "$TMP/rounds.out" >&2; fail "no verdict line"; }
[[ $verdict =~ \(best\ of\ 4\ alternated\ rounds\;\ spread:\ ping\ [0-9.]+%,\ floor\ [0-9.]+%,\ round\ ratios\ [0-9.]+-[0-9.]+\)$ ]] ||
  fail "the verdict does not name the rounds: $verdict"
python3 - "$TMP/rounds.json" <<'PY' || fail "the rounds' JSON is inconsistent"
import json, sys
j = json.load(open(sys.argv[1]))
b = j["baseline"]
assert j["count"] == 200 and j["successes"] == 200, j["count"]
assert j["cpu_us_per_request"] > 0 and j["cpu_scope"] == "axon and dendrite, this process", j
assert abs(j["cpu_user_us_per_request"] + j["cpu_sys_us_per_request"] - j["cpu_us_per_request"]) < 1e-6
assert b["bare_rtt_cpu_us"] > 0 and b["cpu_floor_us"] == b["bare_rtt_cpu_us"], b  # no crypto
assert abs(b["cpu_ratio"] - j["cpu_us_per_request"] / b["bare_rtt_cpu_us"]) < 1e-9, b
assert b["cpu_ratio_goal"] == 1.15 and b["ratio_goal"] == 1.2, b
r = b["rounds"]
assert r["count"] == 4 and r["calls_per_round"] == 50, r
assert len(r["ping_means_us"]) == 4 and len(r["floor_means_us"]) == 4, r
# The ratio compares the best of each (no crypto: the floor is the bare round trip alone).
assert abs(b["ratio"] - min(r["ping_means_us"]) / min(r["floor_means_us"])) < 1e-9, (b["ratio"], r)
assert abs(b["bare_rtt_mean_us"] - min(r["floor_means_us"])) < 1e-9, b
PY

# Both ends across processes: bt-ping's CPU plus the spawned bt-axon's.
"$PING" --cross-process --count 100 --json "$TMP/cross.json" >"$TMP/cross.out" 2>&1 ||
  { cat "$TMP/cross.out" >&2; fail "bt-ping --cross-process exited $?"; }
grep -qE '^CPU: [0-9.]+ us per request .*bt-ping \(dendrite\) \+ the spawned bt-axon\)$' \
  "$TMP/cross.out" || { cat "$TMP/cross.out" >&2; fail "no cross-process CPU line"; }

# --rounds needs --baseline.
rc=0
"$PING" --count 100 --rounds 2 >"$TMP/usage.out" 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "--rounds without --baseline exited $rc, not 2"
grep -q -- '--rounds' "$TMP/usage.out" || fail "the usage error does not name --rounds"
echo "bt-ping: $verdict"
