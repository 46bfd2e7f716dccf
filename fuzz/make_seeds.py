#!/usr/bin/env python3
"""Writes the committed seed corpora fuzz/corpus/<target>/ from tests/vectors and a few
hand-written requests. Re-run after changing the vectors; the files are named by content
(sha1, as libFuzzer names corpus entries), so re-running adds nothing twice.
Usage: fuzz/make_seeds.py"""
import base64
import hashlib
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VEC = os.path.join(ROOT, "tests", "vectors")
OUT = os.path.join(ROOT, "fuzz", "corpus")


def cases(name):
    with open(os.path.join(VEC, name)) as f:
        return json.load(f)["cases"]


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


# ---- header_codec: "name: value" lines from the header vectors, plus hostile values ----
for c in cases("headers.json"):
    items = c.get("header_items") or list((c.get("headers") or {}).items())
    put("header_codec", "".join(f"{n}: {v}\n" for n, v in items))
for extra in [
    "timeout: 1_2.5e-3\ntotal_size: -0\nheader_size: +12\n",
    "timeout: nan\nbt_header_dendrite_nonce: 99999999999999999999\n",
    "timeout: inf\nbt_header_axon_status_message: caf\xc3\xa9 \t tab\n",
    "bt_header_input_obj_x: eyJhIjogWzEsIDIsIHt9XX0=\nbt_header_input_obj_y: e30=\n",
    "BT_HEADER_DENDRITE_PORT: 0x10\nbt_header_dendrite_version:  1_000 \n",
]:
    put("header_codec", extra)

# ---- json_body: every body of the vectors, plus edge cases of the strict scanner ----
for c in cases("headers.json"):
    put("json_body", c["json_body_text"])
    put("json_body", json.dumps(c["json_body"], separators=(",", ":"), ensure_ascii=False))
for extra in [
    '{"dummy_input": 5, "dummy_output": null}',
    '{"a": [1, 2.5, "x", {"k": null}], "c": {"z": true}, "b": -0.0}',
    '{"a": 18446744073709551615, "b": -9223372036854775808, "c": 1e308}',
    '{"a": "\\ud83d\\ude00 \\u00e9 \\n", "timeout": 1e-05}',
    '{"x": 1, "x": 2}',
    '[' * 70 + ']' * 70,
    '{"a": 18446744073709551616}',
    '{"dendrite": {"status_code": "200", "port": 8091.0, "nonce": 1}, "axon": {}}',
]:
    put("json_body", extra)

# ---- ss58: addresses of every format in the vectors (one- and two-byte prefixes) ----
for c in cases("ss58.json"):
    if c.get("address"):
        put("ss58", c["address"])
for c in cases("mnemonic.json"):
    put("ss58", c["ss58_42_sr25519"])

# ---- mnemonic: every vector phrase, and near misses ----
for c in cases("mnemonic.json"):
    put("mnemonic", c["mnemonic"])
put("mnemonic", "abandon " * 11 + "about")
put("mnemonic", "abandon  abandon\tabandon\nabandon abandon abandon abandon abandon abandon abandon abandon abandon")
put("mnemonic", "zoo " * 23 + "vote")

# ---- secret_uri: every URI of the derivation vectors, and seed URIs (derived in the target) ----
for c in cases("sr25519_derive.json"):
    put("secret_uri", c["uri"])
for extra in ["0x" + "11" * 32 + "//1/2//Alice///pw", "0x" + "ab" * 32 + "/+18446744073709551615",
              "//Alice///", "phrase with spaces//x//y/z", "///only-password", "0x12"]:
    put("secret_uri", extra)

# ---- keyfile: every keyfile of the vectors, raw, and sealed by the target ("ENC:" prefix) ----
for c in cases("keyfiles.json"):
    if c.get("contents_utf8"):
        put("keyfile", c["contents_utf8"])
        put("keyfile", "ENC:" + c["contents_utf8"])
    if c.get("contents_utf8_other_key_order"):
        put("keyfile", c["contents_utf8_other_key_order"])
    if c.get("file_hex"):
        put("keyfile", bytes.fromhex(c["file_hex"]))
put("keyfile", b"$ANSIBLE_VAULT;1.1;AES256\n3031")
put("keyfile", b"gAAAAABfake")

