"""Compile-time predicates and branch indices, and the functions XLA compiles because of them.

XLA's ``Case`` kernel compiles only the branch a compile-time constant index picks (an index out of
range picks the last one); ``If`` compiles both branches whatever its predicate (measured on TF
2.21: ``tf.cond(tf.constant(True), ...)`` fails on an op of its untaken branch,
``tf.switch_case(tf.constant(0), ...)`` compiles). XLA's value inference still uses only the taken
branch of either when a branch result must be a compile-time constant.
"""

from __future__ import annotations

import operator

from xlalint.core.opgraph import BRANCH_OPS, OpGraph

CASE_OPS = frozenset({"Case", "StatelessCase"})


_BINARY = {"Greater": operator.gt, "Less": operator.lt, "GreaterEqual": operator.ge, "LessEqual": operator.le,
           "Equal": operator.eq, "NotEqual": operator.ne, "Add": operator.add, "AddV2": operator.add,
           "Sub": operator.sub, "Mul": operator.mul, "FloorDiv": operator.floordiv, "FloorMod": operator.mod,
           "LogicalAnd": operator.and_, "LogicalOr": operator.or_}


def _evaluate(graph: OpGraph, node_id: str, depth: int = 0):
    """The value of a small integer/boolean computation on constants (a numpy array), or None."""
    import numpy as np

    node = graph.node(node_id)
    if depth > 20:
        return None
    if node["type"] == "Const":
        value = node.get("value")
        shape = node["outputs"][0]["shape"] if node["outputs"] else None
        return None if value is None else np.array(value).reshape(shape if shape is not None else -1)
    if node["type"] == "Shape" and node["inputs"] and node["inputs"][0].get("shape") is not None \
            and None not in node["inputs"][0]["shape"]:
        return np.array(node["inputs"][0]["shape"])
    args = [_evaluate(graph, i["src"], depth + 1) for i in node["inputs"]]
    if any(a is None for a in args):
        return None
    if node["type"] in ("Identity", "Cast") and args:
        return args[0]
    if node["type"] == "LogicalNot" and args:
        return np.logical_not(args[0])
    if node["type"] == "StridedSlice" and len(args) == 4 and args[0].ndim == 1 and args[1].size == 1:
        begin, end, stride = int(args[1][0]), int(args[2][0]), int(args[3][0])
        return args[0][begin:end if end else None:stride]
    if node["type"] == "Pack" and args and all(a.ndim == 0 for a in args):  # scalars: axis 0 is the only one
        return np.stack(args)
    if node["type"] == "Sum" and len(args) == 2 and node["outputs"][0]["shape"] is not None:
        total = np.sum(args[0], axis=tuple(int(a) for a in args[1].ravel()))
        return total.reshape(node["outputs"][0]["shape"])
    if node["type"] in _BINARY and len(args) == 2:
        return _BINARY[node["type"]](args[0], args[1])
    return None


def taken_branch(graph: OpGraph, node: dict) -> str | None:
    """The branch function a compile-time predicate (If) or index (Case) selects, when known here
    (an index out of range selects the last branch, as XLA's Case kernel does)."""
    value = _evaluate(graph, node["inputs"][0]["src"])
    if value is None or value.size != 1:
        return None
    if "then_branch" in node["calls"]:
        return node["calls"]["then_branch" if bool(value.item()) else "else_branch"][0]
    branches = node["calls"].get("branches", [])
    index = int(value.item())
    return branches[index if 0 <= index < len(branches) else -1] if branches else None


def compiled_functions(graph: OpGraph) -> frozenset[str]:
    """The functions XLA compiles: all that the entry reaches, except ``Case`` branches that a
    constant index leaves out, once per graph."""
    return graph.analysis("compiled_functions", lambda: frozenset(_reached(graph)))


def _reached(graph: OpGraph):
    by_function: dict[str, list[dict]] = {}  # the ops that call functions, by the function they are in
    for node in graph.nodes():
        if node["calls"]:
            by_function.setdefault(node["function"], []).append(node)
    reached, pending = set(), [graph.root]
    while pending:
        name = pending.pop()
        if name in reached:
            continue
        reached.add(name)
        for node in by_function.get(name, []):
            taken = taken_branch(graph, node) if node["type"] in CASE_OPS else None
            pending.extend([taken] if taken else [f for names in node["calls"].values() for f in names])
    return reached


def compiled_nodes(graph: OpGraph) -> list[dict]:
    """Node records of the functions XLA compiles, in trace order, once per graph."""
    functions = compiled_functions(graph)
    return graph.analysis("compiled_nodes", lambda: [node for node in graph.nodes() if node["function"] in functions])


def never_taken(graph: OpGraph, function: str) -> bool:
    """Every op that calls ``function`` is an If/Case whose compile-time predicate or index picks
    another branch: TensorFlow never runs it (XLA may still compile it)."""
    callers = graph.callers(function)
    return bool(callers) and all(
        graph.node(caller)["type"] in BRANCH_OPS and taken_branch(graph, graph.node(caller)) not in (None, function)
        for caller, _ in callers)
