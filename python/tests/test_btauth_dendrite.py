"""btauth/1 and the mixed fan-out from the module's Dendrite: btauth_call and async_btauth_call
against bt-axon's POST /echo (which accepts Epistula and btauth/1), a request signed for another
hotkey, query_mixed and forward_mixed to bt-axon serving all three dialects (the Dummy synapse and
/echo twice), close() while a btauth_call waits on a peer that never answers, and calls from many
threads at once."""
import asyncio
import socket
import threading

import pytest

import bittensor_cpp as bt
from conftest import wait_until


def echoed(signer, value):
    """What bt-axon's /echo answers to a JSON object `value` signed by `signer`."""
    return {**value, "signed_by": signer.ss58_address}


def test_btauth_call_to_bt_axon_echo(bt_axon, alice):
    with bt.Dendrite(alice, verify_responses="required") as d:
        r = d.btauth_call(bt_axon, "POST", "/echo", {"a": 1, "b": [True, None]}, timeout=10)
        assert r.error is None and r.status == 200, r
        assert r.json() == echoed(alice, {"a": 1, "b": [True, None]})
        assert r.verified  # bt-axon signs over the nonce sent, with //Bob's hotkey
        assert r.nonce.isdigit() and r.uuid == ""
        assert r.process_time is not None and r.process_time > 0
        second = d.btauth_call(bt_axon, "POST", "/echo", b'{"n": 2}', timeout=10)
        assert second.status == 200 and second.json() == echoed(alice, {"n": 2})
        assert int(second.nonce) > int(r.nonce)  # a fresh nonce per request
        assert type(r) is bt.HttpCallResponse and bt.EpistulaResponse is bt.HttpCallResponse
        assert repr(r) == "HttpCallResponse(status=200, error=None, verified=True)"


def test_btauth_call_with_an_ed25519_hotkey(bt_axon):
    dave = bt.Keypair.from_uri("//Dave", crypto_type="ed25519")
    with bt.Dendrite(dave) as d:
        r = d.btauth_call(bt_axon, "POST", "/echo", {"x": 1}, timeout=10)
        assert r.status == 200 and r.json() == echoed(dave, {"x": 1}) and r.verified, r


def test_btauth_call_signed_for_another_hotkey_is_refused(bt_axon, alice):
    """The request names alice as its receiver (X-Bittensor-Receiver): bt-axon (//Bob) refuses it
    before its handler. The refusal is signed by bob, so a dendrite checking the answer against
    the hotkey it addressed refuses the answer as well (421)."""
    wrong = bt.AxonInfo(ip=bt_axon.ip, port=bt_axon.port, hotkey=alice.ss58_address)
    with bt.Dendrite(alice, verify_responses="off") as d:
        r = d.btauth_call(wrong, "POST", "/echo", {"a": 1}, timeout=10)
        assert r.error is None and r.status == 401, r
        assert r.json()["message"].startswith("WrongReceiver") and not r.verified
    with bt.Dendrite(alice) as d:
        r = d.btauth_call(wrong, "POST", "/echo", {"a": 1}, timeout=10)
        assert r.status == 421 and r.error == "response_unauthenticated", r
        assert r.body == b""


def test_async_btauth_call(bt_axon, alice):
    async def main(d):
        return await asyncio.gather(
            *[d.async_btauth_call(bt_axon, "POST", "/echo", {"i": i}, timeout=10)
              for i in range(16)])

    with bt.Dendrite(alice) as d:
        rs = asyncio.run(main(d))
        assert [r.status for r in rs] == [200] * 16
        assert [r.json() for r in rs] == [echoed(alice, {"i": i}) for i in range(16)]
        assert all(r.verified for r in rs)
        assert len({r.nonce for r in rs}) == 16
        # Called with no loop running: a coroutine that starts the call when awaited.
        r = asyncio.run(d.async_btauth_call(bt_axon, "POST", "/echo", "text", timeout=10))
        assert r.status == 200 and r.json() == {"body": "text", "signed_by": alice.ss58_address}
        unawaited = d.async_btauth_call(bt_axon, "POST", "/echo", {})
        assert asyncio.iscoroutine(unawaited)
        unawaited.close()


