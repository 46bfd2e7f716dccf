"""Epistula v2 from Python: plain JSON routes on the module's Axon (Axon.route) called by the
module's Dendrite (epistula_call, async_epistula_call), bt-axon's POST /echo, a request signed
for another hotkey, response signatures (verify_responses, sign_responses) and bad input."""
import asyncio
import json
import logging
import threading

import pytest

import bittensor_cpp as bt
from conftest import wait_until


def sum_route(seen):
    def handler(body, data, ctx):
        seen.append((body, data, ctx))
        return 200, {"sum": sum(data["xs"]), "signed_by": ctx.hotkey}
    return handler


def test_python_route_answered_to_python_epistula_call(alice, bob):
    seen = []
    ax = bt.Axon(bob)
    ax.route("POST", "/sum", sum_route(seen))
    with ax, bt.Dendrite(alice) as d:
        r = d.epistula_call(ax.info(), "POST", "/sum", {"xs": [1, 2, 3]}, timeout=10)
        first_uuid = r.uuid
        assert r.error is None and r.status == 200, r
        assert r.json() == {"sum": 6, "signed_by": alice.ss58_address}
        assert r.verified  # the axon signs its answers; checked against bob's hotkey
        assert r.process_time is not None and r.process_time > 0
        assert r.header("content-type") == "application/json"
        assert r.header("Content-Type") == "application/json"
        assert r.header("no-such-header") is None
        # bytes go out verbatim; the handler sees those exact bytes and their parse
        raw = b'{"xs": [10, 20]}'
        r = d.epistula_call(ax.info(), "POST", "/sum", raw, timeout=10)
        assert r.status == 200 and r.json()["sum"] == 30
    assert len(seen) == 2
    body, data, ctx = seen[0]
    assert json.loads(body) == {"xs": [1, 2, 3]} and data == {"xs": [1, 2, 3]}
    assert isinstance(ctx, bt.RequestContext)
    assert ctx.hotkey == alice.ss58_address and ctx.verified and ctx.path == "/sum"
    assert ctx.uuid == first_uuid and first_uuid != r.uuid  # each call has its own
    assert ctx.ip == "127.0.0.1" and ctx.nonce > 0
    assert seen[1][0] == raw and seen[1][2].uuid == r.uuid


def test_async_route_and_awaitable_call(alice, bob):
    async def handler(body, data, ctx):
        await asyncio.sleep(0.01)
        return 201, {"got": data, "by": ctx.hotkey}

    ax = bt.Axon(bob)
    ax.route("POST", "/async", handler)
    ax.route("GET", "/health", lambda body, data, ctx: (200, {"ok": data is None}))

    async def main(info, d):
        return await asyncio.gather(
            *[d.async_epistula_call(info, "POST", "/async", {"i": i}, timeout=10)
              for i in range(16)],
            d.async_epistula_call(info, "GET", "/health", timeout=10))

    with ax, bt.Dendrite(alice) as d:
        rs = asyncio.run(main(ax.info(), d))
    assert [r.status for r in rs[:16]] == [201] * 16
    assert [r.json()["got"]["i"] for r in rs[:16]] == list(range(16))
    assert all(r.json()["by"] == alice.ss58_address and r.verified for r in rs[:16])
    assert rs[16].status == 200 and rs[16].json() == {"ok": True}


def test_bt_axon_echo_from_python(bt_axon, alice, bob):
    with bt.Dendrite(alice) as d:
        r = d.epistula_call(bt_axon, "POST", "/echo", {"a": 1, "b": [True, None]}, timeout=10)
        assert r.error is None and r.status == 200, r
        assert r.json() == {"a": 1, "b": [True, None], "signed_by": alice.ss58_address}
        assert r.verified  # bt-axon signs its answers with //Bob's hotkey

        async def main():
            return await d.async_epistula_call(bt_axon, "POST", "/echo", "text", timeout=10)

        r = asyncio.run(main())
        assert r.status == 200 and r.json() == {"body": "text", "signed_by": alice.ss58_address}


