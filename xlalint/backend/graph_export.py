"""Turn a traced concrete function into the plain-JSON op graph xlalint analyses.

One record per op of the entry function and of every function it reaches
through function-typed attrs (while/cond bodies, nested tf.functions, gradient
functions). Unknown dimensions stay ``None``; an unknown rank is ``None``. ``frames``
holds the innermost user frame of the op's traceback, the one the source map uses; it is
empty for ops of built-in Keras layers, which are placed at the layer's construction line, their
layer record's ``called_at`` holding the user's line of that call (read from its first op).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from xlalint.backend.frames import innermost_user_frames
from xlalint.core.gc_pause import gc_paused
from xlalint.core.wire import FORMAT, Function, Graph, Input, OpNode


def _shape(tensor_shape):
    return None if tensor_shape.rank is None else tensor_shape.as_list()


@lru_cache(maxsize=None)
def _dtype(enum: int):
    import tensorflow as tf

    return tf.as_dtype(enum)


class _OpType:
    """What the op registry says of one op type, read once per type: its data inputs' argument
    names (by attrs, for variadic ones) and whether it is stateful."""

    def __init__(self, op_def):
        self.input_args = list(op_def.input_arg)
        self.variadic = any(arg.number_attr or arg.type_list_attr for arg in self.input_args)
        self.fixed = [arg.name for arg in self.input_args]
        self.stateful = op_def.is_stateful

    def input_arg_names(self, attrs) -> list[str]:
        """The op-def argument name of each data input, e.g. Reshape -> ["tensor", "shape"]."""
        if not self.variadic:
            return self.fixed
        names: list[str] = []
        for arg in self.input_args:
            if arg.number_attr:
                count = attrs[arg.number_attr].i
            elif arg.type_list_attr:
                count = len(attrs[arg.type_list_attr].list.type)
            else:
                count = 1
            names.extend([arg.name] * count)
        return names


BOOL_ATTRS = frozenset({"resize_if_index_out_of_bounds"})  # bool attrs a rule reads (XLA201)


def _split_attrs(attrs) -> tuple[dict, dict, dict]:
    """``(types, calls, xla_attrs)``: dtype attrs (and the ``BOOL_ATTRS``), function attrs, and the
    ``_Xla*`` bool/string attrs (``_XlaCompile``, ``_XlaScope``... set by ``jit_scope``)."""
    types, calls, xla = {}, {}, {}
    for name, value in attrs.items():
        kind = value.WhichOneof("value")
        if kind == "type":
            types[name] = _dtype(value.type).name
        elif kind == "func":
            calls[name] = [value.func.name]
        elif kind == "list" and value.list.type:
            types[name] = [_dtype(t).name for t in value.list.type]
        elif kind == "list" and value.list.func:
            calls[name] = [f.name for f in value.list.func]
        elif kind == "b" and name in BOOL_ATTRS:
            types[name] = value.b
        elif kind in ("b", "s") and name.startswith("_Xla"):
            xla[name] = value.b if kind == "b" else value.s.decode("utf-8", "replace")
    return types, calls, xla


SMALL_CONSTANT = 16  # integer constants up to this many elements keep their value (strides, axes...)
# Where a TensorProto keeps the values of each integer dtype when it has no tensor_content.
_INT_FIELDS = {"int8": "int_val", "int16": "int_val", "int32": "int_val", "uint8": "int_val", "uint16": "int_val",
               "int64": "int64_val", "uint32": "uint32_val", "uint64": "uint64_val"}


def _small_int_value(op_type: str, attrs):
    """The values of a small integer constant, flat; read from the proto as ``tf.make_ndarray`` does
    (a short value list repeats its last value), which is kept for any other layout."""
    if op_type != "Const":
        return None
    tensor = attrs["value"].tensor
    dtype = _dtype(tensor.dtype)
    if not dtype.is_integer:
        return None
    size = math.prod(d.size for d in tensor.tensor_shape.dim)
    if size > SMALL_CONSTANT:
        return None
    field = _INT_FIELDS.get(dtype.name)
    if field is not None and tensor.tensor_content:
        import numpy as np

        values = np.frombuffer(tensor.tensor_content, dtype=dtype.as_numpy_dtype).tolist()
        if len(values) == size:
            return values
    elif field is not None:
        values = list(getattr(tensor, field))
        if len(values) <= size:
            return values + (values[-1:] or [0]) * (size - len(values))
    from tensorflow.python.framework import tensor_util

    return tensor_util.MakeNdarray(tensor).reshape(-1).tolist()


@lru_cache(maxsize=None)
def _onednn() -> bool:
    """Whether this TensorFlow runs with oneDNN (``TF_ENABLE_ONEDNN_OPTS`` and the build decide), which some
    of Grappler's CPU fusions depend on (``autocluster/grappler.py``)."""
    from tensorflow.python.util import _pywrap_util_port

    return bool(_pywrap_util_port.IsMklEnabled())


