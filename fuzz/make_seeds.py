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

# ---- chain_decode: a node's answers; the first byte picks the decoder (chain_decode_fuzz.cpp) ----
def compact(n):
    if n < 1 << 6:
        return bytes([n << 2])
    if n < 1 << 14:
        return ((n << 2) | 1).to_bytes(2, "little")
    if n < 1 << 30:
        return ((n << 2) | 2).to_bytes(4, "little")
    b = n.to_bytes((n.bit_length() + 7) // 8, "little")
    return bytes([((len(b) - 4) << 2) | 3]) + b


def read_compact(b, i):
    mode = b[i] & 3
    if mode == 0:
        return b[i] >> 2, i + 1
    if mode == 1:
        return int.from_bytes(b[i:i + 2], "little") >> 2, i + 2
    if mode == 2:
        return int.from_bytes(b[i:i + 4], "little") >> 2, i + 4
    n = (b[i] >> 2) + 4
    return int.from_bytes(b[i + 1:i + 1 + n], "little"), i + 1 + n


def vec(items):
    return compact(len(items)) + b"".join(items)


def text(s):
    return compact(len(s)) + s.encode()


def recorded_result(api):
    with open(os.path.join(VEC, "chain", "session_sn1_block6852690.json")) as f:
        for c in json.load(f)["calls"]:
            if c["method"] == "state_call" and c["params"][0] == api:
                return bytes.fromhex(c["response"]["result"][2:])
    raise KeyError(api)


def neuron_end(b, i):
    """End of the NeuronInfoLite at b[i:]: keys, uid, netuid, active, axon, prometheus, stake,
    eight compacts (rank .. last_update), validator_permit, pruning_score."""
    i += 64
    _, i = read_compact(b, i)
    _, i = read_compact(b, i)
    i += 1 + 34 + 31
    n, i = read_compact(b, i)
    for _ in range(n):
        _, i = read_compact(b, i + 32)
    for _ in range(8):
        _, i = read_compact(b, i)
    _, i = read_compact(b, i + 1)
    return i


# The first three neurons of the recorded subnet 1 (uids 0, 1, 2), and a SubnetState of the same
# three.
rec = recorded_result("NeuronInfoRuntimeApi_get_neurons_lite")
count, start = read_compact(rec, 0)
assert count == 1024
ends = [start]
for _ in range(3):
    ends.append(neuron_end(rec, ends[-1]))
three = rec[start:ends[3]]
hotkeys = [rec[ends[k]:ends[k] + 32] for k in range(3)]
coldkeys = [rec[ends[k] + 32:ends[k] + 64] for k in range(3)]
assert [read_compact(rec, ends[k] + 64)[0] for k in range(3)] == [0, 1, 2]
neurons3 = compact(3) + three
small = [compact(v) for v in (1, 70, 20000)]
state3 = (b"\x01" + compact(1) + vec(hotkeys) + vec(coldkeys) + vec([b"\x01", b"\x00", b"\x01"]) +
          vec([b"\x00", b"\x01", b"\x00"]) + b"".join(vec(small) for _ in range(12)) +
          vec([vec([compact(5), compact(1 << 40)])]))
put("chain_decode", b"\x01" + neurons3)
put("chain_decode", b"\x01" + compact(len(neurons3)) + neurons3)  # the older Vec<u8>-wrapped form
put("chain_decode", b"\x01" + compact(1) + rec[ends[0]:ends[1]])
put("chain_decode", b"\x02" + state3)
put("chain_decode", b"\x02\x00")  # None: no such subnet
put("chain_decode", b"\x03" + len(neurons3).to_bytes(2, "little") + neurons3 + state3)
# hostile counts: a neuron count, a stake count and a per-neuron vector beyond the bytes
put("chain_decode", b"\x01" + compact(32_500_000) + bytes(300))
put("chain_decode", b"\x01" + compact(1) + rec[ends[0]:ends[0] + 132] + compact(1000) + bytes(1200))
put("chain_decode", b"\x02\x01" + compact(1) + compact(100_000) + bytes(200))


def prim(p):
    return b"\x05" + bytes([p])


def composite(*fields, names=None):
    names = names or [None] * len(fields)
    return b"\x00" + vec([(b"\x01" + text(n) if n else b"\x00") + compact(f) + b"\x00" + compact(0)
                          for f, n in zip(fields, names)])


def registry(defs):
    # id, path, no type params, the TypeDef, no docs
    return vec([compact(i) + vec([text(p) for p in path]) + compact(0) + d + compact(0)
                for i, (path, d) in enumerate(defs)])


serve_axon_names = ["netuid", "version", "ip", "port", "ip_type", "protocol", "placeholder1",
                    "placeholder2"]
types = [
    ([], prim(3)),  # 0 u8
    ([], prim(4)),  # 1 u16
    ([], prim(5)),  # 2 u32
    ([], prim(7)),  # 3 u128
    ([], composite()),  # 4 the unit composite
    (["pallet_subtensor", "pallet", "Call"],  # 5 the call enum: serve_axon = 4
     b"\x01" + vec([text("serve_axon") + composite(6, 2, 3, 1, 0, 0, 0, 0,
                                                   names=serve_axon_names)[1:] + b"\x04" +
                    compact(0)])),
    (["subtensor_runtime_common", "NetUid"], composite(1)),  # 6 a newtype around u16
    ([], composite(4, 4, 4)),  # 7 a fan-out of unit composites
    ([], composite(7, 7, 7)),  # 8
    ([], b"\x02" + compact(0)),  # 9 Vec<u8>
    ([], b"\x04" + vec([])),  # 10 the unit tuple
]
extensions = vec([text("CheckFanOut") + compact(8) + compact(10),
                  text("CheckSpecVersion") + compact(4) + compact(2)])


def pallet(version):
    dep = b"\x00" if version >= 16 else b""  # ItemDeprecationInfo::NotDeprecated
    enum_dep = compact(0) if version >= 16 else b""  # no deprecated variants
    entry = (text("Axons") + b"\x00" + b"\x01" + vec([b"\x02", b"\x05"]) + compact(10) +
             compact(9) + compact(0) + compact(0) + dep)
    out = text("SubtensorModule") + b"\x01" + text("SubtensorModule") + vec([entry])
    out += b"\x01" + compact(5) + enum_dep  # calls
    out += b"\x00"  # no event
    out += vec([text("Limit") + compact(1) + vec([b"\x01", b"\x00"]) + compact(0) + dep])
    out += b"\x00"  # no error
    if version >= 16:
        out += compact(0) + compact(0)  # associated types, view functions
    out += b"\x07"  # index
    if version >= 15:
        out += compact(0)  # docs
    return out + dep


def metadata(version):
    out = b"meta" + bytes([version]) + registry(types) + vec([pallet(version)])
    if version == 14:
        out += compact(5) + b"\x04" + extensions + compact(4)
    elif version == 15:
        out += b"\x04" + compact(0) + compact(5) + compact(0) + compact(4) + extensions
        out += compact(4) + compact(0) + compact(5) + compact(5) + compact(5) + compact(0)
    else:
        out += vec([b"\x04"]) + compact(0) + compact(5) + compact(0)
        out += vec([b"\x00" + vec([compact(0), compact(1)])]) + extensions
        out += compact(0) + compact(5) + compact(5) + compact(5) + compact(0)
    return out


for v in (14, 15, 16):
    put("chain_decode", b"\x00" + metadata(v))
# hostile registries: 20 levels of three-way fan-out, a composite that contains itself, and a
# type count beyond the bytes
fan = [([], composite())] + [([], composite(i, i, i)) for i in range(20)]
put("chain_decode", b"\x00meta\x0e" + registry(fan) + vec([]) + compact(0) + b"\x04" +
    vec([text("CheckFanOut") + compact(20) + compact(0)]) + compact(0))
put("chain_decode", b"\x00meta\x0e" + registry([([], composite()), ([], composite(0, 1))]) +
    vec([]) + compact(0) + b"\x04" + vec([text("CheckLoop") + compact(1) + compact(0)]) +
    compact(0))
put("chain_decode", b"\x00meta\x0e" + compact(1_000_000) + bytes(600))
# a neuron count that the input's bytes hold at one byte each but not at 143: a decoder
# reserving for the count asks for some 4 MB, over the target's -malloc_limit_mb=1
put("chain_decode", b"\x01" + compact(16_000) + bytes(16_007))  # (not 16,000: see above)

# ---- btauth_head: btauth/1 heads as "name: value" lines (btauth_head_fuzz.cpp: its clock is
# 1.7e18 ns, its receiver //Bob). Three heads signed over POST /echo with the body "{}" by
# tests/node/btauth.mjs (recorded here: sr25519 signatures are randomised), which pass the head
# and the signature; then variants that each fail one check. ----
BOB = "5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty"
ALICE = "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY"
signed_heads = [
    [("X-Bittensor-Version", "1"), ("X-Bittensor-Hotkey", ALICE),
     ("X-Bittensor-Nonce", "1699999999000000000"),
     ("X-Bittensor-Signature", "0x98ba23285a5470ce38f7ceef66548d8bf106d63340488791f37324581f8b652c"
                               "18522b71fa59eace3ca09ab683b363538db0a7168aa62d47294ba2b0332e6481"),
     ("X-Bittensor-Receiver", BOB)],
    [("X-Bittensor-Version", "1"), ("X-Bittensor-Hotkey", "5ECTwv6cZ5nJQPk6tWfaTrEk8YH2L7X1VT4EL5Tx2ikfFwb7"),
     ("X-Bittensor-Nonce", "1700000000500000000"),
     ("X-Bittensor-Signature", "0x70a4ca6abb97ad3c037a2129ac9aa599808b5b105db45d35be6605557bffd228"
                               "4404c710530056c64e24c9ceb459cd0773f9b2205f611a91aecefdad07322506"),
     ("X-Bittensor-Crypto", "ed25519"), ("X-Bittensor-Receiver", BOB)],
    [("X-Bittensor-Version", "1"), ("X-Bittensor-Hotkey", ALICE),
     ("X-Bittensor-Nonce", "1699999995000000000"),
     ("X-Bittensor-Signature", "0xfe5027c2636d598438edb12ada4fa5ea84b2bd264752befbc23b2fae32f21308"
                               "0eec1df5b0b63372df83c4b3d9f590b4b79292f9876d9fe1bd1d621fb0660d84")],
]


def head(fields):
    return "".join(f"{n}: {v}\n" for n, v in fields)


def with_field(fields, name, value):
    out = [(n, v) for n, v in fields if n != name]
    return out + [(name, value)] if value is not None else out


for h in signed_heads:
    put("btauth_head", head(h))
good = signed_heads[0]
for name, value in [
    ("X-Bittensor-Version", "2"), ("X-Bittensor-Version", None),
    ("X-Bittensor-Hotkey", "5Grw\u00e9vaEF"), ("X-Bittensor-Hotkey", "1" * 48),
    ("X-Bittensor-Nonce", "01699999999000000000"), ("X-Bittensor-Nonce", "+1699999999000000000"),
    ("X-Bittensor-Nonce", "1699999999000"), ("X-Bittensor-Nonce", "99999999999999999999"),
    ("X-Bittensor-Nonce", "1700000003000000000"), ("X-Bittensor-Nonce", "1699999989000000000"),
    ("X-Bittensor-Signature", "0xabcd"), ("X-Bittensor-Signature", "z" * 130),
    ("X-Bittensor-Crypto", "ecdsa"), ("X-Bittensor-Crypto", "SR25519"),
    ("X-Bittensor-Receiver", ALICE), ("X-Bittensor-Receiver", None),
]:
    put("btauth_head", head(with_field(good, name, value)))
put("btauth_head", head(good + [("X-Bittensor-Nonce", "1699999999000000000")]))
put("btauth_head", head([(n.lower(), v) for n, v in good]))
put("btauth_head", head(good + [("X-Bittensor-Unknown", "x"), ("Epistula-Version", "2")]))


# ---- ristretto: 32 bytes of an encoding, then 32 of a scalar (ristretto_fuzz.cpp) ----
# The public keys of the key vectors (valid points), the identity, and encodings that are not
# points: negative, not canonical (p itself, 2^255 - 1), bit 255 set; each with a scalar that is
# small, one below the group order, and all 0xff (reduced).
P_BYTES = (2**255 - 19).to_bytes(32, "little")
L_MINUS_1 = (2**252 + 27742317777372353535851937790883648493 - 1).to_bytes(32, "little")
encodings = [bytes.fromhex(c["public_hex"]) for c in cases("sr25519_keys.json")[:4]]
encodings += [bytes(32), bytes([1]) + bytes(31), P_BYTES, b"\xff" * 31 + b"\x7f",
              bytes.fromhex(cases("sr25519_keys.json")[0]["public_hex"])[:31] + b"\x80"]
for i, e in enumerate(encodings):
    put("ristretto", e)
    put("ristretto", e + [bytes([2]) + bytes(31), L_MINUS_1, b"\xff" * 32][i % 3])
