"""The graph export's own readers against TensorFlow's: small integer constants as ``tf.make_ndarray``
reads them, and the export of a traced function whose ops are each other's inputs."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.tf  # every test here needs TensorFlow

tf = pytest.importorskip("tensorflow")

from tensorflow.core.framework import tensor_pb2  # noqa: E402
from tensorflow.python.framework import tensor_util  # noqa: E402

from xlalint.backend.graph_export import _small_int_value, export_graph  # noqa: E402


def _proto(dtype, shape, values=()):
    """A TensorProto with its values in the dtype's value list (no tensor_content)."""
    proto = tensor_pb2.TensorProto(dtype=dtype.as_datatype_enum)
    for size in shape:
        proto.tensor_shape.dim.add(size=size)
    field = {"int64": "int64_val", "uint32": "uint32_val", "uint64": "uint64_val"}.get(dtype.name, "int_val")
    getattr(proto, field).extend(values)
    return proto


CASES = {
    "packed int32": tensor_util.make_tensor_proto([1, -2, 3], dtype=tf.int32),
    "packed uint8": tensor_util.make_tensor_proto([[1, 2], [3, 255]], dtype=tf.uint8),
    "packed int64": tensor_util.make_tensor_proto([2 ** 40, -1], dtype=tf.int64),
    "scalar int64": tensor_util.make_tensor_proto(5, dtype=tf.int64),
    "one value repeated": _proto(tf.int32, [4], values=[7]),
    "short list, last repeated": _proto(tf.int16, [2, 2], values=[1, 2]),
    "no values: zeros": _proto(tf.int32, [3]),
    "empty": _proto(tf.int32, [0]),
    "uint32 list": _proto(tf.uint32, [2], values=[3, 4]),
    "uint64 list": _proto(tf.uint64, [1], values=[2 ** 63]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_small_constant_values_are_read_as_tensorflow_reads_them(name):
    proto = CASES[name]
    attrs = {"value": tf.compat.v1.AttrValue(tensor=proto)}
    expected = tensor_util.MakeNdarray(proto).reshape(-1).tolist()
    assert _small_int_value("Const", attrs) == expected


def test_large_and_float_constants_keep_no_value():
    assert _small_int_value("Const", {"value": tf.compat.v1.AttrValue(
        tensor=tensor_util.make_tensor_proto(list(range(17)), dtype=tf.int32))}) is None
    assert _small_int_value("Const", {"value": tf.compat.v1.AttrValue(
        tensor=tensor_util.make_tensor_proto([1.5], dtype=tf.float32))}) is None


def test_inputs_carry_their_producers_outputs():
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(x):
        y = tf.reshape(x, [-1])
        return tf.concat([y, y * 2.0], axis=0)

    graph = export_graph(f.get_concrete_function(), 1, lambda graph, op_name: None)
    nodes = {node["id"]: node for node in graph["nodes"]}
    inputs = [(node, inp) for node in graph["nodes"] for inp in node["inputs"]]
    assert inputs
    for node, inp in inputs:
        producer = nodes[inp["src"]]
        assert producer["function"] == node["function"]
        assert {"dtype": inp["dtype"], "shape": inp["shape"]} == producer["outputs"][inp["index"]]
    reshape = next(node for node in graph["nodes"] if node["type"] == "Reshape")
    assert [inp["arg"] for inp in reshape["inputs"]] == ["tensor", "shape"]
    assert nodes[reshape["inputs"][1]["src"]]["value"] == [-1]
    concat = next(node for node in graph["nodes"] if node["type"] == "ConcatV2")
    assert [inp["arg"] for inp in concat["inputs"]] == ["values", "values", "axis"]
