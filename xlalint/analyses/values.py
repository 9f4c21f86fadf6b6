"""Which values XLA can know when it compiles: the constant provenance behind XLA101/102/103/106.

Some op inputs (shapes, sizes, axes, permutations, multiples...) must be known
when XLA compiles. Following each such input back through the graph gives one
of three answers:

* constant: built from constants and static shapes (``tf.shape`` is static
  under XLA);
* specialized: it depends on an argument's or a variable's value; a real
  ``jit_compile`` call bakes the value in and recompiles for each new one;
* never constant: it depends on a random op, a value carried around a while
  loop, a while loop's result, or another data source; compilation fails.
"""

from __future__ import annotations

from functools import cached_property
from typing import NamedTuple

from xlalint.analyses.api_names import describe
from xlalint.analyses.branches import compiled_functions, taken_branch
from xlalint.core.opgraph import BRANCH_OPS, CALL_OPS, PASS_THROUGH, WHILE_OPS, OpGraph
from xlalint.core.support import SupportTable

CONSTANT, SPECIALIZED, NEVER = 0, 1, 2
# Inputs the compiler accepts as bounded-dynamic values when they can never be constant
# (an argument's value is still baked in: XLA102). StridedSlice only with unit strides.
DYNAMIC_OK = frozenset({("TopKV2", "k"), ("Slice", "begin"), ("Slice", "size")})
UNIT_STRIDE_DYNAMIC_OK = frozenset({("StridedSlice", "begin"), ("StridedSlice", "end")})


# Ops XLA cannot evaluate while resolving a compile-time constant (they lower to dot, reduce-window,
# scatter or loops, which XLA's value inference does not evaluate): a value that passes through
# one of them is never constant, even when it only depends on arguments. Measured on TF 2.21 CPU
# (tf.ones(f(arg)) fails for each); sort, top_k, gather, reductions, one_hot, where, cond pass.
OPAQUE_TO_CONSTANT_FOLDING = frozenset({
    "Cumsum", "Cumprod", "MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "Einsum",
    "UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd",
    "Bincount", "DenseBincount", "ScatterNd", "TensorScatterAdd", "TensorScatterSub",
    "TensorScatterUpdate", "TensorScatterMax", "TensorScatterMin",
})


# Ops that write a variable (their first input is its handle); XLA follows the value of these three.
VARIABLE_WRITES = ("Assign", "ResourceApply", "ResourceScatter", "ResourceStridedSliceAssign")
VALUE_WRITES = frozenset({"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"})


# Ops that derive a stateless generator's key, counter and algorithm from a seed: no draw. XLA evaluates them
# when compiling (measured: StatelessRandomNormalV2 with their `alg` compiles).
SEED_DERIVATIONS = frozenset({"StatelessRandomGetKeyCounter", "StatelessRandomGetAlg",
                              "StatelessRandomGetKeyCounterAlg"})


def _is_random(op_type: str) -> bool:
    return (("Random" in op_type and op_type not in SEED_DERIVATIONS)
            or op_type in {"Multinomial", "TruncatedNormal", "StatelessMultinomial"})


class Value(NamedTuple):
    """What XLA can know of a value when compiling, why, and the op that decides it."""

    verdict: int  # CONSTANT, SPECIALIZED or NEVER
    reason: str
    origin: dict | None = None  # the op the verdict comes from: a random op, a loop, a variable, an argument


KNOWN = Value(CONSTANT, "")


