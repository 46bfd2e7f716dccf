#!/usr/bin/env bash
# perf/plot_latency.py on bt-ping's own JSON: bt-ping --baseline writes the bare round trip's
# percentiles (bare_rtt_p50/p90/p99_us, in order), the script draws one row per series from them
# and from a ping_compare.py-shaped file, and refuses an input without the figures it names
# (exit 2, naming the file and the key). Usage: ping_plot_test.sh <bt-ping> <plot_latency.py>
set -euo pipefail
PING="$1"; PLOT="$2"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/bt-plot-XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$PING" --count 100 --baseline --json "$TMP/ping.json" >"$TMP/ping.out" 2>&1 ||
  { cat "$TMP/ping.out" >&2; fail "bt-ping --baseline exited $?"; }
python3 - "$TMP/ping.json" <<'PY' || fail "bt-ping's baseline lacks ordered bare_rtt percentiles"
import json, sys
b = json.load(open(sys.argv[1]))["baseline"]
p = [b[k] for k in ("bare_rtt_p50_us", "bare_rtt_p90_us", "bare_rtt_p99_us")]
assert all(isinstance(v, (int, float)) and v > 0 for v in p), p
assert p[0] <= p[1] <= p[2], p
PY

cat >"$TMP/compare.json" <<'JSON'
{"rows": {"python-compatible": [{"name": "shaped aiohttp dendrite", "count": 10,
  "mean_us": 900.0, "p50_us": 800.0, "p99_us": 2100.0}]}}
JSON
python3 "$PLOT" --out "$TMP/plot.svg" --title "test plot" \
  "bare round trip=$TMP/ping.json#baseline" "signed ping=$TMP/ping.json" \
  "shaped=$TMP/compare.json#row=python-compatible/shaped aiohttp dendrite" ||
  fail "plot_latency.py exited $?"
python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" "$TMP/plot.svg" ||
  fail "the SVG is not well-formed XML"
for label in "bare round trip" "signed ping" "shaped" "p50 800, p99 2100 µs"; do
  grep -qF ">$label" "$TMP/plot.svg" || grep -qF "$label<" "$TMP/plot.svg" ||
    fail "the SVG has no '$label'"
done
[[ $(grep -c ', p90 ' "$TMP/plot.svg") == 2 ]] || fail "expected a p90 on the two bt-ping rows only"

# Missing figures: exit 2 and a message naming the file and what is missing.
"$PING" --count 20 --json "$TMP/nobase.json" >/dev/null 2>&1 || fail "bt-ping without --baseline failed"
set +e
python3 "$PLOT" --out "$TMP/x.svg" "bare=$TMP/nobase.json#baseline" 2>"$TMP/err"; rc=$?
set -e
[[ $rc == 2 ]] || fail "a file without a baseline: exit $rc, expected 2"
grep -q "nobase.json: no 'baseline' object" "$TMP/err" || { cat "$TMP/err" >&2; fail "no message"; }
set +e
python3 "$PLOT" --out "$TMP/x.svg" "x=$TMP/compare.json#row=default/shaped aiohttp dendrite" 2>"$TMP/err"; rc=$?
set -e
[[ $rc == 2 ]] || fail "an absent configuration: exit $rc, expected 2"
[[ ! -e "$TMP/x.svg" ]] || fail "an SVG was written despite the error"
echo "plot_latency.py: bt-ping's percentiles drawn, bad inputs refused"
