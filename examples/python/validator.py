#!/usr/bin/env python3
"""A validator in Python on the C++ dendrite: queries the given axons with the Dummy synapse,
blocking (query) or with asyncio (forward), and prints one line per answer.

    PYTHONPATH=build/python python3 examples/python/validator.py --uri //Alice \\
        --axon 127.0.0.1:8091:5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty --input 21
    (--axon-json '<the AxonInfo line printed by bt-axon or miner.py>' works too)

Exit status 0 when every answer is a 200 with dummy_output == 2 * input, else 1.
"""
import argparse
import asyncio
import json
import sys
import typing

import bittensor_cpp as bt

Dummy = bt.SynapseType("Dummy", {"dummy_input": int, "dummy_output": typing.Optional[int]},
                       required=["dummy_input"], hash_fields=[])


def parse_axons(args):
    axons = []
    for a in args.axon or []:
        ip, port, hotkey = a.rsplit(":", 2)
        axons.append(bt.AxonInfo(ip=ip, port=int(port), hotkey=hotkey))
    for j in args.axon_json or []:
        d = json.loads(j)
        axons.append(bt.AxonInfo(ip=d["ip"], port=d["port"], hotkey=d["hotkey"]))
    if not axons:
        sys.exit("validator.py: give at least one --axon or --axon-json")
    return axons


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--uri", default=None, help="dev key, e.g. //Alice (instead of a wallet)")
    p.add_argument("--wallet.name", dest="wallet_name")
    p.add_argument("--wallet.hotkey", dest="wallet_hotkey")
    p.add_argument("--wallet.path", dest="wallet_path")
    p.add_argument("--axon", action="append", help="ip:port:hotkey (repeatable)")
    p.add_argument("--axon-json", action="append", help="an AxonInfo JSON object (repeatable)")
    p.add_argument("--input", type=int, default=21)
    p.add_argument("--timeout", type=float, default=12.0)
    p.add_argument("--async", dest="use_async", action="store_true", help="await forward()")
    args = p.parse_args()

    if args.uri:
        hotkey = bt.Keypair.from_uri(args.uri)
    else:
        hotkey = bt.Wallet(name=args.wallet_name, hotkey=args.wallet_hotkey,
                           path=args.wallet_path).hotkey()
    axons = parse_axons(args)
    with bt.Dendrite(hotkey) as dendrite:
        synapse = Dummy(dummy_input=args.input)
        if args.use_async:
            results = asyncio.run(_forward(dendrite, axons, synapse, args.timeout))
        else:
            results = dendrite.query(axons, synapse, timeout=args.timeout)
    ok = True
    for axon, r in zip(axons, results):
        print(f"{axon.ip}:{axon.port} status={r.dendrite.status_code} "
              f"message={r.dendrite.status_message!r} dummy_output={r.dummy_output} "
              f"process_time={r.dendrite.process_time}")
        ok = ok and r.dendrite.status_code == 200 and r.dummy_output == 2 * args.input
    sys.exit(0 if ok else 1)


async def _forward(dendrite, axons, synapse, timeout):
    return await dendrite.forward(axons, synapse, timeout=timeout)


if __name__ == "__main__":
    main()