class ValueTracer:
    """Classifies values as CONSTANT, SPECIALIZED or NEVER, with the reason and the op it comes from."""

    def __init__(self, graph: OpGraph, metadata_ops: frozenset):
        self.graph = graph
        self.metadata_ops = metadata_ops
        self.memo: dict[tuple[str, int], Value] = {}

    def value(self, node_id: str, index: int) -> Value:
        key = (node_id, index)
        if key not in self.memo:
            self.memo[key] = Value(NEVER, "a value defined in terms of itself")  # cycle guard
            self.memo[key] = self._classify(self.graph.node(node_id), index)
        return self.memo[key]

    def _worst_input(self, node: dict) -> Value:
        worst = KNOWN
        for inp in node["inputs"]:
            result = self.value(inp["src"], inp["index"])
            if result[0] > worst[0]:
                worst = result
        return worst

    def _classify(self, node: dict, index: int) -> Value:
        op_type = node["type"]
        if op_type in ("Const", "HostConst") or op_type in self.metadata_ops:
            return KNOWN
        if op_type == "Placeholder":
            return self._argument(node)
        if _is_random(op_type):
            return Value(NEVER, f"the random op {op_type}{_at(node)}", node)
        if op_type in WHILE_OPS:
            if self._loop_invariant(node, index):
                inp = node["inputs"][index]
                if self.value(inp["src"], inp["index"])[0] == CONSTANT:
                    return KNOWN  # XLA forwards a constant the loop never changes
            return Value(NEVER, f"the result of the while loop{_at(node)}", node)
        if op_type in BRANCH_OPS:
            return self._branch_output(node, index)
        if op_type in ("ReadVariableOp", "ResourceGather") and node["inputs"]:
            handle = node["inputs"][0]
            return self._variable(node["function"], (handle["src"], handle["index"]), self.graph.position[node["id"]], node)
        if op_type == "VarHandleOp":
            return Value(SPECIALIZED, f"the value of a variable{_at(node)}", node)
        if op_type in CALL_OPS:
            (called,) = node["calls"]["f"]
            src, out = self.graph.functions[called]["outputs"][index]
            return self.value(src, out)
        if not node["inputs"]:
            return Value(NEVER, f"{op_type}{_at(node)}, which XLA cannot evaluate at compile time", node)
        worst = self._worst_input(node)
        if worst[0] == SPECIALIZED and op_type in OPAQUE_TO_CONSTANT_FOLDING:
            return Value(NEVER, f"{describe(op_type)}{_at(node)}, which XLA cannot evaluate at compile time "
                         f"(its input is {worst.reason})", node)
        return worst

    @cached_property
    def _writes(self) -> dict[tuple, list[dict]]:
        """Writes to each variable, by (function, handle), in trace order (the order of the program)."""
        writes: dict[tuple, list[dict]] = {}
        for node in self.graph.nodes():
            if node["type"].startswith(VARIABLE_WRITES) and node["inputs"]:
                handle = node["inputs"][0]
                writes.setdefault((node["function"], (handle["src"], handle["index"])), []).append(node)
        return writes

    def _variable(self, function: str, handle: tuple, before: int, read: dict) -> Value:
        """A variable's value where it is read: the value it came in with (baked in, one compilation
        per value) until the function writes it; after a write, what was written. XLA knows a written
        value only when it is a constant: an argument's value does not reach it through the variable
        (measured: ``v.assign(n)`` then ``tf.reshape(x, [v])`` fails; ``v.assign(2)`` or
        ``v.assign_add(1)`` compiles)."""
        earlier = [w for w in self._writes.get((function, handle), []) if self.graph.position[w["id"]] < before]
        if not earlier:
            return Value(SPECIALIZED, f"the value of a variable{_at(read)}", read)
        write = earlier[-1]
        written = self.value(write["inputs"][1]["src"], write["inputs"][1]["index"]) \
            if len(write["inputs"]) > 1 else Value(NEVER, "")
        if written.verdict != CONSTANT or write["type"] not in VALUE_WRITES:
            return Value(NEVER, f"the value written to a variable{_at(write)}, which XLA cannot know at compile "
                         "time", write)
        if write["type"] == "AssignVariableOp":
            return KNOWN
        return self._variable(function, handle, self.graph.position[write["id"]], read)  # += a constant

    def _branch_output(self, node: dict, index: int) -> Value:
        """An If/Case result: constant only if the predicate and the branch results are. When the
        predicate's value can be worked out here, only the branch it picks counts (XLA compiles
        only that one); otherwise the worst branch counts."""
        pred = node["inputs"][0]
        worst = self.value(pred["src"], pred["index"])
        branches = taken_branch(self.graph, node) if worst[0] == CONSTANT else None
        for names in ([[branches]] if branches else node["calls"].values()):  # then/else, or branches
            for name in names:
                if name in self.graph.functions:
                    src, out = self.graph.functions[name]["outputs"][index]
                    result = self.value(src, out)
                    if result[0] > worst[0]:
                        worst = result
        return worst

    def _argument(self, node: dict) -> Value:
        function = node["function"]
        position = self.graph.functions[function]["inputs"].index(node["id"])
        if function == self.graph.root:
            if position < self.graph.num_args:
                return Value(SPECIALIZED, f"the value of argument `{node['name']}`")
            return Value(SPECIALIZED, "the value of a captured variable or tensor")
        worst = KNOWN
        for caller_id, _ in self.graph.callers(function):
            result = self._through_caller(self.graph.node(caller_id), position)
            if result[0] >= worst[0]:
                worst = result
        return worst

    def _through_caller(self, caller: dict, position: int) -> Value:
        if caller["type"] in WHILE_OPS and not self._loop_invariant(caller, position):
            return Value(NEVER, f"a value carried around the while loop{_at(caller)}", caller)
        inp = self.graph.argument_source(caller, position)
        if inp is None:
            return Value(NEVER, f"an input of {caller['type']}{_at(caller)}", caller)
        return self.value(inp["src"], inp["index"])

    def _loop_invariant(self, while_node: dict, position: int) -> bool:
        """True when the body hands loop variable ``position`` back unchanged, also through the
        loops nested in it that carry it unchanged."""
        (body,) = while_node["calls"]["body"]
        src, index = self.graph.functions[body]["outputs"][position]
        seen = set()
        while (src, index) not in seen:
            seen.add((src, index))
            node = self.graph.node(src)
            if node["type"] in PASS_THROUGH and index < len(node["inputs"]):
                inp = node["inputs"][index if node["type"] == "IdentityN" else 0]
            elif node["type"] in WHILE_OPS and self._loop_invariant(node, index):
                inp = node["inputs"][index]
            else:
                break
            src, index = inp["src"], inp["index"]
        return src == self.graph.functions[body]["inputs"][position]