def test_wrong_signed_for_is_refused(bt_axon, alice, bob):
    """A request signed for another hotkey than the axon's is refused before any handler. The
    refusal is signed by the axon's own key, so a dendrite checking response signatures against
    the hotkey it addressed (the wrong one) also refuses the answer (421)."""
    calls = []
    ax = bt.Axon(bob)
    ax.route("POST", "/sum", sum_route(calls))
    with ax:
        targets = [ax.info(), bt_axon]
        for t in targets:
            wrong = bt.AxonInfo(ip=t.ip, port=t.port, hotkey=alice.ss58_address)
            with bt.Dendrite(alice, verify_responses="off") as d:
                path = "/sum" if t is targets[0] else "/echo"
                r = d.epistula_call(wrong, "POST", path, {"xs": [1]}, timeout=10)
                assert r.error is None and r.status == 401, r
                assert "Signed-For" in r.json()["message"] and not r.verified
            with bt.Dendrite(alice) as d:  # if_present: the answer's signature is bob's
                r = d.epistula_call(wrong, "POST", path, {"xs": [1]}, timeout=10)
                assert r.status == 421 and r.error == "response_unauthenticated", r
    assert calls == []


def test_required_against_an_unsigned_axon(alice, bob, Dummy):
    ax = bt.Axon(bob, sign_responses=False)
    ax.route("POST", "/sum", sum_route([]))
    ax.attach(Dummy, lambda s: setattr(s, "dummy_output", s.dummy_input * 2))
    with ax:
        with bt.Dendrite(alice, verify_responses="required") as d:
            r = d.epistula_call(ax.info(), "POST", "/sum", {"xs": [1]}, timeout=10)
            assert r.status == 421 and r.error == "response_unauthenticated", r
            assert r.body == b"" and not r.verified
            s = d.query(ax.info(), Dummy(dummy_input=2), timeout=10)
            assert s.dendrite.status_code == 421 and s.dummy_output is None
        with bt.Dendrite(alice, verify_responses="if_present") as d:
            r = d.epistula_call(ax.info(), "POST", "/sum", {"xs": [1]}, timeout=10)
            assert r.status == 200 and r.error is None and not r.verified
        # and the same client accepts a signing axon
        ax2 = bt.Axon(bob)
        ax2.route("POST", "/sum", sum_route([]))
        with ax2, bt.Dendrite(alice, verify_responses="required") as d:
            r = d.epistula_call(ax2.info(), "POST", "/sum", {"xs": [4]}, timeout=10)
            assert r.status == 200 and r.verified and r.json()["sum"] == 4


def test_handler_errors_and_return_values(alice, bob, caplog):
    def boom(body, data, ctx):
        raise RuntimeError("secret detail")

    def chosen(body, data, ctx):
        raise bt.ForwardError(429, "slow down")

    ax = bt.Axon(bob)
    ax.route("POST", "/boom", boom)
    ax.route("POST", "/chosen", chosen)
    ax.route("POST", "/dict", lambda b, d, c: {"status": 200})
    ax.route("POST", "/badstatus", lambda b, d, c: (99, {}))
    ax.route("POST", "/boolstatus", lambda b, d, c: (True, {}))
    ax.route("POST", "/notjson", lambda b, d, c: (200, {"x": {1, 2}}))
    ax.route("POST", "/ok", lambda b, d, c: (200, d))
    with caplog.at_level(logging.ERROR, logger="bittensor_cpp"), ax, \
            bt.Dendrite(alice) as d:
        r = d.epistula_call(ax.info(), "POST", "/boom", {}, timeout=10)
        assert r.status == 500 and r.json()["message"].startswith("Internal Server Error #")
        assert "secret detail" not in r.body.decode()
        error_id = r.json()["message"].split("#", 1)[1]
        r = d.epistula_call(ax.info(), "POST", "/chosen", {}, timeout=10)
        assert r.status == 429 and r.json()["message"] == "slow down"
        for path in ["/dict", "/badstatus", "/boolstatus", "/notjson"]:
            r = d.epistula_call(ax.info(), "POST", path, {}, timeout=10)
            assert r.status == 500, (path, r)
        r = d.epistula_call(ax.info(), "POST", "/ok", b"", timeout=10)
        assert r.status == 200 and r.json() is None  # an empty body is JSON null
        r = d.epistula_call(ax.info(), "POST", "/ok", b"{not json", timeout=10)
        assert r.status == 400
        r = d.epistula_call(ax.info(), "POST", "/nowhere", {}, timeout=10)
        assert r.status == 404
    logged = "\n".join(rec.getMessage() for rec in caplog.records)
    assert error_id in logged and "secret detail" in logged and "Traceback" in logged


