"""Which files to check, how to name them, and what can be said before running them."""

from __future__ import annotations

import ast
import contextlib
import hashlib
import os
import re
import stat
import sys
import threading
from typing import Collection

from xlalint.inputs.notebooks import NotebookError, is_notebook, read_notebook
from xlalint.core.results import FileError

PYTHON_RECURSION_LIMIT = 1000  # a fresh interpreter's, under which `python file.py` compiles the file
_LIMIT_SET = threading.Lock()  # the limit is the process's: one parse at a time sets it and puts it back
# tensorflow, keras, tf_keras and their companions (tensorflow_text, keras_hub...), or a transformers TF model class
MENTIONS_TF = re.compile(r"\b((tensorflow|keras|tf_keras)(_\w+)?|TF[A-Z][A-Za-z0-9]*(Model|For[A-Za-z]+))\b")
# Shell scripts, Dockerfiles and .env files: scanned for TF_XLA_FLAGS misuse (XLA402) and read for what turns
# auto-clustering on for the programs beside them (autocluster/program.py), never traced.
ENV_FILE = re.compile(r"^(Dockerfile.*|.*\.dockerfile|.*\.sh|.*\.bash|.*\.env)$")
SKIP_DIRS = frozenset({".git", ".hg", ".venv", "venv", "__pycache__", "node_modules", "build", "dist", ".tox"})


_shown_from: str | None = None  # the folder paths are shown from; None: the working directory


def show_paths_from(folder: str) -> None:
    """Show paths relative to ``folder`` from now on in this process (a child that runs user code in a
    scratch folder still names files as the user's working directory does)."""
    global _shown_from
    _shown_from = folder


def shown_from() -> str:
    """The folder paths are shown from."""
    return _shown_from or os.getcwd()


def display_path(path: str) -> str:
    rel = os.path.relpath(path, _shown_from)
    return path if rel.startswith("..") else rel


def is_saved_model(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "saved_model.pb"))


def is_env_file(path: str) -> bool:
    return bool(ENV_FILE.match(os.path.basename(path)))


def collect_files(paths: list[str], excluded=None, unsaved: Collection[str] = ()) -> tuple[list[str], list[FileError]]:
    """What to check: given files and SavedModel directories, and every ``.py`` file, notebook, shell
    script and Dockerfile under other directories; none for which ``excluded(path)`` is true. ``unsaved``: absolute
    paths of files an editor holds, which may not be on disk yet."""
    files, errors = [], []
    for path in paths:
        if is_saved_model(path):
            files.append(path)
        elif os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
                wanted = (os.path.join(root, n) for n in sorted(names) if n.endswith((".py", ".ipynb")) or is_env_file(n))
                files.extend(p for p in wanted if os.path.isfile(p))  # skips broken and looping links
        elif os.path.isfile(path) or os.path.abspath(path) in unsaved:
            files.append(path)
        elif os.path.islink(path):
            errors.append(FileError(display_path(path), "broken or looping symbolic link"))
        else:
            errors.append(FileError(display_path(path), "no such file or directory"))
    return [f for f in _first_spellings(files) if not (excluded and excluded(f))], errors


def _first_spellings(files: list[str]):
    """Each file once (``a.py ./a.py``, a link to it, ``dir dir/a.py``), as first given, made absolute."""
    seen = set()
    for path in files:
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            yield os.path.abspath(path)


def read_source(path: str) -> tuple[str, str | None]:
    """``(source, None)`` (without a byte-order mark), or ``("", error)`` when the file cannot be
    read as UTF-8 text. A notebook's source is its code cells as one module (xlalint.inputs.notebooks)."""
    if is_notebook(path):
        try:
            return read_notebook(path).source, None
        except NotebookError as error:
            return "", str(error)
        except OSError as error:
            return "", f"cannot read the file: {error.strerror}"
    try:
        with open(path, encoding="utf-8-sig") as handle:  # a byte-order mark is fine, as for Python
            return handle.read(), None
    except UnicodeDecodeError as error:
        return "", f"cannot decode the file as UTF-8 ({error.reason} at byte {error.start})"
    except OSError as error:
        return "", f"cannot read the file: {error.strerror}"


def precheck(path: str, explicit: bool) -> tuple[str | None, bool]:
    """``(error, skip)`` from reading and parsing the file without running it."""
    source, error = read_source(path)
    if error:
        return error, False
    _, error = parse_python(source, path)
    if error:
        return error, False
    if not MENTIONS_TF.search(source):
        return ("no TensorFlow in this file: nothing to check", False) if explicit else (None, True)
    return None, False


@contextlib.contextmanager
def _default_recursion_limit():
    """Parse as a fresh ``python file.py`` would, whatever this process raised its limit to (TensorFlow
    raises it to 3000 when imported): the answer must not depend on what else ran here. One thread at a time (the
    source pass scans ahead in a thread): two would put back each other's limit, and leave the process at 1000."""
    with _LIMIT_SET:
        previous = sys.getrecursionlimit()
        sys.setrecursionlimit(PYTHON_RECURSION_LIMIT)
        try:
            yield
        finally:
            sys.setrecursionlimit(previous)


def parse_python(source: str, path: str = "<unknown>") -> tuple[ast.Module | None, str | None]:
    """``(tree, None)``, or ``(None, why)`` when Python cannot compile ``source`` (nor import it)."""
    nul = source.find("\0")
    if nul >= 0:
        line = source.count("\n", 0, nul) + 1
        return None, f"NUL byte at line {line}: Python cannot compile a file that contains one"
    try:
        with _default_recursion_limit():
            return ast.parse(source, filename=path), None
    except SyntaxError as error:
        return None, f"syntax error at line {error.lineno}: {error.msg}"
    except (RecursionError, MemoryError):
        return None, "nested too deeply for Python's compiler (RecursionError): Python cannot import it either"


def file_digest(path: str) -> str | None:
    """SHA-256 of a regular file's bytes; None for anything else (missing, directory, device)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def record_sources(sources: dict[str, str], paths) -> None:
    """SHA-256 of each file's bytes, first as analysis reads it: --fix leaves a file that changed since alone.

    Checked files are hashed before tracing; files only imported (outside the checked paths) when
    their findings are placed."""
    for path in map(os.path.abspath, paths):
        if path not in sources and (digest := file_digest(path)):
            sources[path] = digest
