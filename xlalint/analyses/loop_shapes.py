"""Whether a while loop's body hands a loop variable back with the shape it was given (behind XLA105).

XLA compiles a loop body once, for the shapes the loop variables enter with (an argument's unknown
dimensions are known by then), and refuses a body that returns another shape ("Input and output
shapes of loop body do not match"). TensorFlow lets such a body through when ``shape_invariants``
relax the variable, or when the dimension is unknown while tracing (a ``None`` dimension of an
argument). So each dimension of the body's result is followed as a constant plus a sum of the
dimensions the variables entered with, through the ops that keep, cut or join shapes: elementwise
ops, slices with constant bounds, concat, pad, reductions, transposes, and nested loops that keep
their own shapes. A dimension the body gets any other way is unknown, and an unknown dimension never
counts as a change; a difference that is zero for a few sizes at most does (``n + 1``, ``n + x`` or
``n + x - 2`` against ``n``), one that is zero whenever two sizes are equal does not (``n + x - y``).
"""

from __future__ import annotations

from xlalint.analyses.values import small_value
from xlalint.core.opgraph import BRANCH_OPS, PASS_THROUGH, WHILE_OPS, OpGraph

# A dimension: (constant, ((symbol, coefficient), ...)) with symbols sorted; None where unknown. A symbol is
# (function, argument position, axis): a dimension of an argument that is unknown when tracing.
Dim = tuple[int, tuple[tuple[tuple[str, int, int], int], ...]]

ELEMENTWISE = PASS_THROUGH | frozenset({
    "Cast", "StopGradient", "Neg", "Abs", "Square", "Sqrt", "Rsqrt", "Exp", "Expm1", "Log", "Log1p", "Sin", "Cos",
    "Tan", "Tanh", "Sigmoid", "Relu", "Relu6", "Elu", "Selu", "Softplus", "Sign", "Floor", "Ceil", "Round",
    "Reciprocal", "Inv", "LogicalNot", "IsNan", "IsFinite", "IsInf", "ZerosLike", "OnesLike", "Real", "Imag",
    "Conj", "ComplexAbs", "Angle", "Erf", "AddV2", "Add", "Sub", "Mul", "Div", "RealDiv", "DivNoNan", "FloorDiv",
    "FloorMod", "TruncateDiv", "Maximum", "Minimum", "Pow", "SquaredDifference", "Greater", "GreaterEqual",
    "Less", "LessEqual", "Equal", "NotEqual", "LogicalAnd", "LogicalOr", "SelectV2", "BiasAdd", "AddN",
    "ClipByValue", "Softmax", "LogSoftmax", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift",
})
REDUCTIONS = frozenset({"Sum", "Mean", "Max", "Min", "Prod", "All", "Any", "EuclideanNorm"})
CONCATS = frozenset({"ConcatV2"})
PADS = frozenset({"Pad", "PadV2", "MirrorPad"})


def _const(value: int) -> Dim:
    return value, ()


def _add(a: Dim, b: Dim, sign: int = 1) -> Dim:
    terms = dict(a[1])
    for symbol, coefficient in b[1]:
        terms[symbol] = terms.get(symbol, 0) + sign * coefficient
    return a[0] + sign * b[0], tuple(sorted((s, c) for s, c in terms.items() if c))


def _index(value: int, size: Dim) -> Dim:
    """A Python-style index into a dimension of ``size``: negative counts from the end."""
    return _const(value) if value >= 0 else _add(size, _const(value))


