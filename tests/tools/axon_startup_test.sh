#!/usr/bin/env bash
# bt-axon's start-up messages: a missing hotkey is named with the hotkeys the wallet has and the
# bt-wallet command that creates it (exit 1); a hotkey file other users may read or replace is
# loaded with a warning that names the modes and the chmod that fixes them; the AxonInfo line
# carries the wallet's coldkey; a port in use names --axon.port 0 (exit 1); an IPv6 address is
# logged in brackets. Usage: axon_startup_test.sh <bt-axon> <bt-wallet>
set -euo pipefail
AXON="$1"; WALLET="$2"
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
isolate bt-axon-wallet

W=(--wallet.path "$TMP/w" --wallet.name miner)
"$WALLET" new-coldkey "${W[@]}" --no-password >"$TMP/cold.json" 2>/dev/null </dev/null
"$WALLET" new-hotkey "${W[@]}" --wallet.hotkey h1 >/dev/null 2>&1 </dev/null
cold=$(sed -n 's/.*"coldkey":"\([^"]*\)".*/\1/p' "$TMP/cold.json")
[[ -n $cold ]] || fail "bt-wallet new-coldkey printed no address: $(cat "$TMP/cold.json")"
hotkeys="$TMP/w/miner/hotkeys"

rc=0
timeout 60 "$AXON" "${W[@]}" --wallet.hotkey h2 --axon.ip 127.0.0.1 --axon.port 0 \
  >/dev/null 2>"$TMP/missing.err" </dev/null || rc=$?
[[ $rc == 1 ]] || fail "a missing hotkey: exit $rc, expected 1"
expect_has "$(cat "$TMP/missing.err")" "cannot load the hotkey: wallet \"miner\" has no hotkey \"h2\" (no file $hotkeys/h2; its hotkeys: h1); create it with: bt-wallet new-hotkey --wallet.path $TMP/w --wallet.name miner --wallet.hotkey h2" "the missing hotkey's error"

chmod 666 "$hotkeys/h1"; chmod 777 "$hotkeys"
timeout 60 "$AXON" "${W[@]}" --wallet.hotkey h1 --axon.ip 127.0.0.1 --axon.port 0 \
  >"$TMP/axon.out" 2>"$TMP/axon.err" </dev/null &
AXON_PID=$!
for _ in $(seq 1 300); do grep -q '"port"' "$TMP/axon.out" 2>/dev/null && break; sleep 0.1; done
info=$(grep -m 1 '"port"' "$TMP/axon.out" || true)
[[ -n $info ]] || fail "bt-axon printed no AxonInfo line: $(cat "$TMP/axon.err")"
expect_has "$info" "\"coldkey\":\"$cold\"" "the AxonInfo line"
expect_has "$(cat "$TMP/axon.err")" "[warning] the hotkey $hotkeys/h1 is not private to its owner: mode 0666 lets other users read and change it, its folder $hotkeys (mode 0777) lets other users replace it; run: chmod 600 $hotkeys/h1 && chmod 700 $hotkeys" "bt-axon's log"
port=$(sed -E 's/.*"port": *([0-9]+).*/\1/' <<<"$info")

# The port the first axon holds: exit 1, and the way out.
rc=0
timeout 60 "$AXON" --uri //Bob --axon.ip 127.0.0.1 --axon.port "$port" >/dev/null 2>"$TMP/inuse.err" </dev/null || rc=$?
[[ $rc == 1 ]] || fail "a port in use: exit $rc, expected 1"
expect_has "$(cat "$TMP/inuse.err")" "cannot start the axon on 127.0.0.1:$port: Address already in use (another process listens there: stop it, or choose another port; --axon.port 0 takes any free one, which the AxonInfo line names)" "the port-in-use error"

# The unspecified IPv6 address is logged as [::]:PORT (0.0.0.0:PORT on a host without IPv6).
kill "$AXON_PID"; wait "$AXON_PID" 2>/dev/null || true
timeout 60 "$AXON" --uri //Bob --axon.ip :: --axon.port 0 >"$TMP/v6.out" 2>"$TMP/v6.err" </dev/null &
AXON_PID=$!
for _ in $(seq 1 300); do grep -q '"port"' "$TMP/v6.out" 2>/dev/null && break; sleep 0.1; done
listening=$(grep -o 'listening on [^ ]*' "$TMP/v6.err" || true)
[[ $listening =~ ^listening\ on\ (\[::\]|0\.0\.0\.0):[0-9]+$ ]] ||
  fail "the listening line: '$listening' (stderr: $(cat "$TMP/v6.err"))"
finish "bt-axon start-up messages"
