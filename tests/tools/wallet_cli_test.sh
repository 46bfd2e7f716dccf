#!/usr/bin/env bash
# Runs the real bt-wallet binary. Usage: wallet_cli_test.sh <bt-wallet> keys|wallet
#   keys:   inspect, sign/verify, ss58 encode/decode, and the exit codes of invalid input (fast)
#   wallet: a wallet written by bt-wallet reads back (show, show --decrypt, list, regen), file
#           modes, wrong password, no clobbering (three Argon2i runs of about a second each)
# Needs only bash and coreutils. Everything happens in a temporary directory removed on exit.
set -euo pipefail

BT="$1"
MODE="$2"
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
isolate bt-wallet-cli

# run <expected exit code> <args...>: runs bt-wallet, leaves stdout in $OUT, stderr in $ERR.
run() {
  local want="$1"; shift
  local rc=0
  OUT="$("$BT" "$@" 2>"$TMP/stderr")" || rc=$?
  ERR="$(cat "$TMP/stderr")"
  if [[ "$rc" != "$want" ]]; then fail "bt-wallet $* exited $rc, expected $want (stdout: $OUT; stderr: $ERR)"; fi
}
# expect_eq <actual> <expected> <what>
expect_eq() { [[ "$1" == "$2" ]] || fail "$3: got '$1', expected '$2'"; }
# expect_has <haystack> <needle> <what>
expect_has() { [[ "$1" == *"$2"* ]] || fail "$3: '$1' does not contain '$2'"; }
# field <json> <name>: the value of a string (or bare) field of a flat JSON object.
field() {
  local v
  v="$(printf '%s' "$1" | sed -n "s/.*\"$2\":\"\\([^\"]*\\)\".*/\\1/p")"
  [[ -n "$v" ]] || v="$(printf '%s' "$1" | sed -n "s/.*\"$2\":\\([^,}\"]*\\).*/\\1/p")"
  printf '%s' "$v"
}
# expect_error <args...>: exit code 2 and one {"error": "..."} object naming the problem.
expect_error() {
  run 2 "$@"
  [[ "$OUT" == '{"error":"'*'"}' ]] || fail "bt-wallet $*: expected {\"error\":...}, got '$OUT'"
}

DEV="bottom drive obey lake curtain smoke basket hold race lonely fit walk"
ALICE_PUB="0xd43593c715fdd31c61141abd04a99fd6822c8558854ccde39a5684e7a56da27d"
ALICE="5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY"