def test_route_policy_and_deadline(alice, bob):
    cancelled = threading.Event()
    priorities = []

    async def slow(body, data, ctx):
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    def priority(ctx):
        priorities.append(ctx.hotkey)
        return 1.0

    ax = bt.Axon(bob)
    ax.route("POST", "/slow", slow, timeout=1.0)
    ax.route("POST", "/only-bob", lambda b, d, c: (200, {}),
             blacklist=lambda ctx: (ctx.hotkey != bob.ss58_address, "not bob"),
             priority=priority)
    with ax, bt.Dendrite(alice) as d:
        r = d.epistula_call(ax.info(), "POST", "/slow", {}, timeout=10)
        assert r.status == 408, r
        assert wait_until(cancelled.is_set, 10), "the async handler was not cancelled"
        r = d.epistula_call(ax.info(), "POST", "/only-bob", {}, timeout=10)
        assert r.status == 403 and "not bob" in r.json()["message"]
        with bt.Dendrite(bob) as d2:
            r = d2.epistula_call(ax.info(), "POST", "/only-bob", {}, timeout=10)
            assert r.status == 200
    assert priorities == [bob.ss58_address]


def test_bad_input(alice, bob):
    with pytest.raises(ValueError, match="verify_responses"):
        bt.Dendrite(alice, verify_responses="sometimes")
    with pytest.raises(TypeError, match="sign_responses"):
        bt.Axon(bob, sign_responses="yes")
    ax = bt.Axon(bob)
    with pytest.raises(TypeError):
        ax.route("POST", "/x", "not callable")
    with pytest.raises(TypeError):
        ax.route("POST", "/x", lambda b, d, c: (200, {}), blacklist=42)
    with pytest.raises(ValueError):
        ax.route("PUT", "/x", lambda b, d, c: (200, {}))
    with pytest.raises(ValueError):
        ax.route("POST", "no-slash", lambda b, d, c: (200, {}))
    with pytest.raises(ValueError):
        ax.route("POST", "/x", lambda b, d, c: (200, {}), timeout=0)
    ax.route("POST", "/x", lambda b, d, c: (200, {}))
    with pytest.raises(RuntimeError):
        ax.route("POST", "/x", lambda b, d, c: (200, {}))  # served already
    with ax, bt.Dendrite(alice) as d:
        with pytest.raises(TypeError):
            d.epistula_call(ax.info(), "POST", "/x", {"s": {1}}, timeout=10)
        with pytest.raises(ValueError):
            d.epistula_call(ax.info(), "POST", "/x", {}, timeout=-1)
        with pytest.raises(TypeError):
            d.epistula_call(object(), "POST", "/x", {}, timeout=10)
        r = d.epistula_call(ax.info(), "BAD METHOD", "/x", {}, timeout=10)
        assert r.error == "invalid_address" and r.body == b""
        r = d.epistula_call(ax.info(), "POST", "/x y", {}, timeout=10)
        assert r.error == "invalid_address"
        unawaited = d.async_epistula_call(ax.info(), "POST", "/x", {})  # no loop: a coroutine
        assert asyncio.iscoroutine(unawaited)
        unawaited.close()
        r = d.epistula_call(ax.info(), "POST", "/x", {}, timeout=10)
        assert r.status == 200  # the axon still serves
