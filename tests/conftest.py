"""Shared helpers, and the ``tf`` marker that splits the suite into a fast lane and a TensorFlow lane.

A test is marked ``tf`` when its module imports TensorFlow or Keras at the top (directly or through a
local module such as groundtruth), or when the test, a fixture it uses or a helper of its module refers
to ``run_xlalint``/``run_json`` (the command line in full mode) or imports TensorFlow itself; a test
may also be marked by hand. ``-m "not tf"`` is the fast lane: TensorFlow is blocked there, in this
process and in every child, so a test that needs it and is not marked fails instead of passing slowly.
Without TensorFlow installed, ``tf`` tests are skipped and their modules are never imported.
"""

import ast
import importlib.util
import inspect
import json
import os
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
NO_TF = TESTS / "no_tf"  # its sitecustomize makes TensorFlow unimportable
sys.path.insert(0, str(TESTS))
# Keep the result cache (and anything else xlalint caches) inside this test session.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="xlalint-test-cache-")

TF_ROOTS = {"tensorflow", "keras", "tf_keras"}
FULL_MODE = {"run_xlalint", "run_json"}  # helpers that start TensorFlow workers
SCRIPT_DIRS = (TESTS, REPO / "tools", REPO / "bench")  # tests import helpers from these folders
_TF_DESELECTED = pytest.StashKey[int]()


def _run(args, cwd, env, text) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xlalint", *args], cwd=cwd, capture_output=True, text=text,
                          env={**os.environ, **env}, timeout=900)


def run_xlalint(*args: str, cwd: Path = REPO, env: dict | None = None, text: bool = True) -> subprocess.CompletedProcess:
    """Run the real command line, as a user would (``text=False``: stdout and stderr as bytes)."""
    return _run(args, cwd, env or {}, text)


def _report(done: subprocess.CompletedProcess) -> tuple[dict, int]:
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout), done.returncode


def run_json(*args: str, **kwargs) -> tuple[dict, int]:
    return _report(run_xlalint(*args, "--format", "json", **kwargs))


def run_without_tf(*args: str, cwd: Path = REPO, env: dict | None = None) -> subprocess.CompletedProcess:
    """The command line with TensorFlow unimportable: for runs that must never need it (static mode, usage)."""
    return _run(args, cwd, {**(env or {}), "PYTHONPATH": _no_tf_path()}, True)


def json_without_tf(*args: str, **kwargs) -> tuple[dict, int]:
    return _report(run_without_tf(*args, "--format", "json", **kwargs))


@pytest.fixture(scope="session")
def rules_report() -> dict:
    """One xlalint run over every rule example (CPU tables, as the ground truth runs on CPU)."""
    report, _ = run_json("rules", "--device", "cpu")
    return report


# --- the tf marker ---------------------------------------------------------------------------------

def _local_module(name: str) -> Path | None:
    """The repository file behind module ``name`` (tests' helpers and xlalint), if it is one."""
    parts = name.split(".")
    for base in (REPO, *SCRIPT_DIRS):
        for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
            if candidate.is_file():
                return candidate
    return None


def _imported(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return []


def _module_imports_tf(name: str) -> bool:
    """Whether importing ``name`` imports TensorFlow: its top-level imports, followed through local modules."""
    parts = name.split(".")
    if parts[0] in TF_ROOTS:
        return True
    packages = [".".join(parts[:i]) for i in range(1, len(parts))]  # importing a.b.c runs a and a.b first
    return any(_file_imports_tf(path) for path in map(_local_module, [*packages, name]) if path)


_TF_FILES: dict[Path, bool] = {}


def _file_imports_tf(path: Path) -> bool:
    if path not in _TF_FILES:
        _TF_FILES[path] = False  # while it is being read: an import cycle adds nothing
        tree = ast.parse(path.read_bytes())
        top = [node for node in tree.body if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        _TF_FILES[path] = any(_module_imports_tf(name) for stmt in top for node in ast.walk(stmt)
                              for name in _imported(node))
    return _TF_FILES[path]


def _names(code) -> set[str]:
    """Global and module names a code object refers to, nested functions and comprehensions included."""
    found = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            found |= _names(const)
    return found


def _function_needs_tf(fn, seen: set) -> bool:
    """``fn`` refers to a full-mode helper or a TensorFlow module, or calls a test helper that does."""
    fn = getattr(getattr(fn, "hypothesis", None), "inner_test", None) or inspect.unwrap(fn)
    if not inspect.isfunction(fn) or fn in seen or not fn.__code__.co_filename.startswith(str(TESTS)):
        return False
    seen.add(fn)
    names = _names(fn.__code__)
    if names & FULL_MODE or any(_module_imports_tf(name) for name in names):
        return True
    return any(_function_needs_tf(fn.__globals__.get(name), seen) for name in names)


def _needs_tf(item: pytest.Item) -> bool:
    if item.get_closest_marker("tf") or _file_imports_tf(item.path):
        return True
    if not isinstance(item, pytest.Function):
        return False
    seen = set()
    fixtures = [d.func for defs in item._fixtureinfo.name2fixturedefs.values() for d in defs]
    return any(_function_needs_tf(fn, seen) for fn in [item.function, *fixtures])


def _fast_lane(config: pytest.Config) -> bool:
    """``-m`` deselects tests marked tf (whatever else it selects)."""
    expression = config.option.markexpr
    return bool(expression) and not Expression.compile(expression).evaluate(lambda name, **_: name == "tf")


def _tf_usable(config: pytest.Config) -> bool:
    return not _fast_lane(config) and importlib.util.find_spec("tensorflow") is not None


def _no_tf_path() -> str:
    """PYTHONPATH with the blocking sitecustomize first."""
    return os.pathsep.join(dict.fromkeys(filter(None, [str(NO_TF), *os.environ.get("PYTHONPATH", "").split(os.pathsep)])))


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_TF_DESELECTED] = 0
    if _fast_lane(config):
        runpy.run_path(str(NO_TF / "sitecustomize.py"))  # here
        os.environ["PYTHONPATH"] = _no_tf_path()  # and in every child


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    """In any lane, a test not marked tf starts its children with TensorFlow blocked."""
    if item.get_closest_marker("tf"):
        return (yield)
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = _no_tf_path()
    try:
        return (yield)
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = before


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        items[0].config.stash[_TF_DESELECTED] += sum(1 for item in items if item.get_closest_marker("tf"))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A selection whose tests all need TensorFlow, run in the fast lane, has nothing to do: not a failure."""
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and session.config.stash[_TF_DESELECTED]:
        session.exitstatus = pytest.ExitCode.OK


class _NeedsTensorFlow(pytest.Item):
    def runtest(self) -> None:
        pytest.skip("needs TensorFlow, which is not installed")

    def reportinfo(self):
        return self.path, 0, f"{self.path.name}: needs TensorFlow"


class _TensorFlowModule(pytest.File):
    """A test module that imports TensorFlow, left unimported: one placeholder test marked tf."""

    def collect(self):
        item = _NeedsTensorFlow.from_parent(self, name="module")
        item.add_marker(pytest.mark.tf)
        return [item]


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent):
    if not _tf_usable(parent.config) and _file_imports_tf(module_path):
        return _TensorFlowModule.from_parent(parent, path=module_path)
    return None


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason="needs TensorFlow, which is not installed")
    for item in items:
        if _needs_tf(item):
            item.add_marker(pytest.mark.tf)
            if not _tf_usable(config):
                item.add_marker(skip)
