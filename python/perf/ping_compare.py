#!/usr/bin/env python3
"""The seed's ping loop from Python: 10,000 sequential calls of the base Synapse (timeout 5)
against one bt-axon process, three ways, plus bt-ping against the same axon in the same run:

  bt-ping     the C++ loop (build/perf/bt-ping --target ...), its mean process_time
  module      dendrite.query() of bittensor_cpp in a Python for loop (blocking, GIL released)
  module-aio  `await dendrite.forward()` of bittensor_cpp in an asyncio loop
  aiohttp     a Python dendrite shaped like bittensor's (aiohttp.ClientSession, to_headers-style
              headers, json.dumps(model_dump()) body, sr25519 signature by the module's Keypair)

Per call, each Python loop records the wall time of the call as the Python code sees it
(time.perf_counter around it); bt-ping's figure is its dendrite's process_time. Prints one table
row per loop (mean, p50, p99 in µs, failures) and the ratios the docs quote.

    PYTHONPATH=build-rel/python python3 python/perf/ping_compare.py \\
        --bt-axon build-rel/axon/bt-axon --bt-ping build-rel/perf/bt-ping --count 10000
"""
import argparse
import asyncio
import hashlib
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import bittensor_cpp as bt

VERSION = 10002000  # version_as_int a Python 10.2 dendrite announces
EMPTY_HASH = hashlib.sha3_256(b"").hexdigest()
TERMINAL = ["status_code", "status_message", "process_time", "ip", "port", "version", "nonce",
            "uuid", "hotkey", "signature"]


class AiohttpDendrite:
    """bittensor's dendrite reduced to the base Synapse: preprocess_synapse_for_request, to_headers,
    one aiohttp.ClientSession, process_server_response's status reading."""

    def __init__(self, keypair):
        import aiohttp
        self.keypair = keypair
        self.uuid = str(uuid.uuid1())
        self.session = aiohttp.ClientSession()

    async def call(self, axon, timeout=5.0):
        import aiohttp
        start = time.time()
        nonce = time.time_ns()
        dendrite = dict.fromkeys(TERMINAL)
        dendrite.update(ip="127.0.0.1", version=VERSION, nonce=nonce, uuid=self.uuid,
                        hotkey=self.keypair.ss58_address)
        axon_block = dict.fromkeys(TERMINAL)
        axon_block.update(ip=axon.ip, port=axon.port, hotkey=axon.hotkey)
        message = f"{nonce}.{dendrite['hotkey']}.{axon.hotkey}.{self.uuid}.{EMPTY_HASH}"
        dendrite["signature"] = "0x" + self.keypair.sign(message).hex()
        headers = {"name": "Synapse", "timeout": repr(float(timeout))}
        for k, v in axon_block.items():
            if v is not None:
                headers[f"bt_header_axon_{k}"] = str(v)
        for k, v in dendrite.items():
            if v is not None:
                headers[f"bt_header_dendrite_{k}"] = str(v)
        headers.update(header_size="0", total_size="0", computed_body_hash=EMPTY_HASH)
        body = {"name": "Synapse", "timeout": float(timeout), "total_size": 0, "header_size": 0,
                "dendrite": dendrite, "axon": axon_block, "computed_body_hash": ""}
        try:
            async with self.session.post(f"http://{axon.ip}:{axon.port}/Synapse", headers=headers,
                                         json=body,
                                         timeout=aiohttp.ClientTimeout(total=timeout)) as r:
                data = await r.json()
                status = int(r.headers.get("bt_header_axon_status_code", r.status))
                _ = data.get("axon")
        except asyncio.TimeoutError:
            status = 408
        return status, time.time() - start

    async def close(self):
        await self.session.close()


def summary(name, times_s, failures):
    us = sorted(t * 1e6 for t in times_s)
    n = len(us)
    pct = lambda p: us[min(n - 1, int(round(p / 100 * (n - 1))))]
    row = {"name": name, "count": n, "mean_us": statistics.fmean(us), "p50_us": pct(50),
           "p99_us": pct(99), "failures": failures}
    print(f"| {name} | {row['mean_us']:.1f} µs | {row['p50_us']:.1f} µs | {row['p99_us']:.1f} µs "
          f"| {failures} |", flush=True)
    return row


