#!/usr/bin/env bash
# scripts/fleet end to end: three bt-axon processes behind HAProxy (PROXY protocol v2) with Redis.
#  1. honest traffic from several bt-dendrite processes through HAProxy succeeds, and round robin
#     reaches every axon;
#  2. the caller's real address reaches the axon: a relay connects to HAProxy from 127.0.0.2, and
#     the axons' access lines show 127.0.0.2 (HAProxy itself connects from 127.0.0.1);
#  3. a signed request captured from that exchange and replayed through HAProxy (so it reaches the
#     next axons) is refused with 401 twice, once the axons share Redis (--nonce_store); a bt-axon
#     without --nonce_store cannot pass this, so the case is reported as not run.
# Every process is stopped by scripts/fleet's own trap; the temporary files are removed.
#
# Usage: fleet_test.sh BT_AXON BT_DENDRITE
set -euo pipefail
axon=$1
dendrite=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
for exe in "$axon" "$dendrite"; do
  [[ -x "$exe" ]] || { echo "FAIL: $exe is not an executable"; exit 1; }
done
for tool in redis-server haproxy python3; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (scripts/setup installs it)"; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bt-fleet-test.XXXXXX")
fleet=
stop_fleet() {
  [[ -n "$fleet" ]] || return 0
  kill -TERM "$fleet" 2>/dev/null || true
  for _ in $(seq 150); do kill -0 "$fleet" 2>/dev/null || break; sleep 0.1; done
  wait "$fleet" 2>/dev/null || true
  fleet=
}
on_exit() {
  local status=$?
  stop_fleet
  if ((status != 0)); then
    echo "---- scripts/fleet output"; cat "$tmp/fleet.out" 2>/dev/null || true
    for f in "$tmp"/work/*.log; do [[ -f "$f" ]] && { echo "---- $f"; tail -n 30 "$f"; }; done
  fi
  rm -rf "$tmp"
}
trap on_exit EXIT
fail() { echo "FAIL: $*"; exit 1; }

# scripts/fleet in the background; it writes its addresses to $tmp/info once HAProxy serves.
# BT_FLEET_KEEP=1 and TMPDIR=$tmp keep its directory (the axons' logs) inside ours.
mkdir "$tmp/work"
TMPDIR=$tmp/work BT_FLEET_KEEP=1 BT_AXON_EXE=$axon BT_FLEET_INFO=$tmp/info BT_FLEET_DEBUG=1 \
  "$src/scripts/fleet" 3 >"$tmp/fleet.out" 2>&1 &
fleet=$!
for _ in $(seq 600); do
  [[ -f "$tmp/info" ]] && break
  kill -0 "$fleet" 2>/dev/null || fail "scripts/fleet exited before serving"
  sleep 0.1
done
[[ -f "$tmp/info" ]] || fail "scripts/fleet did not serve within 60 s"
# shellcheck disable=SC1091
source "$tmp/info"
target=127.0.0.1:$public_port:$hotkey
echo "fleet: public 127.0.0.1:$public_port, axons ${axon_ports[*]}, redis $redis_port," \
     "shared store: $has_store, admin: $has_admin"

# HAProxy marks servers up after their first check (rise 1, inter 1 s): wait until each axon has
# been checked once, so that round robin has all three.
sleep 2

# ---- 1. honest traffic from three dendrites, three calls each ----
pids=()
for k in 1 2 3; do
  "$dendrite" query --uri //Alice --axon "$target" --axon "$target" --axon "$target" \
    --synapse Dummy --fields "{\"dummy_input\": $k}" --timeout 10 \
    >"$tmp/dendrite$k.out" 2>"$tmp/dendrite$k.err" &
  pids+=($!)
done
for k in 1 2 3; do
  wait "${pids[k-1]}" || { cat "$tmp/dendrite$k.err"; fail "bt-dendrite $k exited non-zero"; }
  grep -q 'status: 200 x3' "$tmp/dendrite$k.err" || { cat "$tmp/dendrite$k.err"; fail "dendrite $k: not 3 x 200"; }
  [[ $(grep -c "\"dummy_output\":$((2 * k))" "$tmp/dendrite$k.out") == 3 ]] || fail "dendrite $k: wrong outputs"
done
for i in 1 2 3; do
  grep -q '| Dummy | .* | 200 | Success |' "$work/axon$i.log" || fail "axon $i served no request (round robin)"
done
# HAProxy's health checks (GET /readyz on the admin ports, or a TCP connect) found every axon up.
! grep -q 'is DOWN' "$work/haproxy.log" || { grep 'is DOWN' "$work/haproxy.log"; fail "HAProxy took an axon out"; }
echo "ok: 9 honest calls from 3 dendrites through HAProxy, every axon served some"

# ---- 2. the caller's real address, and a captured request ----
# A one-connection relay: accepts the dendrite on 127.0.0.1:<relay>, connects to HAProxy from
# 127.0.0.2, copies both ways, and saves what the dendrite sent.
relay_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 - "$relay_port" "$public_port" "$tmp/captured" <<'EOF' &
import socket, sys, threading
relay_port, public_port, capture = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", relay_port))
srv.listen(1)
srv.settimeout(30)
open(capture.replace("captured", "relay.ready"), "w").close()
client, _ = srv.accept()
up = socket.socket()
up.bind(("127.0.0.2", 0))
up.connect(("127.0.0.1", public_port))
sent = bytearray()
def pump(a, b, keep):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
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
for _ in $(seq 100); do [[ -f "$tmp/relay.ready" ]] && break; sleep 0.1; done
[[ -f "$tmp/relay.ready" ]] || fail "the relay did not start"
"$dendrite" query --uri //Alice --axon "127.0.0.1:$relay_port:$hotkey" --synapse Dummy \
  --fields '{"dummy_input": 50}' --timeout 10 >"$tmp/relayed.out" 2>"$tmp/relayed.err" ||
  { cat "$tmp/relayed.err"; fail "bt-dendrite through the relay exited non-zero"; }
grep -q '"dummy_output":100' "$tmp/relayed.out" || fail "the relayed call did not succeed"
wait "$relay" || fail "the relay failed"
[[ -s "$tmp/captured" ]] || fail "nothing captured"
grep -h '| Dummy | .* | 127\.0\.0\.2:[0-9]* | 200 |' "$work"/axon*.log >/dev/null ||
  fail "no axon logged the caller's address 127.0.0.2 (it saw HAProxy's instead?)"
echo "ok: the caller's address 127.0.0.2 reached the axon through HAProxy's PROXY v2 header"

# ---- 3. the captured request replayed through HAProxy: round robin takes it to the next axons ----
statuses=$(python3 - "$public_port" "$tmp/captured" <<'EOF'
import socket, sys
port, request = int(sys.argv[1]), open(sys.argv[2], "rb").read()
out = []
for _ in range(2):
    s = socket.socket()
    s.settimeout(10)
    s.bind(("127.0.0.2", 0))
    s.connect(("127.0.0.1", port))
    s.sendall(request)
    head = b""
    while b"\r\n" not in head:
        data = s.recv(4096)
        if not data:
            break
        head += data
    s.close()
    parts = head.split(b" ", 2)
    out.append(parts[1].decode() if len(parts) > 1 else "closed")
print(" ".join(out))
EOF
)
if ((has_store)); then
  [[ "$statuses" == "401 401" ]] || fail "replays through HAProxy answered '$statuses', expected '401 401'"
  echo "ok: the captured request replayed through HAProxy to the other axons: 401 401"
else
  echo "NOT RUN: replay across axons (answered '$statuses'): this bt-axon has no --nonce_store," \
       "so each axon keeps its own replay memory"
fi
echo "PASS"
