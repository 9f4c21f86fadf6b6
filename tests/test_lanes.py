"""The rule that puts a test in the TensorFlow lane (tests/conftest.py), on this suite's own modules."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import NO_TF, TESTS, _file_imports_tf, _function_needs_tf, run_json, run_without_tf


@pytest.mark.parametrize("module, imports_tf", [
    ("test_end_to_end.py", True),  # import tensorflow at the top
    ("test_rules_against_compiler.py", True),  # through groundtruth
    ("test_fixes.py", False),  # groundtruth only inside the tests that trace
    ("test_emitters.py", False),
    ("graph_builder.py", False),  # xlalint's rules and graphs, followed through their imports
])
def test_modules_that_import_tensorflow_at_the_top(module, imports_tf):
    assert _file_imports_tf(TESTS / module) is imports_tf


def _full_mode():
    return run_json("m.py")


def _through_a_helper():
    return _full_mode()


def _static_mode():
    return run_without_tf("--static", "m.py")


def _lazy_import():
    import tensorflow  # noqa: F401


@pytest.mark.parametrize("function, needs_tf", [
    (_full_mode, True), (_through_a_helper, True), (_lazy_import, True), (_static_mode, False),
])
def test_tests_that_start_the_command_line_or_import_tensorflow(function, needs_tf):
    assert _function_needs_tf(function, set()) is needs_tf


def test_blocked_tensorflow_fails_to_import_and_leaves_sys_modules_alone():
    code = ("import sys\ntry:\n    import tensorflow\nexcept ModuleNotFoundError as e:\n    print(e)\n"
            "print('tensorflow' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(NO_TF)})
    assert done.stdout.splitlines() == ["No module named 'tensorflow' (TensorFlow is blocked: this test runs without "
                                        "it; mark it tf if it needs it)", "False"], done.stderr
