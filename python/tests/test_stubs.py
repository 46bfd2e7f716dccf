"""The type stubs (bittensor_cpp.pyi) declare every public class and member of the module."""
import ast
import pathlib

import bittensor_cpp as bt

STUBS = pathlib.Path(__file__).resolve().parent.parent / "bittensor_cpp.pyi"


def stub_classes():
    tree = ast.parse(STUBS.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names = set()
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
            out[node.name] = names
    # An alias of a class (EpistulaResponse = HttpCallResponse) declares that class's members.
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)
                and node.value.id in out):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = out[node.value.id]
    return out


def test_every_public_member_has_a_stub():
    stubs = stub_classes()
    missing = []
    for name in dir(bt):
        obj = getattr(bt, name)
        if name.startswith("_") or not isinstance(obj, type):
            continue
        if name not in stubs:
            missing.append(name)
            continue
        for member in vars(obj):
            if not member.startswith("_") and member not in stubs[name]:
                missing.append(f"{name}.{member}")
    assert not missing, f"not in bittensor_cpp.pyi: {missing}"
