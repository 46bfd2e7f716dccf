"""The PEP 517 build backend of bittensor_cpp, standard library only.

`pip install .` (from the repository root or from python/) calls it: it builds the CMake target
bt_python for the interpreter that runs it and packs the module and its type stubs into a wheel,
which pip then installs into that interpreter's environment (a virtual environment included).

The build directory is <repository>/build-pip/<tag>-<id>, one per Python build (a virtual
environment shares its base interpreter's), kept between installs so that a second install only
rebuilds what changed. BT_PIP_BUILD_DIR names an existing, already configured CMake build directory
to build in instead (it must have BT_BUILD_PYTHON on and be configured for this same Python build;
the backend never reconfigures it). CMAKE_ARGS adds arguments to the configure step of the
backend's own directory; CMAKE_BUILD_PARALLEL_LEVEL sets the build's parallelism (CMake reads it).

Only wheels: no sdist, no editable install.
"""

import base64
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[2]
MODULE = "bittensor_cpp"
DISTRIBUTION = "bittensor-cpp"
BUILD_DIR_VARIABLE = "BT_PIP_BUILD_DIR"
SUMMARY = "Bittensor axon, dendrite, keys and btauth/1 in C++, from Python (pybind11)"

# What identifies the Python build a module is compiled for: its version string (which names the
# build's date and compiler), its extension suffix and its base prefix (a venv's is its base's).
_IDENTITY_PROBE = (
    "import os, sys, sysconfig; "
    "print(sys.version.replace(chr(10), ' ')); "
    "print(sysconfig.get_config_var('EXT_SUFFIX')); "
    "print(os.path.realpath(sys.base_prefix))"
)


class BuildError(RuntimeError):
    """A build that cannot go on; pip shows the message."""


def _log(message):
    print("bt_wheel_backend: " + message, file=sys.stderr, flush=True)


