"""Shared fixtures: the module, a bt-axon process (the build's reference miner), dev keys."""
import json
import os
import select
import signal
import subprocess
import time
import typing

import pytest

import bittensor_cpp as bt

DUMMY_FIELDS = {"dummy_input": int, "dummy_output": typing.Optional[int]}


@pytest.fixture(scope="session")
def alice():
    return bt.Keypair.from_uri("//Alice")


@pytest.fixture(scope="session")
def bob():
    return bt.Keypair.from_uri("//Bob")


@pytest.fixture(scope="session")
def Dummy():
    return bt.SynapseType("Dummy", DUMMY_FIELDS, required=["dummy_input"], hash_fields=[])


@pytest.fixture(scope="session")
def bt_axon():
    """A bt-axon process with the misbehaving test routes (Throw, Hang), serving as //Bob on a
    free loopback port; its AxonInfo. Stopped with SIGTERM at the end; it must exit 0."""
    exe = os.environ.get("BT_AXON_EXE")
    if not exe:
        pytest.fail("BT_AXON_EXE is not set (ctest sets it to the build's bt-axon)")
    # In an ASan tree, LD_PRELOAD carries the shared sanitizer runtime for python3; bt-axon has
    # the runtime linked in and refuses a second one.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    proc = subprocess.Popen([exe, "--uri", "//Bob", "--axon.ip", "127.0.0.1", "--axon.port", "0",
                             "--test-routes"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "bt-axon printed no AxonInfo line within 30 s"
        line = proc.stdout.readline()
        info = json.loads(line)
        yield bt.AxonInfo(ip=info["ip"], port=info["port"], hotkey=info["hotkey"])
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
    assert code == 0, f"bt-axon exited with {code}"


def wait_until(predicate, limit=10.0):
    """Polls predicate every 10 ms for at most `limit` seconds (a no-hang bound, not a timing
    assertion); returns its last value."""
    end = time.monotonic() + limit
    while not predicate() and time.monotonic() < end:
        time.sleep(0.01)
    return predicate()


async def collect(d, axon, synapse, timeout=10):
    """A streamed call's chunks joined, and its final synapse (None if none arrived)."""
    chunks, final = [], None
    async for item in d.call_stream(axon, synapse, timeout=timeout):
        if isinstance(item, bytes):
            chunks.append(item)
        else:
            final = item
    return b"".join(chunks), final
