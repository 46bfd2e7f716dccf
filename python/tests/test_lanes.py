"""Blocking query() of one axon runs on the calling thread's own lane (an io_context and a C++
dendrite of that thread): several threads at once, the lane's end with its thread, the counters
kept, close() from another thread cancelling a running call, calls after close(), and the
lane's timer tick (deadlines kept, no thread left)."""
import os
import threading
import time

import pytest

import bittensor_cpp as bt
from conftest import wait_until


def test_threads_query_at_once(bt_axon, alice, Dummy):
    """8 threads x 25 blocking calls on one Dendrite: every answer right, every call counted."""
    threads, per_thread = 8, 25
    results = {}
    errors = []
    start = threading.Barrier(threads)

    def work(k):
        try:
            start.wait(10)
            results[k] = [d.query(bt_axon, Dummy(dummy_input=100 * k + i), timeout=10)
                          for i in range(per_thread)]
        except Exception as e:  # reported below; a thread's exception would be lost
            errors.append(e)

    with bt.Dendrite(alice) as d:
        ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        assert not any(t.is_alive() for t in ts) and errors == []
        for k in range(threads):
            assert [r.dummy_output for r in results[k]] == \
                [2 * (100 * k + i) for i in range(per_thread)]
            assert all(r.dendrite.status_code == 200 for r in results[k])
        s = d.stats()
    # The threads have ended: their lanes are gone, their counters are kept.
    assert s["calls"] == threads * per_thread
    assert s["connections_opened"] >= threads  # one lane, one connection each at least
    assert s["connections_opened"] + s["connections_reused"] >= threads * per_thread
    assert s["in_flight"] == 0


def test_lane_ends_with_its_thread(bt_axon, alice, Dummy):
    """A thread's lane keeps its connection while the thread lives and is destroyed with it."""
    called, finish = threading.Event(), threading.Event()
    out = []

    def work():
        out.append(d.query(bt_axon, Dummy(dummy_input=4), timeout=10))
        called.set()
        finish.wait(30)

    with bt.Dendrite(alice) as d:
        t = threading.Thread(target=work)
        t.start()
        assert called.wait(30)
        assert out[0].dummy_output == 8
        alive = d.stats()
        finish.set()
        t.join(30)
        assert not t.is_alive()
        assert wait_until(lambda: d.stats()["idle_connections"] == 0, 10)
        after = d.stats()
    assert alive["idle_connections"] == 1 and alive["calls"] == 1
    assert after["calls"] == 1 and after["connections_opened"] == 1  # kept after the lane's end


def test_close_from_another_thread_cancels_a_blocking_query(bt_axon, alice):
    """bt-axon's Hang route never answers: close() ends the 60 s call at once with 503, and the
    Dendrite then refuses calls."""
    Hang = bt.SynapseType("Hang", {})
    out = []
    d = bt.Dendrite(alice)

    def work():
        t0 = time.monotonic()
        r = d.query(bt_axon, Hang(), timeout=60)
        out.append((r, time.monotonic() - t0))

    t = threading.Thread(target=work)
    t.start()
    assert wait_until(lambda: d.stats()["in_flight"] == 1, 10)
    d.close()
    t.join(30)
    assert not t.is_alive()
    r, elapsed = out[0]
    assert r.dendrite.status_code == 503, r.dendrite.status_message
    assert elapsed < 30  # cancelled, not ended by its 60 s deadline
    with pytest.raises(ValueError, match="closed"):
        d.query(bt_axon, Hang(), timeout=1)
    with pytest.raises(ValueError, match="closed"):
        d.epistula_call(bt_axon, "POST", "/echo", {})


def _native_threads():
    return len(os.listdir("/proc/self/task"))


def test_lane_tick_keeps_deadlines_and_leaves_no_thread(bt_axon, alice, Dummy):
    """A lane's io_context runs a once-a-second timer tick (so a call's deadline is not the
    earliest timer): a call spanning several ticks still ends at its own deadline (408, not
    before it), a call after the lane sat idle past a tick is answered, and the lane's end
    leaves no native thread behind."""
    Hang = bt.SynapseType("Hang", {})
    out = []
    errors = []

    def work():
        try:
            t0 = time.monotonic()
            r = d.query(bt_axon, Hang(), timeout=2.5)
            out.append((r, time.monotonic() - t0))
            time.sleep(1.2)  # the tick expires while nobody runs the lane
            out.append((d.query(bt_axon, Dummy(dummy_input=5), timeout=10), 0.0))
        except Exception as e:  # reported below; a thread's exception would be lost
            errors.append(e)

    with bt.Dendrite(alice) as d:
        before = _native_threads()
        t = threading.Thread(target=work)
        t.start()
        t.join(60)
        assert not t.is_alive() and errors == []
        hung, elapsed = out[0]
        assert hung.dendrite.status_code == 408, hung.dendrite.status_message
        assert 2.4 <= elapsed < 30  # its own deadline, across two ticks
        assert out[1][0].dendrite.status_code == 200 and out[1][0].dummy_output == 10
        assert wait_until(lambda: _native_threads() == before, 10)
