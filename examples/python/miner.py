#!/usr/bin/env python3
"""A miner in Python on the C++ axon: serves the subnet template's Dummy synapse
(dummy_output = dummy_input * 2) and prints its AxonInfo as one JSON line on stdout once
listening, as bt-axon does; stops gracefully on SIGINT/SIGTERM.

    PYTHONPATH=build/python python3 examples/python/miner.py --uri //Bob --port 8091
    PYTHONPATH=build/python python3 examples/python/miner.py --wallet.name miner --wallet.hotkey default
"""
import argparse
import asyncio
import json
import logging
import signal
import sys
import threading
import typing

import bittensor_cpp as bt

Dummy = bt.SynapseType("Dummy", {"dummy_input": int, "dummy_output": typing.Optional[int]},
                       required=["dummy_input"], hash_fields=[])


def forward(synapse):
    synapse.dummy_output = synapse.dummy_input * 2
    return synapse


async def forward_async(synapse):  # the same, as an `async def` handler (--async)
    await asyncio.sleep(0)
    synapse.dummy_output = synapse.dummy_input * 2
    return synapse


def blacklist(synapse):
    # (blacklisted, reason); synapse.dendrite.hotkey is the caller the axon verified.
    return False, "allowed"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--uri", help="dev key, e.g. //Bob (instead of a wallet)")
    p.add_argument("--wallet.name", dest="wallet_name")
    p.add_argument("--wallet.hotkey", dest="wallet_hotkey")
    p.add_argument("--wallet.path", dest="wallet_path")
    p.add_argument("--ip", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8091)
    p.add_argument("--async", dest="use_async", action="store_true",
                   help="serve with an async def handler")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)

    if args.uri:
        hotkey = bt.Keypair.from_uri(args.uri)
    else:
        hotkey = bt.Wallet(name=args.wallet_name, hotkey=args.wallet_hotkey,
                           path=args.wallet_path).hotkey()

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    axon = bt.Axon(hotkey, ip=args.ip, port=args.port)
    axon.attach(Dummy, forward_async if args.use_async else forward, blacklist=blacklist)
    with axon:
        print(json.dumps(axon.info().to_dict()), flush=True)
        while not stop.wait(0.5):
            pass
    logging.info("miner stopped")


if __name__ == "__main__":
    main()
