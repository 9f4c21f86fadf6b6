"""Run the tracing worker in a child process, with a timeout per file.

TensorFlow is imported once per run. When a user module crashes, hangs or
exits the worker, that file gets an error, the worker is replaced and the
remaining files go on.
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

IMPORT_TIMEOUT_S = 300.0  # importing TensorFlow on a cold, busy machine


class WorkerError(RuntimeError):
    """The worker could not start at all (e.g. TensorFlow is not installed)."""


@dataclass
class WorkerResult:
    tensorflow: str | None
    files: dict[str, dict]  # path -> the worker's "file" message


class _Channel:
    """Line reader over the worker's message pipe with a deadline."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.buffer = bytearray()
        self.searched = 0  # no newline before this offset (messages of large graphs are many MB)
        self.closed = False  # the worker closed its end: it has exited or is exiting

    def read(self, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        end = self.buffer.find(b"\n")
        while end < 0:
            self.searched = len(self.buffer)
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                self.closed = True
                return None
            self.buffer += chunk
            end = self.buffer.find(b"\n", self.searched)
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        self.searched = 0
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


def run_worker(requests: list[dict], timeout: float, progress=None, jobs: int = 1) -> WorkerResult:
    """Trace each file request; returns per-file results, errors included.

    ``jobs`` workers share the files (round-robin); ``progress(path)`` is called as a
    worker starts on each file.
    """
    jobs = max(1, min(jobs, len(requests)))
    if jobs == 1:
        return _run_one_worker(requests, timeout, progress)
    with ThreadPoolExecutor(jobs) as pool:
        parts = list(pool.map(lambda share: _run_one_worker(share, timeout, progress),
                              [requests[i::jobs] for i in range(jobs)]))
    return WorkerResult(parts[0].tensorflow, {path: r for part in parts for path, r in part.files.items()})


def _run_one_worker(requests: list[dict], timeout: float, progress) -> WorkerResult:
    results: dict[str, dict] = {}
    tensorflow = None
    pending = list(requests)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"))
    while pending:
        with tempfile.TemporaryFile() as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "xlalint.backend.worker"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
            )
            try:
                proc.stdin.write(json.dumps({"files": pending}).encode())
                proc.stdin.close()
                channel = _Channel(proc)
                ready = channel.read(IMPORT_TIMEOUT_S)
                if ready is None or ready["type"] == "fatal":
                    if not channel.closed:
                        proc.kill()
                    reason = ready["message"] if ready else _death(proc, log)
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
                            error = f"timed out after {timeout:g}s while importing or tracing (see --timeout)"
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
