#!/usr/bin/env bash
# bt-ping --memory against the bt-axon it spawns: every one of more callers than the replay
# store's per-hotkey quota (1,024 records) gets its answer and keeps its connection (the callers
# share one hotkey), and the RSS figures are reported. No figure is judged (tests make no
# performance assertions). Usage: ping_memory_test.sh <bt-ping> (bt-axon beside it, as bt-ping
# finds it). A temporary directory is removed.
set -euo pipefail

BIN="$1"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/bt-ping-memory-XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

N=1200
rc=0
timeout 200 "$BIN" --memory --connections "$N" --json "$TMP/memory.json" \
  >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
out="$(cat "$TMP/out")"
[[ "$rc" == 0 ]] || fail "exit status $rc, expected 0 (stderr: $(tail -5 "$TMP/err"))"
for want in "Axon RSS at start: " "Axon RSS idle (after 200 pings): " \
            "Opening them took " "answers: 200: $N"$'\n'; do
  [[ "$out"$'\n' == *"$want"* ]] || fail "stdout lacks '$want':"$'\n'"$out"
done
json="$(cat "$TMP/memory.json" 2>/dev/null || true)"
for want in '"mode": "memory"' "\"connections_requested\": $N" "\"200\": $N"; do
  [[ "$json" == *"$want"* ]] || fail "--json lacks '$want':"$'\n'"$json"
done

if ((failures)); then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "bt-ping memory mode: all checks passed"
