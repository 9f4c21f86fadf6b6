"""The child process of ``xlalint run``: run the user's script as ``__main__`` and capture what it compiles.

Called by the run server (``run_server``) in the child it forked for the run, in the scratch working
directory (``xlalint.process.scratch``): installs the harness (``harness.py``: capture, Keras, guard), then runs the
script with the ``sys.argv`` and ``sys.path`` that ``python SCRIPT ARGS`` (or ``python -m MODULE
ARGS``) gives. The result file is rewritten after each capture, so a run killed from outside keeps
what it found.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import traceback
import types
from typing import Any

from xlalint.backend.frames import is_user_file
from xlalint.inputs.files import read_source
from xlalint.inputs.notebooks import is_notebook, remember_source
from xlalint.process.result_file import write_whole
from xlalint.process.scratch import mirrored_folder


def _user_line(error: BaseException) -> list | None:
    """``[file, line, function]`` of the innermost user frame in the exception's traceback."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if is_user_file(f.filename)]
    return [os.path.realpath(frames[-1].filename), frames[-1].lineno, frames[-1].name] if frames else None


def _run_script(request: dict) -> None:
    if request.get("module"):
        sys.argv = [request["module"], *request["argv"]]
        sys.path.insert(0, request["cwd"])
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    else:
        sys.argv = [request["script"], *request["argv"]]
        sys.path.insert(0, os.path.dirname(request["script"]))
        if is_notebook(request["script"]):
            sys.path.insert(1, "")  # Jupyter's kernel also imports from its working directory, as it is then
            folder = os.path.dirname(os.path.realpath(request["script"]))  # and runs the notebook in its folder
            os.chdir(mirrored_folder(os.getcwd(), os.path.realpath(request["cwd"]), folder) or os.getcwd())
            _run_notebook(request["script"])
        else:
            runpy.run_path(request["script"], run_name="__main__")


def _run_notebook(path: str) -> None:
    """The notebook's code cells in order, as ``__main__``, as a kernel runs them (xlalint.inputs.notebooks)."""
    source, error = read_source(path)
    if error:
        raise ValueError(error)
    remember_source(path, source)
    main = types.ModuleType("__main__")
    main.__file__ = path
    sys.modules["__main__"] = main
    exec(compile(source, path, "exec"), main.__dict__)  # noqa: S102 - running the user's code is the point


def run(request: dict, server: int) -> None:
    """Run the request's script; ``server``: the pid of the process that imported TensorFlow."""
    import keras
    import tensorflow as tf

    from xlalint.backend.keras_sites import LayerRecorder
    from xlalint.backend.run import hooks as run_hooks
    from xlalint.backend.run.guard import RunStop
    from xlalint.backend.run.harness import Harness

    recorder = LayerRecorder()
    result = {"tensorflow": tf.__version__, "keras": keras.__version__, "server": server, "records": [], "stop": None,
              "hooks_supported": run_hooks.installed() in run_hooks.SUPPORTED}

    def save() -> None:
        result.update(records=capture.records, redirected=sorted(set(guard.redirected)), refused=guard.refused)
        # JSON, as the parent reads it (the C encoder: json.dump would stream it in Python)
        write_whole(request["result"], json.dumps(result, check_circular=False, separators=(",", ":")).encode())

    harness = Harness(recorder, request["scratch"], request["protected"], [os.path.dirname(request["result"])],
                      request["patience"], request["first_step"], save)
    capture, guard = harness.capture, harness.guard
    sys.dont_write_bytecode = True  # no __pycache__ in the user's folders
    recorder.install()
    harness.install()
    try:
        budget = request["budget"]
        with harness.budget(budget, f"the run budget of {budget:g}s ran out (see --run-timeout)"):
            _run_script(request)
        stop: dict[str, Any] = {"kind": "ended", "reason": "the script ended", "where": None}
    except RunStop as error:
        stop = {"kind": error.args[2], "reason": error.args[0], "where": error.args[1]}
    except SystemExit as error:
        code = error.code if isinstance(error.code, int) or error.code is None else 1
        stop = {"kind": "ended" if not code else "exit", "where": _user_line(error),
                "reason": f"the script exited with status {code or 0}"}
    except BaseException as error:  # noqa: BLE001 - the script's own failure is part of the report
        message = str(error).strip().splitlines()
        stop = {"kind": "error", "where": _user_line(error),
                "reason": f"the script raised {type(error).__name__}" + (f": {message[0][:300]}" if message else "")}
    result["stop"] = stop
    result["calls"] = capture.calls
    result["zeros_from"] = capture.zeros_from
    save()

