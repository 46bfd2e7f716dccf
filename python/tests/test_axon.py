"""The module's Axon with Python handlers, queried by the module's Dendrite: plain and async
handlers, handler exceptions and wrong return types (500, the axon keeps serving), a handler
that never returns (408; stop() bounded and the stuck worker's state kept alive), blacklist and priority, type checks of request values (400), and
bad options."""
import asyncio
import logging
import subprocess
import sys
import threading
import typing
import weakref

import pytest

import bittensor_cpp as bt
from conftest import wait_until


@pytest.fixture
def dendrite(alice):
    with bt.Dendrite(alice) as d:
        yield d


def test_plain_and_async_handlers(bob, dendrite, Dummy):
    Async = bt.SynapseType("Async", {"x": int, "y": typing.Optional[float]}, required=["x"])
    seen = []

    def forward(s):
        seen.append(threading.current_thread().name)
        s.dummy_output = s.dummy_input * 2

    async def aforward(s):
        await asyncio.sleep(0.01)
        s.y = s.x / 2
        return s

    ax = bt.Axon(bob, max_workers=2)
    ax.attach(Dummy, forward)
    ax.attach(Async, aforward)
    with ax:
        info = ax.info()
        assert info.port == ax.port and info.port != 0 and info.hotkey == bob.ss58_address
        r = dendrite.query(info, Dummy(dummy_input=21), timeout=10)
        assert r.dummy_output == 42 and r.dendrite.status_code == 200
        r = dendrite.query(info, Async(x=5), timeout=10)
        assert r.y == 2.5 and r.dendrite.status_code == 200
        assert threading.current_thread().name not in seen  # ran on the axon's worker
    assert not ax.running


def test_gather_256_against_module_axon(bob, dendrite, Dummy):
    ax = bt.Axon(bob, max_workers=4)
    ax.attach(Dummy, lambda s: setattr(s, "dummy_output", s.dummy_input + 1))

    async def main(info):
        return await asyncio.wait_for(asyncio.gather(
            *[dendrite.forward([info], Dummy(dummy_input=i), timeout=30) for i in range(256)]), 60)

    with ax:
        rs = asyncio.run(main(ax.info()))
    assert [r[0].dummy_output for r in rs] == [i + 1 for i in range(256)]


def test_handler_exception_is_500_and_axon_keeps_serving(bob, dendrite, Dummy, caplog):
    calls = 0

    def forward(s):
        nonlocal calls
        calls += 1
        if s.dummy_input < 0:
            raise ValueError("negative input")
        s.dummy_output = s.dummy_input

    ax = bt.Axon(bob)
    ax.attach(Dummy, forward)
    with caplog.at_level(logging.ERROR, logger="bittensor_cpp"), ax:
        r = dendrite.query(ax.info(), Dummy(dummy_input=-1), timeout=10)
        assert r.dendrite.status_code == 500
        msg = r.dendrite.status_message
        assert msg.startswith("Internal Server Error #")
        assert "negative input" not in msg  # details stay in the server's log
        error_id = msg.split("#", 1)[1]
        r = dendrite.query(ax.info(), Dummy(dummy_input=7), timeout=10)
        assert r.dendrite.status_code == 200 and r.dummy_output == 7
    assert calls == 2
    logged = "\n".join(rec.getMessage() for rec in caplog.records)
    assert error_id in logged and "Traceback" in logged and "negative input" in logged


@pytest.mark.parametrize("ret", [42, "text", {"dummy_output": 1}])
def test_wrong_return_type_is_500(bob, dendrite, Dummy, ret):
    ax = bt.Axon(bob)
    ax.attach(Dummy, lambda s: ret)
    with ax:
        r = dendrite.query(ax.info(), Dummy(dummy_input=1), timeout=10)
    assert r.dendrite.status_code == 500


def test_returning_another_synapse_of_the_type(bob, dendrite, Dummy):
    ax = bt.Axon(bob)
    ax.attach(Dummy, lambda s: _with_output(Dummy(dummy_input=s.dummy_input), 99))
    with ax:
        r = dendrite.query(ax.info(), Dummy(dummy_input=1), timeout=10)
    assert r.dendrite.status_code == 200 and r.dummy_output == 99


