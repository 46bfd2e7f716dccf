"""A bt-axon process for the perf scripts: started as //Bob on a free loopback port, its AxonInfo
read from the JSON line it prints when it listens, and stopped with SIGTERM (SIGKILL after 30 s)."""
import json
import os
import select
import signal
import subprocess

import bittensor_cpp as bt


class AxonStartError(RuntimeError):
    """bt-axon did not print its AxonInfo line in time."""


def start_axon(exe, extra=()):
    """Starts `exe` with `extra` arguments; returns (process, bt.AxonInfo). LD_PRELOAD is not
    passed on: in an ASan tree it carries the sanitizer runtime for python3, and bt-axon, which
    has it linked in, refuses a second one."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    proc = subprocess.Popen([exe, "--uri", "//Bob", "--axon.ip", "127.0.0.1", "--axon.port", "0",
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    if not select.select([proc.stdout], [], [], 30)[0]:
        stop_axon(proc)
        raise AxonStartError("bt-axon printed no AxonInfo line within 30 s")
    info = json.loads(proc.stdout.readline())
    return proc, bt.AxonInfo(ip=info["ip"], port=info["port"], hotkey=info["hotkey"])


def stop_axon(proc):
    """SIGTERM (bt-axon drains and exits), SIGKILL if it has not exited after 30 s."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
