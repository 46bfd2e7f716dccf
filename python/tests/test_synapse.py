"""SynapseType on the dynamic descriptor: keyword construction, typed attributes, TerminalInfo
views, to_dict, and pydantic introspection."""
import typing

import pytest

import bittensor_cpp as bt

Dummy = bt.SynapseType("Dummy", {"dummy_input": int, "dummy_output": typing.Optional[int]},
                       required=["dummy_input"], hash_fields=[])


def test_keywords_and_attributes():
    s = Dummy(dummy_input=21)
    assert s.name == "Dummy"
    assert s.dummy_input == 21 and s.dummy_output is None
    s.dummy_output = 42
    assert s.dummy_output == 42
    s.dummy_output = None
    assert s.dummy_output is None
    assert s.timeout == 12.0
    s.timeout = 3.5
    assert s.timeout == 3.5


def test_required_and_unknown_keywords():
    with pytest.raises(TypeError, match="missing required field 'dummy_input'"):
        Dummy()
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        Dummy(dummy_input=1, nope=2)


@pytest.mark.parametrize("value", ["21", 2.5, True, [1], None, 2**64])
def test_wrong_types_rejected(value):
    s = Dummy(dummy_input=1)
    with pytest.raises((TypeError, ValueError)):
        s.dummy_input = value
    assert s.dummy_input == 1


def test_unknown_attribute():
    s = Dummy(dummy_input=1)
    with pytest.raises(AttributeError):
        s.not_a_field = 3
    with pytest.raises(AttributeError):
        s.not_a_field


def test_container_types():
    T = bt.SynapseType("T", {"xs": typing.List[int], "m": typing.Dict[str, float],
                             "f": float, "b": bool, "a": typing.Any, "s": str})
    t = T(xs=[1, 2], m={"k": 1}, f=2, b=False, a={"x": [None, "y"]}, s="é")
    assert t.xs == [1, 2] and t.m == {"k": 1.0} and isinstance(t.f, float) and t.f == 2.0
    assert t.b is False and t.a == {"x": [None, "y"]} and t.s == "é"
    with pytest.raises(TypeError, match=r"xs\[1\]"):
        t.xs = [1, "two"]
    with pytest.raises(TypeError):
        t.m = {1: 2.0}
    with pytest.raises(ValueError):
        t.f = float("nan")
    with pytest.raises(TypeError):
        t.a = object()


def test_terminal_info_views_are_live():
    s = Dummy(dummy_input=1)
    d = s.dendrite
    d.status_code = 200
    d.status_message = "Success"
    assert s.dendrite.status_code == 200 and s.is_success
    assert s.axon.status_code is None
    with pytest.raises(TypeError):
        s.dendrite.status_code = "x"
    with pytest.raises(AttributeError):
        s.dendrite = None


def test_to_dict_is_model_dump_shaped():
    s = Dummy(dummy_input=21)
    s.dummy_output = 42
    d = s.to_dict()
    assert list(d)[:8] == ["name", "timeout", "total_size", "header_size", "dendrite", "axon",
                           "computed_body_hash", "required_hash_fields"]
    assert d["dummy_input"] == 21 and d["dummy_output"] == 42 and d["name"] == "Dummy"
    assert set(d["dendrite"]) >= {"status_code", "status_message", "process_time", "hotkey"}


def test_copy_is_independent():
    s = Dummy(dummy_input=1)
    c = s.copy()
    c.dummy_input = 2
    assert s.dummy_input == 1 and c == Dummy(dummy_input=2) and c != s


def test_bad_declarations():
    with pytest.raises(TypeError, match="unsupported field type"):
        bt.SynapseType("X", {"a": set})
    with pytest.raises(ValueError, match="base Synapse field"):
        bt.SynapseType("X", {"timeout": int})
    with pytest.raises(ValueError, match="not a field"):
        bt.SynapseType("X", {"a": int}, required=["b"])
    with pytest.raises(bt.Error):
        bt.SynapseType("X", {"a": int}, hash_fields=["b"])
    with pytest.raises(TypeError):
        bt.SynapseType("X", ["a"])


def test_from_pydantic():
    pydantic = pytest.importorskip("pydantic")

    class Echo(pydantic.BaseModel):
        text: str
        reply: typing.Optional[str] = None
        scores: typing.List[float] = []

    T = bt.SynapseType.from_pydantic(Echo)
    assert T.name == "Echo"
    assert T.required == ["text"]
    assert T.defaults == {"scores": []}
    assert T(text="x").scores == []
    assert T.fields == {"text": "str", "reply": "Optional[str]", "scores": "List[float]"}
    e = T(text="hi")
    assert e.text == "hi" and e.reply is None
    with pytest.raises(TypeError):
        T(text=1)


def test_defaults():
    T = bt.SynapseType("T", {"a": int, "b": typing.List[str], "c": typing.Optional[int]},
                       required=["a"], defaults={"b": ["x"], "c": 3})
    t = T(a=1)
    assert t.b == ["x"] and t.c == 3 and T.defaults == {"b": ["x"], "c": 3}
    t.b.append("mutating the returned list does not change the object")
    assert t.b == ["x"]
    with pytest.raises(TypeError):
        bt.SynapseType("T", {"b": typing.List[str]}, defaults={"b": [1]})
    with pytest.raises(ValueError, match="not a field"):
        bt.SynapseType("T", {"b": int}, defaults={"z": 1})
    with pytest.raises(ValueError, match="required"):
        bt.SynapseType("T", {"b": int}, required=["b"], defaults={"b": 1})