def _with_output(s, v):
    s.dummy_output = v
    return s


def test_never_returning_handlers_are_408(bob, dendrite, Dummy):
    release = threading.Event()
    cancelled = threading.Event()
    Slow = bt.SynapseType("Slow", {"x": typing.Optional[int]})

    def forward(s):
        release.wait(30)  # "never" within the request's deadline; freed before stop()

    async def aforward(s):
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    ax = bt.Axon(bob)
    ax.attach(Dummy, forward)
    ax.attach(Slow, aforward)
    with ax:
        try:
            r = dendrite.query(ax.info(), Dummy(dummy_input=1), timeout=1.0)
            assert r.dendrite.status_code == 408
            r = dendrite.query(ax.info(), Slow(), timeout=1.0)
            assert r.dendrite.status_code == 408
            assert wait_until(cancelled.is_set, 10), "the async handler was not cancelled"
        finally:
            release.set()


def test_stop_is_bounded_by_a_stuck_plain_handler(bob, dendrite, Dummy, caplog):
    """A plain handler that does not return: stop() returns after drain_timeout, names the
    route in a warning, and the stuck worker keeps what it touches alive until it returns (the
    route's callables are released then, not before)."""
    release = threading.Event()
    entered = threading.Event()
    returned = threading.Event()

    def forward(s):
        entered.set()
        release.wait(120)
        s.dummy_output = 1  # touches the request's synapse after stop() returned
        returned.set()

    alive = weakref.ref(forward)
    ax = bt.Axon(bob, drain_timeout=1.0)
    ax.attach(Dummy, forward)
    del forward
    try:
        with caplog.at_level(logging.WARNING, logger="bittensor_cpp"):
            ax.start()
            r = dendrite.query(ax.info(), Dummy(dummy_input=1), timeout=1.0)
            assert r.dendrite.status_code == 408 and entered.is_set()
            stopper = threading.Thread(target=ax.stop)
            stopper.start()
            stopper.join(60)  # a bound against a hang, not a timing assertion
            assert not stopper.is_alive(), "Axon.stop() waited for the stuck handler"
        assert not ax.running and not returned.is_set()
        warned = [rec for rec in caplog.records if "abandoned" in rec.getMessage()]
        assert len(warned) == 1 and "Dummy" in warned[0].getMessage()
        assert alive() is not None  # held by the stuck worker's route
    finally:
        release.set()
    assert returned.wait(30)
    assert wait_until(lambda: alive() is None, 30), "the abandoned route was never released"
    # The process is fine and a new axon serves.
    ax2 = bt.Axon(bob)
    ax2.attach(Dummy, lambda s: setattr(s, "dummy_output", 2))
    with ax2:
        assert dendrite.query(ax2.info(), Dummy(dummy_input=1), timeout=10).dummy_output == 2


EXIT_WITH_STUCK_HANDLER = """
import threading, bittensor_cpp as bt
Dummy = bt.SynapseType("Dummy", {"dummy_input": int})
stuck = threading.Event()
ax = bt.Axon(bt.Keypair.from_uri("//Bob"), drain_timeout=0.5)
ax.attach(Dummy, lambda s: stuck.wait(60))
ax.start()
with bt.Dendrite(bt.Keypair.from_uri("//Alice")) as d:
    assert d.query(ax.info(), Dummy(dummy_input=1), timeout=1.0).dendrite.status_code == 408
ax.stop()
print("stopped", flush=True)
"""


