#!/usr/bin/env bash
# Redis stopped during load (scripts/fleet 3: three axons behind HAProxy sharing Redis), then
# started again on the same port. Four bt-dendrite loops send Dummy calls through HAProxy
# throughout. Checked:
#  1. within one second of Redis's death (SIGKILL), by the axons' log time stamps, each axon's
#     store logs Redis unavailable and each axon answers the load 503; a signed request captured
#     before the stop and sent to every axon directly (behind a PROXY v1 header, as HAProxy
#     would) is answered 503 with Retry-After and the replay store's message (not 401: it was
#     never recorded);
#  2. /readyz on every admin port answers 503 naming the replay store;
#  3. no request is accepted unrecorded: no axon logs a 200 from 0.2 s after the stop (a request
#     Redis recorded just before may still be answered in those 0.2 s) until the restart;
#  4. Redis started again on the same port: every /readyz returns to 200 and calls through
#     HAProxy succeed again on every axon, without restarting any (the same pids).
# The restarted Redis is empty (scripts/fleet runs it without persistence): docs/deployment.md
# says what that means for replays.
#
# Usage: fleet_redis_test.sh BT_AXON BT_DENDRITE
set -euo pipefail
axon=$1
dendrite=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=fleet_lib.sh
source "$src/tests/fleet/fleet_lib.sh"

fleet_start 3
echo "fleet: public 127.0.0.1:$public_port, axons ${axon_ports[*]}, redis $redis_port (pid $redis_pid)"

# readyz PORT...: "STATUS BODY" of GET /readyz on each admin port, one line each.
readyz() {
  python3 - "$@" <<'EOF'
import sys, urllib.error, urllib.request
for port in sys.argv[1:]:
    try:
        r = urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5)
        code, body = r.status, r.read()
    except urllib.error.HTTPError as e:
        code, body = e.code, e.read()
    except OSError as e:
        code, body = 0, str(e).encode()
    print(code, body.decode(errors="replace").replace("\n", " ").strip())
EOF
}
for p in "${admin_ports[@]}"; do
  [[ $(readyz "$p") == 200* ]] || fail "admin port $p not ready before the test: $(readyz "$p")"
done

# A signed request captured through a one-connection relay (replayed raw after the stop to see
# the 503's headers: it is fresh, so the axon consults the store before anything else refuses it).
relay_start "$tmp/captured"
"$dendrite" query --uri //Alice --axon "127.0.0.1:$relay_port:$hotkey" --synapse Dummy \
  --fields '{"dummy_input": 5}' --timeout 10 >"$tmp/relayed.out" 2>/dev/null ||
  fail "the call through the relay failed"
relay_wait || fail "the relay failed"
[[ -s "$tmp/captured" ]] || fail "nothing captured"

load_start 4 20 4
sleep 1.5
t_stop=$(date +%s.%N)
kill -KILL "$redis_pid"
echo "killed redis-server (pid $redis_pid) during load"

# Straight after the stop, on every axon (not through HAProxy, whose health checks take the
# axons out about 1 s later): the captured request sent to the axon's port behind a PROXY v1
# header, as HAProxy would, and GET /readyz on its admin port.
python3 - "$tmp/captured" "${axon_ports[@]}" >"$tmp/direct" <<'EOF'
import socket, sys
request = open(sys.argv[1], "rb").read()
for port in sys.argv[2:]:
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
    s.sendall(b"PROXY TCP4 127.0.0.3 127.0.0.1 40000 " + port.encode() + b"\r\n" + request)
    head = b""
    while b"\r\n\r\n" not in head:
        data = s.recv(4096)
        if not data:
            break
        head += data
    s.close()
    lines = head.split(b"\r\n\r\n")[0].decode(errors="replace").split("\r\n")
    fields = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    print(port, lines[0], "| retry-after:", fields.get("retry-after", "none"), "|",
          fields.get("bt_header_axon_status_message", ""))
EOF
readyz "${admin_ports[@]}" >"$tmp/readyz.stopped"
t_checked=$(date +%s.%N)
cat "$tmp/direct"
(($(grep -c ' HTTP/1.1 503 .* retry-after: [0-9]* | Service unavailable: the replay store' "$tmp/direct") == 3)) ||
  fail "not every axon answered the signed request 503 with Retry-After from the replay store"
