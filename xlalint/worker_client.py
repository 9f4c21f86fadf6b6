"""Run the tracing worker in a child process, with a timeout and a memory limit per file.

TensorFlow is imported once per run. When a user module crashes, hangs, exits
the worker or makes it exceed the memory limit, that file gets an error, the
worker is replaced and the remaining files go on.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from xlalint.gc_pause import gc_paused

IMPORT_TIMEOUT_S = 300.0  # importing TensorFlow on a cold, busy machine
MEMORY_POLL_S = 0.1  # how often the worker's resident memory is read while waiting for it
PAGE = os.sysconf("SC_PAGE_SIZE")


class WorkerError(RuntimeError):
    """The worker could not start at all (e.g. TensorFlow is not installed)."""


@dataclass
class WorkerResult:
    tensorflow: str | None
    files: dict[str, dict]  # path -> the worker's "file" message


def _resident_bytes(pid: int) -> int:
    """Resident memory of a process (Linux /proc; 0 where it cannot be read)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


class _Channel:
    """Line reader over the worker's message pipe with a deadline and a memory limit."""

    def __init__(self, proc: subprocess.Popen, max_memory_mb: int):
        self.proc = proc
        self.max_bytes = max_memory_mb << 20  # 0: no limit
        self.buffer = bytearray()
        self.searched = 0  # no newline before this offset (messages of large graphs are many MB)
        self.closed = False  # the worker closed its end: it has exited or is exiting
        self.over_memory = False  # the worker's resident memory went over the limit

    def read(self, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        end = self.buffer.find(b"\n")
        while end < 0:
            self.searched = len(self.buffer)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready = select.select([fd], [], [], min(left, MEMORY_POLL_S) if self.max_bytes else left)[0]
            if self.max_bytes and _resident_bytes(self.proc.pid) > self.max_bytes:
                self.over_memory = True
                return None
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                self.closed = True
                return None
            self.buffer += chunk
            end = self.buffer.find(b"\n", self.searched)
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        self.searched = 0
        with gc_paused():
            return json.loads(line)


def _tail(log) -> str:
    log.seek(0)
    lines = [line for line in log.read().decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _death(proc: subprocess.Popen, log) -> str:
    proc.wait()
    code = proc.returncode
    how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
    tail = _tail(log)
    return f"the traced module {how}" + (f": {tail}" if tail else "")


def run_worker(requests: list[dict], timeout: float, progress=None, jobs: int = 1,
               max_memory_mb: int = 0) -> WorkerResult:
    """Trace each file request; returns per-file results, errors included.

    ``jobs`` workers share the files (round-robin); ``progress(path)`` is called as a
    worker starts on each file. A worker whose resident memory exceeds ``max_memory_mb``
    (0: no limit) is killed, as on a timeout.
    """
    jobs = max(1, min(jobs, len(requests)))
    if jobs == 1:
        return _run_one_worker(requests, timeout, progress, max_memory_mb)
    with ThreadPoolExecutor(jobs) as pool:
        parts = list(pool.map(lambda share: _run_one_worker(share, timeout, progress, max_memory_mb),
                              [requests[i::jobs] for i in range(jobs)]))
    return WorkerResult(parts[0].tensorflow, {path: r for part in parts for path, r in part.files.items()})


def _run_one_worker(requests: list[dict], timeout: float, progress, max_memory_mb: int) -> WorkerResult:
    results: dict[str, dict] = {}
    tensorflow = None
    pending = list(requests)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"))
    if not any(r.get("verify") and r["verify"]["device"] in (None, "gpu") for r in requests):
        env["CUDA_VISIBLE_DEVICES"] = ""  # trace what a CPU builds: Keras builds cuDNN ops where it sees a GPU
    while pending:
        with tempfile.TemporaryFile() as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "xlalint.backend.worker"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
            )
            try:
                proc.stdin.write(json.dumps({"files": pending}).encode())
                proc.stdin.close()
                channel = _Channel(proc, max_memory_mb)
                over = f"exceeded the memory limit of {max_memory_mb} MB"
                ready = channel.read(IMPORT_TIMEOUT_S)
                if ready is None or ready["type"] == "fatal":
                    if not channel.closed:
                        proc.kill()
                    reason = ready["message"] if ready else (
                        f"it {over} (see --max-memory)" if channel.over_memory else _death(proc, log))
                    raise WorkerError(f"could not start the TensorFlow worker: {reason}")
                tensorflow = ready["tensorflow"]
                while pending:
                    current = pending[0]["path"]
                    start = channel.read(IMPORT_TIMEOUT_S)
                    if start and progress:
                        progress(current)
                    message = channel.read(timeout) if start else None
                    if message is None:
                        if channel.closed:
                            error = _death(proc, log)
                        else:
                            proc.kill()
                            proc.wait()
                            error = (f"{over} while importing or tracing (see --max-memory)" if channel.over_memory
                                     else f"timed out after {timeout:g}s while importing or tracing (see --timeout)")
                        results[current] = {"path": current, "entries": [], "error": error}
                        pending.pop(0)
                        break
                    results[current] = message
                    pending.pop(0)
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
    return WorkerResult(tensorflow, results)
