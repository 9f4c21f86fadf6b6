"""``xlalint run``'s server: TensorFlow, Keras and the scripts' libraries imported once, each run in a forked child.

Started as ``run_server [LIBRARY...]`` (``xlalint.tracing.preload_plan.run_preloads``) with the environment a
fresh interpreter for the run would have, and its own ``TMPDIR`` (what warming up leaves there goes
with the run). Each request is one run (``run_child``), served as in ``fork_server``: the child
starts its own session, writes its output to the request's log, works in the scratch folder, takes
the request's environment (with what importing TensorFlow, Keras and the preloaded libraries set in
it, as they would in a fresh interpreter), installs the hooks and runs the script. The libraries are
preloaded for every listed command at once, so a command whose script does not import one still sees
what that library set in the environment at its import.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

from xlalint.backend.fork_server import import_tensorflow, open_channel, ready, redirect_output, serve

RUN_MODULES = ("xlalint.backend.run.child", "xlalint.backend.run.capture", "xlalint.backend.run.keras_steps",
               "xlalint.backend.run.guard", "xlalint.backend.keras_sites")


def _run(request: dict, imported: dict[str, str], server: int) -> None:
    from xlalint.backend.run import child as run_child

    redirect_output(request["log"])
    os.chdir(request["scratch"])
    os.environ.clear()
    os.environ.update({**request["env"], **imported})
    tempfile.tempdir = None  # found again from the environment, as in a fresh interpreter
    run_child.run(request, server)


def main() -> None:
    channel = open_channel()
    before = dict(os.environ)
    started = time.perf_counter()
    versions = import_tensorflow(channel, RUN_MODULES)
    if versions is None:
        return
    server = os.getpid()
    fork = ready(channel, versions, started, sys.argv[1:], RUN_MODULES)  # the preloads may set some too
    imported = {name: value for name, value in os.environ.items() if before.get(name) != value}
    serve(channel, lambda request: _run(request, imported, server), fork)


if __name__ == "__main__":
    main()
