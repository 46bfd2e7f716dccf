#!/usr/bin/env python3
"""The cost of bittensor_cpp.http_auth.verify (btauth/1) on a 1 KiB body against its floor
measured in the same run: one sr25519 verify (Keypair.verify, the same C++ verifier) plus one
SHA-256 of 1 KiB (hashlib), each called from Python. The goal is verify <= 1.2x that floor.
A benchmark, not a test (docs/performance.md, "Python http_auth"):

    PYTHONPATH=build-py-rel/python /usr/bin/python3 python/perf/http_auth_bench.py

Each figure is the median over --rounds rounds of --count calls (per call, in microseconds);
every verify is a distinct signed request (its own nonce) judged in full: head checks, body hash,
signature, and the replay record in an InMemoryNonceStore.
"""
import argparse
import hashlib
import os
import statistics
import time

import bittensor_cpp as bt
from bittensor_cpp import http_auth


def per_call_us(measures, count, rounds):
    """Per measure: (median, min, max) over rounds of the mean time of one call, in microseconds.
    The rounds of the measures alternate, so that a noisy moment of the machine falls on all."""
    samples = {name: [] for name in measures}
    for _ in range(rounds):
        for name, fn in measures.items():
            start = time.perf_counter_ns()
            fn(count)
            samples[name].append((time.perf_counter_ns() - start) / count / 1000)
    return {name: (statistics.median(v), min(v), max(v)) for name, v in samples.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=2000, help="calls per round")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--body-bytes", type=int, default=1024)
    p.add_argument("--crypto-type", default="sr25519", choices=["sr25519", "ed25519"])
    args = p.parse_args()

    validator = bt.Keypair.from_uri("//Alice", crypto_type=args.crypto_type)
    miner = bt.Keypair.from_uri("//Bob")
    body = os.urandom(args.body_bytes)
    path = "/forward"
    total = args.count * args.rounds
    now = time.time_ns()
    # Distinct nonces, all fresh at `now` (passed to verify, so signing time does not age them).
    requests = [http_auth.sign(validator, method="POST", path=path, body=body,
                               receiver_ss58=miner.ss58_address, nonce_ns=now - total + i)
                for i in range(total)]
    store = http_auth.InMemoryNonceStore(retention=60.0)
    payload = http_auth.build_payload("POST", path, body, now, validator.ss58_address,
                                      miner.ss58_address, args.crypto_type)
    signature = validator.sign(payload)
    public = bt.Keypair.from_ss58(validator.ss58_address, crypto_type=args.crypto_type)
    assert public.verify(payload, signature)

    pending = iter(requests)

    def verify_n(n):
        for _ in range(n):
            http_auth.verify(next(pending), body, method="POST", path=path,
                             self_hotkey_ss58=miner.ss58_address, nonce_store=store, now_ns=now)

    def floor_n(n):
        for _ in range(n):
            hashlib.sha256(body).hexdigest()
            public.verify(payload, signature)

    def sha_n(n):
        for _ in range(n):
            hashlib.sha256(body).hexdigest()

    def sig_n(n):
        for _ in range(n):
            public.verify(payload, signature)

    floor_n(200)  # warm-up
    floor = f"floor: {args.crypto_type} verify + sha256"
    r = per_call_us({"http_auth.verify": verify_n, floor: floor_n,
                     "  Keypair.verify alone": sig_n, "  hashlib.sha256 alone": sha_n},
                    args.count, args.rounds)
    assert len(store) == total
    print(f"body {args.body_bytes} B, {args.crypto_type}, {args.rounds} rounds of {args.count} "
          "(median, min-max, us per call)")
    for name, (med, lo, hi) in r.items():
        print(f"{name:34s} {med:8.2f}   {lo:8.2f} - {hi:8.2f}")
    v, f = r["http_auth.verify"], r[floor]
    print(f"ratio verify / floor: {v[0] / f[0]:.3f} median, {v[1] / f[1]:.3f} min (goal <= 1.2)")


if __name__ == "__main__":
    main()
