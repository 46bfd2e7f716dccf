"""The module's Dendrite against a bt-axon process: blocking and asyncio calls, 256 concurrent
forwards, the GIL released during a long call, cancellation, failures and bad input."""
import asyncio
import threading
import types
import typing

import pytest

import bittensor_cpp as bt
from conftest import wait_until


def test_query_one_and_list(bt_axon, alice, bob, Dummy):
    with bt.Dendrite(alice) as d:
        r = d.query(bt_axon, Dummy(dummy_input=21), timeout=10)
        assert r.dummy_output == 42 and r.dummy_input == 21
        assert r.dendrite.status_code == 200 and r.is_success
        assert r.axon.status_code == 200 and r.axon.hotkey == bob.ss58_address
        assert r.dendrite.process_time is not None and r.dendrite.process_time > 0
        rs = d.query([bt_axon, bt_axon], Dummy(dummy_input=5), timeout=10)
        assert [x.dummy_output for x in rs] == [10, 10]
        assert rs[0].synapse_type is Dummy


def test_forward_awaitable(bt_axon, alice, Dummy):
    async def main():
        with bt.Dendrite(alice) as d:
            rs = await d.forward([bt_axon], Dummy(dummy_input=3), timeout=10)
            return rs

    rs = asyncio.run(main())
    assert len(rs) == 1 and rs[0].dummy_output == 6


def test_forward_made_outside_a_running_loop(bt_axon, alice, Dummy):
    """`asyncio.run(d.forward(...))` evaluates forward() before any loop runs: it returns a
    coroutine that starts the call in the loop awaiting it (inside a loop: a future of that
    loop, the call already under way). A bad argument is refused when forward() is called."""
    with bt.Dendrite(alice) as d:
        one = asyncio.run(d.forward(bt_axon, Dummy(dummy_input=4), timeout=10))
        assert one.dummy_output == 8 and one.dendrite.status_code == 200
        rs = asyncio.run(d.forward([bt_axon] * 3, Dummy(dummy_input=5), timeout=10))
        assert [r.dummy_output for r in rs] == [10] * 3
        r = asyncio.run(d.async_epistula_call(bt_axon, "POST", "/echo", {"x": 1}, timeout=10))
        assert r.error is None and r.status == 200

        async def inside():
            fut = d.forward([bt_axon], Dummy(dummy_input=6), timeout=10)
            assert isinstance(fut, asyncio.Future)
            return await fut

        assert asyncio.run(inside())[0].dummy_output == 12
        with pytest.raises(ValueError, match="timeout"):
            d.forward([bt_axon], Dummy(dummy_input=1), timeout=-1)
        late = d.forward([bt_axon], Dummy(dummy_input=1), timeout=10)
    with pytest.raises(ValueError, match="Dendrite is closed"):
        asyncio.run(late)  # made before close(), awaited after it: nothing starts


def test_gather_256_forwards(bt_axon, alice, Dummy):
    async def main():
        with bt.Dendrite(alice) as d:
            return await asyncio.wait_for(
                asyncio.gather(*[d.forward([bt_axon], Dummy(dummy_input=i), timeout=30)
                                 for i in range(256)]), 60)

    rs = asyncio.run(main())
    assert [r[0].dummy_output for r in rs] == [2 * i for i in range(256)]
    assert all(r[0].dendrite.status_code == 200 for r in rs)


def test_python_thread_runs_during_long_query(bt_axon, alice):
    """bt-axon's Hang route never answers: the call ends at its deadline with 408, and a Python
    thread makes progress meanwhile (the GIL is released during query)."""
    Hang = bt.SynapseType("Hang", {})
    ticks = 0
    stop = threading.Event()

    def spin():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            for _ in range(1000):  # pure Python work: needs the GIL
                pass

    t = threading.Thread(target=spin)
    t.start()
    try:
        with bt.Dendrite(alice) as d:
            before = ticks
            r = d.query(bt_axon, Hang(), timeout=1.5)
            during = ticks - before
    finally:
        stop.set()
        t.join()
    assert r.dendrite.status_code == 408
    assert during > 10, f"the Python thread ran {during} loops during a 1.5 s query"


