"""The ``tf`` marker that splits the suite into a fast lane and a TensorFlow lane, and session fixtures.

A test that needs TensorFlow (it imports it, or runs the command line in full mode) is marked ``tf``:
with ``@pytest.mark.tf``, or as a whole module with ``pytestmark = pytest.mark.tf`` at its top level.
``-m "not tf"`` is the fast lane: TensorFlow is blocked there, in this process and in every child, so a
test that needs it and is not marked fails instead of passing slowly; in any lane a test not marked
``tf`` starts its children with TensorFlow blocked. A module marked as a whole is not imported where
TensorFlow cannot run (the fast lane, or TensorFlow not installed): it stands as one placeholder test.
Shared helpers live in tests/helpers.py.
"""

import ast
import importlib.util
import os
import runpy
import tempfile
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression

from helpers import NO_TF, no_tf_path, run_json

# Keep the result cache (and anything else xlalint caches) inside this test session.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="xlalint-test-cache-")
_TF_DESELECTED = pytest.StashKey[int]()


@pytest.fixture(scope="session")
def rules_report() -> dict:
    """One xlalint run over every rule example (CPU tables, as the ground truth runs on CPU)."""
    report, _ = run_json("rules", "--device", "cpu")
    return report


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one test process per usable core, at most 4 (each test starts TensorFlow processes of its own)."""
    from xlalint.settings.table import usable_cores

    return min(4, usable_cores())


def module_marked_tf(path: Path) -> bool:
    """The module says ``pytestmark = pytest.mark.tf`` at its top level (read without importing it)."""
    tree = ast.parse(path.read_bytes())
    return any(isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
               and ast.unparse(node.value) == "pytest.mark.tf" for node in tree.body)


def _fast_lane(config: pytest.Config) -> bool:
    """``-m`` deselects tests marked tf (whatever else it selects)."""
    expression = config.option.markexpr
    return bool(expression) and not Expression.compile(expression).evaluate(lambda name, **_: name == "tf")


def _tf_usable(config: pytest.Config) -> bool:
    return not _fast_lane(config) and importlib.util.find_spec("tensorflow") is not None


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_TF_DESELECTED] = 0
    if _fast_lane(config):
        runpy.run_path(str(NO_TF / "sitecustomize.py"))  # here
        os.environ["PYTHONPATH"] = no_tf_path()  # and in every child


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    """In any lane, a test not marked tf starts its children with TensorFlow blocked."""
    if item.get_closest_marker("tf"):
        return (yield)
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = no_tf_path()
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
    """A test module marked tf as a whole, left unimported: one placeholder test marked tf."""

    def collect(self):
        item = _NeedsTensorFlow.from_parent(self, name="module")
        item.add_marker(pytest.mark.tf)
        return [item]


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent):
    if not _tf_usable(parent.config) and module_marked_tf(module_path):
        return _TensorFlowModule.from_parent(parent, path=module_path)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _tf_usable(config):
        skip = pytest.mark.skip(reason="needs TensorFlow, which is not installed")
        for item in items:
            if item.get_closest_marker("tf"):
                item.add_marker(skip)
