"""bittensor_cpp.http_auth (btauth/1, the signed HTTP requests of Bittensor SDK v11): the payload's
bytes and both directions against tests/node/btauth.mjs (an independent implementation), every
refusal class, the replay stores (in memory and in a real redis-server), the GIL released while
C++ verifies, and the docs/python.md snippet."""
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

import bittensor_cpp as bt
from bittensor_cpp import http_auth

ROOT = pathlib.Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "tests" / "node"
BODY = b'{"dummy_input": 21}'


def node(*args):
    """Runs `node btauth.mjs <args>` and returns its stdout line. Fails (never skips) when node or
    tests/node's packages are missing."""
    exe = shutil.which("node")
    assert exe, "node is not on PATH (scripts/setup installs it)"
    assert (NODE_DIR / "node_modules" / "@polkadot" / "util-crypto").is_dir(), \
        "tests/node/node_modules is missing (scripts/setup runs npm ci there)"
    out = subprocess.run([exe, "btauth.mjs", *map(str, args)], cwd=NODE_DIR, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.fixture(scope="module")
def alice():
    return bt.Keypair.from_uri("//Alice")


@pytest.fixture(scope="module")
def bob():
    return bt.Keypair.from_uri("//Bob")


@pytest.fixture(scope="module")
def dave_ed():
    return bt.Keypair.from_uri("//Dave", crypto_type="ed25519")


def signed(key, receiver, *, body=BODY, method="POST", path="/forward", nonce_ns=None):
    return http_auth.sign(key, method=method, path=path, body=body,
                          receiver_ss58=receiver.ss58_address if receiver else None,
                          nonce_ns=nonce_ns)


def check(headers, me, *, body=BODY, method="POST", path="/forward", **kw):
    kw.setdefault("nonce_store", http_auth.InMemoryNonceStore())
    return http_auth.verify(headers, body, method=method, path=path,
                            self_hotkey_ss58=me.ss58_address, **kw)


# --- the payload ----------------------------------------------------------------------------

def test_payload_bytes_match_node_and_the_literal(alice, bob):
    payload = http_auth.build_payload("post", "/forward?x=1", BODY, 1700000000123456789,
                                      alice.ss58_address, bob.ss58_address)
    assert payload == (
        b"btauth/1\nsr25519\nPOST\n/forward?x=1\n"
        b"0db9756e0f8b17086949d2a5ee424a580bab7f7cb19679d355011c76c983ec28\n"
        b"1700000000123456789\n"
        b"5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY\n"
        b"5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty")
    for scheme, receiver in (("sr25519", bob.ss58_address), ("ed25519", "-")):
        theirs = node("payload", scheme, "post", "/forward?x=1", BODY.hex(), 1700000000123456789,
                      alice.ss58_address, receiver)
        ours = http_auth.build_payload("post", "/forward?x=1", BODY, 1700000000123456789,
                                       alice.ss58_address,
                                       None if receiver == "-" else receiver, scheme)
        assert ours.hex() == theirs


def test_payload_literal_unbound_empty_body():
    assert http_auth.build_payload("get", "/", b"", 1, "SENDER") == (
        b"btauth/1\nsr25519\nGET\n/\n"
        b"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n1\nSENDER\n-")
    assert http_auth.build_payload("get", "/", "é", 1, "S", "R", "ed25519") == (
        b"btauth/1\ned25519\nGET\n/\n"
        b"4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c\n1\nS\nR")


# --- both directions with Node ----------------------------------------------------------------

@pytest.mark.parametrize("uri,scheme", [("//Alice", "sr25519"), ("//Dave", "ed25519")])
def test_python_signs_node_verifies(uri, scheme, bob):
    key = bt.Keypair.from_uri(uri, crypto_type=scheme)
    h = signed(key, bob)
    assert ("X-Bittensor-Crypto" in h) == (scheme == "ed25519")
    out = json.loads(node("verify", json.dumps(h), BODY.hex(), "POST", "/forward",
                          bob.ss58_address, h["X-Bittensor-Nonce"]))
    assert out == {"hotkey": key.ss58_address, "nonce": h["X-Bittensor-Nonce"], "crypto": scheme}
    # Node refuses what Python signed for another path: the check is real on that side too.
    out = json.loads(node("verify", json.dumps(h), BODY.hex(), "POST", "/other",
                          bob.ss58_address, h["X-Bittensor-Nonce"]))
    assert out["error"] == "BadSignature"


@pytest.mark.parametrize("uri,scheme", [("//Alice", "sr25519"), ("//Dave", "ed25519")])
def test_node_signs_python_verifies(uri, scheme, bob):
    now = time.time_ns()
    h = json.loads(node("sign", uri, scheme, "post", "/forward?q=1", BODY.hex(), now,
                        bob.ss58_address))
    c = check(h, bob, path="/forward?q=1", now_ns=now)
    key = bt.Keypair.from_uri(uri, crypto_type=scheme)
    assert (c.hotkey_ss58, c.nonce_ns, c.crypto_type) == (key.ss58_address, now, scheme)
    with pytest.raises(http_auth.BadSignature):
        check(h, bob, path="/forward?q=2", now_ns=now)


def test_unbound_node_request(bob):
    now = time.time_ns()
    h = json.loads(node("sign", "//Alice", "sr25519", "GET", "/", "", now, "-"))
    assert "X-Bittensor-Receiver" not in h
    with pytest.raises(http_auth.WrongReceiver):
        check(h, bob, body=b"", method="GET", path="/", now_ns=now)
    assert check(h, bob, body=b"", method="GET", path="/", now_ns=now,
                 require_receiver=False).hotkey_ss58 == bt.Keypair.from_uri("//Alice").ss58_address


def post_signed(axon, headers, body, path="/echo"):
    """(status, JSON answer) of one POST to a bt-axon; an error status is an answer too."""
    import urllib.error
    import urllib.request
    req = urllib.request.Request(f"http://{axon.ip}:{axon.port}{path}", data=body, method="POST",
                                 headers={**headers, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


@pytest.mark.parametrize("scheme", ["sr25519", "ed25519"])
def test_python_signs_bt_axon_verifies(bt_axon, scheme):
    """The C++ axon's btauth/1 route (bt-axon's POST /echo) accepts what http_auth.sign makes,
    once, and names the verified signer."""
    key = bt.Keypair.from_uri("//Dave", crypto_type=scheme)
    h = http_auth.sign(key, method="POST", path="/echo", body=BODY, receiver_ss58=bt_axon.hotkey)
    status, answer = post_signed(bt_axon, h, BODY)
    assert status == 200, answer
    assert answer == {"dummy_input": 21, "signed_by": key.ss58_address}
    status, answer = post_signed(bt_axon, h, BODY)
    assert status == 401 and "ReplayedRequest" in answer
    other = http_auth.sign(key, method="POST", path="/echo", body=BODY,
                           receiver_ss58=bt.Keypair.from_uri("//Charlie").ss58_address)
    status, answer = post_signed(bt_axon, other, BODY)
    assert status == 401 and "WrongReceiver" in answer


# --- the call shapes ------------------------------------------------------------------------

def test_sign_accepts_keypair_wallet_and_hotkey_holders(alice, bob, tmp_path):
    w = bt.Wallet(name="w", hotkey="h", path=str(tmp_path))
    w.write_hotkey(alice)

    class SdkWallet:  # an SDK-style wallet: hotkey is an attribute holding the Keypair
        hotkey = alice

    for who in (alice, w, SdkWallet()):
        c = check(signed(who, bob), bob)
        assert c.hotkey_ss58 == alice.ss58_address and c.crypto_type == "sr25519"
    with pytest.raises(TypeError):
        http_auth.sign(object(), method="POST", path="/")
    with pytest.raises(bt.Error):
        http_auth.sign(bt.Keypair.from_ss58(alice.ss58_address), method="POST", path="/")


def test_str_body_is_signed_as_utf8(alice, bob):
    h = http_auth.sign(alice, method="POST", path="/", body="héllo", receiver_ss58=bob.ss58_address)
    assert check(h, bob, body="héllo".encode(), path="/").hotkey_ss58 == alice.ss58_address


def test_nonces_of_one_process_increase(alice):
    nonces = [int(http_auth.sign(alice, method="GET", path="/")["X-Bittensor-Nonce"])
              for _ in range(50)]
    assert nonces == sorted(set(nonces))


def test_submodule_imports_by_name():
    import importlib
    assert importlib.import_module("bittensor_cpp.http_auth") is http_auth is bt.http_auth


def test_caller_shape(alice, bob):
    c = check(signed(alice, bob), bob)
    assert isinstance(c, tuple) and c._fields == ("hotkey_ss58", "nonce_ns", "crypto_type")
    assert type(c).__name__ == "Caller" and c == http_auth.Caller(*c)


class CaseInsensitiveMultiDict:
    """The shape of Starlette's Headers: items() yields every (name, value), repeats included."""

    def __init__(self, pairs):
        self._pairs = list(pairs)

    def items(self):
        return list(self._pairs)

    def __getitem__(self, name):
        for k, v in self._pairs:
            if k.lower() == name.lower():
                return v
        raise KeyError(name)


def test_headers_of_any_mapping_or_pairs(alice, bob):
    h = signed(alice, bob)
    lower = {k.lower(): v for k, v in h.items()}
    assert check(lower, bob).hotkey_ss58 == alice.ss58_address
    h = signed(alice, bob)
    raw = [(k.lower().encode(), v.encode()) for k, v in h.items()] + [(b"content-type", b"x")]
    assert check(raw, bob).hotkey_ss58 == alice.ss58_address
    h = signed(alice, bob)
    assert check(CaseInsensitiveMultiDict(h.items()), bob).hotkey_ss58 == alice.ss58_address


# --- every refusal --------------------------------------------------------------------------

def test_exception_classes():
    for cls, status in ((http_auth.MalformedAuth, 400), (http_auth.WrongReceiver, 401),
                        (http_auth.StaleRequest, 401), (http_auth.BadSignature, 401),
                        (http_auth.ReplayedRequest, 401)):
        assert issubclass(cls, http_auth.AuthError) and cls.status_code == status
    assert issubclass(http_auth.AuthError, Exception)
    assert not issubclass(http_auth.AuthError, ValueError)


@pytest.mark.parametrize("change", [
    {"X-Bittensor-Version": "2"},
    {"X-Bittensor-Nonce": "0123"},
    {"X-Bittensor-Nonce": "12.5"},
    {"X-Bittensor-Signature": "0x1234"},
    {"X-Bittensor-Signature": "0x" + "zz" * 64},
    {"X-Bittensor-Hotkey": "not-an-address"},
    {"X-Bittensor-Crypto": "ecdsa"},
    {"X-Bittensor-Hotkey": None},
])
def test_malformed(alice, bob, change):
    h = signed(alice, bob)
    for k, v in change.items():
        if v is None:
            del h[k]
        else:
            h[k] = v
    with pytest.raises(http_auth.MalformedAuth) as e:
        check(h, bob)
    assert str(e.value).startswith("MalformedAuth: ")


def test_duplicate_header_is_malformed(alice, bob):
    h = signed(alice, bob)
    pairs = list(h.items()) + [("x-bittensor-nonce", h["X-Bittensor-Nonce"])]
    with pytest.raises(http_auth.MalformedAuth, match="more than one X-Bittensor-Nonce"):
        check(CaseInsensitiveMultiDict(pairs), bob)
    with pytest.raises(http_auth.MalformedAuth, match="more than one"):
        check({**h, "x-bittensor-hotkey": h["X-Bittensor-Hotkey"]}, bob)


def test_wrong_receiver(alice, bob):
    charlie = bt.Keypair.from_uri("//Charlie")
    with pytest.raises(http_auth.WrongReceiver):
        check(signed(alice, charlie), bob)
    with pytest.raises(http_auth.WrongReceiver):
        check(signed(alice, None), bob)
    assert check(signed(alice, None), bob, require_receiver=False).hotkey_ss58 == alice.ss58_address
    # A bound request is checked even when binding is optional.
    with pytest.raises(http_auth.WrongReceiver):
        check(signed(alice, charlie), bob, require_receiver=False)


def test_stale_past_and_future(alice, bob):
    now = time.time_ns()
    old = signed(alice, bob, nonce_ns=now - 11 * 10**9)
    with pytest.raises(http_auth.StaleRequest, match="old"):
        check(old, bob, now_ns=now)
    assert check(old, bob, now_ns=now, max_age=12.0).nonce_ns == now - 11 * 10**9
    ahead = signed(alice, bob, nonce_ns=now + 3 * 10**9)
    with pytest.raises(http_auth.StaleRequest, match="future"):
        check(ahead, bob, now_ns=now)
    assert check(ahead, bob, now_ns=now, allowed_skew=4.0).nonce_ns == now + 3 * 10**9
    # Milliseconds instead of nanoseconds read as 1970.
    with pytest.raises(http_auth.StaleRequest):
        check(signed(alice, bob, nonce_ns=now // 10**6), bob)


@pytest.mark.parametrize("what", ["body", "path", "method", "key", "scheme"])
def test_bad_signature(alice, bob, what):
    h = signed(alice, bob)
    kw = {}
    if what == "body":
        kw["body"] = BODY + b" "
    elif what == "path":
        kw["path"] = "/forward?"
    elif what == "method":
        kw["method"] = "PUT"
    elif what == "key":
        h["X-Bittensor-Hotkey"] = bt.Keypair.from_uri("//Eve").ss58_address
    else:
        h["X-Bittensor-Crypto"] = "ed25519"  # the declared scheme only: no fallback
    with pytest.raises(http_auth.BadSignature):
        check(h, bob, **kw)
    assert check(h if what not in ("key", "scheme") else signed(alice, bob), bob).hotkey_ss58


def test_method_case_is_folded(alice, bob):
    assert check(signed(alice, bob, method="post"), bob, method="Post").hotkey_ss58


# --- the replay stores ----------------------------------------------------------------------

def test_replay_in_memory(alice, bob):
    store = http_auth.InMemoryNonceStore(retention=60.0)
    h = signed(alice, bob)
    check(h, bob, nonce_store=store)
    with pytest.raises(http_auth.ReplayedRequest):
        check(h, bob, nonce_store=store)
    assert len(store) == 1


def test_default_store_is_shared_per_process(alice, bob):
    h = signed(alice, bob)
    http_auth.verify(h, BODY, method="POST", path="/forward", self_hotkey_ss58=bob.ss58_address)
    with pytest.raises(http_auth.ReplayedRequest):
        http_auth.verify(h, BODY, method="POST", path="/forward",
                         self_hotkey_ss58=bob.ss58_address)


def test_nothing_recorded_before_the_signature_verified(alice, bob):
    store = http_auth.InMemoryNonceStore()
    h = signed(alice, bob)
    forged = dict(h, **{"X-Bittensor-Signature": "0x" + "00" * 64})
    with pytest.raises(http_auth.BadSignature):
        check(forged, bob, nonce_store=store)
    assert len(store) == 0
    assert check(h, bob, nonce_store=store).hotkey_ss58 == alice.ss58_address


def test_any_object_with_check_and_store(alice, bob):
    class Store:
        retention = 30.0

        def __init__(self):
            self.calls = []

        def check_and_store(self, hotkey, nonce_ns):
            self.calls.append((hotkey, nonce_ns))
            return len(self.calls) == 1

    s = Store()
    h = signed(alice, bob)
    check(h, bob, nonce_store=s)
    with pytest.raises(http_auth.ReplayedRequest):
        check(h, bob, nonce_store=s)
    assert s.calls == [(alice.ss58_address, int(h["X-Bittensor-Nonce"]))] * 2


def test_a_subclass_of_the_memory_store_is_called_through_python(alice, bob):
    class Counting(http_auth.InMemoryNonceStore):
        calls = 0

        def check_and_store(self, hotkey, nonce_ns):
            Counting.calls += 1
            return super().check_and_store(hotkey, nonce_ns)

    store = Counting(retention=30.0)
    h = signed(alice, bob)
    check(h, bob, nonce_store=store)
    with pytest.raises(http_auth.ReplayedRequest):
        check(h, bob, nonce_store=store)
    assert Counting.calls == 2 and len(store) == 1


def test_retention_shorter_than_the_window_is_refused(alice, bob):
    h = signed(alice, bob)
    with pytest.raises(ValueError, match="retention"):
        check(h, bob, nonce_store=http_auth.InMemoryNonceStore(retention=11.9))
    assert check(h, bob, nonce_store=http_auth.InMemoryNonceStore(retention=12.0)).hotkey_ss58
    with pytest.raises(ValueError, match="retention"):
        check(signed(alice, bob), bob, max_age=100.0)  # the default store keeps 60 s
    with pytest.raises(ValueError):
        http_auth.InMemoryNonceStore(retention=-1.0)


def test_memory_store_forgets_after_retention():
    store = http_auth.InMemoryNonceStore(retention=0.05)
    assert store.check_and_store("a", 1) and not store.check_and_store("a", 1)
    assert store.check_and_store("a", 2) and store.check_and_store("b", 1)
    time.sleep(0.1)  # past the retention: the monotonic clock guarantees expiry, not a timing check
    assert len(store) == 0
    assert store.check_and_store("a", 1)
    assert store.check_and_store("a 1", 2) and store.check_and_store("a", 12)  # keys never collide


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_ping(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture(scope="module")
def redis_port():
    """A redis-server on a free loopback port, without persistence; stopped at the end. Fails
    (never skips) when redis-server is not installed."""
    exe = shutil.which("redis-server")
    assert exe, "redis-server is not on PATH (scripts/setup installs it)"
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
    for _ in range(5):
        port = free_port()
        proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                 "--appendonly", "no"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env)
        end = time.monotonic() + 10
        while proc.poll() is None and not redis_ping(port) and time.monotonic() < end:
            time.sleep(0.02)
        if proc.poll() is None and redis_ping(port):
            break
        proc.kill()
        proc.wait()
    else:
        pytest.fail("redis-server did not start on 5 free ports in a row")
    try:
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_replay_in_redis(alice, bob, redis_port):
    url = f"redis://127.0.0.1:{redis_port}/0"
    a = http_auth.RedisNonceStore(url, retention=30.0, prefix="t1")
    b = http_auth.RedisNonceStore(url, retention=30.0, prefix="t1")  # another process's store
    h = signed(alice, bob)
    assert check(h, bob, nonce_store=a).hotkey_ss58 == alice.ss58_address
    with pytest.raises(http_auth.ReplayedRequest):
        check(h, bob, nonce_store=b)
    assert a.key(alice.ss58_address, 5) == f"t1:{alice.ss58_address}:5"
    with socket.create_connection(("127.0.0.1", redis_port), timeout=5) as s:
        key = a.key(alice.ss58_address, int(h["X-Bittensor-Nonce"])).encode()
        s.sendall(b"*2\r\n$3\r\nTTL\r\n$%d\r\n%s\r\n" % (len(key), key))
        ttl = int(s.recv(64)[1:].strip())
    assert 0 < ttl <= 30
    with pytest.raises(ValueError, match="retention"):
        check(signed(alice, bob), bob, nonce_store=http_auth.RedisNonceStore(url, retention=5.0))
    a.close()
    assert a.check_and_store("x", 1) and not b.check_and_store("x", 1)  # reconnected


def test_redis_store_with_a_client_object(alice, bob):
    class FakeRedis:  # redis-py's set(): True when stored, None when NX found the key
        def __init__(self):
            self.keys, self.calls = set(), []

        def set(self, key, value, nx=False, ex=None):
            self.calls.append((key, value, nx, ex))
            if nx and key in self.keys:
                return None
            self.keys.add(key)
            return True

    client = FakeRedis()
    store = http_auth.RedisNonceStore(client, retention=12.5, prefix="p")
    h = signed(alice, bob)
    check(h, bob, nonce_store=store)
    with pytest.raises(http_auth.ReplayedRequest):
        check(h, bob, nonce_store=store)
    assert client.calls[0] == (f"p:{alice.ss58_address}:{h['X-Bittensor-Nonce']}", 1, True, 13)


def test_redis_unreachable_fails_closed(alice, bob):
    store = http_auth.RedisNonceStore(f"redis://127.0.0.1:{free_port()}", timeout=1.0)
    with pytest.raises(ConnectionError):
        check(signed(alice, bob), bob, nonce_store=store)
    with pytest.raises(ValueError):
        http_auth.RedisNonceStore("http://nowhere")


# --- the GIL ----------------------------------------------------------------------------------

def test_gil_released_while_verifying(alice, bob):
    """With a switch interval of an hour, a thread holding the GIL keeps it until it blocks or
    releases it itself. The main thread can therefore observe phase == "verifying" only if verify
    released the GIL between the worker setting it and verify returning."""
    big = os.urandom(16 << 20)  # hashing it takes long enough for the main thread to wake up
    store = http_auth.InMemoryNonceStore()
    old = sys.getswitchinterval()
    seen = False
    try:
        sys.setswitchinterval(3600)
        for _ in range(5):
            h = signed(alice, bob, body=big)
            state = {"phase": "start", "caller": None}

            def work():
                state["phase"] = "verifying"
                state["caller"] = check(h, bob, body=big, nonce_store=store)
                state["phase"] = "done"

            t = threading.Thread(target=work)
            t.start()
            while state["phase"] != "done":
                if state["phase"] == "verifying":
                    seen = True
                time.sleep(0)  # blocks briefly: lets the worker take the GIL back
            t.join()
            assert state["caller"].hotkey_ss58 == alice.ss58_address
            if seen:
                break
    finally:
        sys.setswitchinterval(old)
    assert seen, "verify held the GIL for its whole run"


def test_threads_verify_concurrently_and_correctly(alice, bob):
    store = http_auth.InMemoryNonceStore()
    requests = [signed(alice, bob, body=b"%d" % i) for i in range(200)]
    results, errors = [None] * len(requests), []

    def work(start):
        try:
            for i in range(start, len(requests), 4):
                c = check(requests[i], bob, body=b"%d" % i, nonce_store=store)
                results[i] = c.nonce_ns
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert results == [int(h["X-Bittensor-Nonce"]) for h in requests]
    assert len(store) == len(requests)


# --- the stubs and docs/python.md ------------------------------------------------------------

def test_stub_declares_every_public_name():
    import ast
    tree = ast.parse((ROOT / "python" / "bittensor_cpp.pyi").read_text())
    ns = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "http_auth")
    declared = {n.name for n in ns.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    public = {n for n in dir(http_auth) if not n.startswith("_")}
    assert public == declared


def test_docs_snippet_runs(alice, bob):
    text = (ROOT / "docs" / "python.md").read_text()
    section = text.split("## Swapping `bittensor.http_auth`", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    scope = {}
    exec(compile(code, "docs/python.md", "exec"), scope)  # noqa: S102 - the doc's own example
    miner, validator = scope["MINER"], scope["VALIDATOR"]
    h = scope["signed_headers"](validator, miner.ss58_address, "/forward", BODY)
    assert scope["authenticate"](h, BODY, "POST", "/forward") == validator.ss58_address
    status, detail = scope["authenticate_or_status"](h, BODY, "POST", "/forward")
    assert status == 401 and detail.startswith("ReplayedRequest")