def start_axon(exe):
    proc = subprocess.Popen([exe, "--uri", "//Bob", "--axon.ip", "127.0.0.1", "--axon.port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    if not ready:
        proc.kill()
        sys.exit("bt-axon printed no AxonInfo line")
    info = json.loads(proc.stdout.readline())
    return proc, bt.AxonInfo(ip=info["ip"], port=info["port"], hotkey=info["hotkey"])


def main():
    p = argparse.ArgumentParser(description="the ping loop from Python vs bt-ping")
    p.add_argument("--bt-axon", required=True)
    p.add_argument("--bt-ping")
    p.add_argument("--count", type=int, default=10000)
    p.add_argument("--json")
    args = p.parse_args()

    alice = bt.Keypair.from_uri("//Alice")
    Ping = bt.SynapseType("Synapse", {})
    proc, axon = start_axon(args.bt_axon)
    rows = []
    print("| loop | mean | p50 | p99 | failures |\n|---|---|---|---|---|")
    try:
        if args.bt_ping:
            with tempfile.NamedTemporaryFile(suffix=".json") as f:
                subprocess.run([args.bt_ping, "--target", f"{axon.ip}:{axon.port}:{axon.hotkey}",
                                "--count", str(args.count), "--json", f.name],
                               check=True, stdout=subprocess.DEVNULL)
                j = json.load(open(f.name))
            failures = j["failures"]  # by status: {"408": 2, ...}
            failures = sum(failures.values()) if isinstance(failures, dict) else failures
            rows.append({"name": "bt-ping", "count": j["count"], "mean_us": j["mean_us"],
                         "p50_us": j["p50_us"], "p99_us": j["p99_us"], "failures": failures})
            print(f"| bt-ping | {j['mean_us']:.1f} µs | {j['p50_us']:.1f} µs | "
                  f"{j['p99_us']:.1f} µs | {failures} |", flush=True)

        with bt.Dendrite(alice) as d:
            for _ in range(200):  # warm-up: connection, caches
                d.query(axon, Ping(), timeout=5)
            times, fails = [], 0
            for _ in range(args.count):
                t0 = time.perf_counter()
                r = d.query(axon, Ping(), timeout=5)
                times.append(time.perf_counter() - t0)
                fails += r.dendrite.status_code != 200
            rows.append(summary("module query()", times, fails))

            async def aio_loop():
                times, fails = [], 0
                for _ in range(args.count):
                    t0 = time.perf_counter()
                    r = await d.forward(axon, Ping(), timeout=5)
                    times.append(time.perf_counter() - t0)
                    fails += r.dendrite.status_code != 200
                return times, fails

            rows.append(summary("module await forward()", *asyncio.run(aio_loop())))

        async def aiohttp_loop():
            ad = AiohttpDendrite(alice)
            try:
                for _ in range(200):
                    await ad.call(axon)
                times, fails = [], 0
                for _ in range(args.count):
                    t0 = time.perf_counter()
                    status, _ = await ad.call(axon)
                    times.append(time.perf_counter() - t0)
                    fails += status != 200
                return times, fails
            finally:
                await ad.close()

        rows.append(summary("aiohttp dendrite", *asyncio.run(aiohttp_loop())))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)

    by = {r["name"]: r for r in rows}
    if "bt-ping" in by:
        print(f"module query() / bt-ping: {by['module query()']['mean_us'] / by['bt-ping']['mean_us']:.2f}")
        print(f"module await forward() / bt-ping: "
              f"{by['module await forward()']['mean_us'] / by['bt-ping']['mean_us']:.2f}")
    print(f"aiohttp / module query(): "
          f"{by['aiohttp dendrite']['mean_us'] / by['module query()']['mean_us']:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
