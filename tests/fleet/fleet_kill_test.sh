#!/usr/bin/env bash
# An axon killed with SIGKILL during load (scripts/fleet 3: three axons behind HAProxy, shared
# Redis). Four bt-dendrite loops send Dummy calls through HAProxy (4 in flight each) while axon 2
# is killed. Checked:
#  1. every call got a result line (none hung); the calls that failed are bounded: those in
#     flight on the killed axon, plus at most one per dendrite connection that was open to it
#     (a request written to a connection the kernel reset before the dendrite noticed). A new
#     connection HAProxy sends to the dead axon before its health checks catch up fails to
#     connect, and HAProxy retries it on another axon (retries 3, option redispatch 1) before a
#     byte is forwarded. Bound: 2 x the 16 in flight (the bound holds without redispatch too on
#     this load: it checks that losses stay near the calls in flight, not the retry itself);
#  2. HAProxy's health checks take axon 2 out (its log says DOWN) and afterwards every call
#     succeeds, served by axons 1 and 3, which were never restarted;
#  3. no request was answered twice: the 200 access lines of all three axons (the killed one's
#     up to its death) are at least the 200s the dendrites received and at most that plus the
#     failed calls (a request the killed axon answered whose answer never arrived), and no nonce
#     came back 200 twice.
#
# Usage: fleet_kill_test.sh BT_AXON BT_DENDRITE
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
echo "fleet: public 127.0.0.1:$public_port, axons ${axon_ports[*]} (pids ${axon_pids[*]})"

loops=4 calls=20 conc=4
load_start "$loops" "$calls" "$conc"
sleep 2
kill -KILL "${axon_pids[1]}"
echo "killed axon 2 (pid ${axon_pids[1]}) during load"
# Load continues across the health checks' reaction (fall 2 at inter 1 s: about 2 s).
down=0
for _ in $(seq 100); do
  grep -q 'axon2 is DOWN' "$work/haproxy.log" && { down=1; break; }
  sleep 0.1
done
sleep 1
load_stop
((down)) || fail "HAProxy did not take the killed axon 2 out within 10 s"
kill -0 "${axon_pids[1]}" 2>/dev/null && fail "axon 2 still runs after SIGKILL"

read -r n ok axon_err client_err dup < <(tally "$tmp"/load*.jsonl)
echo "during the kill: $n calls, $ok answered 200, $axon_err other answers, $client_err without an answer"
((n > 0 && n % calls == 0)) || fail "$n result lines, expected a multiple of $calls (a call left no result)"
((ok > 0)) || fail "no call succeeded during the load"
((axon_err == 0)) || fail "$axon_err calls answered with an error status by a live axon"
bound=$((2 * loops * conc))
((client_err <= bound)) || fail "$client_err calls failed, more than $bound (the calls in flight on the killed axon)"
((dup == 0)) || fail "$dup nonces answered 200 twice"
logged=$(access200 "$work"/axon1.log "$work"/axon2.log "$work"/axon3.log)
((logged >= ok)) || fail "the axons logged $logged answers 200, the dendrites received $ok"
((logged <= ok + client_err)) ||
  fail "the axons answered 200 to $logged requests: more than the $ok received plus $client_err lost"
echo "ok: $logged requests answered 200 by the axons for $ok received 200 and $client_err lost: none twice"

# After HAProxy took axon 2 out: every call succeeds, on the surviving axons only.
before1=$(access200 "$work/axon1.log")
before3=$(access200 "$work/axon3.log")
before2=$(access200 "$work/axon2.log")
batch "$tmp/after.jsonl" 30 6
read -r n ok axon_err client_err dup < <(tally "$tmp/after.jsonl")
((n == 30 && ok == 30)) || fail "after the kill: $ok of $n calls answered 200 (axon errors $axon_err, no answer $client_err)"
after1=$(access200 "$work/axon1.log")
after3=$(access200 "$work/axon3.log")
((after1 > before1 && after3 > before3)) || fail "axons 1 and 3 did not both serve after the kill"
(((after1 - before1) + (after3 - before3) == 30)) || fail "the surviving axons logged other than 30 answers"
[[ $(access200 "$work/axon2.log") == "$before2" ]] || fail "the killed axon's log grew"
for i in 0 2; do kill -0 "${axon_pids[i]}" || fail "axon $((i + 1)) is not running any more"; done
echo "ok: after HAProxy took axon 2 out, 30 of 30 calls succeeded on axons 1 and 3 (the same processes)"
echo "PASS"
