#!/usr/bin/env bash
# bt-ping --baseline states its verdict: after the ratio line, one line "ratio goal met: R <= G"
# or "ratio goal missed: R > G", agreeing with the ratio and the goal its JSON records
# (baseline.ratio, baseline.ratio_goal). Usage: ping_verdict_test.sh <bt-ping>
set -euo pipefail
PING="$1"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/bt-verdict-XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$PING" --count 100 --baseline --json "$TMP/ping.json" >"$TMP/ping.out" 2>&1 ||
  { cat "$TMP/ping.out" >&2; fail "bt-ping --baseline exited $?"; }
verdict=$(grep -E '^ratio goal (met|missed): ' "$TMP/ping.out") ||
  { cat "$TMP/ping.out" >&2; fail "no 'ratio goal met|missed' line"; }
[[ $(grep -A1 '^ratio = ' "$TMP/ping.out" | tail -n 1) == "$verdict" ]] ||
  fail "the verdict does not follow the ratio line"
python3 - "$TMP/ping.json" "$verdict" <<'PY' || fail "the verdict '$verdict' disagrees with the JSON"
import json, sys
b = json.load(open(sys.argv[1]))["baseline"]
ratio, goal, verdict = b["ratio"], b["ratio_goal"], sys.argv[2]
assert goal == 1.15, goal  # the default ping: signed, no payload
expected = f"ratio goal {'met' if ratio <= goal else 'missed'}: "
assert verdict.startswith(expected), (verdict, expected)
assert verdict.endswith(f"{goal:g}"), (verdict, goal)
PY
echo "bt-ping: $verdict"
