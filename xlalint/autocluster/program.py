"""Which XLA mode the program runs an entry in, read from the code and the files beside it.

- ``jit_compile``: its ``tf.function`` has ``jit_compile=True`` (that wins over auto-clustering:
  TensorFlow compiles such a function whole, also in an auto-clustered program);
- ``auto-clustering``: ``set_jit(True)`` or ``TF_XLA_FLAGS=--tf_xla_auto_jit=...`` in the entry's
  file, in a Python file beside it that imports it, in a shell script, Dockerfile or ``.env`` in its
  folder or a folder above it (up to the project root) that runs it or no Python file by name, or in
  the environment xlalint runs in; ``--mode autocluster`` forces it;
- ``as-if-jit_compile``: none of these; the entry is judged as if it had ``jit_compile=True``
  (``--mode jit`` forces it). A script that turns auto-clustering on for another file only makes
  xlalint say that it cannot tell.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from functools import lru_cache

from xlalint.inputs.files import ENV_FILE, display_path, read_source
from xlalint.inputs.notebooks import is_notebook, place_of
from xlalint.core.results import place

JIT_COMPILE, AUTO_CLUSTERING, AS_IF_JIT = "jit_compile", "auto-clustering", "as-if-jit_compile"

# tf.config.optimizer.set_jit(True) / set_jit("autoclustering"), and TF_XLA_FLAGS=--tf_xla_auto_jit=1|2|fusible
# or single-gpu(N) anywhere (Python, shell, Dockerfile); -1 and 0 leave it off.
AUTO_JIT = re.compile(
    r"""set_jit\(\s*(?:enabled\s*=\s*)?(?:True|["']autoclustering["'])\s*\)"""
    r"""|--tf_xla_auto_jit=(?:["']?)(?:1|2|fusible|single-gpu\(\d\))(?![\w.-])""")
CPU_GLOBAL_JIT = re.compile(r"--tf_xla_cpu_global_jit(?!=(?:false|0)\b)")
PY_NAME = re.compile(r"([\w./-]+)\.py\b|-m\s+([\w.]+)")
ROOT_MARKS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
MAX_LEVELS = 6
CPU_NOTE = ("on CPU, TensorFlow forms no cluster without --tf_xla_cpu_global_jit in TF_XLA_FLAGS "
            "(set_jit(True) alone compiles nothing there): the share is what it would be with it")


@dataclass(frozen=True)
class Site:
    """A line that turns auto-clustering on."""

    path: str
    line: int
    cpu_global_jit: bool  # its file also sets --tf_xla_cpu_global_jit
    runs: tuple[str, ...] = ()  # a script's Python files (basenames or module names); () = any

    def __str__(self) -> str:
        return place(display_path(self.path), self.line, place_of(self.path, self.line))


@dataclass(frozen=True)
class Seen:
    """Auto-clustering as a run of the program showed it when it reached an entry."""

    source: str | None  # what turned it on ("set_jit called at train.py:12"); None: it was off
    cpu_global_jit: bool = False  # TF_XLA_FLAGS held --tf_xla_cpu_global_jit


@dataclass(frozen=True)
class Mode:
    """How the program runs one entry, where that was read, and what xlalint could not tell."""

    name: str
    source: str | None = None  # "run.sh:3", "jit_compile=True", "--mode autocluster", ...
    note: str | None = None

    def fields(self) -> dict:
        """The entry's ``xla_mode``, ``xla_mode_source`` and ``xla_mode_note``."""
        return {"xla_mode": self.name, "xla_mode_source": self.source, "xla_mode_note": self.note}


def sites_in(path: str) -> list[Site]:
    """The lines of ``path`` that turn auto-clustering on (comment lines and text after `` #`` skipped)."""
    return list(_sites(os.path.abspath(path)))


def _modified(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


def _sites(path: str) -> tuple[Site, ...]:
    return _read_sites(path, _modified(path))  # a file read once per version: many entries share a folder


@lru_cache(maxsize=4096)
def _read_sites(path: str, _version: int) -> tuple[Site, ...]:
    text, error = read_source(path)  # a notebook's code cells, as one module
    if error or ("set_jit" not in text and "tf_xla_auto_jit" not in text):
        return ()  # its own error is reported by the analysis
    python = path.endswith(".py") or is_notebook(path)
    code = _python_code(text) if python else None
    if code is None:
        code = [(n, line.split(" #", 1)[0]) for n, line in enumerate(text.splitlines(), 1)
                if not line.lstrip().startswith("#")]
    global_jit = any(CPU_GLOBAL_JIT.search(line) for _, line in code)
    runs = () if python else tuple(dict.fromkeys(
        name for _, line in code for m in PY_NAME.finditer(line) for name in [m.group(1) or m.group(2)] if name))
    return tuple(Site(path, n, global_jit, runs) for n in sorted({n for n, line in code if AUTO_JIT.search(line)}))


def _python_code(text: str) -> list[tuple[int, str]] | None:
    """(line, text) of each call and flag string of a Python file, docstrings and comments left out;
    None when Python cannot parse it (then its lines are read as text)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)
                  and isinstance(node.value, ast.Constant)}
    code = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            code.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "--tf_xla" in node.value \
                and id(node) not in docstrings:  # a flag in a string (os.environ["TF_XLA_FLAGS"] = ...)
            code.append((node.lineno, node.value))
    return sorted(code, key=lambda item: item[0])


def _folders(path: str) -> list[str]:
    """The file's folder and those above it, up to the project root (a folder with one of
    ``ROOT_MARKS``) or ``MAX_LEVELS`` folders."""
    folders, folder = [], os.path.dirname(os.path.abspath(path))
    for _ in range(MAX_LEVELS):
        folders.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder or any(os.path.exists(os.path.join(folder, m)) for m in ROOT_MARKS):
            break
        folder = parent
    return folders


@lru_cache(maxsize=1024)
def _list(folder: str, _version: int) -> tuple[str, ...]:
    try:
        return tuple(sorted(os.listdir(folder)))
    except OSError:
        return ()


@lru_cache(maxsize=1024)
def _python_beside(folder: str, version: int) -> tuple[str, ...]:
    """The paths of the Python files in ``folder`` (each file's sites are read per call: one may have changed)."""
    return tuple(os.path.join(folder, name) for name in _list(folder, version) if name.endswith(".py"))


def _beside(folder: str) -> tuple[str, ...]:
    """The names in ``folder`` of files that may turn auto-clustering on for a program (``is_env_file``)."""
    return _matching_beside(folder, _modified(folder))


@lru_cache(maxsize=1024)
def _matching_beside(folder: str, version: int) -> tuple[str, ...]:
    return tuple(filter(ENV_FILE.match, _list(folder, version)))  # names: no basename to take (a big /tmp)


def _runs_file(site: Site, path: str) -> bool:
    stem = os.path.splitext(os.path.basename(path))[0]
    return not site.runs or any(os.path.basename(name) == stem or name.split(".")[-1] == stem for name in site.runs)


def _imports(importer: str, path: str) -> bool:
    stem = re.escape(os.path.splitext(os.path.basename(path))[0])
    try:
        with open(importer, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return False
    return re.search(rf"^\s*(?:from\s+[\w.]*\b{stem}\b\s+import|import\s+[\w., ]*\b{stem}\b)", text, re.M) is not None


def environment_site() -> str | None:
    """``TF_XLA_FLAGS`` of the environment xlalint runs in, when it turns auto-clustering on."""
    flags = os.environ.get("TF_XLA_FLAGS", "")
    return "TF_XLA_FLAGS in the environment" if AUTO_JIT.search(flags) else None


def program_sites(path: str) -> tuple[list[Site], list[Site]]:
    """(sites that turn auto-clustering on for ``path``'s program, sites beside it that run another file)."""
    path = os.path.abspath(path)
    own = sites_in(path)
    if own:
        return own, []
    applies: list[Site] = []
    others: list[Site] = []
    folders = _folders(path)
    for other in _python_beside(folders[0], _modified(folders[0])):  # a program beside it that imports it
        if other != path and _sites(other) and _imports(other, path):
            applies += _sites(other)
    for folder in folders:
        for name in _beside(folder):
            for site in _sites(os.path.join(folder, name)):
                (applies if _runs_file(site, path) else others).append(site)
    return applies, others


def entry_mode(path: str, jit_compile: bool | None, forced: str, device: str, seen: Seen | None = None) -> Mode:
    """The mode the program runs an entry of ``path`` in; ``forced`` is ``--mode`` (auto, jit, autocluster);
    ``seen``: what a run of the program showed (``xlalint run``), which the files are not read for."""
    if jit_compile is True:
        return Mode(JIT_COMPILE, "jit_compile=True")
    if forced == "jit":
        return Mode(AS_IF_JIT, "--mode jit")
    if seen is not None and forced != "autocluster":
        if not seen.source:
            return Mode(AS_IF_JIT)
        return Mode(AUTO_CLUSTERING, seen.source, CPU_NOTE if device == "cpu" and not seen.cpu_global_jit else None)
    environment = environment_site()
    applies, others = program_sites(path)
    global_jit = any(s.cpu_global_jit for s in applies) or bool(
        CPU_GLOBAL_JIT.search(os.environ.get("TF_XLA_FLAGS", "")))
    note = CPU_NOTE if device == "cpu" and not global_jit else None
    if forced == "autocluster":
        return Mode(AUTO_CLUSTERING, "--mode autocluster", note)
    if applies or environment:
        return Mode(AUTO_CLUSTERING, ", ".join(map(str, applies)) or environment, note)
    if others:
        where = ", ".join(f"{s} (runs {', '.join(s.runs)})" for s in others)
        return Mode(AS_IF_JIT, None, f"auto-clustering is turned on at {where}; xlalint cannot tell whether "
                    "that program runs this entry: judged as if it had jit_compile=True")
    return Mode(AS_IF_JIT)
