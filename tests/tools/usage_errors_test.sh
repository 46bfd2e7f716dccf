#!/usr/bin/env bash
# Bad usage of a tool: exit status 2 and a message on stderr that names the problem (the flag and
# what it expects, the unknown command and the commands there are, the reason a file cannot be
# read); --help exits 0. Usage: usage_errors_test.sh bt-axon|bt-dendrite|bt-ping <binary>
# bt-dendrite's errors are one JSON object {"error": ...}, checked as such. (bt-wallet answers in
# JSON on stdout: tests/tools/wallet_cli_test.sh checks it.) Needs bash and coreutils;
# a temporary directory is removed on exit, and a started bt-axon is stopped.
set -euo pipefail

TOOL="$1"
BIN="$2"
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
isolate bt-usage


# usage <expected stderr fragment> <args...>: exit status 2 and the fragment on stderr. bt-dendrite's
# results are JSON, and so are its errors: stderr must be exactly one {"error": "..."} line, and the
# fragment is looked for in that message.
usage() {
  local want="$1"; shift
  local rc=0
  timeout 60 "$BIN" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
  local err; err="$(cat "$TMP/err")"
  [[ "$rc" == 2 ]] || fail "$TOOL $*: exit status $rc, expected 2 (stderr: $err)"
  if [[ "$TOOL" == bt-dendrite ]]; then
    err="$(python3 -c 'import json, sys
lines = sys.stdin.read().splitlines()
assert len(lines) == 1, lines
j = json.loads(lines[0])
assert list(j) == ["error"] and isinstance(j["error"], str), j
print(j["error"])' <"$TMP/err")" || { fail "$TOOL $*: stderr is not one JSON object {\"error\": ...}: $err"; return; }
  fi
  [[ "$err" == *"$want"* ]] || fail "$TOOL $*: stderr '$err' does not contain '$want'"
}
help_ok() {
  local rc=0
  timeout 60 "$BIN" --help >"$TMP/out" 2>&1 </dev/null || rc=$?
  [[ "$rc" == 0 ]] || fail "$TOOL --help: exit status $rc"
}

