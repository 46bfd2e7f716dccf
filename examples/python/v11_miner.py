#!/usr/bin/env python3
"""A Bittensor SDK v11 style miner: plain HTTP (the standard library's http.server) with every
request authenticated by btauth/1 through bittensor_cpp.http_auth, the one import a v11 subnet
swaps. Serves POST /forward ({"dummy_input": n} -> {"dummy_output": 2n, "caller": <hotkey>}) and
prints {"ip", "port", "hotkey"} as one JSON line on stdout once listening; stops on SIGINT/SIGTERM.

    PYTHONPATH=build/python python3 examples/python/v11_miner.py --uri //Bob --port 8091
"""
import argparse
import http.server
import json
import signal
import sys
import threading

import bittensor_cpp as bt
from bittensor_cpp import http_auth


def make_handler(hotkey_ss58, nonces):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def answer(self, status, payload):
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path.split("?", 1)[0] != "/forward":
                return self.answer(404, {"error": "no such route"})
            try:
                # self.headers.items() yields every header line, repeats included;
                # self.path is the request target exactly as sent.
                caller = http_auth.verify(self.headers, body, method=self.command, path=self.path,
                                          self_hotkey_ss58=hotkey_ss58, nonce_store=nonces)
            except http_auth.AuthError as e:
                return self.answer(e.status_code, {"error": str(e)})
            except ConnectionError as e:  # the replay store is unreachable: nothing accepted
                return self.answer(503, {"error": str(e)})
            try:
                n = json.loads(body)["dummy_input"]
                if not isinstance(n, int):
                    raise TypeError
            except (ValueError, KeyError, TypeError):
                return self.answer(400, {"error": 'the body must be {"dummy_input": <int>}'})
            self.answer(200, {"dummy_output": 2 * n, "caller": caller.hotkey_ss58})

        def log_message(self, fmt, *args):  # one line per request on stderr
            sys.stderr.write("v11_miner: " + fmt % args + "\n")

    return Handler


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--uri", help="dev key, e.g. //Bob (instead of a wallet)")
    p.add_argument("--wallet.name", dest="wallet_name")
    p.add_argument("--wallet.hotkey", dest="wallet_hotkey")
    p.add_argument("--wallet.path", dest="wallet_path")
    p.add_argument("--ip", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8091)
    p.add_argument("--redis", help="redis:// URL of a replay store shared by a fleet "
                                   "(default: this process's memory)")
    args = p.parse_args()

    if args.uri:
        hotkey = bt.Keypair.from_uri(args.uri)
    else:
        hotkey = bt.Wallet(name=args.wallet_name, hotkey=args.wallet_hotkey,
                           path=args.wallet_path).hotkey()
    nonces = (http_auth.RedisNonceStore(args.redis) if args.redis
              else http_auth.InMemoryNonceStore(retention=60.0))

    server = http.server.ThreadingHTTPServer((args.ip, args.port),
                                             make_handler(hotkey.ss58_address, nonces))
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    host, port = server.server_address[:2]
    print(json.dumps({"ip": host, "port": port, "hotkey": hotkey.ss58_address}), flush=True)
    while not stop.wait(0.5):
        pass
    server.shutdown()
    server.server_close()


if __name__ == "__main__":
    main()