def test_process_exits_with_an_abandoned_handler():
    """The interpreter exits (status 0, no crash) while a handler stop() abandoned still waits."""
    p = subprocess.run([sys.executable, "-c", EXIT_WITH_STUCK_HANDLER], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "stopped\n"
    assert "abandoned" in p.stderr and "Dummy" in p.stderr


def test_blacklist_and_priority(bob, alice, dendrite, Dummy):
    seen = []

    def blacklist(s):
        seen.append(s.dendrite.hotkey)
        return (s.dendrite.hotkey != alice.ss58_address, "only Alice")

    ax = bt.Axon(bob)
    ax.attach(Dummy, lambda s: setattr(s, "dummy_output", 1), blacklist=blacklist,
              priority=lambda s: 1.0)
    with ax:
        assert dendrite.query(ax.info(), Dummy(dummy_input=1), timeout=10).dummy_output == 1
        with bt.Dendrite(bt.Keypair.from_uri("//Charlie")) as other:
            r = other.query(ax.info(), Dummy(dummy_input=1), timeout=10)
            assert r.dendrite.status_code == 403 and "only Alice" in r.dendrite.status_message
    assert alice.ss58_address in seen


def test_blacklist_exception_denies(bob, dendrite, Dummy):
    def blacklist(s):
        raise RuntimeError("broken policy")

    ax = bt.Axon(bob)
    ax.attach(Dummy, lambda s: None, blacklist=blacklist, priority=lambda s: "high")
    with ax:
        r = dendrite.query(ax.info(), Dummy(dummy_input=1), timeout=10)
    assert r.dendrite.status_code == 403


def test_request_values_of_the_wrong_type_are_400(bob, dendrite, Dummy):
    """A caller whose Dummy declares dummy_input as str: the axon answers 400 before Python."""
    called = []
    Liar = bt.SynapseType("Dummy", {"dummy_input": str}, required=["dummy_input"])
    ax = bt.Axon(bob)
    ax.attach(Dummy, lambda s: called.append(s))
    with ax:
        r = dendrite.query(ax.info(), Liar(dummy_input="21"), timeout=10)
    assert r.dendrite.status_code == 400
    assert "dummy_input" in r.dendrite.status_message
    assert not called


def test_bad_axon_arguments(bob, Dummy):
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_wokers'"):
        bt.Axon(bob, max_wokers=3)
    with pytest.raises(ValueError):
        bt.Axon(bob, port=70000)
    with pytest.raises(ValueError):
        bt.Axon(bob, header_timeout=-1)
    with pytest.raises(TypeError):
        bt.Axon(bob, max_workers="many")
    with pytest.raises(bt.Error, match="no secret"):
        bt.Axon(bt.Keypair.from_ss58(bob.ss58_address))
    ax = bt.Axon(bob)
    with pytest.raises(TypeError):
        ax.attach(Dummy, "not callable")
    with pytest.raises(TypeError):
        ax.attach("Dummy", lambda s: None)

    async def ablacklist(s):
        return False

    with pytest.raises(TypeError, match="plain functions"):
        ax.attach(Dummy, lambda s: None, blacklist=ablacklist)
    ax.attach(Dummy, lambda s: None)
    with pytest.raises(RuntimeError):
        ax.attach(Dummy, lambda s: None)  # twice
    ax.start()
    ax.stop()
    ax.stop()  # idempotent
    with pytest.raises(ValueError):
        ax.start()


def test_given_loop_runs_async_handlers(bob, dendrite, Dummy):
    loop = asyncio.new_event_loop()
    t = threading.Thread(target=loop.run_forever)
    t.start()
    ran_on = []

    async def forward(s):
        ran_on.append(asyncio.get_running_loop())
        s.dummy_output = 5

    try:
        ax = bt.Axon(bob, loop=loop)
        ax.attach(Dummy, forward)
        with ax:
            assert dendrite.query(ax.info(), Dummy(dummy_input=1), timeout=10).dummy_output == 5
        assert ran_on == [loop]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        t.join()
        loop.close()


def test_forward_error_sets_the_status(bob, dendrite, Dummy):
    def forward(s):
        if s.dummy_input > 2**32:
            raise bt.ForwardError(400, "dummy_input * 2 does not fit")
        s.dummy_output = s.dummy_input * 2

    ax = bt.Axon(bob)
    ax.attach(Dummy, forward)
    with ax:
        r = dendrite.query(ax.info(), Dummy(dummy_input=2**40), timeout=10)
        assert r.dendrite.status_code == 400
        assert r.dendrite.status_message == "dummy_input * 2 does not fit"
        assert dendrite.query(ax.info(), Dummy(dummy_input=2), timeout=10).dummy_output == 4
    with pytest.raises(ValueError):
        bt.ForwardError(200, "not an error status")