class LoopShapes:
    """Per while loop and loop variable: does the body keep its shape (True), change it by a known amount
    (False), or is that unknown (None)? Computed on demand, once per graph."""

    def __init__(self, graph: OpGraph):
        self.graph = graph
        self._keeps: dict[tuple[str, int], bool | None] = {}
        self._contexts: dict[str, _BodyDims] = {}

    def keeps(self, while_node: dict, position: int) -> bool | None:
        key = (while_node["id"], position)
        if key not in self._keeps:
            self._keeps[key] = None  # a loop reached again while it is being followed: unknown
            self._keeps[key] = self._compare(while_node, position)
        return self._keeps[key]

    def context(self, function: str) -> _BodyDims:
        """The dimensions of ``function``'s values as XLA compiles it: the entry's function as traced, a body,
        branch or called function for what its caller (the first one) hands it in its own context."""
        if function not in self._contexts:
            callers = self.graph.callers(function) if function != self.graph.root else []
            entries: list = []
            if callers:
                caller = self.graph.node(callers[0][0])
                outer = self.context(caller["function"])
                offset = 1 if caller["type"] in BRANCH_OPS else 0
                entries = [outer.dims(inp["src"], inp["index"]) for inp in caller["inputs"][offset:]]
            inputs = self.graph.functions[function]["inputs"] if function in self.graph.functions else []
            self._contexts[function] = _BodyDims(self, function, {src: i for i, src in enumerate(inputs)}, entries)
        return self._contexts[function]

    def _compare(self, while_node: dict, position: int) -> bool | None:
        (body,) = while_node["calls"]["body"]
        function = self.graph.functions[body]
        tracer = self.context(body)
        src, index = function["outputs"][position]
        entered = tracer.dims(function["inputs"][position], 0)
        result = tracer.dims(src, index)
        if entered is None or result is None or len(entered) != len(result):
            return None
        verdicts = {_same(a, b) for a, b in zip(entered, result)}
        return False if False in verdicts else None if None in verdicts else True


def _same(a: Dim | None, b: Dim | None) -> bool | None:
    """Equal, different, or unknown. A difference whose sizes all count the same way (``n + x``, ``n - 2``,
    ``2 * n - x - 1``: every coefficient of one sign) is zero for a few sizes at most, and counts as a change:
    XLA compiles the body for the sizes of one call, and fails for all the others (``v = tf.concat([v, x[2:]],
    0)`` compiles only when ``x`` has 2 rows). One whose sizes count both ways (``n - x``) is zero whenever they
    are equal, which the program may well ensure: unknown."""
    if a is None or b is None:
        return None
    constant, terms = _add(a, b, -1)
    if not terms:
        return constant == 0
    coefficients = [c for _, c in terms]
    return False if all(c > 0 for c in coefficients) or all(c < 0 for c in coefficients) else None


