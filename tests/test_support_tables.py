"""Support tables: generated from the installed TensorFlow's registry, and agreeing with the compiler."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import tensorflow as tf

from helpers import REPO, run_xlalint
from xlalint.core import tables
from xlalint.core.support import load_support

pytestmark = pytest.mark.tf  # every test here needs TensorFlow


@pytest.fixture(scope="module")
def fresh_table(tmp_path_factory) -> dict:
    """Generate the table now, in a fresh process, as xlalint does for an unshipped version."""
    out = tmp_path_factory.mktemp("tables") / "support.json"
    subprocess.run([sys.executable, "-m", "xlalint.backend.support_tables", str(out)], check=True,
                   capture_output=True, timeout=600)
    return json.loads(out.read_text())


def test_shipped_table_matches_the_installed_registry(fresh_table):
    shipped = json.loads(tables.path(tables.SUPPORT, tf.__version__).read_text())
    assert fresh_table == shipped


@pytest.mark.skipif(shutil.which("g++") is None, reason="reading XLA's constant inputs compiles a shim with g++")
def test_shipped_constant_inputs_are_what_the_installed_registry_has(tmp_path):
    out = tmp_path / "const_inputs.json"
    subprocess.run([sys.executable, str(REPO / "tools" / "gen_const_inputs.py"), "--out", str(out)], check=True,
                   capture_output=True, timeout=600)
    assert json.loads(out.read_text()) == json.loads(tables.path(tables.CONST_INPUTS, tf.__version__).read_text())


def test_tables_have_hundreds_of_ops_and_differ_only_where_expected(fresh_table):
    cpu, gpu = fresh_table["devices"]["cpu"], fresh_table["devices"]["gpu"]
    assert len(cpu) > 400 and set(cpu) == set(gpu)
    assert {op for op in cpu if cpu[op] != gpu[op]} <= {"Conv", "Conv2D", "Conv2DBackpropInput",
                                                       "ExtractImagePatches", "Conv3D"}
    tpu = load_support(tf.__version__).kernels("tpu")
    assert "complex128" not in json.dumps(tpu) and "complex128" in json.dumps(cpu)


@pytest.mark.parametrize("dtype, compiles", [(tf.float32, True), (tf.uint8, False)])
def test_dtype_constraint_agrees_with_the_compiler(dtype, compiles):
    support = load_support(tf.__version__)
    listed = support.dtype_mismatch("cpu", "Cumsum", {"T": dtype.name, "Tidx": "int32"}) is None
    fn = tf.function(lambda x: tf.cumsum(x), jit_compile=True)
    try:
        fn.experimental_get_compiler_ir(tf.ones([4], dtype))(stage="hlo")
        compiled = True
    except Exception:
        compiled = False
    assert listed == compiled == compiles


def test_const_inputs_table_names_real_op_def_inputs():
    from tensorflow.python.framework import op_def_registry

    support = load_support(tf.__version__)
    for op, args in support.const_inputs.items():
        op_def = op_def_registry.get(op)
        if op_def is not None:
            assert set(args) <= {a.name for a in op_def.input_arg}, op
    assert support.const_inputs["Reshape"] == ["shape"] and "Shape" in support.metadata_ops


def test_ops_command_prints_the_table():
    done = run_xlalint("ops", "--device", "cpu", "Cumsum", "PyFunc")
    assert done.returncode == 1  # PyFunc has no kernel
    rows = {line.split()[0]: line.split()[1] for line in done.stdout.splitlines()[2:4]}
    assert rows == {"Cumsum": "yes", "PyFunc": "NO"}
    assert "2.21" in done.stdout or tf.__version__ in done.stdout
