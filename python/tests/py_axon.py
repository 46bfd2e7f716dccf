"""bt-axon's reference miner rewritten in Python on bittensor_cpp, with the same command line
subset (--uri, --axon.ip, --axon.port, --metagraph, --blacklist.hotkeys,
--blacklist.force_validator_permit, --blacklist.allow_non_registered), routes (the ping, Dummy,
WordStream) and access policy, so that tests/node/python_dendrite_peer.mjs, a dendrite shaped
exactly like Python's, can judge a Python-handled axon as it judges bt-axon. Prints the
AxonInfo line bt-axon prints; drains and exits 0 on SIGTERM/SIGINT."""
import argparse
import json
import signal
import threading
import typing

import bittensor_cpp as bt

Dummy = bt.SynapseType("Dummy", {"dummy_input": int, "dummy_output": typing.Optional[int]},
                       required=["dummy_input"])
WordStream = bt.SynapseType("WordStream", {"text": str, "words": typing.List[str]},
                            required=["text"], hash_fields=["text"], defaults={"words": []})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--uri", required=True)
    p.add_argument("--axon.ip", dest="ip", default="127.0.0.1")
    p.add_argument("--axon.port", dest="port", type=int, default=8091)
    p.add_argument("--metagraph")
    p.add_argument("--blacklist.hotkeys", dest="deny")
    p.add_argument("--blacklist.force_validator_permit", dest="force_permit", action="store_true")
    p.add_argument("--blacklist.allow_non_registered", dest="allow_unreg", action="store_true")
    args = p.parse_args()

    denied = set()
    if args.deny:
        for line in open(args.deny):
            line = line.strip()
            if line and not line.startswith("#"):
                denied.add(line)
    metagraph = None
    if args.metagraph:
        metagraph = {n["hotkey"]: n for n in json.load(open(args.metagraph))}

    def blacklist(s):
        key = s.dendrite.hotkey
        if key in denied:
            return True, "Blacklisted hotkey"
        if metagraph is None:
            return False, ""
        n = metagraph.get(key)
        if n is None:
            return (False, "") if args.allow_unreg else (True, "Unrecognized hotkey")
        if args.force_permit and not n.get("validator_permit"):
            return True, "Non-validator hotkey"
        return False, ""

    def priority(s):
        n = (metagraph or {}).get(s.dendrite.hotkey)
        return float(n["stake"]) if n else 0.0

    def dummy(s):
        out = s.dummy_input * 2
        if not -2**63 <= out < 2**63:
            raise bt.ForwardError(400, "dummy_input * 2 does not fit in 64 bits")
        s.dummy_output = out

    def word_stream(s, send):
        for w in s.text.split():
            if not send(w + "\n"):
                return

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    axon = bt.Axon(bt.Keypair.from_uri(args.uri), ip=args.ip, port=args.port)
    axon.set_policy("Synapse", blacklist=blacklist, priority=priority)
    axon.attach(Dummy, dummy, blacklist=blacklist, priority=priority)
    axon.attach(WordStream, word_stream, blacklist=blacklist, priority=priority, streaming=True)
    with axon:
        info = axon.info().to_dict()
        info.pop("placeholder1", None)
        info.pop("placeholder2", None)
        print(json.dumps(info), flush=True)
        while not stop.wait(0.2):
            pass


if __name__ == "__main__":
    main()
