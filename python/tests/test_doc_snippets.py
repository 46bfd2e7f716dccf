"""Every ```python block of docs/*.md and README.md runs, so a documented example cannot rot.

How a page's blocks run:
- The blocks of one page run in order in one namespace, as a reader runs them top to bottom (a
  later block may use an earlier block's imports and objects). A block with a top-level `await`
  runs as a coroutine under asyncio.run; any other block runs as plain code, so a block may call
  asyncio.run itself.
- Placeholders, substituted in the block's text before it runs (the one convention a block
  relies on; everything else runs exactly as written):
    `ip="0.0.0.0"`  -> `ip="127.0.0.1"`  (a miner binds every address; the test only loopback)
    `port=80NN`      -> `port=0`           (8091, 8092, ...: the miner's customary ports; the
                                            test binds a free one, and a block reaches its own
                                            axon through `axon.port` or `axon.info()`)
- Wallets: BT_WALLET_PATH points at a fresh directory holding the wallet "miner" with the hotkey
  "default" (//Bob), the wallet the docs' miners load.
- After a page's blocks ran, every bt.Axon left running in its namespace is stopped and every
  bt.Dendrite closed.
- A block fenced ```python-norun is not run; NOT_RUN lists each one with the reason, and the
  test fails when the docs and that list disagree. A block that raises fails the test (never a
  skip).
"""
import ast
import asyncio
import contextlib
import io
import pathlib
import re

import pytest

import bittensor_cpp as bt

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
FENCE = re.compile(r"^```(python|python-norun)[ \t]*\n(.*?)^```", re.S | re.M)
SUBSTITUTIONS = [(re.compile(r'\bip="0\.0\.0\.0"'), 'ip="127.0.0.1"'),
                 (re.compile(r"\bport=80\d\d\b"), "port=0")]

# (page, first line of the block's code) -> why the block is not run. Keep this short.
NOT_RUN = {}


def blocks(page):
    """(kind, first code line, code) of each ```python / ```python-norun block of `page`."""
    text = page.read_text()
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start(2)) + 1
        yield m.group(1), line, m.group(2)


def relative(page):
    return str(page.relative_to(ROOT))


def run_block(code, line, filename, scope):
    for pattern, replacement in SUBSTITUTIONS:
        code = pattern.sub(replacement, code)
    # Padded so a traceback names the block's own line in the page.
    compiled = compile("\n" * (line - 1) + code, filename, "exec",
                       flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    if compiled.co_flags & 0x80:  # CO_COROUTINE: the block awaits at top level
        asyncio.run(eval(compiled, scope))  # noqa: S307 - the doc's own example
    else:
        exec(compiled, scope)  # noqa: S102 - the doc's own example


def pages_with_blocks():
    return [p for p in PAGES if any(kind == "python" for kind, _, _ in blocks(p))]


def test_the_docs_have_python_blocks():
    """The extraction finds the blocks (a changed fence would otherwise test nothing)."""
    assert ROOT / "docs" / "python.md" in pages_with_blocks()
    assert sum(1 for _ in blocks(ROOT / "docs" / "python.md")) >= 3


def test_not_run_blocks_are_listed():
    marked = {(relative(p), line) for p in PAGES for kind, line, _ in blocks(p)
              if kind == "python-norun"}
    assert marked == set(NOT_RUN), "```python-norun blocks and NOT_RUN disagree"


@pytest.fixture
def miner_wallet(tmp_path, monkeypatch):
    bt.Wallet(name="miner", hotkey="default", path=str(tmp_path)).write_hotkey(
        bt.Keypair.from_uri("//Bob"))
    monkeypatch.setenv("BT_WALLET_PATH", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("page", pages_with_blocks(), ids=relative)
def test_page_blocks_run(page, miner_wallet):
    scope = {"__name__": "__doc_snippet__"}
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            for kind, line, code in blocks(page):
                if kind == "python":
                    run_block(code, line, relative(page), scope)
    finally:
        for value in list(scope.values()):
            if isinstance(value, bt.Axon):
                value.stop()
            elif isinstance(value, bt.Dendrite):
                value.close()
    if page.name == "python.md":
        # The first block's miner doubles 21; the Epistula block's route adds [1, 2].
        printed = out.getvalue().splitlines()
        assert printed[0].startswith("42 200 "), out.getvalue()
        assert printed[1].startswith("200 {'sum': 3, 'signed_by': "), out.getvalue()
        assert printed[1].endswith(" True"), out.getvalue()
        assert [s.dummy_output for s in scope["rs"]] == [42] * 8
        assert scope["r"].status == 200 and scope["r"].json()["sum"] == 3
        # The btauth/1 block: the v11 miner doubles, the mixed fan-out answers in order.
        v11 = [line for line in printed if line.startswith("200 {'dummy_output': 42, 'caller': ")]
        assert len(v11) == 1, out.getvalue()
        assert scope["h"].status == 200 and scope["h"].json()["dummy_output"] == 2
        assert scope["h"].nonce.isdigit() and scope["h"].verified is False  # an unsigned miner
        assert "42 42" in printed, out.getvalue()
