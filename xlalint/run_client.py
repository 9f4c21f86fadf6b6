"""Start the child that runs a user's script for ``xlalint run`` and read back what it captured.

The child (``xlalint.backend.run_child``) is a fresh interpreter in its own session, working in a
scratch mirror of the user's working directory. It stops itself at the run budget; one that does
not (stuck in C code) is killed with everything it started a little later, and what it had
captured by then is kept. The scratch folder is removed whatever happens.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from typing import Any

from xlalint.child_end import death, kill_group
from xlalint.python_child import module_command
from xlalint.run_scratch import make_scratch, remove_scratch

IMPORT_ALLOWANCE_S = 120.0  # importing TensorFlow (not counted in the budget) and writing the result


def run_script(script: str | None, module: str | None, argv: list[str], budget: float, patience: int,
               first_step: bool = False) -> dict:
    """The child's result: ``records`` (one per captured function), ``stop``, ``redirected``, ``refused``;
    ``{"error": ...}`` where the child died before it ran the script."""
    cwd = os.path.realpath(os.getcwd())
    protected = [cwd] + ([os.path.dirname(os.path.realpath(script))] if script else [])
    scratch = make_scratch(cwd)
    work = tempfile.mkdtemp(prefix="xlalint-run-state-")
    try:
        request: dict[str, Any] = {"script": script and os.path.abspath(script), "module": module, "argv": argv, "cwd": cwd,
                   "scratch": scratch, "protected": protected, "budget": budget, "patience": patience,
                   "first_step": first_step,
                   "result": os.path.join(work, "result.json")}
        request_path = os.path.join(work, "request.json")
        with open(request_path, "w", encoding="utf-8") as handle:
            json.dump(request, handle)
        log_path = os.path.join(work, "output.log")
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"))
        with open(log_path, "wb") as log:
            child = subprocess.Popen(module_command("xlalint.backend.run_child", request_path), cwd=scratch,
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                     start_new_session=True)
        try:
            code = child.wait(timeout=budget + IMPORT_ALLOWANCE_S)
            killed = False
        except subprocess.TimeoutExpired:
            code, killed = None, True
        finally:
            kill_group(child.pid)  # whatever the script started goes with it
            child.wait()
        return _result(request["result"], code, killed, budget, log_path)
    finally:
        remove_scratch(scratch)
        shutil.rmtree(work, ignore_errors=True)


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
