"""The two lanes (tests/conftest.py): what marks a test tf, and what the fast lane does with it."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from conftest import module_marked_tf
from helpers import NO_TF, REPO, TESTS


@pytest.mark.parametrize("module, marked", [
    ("test_end_to_end.py", True),  # pytestmark = pytest.mark.tf
    ("test_rules_against_compiler.py", True),
    ("test_fixes.py", False),  # only the tests that trace are marked, one by one
    ("test_emitters.py", False),
    ("graph_builder.py", False),
])
def test_a_module_is_marked_tf_as_a_whole_by_its_pytestmark(module, marked):
    assert module_marked_tf(TESTS / module) is marked


def test_a_module_importing_tensorflow_at_the_top_is_marked_tf_as_a_whole():
    """Else the fast lane could not collect it: its import of TensorFlow fails there."""
    for path in sorted(TESTS.glob("test_*.py")):
        top = ast.parse(path.read_bytes()).body
        names = {alias.name.split(".")[0] for node in top if isinstance(node, ast.Import) for alias in node.names}
        if names & {"tensorflow", "keras", "groundtruth"}:  # groundtruth imports TensorFlow
            assert module_marked_tf(path), f"{path.name}: add pytestmark = pytest.mark.tf"


def _collect(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=300)


def test_the_fast_lane_leaves_a_marked_module_unimported_and_deselects_marked_tests():
    done = _collect("-m", "not tf", "tests/test_end_to_end.py", "tests/test_usage.py")
    assert done.returncode == 0, done.stdout + done.stderr
    collected = [line for line in done.stdout.splitlines() if "::" in line]
    assert collected and all(line.startswith("tests/test_usage.py::") for line in collected)
    assert "test_sarif_is_no_success_when_tensorflow_cannot_be_imported" not in done.stdout  # marked one by one
    assert "(2 deselected)" in done.stdout  # test_end_to_end.py's placeholder and test_usage.py's marked test


def test_blocked_tensorflow_fails_to_import_and_leaves_sys_modules_alone():
    code = ("import sys\ntry:\n    import tensorflow\nexcept ModuleNotFoundError as e:\n    print(e)\n"
            "print('tensorflow' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(NO_TF)})
    assert done.stdout.splitlines() == ["No module named 'tensorflow' (TensorFlow is blocked: this test runs without "
                                        "it; mark it tf if it needs it)", "False"], done.stderr
