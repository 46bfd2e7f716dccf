#!/usr/bin/env python3
"""The seed's ping loop from Python: sequential calls of the base Synapse (timeout 5) against a
bt-axon process, in one run, against two axon configurations one after the other:

  default          bt-axon as it ships: every answer signed (bt-response-signature, PROTOCOL
                   5.15), which bt-ping and the module verify (verify_responses "if_present")
  python-compatible
                   bt-axon --axon.sign_responses off: unsigned answers, as a Python (bittensor)
                   axon sends; then no client checks a response signature and every client does
                   the same protocol work (the aiohttp clients never verify anything)

and, against each, these loops:

  bt-ping          the C++ loop (bt-ping --target ...), its mean process_time
  module query()   dendrite.query() of bittensor_cpp in a Python for loop (blocking, GIL released;
                   the call runs on the calling thread's own lane)
  module query(), process_time
                   the same calls' dendrite.process_time (the C++ dendrite's own measure, as
                   bt-ping's): the difference to the row above is the binding's own work
  module query([axon])
                   query() of a one-axon list: the shared dendrite's fan-out, run by its I/O
                   thread while the caller waits (the hand-off the lanes avoid, plus the fan-out)
  module forward() `await dendrite.forward()` of bittensor_cpp in an asyncio loop
  module query(), session
                   query() of a Dendrite(session=True): after the first call, each request is
                   authenticated by the connection's session MAC instead of a signature
  shaped aiohttp   shaped_dendrite.ShapedDendrite: bittensor's dendrite call path (pydantic
                   models, to_headers, aiohttp, response validation and header merge, history)
  shaped, schema rebuilt
                   the same, with the JSON schema built afresh each time to_headers asks for it
                   (as bittensor 10 on pydantic 2 does; pydantic 1 caches it per class)
  lean aiohttp     a minimal aiohttp client without models: the same headers and body as dicts

Per call, each Python loop records the wall time of the call as the Python code sees it
(time.perf_counter around it); bt-ping's figure is its dendrite's process_time. Every row runs:
a loop with a failed call, or a figure that is missing, ends the script with status 1 and the
reason (no row is printed with empty figures). Prints one table row per loop (mean, p50, p99 in
µs) per configuration, the ratios the docs quote, and the versions and load average.

    PYTHONPATH=build-rel/python /usr/bin/python3 python/perf/ping_compare.py \\
        --bt-axon build-rel/tools/bt-axon/bt-axon --bt-ping build-rel/perf/bt-ping --count 10000
"""
import argparse
import asyncio
import hashlib
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import aiohttp
import pydantic

import bittensor_cpp as bt
from axon_process import AxonStartError, start_axon, stop_axon
from shaped_dendrite import ShapedDendrite, Synapse

WARMUP = 200
TIMEOUT = 5.0
EMPTY_HASH = hashlib.sha3_256(b"").hexdigest()
TERMINAL = ["status_code", "status_message", "process_time", "ip", "port", "version", "nonce",
            "uuid", "hotkey", "signature"]


class Failed(Exception):
    """A row that could not be measured; the message says why."""


class LeanDendrite:
    """The least a Python client must do for the base Synapse: the signed message, the headers
    and body as plain dicts, one aiohttp.ClientSession, the status from the response header.
    No models, no validation, no copies: a lower bound of a Python dendrite's cost."""

    def __init__(self, keypair):
        self.keypair = keypair
        self.uuid = str(uuid.uuid1())
        self.session = aiohttp.ClientSession()
        self.signed_answers = 0  # answers that carried a bt-response-signature

    async def call(self, axon, timeout=TIMEOUT):
        nonce = time.time_ns()
        dendrite = dict.fromkeys(TERMINAL)
        dendrite.update(ip="127.0.0.1", version=10002000, nonce=nonce, uuid=self.uuid,
                        hotkey=self.keypair.ss58_address)
        axon_block = dict.fromkeys(TERMINAL)
        axon_block.update(ip=axon.ip, port=axon.port, hotkey=axon.hotkey)
        message = f"{nonce}.{dendrite['hotkey']}.{axon.hotkey}.{self.uuid}.{EMPTY_HASH}"
        dendrite["signature"] = "0x" + self.keypair.sign(message).hex()
        headers = {"name": "Synapse", "timeout": repr(float(timeout))}
        for prefix, block in (("axon", axon_block), ("dendrite", dendrite)):
            headers.update({f"bt_header_{prefix}_{k}": str(v) for k, v in block.items()
                            if v is not None})
        headers.update(header_size="0", total_size="0", computed_body_hash=EMPTY_HASH)
        body = {"name": "Synapse", "timeout": float(timeout), "total_size": 0, "header_size": 0,
                "dendrite": dendrite, "axon": axon_block, "computed_body_hash": ""}
        try:
            async with self.session.post(f"http://{axon.ip}:{axon.port}/Synapse", headers=headers,
                                         json=body,
                                         timeout=aiohttp.ClientTimeout(total=timeout)) as r:
                await r.json()
                self.signed_answers += "bt-response-signature" in r.headers
                return int(r.headers.get("bt_header_axon_status_code", r.status))
        except asyncio.TimeoutError:
            return 408

    async def close(self):
        await self.session.close()


