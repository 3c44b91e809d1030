"""One command as a child process, measured: wall time, CPU time, and memory of it and every process it starts.

Memory is sampled from /proc every `SAMPLE_S` while the command runs: "peak MB" is the most the whole
tree held at once as PSS (each page shared between processes counted once in all, so forked workers do
not count their parent's memory again); "peak anon MB" the same of its anonymous memory alone (what the
processes allocated, without the files they map: shared libraries, the full-text index's segments, which
the kernel can drop at will); "max RSS MB" is the kernel's own high-water mark of the largest single
process (`ru_maxrss`), exact even for a command too short to sample. Linux only.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

SAMPLE_S = 0.05


@dataclass(frozen=True)
class Measured:
    wall_s: float
    cpu_s: float  # user + system of the command and the children it waited for
    peak_mb: float  # the most PSS its process tree held at once (sampled)
    peak_anon_mb: float  # ... of anonymous memory
    max_rss_mb: float  # ru_maxrss: the largest single process's peak RSS
    load: float  # the 1-minute load average when it started
    stdout: str
    stderr: str


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                found += [int(child) for child in handle.read().split()]
    except OSError:  # gone meanwhile
        pass
    return found


def _pss_kb(pid: int) -> tuple[int, int]:
    """(PSS, PSS of anonymous memory) in KB."""
    found = {"Pss:": 0, "Pss_Anon:": 0}
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as handle:
            for line in handle:
                name = line.split(maxsplit=1)[0]
                if name in found:
                    found[name] = int(line.split()[1])
    except OSError:
        pass
    return found["Pss:"], found["Pss_Anon:"]


def tree_pss(root: int) -> tuple[float, float]:
    """(PSS, anonymous PSS) of `root` and all its descendants now, in MB."""
    pids, total, anon = [root], 0, 0
    while pids:
        pid = pids.pop()
        pss, pss_anon = _pss_kb(pid)
        total, anon = total + pss, anon + pss_anon
        pids += _children(pid)
    return total / 1024, anon / 1024


def tree_pss_mb(root: int) -> float:
    """PSS of `root` and all its descendants now, in MB."""
    return tree_pss(root)[0]


class _Sampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = self.peak_anon = 0.0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            pss, anon = tree_pss(self.pid)
            self.peak, self.peak_anon = max(self.peak, pss), max(self.peak_anon, anon)
            self.done.wait(SAMPLE_S)


def run(command: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
        stdin: str | None = None, timeout: float = 7200) -> Measured:
    """Run `command` to its end; raises RuntimeError (with its output) when it fails."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.TemporaryFile("w+") as given:
        given.write(stdin or "")
        given.seek(0)
        started = time.perf_counter()
        process = subprocess.Popen(command, env=env, cwd=cwd, text=True, stdin=given, stdout=out, stderr=err)
        sampler = _Sampler(process.pid)
        sampler.start()
        timer = threading.Timer(timeout, process.kill)
        timer.start()
        try:
            # wait4, not Popen.wait: it returns the child's own resource usage (CPU of it and the children it
            # waited for, its max RSS).
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            timer.cancel()
            sampler.done.set()
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        sampler.join()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {process.returncode}:\n{stdout[-2000:]}\n{stderr[-4000:]}")
    return Measured(wall_s=wall, cpu_s=usage.ru_utime + usage.ru_stime, peak_mb=sampler.peak,
                    peak_anon_mb=sampler.peak_anon, max_rss_mb=usage.ru_maxrss / 1024, load=load, stdout=stdout,
                    stderr=stderr)