@gc_paused()
def export_graph(concrete_function, num_args: int, layer_of) -> Graph:
    """JSON-ready op graph of ``concrete_function`` and everything it calls."""
    root = concrete_function.graph
    functions: dict[str, Function] = {}
    nodes: list[OpNode] = []
    op_types: dict[str, _OpType] = {}
    layer_json: dict[Any, dict[str, Any]] = {}  # one record per layer, shared by its ops
    pending: list[tuple[str, Any, dict[str, Any] | None]] = [(root.name, root, None)]
    while pending:
        fname, graph, caller_layer = pending.pop()
        if fname in functions:
            continue
        functions[fname] = {
            "inputs": [f"{fname}:{t.op.name}" for t in graph.inputs],
            "outputs": [[f"{fname}:{t.op.name}", t.value_index] for t in graph.outputs],
        }
        prefix = f"{fname}:"
        # op -> (its id, (dtype, shape) of each output), filled in trace order: inputs come first
        produced: dict[Any, tuple[str, list[tuple]]] = {}
        operations = graph.get_operations()
        names = [op.name for op in operations]
        layers: list[dict[str, Any] | None] = []
        first_ops = []  # of each call of a built-in Keras layer, made in this graph
        for name in names:
            site = layer_of(graph, name)
            if site and site not in layer_json:
                layer_json[site] = site.to_json()
                if site.first_op:
                    first_ops.append((layer_json[site], graph.get_operation_by_name(site.first_op)))
            layers.append(layer_json[site] if site else caller_layer)
        # An op of a built-in Keras layer is placed at the layer's construction line: its own frames are not
        # converted, only those of the first op of each call (the line that called the layer).
        placed = [op for op, known in zip(operations, layers) if not known or known["user_code"]]  # by their frames
        placed_names = {op.name for op in placed}  # a call's first op may be one (a user's layer inside a model)
        extra = {op.name: op for _, op in first_ops if op.name not in placed_names}
        user_frames = innermost_user_frames(placed + list(extra.values()))
        for record, op in first_ops:
            if op.name in user_frames:
                record["called_at"] = (user_frames.pop(op.name) if op.name in extra else user_frames[op.name])[:2]
        for op, name, layer in zip(operations, names, layers):
            attrs = op.node_def.attr
            op_type = op.type
            kind = op_types.get(op_type)
            if kind is None:
                kind = op_types[op_type] = _OpType(op.op_def)
            types, calls, xla_attrs = _split_attrs(attrs)
            arg_names = kind.input_arg_names(attrs)
            node_id = prefix + name
            outputs = [(t.dtype.name, _shape(t.shape)) for t in op.outputs]
            produced[op] = (node_id, outputs)
            inputs: list[Input] = []
            for i, t in enumerate(op.inputs):
                source = produced.get(t.op)
                if source is None:  # not seen yet: described from the tensor itself
                    source = (prefix + t.op.name, [])
                index = t.value_index
                dtype, shape = source[1][index] if source[1] else (t.dtype.name, _shape(t.shape))
                inputs.append({"src": source[0], "index": index,
                               "arg": arg_names[i] if i < len(arg_names) else None,
                               "dtype": dtype, "shape": shape and list(shape)})
            node: OpNode = {
                "id": node_id,
                "name": name,
                "type": op_type,
                "function": fname,
                "attrs": types,
                "calls": calls,
                "inputs": inputs,
                "outputs": [{"dtype": dtype, "shape": shape} for dtype, shape in outputs],
                "frames": [list(user_frames[name])] if name in user_frames else [],
                "layer": layer,
                "value": _small_int_value(op_type, attrs),
            }
            # Only on ops that have any: saved graphs without them stay as they were.
            if xla_attrs:
                node["xla_attrs"] = xla_attrs
            if kind.stateful:
                node["stateful"] = True
            nodes.append(node)
            for fnames in calls.values():
                for called in fnames:
                    # Bodies live in the library of the graph that built them.
                    sub = graph._get_function(called) or root._get_function(called)  # noqa: SLF001
                    if sub is not None and getattr(sub, "graph", None) is not None:
                        pending.append((called, sub.graph, layer))
    return {"format": FORMAT, "root": root.name, "num_args": num_args, "functions": functions, "nodes": nodes,
            "onednn": _onednn()}
