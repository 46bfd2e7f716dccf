# Shared by the fleet tests (sourced, not run): start scripts/fleet, drive load through
# HAProxy with bt-dendrite processes, count what the calls got, clean up everything started.
#
# The sourcing script sets: axon dendrite (executables) and src (the repository), optionally
# fleet_axon_args (more bt-axon arguments for every axon), then calls fleet_start N. Afterwards the variables of scripts/fleet's BT_FLEET_INFO are set (public_port,
# hotkey, redis_port, redis_pid, axon_ports, axon_pids, admin_ports, haproxy_pid, work) and
# $target is the public address as bt-dendrite takes it. Every process started here, by
# scripts/fleet or added to extra_pids, is stopped on exit; the temporary directory is removed.
# Every tests/fleet/*_test.sh starts its fleet with it.

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bt-fleet-test.XXXXXX")
fleet=
extra_pids=()
load_pids=()

fail() {
  echo "FAIL: $*"
  exit 1
}

fleet_stop() {
  load_stop
  for p in "${extra_pids[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  extra_pids=()
  [[ -n "$fleet" ]] || return 0
  kill -TERM "$fleet" 2>/dev/null || true
  for _ in $(seq 150); do kill -0 "$fleet" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$fleet" 2>/dev/null || true
  wait "$fleet" 2>/dev/null || true
  fleet=
}
fleet_on_exit() {
  local status=$?
  fleet_stop
  if ((status != 0)); then
    echo "---- scripts/fleet output"; cat "$tmp/fleet.out" 2>/dev/null || true
    # The last lines of each log other than its access lines for answers 200, which are most of
    # a loaded axon's log and say nothing about a failure.
    for f in "$tmp"/work/*/*.log; do
      [[ -f "$f" ]] && { echo "---- $f"; grep -v '| 200 | Success |' "$f" | tail -n 20; }
    done
  fi
  rm -rf "$tmp"
}
trap fleet_on_exit EXIT

# fleet_start N [ARGS...]: scripts/fleet N ARGS... in the background (its directory, with the axons' logs, inside
# ours), waits for its BT_FLEET_INFO and for HAProxy's first health check of every axon.
fleet_start() {
  for exe in "$axon" "$dendrite"; do
    [[ -x "$exe" ]] || fail "$exe is not an executable"
  done
  for tool in redis-server redis-cli haproxy python3; do
    command -v "$tool" >/dev/null || fail "$tool not found (scripts/setup installs it)"
  done
  mkdir -p "$tmp/work"
  TMPDIR=$tmp/work BT_FLEET_KEEP=1 BT_AXON_EXE=$axon BT_FLEET_INFO=$tmp/info BT_FLEET_DEBUG=1 \
    BT_FLEET_AXON_ARGS=${fleet_axon_args:-} "$src/scripts/fleet" "$@" >"$tmp/fleet.out" 2>&1 &
  fleet=$!
  for _ in $(seq 600); do
    [[ -f "$tmp/info" ]] && break
    kill -0 "$fleet" 2>/dev/null || fail "scripts/fleet exited before serving"
    sleep 0.1
  done
  [[ -f "$tmp/info" ]] || fail "scripts/fleet did not serve within 60 s"
  # shellcheck disable=SC1091
  source "$tmp/info"
  ((has_store && has_admin)) || fail "this bt-axon has no --nonce_store or no --admin.listen"
  target=127.0.0.1:$public_port:$hotkey
  # HAProxy marks a server up after its first check (rise 1, inter 1 s).
  sleep 2
}

# relay_start OUT [FROM]: a one-connection relay in the background (its pid in $relay and in
# extra_pids): it binds 127.0.0.1 port 0 (the port it got in $relay_port: no race for a free
# port), accepts one client, connects to HAProxy's public port (from address FROM when given, so
# that the axons see FROM as the caller), copies both ways, and saves what the client sent to OUT
# when the exchange ends. relay_wait then tells whether it worked.
relay_start() {
  local out=$1 from=${2:-}
  rm -f "$out" "$out.ready"
  python3 - "$public_port" "$out" "$from" <<'EOF' &
import os, socket, sys, threading
public_port, capture, source = int(sys.argv[1]), sys.argv[2], sys.argv[3]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(1)
srv.settimeout(30)
with open(capture + ".ready.tmp", "w") as f:
    f.write(str(srv.getsockname()[1]))
os.rename(capture + ".ready.tmp", capture + ".ready")
client, _ = srv.accept()
up = socket.create_connection(("127.0.0.1", public_port), timeout=30,
                              source_address=(source, 0) if source else None)
sent = bytearray()
def pump(a, b, keep):
    try:
        while data := a.recv(65536):
            if keep is not None:
                keep += data
            b.sendall(data)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass
back = threading.Thread(target=pump, args=(up, client, None))
back.start()
pump(client, up, sent)
back.join(30)
open(capture, "wb").write(bytes(sent))
EOF
  relay=$!
  extra_pids+=("$relay")
  for _ in $(seq 100); do [[ -f "$out.ready" ]] && break; sleep 0.1; done
  [[ -f "$out.ready" ]] || fail "the relay did not start"
  relay_port=$(cat "$out.ready")
}
# relay_wait: waits for the relay; its exit status. Its pid leaves extra_pids (no later signal
# to a pid the system may have reused).
relay_wait() {
  local status=0 p kept=()
  wait "$relay" || status=$?
  for p in "${extra_pids[@]}"; do [[ "$p" == "$relay" ]] || kept+=("$p"); done
  extra_pids=("${kept[@]}")
  return "$status"
}

# batch OUT CALLS CONCURRENCY: one bt-dendrite process making CALLS Dummy calls through HAProxy;
# one JSON line per call appended to OUT (its exit status is ignored: failures are in the lines).
batch() {
  local out=$1 calls=$2 conc=$3 args=()
  for _ in $(seq "$calls"); do args+=(--axon "$target"); done
  "$dendrite" query --uri //Alice "${args[@]}" --synapse Dummy --fields '{"dummy_input": 21}' \
    --concurrency "$conc" --timeout 10 >>"$out" 2>/dev/null </dev/null || true
}

# load_start K CALLS CONCURRENCY: K loops of batches into $tmp/load<k>.jsonl until load_stop.
# A pause of 0.1 s between batches: when every call fails at once (no axon up) the loops would
# otherwise spin starting processes and starve the machine's two CPUs.
load_start() {
  rm -f "$tmp/load.stop"
  for k in $(seq "$1"); do
    (while [[ ! -f "$tmp/load.stop" ]]; do
      batch "$tmp/load$k.jsonl" "$2" "$3"
      sleep 0.1
    done) &
    load_pids+=($!)
  done
}
# load_stop: each loop finishes its current batch (bounded by the calls' 10 s timeout).
load_stop() {
  touch "$tmp/load.stop"
  for p in "${load_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  load_pids=()
}

# tally FILE...: "calls ok axon_errors client_errors duplicate_nonces" over the JSON lines: ok =
# answered 200; axon_errors = answered by an axon with another status; client_errors = no answer
# (connection refused or reset, timeout: the axon status is null); duplicate_nonces = nonces
# that came back 200 more than once (each call signs a fresh nonce).
tally() {
  python3 - "$@" <<'EOF'
import json, sys
calls = ok = axon_err = client_err = 0
seen, dup = set(), 0
for name in sys.argv[1:]:
    try:
        lines = open(name).read().splitlines()
    except FileNotFoundError:
        continue
    for line in lines:
        j = json.loads(line)
        calls += 1
        d, a = j["dendrite"], j["axon"]
        if d["status_code"] == 200 and a["status_code"] == 200:
            ok += 1
            key = (d["uuid"], d["nonce"])
            dup += key in seen
            seen.add(key)
        elif a["status_code"] is not None:
            axon_err += 1
            print(f"answered by an axon: dendrite {d['status_code']} {d['status_message']!r}, "
                  f"axon {a['status_code']} {a['status_message']!r}", file=sys.stderr)
        else:
            client_err += 1
print(calls, ok, axon_err, client_err, dup)
EOF
}

# access200 LOG...: Dummy requests the axons answered 200 (their --logging.debug access lines).
access200() { cat "$@" | grep -c '| Dummy | .* | 200 | Success |' || true; }
