#!/usr/bin/env bash
# `pip install --no-build-isolation .` into a throwaway virtual environment, reusing the configured
# CMake build directory <build> (BT_PIP_BUILD_DIR: its bt_python is built, not reconfigured), then
# `import bittensor_cpp` from outside the tree with no PYTHONPATH: the module must come from the
# venv's site-packages and sign with a known key. The venv is made with the interpreter <build> was
# configured for (the module's ABI is that Python build's); pip runs offline (--no-index).
# Usage: tests/packaging/pip_install_test.sh <build>
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: $0 <cmake build directory with BT_BUILD_PYTHON=ON>}" && pwd)

python=$(sed -nE 's/^_?Python3_EXECUTABLE:[A-Z]+=(.+)$/\1/p' "$build/CMakeCache.txt" | tail -n 1)
[[ -x $python ]] || { echo "pip_install_test: no Python3_EXECUTABLE in $build/CMakeCache.txt" >&2; exit 1; }
work=$(mktemp -d /tmp/bt-pip-install.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$python" -m venv "$work/venv"
BT_PIP_BUILD_DIR=$build "$work/venv/bin/python" -m pip install --no-build-isolation --no-index \
  --disable-pip-version-check --quiet .
(cd "$work" && env -u PYTHONPATH "$work/venv/bin/python" -c '
import sys, bittensor_cpp
assert bittensor_cpp.__file__.startswith(sys.prefix + "/"), (bittensor_cpp.__file__, sys.prefix)
alice = bittensor_cpp.Keypair.from_uri("//Alice")
assert alice.ss58_address == "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY", alice.ss58_address
assert alice.verify(b"x", alice.sign(b"x"))
print("pip install: ok:", bittensor_cpp.__file__)')
shown=$("$work/venv/bin/python" -m pip show --disable-pip-version-check bittensor-cpp)
[[ $shown == *"Name: bittensor-cpp"* ]] || { echo "pip_install_test: pip show: $shown" >&2; exit 1; }