def _version():
    """The project's version, read from the top-level CMakeLists.txt (where it is written once)."""
    text = (SOURCE_ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    match = re.search(r"project\(\s*bittensor_cpp\s+VERSION\s+([0-9.]+)", text)
    if not match:
        raise BuildError("no 'project(bittensor_cpp VERSION x.y.z' in %s/CMakeLists.txt" % SOURCE_ROOT)
    return match.group(1)


def _wheel_tag():
    """interpreter-abi-platform of a CPython extension module built for this interpreter."""
    if sys.implementation.name != "cpython":
        raise BuildError("bittensor_cpp builds for CPython only, not " + sys.implementation.name)
    python = "cp%d%d" % sys.version_info[:2]
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return "%s-%s%s-%s" % (python, python, sys.abiflags, platform)


def _base_interpreter():
    """The interpreter whose headers and libraries a module for this one is built against: a
    virtual environment's base, so that every venv of one Python shares one build directory and
    the build does not name a venv that may be deleted later."""
    return getattr(sys, "_base_executable", None) or sys.executable


def _identity_of(interpreter):
    result = subprocess.run([interpreter, "-c", _IDENTITY_PROBE], capture_output=True, text=True)
    if result.returncode != 0:
        raise BuildError("cannot run %s: %s" % (interpreter, result.stderr.strip()))
    return result.stdout.splitlines()


def _own_identity():
    return [sys.version.replace("\n", " "), sysconfig.get_config_var("EXT_SUFFIX"),
            os.path.realpath(sys.base_prefix)]


def _cache_entries(build_dir):
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        raise BuildError("%s=%s is not a configured CMake build directory (no CMakeCache.txt)"
                         % (BUILD_DIR_VARIABLE, build_dir))
    entries = {}
    for line in cache.read_text(encoding="utf-8", errors="replace").splitlines():
        match = re.match(r"^([A-Za-z_0-9]+):[A-Z]+=(.*)$", line)
        if match:
            entries[match.group(1)] = match.group(2)
    return entries


def _check_reused_build_dir(build_dir):
    """A reused directory must build bt_python for this very Python build."""
    entries = _cache_entries(build_dir)
    if entries.get("BT_BUILD_PYTHON", "").upper() not in ("ON", "TRUE", "1", "YES"):
        raise BuildError("%s=%s has BT_BUILD_PYTHON off; configure it with -DBT_BUILD_PYTHON=ON"
                         % (BUILD_DIR_VARIABLE, build_dir))
    interpreter = entries.get("_Python3_EXECUTABLE") or entries.get("Python3_EXECUTABLE")
    if not interpreter:
        raise BuildError("%s=%s names no Python3_EXECUTABLE" % (BUILD_DIR_VARIABLE, build_dir))
    if _identity_of(interpreter) != _own_identity():
        raise BuildError(
            "%s=%s is configured for %s, another Python build than this one (%s); unset %s or "
            "use a build directory configured with -DPython3_EXECUTABLE=%s"
            % (BUILD_DIR_VARIABLE, build_dir, interpreter, sys.executable, BUILD_DIR_VARIABLE,
               _base_interpreter()))


def _configure_own_build_dir():
    identity = "\n".join(_own_identity()).encode()
    build_dir = SOURCE_ROOT / "build-pip" / (
        "%s-%s" % (_wheel_tag(), hashlib.sha256(identity).hexdigest()[:10]))
    command = [
        "cmake", "-S", str(SOURCE_ROOT), "-B", str(build_dir),
        "-DCMAKE_BUILD_TYPE=Release", "-DPython3_EXECUTABLE=" + _base_interpreter(),
        "-DBT_BUILD_PYTHON=ON", "-DBT_BUILD_TESTS=OFF", "-DBT_BUILD_PERF=OFF",
        "-DBT_BUILD_EXAMPLES=OFF", "-DBT_BUILD_TOOLS=OFF",
    ]
    if not (build_dir / "CMakeCache.txt").exists() and shutil.which("ninja"):
        command += ["-G", "Ninja"]
    command += shlex.split(os.environ.get("CMAKE_ARGS", ""))
    _run(command)
    return build_dir


def _run(command):
    _log(" ".join(shlex.quote(part) for part in command))
    if subprocess.run(command).returncode != 0:
        raise BuildError("failed: " + " ".join(command))


def _build_module():
    """Builds bt_python and returns the module's path."""
    if shutil.which("cmake") is None:
        raise BuildError("cmake is not installed (Debian: apt-get install cmake; scripts/setup)")
    reused = os.environ.get(BUILD_DIR_VARIABLE)
    if reused:
        build_dir = Path(reused).resolve()
        _check_reused_build_dir(build_dir)
    else:
        build_dir = _configure_own_build_dir()
    _run(["cmake", "--build", str(build_dir), "--target", "bt_python"])
    module = build_dir / "python" / (MODULE + sysconfig.get_config_var("EXT_SUFFIX"))
    if not module.is_file():
        raise BuildError("the build made no " + str(module))
    return module


def _dist_info_name():
    return "%s-%s.dist-info" % (MODULE, _version())


def _metadata_files():
    """The dist-info files other than RECORD: name -> bytes."""
    metadata = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
                "Requires-Python: ==%d.%d.*\n" % ((DISTRIBUTION, _version(), SUMMARY)
                                                  + tuple(sys.version_info[:2])))
    wheel = ("Wheel-Version: 1.0\nGenerator: bt_wheel_backend\nRoot-Is-Purelib: false\n"
             "Tag: %s\n" % _wheel_tag())
    return {"METADATA": metadata.encode(), "WHEEL": wheel.encode(),
            "top_level.txt": (MODULE + "\n").encode()}


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (name, digest, len(data))


def _write_wheel(path, files):
    """files: (name in the wheel, bytes, mode); RECORD is added last."""
    record_name = _dist_info_name() + "/RECORD"
    record = "".join(_record_line(name, data) for name, data, _ in files) + record_name + ",,\n"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for name, data, mode in files + [(record_name, record.encode(), 0o644)]:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)


# The PEP 517 hooks.


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info = Path(metadata_directory) / _dist_info_name()
    dist_info.mkdir(parents=True, exist_ok=True)
    for name, data in _metadata_files().items():
        (dist_info / name).write_bytes(data)
    return dist_info.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    module = _build_module()
    stubs = SOURCE_ROOT / "python" / (MODULE + ".pyi")
    files = [(module.name, module.read_bytes(), 0o755), (stubs.name, stubs.read_bytes(), 0o644)]
    files += [(_dist_info_name() + "/" + name, data, 0o644)
              for name, data in _metadata_files().items()]
    wheel_name = "%s-%s-%s.whl" % (MODULE, _version(), _wheel_tag())
    _write_wheel(Path(wheel_directory) / wheel_name, files)
    _log("wrote " + wheel_name)
    return wheel_name
