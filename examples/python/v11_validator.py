#!/usr/bin/env python3
"""A Bittensor SDK v11 style validator: signs a request to a miner's POST /forward with
bittensor_cpp.http_auth.sign (btauth/1, bound to the miner's hotkey) and sends it with the
standard library's urllib; prints one line with the status and the answer.

    PYTHONPATH=build/python python3 examples/python/v11_validator.py --uri //Alice \\
        --axon-json '<the line v11_miner.py printed>' --input 21

--dendrite sends it with bittensor_cpp.Dendrite.btauth_call instead: the C++ dendrite signs,
sends and reads (keep-alive pool, one deadline, the answer's signature checked when present).
--replay sends the same signed request a second time, which the miner must refuse (401,
ReplayedRequest); not with --dendrite, which signs every request under a fresh nonce. Exit
status 0 when the first answer is a 200 with dummy_output == 2 * input (and, with --replay, the
second a 401), else 1.
"""
import argparse
import json
import sys
import urllib.error
import urllib.request

import bittensor_cpp as bt
from bittensor_cpp import http_auth


def post(url, headers, body, timeout):
    """(status, decoded JSON answer) of one POST; an HTTP error status is an answer too."""
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={**headers, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def call_with_dendrite(signer, miner, path, args):
    """One btauth_call by the C++ dendrite; True when it is the expected answer."""
    key = signer if isinstance(signer, bt.Keypair) else signer.hotkey()
    axon = bt.AxonInfo(ip=miner["ip"], port=miner["port"], hotkey=miner["hotkey"])
    with bt.Dendrite(key) as d:
        r = d.btauth_call(axon, "POST", path, {"dummy_input": args.input}, timeout=args.timeout)
    if r.error is not None:
        print(f"status={r.status} error={r.error} message={r.status_message}")
        return False
    answer = r.json()
    print(f"status={r.status} answer={json.dumps(answer)}")
    return r.status == 200 and answer.get("dummy_output") == 2 * args.input


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--uri", help="dev key, e.g. //Alice (instead of a wallet)")
    p.add_argument("--crypto-type", default="sr25519", choices=["sr25519", "ed25519"],
                   help="the --uri key's scheme")
    p.add_argument("--wallet.name", dest="wallet_name")
    p.add_argument("--wallet.hotkey", dest="wallet_hotkey")
    p.add_argument("--wallet.path", dest="wallet_path")
    p.add_argument("--axon-json", required=True, help='{"ip", "port", "hotkey"} of the miner')
    p.add_argument("--input", type=int, default=21)
    p.add_argument("--timeout", type=float, default=12.0)
    p.add_argument("--replay", action="store_true", help="send the signed request twice")
    p.add_argument("--dendrite", action="store_true",
                   help="send with bittensor_cpp.Dendrite.btauth_call instead of urllib")
    args = p.parse_args()
    if args.dendrite and args.replay:
        p.error("--replay resends one signed request; --dendrite signs each request anew")

    if args.uri:
        signer = bt.Keypair.from_uri(args.uri, crypto_type=args.crypto_type)
    else:
        signer = bt.Wallet(name=args.wallet_name, hotkey=args.wallet_hotkey, path=args.wallet_path)
    miner = json.loads(args.axon_json)
    path = "/forward"
    if args.dendrite:
        sys.exit(0 if call_with_dendrite(signer, miner, path, args) else 1)
    body = json.dumps({"dummy_input": args.input}).encode()
    headers = http_auth.sign(signer, method="POST", path=path, body=body,
                             receiver_ss58=miner["hotkey"])
    url = f"http://{miner['ip']}:{miner['port']}{path}"

    status, answer = post(url, headers, body, args.timeout)
    print(f"status={status} answer={json.dumps(answer)}")
    ok = status == 200 and answer.get("dummy_output") == 2 * args.input
    if args.replay:
        status, answer = post(url, headers, body, args.timeout)
        print(f"replay status={status} answer={json.dumps(answer)}")
        ok = ok and status == 401 and answer["error"].startswith("ReplayedRequest")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