def test_btauth_call_bad_input(bt_axon, alice):
    with bt.Dendrite(alice) as d:
        with pytest.raises(TypeError):
            d.btauth_call(bt_axon, "POST", "/echo", {"s": {1}}, timeout=10)
        with pytest.raises(ValueError):
            d.btauth_call(bt_axon, "POST", "/echo", {}, timeout=0)
        with pytest.raises(TypeError):
            d.btauth_call(object(), "POST", "/echo", {}, timeout=10)
        r = d.btauth_call(bt_axon, "BAD METHOD", "/echo", {}, timeout=10)
        assert r.error == "invalid_address" and r.body == b""
        r = d.btauth_call(bt_axon, "POST", "no-slash", {}, timeout=10)
        assert r.error == "invalid_address"
        assert d.btauth_call(bt_axon, "POST", "/echo", {}, timeout=10).status == 200


def mixed_targets(axon):
    return [
        axon,  # a bare axon: a synapse target
        bt.MixedRequest(axon, "epistula", path="/echo", json_body={"q": 7}),
        bt.MixedRequest(axon, "btauth", method="POST", path="/echo", json_body=b'{"q": 8}'),
        bt.MixedRequest(axon, "synapse"),
        bt.MixedRequest(axon, "btauth", path="no slash"),  # cannot be sent: invalid_address
    ]


def check_mixed_answers(out, alice, Dummy):
    assert len(out) == 5
    for s in (out[0], out[3]):
        assert isinstance(s, bt.Synapse) and s.name == "Dummy"
        assert s.dendrite.status_code == 200 and s.dummy_output == 42, s.dendrite.status_message
    e, b, bad = out[1], out[2], out[4]
    assert isinstance(e, bt.HttpCallResponse) and isinstance(b, bt.HttpCallResponse)
    assert e.status == 200 and e.verified and e.uuid and not e.nonce, e
    assert e.json() == echoed(alice, {"q": 7})
    assert b.status == 200 and b.verified and b.nonce.isdigit() and not b.uuid, b
    assert b.json() == echoed(alice, {"q": 8})
    assert bad.error == "invalid_address"


def test_query_mixed_to_one_axon_serving_three_dialects(bt_axon, alice, Dummy):
    q = Dummy(dummy_input=21)
    with bt.Dendrite(alice) as d:
        check_mixed_answers(d.query_mixed(mixed_targets(bt_axon), q, timeout=10), alice, Dummy)
        assert q.dummy_output is None  # each synapse target answered a copy
        assert d.query_mixed([], timeout=10) == []
        # No synapse target: no synapse needed.
        [only] = d.query_mixed([bt.MixedRequest(bt_axon, "btauth", path="/echo")], timeout=10)
        assert only.status == 200 and only.json() == {"body": None,
                                                      "signed_by": alice.ss58_address}
    with bt.Dendrite(alice, max_concurrency=1) as d:  # one call at a time, still in order
        check_mixed_answers(d.query_mixed(mixed_targets(bt_axon), q, timeout=10), alice, Dummy)


def test_forward_mixed_awaitable(bt_axon, alice, Dummy):
    q = Dummy(dummy_input=21)

    async def main(d):
        return await d.forward_mixed(mixed_targets(bt_axon), q, timeout=10)

    with bt.Dendrite(alice) as d:
        check_mixed_answers(asyncio.run(main(d)), alice, Dummy)
        # Called with no loop running: a coroutine.
        out = asyncio.run(d.forward_mixed(mixed_targets(bt_axon), q, timeout=10))
        check_mixed_answers(out, alice, Dummy)


