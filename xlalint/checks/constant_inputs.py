"""XLA101 non-constant-shape-input and XLA102 value-specialized-input.

Some op inputs (shapes, sizes, axes, permutations, multiples...) must be known
when XLA compiles. Following each such input back through the graph gives one
of three answers:

* constant: built from constants and static shapes (``tf.shape`` is static
  under XLA);
* specialized: it depends on an argument's or a variable's value; a real
  ``jit_compile`` call bakes the value in and recompiles for each new one
  (XLA102, warning);
* never constant: it depends on a random op, a value carried around a while
  loop, a while loop's result, or another data source; compilation fails
  (XLA101, error).
"""

from __future__ import annotations

from xlalint.checks.api_names import call_name, describe
from xlalint.checks.base import Context, Hit, Rule
from xlalint.opgraph import OpGraph

CONSTANT, SPECIALIZED, NEVER = 0, 1, 2
WHILE_OPS = frozenset({"While", "StatelessWhile"})
BRANCH_OPS = frozenset({"If", "StatelessIf", "Case", "StatelessCase"})
CALL_OPS = frozenset({"PartitionedCall", "StatefulPartitionedCall"})
PASS_THROUGH = frozenset({"Identity", "IdentityN"})
# Inputs the compiler accepts as bounded-dynamic values when they can never be constant
# (an argument's value is still baked in: XLA102). StridedSlice only with unit strides.
DYNAMIC_OK = frozenset({("TopKV2", "k"), ("Slice", "begin"), ("Slice", "size")})
UNIT_STRIDE_DYNAMIC_OK = frozenset({("StridedSlice", "begin"), ("StridedSlice", "end")})


def _is_random(op_type: str) -> bool:
    return "Random" in op_type or op_type in {"Multinomial", "TruncatedNormal", "StatelessMultinomial"}


class ValueTracer:
    """Classifies values as CONSTANT, SPECIALIZED or NEVER, with the reason."""

    def __init__(self, graph: OpGraph, metadata_ops: frozenset):
        self.graph = graph
        self.metadata_ops = metadata_ops
        self.memo: dict[tuple[str, int], tuple[int, str]] = {}

    def value(self, node_id: str, index: int) -> tuple[int, str]:
        key = (node_id, index)
        if key not in self.memo:
            self.memo[key] = (NEVER, "a value defined in terms of itself")  # cycle guard
            self.memo[key] = self._classify(self.graph.node(node_id), index)
        return self.memo[key]

    def _worst_input(self, node: dict) -> tuple[int, str]:
        worst = (CONSTANT, "")
        for inp in node["inputs"]:
            result = self.value(inp["src"], inp["index"])
            if result[0] > worst[0]:
                worst = result
        return worst

    def _classify(self, node: dict, index: int) -> tuple[int, str]:
        op_type = node["type"]
        if op_type in ("Const", "HostConst") or op_type in self.metadata_ops:
            return CONSTANT, ""
        if op_type == "Placeholder":
            return self._argument(node)
        if _is_random(op_type):
            return NEVER, f"the random op {op_type}{_at(node)}"
        if op_type in WHILE_OPS:
            if self._loop_invariant(node, index):
                inp = node["inputs"][index]
                if self.value(inp["src"], inp["index"])[0] == CONSTANT:
                    return CONSTANT, ""  # XLA forwards a constant the loop never changes
            return NEVER, f"the result of the while loop{_at(node)}"
        if op_type in BRANCH_OPS:
            return self._branch_output(node, index)
        if op_type in ("ReadVariableOp", "ResourceGather", "VarHandleOp"):
            return SPECIALIZED, f"the value of a variable{_at(node)}"
        if op_type in CALL_OPS:
            (called,) = node["calls"]["f"]
            src, out = self.graph.functions[called]["outputs"][index]
            return self.value(src, out)
        if not node["inputs"]:
            return NEVER, f"{op_type}{_at(node)}, which XLA cannot evaluate at compile time"
        return self._worst_input(node)

    def _branch_output(self, node: dict, index: int) -> tuple[int, str]:
        """An If/Case result: constant only if the predicate and every branch's result are
        (which branch a compile-time predicate picks is not evaluated: the worst one counts)."""
        pred = node["inputs"][0]
        worst = self.value(pred["src"], pred["index"])
        for names in node["calls"].values():  # then_branch/else_branch, or branches
            for name in names:
                if name in self.graph.functions:
                    src, out = self.graph.functions[name]["outputs"][index]
                    result = self.value(src, out)
                    if result[0] > worst[0]:
                        worst = result
        return worst

    def _argument(self, node: dict) -> tuple[int, str]:
        function = node["function"]
        position = self.graph.functions[function]["inputs"].index(node["id"])
        if function == self.graph.root:
            if position < self.graph.num_args:
                return SPECIALIZED, f"the value of argument `{node['name']}`"
            return SPECIALIZED, "the value of a captured variable or tensor"
        worst = (CONSTANT, "")
        for caller_id, attr in self.graph.callers(function):
            result = self._through_caller(self.graph.node(caller_id), attr, function, position)
            if result[0] >= worst[0]:
                worst = result
        return worst

    def _through_caller(self, caller: dict, attr: str, function: str, position: int) -> tuple[int, str]:
        op_type = caller["type"]
        if op_type in WHILE_OPS:
            if self._loop_invariant(caller, position):
                inp = caller["inputs"][position]
                return self.value(inp["src"], inp["index"])
            return NEVER, f"a value carried around the while loop{_at(caller)}"
        offset = 1 if op_type in BRANCH_OPS else 0  # branch ops take the predicate/index first
        if op_type in BRANCH_OPS or op_type in CALL_OPS:
            inp = caller["inputs"][position + offset]
            return self.value(inp["src"], inp["index"])
        return NEVER, f"an input of {op_type}{_at(caller)}"

    def _loop_invariant(self, while_node: dict, position: int) -> bool:
        """True when the body hands loop variable ``position`` back unchanged."""
        (body,) = while_node["calls"]["body"]
        record = self.graph.functions[body]
        src, _ = record["outputs"][position]
        while self.graph.node(src)["type"] in PASS_THROUGH and self.graph.node(src)["inputs"]:
            src = self.graph.node(src)["inputs"][0]["src"]
        return src == record["inputs"][position]


