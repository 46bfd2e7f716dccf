"""examples/python: miner.py and validator.py against each other and against bt-axon."""
import os
import pathlib
import select
import signal
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"


def run_validator(axon_json, *extra):
    return subprocess.run([sys.executable, str(EXAMPLES / "validator.py"), "--uri", "//Alice",
                           "--axon-json", axon_json, "--input", "21", "--timeout", "10", *extra],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("miner_args", [[], ["--async"]])
def test_validator_against_python_miner(miner_args):
    miner = subprocess.Popen([sys.executable, str(EXAMPLES / "miner.py"), "--uri", "//Bob",
                              "--port", "0", *miner_args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([miner.stdout], [], [], 30)
        assert ready, "miner.py printed no AxonInfo line within 30 s"
        line = miner.stdout.readline()
        for extra in ([], ["--async"]):
            v = run_validator(line, *extra)
            assert v.returncode == 0, v.stdout + v.stderr
            assert "status=200" in v.stdout and "dummy_output=42" in v.stdout
    finally:
        miner.send_signal(signal.SIGTERM)
        _, err = miner.communicate(timeout=30)
    assert miner.returncode == 0, err


def test_validator_against_bt_axon(bt_axon):
    import json
    v = run_validator(json.dumps({"ip": bt_axon.ip, "port": bt_axon.port,
                                  "hotkey": bt_axon.hotkey}))
    assert v.returncode == 0, v.stdout + v.stderr
    assert "dummy_output=42" in v.stdout


@pytest.mark.parametrize("crypto", ["sr25519", "ed25519"])
def test_v11_validator_against_v11_miner(crypto):
    """btauth/1 over plain HTTP: v11_validator.py signs with http_auth.sign (and, with
    --dendrite, calls with Dendrite.btauth_call), v11_miner.py (the standard library's
    http.server) verifies with http_auth.verify and refuses the replay."""
    miner = subprocess.Popen([sys.executable, str(EXAMPLES / "v11_miner.py"), "--uri", "//Bob",
                              "--port", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([miner.stdout], [], [], 30)
        assert ready, "v11_miner.py printed no address line within 30 s"
        line = miner.stdout.readline()
        v = subprocess.run([sys.executable, str(EXAMPLES / "v11_validator.py"), "--uri", "//Dave",
                            "--crypto-type", crypto, "--axon-json", line, "--input", "21",
                            "--timeout", "10", "--replay"],
                           capture_output=True, text=True, timeout=60)
        assert v.returncode == 0, v.stdout + v.stderr
        assert "status=200" in v.stdout and '"dummy_output": 42' in v.stdout
        import bittensor_cpp as bt
        dave = bt.Keypair.from_uri("//Dave", crypto_type=crypto).ss58_address
        assert f'"caller": "{dave}"' in v.stdout
        assert "replay status=401" in v.stdout and "ReplayedRequest" in v.stdout
        # The same request by the C++ dendrite (btauth_call), its key the same scheme.
        v = subprocess.run([sys.executable, str(EXAMPLES / "v11_validator.py"), "--uri", "//Dave",
                            "--crypto-type", crypto, "--axon-json", line, "--input", "5",
                            "--timeout", "10", "--dendrite"],
                           capture_output=True, text=True, timeout=60)
        assert v.returncode == 0, v.stdout + v.stderr
        assert "status=200" in v.stdout and '"dummy_output": 10' in v.stdout
        assert f'"caller": "{dave}"' in v.stdout
        v = subprocess.run([sys.executable, str(EXAMPLES / "v11_validator.py"), "--uri", "//Dave",
                            "--axon-json", line, "--dendrite", "--replay"],
                           capture_output=True, text=True, timeout=60)
        assert v.returncode == 2 and "--replay" in v.stderr, v.stdout + v.stderr
    finally:
        miner.send_signal(signal.SIGTERM)
        _, err = miner.communicate(timeout=30)
    assert miner.returncode == 0, err
