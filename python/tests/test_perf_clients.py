"""The comparison clients of python/perf/ping_compare.py do the work they are said to do: the
bittensor-shaped dendrite (pydantic models, to_headers, response validation and header merge)
gets real answers and statuses from bt-axon, and ping_compare refuses a row with failed calls."""
import asyncio
import pathlib
import sys
import typing

import pytest

import bittensor_cpp as bt

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "perf"))
import ping_compare  # noqa: E402
from shaped_dendrite import ShapedDendrite, Synapse, TerminalInfo  # noqa: E402


class Dummy(Synapse):
    dummy_input: int
    dummy_output: typing.Optional[int] = None


class Hang(Synapse):
    pass


def test_shaped_dendrite_against_bt_axon(bt_axon, alice, bob):
    async def main():
        d = ShapedDendrite(alice)
        try:
            one = await d.forward(bt_axon, Dummy(dummy_input=21), timeout=10)
            many = await d.forward([bt_axon, bt_axon], Dummy(dummy_input=5), timeout=10)
            down = bt.AxonInfo(ip="127.0.0.1", port=1, hotkey=bt_axon.hotkey)
            refused = await d.forward(down, Dummy(dummy_input=1), timeout=5)
            slow = await d.forward(bt_axon, Hang(), timeout=1.0)
            ping = await d.forward(bt_axon, Synapse(), timeout=5)
        finally:
            await d.close()
        rebuilt = ShapedDendrite(alice, rebuild_schema=True)
        try:
            again = await rebuilt.forward(bt_axon, Dummy(dummy_input=2), timeout=10)
        finally:
            await rebuilt.close()
        return one, many, refused, slow, ping, len(d.synapse_history), again

    one, many, refused, slow, ping, history, again = asyncio.run(main())
    assert isinstance(one, Dummy) and one.dummy_output == 42
    assert one.dendrite.status_code == 200 and one.axon.status_code == 200
    assert one.axon.hotkey == bob.ss58_address  # merged from the response headers
    assert isinstance(one.dendrite.process_time, float) and one.dendrite.process_time > 0
    assert one.dendrite.signature.startswith("0x") and one.dendrite.nonce > 0
    assert [x.dummy_output for x in many] == [10, 10]
    assert refused.dendrite.status_code == 503
    assert refused.dendrite.status_message.startswith("Service unavailable at 127.0.0.1:1/")
    assert slow.dendrite.status_code == 408
    assert ping.dendrite.status_code == 200 and ping.name == "Synapse"
    assert history == 6  # one entry per call, as bittensor's synapse_history
    assert again.dendrite.status_code == 200 and again.dummy_output == 4


def test_shaped_models_validate_like_bittensors():
    t = TerminalInfo(status_code="200", process_time="0.5", port="8091")
    assert (t.status_code, t.process_time, t.port) == (200, 0.5, 8091)
    s = Dummy(dummy_input=1, name="Other")
    assert s.name == "Dummy"  # the class's name, always
    with pytest.raises(Exception):
        s.dummy_input = "not a number"  # validated on assignment
    h = Dummy(dummy_input=3).to_headers()
    assert Dummy(dummy_input=3).to_headers(rebuild_schema=True).keys() == h.keys()
    assert h["name"] == "Dummy" and "bt_header_input_obj_dummy_input" in h
    assert int(h["total_size"]) > 0 and len(h["computed_body_hash"]) == 64
    back = Dummy.from_headers({**h, "bt_header_axon_status_code": "200"})
    assert back.axon.status_code == 200 and back.dummy_input == 0  # the header's empty value


def test_ping_compare_refuses_failed_calls():
    with pytest.raises(ping_compare.Failed, match="calls failed"):
        ping_compare.summary("x", [0.001, 0.002], [200, 503])
    with pytest.raises(ping_compare.Failed, match="no call"):
        ping_compare.summary("x", [], [])
    with pytest.raises(ping_compare.Failed, match="mean_us is None"):
        ping_compare.check({"name": "bt-ping", "count": 0, "mean_us": None, "p50_us": None,
                            "p99_us": None})
    row = ping_compare.check(ping_compare.summary("x", [0.001, 0.003], [200, 200]))
    assert row["mean_us"] == pytest.approx(2000.0)


def test_query_loop_runs_and_reports():
    """python/perf/query_loop.py (the A/B loop) against its own bt-axon, unsigned answers."""
    import json
    import os
    import subprocess
    script = pathlib.Path(__file__).resolve().parent.parent / "perf" / "query_loop.py"
    out = subprocess.run([sys.executable, str(script), "--bt-axon", os.environ["BT_AXON_EXE"],
                          "--count", "20", "--", "--axon.sign_responses", "off"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    j = json.loads(out.stdout)
    assert j["count"] == 20 and j["axon_args"] == ["--axon.sign_responses", "off"]
    for k in ("wall", "process_time"):
        assert 0 < j[k]["p50_us"] <= j[k]["p99_us"]
