"""Run a user's script for ``xlalint run`` in a child of a TensorFlow server, and read back what it captured.

One server (``backend/run/server.py``) serves every run of the command: TensorFlow, Keras and the
libraries the scripts import are imported once, and each run is a child forked from it (on Linux;
elsewhere, or with ``XLALINT_NO_FORK=1``, a fresh interpreter per run), in its own session,
working in a scratch mirror of the user's working directory. The child stops itself at the run
budget; one that does not (stuck in C code) is killed with everything it started a little later,
and what it had captured by then is kept. The scratch folder is removed whatever happens, and
closing the server kills everything it started.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
from typing import Any

from xlalint.process.child_end import death
from xlalint.tracing.preload_plan import run_preloads
from xlalint.process.result_file import aside
from xlalint.process.scratch import make_scratch, remove_scratch
from xlalint.tracing.pool import ServerPool
from xlalint.tracing.server import WorkerError

IMPORT_ALLOWANCE_S = 120.0  # setting up the run (and, without fork, importing TensorFlow) and writing the result


class RunServer:
    """The servers of one ``xlalint run``: each run in a fresh child, ``jobs`` runs at once (one per thread calling
    ``run``, each with its own server: a clone of one that imported TensorFlow, ``ServerPool``); a context manager."""

    def __init__(self, runs: list[tuple[str, str | None]], jobs: int = 1):
        """``runs``: ``(file, MODULE)`` of each run (MODULE None for a script), whose libraries the server
        imports before it forks (``run_preloads``)."""
        self.work = tempfile.mkdtemp(prefix="xlalint-run-state-")
        self.env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"))
        self.preload = run_preloads(runs)  # the libraries a server imports before it forks (the pool's own list)
        self.closed: WorkerError | None = None
        self.pool = ServerPool("xlalint.backend.run.server", self.preload, {}, self.work, "run server", jobs,
                               stopped=lambda: self.closed)
        self.local = threading.local()  # the server of the calling thread
        self.lock = threading.Lock()
        self.runs = 0

    def __enter__(self) -> RunServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Kill the servers with every run they started, and remove the run's files."""
        self.closed = WorkerError("the run was stopped")
        self.pool.kill_all()
        shutil.rmtree(self.work, ignore_errors=True)

    def run(self, script: str | None, module: str | None, argv: list[str], budget: float, patience: int,
            first_step: bool = False) -> dict:
        """The child's result: ``records`` (one per captured function), ``stop``, ``redirected``, ``refused``,
        ``server`` (the pid that imported TensorFlow); ``{"error": ...}`` where the script never ran.

        A script that failed after a compiled function answered it with zeros (an ``assert`` on a value,
        an iterator drained by a computed count) is run again from the start in a fresh child with real
        values (``first_step``); ``rerun`` then says why, and the run that got further is kept."""
        result = self._run_once(script, module, argv, budget, patience, first_step)
        if first_step or not broken_by_zeros(result):
            return result
        again = self._run_once(script, module, argv, budget, patience, True)
        return with_rerun(result, again)

    def _run_once(self, script: str | None, module: str | None, argv: list[str], budget: float, patience: int,
                  first_step: bool) -> dict:
        cwd = os.path.realpath(os.getcwd())
        protected = [cwd] + ([os.path.dirname(os.path.realpath(script))] if script else [])
        with self.lock:
            self.runs += 1
            number = self.runs
        files = {"result": os.path.join(self.work, f"{number}.json"), "log": os.path.join(self.work, f"{number}.log")}
        scratch = make_scratch(cwd)
        try:
            request: dict[str, Any] = {
                "script": script and os.path.abspath(script), "module": module, "argv": argv, "cwd": cwd,
                "scratch": scratch, "protected": protected, "budget": budget, "patience": patience,
                "first_step": first_step, "env": self.env, **files}
            return self._served(request)
        finally:
            remove_scratch(scratch)
            for path in [*files.values(), aside(files["result"])]:
                with contextlib.suppress(OSError):
                    os.unlink(path)

    def _served(self, request: dict) -> dict:
        server = getattr(self.local, "server", None)
        if server is None or not server.alive:
            self.pool.env = {**self.env, "TMPDIR": self.work}  # the environment as it is when a server starts
            try:
                server = self.local.server = self.pool.server()
            except WorkerError as error:
                return {"error": str(error)}
        if server.start(request) is None:
            stopped = server.stopped("the run")
            server.kill()
            return {"error": stopped}
        end, killed = server.finish(request["budget"] + IMPORT_ALLOWANCE_S)
        code = end["code"] if end else (None if killed else server.exit_code())  # not forking: the server ran it
        server.done(end)
        return _result(request["result"], code, killed is not None, request["budget"], request["log"])


def broken_by_zeros(result: dict) -> bool:
    """Whether the script failed (raised, or exited with an error status) after a call answered with zeros."""
    return bool(result.get("zeros_from")) and result["stop"]["kind"] in ("error", "exit")


def with_rerun(first: dict, again: dict) -> dict:
    """The result to report when ``again`` reran with real values a run that zeros broke: ``again``, unless it
    captured less than ``first``; either way with ``rerun``, what broke the first run and what was kept."""
    kept_again = not again.get("error") and len(again["records"]) >= len(first["records"])
    rerun = {"zeros_from": first["zeros_from"], "stop": first["stop"], "kept": "real values" if kept_again else
             "zeros", "why": None if kept_again else again.get("error") or "the run with real values captured less"}
    return {**(again if kept_again else first), "rerun": rerun}


def run_script(script: str | None, module: str | None, argv: list[str], budget: float, patience: int,
               first_step: bool = False) -> dict:
    """One run in a server of its own (``RunServer.run``)."""
    with RunServer([(script, None)] if script else []) as server:
        return server.run(script, module, argv, budget, patience, first_step)


def _result(path: str, code: int | None, killed: bool, budget: float, log: str) -> dict:
    result = None
    with contextlib.suppress(OSError, ValueError), open(path, encoding="utf-8") as handle:
        result = json.load(handle)
    if result is None:
        if killed or code is None:  # killed: no exit code
            return {"error": f"the run was killed {IMPORT_ALLOWANCE_S:g}s past its budget, before it captured anything"}
        return {"error": death(code, log, "the run")}
    if result.get("stop") is None:  # killed from outside while it ran: keep what it captured
        result["stop"] = {"kind": "budget", "where": None,
                          "reason": f"the run did not stop at its budget of {budget:g}s and was killed"}
    return result
