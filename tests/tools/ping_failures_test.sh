#!/usr/bin/env bash
# bt-ping against an axon that is not there: every call fails, so there is no latency or
# throughput to report. Checks that the run exits 1, lists the failures by status and message,
# prints no Latency/Throughput figure and no numeric Average, and writes null figures to --json.
# Usage: ping_failures_test.sh <bt-ping>. Port 1 of 127.0.0.1 is a closed port (nothing
# unprivileged listens there), so each call is refused at once. A temporary directory is removed.
set -euo pipefail

BIN="$1"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/bt-ping-fail-XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

HOTKEY=5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty  # //Bob
rc=0
timeout 60 "$BIN" --count 3 --target "127.0.0.1:1:$HOTKEY" --json "$TMP/ping.json" \
  >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
out="$(cat "$TMP/out")"
[[ "$rc" == 1 ]] || fail "exit status $rc, expected 1 (stderr: $(cat "$TMP/err"))"
for want in "Number of queries: 3" "Average: none (no call succeeded)" \
            "Failures: 3 of 3 calls" "  3 x 503 Service unavailable at 127.0.0.1:1/Synapse"; do
  expect_has "$out" "$want" stdout
done
for unwanted in "Throughput" "Latency:" "seconds"; do
  [[ "$out" != *"$unwanted"* ]] || fail "stdout has '$unwanted' for a run where nothing succeeded:"$'\n'"$out"
done
json="$(cat "$TMP/ping.json")"
for want in '"count": 3' '"successes": 0' '"mean_us": null' '"503": 3' \
            '"message": "Service unavailable at 127.0.0.1:1/Synapse"'; do
  expect_has "$json" "$want" --json
done

finish "bt-ping failure report"
