#!/usr/bin/env python3
"""CPU per request by kind of work, a ping's against its bare round trip's, from one profile.

    perf record -F 2999 -g -o ping.data bt-ping --no-crypto --count 40000 --warmup 500 --baseline
    perf script -i ping.data -F time,ip,sym,dso > ping.txt
    perf/ping_profile.py ping.txt --pings 40500 --round-trips 20200

bt-ping --baseline runs its pings (warm-up included) first and the floor after them, so the samples
split in time at the first one inside the bare exchange (run_bare_echo, serve_one); the floor's
sr25519 timing (libdecaf, libsodium, measure_crypto) is left out. Each sample is classed by its
innermost frame (kernel samples by the system call they are in), and its share is turned into
microseconds per request: samples / frequency / requests. Build with frame pointers
(-fno-omit-frame-pointer) so that user stacks resolve; the system libraries have none, so a few
samples class as "other user". A sampling profile on a shared machine: compare kinds, not digits.
"""
import argparse
import collections
import re
import sys

KERNEL_CALLS = [("sendmsg", "kernel: send (and the loopback delivery it runs)"),
                ("sendto", "kernel: send (and the loopback delivery it runs)"),
                ("sys_write", "kernel: send (and the loopback delivery it runs)"),
                ("recvmsg", "kernel: recv"), ("recvfrom", "kernel: recv"), ("sys_read", "kernel: recv"),
                ("epoll_wait", "kernel: epoll_wait"), ("futex", "kernel: futex")]
USER_KINDS = [("JSON body read", r"read_json_body|json_scanner|body_reader"),
              ("JSON body write", r"write_json_body|bt::\(anonymous namespace\)::writer::|write_base"),
              ("bt headers (to_headers, from_headers, header_reader)",
               r"to_headers|from_headers|header_reader|head_writer|emit_terminal"),
              ("session MAC, SHA-256 (OpenSSL)", r"verify_session|keyed_hmac|sha256|libcrypto"),
              ("Beast parser", r"basic_parser|field_table|parse_field"),
              ("Beast serializer", r"serializer|write_some_op|http::detail::write")]


def kind(frames):
    top = frames[0]
    if "[kernel" in top:
        for f in frames:
            for call, name in KERNEL_CALLS:
                if call in f:
                    return name
        return "kernel: other"
    if "[vdso]" in top:
        return "clock_gettime (vdso)"
    for name, pattern in USER_KINDS:
        if re.search(pattern, top):
            return name
    if re.search(r"malloc|free|operator new|operator delete", top):
        return "malloc, free"
    if re.search(r"memmove|memcpy|memcmp|memset|strlen", top):
        return "memcpy, memcmp"
    if re.search(r"asio|awaitable|co_spawn", top):
        return "Asio scheduling, coroutines"
    return "other user"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("script", help="perf script -F time,ip,sym,dso output")
    ap.add_argument("--pings", type=float, required=True, help="pings made (count + warmup)")
    ap.add_argument("--round-trips", type=float, required=True,
                    help="bare round trips (min(max(count, 200), 20000) + 200 warm-up)")
    ap.add_argument("--frequency", type=float, default=2999, help="perf record -F (default 2999)")
    a = ap.parse_args()
    per_sample_us = 1e6 / a.frequency
    counts = {"ping": collections.Counter(), "bare": collections.Counter()}
    in_floor = False
    for block in open(a.script).read().split("\n\n"):
        lines = [line.strip() for line in block.strip().split("\n") if line.strip()]
        if len(lines) < 2:
            continue
        stack = "\n".join(lines[1:])
        if not in_floor and re.search(r"run_bare_echo|serve_one", stack):
            in_floor = True
        if in_floor and re.search(r"libdecaf|libsodium|measure_crypto", stack):
            continue
        counts["bare" if in_floor else "ping"][kind(lines[1:])] += 1
    if not in_floor:
        sys.exit("ping_profile.py: no sample of the bare exchange: was bt-ping run with --baseline?")
    ping = {k: v * per_sample_us / a.pings for k, v in counts["ping"].items()}
    bare = {k: v * per_sample_us / a.round_trips for k, v in counts["bare"].items()}
    rows = sorted(set(ping) | set(bare), key=lambda k: bare.get(k, 0) - ping.get(k, 0))
    print(f"{'us per request':52s} {'ping':>7s} {'bare':>7s} {'extra':>7s}")
    for k in rows:
        p, b = ping.get(k, 0.0), bare.get(k, 0.0)
        print(f"{k:52s} {p:7.2f} {b:7.2f} {p - b:7.2f}")
    tp, tb = sum(ping.values()), sum(bare.values())
    print(f"{'total':52s} {tp:7.2f} {tb:7.2f} {tp - tb:7.2f}")


if __name__ == "__main__":
    main()