def test_cancelling_forward_cancels_the_call(bt_axon, alice):
    Hang = bt.SynapseType("Hang", {})

    async def main(d):
        task = asyncio.ensure_future(d.forward([bt_axon], Hang(), timeout=60))
        await asyncio.sleep(0.3)
        assert d.stats()["in_flight"] == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with bt.Dendrite(alice) as d:
        asyncio.run(main(d))
        # The C++ call ended long before its 60 s deadline.
        assert wait_until(lambda: d.stats()["in_flight"] == 0, 10)
        assert d.stats()["calls"] >= 1


def test_cancelling_forwards_with_two_dendrite_threads(bt_axon, alice, bob, Dummy):
    """threads=2: cancellations land while calls complete on either I/O thread (the emission
    and the completion are serialised on the call's strand). Many rounds of gathers cancelled
    at varying moments; each forward is either cancelled or returns its answers, the dendrite
    ends with nothing in flight and keeps working; a slow call is ended by its cancellation."""
    Slow = bt.SynapseType("Slow", {"x": typing.Optional[int]})

    async def slow(s):
        await asyncio.sleep(60)

    ax = bt.Axon(bob)
    ax.attach(Slow, slow)

    async def rounds(d, slow_info):
        cancelled = answered = 0
        for i in range(150):
            tasks = [asyncio.ensure_future(d.forward([bt_axon] * 3, Dummy(dummy_input=j),
                                                     timeout=10)) for j in range(6)]
            await asyncio.sleep((i % 7) * 0.0005)
            for t in tasks[i % 2::2]:
                t.cancel()
            for j, r in enumerate(await asyncio.gather(*tasks, return_exceptions=True)):
                if isinstance(r, asyncio.CancelledError):
                    cancelled += 1
                    continue
                answered += 1
                assert len(r) == 3
                for x in r:  # a forward that was not cancelled has all its answers
                    assert x.dendrite.status_code == 200, x.dendrite.status_message
                    assert x.dummy_output == 2 * j
        task = asyncio.ensure_future(d.forward([slow_info] * 4, Slow(), timeout=60))
        assert await asyncio.to_thread(wait_until, lambda: d.stats()["in_flight"] == 4, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return cancelled, answered

    with ax, bt.Dendrite(alice, threads=2) as d:
        cancelled, answered = asyncio.run(rounds(d, ax.info()))
        assert cancelled > 0 and answered > 0
        assert wait_until(lambda: d.stats()["in_flight"] == 0, 10)
        r = d.query(bt_axon, Dummy(dummy_input=4), timeout=10)
        assert r.dendrite.status_code == 200 and r.dummy_output == 8


def test_server_error_and_unreachable(bt_axon, alice):
    Throw = bt.SynapseType("Throw", {})
    Dummy = bt.SynapseType("Dummy", {"dummy_input": int, "dummy_output": int})
    with bt.Dendrite(alice) as d:
        r = d.query(bt_axon, Throw(), timeout=10)
        assert r.dendrite.status_code == 500
        assert r.dendrite.status_message.startswith("Internal Server Error #")
        down = bt.AxonInfo(ip="127.0.0.1", port=1, hotkey=bt_axon.hotkey)
        r = d.query(down, Dummy(dummy_input=1), timeout=5)
        assert r.dendrite.status_code == 503 and r.is_failure
        wrong_key = bt.AxonInfo(ip=bt_axon.ip, port=bt_axon.port,
                                hotkey=bt.Keypair.from_uri("//Charlie").ss58_address)
        r = d.query(wrong_key, Dummy(dummy_input=1), timeout=5)
        # bt-axon's 401 is signed by its own hotkey, not the one addressed: the dendrite's
        # response check (verify_responses, if_present by default) reports 421.
        assert r.dendrite.status_code == 421


def test_duck_typed_axons(bt_axon, alice, Dummy):
    ns = types.SimpleNamespace(ip=bt_axon.ip, port=bt_axon.port, hotkey=bt_axon.hotkey)
    with bt.Dendrite(alice) as d:
        assert d.query([ns], Dummy(dummy_input=2), timeout=10)[0].dummy_output == 4


def test_bad_inputs(bt_axon, alice, Dummy):
    with bt.Dendrite(alice) as d:
        with pytest.raises(TypeError):
            d.query(bt_axon, {"dummy_input": 1})
        with pytest.raises(TypeError):
            d.query([bt_axon, "not an axon"], Dummy(dummy_input=1))
        with pytest.raises(TypeError):
            d.query([types.SimpleNamespace(ip=1, port="x", hotkey=None)], Dummy(dummy_input=1))
        with pytest.raises(ValueError):
            d.query(bt_axon, Dummy(dummy_input=1), timeout=-1)
        with pytest.raises(ValueError):
            d.query(bt_axon, Dummy(dummy_input=1), timeout=float("nan"))
        unawaited = d.forward(bt_axon, Dummy(dummy_input=1))  # no loop: a coroutine, not run
        assert asyncio.iscoroutine(unawaited)
        unawaited.close()
        with pytest.raises(ValueError):
            bt.AxonInfo(ip="127.0.0.1", port=70000, hotkey="x")
        bad_ip = bt.AxonInfo(ip="not-an-ip", port=1, hotkey=bt_axon.hotkey)
        r = d.query(bad_ip, Dummy(dummy_input=1), timeout=5)
        assert r.dendrite.status_code == 422
    with pytest.raises(bt.Error, match="no secret"):
        bt.Dendrite(bt.Keypair.from_ss58(alice.ss58_address))
    with pytest.raises(TypeError):
        bt.Dendrite("//Alice")
    closed = bt.Dendrite(alice)
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        closed.query(bt_axon, Dummy(dummy_input=1))


class _RawAnswerServer:
    """A miner on 127.0.0.1 (port 0) that reads one request per connection and writes `answer`
    verbatim: a hostile peer whose header bytes the test chooses."""

    def __init__(self, answer: bytes):
        import socket
        self.answer = answer
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        import socket
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            with conn:
                conn.settimeout(5)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:  # the head; the body is small, then ignored
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    conn.sendall(self.answer)
                except OSError:
                    pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(10)
        self.sock.close()


def test_non_utf8_answer_headers_become_replacement_characters(alice, bob, Dummy):
    """A miner's bt_header_axon_status_message / _uuid that are not UTF-8: the call returns and
    the text fields hold U+FFFD instead of the raw bytes (status_message and to_dict() work)."""
    body = b'{"dummy_input":3,"dummy_output":6}'
    answer = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
              b"content-length: " + str(len(body)).encode() + b"\r\n"
              b"bt_header_axon_status_code: 200\r\n"
              b"bt_header_axon_status_message: ok\xff!\r\n"
              b"bt_header_axon_uuid: \xc3(\r\n\r\n" + body)
    with _RawAnswerServer(answer) as srv, bt.Dendrite(alice) as d:
        axon = bt.AxonInfo(ip="127.0.0.1", port=srv.port, hotkey=bob.ss58_address)
        r = d.query(axon, Dummy(dummy_input=3), timeout=5)
        assert r.dendrite.status_code == 200 and r.dummy_output == 6
        assert r.axon.status_message == "ok\ufffd!"
        assert r.dendrite.status_message == "ok\ufffd!"
        assert r.axon.uuid == "\ufffd("
        assert r.to_dict()["axon"]["status_message"] == "ok\ufffd!"

    reason = (b"HTTP/1.1 200 O\xffK\r\ncontent-type: application/json\r\n"
              b"x-note: a\xc0z\r\ncontent-length: 2\r\n\r\n{}")
    with _RawAnswerServer(reason) as srv, bt.Dendrite(alice) as d:
        axon = bt.AxonInfo(ip="127.0.0.1", port=srv.port, hotkey=bob.ss58_address)
        e = d.epistula_call(axon, "POST", "/x", {}, timeout=5)
        assert e.error is None and e.status == 200
        assert e.status_message == "O\ufffdK"
        assert e.header("x-note") == "a\ufffdz"
