"""Whatever the Python code does, the interpreter must not crash: stress tests (threads, repeated,
bounded) for a streaming send kept past its forward, Dendrite.close() racing calls on other
threads, values nested without bound or containing themselves, and policy functions that raise
or return the wrong type. In the ASan build (ctest "python: pytest") a use after free or a stack
overflow aborts the run."""
import asyncio
import logging
import random
import threading
import typing

import pytest

import bittensor_cpp as bt

from conftest import collect

WordStream = bt.SynapseType("WordStream", {"text": str, "words": typing.List[str]},
                            required=["text"], hash_fields=["text"], defaults={"words": []})
AnyBox = bt.SynapseType("AnyBox", {"x": typing.Any, "xs": typing.Optional[typing.List[typing.Any]]})

# Bounds of the stress tests: fixed counts, never a duration.
STREAM_ROUNDS = 60
CLOSE_ROUNDS = 50
CONVERT_THREADS, CONVERT_ROUNDS = 8, 200


def nested_list(depth):
    """A list `depth` levels deep: [[[...[]...]]] built without recursion."""
    outer = cur = []
    for _ in range(depth - 1):
        nxt = []
        cur.append(nxt)
        cur = nxt
    return outer


# ------------------------------------------------------------------ streaming send past the end

def test_send_from_a_thread_the_forward_left_running(alice, bob):
    """The forward starts a thread that keeps calling send() and returns at once. The forward's
    end waits for the send in flight; every later send raises RuntimeError (before: the writer
    was freed under a running send, a crash within a second)."""
    outcomes, threads = [], []
    lock = threading.Lock()

    def sender(send):
        result = "never raised"
        for _ in range(200000):  # ends at the first RuntimeError, long before this bound
            try:
                send(b"x")
            except RuntimeError as e:
                result = str(e)
                break
        with lock:
            outcomes.append(result)

    def forward(s, send):
        t = threading.Thread(target=sender, args=(send,))
        threads.append(t)
        t.start()
        if s.text == "wait-a-little":  # a forward that returns while sends overlap its end
            send(b"x")

    ax = bt.Axon(bob)
    ax.attach(WordStream, forward, streaming=True)
    with ax, bt.Dendrite(alice) as d:
        for i in range(STREAM_ROUNDS):
            text = "wait-a-little" if i % 2 else "return-now"
            body, final = asyncio.run(collect(d, ax.info(), WordStream(text=text)))
            assert final.dendrite.status_code == 200
            assert set(body) <= {ord("x")}
    for t in threads:
        t.join(30)
        assert not t.is_alive(), "a sender never saw send() raise"
    assert len(outcomes) == STREAM_ROUNDS
    assert all("after the streaming forward returned" in o for o in outcomes), outcomes


def test_send_kept_past_the_forward_raises_and_open_is_false(alice, bob):
    kept = []

    def forward(s, send):
        assert send.open
        kept.append(send)

    ax = bt.Axon(bob)
    ax.attach(WordStream, forward, streaming=True)
    with ax, bt.Dendrite(alice) as d:
        _, final = asyncio.run(collect(d, ax.info(), WordStream(text="x")))
    assert final.dendrite.status_code == 200
    assert kept and kept[0].open is False
    with pytest.raises(RuntimeError, match="after the streaming forward returned"):
        kept[0](b"late")


# ------------------------------------------------------------------ Dendrite.close() racing calls

Hang = bt.SynapseType("Hang", {})


@pytest.fixture
def hang_axon(bob):
    """A module axon whose Hang route never answers (an async forward sleeping past every
    deadline here; it holds no thread). Its own, so that the calls left hanging do not hold
    bt-axon's workers for the tests after this one; stop() cancels them."""
    async def hang(s):
        await asyncio.sleep(120)

    ax = bt.Axon(bob, max_queued_requests=4096, drain_timeout=0.5)
    ax.attach(Hang, hang)
    with ax:
        yield ax.info()