case "$TOOL" in
  bt-axon)
    help_ok
    usage "bt-axon: --axon.port: expected an integer from 0 to 65535, got 'abc'" --axon.port abc
    usage "--axon.port: expected an integer from 0 to 65535, got '70000'" --axon.port 70000
    usage "--axon.header_timeout: expected a number from 0.01 to 3600, got 'soon'" --axon.header_timeout soon
    usage "--axon.idle_buffer_bytes: expected a non-negative integer from 0 to 17179869184, got '-1'" --axon.idle_buffer_bytes -1
    usage "unknown option '--axon.prot' for bt-axon; did you mean '--axon.port'?" --axon.prot 1
    usage "--axon.ip 'bad host!': not an IP address or a host name; give an IP address such as 127.0.0.1" --axon.ip 'bad host!'
    usage "--axon.ip 'nosuch.invalid': the host name does not resolve" --axon.ip nosuch.invalid
    usage "bt-axon: --axon.external_ip 'miner.example.com': not an IP address; the address published in AxonInfo must be an IP literal such as 203.0.113.7" --uri //Bob --axon.external_ip miner.example.com
    usage "--axon.external_ip '1.2.3': not an IP address" --uri //Bob --axon.external_ip 1.2.3
    # Behind a load balancer: the CIDR list is checked before anything starts, naming the block.
    usage "bt-axon: --axon.trusted_proxies: '10.0.0.1/8' is not a CIDR block: host bits are set below /8 (did you mean 10.0.0.0/8?)" --axon.proxy_protocol --axon.trusted_proxies 10.0.0.1/8
    usage "--axon.trusted_proxies: '10.0.0.0/40' is not a CIDR block: prefix length 40 is above 32" --axon.proxy_protocol --axon.trusted_proxies 127.0.0.1/32,10.0.0.0/40
    usage "--axon.trusted_proxies: empty item in the CIDR list '127.0.0.1/32,'" --axon.proxy_protocol --axon.trusted_proxies 127.0.0.1/32,
    usage "bt-axon: --axon.proxy_protocol and --axon.trusted_proxies CIDR[,CIDR...] go together" --axon.proxy_protocol
    usage "bt-axon: --axon.proxy_protocol and --axon.trusted_proxies CIDR[,CIDR...] go together" --axon.trusted_proxies 127.0.0.1/32
    # The Redis store's settings: a bad value names the flag; without a redis:// store they
    # would be silently ignored, so they are refused.
    usage "bt-axon: --nonce_store.timeout_ms: expected a non-negative integer from 1 to 60000, got '0'" --nonce_store.timeout_ms 0
    usage "--nonce_store.connections: expected a non-negative integer from 1 to 64, got '65'" --nonce_store.connections 65
    usage "--nonce_store.key_prefix: 'a b': only printable ASCII characters without spaces" --nonce_store redis://127.0.0.1:1/0 --nonce_store.key_prefix 'a b'
    usage "--nonce_store.key_prefix: at most 64 bytes, got 65" --nonce_store redis://127.0.0.1:1/0 --nonce_store.key_prefix "$(printf 'k%.0s' $(seq 65))"
    usage "bt-axon: --nonce_store.connections applies to a redis:// --nonce_store only (the store is 'memory')" --nonce_store.connections 3
    usage "bt-axon: --nonce_store.key_prefix applies to a redis:// --nonce_store only" --uri //Bob --nonce_store memory --nonce_store.key_prefix fleet:
    # Policy files: a bad entry is named with its file and line (deny list) or entry (metagraph).
    printf '# deny\n5GNJqTPyNqANBkUVMN1LPPrxXnFouWXoe2wNSmmEoLctxiZY\n5Fnotakey\n' >"$TMP/deny.txt"
    usage "$TMP/deny.txt:3: '5Fnotakey' is not an SS58 address" --uri //Bob --blacklist.hotkeys "$TMP/deny.txt"
    printf '[{"hotkey": "5GNJqTPyNqANBkUVMN1LPPrxXnFouWXoe2wNSmmEoLctxiZY", "stake": -2}]' >"$TMP/mg.json"
    usage "$TMP/mg.json: entry 0 (hotkey 5GNJqTPyNqANBkUVMN1LPPrxXnFouWXoe2wNSmmEoLctxiZY): \"stake\" must be a non-negative number" --uri //Bob --metagraph "$TMP/mg.json"
    printf '[{"hotkey": "5GNJqTPy' >"$TMP/cut.json"
    usage "$TMP/cut.json: not valid JSON: parse error at line 1, column " --uri //Bob --metagraph "$TMP/cut.json"
    # A host name that resolves is served on its address: the ready line carries the literal.
    mkfifo "$TMP/ready"
    "$BIN" --uri //Bob --axon.ip localhost --axon.port 0 >"$TMP/ready" 2>"$TMP/axon.err" &
    AXON_PID=$!
    line=""
    read -r -t 60 line <"$TMP/ready" || true
    [[ "$line" == *'"ip":"127.0.0.1"'* || "$line" == *'"ip":"::1"'* ]] ||
      fail "bt-axon --axon.ip localhost: ready line '$line' (stderr: $(cat "$TMP/axon.err"))"
    kill -TERM "$AXON_PID"
    rc=0; wait "$AXON_PID" || rc=$?
    AXON_PID=""
    [[ "$rc" == 0 ]] || fail "bt-axon --axon.ip localhost: exit status $rc after SIGTERM"
    grep -q "the host name resolved to" "$TMP/axon.err" || fail "bt-axon: no log line for the resolved name: $(cat "$TMP/axon.err")"
    ;;
  bt-dendrite)
    help_ok
    usage "unknown command 'qeury'; bt-dendrite has: encode, query" qeury --uri //Alice
    usage "a command is required; bt-dendrite has: encode, query"
    usage "--timeout: expected a number, got 'abc'" query --timeout abc
    usage "--concurrency: expected a positive integer, got '-1'" query --concurrency -1
    usage "--concurrency: expected a positive integer, got '0'" query --concurrency 0
    usage "unknown option '--axon.ip' for bt-dendrite query" query --axon.ip 1
    # A target hotkey is checked before anything is sent, and the argument is named.
    usage "--axon '127.0.0.1:18091:hello': hotkey 'hello' is not an SS58 address (" query --uri //Alice --axon 127.0.0.1:18091:hello
    usage "--axon 'localhost:18091:5GNJqTPyNqANBkUVMN1LPPrxXnFouWXoe2wNSmmEoLctxiZY': 'localhost' is not an IP address; an axon is addressed by its IP, as AxonInfo has it (this machine: 127.0.0.1 or [::1])" query --uri //Alice --axon localhost:18091:5GNJqTPyNqANBkUVMN1LPPrxXnFouWXoe2wNSmmEoLctxiZY
    usage "--axons: cannot read $TMP/none.json: No such file or directory" query --uri //Alice --axons "$TMP/none.json"
    usage "--axons: cannot read $TMP: Is a directory" query --uri //Alice --axons "$TMP"
    # The wrong kind of file: what it looks like, and what --axons expects, with an example.
    hint="--axons expects a JSON list of AxonInfo objects, e.g. [{\"ip\": \"127.0.0.1\", \"port\": 8091, \"hotkey\": \"5F"
    printf '[{"hotkey": "5GNJqTPyNqANBkUVMN1LPPrxXnFouWXoe2wNSmmEoLctxiZY", "stake": 2.5}]' >"$TMP/stakes.json"
    usage "--axons $TMP/stakes.json [0]: missing required field in axon_info.ip: required (this looks like a bt-axon --metagraph stake list: it has hotkeys but no ip or port); $hint" query --uri //Alice --axons "$TMP/stakes.json"
    printf '{"accountId": "0x00", "publicKey": "0x00", "ss58Address": "5GNJqTPyNqANBkUVMN1LPPrxXnFouWXoe2wNSmmEoLctxiZY"}' >"$TMP/hotkey"
    usage "--axons $TMP/hotkey: got a JSON object (this looks like a wallet keyfile); $hint" query --uri //Alice --axons "$TMP/hotkey"
    printf '127.0.0.1:8091:5GNJqTPyNqANBkUVMN1LPPrxXnFouWXoe2wNSmmEoLctxiZY\n' >"$TMP/targets.txt"
    usage "--axons $TMP/targets.txt: not valid JSON (" query --uri //Alice --axons "$TMP/targets.txt"
    usage "$hint" query --uri //Alice --axons "$TMP/targets.txt"
    printf '[]' >"$TMP/empty.json"
    usage "--axons $TMP/empty.json: the list is empty; $hint" query --uri //Alice --axons "$TMP/empty.json"
    # A synapse name that is no identifier, quoted as UTF-8 (not 'R?sum?').
    usage "--synapse Résumé: invalid JSON in synapse.name: not an ASCII identifier of 1 to 128 characters: 'Résumé'" query --uri //Alice --axon 127.0.0.1:18091:5GNJqTPyNqANBkUVMN1LPPrxXnFouWXoe2wNSmmEoLctxiZY --synapse Résumé
    # A wallet that does not exist: the wallets there and the commands that create it.
    mkdir -p "$TMP/wallets/other"
    usage "no wallet \"x\" at $TMP/wallets/x (wallets there: other); create it with: bt-wallet new-coldkey --wallet.path $TMP/wallets --wallet.name x, then bt-wallet new-hotkey --wallet.path $TMP/wallets --wallet.name x --wallet.hotkey default" query --wallet.path "$TMP/wallets" --wallet.name x --axon 127.0.0.1:18091:5GNJqTPyNqANBkUVMN1LPPrxXnFouWXoe2wNSmmEoLctxiZY
    ;;
  bt-ping)
    help_ok
    usage "bt-ping: --count: expected a positive integer, got 'abc'" --count abc
    usage "--count: expected a positive integer, got '0'" --count 0
    usage "--concurrency: expected a positive integer, got 'x'" --concurrency x
    usage "--timeout: expected a positive number, got '-1'" --timeout -1
    usage "--warmup: expected a non-negative integer, got 'many'" --warmup many
    usage "--connections: expected a non-negative integer, got '-1'" --connections -1
    usage "unknown option '--cout' for bt-ping" --cout 3
    [[ "$(cat "$TMP/err")" != *e+308* ]] || fail "bt-ping: a range printed as 1.79e+308"
    # An output file that cannot be written is refused before the run, with the reason.
    usage "bt-ping: --json: cannot write $TMP/no/such/ping.json: No such file or directory" --count 1 --json "$TMP/no/such/ping.json"
    usage "bt-ping: --histogram: cannot write $TMP: Is a directory" --count 1 --histogram "$TMP"
    # A target whose hotkey is not an SS58 address is refused before anything is sent.
    usage "bt-ping: --target '127.0.0.1:1:hello': hotkey 'hello' is not an SS58 address (" --count 1 --target 127.0.0.1:1:hello
    usage "--target '127.0.0.1:1:5GNJqTPyNqANBkUVMN1LPPrxXnFouWXoe2wNSmmEoLctxiZa': hotkey '5GNJqTPyNqANBkUVMN1LPPrxXnFouWXoe2wNSmmEoLctxiZa' is not an SS58 address (" --count 1 --target 127.0.0.1:1:5GNJqTPyNqANBkUVMN1LPPrxXnFouWXoe2wNSmmEoLctxiZa
    usage "bt-ping: --target '127.0.0.1:0:5GNJ': the port '0' is not an integer from 1 to 65535" --count 1 --target 127.0.0.1:0:5GNJ
    usage "bt-ping: --epistula and --btauth measure calls as they are signed and checked; --baseline" --count 1 --epistula --baseline
    usage "bt-ping: --epistula and --btauth measure calls as they are signed and checked; --baseline" --count 1 --btauth --session
    usage "bt-ping: --epistula and --btauth each choose how /echo is signed; give one" --count 1 --epistula --btauth
    ;;
  *) echo "usage: $0 bt-axon|bt-dendrite|bt-ping <binary>" >&2; exit 2 ;;
esac

finish "$TOOL usage errors"
