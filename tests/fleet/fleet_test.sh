#!/usr/bin/env bash
# scripts/fleet end to end: three bt-axon processes behind HAProxy (PROXY protocol v2) with Redis.
#  1. honest traffic from several bt-dendrite processes through HAProxy succeeds, and round robin
#     reaches every axon;
#  2. the caller's real address reaches the axon: a relay connects to HAProxy from 127.0.0.2, and
#     the axons' access lines show 127.0.0.2 (HAProxy itself connects from 127.0.0.1);
#  3. a signed request captured from that exchange and replayed through HAProxy (so it reaches the
#     next axons) is refused with 401 twice: the axons share Redis (--nonce_store);
#  4. the same for a btauth/1 request (bt-dendrite btauth to POST /echo): accepted once, its
#     replays through HAProxy refused 401 ReplayedRequest by the other axons.
# The fleet is started, and every process stopped, by tests/fleet/fleet_lib.sh.
#
# Usage: fleet_test.sh BT_AXON BT_DENDRITE
set -euo pipefail
axon=$1
dendrite=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=fleet_lib.sh
source "$src/tests/fleet/fleet_lib.sh"
# Honest calls must all succeed here, so the replay store's per-operation timeout is widened from
# its 50 ms default: on two loaded CPUs under the sanitizers an axon thread can wait longer than
# that for a CPU, and the axon then rightly fails closed with 503 (the Redis test's subject).
fleet_axon_args="--nonce_store.timeout_ms 2000"

fleet_start 3
echo "fleet: public 127.0.0.1:$public_port, axons ${axon_ports[*]}, redis $redis_port," \
     "admin ${admin_ports[*]}"

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
# HAProxy's health checks (GET /readyz on the admin ports) found every axon up.
! grep -q 'is DOWN' "$work/haproxy.log" || { grep 'is DOWN' "$work/haproxy.log"; fail "HAProxy took an axon out"; }
echo "ok: 9 honest calls from 3 dendrites through HAProxy, every axon served some"

# ---- 2. the caller's real address, and a captured request ----
# A one-connection relay that connects to HAProxy from 127.0.0.2 and saves what the dendrite sent.
relay_start "$tmp/captured" 127.0.0.2
"$dendrite" query --uri //Alice --axon "127.0.0.1:$relay_port:$hotkey" --synapse Dummy \
  --fields '{"dummy_input": 50}' --timeout 10 >"$tmp/relayed.out" 2>"$tmp/relayed.err" ||
  { cat "$tmp/relayed.err"; fail "bt-dendrite through the relay exited non-zero"; }
grep -q '"dummy_output":100' "$tmp/relayed.out" || fail "the relayed call did not succeed"
relay_wait || fail "the relay failed"
[[ -s "$tmp/captured" ]] || fail "nothing captured"
grep -h '| Dummy | .* | 127\.0\.0\.2:[0-9]* | 200 |' "$work"/axon*.log >/dev/null ||
  fail "no axon logged the caller's address 127.0.0.2 (it saw HAProxy's instead?)"
echo "ok: the caller's address 127.0.0.2 reached the axon through HAProxy's PROXY v2 header"

# replay_twice FILE: sends the request bytes in FILE twice through HAProxy, each on a connection
# of its own from 127.0.0.2 (round robin takes them to the next axons); prints the two statuses.
replay_twice() {
  python3 - "$public_port" "$1" <<'EOF'
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
}

# ---- 3. the captured request replayed through HAProxy: round robin takes it to the next axons ----
statuses=$(replay_twice "$tmp/captured")
[[ "$statuses" == "401 401" ]] || fail "replays through HAProxy answered '$statuses', expected '401 401'"
echo "ok: the captured request replayed through HAProxy to the other axons: 401 401"

# ---- 4. a btauth/1 request (PROTOCOL 14) to POST /echo, captured, then replayed ----
relay_start "$tmp/captured_btauth" 127.0.0.2
"$dendrite" btauth --uri //Alice --axon "127.0.0.1:$relay_port:$hotkey" --path /echo \
  --data '{"fleet": 4}' --timeout 10 >"$tmp/btauth.out" 2>"$tmp/btauth.err" ||
  { cat "$tmp/btauth.err"; fail "bt-dendrite btauth through the relay exited non-zero"; }
grep -q '"status":200' "$tmp/btauth.out" || { cat "$tmp/btauth.out"; fail "the btauth/1 call did not succeed"; }
relay_wait || fail "the relay failed"
[[ -s "$tmp/captured_btauth" ]] || fail "no btauth/1 request captured"
statuses=$(replay_twice "$tmp/captured_btauth")
[[ "$statuses" == "401 401" ]] ||
  fail "btauth/1 replays through HAProxy answered '$statuses', expected '401 401'"
[[ $(cat "$work"/axon*.log | grep -c '| /echo | .* | 401 | ReplayedRequest: ') == 2 ]] ||
  { grep -h '/echo' "$work"/axon*.log; fail "the axons did not log two ReplayedRequest refusals"; }
echo "ok: a btauth/1 request replayed through HAProxy to the other axons: 401 401 ReplayedRequest"
echo "PASS"