def test_close_while_other_threads_query(bt_axon, hang_axon, alice, Dummy):
    """Threads keep calling query([a, b]), query(a), epistula_call and an asyncio forward that
    they cancel, some on a route that never answers, while the main thread closes the dendrite.
    Every call returns a result (200, or 503 for a call close() cut short) or raises ValueError
    "Dendrite is closed"; nothing crashes or hangs (before: a segfault or a query that never
    returned)."""
    rng = random.Random(7)
    problems = []
    cut_short = []  # calls close() ended with 503 "Request cancelled"

    def record(what):
        problems.append(what)

    def fan_out(d, axon, synapse, ok):
        while True:
            try:
                rs = d.query([axon, axon], synapse, timeout=30)
            except ValueError as e:
                if "Dendrite is closed" not in str(e):
                    record(f"query([a, b]) raised {e!r}")
                return
            codes = [r.dendrite.status_code for r in rs]
            if len(rs) != 2 or any(c not in ok for c in codes):
                record(f"query([a, b]) gave {codes}")
            cut_short.extend(c for c in codes if c == 503)

    def single(d, axon, synapse, ok):
        while True:
            try:
                r = d.query(axon, synapse, timeout=30)
            except ValueError as e:
                if "Dendrite is closed" not in str(e):
                    record(f"query(a) raised {e!r}")
                return
            if r.dendrite.status_code not in ok:
                record(f"query(a) gave {r.dendrite.status_code}")
            if r.dendrite.status_code == 503:
                cut_short.append(503)

    def epistula(d):
        while True:
            try:
                r = d.epistula_call(bt_axon, "POST", "/no-such-route", {"a": 1}, timeout=30)
            except ValueError as e:
                if "Dendrite is closed" not in str(e):
                    record(f"epistula_call raised {e!r}")
                return
            if r.status == 0:
                record("epistula_call without a status")

    def cancelled_forwards(d):
        async def one():
            try:
                await asyncio.wait_for(d.forward([hang_axon], Hang(), timeout=30), 0.02)
            except asyncio.TimeoutError:
                pass

        while True:
            try:
                asyncio.run(one())
            except ValueError as e:
                if "Dendrite is closed" not in str(e):
                    record(f"forward raised {e!r}")
                return

    for _ in range(CLOSE_ROUNDS):
        d = bt.Dendrite(alice, threads=2)
        dummy = Dummy(dummy_input=4)
        workers = [
            threading.Thread(target=fan_out, args=(d, bt_axon, dummy, {200, 503})),
            threading.Thread(target=fan_out, args=(d, hang_axon, Hang(), {503})),
            threading.Thread(target=single, args=(d, bt_axon, dummy, {200, 503})),
            threading.Thread(target=single, args=(d, hang_axon, Hang(), {503})),
            threading.Thread(target=epistula, args=(d,)),
            threading.Thread(target=cancelled_forwards, args=(d,)),
        ]
        for w in workers:
            w.start()
        threading.Event().wait(rng.uniform(0.0, 0.05))
        d.close()
        for w in workers:
            w.join(60)  # close() cancels the Hang calls: 503 long before their 30 s deadline
            assert not w.is_alive(), "a call outlived Dendrite.close()"
        with pytest.raises(ValueError, match="Dendrite is closed"):
            d.query([bt_axon, bt_axon], dummy, timeout=5)
        with pytest.raises(ValueError, match="Dendrite is closed"):
            d.query(bt_axon, dummy, timeout=5)
    assert not problems, problems[:10]
    assert cut_short, "close() never overlapped a running call"


def test_close_from_two_threads_at_once(bt_axon, alice, Dummy):
    for _ in range(10):
        d = bt.Dendrite(alice)
        closers = [threading.Thread(target=d.close) for _ in range(3)]
        for c in closers:
            c.start()
        for c in closers:
            c.join(30)
            assert not c.is_alive()
        with pytest.raises(ValueError, match="Dendrite is closed"):
            d.query(bt_axon, Dummy(dummy_input=1), timeout=5)


# ------------------------------------------------------------------ Axon.stop() with async forwards

STOP_ROUNDS = 30


def test_stop_while_async_forwards_wait(alice, bob):
    """Rounds of: an axon whose async forward never returns, callers that give up on it (their
    requests stay in flight on the axon), then stop(). The forwards' Python futures complete
    (cancelled) after the axon is gone; their done-callbacks must not touch its io_contexts
    (before: a timer destroyed after its io_context, an abort in about one run in four)."""
    async def hang(s):
        await asyncio.sleep(120)

    for _ in range(STOP_ROUNDS):
        ax = bt.Axon(bob, max_queued_requests=4096, drain_timeout=0.2)
        ax.attach(Hang, hang)
        with ax, bt.Dendrite(alice, threads=2) as d:
            info = ax.info()

            async def give_up():
                try:
                    await asyncio.wait_for(d.forward([info], Hang(), timeout=30), 0.02)
                except asyncio.TimeoutError:
                    return True
                return False

            async def main():
                return await asyncio.gather(*[give_up() for _ in range(8)])

            assert all(asyncio.run(main()))
        assert not ax.running


# ------------------------------------------------------------------ depth and cycles

