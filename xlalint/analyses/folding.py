"""The ops XLA never sees because TensorFlow constant-folds them first (XLA001/XLA002 skip them).

Before compiling, TensorFlow's graph optimizer replaces constant subgraphs with their values
(common_runtime/constant_folding.cc, with the filter of XLA's compiler). An op is folded when every
input is a constant or folded, and the op is foldable: not stateful in the op registry (random ops,
prints, variables, queues, ``SampleDistortedBoundingBoxV2``...), no variant or resource values, not
control flow or a function call, and a result of at most 10 MiB. Measured on TF 2.21 CPU beyond those
rules: ops whose output shape is not static on constants (``RaggedRange``, ``SegmentSum``,
``UniqueWithCounts``) and Python callbacks (even ``numpy_function(stateful=False)``) are not folded.

``Shape``/``ShapeN``/``Size``/``Rank`` of a value whose shape XLA knows when compiling (an argument's
``None`` dimensions included, no data-dependent size) are folded like constants (measured on TF 2.21 CPU:
``StatelessRandomGammaV2(shape=tf.shape(x))``, which has no XLA kernel, compiles for an ``x`` of shape
``[None, 3]``, in the function, a cond branch, a nested function or a loop body, and fails when ``x`` comes
from ``tf.boolean_mask``, or when a ``None`` dimension's value is computed from a variable's value: ``x * v``,
``tf.matmul(x, v)``, a Keras ``Dense`` layer's output; with a static shape it compiles). Two things are not
folded: the ops that derive a stateless generator's key and counter from a seed (their result depends on the
device: ``tf.random.stateless_gamma`` of constants fails), and a value that a while loop takes in (a gamma,
binomial or int64 draw of constants handed to a loop fails).

TensorFlow replaces with a constant only a folded value that an op it does not fold reads (or a result of the
function); a folded subgraph whose values nothing else reads stays as it is, and the bridge lowers it
(measured on TF 2.21 CPU: a ``StatelessRandomPoisson`` of constants that nothing reads, or whose sum only a
``tape.gradient`` of it reads (None), fails; summed into a loss with a value of the argument, it compiles, even
when no result needs that loss).
"""

from __future__ import annotations

import math

from xlalint.analyses.data_dependent import bounded_source
from xlalint.analyses.values import SEED_DERIVATIONS
from xlalint.core.opgraph import BRANCH_OPS, CALL_OPS, PASS_THROUGH, WHILE_OPS, OpGraph

SHAPE_READS = frozenset({"Shape", "ShapeN", "Size", "Rank"})
NOT_FOLDED = SHAPE_READS | BRANCH_OPS | CALL_OPS | WHILE_OPS | SEED_DERIVATIONS
HOST_CALLBACKS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})
VARIABLE_READS = frozenset({"ReadVariableOp", "ResourceGather"})
MAX_FOLDED_BYTES = 10 * 1024 * 1024
_BYTES = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "float16": 2, "bfloat16": 2,
          "complex128": 16}


def _small(tensor: dict) -> bool:
    """At most ``MAX_FOLDED_BYTES``, counting the known dimensions (an unknown one as 1)."""
    size = math.prod(d or 1 for d in tensor["shape"]) * _BYTES.get(tensor["dtype"], 8 if "64" in tensor["dtype"] else 4)
    return size <= MAX_FOLDED_BYTES


def _foldable(node: dict, shaped: bool) -> bool:
    """``shaped``: an input is a shape read folded above, so a dimension unknown when tracing is known to XLA."""
    outputs = node["outputs"]
    return (not node.get("stateful") and node["type"] not in NOT_FOLDED | HOST_CALLBACKS
            and bool(node["inputs"]) and bool(outputs)
            and all(o["shape"] is not None and (shaped or None not in o["shape"]) and _small(o) for o in outputs)
            and not any(t["dtype"] in ("resource", "variant") for t in node["inputs"] + outputs))


def folded_nodes(graph: OpGraph) -> frozenset[str]:
    """Constants and the ops TensorFlow folds into constants before XLA compiles, once per graph."""
    return graph.analysis("folded_nodes", lambda: frozenset(_folded(graph)))


def _into_loop(graph: OpGraph, node: dict) -> bool:
    """A value a while loop takes in (past identities)."""
    consumers = graph.consumers(node["id"])
    return any(c["type"] in WHILE_OPS or (c["type"] in PASS_THROUGH and _into_loop(graph, c)) for c in consumers)


def _static_shape_read(graph: OpGraph, node: dict) -> bool:
    """A shape, size or rank XLA knows when compiling: folded."""
    return (node["type"] in SHAPE_READS and bool(node["inputs"])
            and all(inp["shape"] is not None and bounded_source(graph, inp["src"]) is None
                    and (None not in inp["shape"] or not _reads_variable(graph, inp["src"])) for inp in node["inputs"]))


def _reads_variable(graph: OpGraph, node_id: str) -> bool:
    """The value is computed from a variable's value."""
    return node_id in graph.analysis("from_variables", lambda: _from_variables(graph))


def _from_variables(graph: OpGraph) -> frozenset[str]:
    """The ops that read a variable or a value computed from one, once per graph (a graph with a dynamic batch
    has a shape read per gradient op, each of which would otherwise walk its ancestors)."""
    return graph.reached_from({n["id"] for n in graph.nodes() if n["type"] in VARIABLE_READS})


def _folded(graph: OpGraph):
    folded: set[str] = set()
    shaped: set[str] = set()  # folded values made from a folded shape read
    for node_id in graph.topological_order:
        node = graph.node(node_id)
        if node["type"] == "Const":
            folded.add(node_id)
            continue
        if _static_shape_read(graph, node):
            folded.add(node_id)
            shaped.add(node_id)
            continue
        for inp in node["inputs"]:  # a loop, not all(): it runs over every tensor of the graph
            if inp["src"] not in folded:
                break
        else:
            from_shape = any(inp["src"] in shaped for inp in node["inputs"])
            if _foldable(node, from_shape) and not _into_loop(graph, node):
                folded.add(node_id)
                if from_shape:
                    shaped.add(node_id)
    return _replaced(graph, folded)


def _replaced(graph: OpGraph, folded: set[str]) -> set[str]:
    """The folded ops whose values reach an op not folded or a result (the rest stays, and is lowered), and
    the constants."""
    results = {src for function in graph.functions.values() for src, _ in function["outputs"]}
    reached: set[str] = set()
    for node_id in reversed(graph.topological_order):  # consumers first
        if node_id in folded and (node_id in results or any(
                c["id"] not in folded or c["id"] in reached for c in graph.consumers(node_id))):
            reached.add(node_id)
    return reached | {n for n in folded if graph.node(n)["type"] == "Const"}
