"""Rule logic on hand-built graphs: no TensorFlow, milliseconds each."""

from __future__ import annotations

import subprocess
import sys

from graph_builder import GraphBuilder, hits


def _reshape_with_shape_from(builder, source):
    x = builder.arg("x", shape=[4, 6])
    return builder.op("Reshape", "Reshape", [x, source], args=["tensor", "shape"], line=7)


def test_shape_from_constant_or_static_shape_is_fine():
    b = GraphBuilder()
    x = b.arg("x", shape=[4, 6])
    shape = b.op("Shape", "Shape", [x], dtype="int32", shape=[2])
    b.op("Reshape", "Reshape", [x, shape], args=["tensor", "shape"], attrs={"T": "float32"})
    assert hits(b.build()) == []


def test_shape_from_random_op_is_an_error():
    b = GraphBuilder()
    random = b.op("rand", "RandomUniformInt", dtype="int32")
    _reshape_with_shape_from(b, random)
    assert hits(b.build()) == [("XLA101", "Reshape")]


def test_shape_from_argument_value_is_a_recompile_warning():
    b = GraphBuilder()
    n = b.arg("n", dtype="int32")
    _reshape_with_shape_from(b, n)
    assert hits(b.build()) == [("XLA102", "Reshape")]


def test_loop_carried_value_in_while_body_is_an_error_but_invariant_one_is_traced_out():
    b = GraphBuilder()
    n = b.arg("n", dtype="int32")
    start = b.op("zero", "Const", dtype="int32")
    loop = b.op("while", "StatelessWhile", [start, n], calls={"body": ["body"], "cond": ["cond"]}, outputs=2)
    carried = b.arg("i", dtype="int32", function="body")
    invariant = b.arg("n_in", dtype="int32", function="body")
    x = b.op("x", "Const", function="body")
    b.op("Reshape1", "Reshape", [x, carried], args=["tensor", "shape"], function="body")
    b.op("Reshape2", "Reshape", [x, invariant], args=["tensor", "shape"], function="body")
    step = b.op("next", "AddV2", [carried, carried], function="body", dtype="int32")
    b.function("body", [step, b.op("same", "Identity", [invariant], function="body")])
    b.op("after", "Reshape", [b.arg("y"), (loop, 0)], args=["tensor", "shape"])
    assert hits(b.build()) == [("XLA101", "Reshape1"), ("XLA101", "after"), ("XLA102", "Reshape2")]


def test_accepted_dynamic_inputs_are_not_flagged():
    b = GraphBuilder()
    x = b.arg("x", shape=[4, 6])
    k = b.op("rand", "RandomUniformInt", dtype="int32")
    b.op("TopKV2", "TopKV2", [x, k], args=["input", "k"], attrs={"T": "float32"})
    assert hits(b.build()) == []


def test_unsupported_op_and_dtype_and_device_difference():
    b = GraphBuilder()
    x = b.arg("x", shape=[4, 6])
    b.op("PyFunc", "PyFunc", [x])
    b.op("Cumsum", "Cumsum", [x, b.op("axis", "Const", dtype="int32")], attrs={"T": "uint8", "Tidx": "int32"},
         args=["x", "axis"])
    graph = b.build()
    assert hits(graph) == [("XLA001", "PyFunc"), ("XLA002", "Cumsum")]
    conv = GraphBuilder()
    image = conv.arg("image", dtype="int32", shape=[1, 8, 8, 1])
    conv.op("Conv2D", "Conv2D", [image, conv.op("w", "Const", dtype="int32")], attrs={"T": "int32"})
    assert hits(conv.build(), "cpu") == []
    assert hits(conv.build(), "gpu") == [("XLA002", "Conv2D")]


def test_string_argument_and_unknown_dims():
    b = GraphBuilder()
    b.arg("text", dtype="string", shape=[2])
    b.arg("x", shape=[None, 3])
    signature = ({"dtype": "string", "shape": [2]}, {"dtype": "float32", "shape": [None, 3]})
    assert hits(b.build(), signature=signature) == [("XLA002", "text"), ("XLA104", None)]
    assert hits(b.build(), signature=signature, kind="keras-model") == [("XLA002", "text")]


def test_rules_and_graphs_import_without_tensorflow():
    code = ("import sys; import xlalint.engine.analysis, xlalint.checks, xlalint.cli.main; "
            "assert 'tensorflow' not in sys.modules, 'TensorFlow was imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
