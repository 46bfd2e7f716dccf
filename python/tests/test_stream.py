"""Streaming synapses both ways: the module's Dendrite.call_stream against bt-axon's WordStream
and against a streaming handler of the module's Axon; closing the stream early cancels the call."""
import asyncio
import threading
import typing

import pytest

import bittensor_cpp as bt
from conftest import collect, wait_until

# As Python declares it: `words: typing.List[str] = []` (a typed C++ peer refuses null there).
WordStream = bt.SynapseType("WordStream", {"text": str, "words": typing.List[str]},
                            required=["text"], hash_fields=["text"], defaults={"words": []})


def test_stream_from_bt_axon(bt_axon, alice):
    with bt.Dendrite(alice) as d:
        body, final = asyncio.run(collect(d, bt_axon, WordStream(text="one two three")))
    assert body == b"one\ntwo\nthree\n"
    assert final.dendrite.status_code == 200 and final.name == "WordStream"


def test_stream_from_module_axon(alice, bob):
    seen_open = []

    def forward(s, send):
        for w in s.text.split():
            assert send(w.encode() + b"\n")
        seen_open.append(send.open)

    ax = bt.Axon(bob)
    ax.attach(WordStream, forward, streaming=True)
    with ax, bt.Dendrite(alice) as d:
        body, final = asyncio.run(collect(d, ax.info(), WordStream(text="a bb ccc")))
    assert body == b"a\nbb\nccc\n" and final.dendrite.status_code == 200
    assert seen_open == [True]


def test_streaming_handler_exception_before_sending_is_500(alice, bob):
    def forward(s, send):
        raise RuntimeError("no stream today")

    ax = bt.Axon(bob)
    ax.attach(WordStream, forward, streaming=True)
    with ax, bt.Dendrite(alice) as d:
        body, final = asyncio.run(collect(d, ax.info(), WordStream(text="x")))
    assert body == b"" and final.dendrite.status_code == 500


def test_closing_the_stream_early_cancels_the_call(alice, bob):
    stopped = threading.Event()

    def forward(s, send):
        send(b"first\n")
        for _ in range(1000):  # up to 10 s, until the client is gone
            if not send(b"."):
                break
            threading.Event().wait(0.01)
        stopped.set()

    ax = bt.Axon(bob)
    ax.attach(WordStream, forward, streaming=True)

    async def main(d, info):
        async for item in d.call_stream(info, WordStream(text="x"), timeout=30):
            assert item.startswith(b"first")
            break  # closes the generator: the C++ call is cancelled

    with ax, bt.Dendrite(alice) as d:
        asyncio.run(main(d, ax.info()))
        assert wait_until(lambda: d.stats()["in_flight"] == 0, 10)
        assert wait_until(stopped.is_set, 15), "the handler's sends never failed"


def test_streaming_bad_arguments(bob):
    ax = bt.Axon(bob)

    async def aforward(s, send):
        pass

    with pytest.raises(TypeError, match="plain function"):
        ax.attach(WordStream, aforward, streaming=True)

    def forward(s, send):
        send(42)

    ax.attach(WordStream, forward, streaming=True)  # send(42) raises TypeError -> 500
    with ax, bt.Dendrite(bt.Keypair.from_uri("//Alice")) as d:
        body, final = asyncio.run(collect(d, ax.info(), WordStream(text="x")))
    assert final.dendrite.status_code == 500