class _BodyDims:
    """The dimensions of values in one loop body, in terms of the dimensions its variables entered with."""

    def __init__(self, loops: LoopShapes, function: str, given: dict[str, int], entries: list):
        self.loops, self.graph, self.function, self.given, self.entries = loops, loops.graph, function, given, entries
        self._memo: dict[tuple[str, int], list | None] = {}

    def placeholder(self, position: int, node: dict) -> list | None:
        """The dimensions the function is compiled for: what its caller hands it where that is known, else a
        symbol of its own."""
        shape = node["outputs"][0]["shape"]
        entry = self.entries[position] if position < len(self.entries) else None
        if shape is None:
            return None
        if entry is None or len(entry) != len(shape):
            entry = [None] * len(shape)
        return [_const(d) if d is not None else e if e is not None else (0, (((self.function, position, i), 1),))
                for i, (d, e) in enumerate(zip(shape, entry))]

    def dims(self, src: str, index: int) -> list | None:
        key = (src, index)
        if key not in self._memo:
            self._memo[key] = None  # a cycle: unknown
            self._memo[key] = self._dims(self.graph.node(src), index)
        return self._memo[key]

    def _dims(self, node: dict, index: int) -> list | None:
        shape = node["outputs"][index]["shape"] if index < len(node["outputs"]) else None
        if shape is None:
            return None
        traced = [_const(d) if d is not None else None for d in shape]
        if None not in traced:
            return traced
        computed = self._rule(node, index)
        if computed is None or len(computed) != len(shape):
            return traced
        return [t if t is not None else c for t, c in zip(traced, computed)]

    def _input(self, node: dict, i: int) -> list | None:
        inp = node["inputs"][i]
        return self.dims(inp["src"], inp["index"])

    def _value(self, node: dict, i: int) -> list | None:
        return small_value(self.graph, node["inputs"][i]["src"]) if i < len(node["inputs"]) else None

    def _rule(self, node: dict, index: int) -> list | None:
        op_type = node["type"]
        if node["id"] in self.given:
            return self.placeholder(self.given[node["id"]], node)
        if op_type in ELEMENTWISE:
            return _broadcast([self._input(node, i) for i in range(len(node["inputs"]))])
        if op_type in CONCATS:
            return self._concat(node)
        if op_type in PADS:
            return self._pad(node)
        if op_type == "StridedSlice":
            return self._strided_slice(node)
        if op_type == "Slice":
            return self._slice(node)
        if op_type in REDUCTIONS:
            return self._reduce(node, index)
        if op_type == "Transpose":
            perm, dims = self._value(node, 1), self._input(node, 0)
            return [dims[p] for p in perm] if perm is not None and dims is not None and len(perm) == len(dims) \
                else None
        if op_type in WHILE_OPS:
            return self._input(node, index) if self.loops.keeps(node, index) else None
        return None

    def _concat(self, node: dict) -> list | None:
        axis = self._value(node, len(node["inputs"]) - 1)
        inputs = [self._input(node, i) for i in range(len(node["inputs"]) - 1)]
        parts = [p for p in inputs if p is not None]
        if axis is None or len(parts) != len(inputs) or len({len(p) for p in parts}) != 1:
            return None
        axis_ = axis[0] % len(parts[0])
        joined: Dim | None = _const(0)
        for part in parts:
            joined = None if joined is None or part[axis_] is None else _add(joined, part[axis_])
        return [joined if i == axis_ else d for i, d in enumerate(parts[0])]

    def _pad(self, node: dict) -> list | None:
        dims, paddings = self._input(node, 0), self._value(node, 1)
        if dims is None or paddings is None or len(paddings) != 2 * len(dims):
            return None
        return [None if d is None else _add(d, _const(paddings[2 * i] + paddings[2 * i + 1]))
                for i, d in enumerate(dims)]

    def _strided_slice(self, node: dict) -> list | None:
        """``x[b:e]`` with constant bounds and unit strides, no axis added or removed. The masks are not
        exported: an end of 0 after a start is read as "to the end" (``x[1:]``), what Python writes."""
        dims = self._input(node, 0)
        begin, end, strides = (self._value(node, i) for i in (1, 2, 3))
        out = node["outputs"][0]["shape"]
        if dims is None or begin is None or end is None or strides is None or out is None or len(out) != len(dims) \
                or any(s != 1 for s in strides) or len(begin) > len(dims):
            return None
        sliced: list[Dim | None] = []
        for d, (b, e) in enumerate(zip(begin, end)):
            size = dims[d]
            if size is None:
                sliced.append(None)
                continue
            start, stop = _index(b, size), size if e == 0 else _index(e, size)
            sliced.append(_add(stop, start, -1))
        return sliced + dims[len(begin):]

    def _slice(self, node: dict) -> list | None:
        dims, begin, size = self._input(node, 0), self._value(node, 1), self._value(node, 2)
        if dims is None or begin is None or size is None or len(size) != len(dims):
            return None
        return [_const(s) if s >= 0 else None if d is None else _add(d, _const(b), -1)
                for d, b, s in zip(dims, begin, size)]

    def _reduce(self, node: dict, index: int) -> list | None:
        dims, axes = self._input(node, 0), self._value(node, 1)
        out = node["outputs"][index]["shape"]
        if dims is None or axes is None or out is None or not dims:
            return None
        axes_ = {a % len(dims) for a in axes}
        if len(out) == len(dims):  # keepdims
            return [_const(1) if i in axes_ else d for i, d in enumerate(dims)]
        return [d for i, d in enumerate(dims) if i not in axes_]


def _broadcast(shapes: list) -> list | None:
    """NumPy broadcasting of dimensions: a 1 gives way; a known size wins over an unknown one."""
    if any(s is None for s in shapes) or not shapes:
        return None
    rank = max(len(s) for s in shapes)
    result: list[Dim | None] = []
    for i in range(rank):
        column = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        wider = [d for d in column if d != _const(1)]
        if not wider:
            result.append(_const(1))
            continue
        known = [d for d in wider if d is not None]
        constants = [d for d in known if not d[1]]
        distinct = set(known)
        result.append(constants[0] if constants else known[0] if len(distinct) == 1 and len(known) == len(wider)
                      else None)
    return result


def loop_shapes(graph: OpGraph) -> LoopShapes:
    """The graph's loop-shape analysis, made once."""
    return graph.analysis("loop_shapes", lambda: LoopShapes(graph))