keys() {
  # inspect: //Alice and the dev phrase with a password (tests/vectors/sr25519_derive.json,
  # mnemonic.json), ed25519, another SS58 format, and the URI from stdin.
  run 0 inspect --uri //Alice
  expect_eq "$OUT" "{\"crypto\":\"sr25519\",\"public_key\":\"$ALICE_PUB\",\"ss58_address\":\"$ALICE\"}" "inspect //Alice"
  run 0 inspect --uri "$DEV///password"
  expect_eq "$(field "$OUT" ss58_address)" "5GC6LfpV352HtJPySfAecb5JdePtf4R9Vq49NUU8RhzgBqgq" "inspect dev///password"
  run 0 inspect --uri "$DEV//hard/soft"
  expect_eq "$(field "$OUT" ss58_address)" "$("$BT" inspect --uri "$DEV//hard/soft" | sed -n 's/.*"ss58_address":"\([^"]*\)".*/\1/p')" "soft derivation is deterministic"
  run 0 inspect --uri //Alice --crypto ed25519
  expect_eq "$(field "$OUT" public_key)" "0x88dc3417d5058ec4b4503e0c12ea1a0a89be200fe98922423d4334014fa6b0ee" "inspect ed25519 //Alice"
  expect_eq "$(field "$OUT" crypto)" "ed25519" "inspect ed25519 crypto"
  run 0 inspect --uri //Alice --ss58-format 0
  expect_eq "$(field "$OUT" ss58_address)" "15oF4uVJwmo4TdGW7VfQxNLavjCXviqxT9S1MgbjMNHr6Sp5" "inspect format 0"
  OUT="$(printf '//Alice\n' | "$BT" inspect --uri -)"
  expect_eq "$(field "$OUT" ss58_address)" "$ALICE" "inspect --uri - (stdin)"

  # sign -> verify round trips (sr25519 is randomised, so two signatures differ).
  run 0 sign --uri //Alice --message "hello bittensor"
  local sig sig2
  sig="$(field "$OUT" signature)"
  [[ "$sig" =~ ^0x[0-9a-f]{128}$ ]] || fail "signature format: $sig"
  run 0 sign --uri //Alice --message "hello bittensor"
  sig2="$(field "$OUT" signature)"
  [[ "$sig" != "$sig2" ]] || fail "sr25519 signatures should be randomised"
  run 0 verify --address "$ALICE" --message "hello bittensor" --signature "$sig"
  expect_eq "$OUT" '{"valid":true}' "verify"
  run 0 verify --address "$ALICE" --message "hello bittensor" --signature "$sig2"
  run 1 verify --address "$ALICE" --message "hello bittensor!" --signature "$sig"
  expect_has "$OUT" '"valid":false' "verify of another message"
  run 1 verify --address 5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty --message "hello bittensor" --signature "$sig"
  run 0 sign --uri //Alice --message 68656c6c6f --hex
  run 0 verify --address "$ALICE" --message hello --signature "$(field "$OUT" signature)"
  run 0 sign --uri //Bob --crypto ed25519 --message m
  sig="$(field "$OUT" signature)"
  run 0 sign --uri //Bob --crypto ed25519 --message m
  expect_eq "$(field "$OUT" signature)" "$sig" "ed25519 signatures are deterministic"
  local bob_ed
  bob_ed="$("$BT" inspect --uri //Bob --crypto ed25519 | sed -n 's/.*"ss58_address":"\([^"]*\)".*/\1/p')"
  run 0 verify --crypto ed25519 --address "$bob_ed" --message m --signature "$sig"
  run 1 verify --address "$bob_ed" --message m --signature "$sig"  # checked as sr25519

  # The reference signature of PROTOCOL 9.11 (made by polkadot-js).
  local msg="1700000000123456789.5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY.5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty.5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a.ed4bc853dce1a3f7afd74fd20a81219cd36d60f8b241fc33dcbe5ebc9381e2f9"
  local ref="0xecd00f9b3f73ef5af5a7f8cba9aabc3c356653e3b9a0eb292dbf85739382992681ba054df51995c9f9b8f4e4638632ef99fc58d17030b14f766f87f5d0d42e89"
  run 0 verify --address "$ALICE" --message "$msg" --signature "$ref"
  run 1 verify --address "$ALICE" --message "<Bytes>$msg</Bytes>" --signature "$ref"

  # ss58
  run 0 ss58 decode "$ALICE"
  expect_eq "$OUT" "{\"public_key\":\"$ALICE_PUB\",\"ss58_format\":42}" "ss58 decode"
  run 0 ss58 decode 15oF4uVJwmo4TdGW7VfQxNLavjCXviqxT9S1MgbjMNHr6Sp5
  expect_eq "$(field "$OUT" ss58_format)" "0" "ss58 decode format 0"
  run 0 ss58 encode --public-key "$ALICE_PUB"
  expect_eq "$OUT" "{\"ss58_address\":\"$ALICE\"}" "ss58 encode"
  run 0 ss58 encode --public-key "${ALICE_PUB#0x}" --format 2
  run 0 ss58 decode "$(field "$OUT" ss58_address)"
  expect_eq "$OUT" "{\"public_key\":\"$ALICE_PUB\",\"ss58_format\":2}" "ss58 round trip, format 2"
  run 0 ss58 encode --public-key "$ALICE_PUB" --format 16383

  # Invalid input: exit 2 and an error naming the problem.
  expect_error ss58 decode 5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQZ
  expect_has "$OUT" "checksum" "bad checksum"
  expect_error ss58 decode "0OIl"
  expect_has "$OUT" "character" "bad character"
  expect_error ss58 encode --public-key 0x1234
  expect_has "$OUT" "32 bytes" "short public key"
  expect_error ss58 encode --public-key "$ALICE_PUB" --format 46
  expect_has "$OUT" "reserved" "reserved format"
  expect_error ss58 encode --public-key "$ALICE_PUB" --format 16384
  expect_error inspect --uri "bottom drive obey lake curtain smoke basket hold race lonely fit fit"
  expect_has "$OUT" "checksum" "mnemonic checksum"
  expect_error inspect --uri "not a mnemonic"
  expect_has "$OUT" "word count" "mnemonic word count"
  expect_error inspect --uri "//Alice//"
  expect_has "$OUT" "secret URI" "bad URI"
  expect_error inspect --uri 0x1234
  expect_error inspect --uri //Alice/soft --crypto ed25519
  expect_has "$OUT" "hard junctions" "ed25519 soft junction"
  expect_error inspect --uri //Alice --crypto secp256k1
  expect_error sign --uri //Alice
  expect_error verify --address "$ALICE" --message m --signature 0xnothex
  expect_error verify --address "$ALICE" --message m --signature 0x1234
  expect_has "$OUT" "64 bytes" "short signature"
  expect_error verify --address 5Grw --message m --signature "$ref"
  expect_error frobnicate
  expect_error
  expect_error ss58
  run 0 --help
  # Usage errors name the problem: the misspelt command with the commands there are, the flag
  # with what it expects, the word nothing takes.
  expect_error shwo
  expect_has "$OUT" "unknown command 'shwo'; bt-wallet has: new-coldkey, new-hotkey" "misspelt command"
  expect_has "$OUT" ", show, " "misspelt command lists show"
  expect_error
  expect_has "$OUT" "a command is required; bt-wallet has: new-coldkey" "no command"
  expect_error ss58 dcode "$ALICE"
  expect_has "$OUT" "unknown command 'dcode'; bt-wallet ss58 has: decode, encode" "misspelt ss58 command"
  expect_error inspect --uri //Alice --ss58-format abc
  expect_eq "$OUT" "{\"error\":\"--ss58-format: expected an integer, got 'abc'\"}" "non-numeric flag value"
  expect_error inspect --uri //Alice --bogus
  expect_has "$OUT" "unknown option '--bogus' for bt-wallet inspect" "unknown option"
  expect_error show extra
  expect_has "$OUT" "unexpected argument 'extra' for bt-wallet show" "stray argument"
  run 0 --version
}

wallet() {
  export BT_WALLET_PATH="$TMP/wallets"
  local pw="correct horse battery staple"

  # A coldkey (encrypted) and a hotkey in wallet w1.
  OUT="$(BT_WALLET_PASSWORD="$pw" "$BT" new-coldkey --wallet.name w1 2>"$TMP/stderr")" || fail "new-coldkey failed: $OUT"
  ERR="$(cat "$TMP/stderr")"
  local cold mnemonic
  cold="$(field "$OUT" coldkey)"
  [[ "$cold" =~ ^5[1-9A-HJ-NP-Za-km-z]{47}$ ]] || fail "new-coldkey address: $OUT"
  expect_eq "$(field "$OUT" encrypted)" "true" "new-coldkey encrypted"
  # The mnemonic is shown once, on stderr, and never on stdout.
  mnemonic="$(printf '%s\n' "$ERR" | sed -n 's/^    \([a-z][a-z ]*[a-z]\)$/\1/p')"
  [[ "$(wc -w <<<"$mnemonic")" == 12 ]] || fail "mnemonic on stderr: $ERR"
  [[ "$OUT" != *"$mnemonic"* ]] || fail "the mnemonic leaked to stdout"
  expect_has "$ERR" "IMPORTANT" "mnemonic warning"
  # The regen hint names the wallet (and the non-default path): followed literally, without
  # the environment, it targets this very coldkey (which exists, so it is refused as such).
  local hint
  hint="$(printf '%s\n' "$ERR" | sed -n 's/^To regenerate: //p')"
  expect_eq "$hint" "bt-wallet regen-coldkey --wallet.path $BT_WALLET_PATH --wallet.name w1 --mnemonic \"<the words>\"" "regen-coldkey hint"
  hint="${hint/#bt-wallet/\"\$BT\"}"
  OUT="$(eval "setsid -w env -u BT_WALLET_PATH ${hint/<the words>/$mnemonic}" </dev/null 2>/dev/null)" || true
  expect_has "$OUT" "$BT_WALLET_PATH/w1/coldkey already exists" "following the regen-coldkey hint"

  run 0 new-hotkey --wallet.name w1 --wallet.hotkey h1 --n-words 24
  local hot
  hot="$(field "$OUT" hotkey)"
  [[ "$(printf '%s\n' "$ERR" | sed -n 's/^    \([a-z][a-z ]*[a-z]\)$/\1/p' | wc -w)" == 24 ]] || fail "24-word hotkey mnemonic"
  expect_has "$ERR" "To regenerate: bt-wallet regen-hotkey --wallet.path $BT_WALLET_PATH --wallet.name w1 --wallet.hotkey h1 --mnemonic" "regen-hotkey hint"

  # The layout, modes and formats.
  local d="$BT_WALLET_PATH/w1"
  for f in "$d/coldkey" "$d/coldkeypub.txt" "$d/hotkeys/h1" "$d/hotkeys/h1pub.txt"; do
    [[ -f "$f" ]] || fail "missing $f"
    expect_eq "$(stat -c %a "$f")" "600" "mode of $f"
  done
  for dir in "$BT_WALLET_PATH" "$d" "$d/hotkeys"; do expect_eq "$(stat -c %a "$dir")" "700" "mode of $dir"; done
  expect_eq "$(head -c 5 "$d/coldkey")" '$NACL' "coldkey is NaCl-encrypted"
  expect_has "$(cat "$d/coldkeypub.txt")" "\"ss58Address\":\"$cold\"" "coldkeypub.txt"
  expect_has "$(cat "$d/hotkeys/h1")" '"secretPhrase":"' "the hotkey is plaintext"
  [[ -z "$(find "$BT_WALLET_PATH" -name '*.tmp-*')" ]] || fail "temporary files left behind"

  # show reads it back; --decrypt proves the password.
  run 0 show --wallet.name w1 --wallet.hotkey h1
  expect_eq "$(field "$OUT" coldkeypub)" "$cold" "show coldkeypub"
  expect_eq "$(field "$OUT" hotkey)" "$hot" "show hotkey"
  expect_eq "$ERR" "" "show of a private wallet warns of nothing"
  # Secret keyfiles other users may read or replace: shown all the same, each with a warning
  # that names the modes and the chmod that fixes them.
  chmod 666 "$d/hotkeys/h1"; chmod 777 "$d/hotkeys"; chmod 640 "$d/coldkey"
  run 0 show --wallet.name w1 --wallet.hotkey h1
  expect_eq "$(field "$OUT" hotkey)" "$hot" "show of an exposed hotkey"
  expect_eq "$ERR" "bt-wallet: warning: the hotkey $d/hotkeys/h1 is not private to its owner: mode 0666 lets other users read and change it, its folder $d/hotkeys (mode 0777) lets other users replace it; run: chmod 600 $d/hotkeys/h1 && chmod 700 $d/hotkeys
bt-wallet: warning: the coldkey $d/coldkey is not private to its owner: mode 0640 lets other users read it; run: chmod 600 $d/coldkey" "exposed keyfile warnings"
  chmod 600 "$d/hotkeys/h1" "$d/coldkey"; chmod 700 "$d/hotkeys"
  OUT="$(BT_WALLET_PASSWORD="$pw" "$BT" show --decrypt --wallet.name w1 --wallet.hotkey h1)" || fail "show --decrypt: $OUT"
  expect_eq "$(field "$OUT" coldkey)" "$cold" "show --decrypt coldkey"
  expect_eq "$(field "$OUT" coldkey_matches_coldkeypub)" "true" "coldkey matches coldkeypub"
  local rc=0
  OUT="$(BT_WALLET_PASSWORD="wrong" "$BT" show --decrypt --wallet.name w1 --wallet.hotkey h1)" || rc=$?
  expect_eq "$rc" "2" "wrong password exit code"
  expect_has "$OUT" "wrong password" "wrong password message"

  # Without a password source and without a terminal: a clear error, not a hang.
  rc=0
  OUT="$(setsid -w "$BT" show --decrypt --wallet.name w1 --wallet.hotkey h1 </dev/null 2>/dev/null)" || rc=$?
  expect_eq "$rc" "2" "no terminal exit code"
  expect_has "$OUT" "BT_WALLET_PASSWORD" "no terminal message"

  # No clobbering; regen from the mnemonic gives the same key (here unencrypted, in w2).
  expect_error new-coldkey --wallet.name w1 --no-password
  expect_has "$OUT" "already exists" "new-coldkey over an existing one"
  expect_error new-hotkey --wallet.name w1 --wallet.hotkey h1
  run 0 regen-coldkey --wallet.name w2 --no-password --mnemonic "$mnemonic"
  expect_eq "$(field "$OUT" coldkey)" "$cold" "regen-coldkey address"
  expect_eq "$(field "$OUT" encrypted)" "false" "regen-coldkey --no-password"
  [[ -z "$ERR" ]] || fail "regen printed something on stderr: $ERR"
  run 0 show --decrypt --wallet.name w2 --wallet.hotkey none
  expect_eq "$(field "$OUT" coldkey)" "$cold" "unencrypted coldkey opens without a password"
  expect_eq "$(field "$OUT" hotkey)" "null" "missing hotkey is null"
  expect_eq "$ERR" "bt-wallet: warning: wallet \"w2\" has no hotkey \"none\" (no file $BT_WALLET_PATH/w2/hotkeys/none; its hotkeys: none); create it with: bt-wallet new-hotkey --wallet.name w2 --wallet.hotkey none" "missing hotkey warning"
  OUT="$(printf '%s\n' "$DEV" | "$BT" regen-hotkey --wallet.name w2 --wallet.hotkey dev --mnemonic -)"
  expect_eq "$(field "$OUT" hotkey)" "5DfhGyQdFobKM8NsWvEeAKk5EQQgYe9AydgJ7rMB6E1EqRzV" "regen-hotkey from stdin"
  expect_error regen-hotkey --wallet.name w2 --wallet.hotkey dev --mnemonic "$DEV"
  run 0 regen-hotkey --wallet.name w2 --wallet.hotkey dev --mnemonic "$DEV" --overwrite
  expect_error regen-hotkey --wallet.name w2 --wallet.hotkey x --mnemonic "abandon abandon"
  expect_has "$OUT" "word count" "regen with a bad mnemonic"
  [[ ! -e "$BT_WALLET_PATH/w2/hotkeys/x" ]] || fail "a failed regen wrote a file"

  # list, and the environment defaults (BT_WALLET_NAME / BT_WALLET_HOTKEY).
  run 0 list
  expect_has "$OUT" "\"name\":\"w1\",\"coldkeypub\":\"$cold\"" "list w1"
  expect_has "$OUT" "{\"name\":\"h1\",\"ss58_address\":\"$hot\"}" "list h1"
  expect_has "$OUT" "\"name\":\"w2\"" "list w2"
  OUT="$(BT_WALLET_NAME=w1 BT_WALLET_HOTKEY=h1 "$BT" show)"
  expect_eq "$(field "$OUT" hotkey)" "$hot" "show from the environment"
  run 0 list --wallet.path "$TMP/none"
  expect_eq "$OUT" "{\"path\":\"$TMP/none\",\"wallets\":[]}" "list of an empty path"
  expect_error show --wallet.name nothing-here
  expect_error show --wallet.name ../escape
  # "~" in --wallet.path is the home directory.
  run 0 regen-hotkey --wallet.path "~/w" --wallet.name t --mnemonic "$DEV"
  [[ -f "$HOME/w/t/hotkeys/default" ]] || fail "~ was not expanded"
}

case "$MODE" in
  keys) keys ;;
  wallet) wallet ;;
  *) echo "usage: $0 <bt-wallet> keys|wallet" >&2; exit 2 ;;
esac

finish "bt-wallet $MODE"