LIMIT = bt.get_max_json_depth()


def test_default_limit_is_64():
    assert LIMIT == 64


def test_a_list_containing_itself():
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match=r"x\[0\]: the value contains itself"):
        AnyBox(x=loop)
    with pytest.raises(ValueError, match="contains itself"):
        AnyBox(xs=[1, loop])
    s = AnyBox()
    with pytest.raises(ValueError, match="contains itself"):
        s.x = {"a": [loop]}
    t = ([],)
    t[0].append(t)  # a tuple reached again through the list it holds
    with pytest.raises(ValueError, match="contains itself"):
        AnyBox(x=t)
    with pytest.raises(ValueError, match="contains itself"):
        bt.SynapseType("Box", {"x": typing.Any}, defaults={"x": loop})


def test_shared_but_acyclic_values_are_fine():
    leaf = [1, 2]
    s = AnyBox(x=[leaf, leaf, {"a": leaf, "b": leaf}])
    assert s.x == [[1, 2], [1, 2], {"a": [1, 2], "b": [1, 2]}]


def test_a_200000_deep_list_names_the_limit():
    with pytest.raises(ValueError, match=f"deeper than {LIMIT} levels"):
        AnyBox(x=nested_list(200000))
    deep_dict = cur = {}
    for _ in range(200000):
        cur["k"] = {}
        cur = cur["k"]
    with pytest.raises(ValueError, match=f"deeper than {LIMIT} levels"):
        AnyBox(x=deep_dict)


def test_the_limit_itself_is_accepted():
    assert AnyBox(x=nested_list(LIMIT)).x == nested_list(LIMIT)
    with pytest.raises(ValueError, match=f"deeper than {LIMIT} levels"):
        AnyBox(x=nested_list(LIMIT + 1))


def test_epistula_bodies_cyclic_or_too_deep(alice, bob):
    body = {}
    body["self"] = body
    info = bt.AxonInfo(ip="127.0.0.1", port=1, hotkey=bob.ss58_address)
    with bt.Dendrite(alice) as d:
        with pytest.raises(ValueError, match=r"json_body\.self: the value contains itself"):
            d.epistula_call(info, "POST", "/x", body, timeout=5)
        with pytest.raises(ValueError, match=f"deeper than {LIMIT} levels"):
            d.epistula_call(info, "POST", "/x", nested_list(200000), timeout=5)

        async def main():
            with pytest.raises(ValueError, match="contains itself"):
                await d.async_epistula_call(info, "POST", "/x", body, timeout=5)

        asyncio.run(main())


def test_route_handler_returning_a_cycle_is_500(alice, bob, caplog):
    def handler(body, parsed, ctx):
        loop = []
        loop.append(loop)
        return 200, {"loop": loop} if parsed.get("cycle") else nested_list(200000)

    ax = bt.Axon(bob)
    ax.route("POST", "/loop", handler)
    with caplog.at_level(logging.ERROR, logger="bittensor_cpp"), ax, bt.Dendrite(alice) as d:
        for cycle in (True, False):
            r = d.epistula_call(ax.info(), "POST", "/loop", {"cycle": cycle}, timeout=10)
            assert r.status == 500
    logged = "\n".join(rec.getMessage() for rec in caplog.records)
    assert "contains itself" in logged and f"deeper than {LIMIT} levels" in logged


def test_deeply_nested_field_types():
    t = int
    for _ in range(200):
        t = typing.List[t]
    with pytest.raises(ValueError, match=f"field type nested deeper than {LIMIT} levels"):
        bt.SynapseType("Deep", {"x": t})


def test_the_limit_is_configurable_and_bounds_json_to_python():
    s = AnyBox(x=nested_list(6))
    try:
        bt.set_max_json_depth(4)
        assert bt.get_max_json_depth() == 4
        with pytest.raises(ValueError, match="deeper than 4 levels"):
            AnyBox(x=nested_list(5))
        assert AnyBox(x=nested_list(4)).x == nested_list(4)
        with pytest.raises(ValueError, match="a JSON value nested deeper than 4 levels"):
            s.x  # JSON -> Python walks the same limit
        for bad in (0, 1025):
            with pytest.raises(ValueError, match="from 1 to 1024"):
                bt.set_max_json_depth(bad)
    finally:
        bt.set_max_json_depth(LIMIT)
    assert s.x == nested_list(6)