def test_mixed_request_values_and_bad_input(bt_axon, alice, Dummy):
    r = bt.MixedRequest(bt_axon, "btauth", path="/forward?round=3", json_body={"a": [1]})
    assert (r.dialect, r.method, r.path) == ("btauth", "POST", "/forward?round=3")
    assert r.json_body == b'{"a":[1]}' and r.axon == bt_axon
    assert repr(r) == f"MixedRequest({bt_axon.ip}:{bt_axon.port}, 'btauth', 'POST /forward?round=3')"
    assert bt.MixedRequest(bt_axon).dialect == "synapse"
    with pytest.raises(ValueError, match="dialect"):
        bt.MixedRequest(bt_axon, "grpc")
    with pytest.raises(ValueError, match="synapse target"):
        bt.MixedRequest(bt_axon, "synapse", path="/echo")
    with pytest.raises(TypeError):
        bt.MixedRequest(bt_axon, "btauth", path="/echo", json_body={"s": {1}})
    with pytest.raises(TypeError):
        bt.MixedRequest(object())
    with pytest.raises(AttributeError):
        r.path = "/other"  # immutable
    with bt.Dendrite(alice) as d:
        with pytest.raises(ValueError, match="needs a synapse"):
            d.query_mixed([bt_axon], timeout=10)
        with pytest.raises(ValueError, match="needs a synapse"):
            d.forward_mixed([bt.MixedRequest(bt_axon)])
        with pytest.raises(TypeError, match="Synapse"):
            d.query_mixed([bt_axon], {"dummy_input": 1}, timeout=10)
        with pytest.raises(TypeError):
            d.query_mixed([object()], Dummy(dummy_input=1), timeout=10)
        with pytest.raises(TypeError):
            d.query_mixed(bt_axon, Dummy(dummy_input=1), timeout=10)  # not a list
        with pytest.raises(ValueError):
            d.query_mixed([bt_axon], Dummy(dummy_input=1), timeout=-1)


@pytest.fixture
def silent_peer():
    """A loopback TCP server that reads requests and never answers; its AxonInfo (hotkey //Bob)
    and a function telling whether a btauth/1 request has arrived."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    received = bytearray()
    conns = []
    stop = threading.Event()
    lock = threading.Lock()

    def serve():
        while not stop.is_set():
            try:
                c, _ = listener.accept()
                c.settimeout(0.1)
                conns.append(c)
            except socket.timeout:
                pass
            for c in list(conns):
                try:
                    data = c.recv(65536)
                except socket.timeout:
                    continue
                except OSError:
                    data = b""
                if not data:
                    conns.remove(c)
                    c.close()
                with lock:
                    received.extend(data)

    t = threading.Thread(target=serve)
    t.start()

    def arrived():
        with lock:
            return b"x-bittensor-nonce" in bytes(received).lower()

    bob = bt.Keypair.from_uri("//Bob").ss58_address
    try:
        yield bt.AxonInfo(ip="127.0.0.1", port=listener.getsockname()[1], hotkey=bob), arrived
    finally:
        stop.set()
        t.join(10)
        for c in conns:
            c.close()
        listener.close()


def test_close_while_a_btauth_call_waits(silent_peer, bt_axon, alice):
    """The peer never answers: close() from another thread ends the 60 s call with 503
    "cancelled"; the Dendrite then refuses every call. The GIL is released while the call waits:
    the peer's Python thread reads the request, and this thread sees it, meanwhile."""
    peer, arrived = silent_peer
    d = bt.Dendrite(alice)
    out = []
    t = threading.Thread(
        target=lambda: out.append(d.btauth_call(peer, "POST", "/echo", {}, timeout=60)))
    t.start()
    assert wait_until(arrived, 10), "the btauth/1 request never reached the peer"
    d.close()
    t.join(30)
    assert not t.is_alive(), "btauth_call outlived close()"
    assert out[0].status == 503 and out[0].error == "cancelled", out[0]
    with pytest.raises(ValueError, match="closed"):
        d.btauth_call(bt_axon, "POST", "/echo", {})
    with pytest.raises(ValueError, match="closed"):
        d.query_mixed([bt.MixedRequest(bt_axon, "btauth", path="/echo")])
    with pytest.raises(ValueError, match="closed"):
        asyncio.run(d.async_btauth_call(bt_axon, "POST", "/echo", {}))


