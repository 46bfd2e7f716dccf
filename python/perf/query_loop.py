#!/usr/bin/env python3
"""The module's blocking ping loop alone, for A/B runs of two builds of the module (run it once
per build, alternating): a bt-axon it starts (extra bt-axon arguments after `--`), 200 warm-up
calls, then --count sequential `dendrite.query(axon, Synapse(), timeout=5)` calls. Prints one
JSON line: the wall time per call as Python sees it and the C++ dendrite's own process_time
(mean, p50, p99 in µs), the module's file and the load average. Exits 1 if a call fails.

    PYTHONPATH=build-rel/python /usr/bin/python3 python/perf/query_loop.py \\
        --bt-axon build-rel/tools/bt-axon/bt-axon --count 5000 -- --axon.sign_responses off
"""
import argparse
import json
import os
import statistics
import sys
import time

import bittensor_cpp as bt
from axon_process import AxonStartError, start_axon, stop_axon

WARMUP = 200


def stats(values_s):
    us = sorted(v * 1e6 for v in values_s)
    pct = lambda p: us[min(len(us) - 1, int(round(p / 100 * (len(us) - 1))))]
    return {"mean_us": round(statistics.fmean(us), 1), "p50_us": round(pct(50), 1),
            "p99_us": round(pct(99), 1)}


def main():
    p = argparse.ArgumentParser(description="the module's blocking ping loop alone")
    p.add_argument("--bt-axon", required=True)
    p.add_argument("--count", type=int, default=5000)
    p.add_argument("axon_args", nargs="*", help="extra bt-axon arguments (after --)")
    args = p.parse_args()
    if args.count < 1:
        p.error("--count must be at least 1")
    try:
        proc, axon = start_axon(args.bt_axon, args.axon_args)
    except AxonStartError as e:
        sys.exit(f"query_loop: {e}")
    try:
        Ping = bt.SynapseType("Synapse", {})
        load = os.getloadavg()[0]
        wall, own = [], []
        with bt.Dendrite(bt.Keypair.from_uri("//Alice")) as d:
            for i in range(WARMUP + args.count):
                t0 = time.perf_counter()
                r = d.query(axon, Ping(), timeout=5)
                t = time.perf_counter() - t0
                if r.dendrite.status_code != 200:
                    sys.exit(f"query_loop: a call answered {r.dendrite.status_code} "
                             f"{r.dendrite.status_message}")
                if i >= WARMUP:
                    wall.append(t)
                    own.append(r.dendrite.process_time)
        print(json.dumps({"count": args.count, "wall": stats(wall), "process_time": stats(own),
                          "module": bt.__file__, "axon_args": args.axon_args,
                          "loadavg": [round(load, 2), round(os.getloadavg()[0], 2)]}))
    finally:
        stop_axon(proc)


if __name__ == "__main__":
    main()