def _at(node: dict) -> str:
    frames = node["frames"]
    return f" (line {frames[-1][1]})" if frames else ""


def _small_value(graph: OpGraph, node_id: str) -> list | None:
    """The value of a small integer constant, also when packed (``tf.stack``) or passed on."""
    node = graph.node(node_id)
    if node["type"] == "Const":
        return node.get("value")
    if node["type"] in ("Pack", *PASS_THROUGH) and node["inputs"]:
        parts = [_small_value(graph, inp["src"]) for inp in node["inputs"]]
        return None if None in parts else [v for part in parts for v in part]
    return None


def _accepts_dynamic(graph: OpGraph, node: dict, arg: str) -> bool:
    key = (node["type"], arg)
    if key in DYNAMIC_OK:
        return True
    if key in UNIT_STRIDE_DYNAMIC_OK:
        strides = next((i for i in node["inputs"] if i["arg"] == "strides"), None)
        value = _small_value(graph, strides["src"]) if strides else None
        return value is not None and all(v == 1 for v in value)
    return False


def constant_inputs(graph: OpGraph, ctx: Context):
    """``(node, input, verdict, reason)`` for every compile-time-constant input."""
    tracer = ValueTracer(graph, ctx.support.metadata_ops)
    for node in graph.nodes():
        needed = ctx.support.const_inputs.get(node["type"])
        if not needed:
            continue
        for inp in node["inputs"]:
            if inp["arg"] in needed:
                verdict, reason = tracer.value(inp["src"], inp["index"])
                if verdict == NEVER and _accepts_dynamic(graph, node, inp["arg"]):
                    continue  # compiled as a bounded dynamic value
                if verdict != CONSTANT:
                    yield node, inp, verdict, reason


def check(graph: OpGraph, ctx: Context):
    seen = set()
    for node, inp, verdict, reason in constant_inputs(graph, ctx):
        if (node["id"], inp["arg"]) in seen:
            continue
        seen.add((node["id"], inp["arg"]))
        what = f"input `{inp['arg']}` of {describe(node['type'])}"
        if verdict == NEVER:
            yield Hit(
                "XLA101",
                f"{what} must be a compile-time constant, but it comes from {reason}",
                "Compute it from static shapes and constants (tf.shape is static under XLA), "
                "or move this op out of the compiled function.",
                node=node["id"], api=call_name(node["type"]),
            )
        else:
            yield Hit(
                "XLA102",
                f"{what} depends on {reason}: XLA compiles it as a constant and recompiles for every new value",
                "Derive it from static shapes, make it a Python constant, or pad to a few fixed sizes.",
                node=node["id"], api=call_name(node["type"]),
            )


NON_CONSTANT = Rule("XLA101", "non-constant-shape-input", "error",
                    "A shape/size/axis input can never be a compile-time constant.", check)
VALUE_SPECIALIZED = Rule("XLA102", "value-specialized-input", "warning",
                         "A shape/size/axis input depends on runtime values: one compilation per value.", check)