def test_cancelling_the_awaited_calls_ends_the_cpp_calls(silent_peer, alice):
    """async_btauth_call and forward_mixed to a peer that never answers, cancelled by
    asyncio.wait_for: the C++ calls end (nothing left in flight) long before their deadline,
    and the Dendrite goes on serving."""
    peer, _ = silent_peer

    async def cancelled(make):
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(make(), 0.2)

    with bt.Dendrite(alice) as d:
        asyncio.run(cancelled(lambda: d.async_btauth_call(peer, "POST", "/echo", {}, timeout=60)))
        assert wait_until(lambda: d.stats()["in_flight"] == 0, 10), d.stats()
        target = bt.MixedRequest(peer, "btauth", path="/echo")
        asyncio.run(cancelled(lambda: d.forward_mixed([target, target], timeout=60)))
        assert wait_until(lambda: d.stats()["in_flight"] == 0, 10), d.stats()
        assert d.stats()["calls"] == 3  # each ended (cancelled), none still waiting


def test_close_while_threads_make_btauth_and_mixed_calls(silent_peer, bt_axon, Dummy):
    """Threads keep calling btauth_call (answered and never answered), query_mixed and a
    forward_mixed they cancel while the main thread closes the dendrite: each call returns an
    answer or raises "Dendrite is closed"; none outlives close(). Signed by a key of its own
    (bt-axon's replay quota per hotkey: test_btauth_calls_from_many_threads)."""
    peer, _ = silent_peer
    eve = bt.Keypair.from_uri("//Eve")
    problems = []

    def until_closed(what, call):
        while True:
            try:
                call()
            except ValueError as e:
                if "Dendrite is closed" not in str(e):
                    problems.append(f"{what} raised {e!r}")
                return

    def btauth(d, axon):
        r = d.btauth_call(axon, "POST", "/echo", {"a": 1}, timeout=30)
        if r.status not in (200, 503):
            problems.append(f"btauth_call gave {r!r}")

    def mixed(d):
        rs = d.query_mixed([bt_axon, bt.MixedRequest(peer, "btauth", path="/echo")],
                           Dummy(dummy_input=1), timeout=30)
        if rs[0].dendrite.status_code not in (200, 503) or rs[1].status != 503:
            problems.append(f"query_mixed gave {rs[0].dendrite.status_code}, {rs[1]!r}")

    def cancelled_forward(d):
        async def one():
            try:
                await asyncio.wait_for(
                    d.forward_mixed([bt.MixedRequest(peer, "btauth", path="/echo")], timeout=30),
                    0.02)
            except asyncio.TimeoutError:
                pass
        asyncio.run(one())

    for _ in range(5):
        d = bt.Dendrite(eve, threads=2)
        workers = [threading.Thread(target=until_closed, args=a) for a in [
            ("btauth_call", lambda: btauth(d, bt_axon)),
            ("btauth_call", lambda: btauth(d, peer)),
            ("query_mixed", lambda: mixed(d)),
            ("forward_mixed", lambda: cancelled_forward(d)),
        ]]
        for w in workers:
            w.start()
        threading.Event().wait(0.05)
        d.close()
        for w in workers:
            w.join(60)
            assert not w.is_alive(), "a call outlived Dendrite.close()"
    assert not problems, problems[:10]


def test_btauth_calls_from_many_threads(bt_axon):
    """8 threads x 25 calls on one Dendrite: every answer is its own request's echo, verified,
    and no two requests share a nonce (bt-axon would refuse the second as a replay). Signed by a
    key of its own: bt-axon keeps one replay record per request for the btauth/1 window and
    answers 503 past 1024 records of one hotkey, a quota the other tests' //Alice shares."""
    charlie = bt.Keypair.from_uri("//Charlie")
    answers = []
    lock = threading.Lock()

    def work(k):
        mine = []
        for i in range(25):
            r = d.btauth_call(bt_axon, "POST", "/echo", {"k": k, "i": i}, timeout=10)
            mine.append((k, i, r))
        with lock:
            answers.extend(mine)

    with bt.Dendrite(charlie) as d:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
            assert not t.is_alive()
    assert len(answers) == 200
    for k, i, r in answers:
        assert r.status == 200 and r.verified, (k, i, r, r.body)
        assert r.json() == echoed(charlie, {"k": k, "i": i})
    assert len({r.nonce for _, _, r in answers}) == 200