(($(grep -c '^503 .*replay store' "$tmp/readyz.stopped") == 3)) ||
  fail "/readyz after the stop: $(cat "$tmp/readyz.stopped")"
echo "ok: $(python3 -c "print(round($t_checked - $t_stop, 2))") s after the stop every axon answers 503 with Retry-After;" \
     "/readyz: $(head -1 "$tmp/readyz.stopped")"

# window FROM TO PATTERN LOG: lines of LOG matching PATTERN with a time stamp in [FROM, TO).
window() {
  python3 - "$@" <<'EOF'
import datetime, re, sys
lo, hi, pattern, name = float(sys.argv[1]), float(sys.argv[2]), re.compile(sys.argv[3]), sys.argv[4]
n = 0
for line in open(name, errors="replace"):
    if pattern.search(line):
        t = datetime.datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S.%f").timestamp()
        n += lo <= t < hi
print(n)
EOF
}
# Within one second by the axons' own clocks (the test's processes may be scheduled late on a
# loaded machine; the axons' log lines are stamped when they happen): each store noticed, and
# each axon answered the load 503.
t_1s=$(python3 -c "print($t_stop + 1.0)")
for i in 1 2 3; do
  (($(window "$t_stop" "$t_1s" 'nonce store: redis .* unavailable' "$work/axon$i.log") > 0)) ||
    fail "axon $i: no 'nonce store: redis ... unavailable' line within 1 s of the stop"
  (($(window "$t_stop" "$t_1s" '\| Dummy \| .* \| 503 \| Service unavailable: the replay store' "$work/axon$i.log") > 0)) ||
    fail "axon $i logged no 503 within 1 s of the stop"
done
echo "ok: within 1 s of the stop every axon's store reported Redis unavailable and every axon answered 503"

# Load runs on against the outage for a while (HAProxy takes the axons out; calls then fail).
sleep 2
t_restart=$(date +%s.%N)
redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --daemonize no \
  --dir "$tmp" --logfile "$tmp/redis2.log" &
extra_pids+=($!)
t_grace=$(python3 -c "print($t_stop + 0.2)")
for i in 1 2 3; do
  c=$(window "$t_grace" "$t_restart" '\| Dummy \| .* \| 200 \|' "$work/axon$i.log")
  ((c == 0)) || fail "axon $i answered $c requests 200 while Redis was down (accepted unrecorded)"
done
echo "ok: no axon answered 200 between the stop (+0.2 s) and the restart"

# Service resumes without restarting the axons.
deadline=$((SECONDS + 15))
until (($(readyz "${admin_ports[@]}" | grep -c '^200 ') == 3)); do
  ((SECONDS < deadline)) || fail "not every axon ready 15 s after Redis came back: $(readyz "${admin_ports[@]}")"
  sleep 0.1
done
echo "ok: /readyz 200 on every admin port after the restart"
load_stop
# HAProxy puts each axon back after one good check (rise 1, inter 1 s). Wait until its last
# word on each axon is UP (it logs every transition twice, so counting lines would not do).
all_up() {
  local i last
  for i in 1 2 3; do
    last=$(grep -o "bt_axons/axon$i is [A-Z]*" "$work/haproxy.log" | tail -n 1 || true)
    [[ -z $last || $last == *" is UP" ]] || return 1
  done
}
for _ in $(seq 100); do
  all_up && break
  sleep 0.1
done
all_up || fail "HAProxy has not put every axon back 10 s after they were ready: $(grep 'is UP\|is DOWN' "$work/haproxy.log" | tail -n 6)"
before=()
for i in 1 2 3; do before+=("$(access200 "$work/axon$i.log")"); done
batch "$tmp/after.jsonl" 30 6
read -r n ok axon_err client_err dup < <(tally "$tmp/after.jsonl")
((dup == 0)) || fail "after the restart: $dup nonces answered 200 twice"
((n == 30 && ok == 30)) ||
  fail "after the restart: $ok of $n calls answered 200 (axon errors $axon_err, no answer $client_err)"
for i in 1 2 3; do
  (($(access200 "$work/axon$i.log") > before[i - 1])) || fail "axon $i served nothing after the restart"
  kill -0 "${axon_pids[i - 1]}" || fail "axon $i is not running"
done
echo "ok: after the restart 30 of 30 calls succeeded, served by all three axons (same processes)"
echo "PASS"
