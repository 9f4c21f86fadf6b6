"""Turn a traced concrete function into the plain-JSON op graph xlalint analyses.

One record per op of the entry function and of every function it reaches
through function-typed attrs (while/cond bodies, nested tf.functions, gradient
functions). Unknown dimensions stay ``None``; an unknown rank is ``None``.
"""

from __future__ import annotations

from xlalint.backend.frames import user_frames


def _shape(tensor_shape):
    return None if tensor_shape.rank is None else list(tensor_shape.as_list())


def _input_arg_names(op) -> list[str]:
    """The op-def argument name of each data input, e.g. Reshape -> ["tensor", "shape"]."""
    names: list[str] = []
    for arg in op.op_def.input_arg:
        if arg.number_attr:
            count = op.get_attr(arg.number_attr)
        elif arg.type_list_attr:
            count = len(op.get_attr(arg.type_list_attr))
        else:
            count = 1
        names.extend([arg.name] * count)
    return names


def _xla_attrs(op) -> dict:
    """``_Xla*`` bool/string attrs (``_XlaCompile``, ``_XlaScope``... set by ``jit_scope``)."""
    found = {}
    for name, value in op.node_def.attr.items():
        if name.startswith("_Xla"):
            if value.HasField("b"):
                found[name] = value.b
            elif value.HasField("s"):
                found[name] = value.s.decode("utf-8", "replace")
    return found


def _type_attrs_and_calls(op):
    import tensorflow as tf

    types, calls = {}, {}
    for name, value in op.node_def.attr.items():
        if value.HasField("type"):
            types[name] = tf.as_dtype(value.type).name
        elif value.HasField("func"):
            calls[name] = [value.func.name]
        elif value.HasField("list") and value.list.type:
            types[name] = [tf.as_dtype(t).name for t in value.list.type]
        elif value.HasField("list") and value.list.func:
            calls[name] = [f.name for f in value.list.func]
    return types, calls


SMALL_CONSTANT = 16  # integer constants up to this many elements keep their value (strides, axes...)


def _small_int_value(op):
    if op.type != "Const" or not op.outputs[0].dtype.is_integer:
        return None
    shape = op.outputs[0].shape
    if shape.num_elements() is None or shape.num_elements() > SMALL_CONSTANT:
        return None
    from tensorflow.python.framework import tensor_util

    return tensor_util.MakeNdarray(op.get_attr("value")).reshape(-1).tolist()


def export_graph(concrete_function, num_args: int, layer_of) -> dict:
    """JSON-ready op graph of ``concrete_function`` and everything it calls."""
    root = concrete_function.graph
    functions: dict[str, dict] = {}
    nodes: list[dict] = []
    pending = [(root.name, root, None)]
    while pending:
        fname, graph, caller_layer = pending.pop()
        if fname in functions:
            continue

        def node_id(op, fname=fname):
            return f"{fname}:{op.name}"

        functions[fname] = {
            "inputs": [node_id(t.op) for t in graph.inputs],
            "outputs": [[node_id(t.op), t.value_index] for t in graph.outputs],
        }
        for op in graph.get_operations():
            types, calls = _type_attrs_and_calls(op)
            site = layer_of(graph, op.name)
            layer = site.to_json() if site else caller_layer
            arg_names = _input_arg_names(op)
            xla_attrs = _xla_attrs(op)
            nodes.append(
                {
                    "id": node_id(op),
                    "name": op.name,
                    "type": op.type,
                    "function": fname,
                    "attrs": types,
                    "calls": calls,
                    "inputs": [
                        {
                            "src": node_id(t.op),
                            "index": t.value_index,
                            "arg": arg_names[i] if i < len(arg_names) else None,
                            "dtype": t.dtype.name,
                            "shape": _shape(t.shape),
                        }
                        for i, t in enumerate(op.inputs)
                    ],
                    "outputs": [{"dtype": t.dtype.name, "shape": _shape(t.shape)} for t in op.outputs],
                    "frames": user_frames(op.traceback),
                    "layer": layer,
                    "value": _small_int_value(op),
                    # Only on ops that have any: saved graphs without them stay as they were.
                    **({"xla_attrs": xla_attrs} if xla_attrs else {}),
                }
            )
            for fnames in calls.values():
                for called in fnames:
                    # Bodies live in the library of the graph that built them.
                    sub = graph._get_function(called) or root._get_function(called)  # noqa: SLF001
                    if sub is not None and getattr(sub, "graph", None) is not None:
                        pending.append((called, sub.graph, layer))
    return {"root": root.name, "num_args": num_args, "functions": functions, "nodes": nodes}