# ---- axon_request: whole requests as a Python dendrite sends them (tokens: see the target) ----
DUMMY_HASH = "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"


def request(path, body, *, extra_headers="", conn="", chunked=False, input_objs=""):
    head = (f"POST /{path} HTTP/1.1\r\nHost: 127.0.0.1:8091\r\nAccept: */*\r\n"
            "Accept-Encoding: gzip, deflate\r\nUser-Agent: Python/3.11 aiohttp/3.9.5\r\n"
            "Content-Type: application/json\r\n")
    head += "Transfer-Encoding: chunked\r\n" if chunked else "Content-Length: @CL@\r\n"
    head += conn
    head += (f"name: {path}\r\ntimeout: 12.0\r\nbt_header_axon_ip: 127.0.0.1\r\nbt_header_axon_port: 8091\r\n"
             "bt_header_axon_hotkey: @AXON@\r\nbt_header_dendrite_ip: 127.0.0.1\r\n"
             "bt_header_dendrite_version: 9002000\r\nbt_header_dendrite_nonce: @NONCE@\r\n"
             "bt_header_dendrite_uuid: 5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a\r\n"
             "bt_header_dendrite_hotkey: @HOTKEY@\r\nbt_header_dendrite_signature: @SIG@\r\n"
             f"{input_objs}header_size: 0\r\ntotal_size: 0\r\ncomputed_body_hash: @HASH@\r\n{extra_headers}\r\n")
    # chunked: the target frames the body once its tokens are resolved (@CHUNKED@)
    return head + ("@CHUNKED@" if chunked else "") + body


def dump(name, fields):
    base = {"name": name, "timeout": 12.0, "total_size": 0, "header_size": 0,
            "dendrite": {"status_code": None, "status_message": None, "process_time": None,
                         "ip": "127.0.0.1", "port": None, "version": 9002000, "nonce": 1,
                         "uuid": "5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a", "hotkey": "@HOTKEY@",
                         "signature": None},
            "axon": {"status_code": None, "status_message": None, "process_time": None,
                     "ip": "127.0.0.1", "port": 8091, "version": None, "nonce": None, "uuid": None,
                     "hotkey": "@AXON@", "signature": None},
            "computed_body_hash": ""}
    base.update(fields)
    # the body's dendrite fields must agree with the signed headers (the axon checks)
    return json.dumps(base).replace('"nonce": 1,', '"nonce": @NONCE@,')


placeholder_int = base64.b64encode(b"0").decode()
put("axon_request", request("Dummy", dump("Dummy", {"dummy_input": 5, "dummy_output": None}),
                            input_objs=f"bt_header_input_obj_dummy_input: {placeholder_int}\r\n"))
put("axon_request", request("Dummy", dump("Dummy", {"dummy_input": -7}), conn="Connection: close\r\n"))
put("axon_request", request("Dummy", dump("Dummy", {"dummy_input": 3}), chunked=True))
put("axon_request", request("Synapse", dump("Synapse", {})))
put("axon_request", request("Hashed", dump("Hashed", {"a": [1, "two", {"3": 4.5}], "b": None})))
put("axon_request", request("Hashed", dump("Hashed", {"a": "text"}),
                            extra_headers="Expect: 100-continue\r\n"))
# two requests on one keep-alive connection
put("axon_request", request("Dummy", dump("Dummy", {"dummy_input": 1})) + "@NEXT@" +
    request("Synapse", dump("Synapse", {})))
# three on one connection: a chunked one, then an unsigned one (401, which closes)
put("axon_request", request("Dummy", dump("Dummy", {"dummy_input": 2})) + "@NEXT@" +
    request("Hashed", dump("Hashed", {"a": 1}), chunked=True) + "@NEXT@" +
    request("Dummy", dump("Dummy", {"dummy_input": 3})).replace("@SIG@", "0x00"))
# unsigned, unknown route, bad method, malformed
put("axon_request", "GET /Synapse HTTP/1.1\r\nHost: x\r\n\r\n")
put("axon_request", "POST /Nope?x=1 HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}")
put("axon_request", "DELETE /Dummy HTTP/1.1\r\n\r\n")
put("axon_request", request("Dummy", '{"dummy_input": "5"}').replace("@SIG@", "0x00"))
