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
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

N=1200
rc=0
timeout 200 "$BIN" --memory --connections "$N" --json "$TMP/memory.json" \
  >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
out="$(cat "$TMP/out")"
[[ "$rc" == 0 ]] || fail "exit status $rc, expected 0 (stderr: $(tail -5 "$TMP/err"))"
for want in "Axon RSS at start: " "Axon RSS idle (after 200 pings): " \
            "Opening them took " "answers: 200: $N"$'\n'; do
  expect_has "$out"$'\n' "$want" stdout
done
json="$(cat "$TMP/memory.json" 2>/dev/null || true)"
for want in '"mode": "memory"' "\"connections_requested\": $N" "\"200\": $N"; do
  expect_has "$json" "$want" --json
done

finish "bt-ping memory mode"
