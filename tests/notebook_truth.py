"""Run a notebook as Jupyter runs it, with XLA compiling for real: the truth for xlalint on notebooks.

``python notebook_truth.py OUT.json NOTEBOOK`` runs the notebook's code cells in order in IPython's own
shell (its magics, its shell lines, its ``linecache`` for AutoGraph), in the notebook's folder, going on
after a cell that fails as "run all, ignore errors" would. It writes one outcome per code cell, by cell
number (counted among all cells, as xlalint counts them): whether it ran, else the exception's type, the
op the compiler refused, and the innermost user place that the compiler's "The op is created at:" names,
as ``["cell", N, LINE]`` for a cell or ``[FILE, LINE]`` for a file under the notebook's folder.
"""

import json
import os
import re
import signal
import socket
import sys

import nbformat
from IPython.core.interactiveshell import InteractiveShell

LIMIT_S = 120
_UNSUPPORTED = re.compile(r"on XLA_\w+_JIT: (?P<op>\w+) \(")
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_CELL_FILE = re.compile(r"<ipython-input-(?P<count>\d+)-")


def _place(file: str, line: int, cells: dict[int, int], folder: str) -> list | None:
    """A frame of the compiler's message as a place in the notebook or in a file of its folder."""
    cell = _CELL_FILE.match(file)
    if cell:
        return ["cell", cells[int(cell["count"])], line] if int(cell["count"]) in cells else None
    real = os.path.realpath(file)
    return [os.path.relpath(real, folder), line] if real.startswith(folder + os.sep) else None


def _outcome(error: BaseException | None, cells: dict[int, int], folder: str) -> dict:
    if error is None:
        return {"ok": True}
    message = str(error)
    found = _UNSUPPORTED.search(message)
    created = message.split("The op is created at:", 1)[1].split("tf2xla conversion failed")[0] \
        if "The op is created at:" in message else ""
    places = [p for m in _FRAME.finditer(created) if (p := _place(m["file"], int(m["line"]), cells, folder))]
    return {"ok": False, "type": type(error).__name__, "op": found and found["op"],
            "compiler_at": places[-1] if places else None}


def main(out: str, path: str) -> None:
    socket.setdefaulttimeout(10)
    signal.alarm(LIMIT_S)
    folder = os.path.dirname(os.path.realpath(path))
    os.chdir(folder)
    notebook = nbformat.read(path, as_version=4)
    shell = InteractiveShell.instance()
    cells: dict[int, int] = {}  # IPython's execution count -> cell number
    outcomes = {}
    for number, cell in enumerate(notebook.cells, 1):
        if cell.cell_type != "code":
            continue
        cells[shell.execution_count] = number
        result = shell.run_cell(cell.source, store_history=True, silent=False)
        error = result.error_in_exec or result.error_before_exec
        outcomes[number] = _outcome(error, cells, folder)
    with open(out, "w") as handle:
        json.dump(outcomes, handle)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