def _at(node: dict) -> str:
    frames = node["frames"]
    return f" (line {frames[-1][1]})" if frames else ""


def small_value(graph: OpGraph, node_id: str) -> list | None:
    """The value of a small integer constant, also when packed (``tf.stack``) or passed on."""
    node = graph.node(node_id)
    if node["type"] == "Const":
        return node.get("value")
    if node["type"] in ("Pack", *PASS_THROUGH) and node["inputs"]:
        parts = [small_value(graph, inp["src"]) for inp in node["inputs"]]
        known = [part for part in parts if part is not None]
        return [v for part in known for v in part] if len(known) == len(parts) else None
    return None


def _accepts_dynamic(graph: OpGraph, node: dict, arg: str) -> bool:
    key = (node["type"], arg)
    if key in DYNAMIC_OK:
        return True
    if key in UNIT_STRIDE_DYNAMIC_OK:
        strides = next((i for i in node["inputs"] if i["arg"] == "strides"), None)
        value = small_value(graph, strides["src"]) if strides else None
        return value is not None and all(v == 1 for v in value)
    return False


def constant_inputs(graph: OpGraph, support: SupportTable) -> list[tuple[dict, dict, Value]]:
    """``(node, input, value)`` for every compile-time-constant input that is not constant,
    once per graph (several rules ask)."""
    return graph.analysis(("constant_inputs", id(support)), lambda: list(_non_constant_inputs(graph, support)))


def _non_constant_inputs(graph: OpGraph, support: SupportTable):
    tracer = ValueTracer(graph, support.metadata_ops)
    seen = set()
    compiled = compiled_functions(graph)
    for node in graph.nodes():
        needed = support.const_inputs.get(node["type"])
        if not needed or node["function"] not in compiled:
            continue
        for inp in node["inputs"]:
            if inp["arg"] in needed:
                value = tracer.value(inp["src"], inp["index"])
                if value.verdict == NEVER and _accepts_dynamic(graph, node, inp["arg"]):
                    continue  # compiled as a bounded dynamic value
                if value.verdict != CONSTANT and (node["id"], inp["arg"]) not in seen:
                    seen.add((node["id"], inp["arg"]))
                    yield node, inp, value


def unsized_lists(graph: OpGraph):
    """EmptyTensorList ops whose max_num_elements is -1: XLA needs a fixed tensor list size."""
    for node in graph.nodes():
        if node["type"] == "EmptyTensorList":
            size = next((i for i in node["inputs"] if i["arg"] == "max_num_elements"), None)
            value = small_value(graph, size["src"]) if size else None
            if value is not None and value and value[0] < 0:
                yield node
