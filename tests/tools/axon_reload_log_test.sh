#!/usr/bin/env bash
# bt-axon's SIGHUP reload and machine logs, end to end: an axon with a deny list, JSON logs in a
# file (--logging.format json --logging.file); //Alice is served (200); her hotkey is added to the
# deny list and SIGHUP sent: she is refused (403) and the log says what changed (+1 -0); the deny
# list is then broken and SIGHUP sent again: the error is logged and the previous policy kept
# (still 403); SIGTERM drains with exit status 0; every log line is one JSON object.
# Usage: axon_reload_log_test.sh <bt-axon> <bt-dendrite>. Needs bash, coreutils and python3; the
# temporary directory is removed and the axon stopped on exit.
set -euo pipefail

AXON="$1"
DENDRITE="$2"
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
isolate bt-reload KILL

ALICE=5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY
BOB=5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty
LOG="$TMP/axon.log"

# wait_for <seconds> <command...>: polls until the command succeeds.
wait_for() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    if ((SECONDS >= deadline)); then return 1; fi
    sleep 0.1
  done
}

printf '# nobody denied yet\n' >"$TMP/deny.txt"
"$AXON" --uri //Bob --axon.ip 127.0.0.1 --axon.port 0 --blacklist.hotkeys "$TMP/deny.txt" \
  --logging.format json --logging.file "$LOG" >"$TMP/ready" 2>"$TMP/stderr" </dev/null &
AXON_PID=$!
wait_for 60 grep -q '"port"' "$TMP/ready" || { cat "$TMP/stderr" >&2; echo "FAIL: bt-axon did not start" >&2; exit 1; }
PORT="$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["port"])' "$TMP/ready")"

# status: the status code //Alice gets for a ping.
status() {
  timeout 60 "$DENDRITE" query --axon "127.0.0.1:$PORT:$BOB" --uri //Alice --timeout 5 2>/dev/null |
    python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["dendrite"]["status_code"])'
}

[[ "$(status)" == 200 ]] || fail "before the reload: //Alice is not served"

printf '# reloaded\n%s\n' "$ALICE" >"$TMP/deny.txt"
kill -HUP "$AXON_PID"
wait_for 30 grep -q 'policy reloaded' "$LOG" || fail "no 'policy reloaded' line after SIGHUP"
grep 'policy reloaded' "$LOG" | grep -q '1 hotkeys (+1 -0)' || fail "the reload line does not say +1 -0: $(grep 'policy reloaded' "$LOG")"
[[ "$(status)" == 403 ]] || fail "after the reload: //Alice is not refused"

printf 'not-an-ss58-address\n' >"$TMP/deny.txt"
kill -HUP "$AXON_PID"
wait_for 30 grep -q 'reload failed, keeping the current policy' "$LOG" || fail "no error line for a bad deny list"
grep 'reload failed' "$LOG" | grep -q 'not-an-ss58-address' || fail "the error does not name the bad entry"
[[ "$(status)" == 403 ]] || fail "after a failed reload: the previous policy is not kept"

kill -TERM "$AXON_PID"
rc=0
wait "$AXON_PID" || rc=$?
AXON_PID=""
[[ "$rc" == 0 ]] || fail "bt-axon exit status $rc after SIGTERM"

python3 - "$LOG" <<'PY' || fail "the log is not one JSON object per line"
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert len(lines) >= 4, lines
for line in lines:
    o = json.loads(line)
    assert isinstance(o, dict), line
    for k in ("ts", "level", "logger", "msg"):
        assert k in o, (k, line)
    assert o["ts"].endswith("Z"), line
PY
[[ ! -s "$TMP/stderr" ]] || fail "with --logging.file, stderr is not empty: $(cat "$TMP/stderr")"

finish "bt-axon SIGHUP reload and JSON logs"