def test_conversions_from_many_threads():
    """Deep and cyclic values converted on several threads at once: each raises the documented
    ValueError, each acceptable value converts."""
    loop = []
    loop.append(loop)
    deep = nested_list(5000)
    good = {"a": [1, 2.5, "s", None, True, {"b": []}]}
    problems = []

    def work(seed):
        rng = random.Random(seed)
        for _ in range(CONVERT_ROUNDS):
            pick = rng.randrange(3)
            try:
                s = AnyBox(x=(loop, deep, good)[pick])
            except ValueError as e:
                if pick == 2 or ("contains itself" not in str(e) and "deeper than" not in str(e)):
                    problems.append(repr(e))
                continue
            if pick != 2 or s.x != good:
                problems.append(f"pick {pick} converted")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(CONVERT_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
        assert not t.is_alive()
    assert not problems, problems[:10]


def test_random_values_round_trip_or_raise():
    """A small property test of the conversion (in place of a libFuzzer target, which would need
    an embedded interpreter): random JSON-like values, some with cycles or beyond the limit,
    either round-trip exactly or raise TypeError/ValueError."""
    rng = random.Random(1234)

    def value(depth):
        kind = rng.randrange(10 if depth < 70 else 6)
        if kind == 0:
            return None
        if kind == 1:
            return rng.random() < 0.5
        if kind == 2:
            return rng.randrange(-2**63, 2**64)
        if kind == 3:
            return rng.uniform(-1e300, 1e300)
        if kind == 4:
            return "".join(chr(rng.randrange(1, 0x2FFF)) for _ in range(rng.randrange(5)))
        if kind == 5:
            return rng.choice([float("nan"), 2**64, object(), b"bytes", {1: 2}])
        if kind in (6, 7):
            return [value(depth + 1) for _ in range(rng.randrange(3))]
        return {f"k{i}": value(depth + 1) for i in range(rng.randrange(3))}

    converted = refused = 0
    for _ in range(400):
        v = [value(0)]
        if rng.random() < 0.1:
            v.append(v)
        try:
            s = AnyBox(x=v)
        except (TypeError, ValueError):
            refused += 1
            continue
        assert s.x == v
        converted += 1
    assert converted and refused


# ------------------------------------------------------------------ priority and blacklist

class NoFloat:
    def __float__(self):
        raise ValueError("not today")


def raises(s):
    raise RuntimeError("broken priority")


@pytest.mark.parametrize("priority", [raises, lambda s: "high", lambda s: None,
                                      lambda s: 10**400, lambda s: NoFloat()],
                         ids=["raises", "str", "None", "huge int", "bad __float__"])
def test_broken_priority_counts_as_zero(alice, bob, Dummy, priority, caplog):
    """docs/python.md: an exception in priority (or a value that is not a number) counts as
    priority 0 and is logged; the request is served (before: a 500 for a wrong return type, as
    logging an error without a traceback raised in C++)."""
    Ping = bt.SynapseType("Synapse", {})
    ax = bt.Axon(bob)
    ax.attach(Dummy, lambda s: setattr(s, "dummy_output", s.dummy_input + 1), priority=priority)
    ax.set_policy("Synapse", priority=priority)
    ax.route("POST", "/echo", lambda body, parsed, ctx: (200, parsed), priority=priority)
    with caplog.at_level(logging.ERROR, logger="bittensor_cpp"), ax, bt.Dendrite(alice) as d:
        r = d.query(ax.info(), Dummy(dummy_input=1), timeout=10)
        assert r.dendrite.status_code == 200 and r.dummy_output == 2
        assert d.query(ax.info(), Ping(), timeout=10).dendrite.status_code == 200
        e = d.epistula_call(ax.info(), "POST", "/echo", {"a": 1}, timeout=10)
        assert e.status == 200 and e.json() == {"a": 1}
    logged = "\n".join(rec.getMessage() for rec in caplog.records)
    for route in ("Dummy", "Synapse", "/echo"):
        assert f"priority of {route} raised" in logged, logged


@pytest.mark.parametrize("blacklist", [lambda s: "yes", lambda s: (1, 2, 3), lambda s: None],
                         ids=["str", "triple", "None"])
def test_blacklist_of_the_wrong_type_denies(alice, bob, Dummy, blacklist, caplog):
    ax = bt.Axon(bob)
    ax.attach(Dummy, lambda s: None, blacklist=blacklist)
    with caplog.at_level(logging.ERROR, logger="bittensor_cpp"), ax, bt.Dendrite(alice) as d:
        r = d.query(ax.info(), Dummy(dummy_input=1), timeout=10)
    assert r.dendrite.status_code == 403
    assert any("blacklist must return" in rec.getMessage() for rec in caplog.records)