def summary(name, times_s, statuses):
    """The row of one loop; Failed when a call did not answer 200 or nothing was timed."""
    bad = {s: statuses.count(s) for s in set(statuses) if s != 200}
    if bad:
        raise Failed(f"{name}: calls failed, by status: {bad}")
    if not times_s:
        raise Failed(f"{name}: no call was timed")
    us = sorted(t * 1e6 for t in times_s)
    n = len(us)
    pct = lambda p: us[min(n - 1, int(round(p / 100 * (n - 1))))]
    return {"name": name, "count": n, "mean_us": statistics.fmean(us), "p50_us": pct(50),
            "p99_us": pct(99)}


def timed_sync(call, count):
    for _ in range(WARMUP):
        call()
    times, statuses = [], []
    for _ in range(count):
        t0 = time.perf_counter()
        status = call()
        times.append(time.perf_counter() - t0)
        statuses.append(status)
    return times, statuses


async def timed_async(call, count):
    for _ in range(WARMUP):
        await call()
    times, statuses = [], []
    for _ in range(count):
        t0 = time.perf_counter()
        status = await call()
        times.append(time.perf_counter() - t0)
        statuses.append(status)
    return times, statuses


def bt_ping_row(exe, axon, count):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ping.json")
        p = subprocess.run([exe, "--target", f"{axon.ip}:{axon.port}:{axon.hotkey}", "--count",
                            str(count), "--json", path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            raise Failed(f"bt-ping exited with {p.returncode}: {p.stdout.strip()[-500:]}")
        with open(path) as f:
            j = json.load(f)
    row = {"name": "bt-ping", "count": j.get("count")}
    for k in ("mean_us", "p50_us", "p99_us"):
        row[k] = j.get(k)
    if j.get("failures"):
        raise Failed(f"bt-ping: calls failed, by status: {j['failures']}")
    return row


async def shaped_loop(keypair, axon, count, rebuild_schema=False):
    d = ShapedDendrite(keypair, rebuild_schema=rebuild_schema)
    try:
        async def call():
            r = await d.forward(axon, Synapse(), timeout=TIMEOUT)
            return r.dendrite.status_code

        return await timed_async(call, count)
    finally:
        await d.close()


async def lean_loop(keypair, axon, count, signed):
    """The lean client's loop; Failed unless every answer was signed (`signed`) or none was:
    the check that the axon runs in the configuration the row is reported under."""
    d = LeanDendrite(keypair)
    try:
        result = await timed_async(lambda: d.call(axon), count)
    finally:
        await d.close()
    expected = WARMUP + count if signed else 0
    if d.signed_answers != expected:
        raise Failed(f"lean aiohttp client: {d.signed_answers} of {WARMUP + count} answers were "
                     f"signed, expected {expected}")
    return result


# The axon configurations, in the order they run: (name, extra bt-axon arguments).
CONFIGS = [("default", []), ("python-compatible", ["--axon.sign_responses", "off"])]


def check(row):
    for k in ("count", "mean_us", "p50_us", "p99_us"):
        v = row.get(k)
        if not isinstance(v, (int, float)) or not math.isfinite(v):
            raise Failed(f"{row['name']}: {k} is {v!r}")
    return row


def measure(args, config, extra):
    alice = bt.Keypair.from_uri("//Alice")
    Ping = bt.SynapseType("Synapse", {})
    try:
        proc, axon = start_axon(args.bt_axon, extra)
    except AxonStartError as e:
        raise Failed(str(e)) from e
    rows = []

    def add(row):
        rows.append(check(row))
        print(f"| {row['name']} | {row['mean_us']:.1f} µs | {row['p50_us']:.1f} µs | "
              f"{row['p99_us']:.1f} µs |", flush=True)

    print(f"\naxon: {config}" + (f" (bt-axon {' '.join(extra)})" if extra else ""), flush=True)
    print("| loop | mean | p50 | p99 |\n|---|---|---|---|", flush=True)
    try:
        add(bt_ping_row(args.bt_ping, axon, args.count))
        with bt.Dendrite(alice) as d:
            own = []  # the C++ dendrite's process_time of each query(), bt-ping's measure

            def query():
                r = d.query(axon, Ping(), timeout=TIMEOUT)
                own.append(r.dendrite.process_time)
                return r.dendrite.status_code

            times, statuses = timed_sync(query, args.count)
            add(summary("module query()", times, statuses))
            add(summary("module query(), process_time", own[WARMUP:], statuses))

            def query_list():
                return d.query([axon], Ping(), timeout=TIMEOUT)[0].dendrite.status_code

            add(summary("module query([axon])", *timed_sync(query_list, args.count)))

            async def forward():
                r = await d.forward(axon, Ping(), timeout=TIMEOUT)
                return r.dendrite.status_code

            add(summary("module await forward()", *asyncio.run(timed_async(forward, args.count))))
        with bt.Dendrite(alice, session=True) as d:
            add(summary("module query(), session", *timed_sync(
                lambda: d.query(axon, Ping(), timeout=TIMEOUT).dendrite.status_code, args.count)))
            if d.stats()["session_requests"] < args.count:
                raise Failed("module query(), session: the calls did not run in a session "
                             f"({d.stats()})")
        add(summary("shaped aiohttp dendrite", *asyncio.run(shaped_loop(alice, axon, args.count))))
        add(summary("shaped, schema rebuilt", *asyncio.run(
            shaped_loop(alice, axon, args.count, rebuild_schema=True))))
        add(summary("lean aiohttp client", *asyncio.run(
            lean_loop(alice, axon, args.count, signed=not extra))))
    finally:
        stop_axon(proc)
    return rows


def config_ratios(rows):
    """The ratios the docs quote, from one configuration's rows (by their means)."""
    by = {r["name"]: r for r in rows}
    mean = lambda n: by[n]["mean_us"]
    return {
        "module query() / bt-ping": mean("module query()") / mean("bt-ping"),
        "module query(), process_time / bt-ping":
            mean("module query(), process_time") / mean("bt-ping"),
        "module query([axon]) / module query()":
            mean("module query([axon])") / mean("module query()"),
        "module await forward() / bt-ping": mean("module await forward()") / mean("bt-ping"),
        "module query(), session / bt-ping": mean("module query(), session") / mean("bt-ping"),
        "shaped aiohttp / module query()": mean("shaped aiohttp dendrite") / mean("module query()"),
        "shaped aiohttp / module await forward()":
            mean("shaped aiohttp dendrite") / mean("module await forward()"),
        "shaped, schema rebuilt / module query()":
            mean("shaped, schema rebuilt") / mean("module query()"),
        "lean aiohttp / module query()": mean("lean aiohttp client") / mean("module query()"),
    }


def main():
    p = argparse.ArgumentParser(description="the ping loop from Python vs bt-ping")
    p.add_argument("--bt-axon", required=True)
    p.add_argument("--bt-ping", required=True)
    p.add_argument("--count", type=int, default=10000)
    p.add_argument("--json", help="also write the rows, ratios and conditions here")
    args = p.parse_args()
    if args.count < 1:
        p.error("--count must be at least 1")

    load_before = os.getloadavg()
    rows, ratios = {}, {}
    try:
        for config, extra in CONFIGS:
            rows[config] = measure(args, config, extra)
    except Failed as e:
        sys.exit(f"ping_compare: {e}")
    load_after = os.getloadavg()
    for config, _ in CONFIGS:
        ratios[config] = config_ratios(rows[config])
        print(f"\nratios, axon {config}:")
        for k, v in ratios[config].items():
            print(f"{k}: {v:.2f}")
    conditions = {
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "count": args.count, "python": platform.python_version(), "aiohttp": aiohttp.__version__,
        "pydantic": pydantic.VERSION, "cpus": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
        "module": bt.__file__,
    }
    print("conditions:", json.dumps(conditions))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "ratios": ratios, "conditions": conditions}, f, indent=1)


if __name__ == "__main__":
    main()
