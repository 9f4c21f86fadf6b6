"""A tracing server without TensorFlow, for fast tests of the parent's side (server_client, worker_client).

Tests start it in place of ``xlalint.backend.worker`` (``python -m stand_in_server``, tests/ on PYTHONPATH).
It serves with the real ``fork_server.serve``, clones included, but imports nothing: each request's child runs
the file as a script (no TensorFlow in it), with the request as ``REQUEST``, then writes a result without entries
that names the server that forked it (``server``) and that server's parent (``origin``: this test process for a
fresh server, the origin for a clone), updated with the file's ``RESULT`` where it sets one.
"""

import os
import runpy

from helpers import parent

from xlalint.backend.fork_server import forking, open_channel, send, serve
from xlalint.process.result_file import write_result


def check(request: dict) -> None:
    ran = runpy.run_path(request["path"], {"REQUEST": request})
    server = os.getppid()
    write_result(request["result"], {"path": request["path"], "entries": [], "error": None, "server": server,
                                     "origin": parent(server), **ran.get("RESULT", {})})


if __name__ == "__main__":
    channel = open_channel()
    send(channel, {"type": "ready", "tensorflow": "stand-in", "keras": "stand-in", "fork": forking(), "threaded": []})
    serve(channel, check, forking())
