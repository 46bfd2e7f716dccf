#!/usr/bin/env bash
# scripts/fleet with a wallet: --wallet.path/--wallet.name/--wallet.hotkey make every axon serve
# that wallet's hotkey (the fleet's announced hotkey is the wallet's, a query through HAProxy is
# answered 200), and scripts/fleet's own usage errors exit 2 naming the problem.
# The fleet is started, and every process stopped, by tests/fleet/fleet_lib.sh.
#
# Usage: fleet_wallet_test.sh BT_AXON BT_DENDRITE BT_WALLET
set -euo pipefail
axon=$1
dendrite=$2
wallet=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=fleet_lib.sh
source "$src/tests/fleet/fleet_lib.sh"
unset BT_WALLET_PATH BT_WALLET_NAME BT_WALLET_HOTKEY

rc=0
"$src/scripts/fleet" 2 --wallet.name >"$tmp/usage.out" 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "scripts/fleet --wallet.name without a value: exit $rc, expected 2"
grep -q "scripts/fleet: --wallet.name needs a value" "$tmp/usage.out" || fail "no usage message: $(cat "$tmp/usage.out")"

"$wallet" new-coldkey --wallet.path "$tmp/wallets" --wallet.name fleet --no-password >/dev/null 2>&1 </dev/null
"$wallet" new-hotkey --wallet.path "$tmp/wallets" --wallet.name fleet --wallet.hotkey miner \
  >"$tmp/hotkey.json" 2>/dev/null </dev/null
miner=$(sed -n 's/.*"hotkey":"\([^"]*\)".*/\1/p' "$tmp/hotkey.json")
[[ -n $miner ]] || fail "bt-wallet new-hotkey printed no address: $(cat "$tmp/hotkey.json")"

fleet_start 1 --wallet.path "$tmp/wallets" --wallet.name fleet --wallet.hotkey miner
[[ $hotkey == "$miner" ]] || fail "the fleet serves $hotkey, not the wallet's hotkey $miner"
"$dendrite" query --uri //Alice --axon "$target" --timeout 10 >"$tmp/query.out" 2>"$tmp/query.err" ||
  fail "bt-dendrite through HAProxy: $(cat "$tmp/query.err")"
grep -q 'status: 200 x1' "$tmp/query.err" || fail "not 200: $(cat "$tmp/query.err")"
echo "fleet: the wallet's hotkey $miner served through HAProxy"
