"""Predict the clusters TensorFlow's auto-clustering would form, without TensorFlow.

``TF_XLA_FLAGS=--tf_xla_auto_jit=2`` (plus ``--tf_xla_cpu_global_jit`` on CPU)
runs ``MarkForCompilationPass`` on every function graph TensorFlow executes:
it picks the ops XLA may compile, glues neighbours together along data edges
without creating cycles, and drops clusters with fewer than 4 ops. Ops outside
every cluster run in TensorFlow as usual. This module replays that pass on an
``OpGraph``; ``docs/autocluster.md`` lists what is and is not modelled and the
agreement measured against TensorFlow 2.21 on CPU.

1. **Flatten** the entry as TensorFlow does before clustering. Nested
   ``tf.function`` calls are inlined (ops named ``<call op>/<op>``). ``While``/
   ``If``/``Case`` from tf.while_loop/tf.cond/autograph are lowered to
   Switch/Merge: the op stays behind as a barrier no cluster crosses, and each
   body, condition or branch is clustered on its own (``<while op>/body/<op>``,
   ``/cond/``, ``<if op>/then/``, ``/else/``, ``<case op>/branch<i>/``). Raw
   functional loops (``..._Wrapper`` bodies, e.g. ctc_loss) stay one op, compiled
   whole when every op of their bodies is. Small captured tensors are arguments.
   Automatic control dependencies are added back (the export has no control
   edges), and ops that feed neither an output nor a stateful op are pruned.
2. **Grappler** (it runs first): values built from constants folded; ``x*1``/
   ``x+0`` (when the constant's value is exported), ``Floor(Floor(x))`` and
   shape-preserving reductions removed. On CPU only:
   chains of two or more unary float ops become one ``_UnaryOpsComposition``
   (compiled, counts as one op, and loses ``_XlaCompile``), and ``MatMul``/
   ``Conv2D`` + ``BiasAdd`` (+ ``Relu``...) become ``_FusedMatMul``/
   ``_FusedConv2D``, which XLA cannot compile. (On GPU Grappler skips both.)
3. **Candidates**: an XLA kernel for the device and dtypes, and none of the
   auto-clustering exclusions: ``_XlaCompile=False`` (``jit_scope(compile_ops=
   False)``), stateful random ops, ``Assert``/``CheckNumerics``, ``Unique``,
   ``variant`` or ``string`` values, Stack/TensorArray ops, slow/inaccurate
   linear algebra, stateful ops whose value must be a compile-time constant.
4. **Contraction**: clusters start as single candidates and merge along edges
   (shape consumers first, then every edge, producers visited from the sinks up
   as TensorFlow's post-order walk does) unless the merge would close a cycle
   through an op outside the pair, or put a variable write before a read of the
   same cluster (an XLA cluster reads all variables first and writes them last).
5. **Size**: a cluster is kept when it has at least 4 ops that are not
   ``Const``/``Identity`` (a unary composition counts once), holds a functional
   loop/branch, or one of its ops asks for compilation (``_XlaCompile=True``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from xlalint.opgraph import CALL_OPS, OpGraph
from xlalint.support import SupportTable

MIN_CLUSTER_SIZE = 4  # --tf_xla_min_cluster_size

# Lowered before clustering; (attr, role) for each function-typed attr.
CONTROL_FLOW = {
    "While": (("cond", "cond"), ("body", "body")),
    "StatelessWhile": (("cond", "cond"), ("body", "body")),
    "If": (("then_branch", "then"), ("else_branch", "else")),
    "StatelessIf": (("then_branch", "then"), ("else_branch", "else")),
    "Case": (("branches", "branch"),),
    "StatelessCase": (("branches", "branch"),),
}
CONSTANT_OPS = frozenset({"Const", "HostConst"})
IDENTITY_OPS = frozenset({"Identity", "RefIdentity"})  # Node::IsIdentity(): not counted for size
DROPPED_OPS = frozenset({"NoOp"})  # control-only; Grappler's dependency optimizer removes them

# compilability_check_util.cc / mark_for_compilation_pass.cc, with the CPU/GPU
# device registration (every cluster_* option off).
STATEFUL_RANDOM = frozenset({"RandomUniform", "RandomShuffle", "RandomUniformInt", "RandomStandardNormal",
                             "TruncatedNormal"})
DUMMY_IMPL = frozenset({"Assert", "CheckNumerics"})
# OpIsSlow/OpIsInaccurate as of TF 2.21 (ResizeBilinear/ResizeNearestNeighbor were dropped: measured).
SLOW_OR_INACCURATE = frozenset({"SelfAdjointEigV2", "Svd", "Qr", "MatrixInverse", "MatrixSolve",
                                "ResizeBilinearGrad"})
NEVER_AUTO_CLUSTERED = {"Unique": "dynamic output shape: auto-clustering never compiles Unique",
                        "CollectiveReduceV2": "collective op: not auto-clustered",
                        "SymbolicGradient": "gradient call: not auto-clustered"}
SHAPE_CONSUMERS = frozenset({"Shape", "Size", "Rank"})  # IsShapeConsumerOp: contracted first

# Grappler (CPU). arithmetic_optimizer.cc UnaryOpsComposition, remapper.cc contraction fusion.
COMPOSABLE_UNARY = frozenset({
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh", "Expm1", "Exp",
    "Floor", "Inv", "Log", "Log1p", "Neg", "Reciprocal", "Rint", "Round", "Rsqrt", "Sigmoid", "Sin",
    "Sinh", "Sqrt", "Square", "Tan", "Tanh", "Relu", "Relu6", "Elu", "Selu"})
COMPOSABLE_DTYPES = frozenset({"float16", "float32", "float64"})
CONTRACTIONS = {"MatMul": "_FusedMatMul", "Conv2D": "_FusedConv2D", "Conv3D": "_FusedConv3D",
                "DepthwiseConv2dNative": "_FusedDepthwiseConv2dNative"}
FUSED_ACTIVATIONS = frozenset({"Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"})
FUSION_DTYPES = frozenset({"float16", "float32", "float64", "bfloat16"})  # measured: float64 Conv2D fuses
# Applied twice, the second one is removed by Grappler (ArithmeticOptimizer RemoveIdempotent).
IDEMPOTENT = frozenset({"Floor", "Ceil", "Round", "Rint", "Snapshot"})
# x*1, x/1, x+0, x-0 are removed by Grappler's constant folding: (op, neutral value, operand positions).
NEUTRAL = {"Mul": (1, (0, 1)), "RealDiv": (1, (1,)), "Div": (1, (1,)), "Add": (0, (0, 1)),
           "AddV2": (0, (0, 1)), "Sub": (0, (1,)), "BiasAdd": (0, (1,))}
# A reduction that keeps its input's shape (a scalar, or only size-1 axes) is removed by Grappler.
REDUCTIONS = frozenset({"Sum", "Prod", "Max", "Min", "Mean", "All", "Any"})
# Shape-like ops Grappler folds when the input's shape is fully known.
STATIC_SHAPE_OPS = frozenset({"Shape", "Size", "Rank", "ShapeN"})

# resource_operation_safety_analysis.cc: a cluster reads every variable first and writes at the
# end, so a write (or read-write) that must happen before a read (or read-write) cannot share it.
RESOURCE_WRITES = frozenset({"AssignVariableOp", "ResourceScatterUpdate", "ResourceScatterNdUpdate"})
RESOURCE_OP_PREFIXES = ("Assign", "ResourceApply", "ResourceSparseApply", "ResourceScatter",
                        "ResourceStridedSliceAssign")

# Automatic control dependencies (auto_control_deps.py). Which ops are stateful is
# not exported, so these lists stand in for OpDef.is_stateful.
RESOURCE_READS = frozenset({"ReadVariableOp", "ResourceGather", "ResourceGatherNd", "VariableShape",
                            "ResourceReadVariableOp"})
STATEFUL = frozenset({
    *STATEFUL_RANDOM, *DUMMY_IMPL, "Multinomial", "RandomGamma", "RandomPoisson", "RandomPoissonV2",
    "ParameterizedTruncatedNormal", "PyFunc", "EagerPyFunc", "PrintV2", "Print", "WriteScalarSummary",
    "StatefulPartitionedCall", "While", "If", "Case", "AssignVariableOp", "AssignAddVariableOp",
    "AssignSubVariableOp", "ResourceScatterUpdate", "ResourceScatterAdd", "ResourceStridedSliceAssign",
    "StatefulUniform", "StatefulUniformInt", "StatefulStandardNormalV2", "StatefulTruncatedNormal",
    "RngReadAndSkip", "RngSkip", "DestroyResourceOp", "VarIsInitializedOp", "CollectiveReduceV2",
})
STATEFUL_PREFIXES = ("ResourceApply", "ResourceSparseApply", "ResourceScatter", "Assign")


def _is_stateful(op_type: str) -> bool:
    return op_type in STATEFUL or op_type.startswith(STATEFUL_PREFIXES)


def _lowered(node: dict) -> bool:
    """Whether TensorFlow lowers this While/If/Case to Switch/Merge before clustering.

    tf.while_loop/tf.cond/tf.switch_case (and autograph) set ``_lower_using_switch_merge``;
    raw ``functional_ops.While``/``If`` (ctc_loss, Defun-era code) do not, and their bodies are
    ``..._Wrapper`` functions. The attr itself is not exported, so its trace stands in for it.
    """
    for record in (node.get("xla_attrs") or {}, node["attrs"]):
        if isinstance(record.get("_lower_using_switch_merge"), bool):
            return record["_lower_using_switch_merge"]
    return not any(name.endswith("_Wrapper") for names in node["calls"].values() for name in names)


@dataclass
class _Unit:
    """One op of the flattened graph (``key`` is its qualified name)."""

    key: str
    node: dict
    region: int
    order: int
    kind: str = "op"  # "op" | "arg" (function argument) | "control_flow" (lowered While/If/Case)
    folded: bool = False  # Grappler turns it into a constant
    removed: bool = False  # Grappler deletes it, its users read its input (x*1, Floor(Floor(x)))
    inputs: list = field(default_factory=list)  # unit keys of data inputs (None: from nowhere)

    @property
    def type(self) -> str:
        return self.node["type"]


class _Flattener:
    """Inline calls, lower control flow, add automatic control dependencies."""

    def __init__(self, graph: OpGraph):
        self.graph = graph
        self.units: dict[str, _Unit] = {}
        self.edges: set[tuple[str, str]] = set()  # data edges
        self.control: set[tuple[str, str]] = set()  # automatic control dependencies
        self.regions = 0
        self.region_parent: dict[int, str | None] = {}  # region -> the lowered control-flow op owning it
        self.sinks: dict[int, set[str]] = {}  # region -> what must run: outputs, stateful ops
        self.by_function: dict[str, list[dict]] = {}
        self.trace_index: dict[str, int] = {}
        for i, node in enumerate(graph.nodes()):
            self.by_function.setdefault(node["function"], []).append(node)
            self.trace_index[node["id"]] = i

    def run(self) -> None:
        self._expand(self.graph.root, "", self._new_region(None), None, depth=0)
        self._prune()

    def _new_region(self, parent: str | None) -> int:
        self.regions += 1
        self.region_parent[self.regions - 1] = parent
        self.sinks[self.regions - 1] = set()
        return self.regions - 1

    def _prune(self) -> None:
        """Drop ops nothing needs (TensorFlow prunes a function body to its outputs and stateful ops)."""
        preds: dict[str, list[str]] = {}
        for src, dst in self.edges | self.control:
            preds.setdefault(dst, []).append(src)
        alive: set[str] = set()
        done: set[int] = set()
        while True:
            todo = [r for r, parent in self.region_parent.items()
                    if r not in done and (parent is None or parent in alive)]
            if not todo:
                break
            stack = []
            for region in todo:
                done.add(region)
                stack.extend(k for k in self.sinks[region] if k not in alive)
            alive.update(stack)
            while stack:
                for src in preds.get(stack.pop(), ()):
                    if src not in alive:
                        alive.add(src)
                        stack.append(src)
        self.units = {k: u for k, u in self.units.items() if k in alive}
        self.edges = {e for e in self.edges if e[0] in alive and e[1] in alive}
        self.control = {e for e in self.control if e[0] in alive and e[1] in alive}

    def _ordered(self, function: str) -> list[dict]:
        nodes = self.by_function.get(function, [])
        ids = {n["id"] for n in nodes}
        sub = nx.DiGraph()
        sub.add_nodes_from(ids)
        for n in nodes:
            sub.add_edges_from((i["src"], n["id"]) for i in n["inputs"] if i["src"] in ids)
        try:
            order = list(nx.lexicographical_topological_sort(sub, key=self.trace_index.get))
        except nx.NetworkXUnfeasible:
            order = [n["id"] for n in nodes]
        by_id = {n["id"]: n for n in nodes}
        return [by_id[i] for i in order]

    def _add(self, key: str, node: dict, region: int, kind: str = "op") -> str:
        self.units[key] = _Unit(key, node, region, len(self.units), kind)
        return key

    def _expand(self, function: str, prefix: str, region: int, arg_sources: list | None,
                depth: int) -> list:
        """Add ``function``'s ops; returns the unit key behind each of its outputs."""
        record = self.graph.functions.get(function, {"inputs": [], "outputs": []})
        inputs = record["inputs"]
        local: dict[str, object] = {}  # node id -> unit key, or list of keys per output (inlined call)

        def source(inp: dict):
            value = local.get(inp["src"])
            if isinstance(value, list):
                return value[inp["index"]] if inp["index"] < len(value) else None
            return value

        stateful_chain: str | None = None
        last_write: dict[str, str] = {}
        reads: dict[str, list[str]] = {}
        must_run: list[str] = []
        for node in self._ordered(function):
            op_type, nid = node["type"], node["id"]
            sources = [source(i) for i in node["inputs"]]
            if op_type in DROPPED_OPS:
                continue
            # Arguments: placeholders, and small captured tensors (Const ops listed as inputs, which
            # TensorFlow passes in as _Arg at run time: they are not constants to Grappler).
            if nid in inputs:
                position = inputs.index(nid)
                if arg_sources is not None:
                    local[nid] = arg_sources[position] if position < len(arg_sources) else None
                else:
                    local[nid] = self._add(prefix + node["name"], node, region, "arg")
                continue
            callee = (node["calls"].get("f") or [None])[0]
            if op_type in CALL_OPS and callee in self.graph.functions and depth < 10:
                local[nid] = self._expand(callee, f"{prefix}{node['name']}/", region, sources, depth + 1)
                continue
            key = prefix + node["name"]
            if op_type in CONTROL_FLOW and _lowered(node):
                self._add(key, node, region, "control_flow")
                for attr, role in CONTROL_FLOW[op_type]:
                    for i, body in enumerate(node["calls"].get(attr, [])):
                        if body in self.graph.functions and depth < 10:
                            name = f"{role}{i}" if role == "branch" else role
                            self._expand(body, f"{key}/{name}/", self._new_region(key), None, depth + 1)
            else:
                self._add(key, node, region)
            local[nid] = key
            unit = self.units[key]
            unit.inputs = sources
            self.edges.update((s, key) for s in sources if s is not None)
            # Automatic control dependencies, as tf.function adds them.
            resources = [s for s, i in zip(sources, node["inputs"]) if s is not None and i["dtype"] == "resource"]
            if _is_stateful(op_type) and not resources:
                if stateful_chain is not None:
                    self.control.add((stateful_chain, key))
                stateful_chain = key
            for resource in dict.fromkeys(resources):
                if op_type in RESOURCE_READS:
                    if resource in last_write:
                        self.control.add((last_write[resource], key))
                    reads.setdefault(resource, []).append(key)
                else:
                    for before in [last_write.get(resource), *reads.pop(resource, [])]:
                        if before is not None and before != key:
                            self.control.add((before, key))
                    last_write[resource] = key
            if (_is_stateful(op_type) or (resources and op_type not in RESOURCE_READS)):
                must_run.append(key)
        outputs = [source({"src": src, "index": index}) for src, index in record["outputs"]]
        for out in outputs:
            if out is not None and out in self.units and self.units[out].kind == "op":
                self.control.update((op, out) for op in must_run if op != out)
        if arg_sources is None:  # an inlined call's outputs matter only if the caller uses them
            self.sinks[region].update(o for o in outputs if o is not None)
        self.sinks[region].update(must_run)
        return outputs


class _DynamicDag:
    """A DAG that can contract edges without creating cycles, like TensorFlow's GraphCycles.

    Keeps a topological rank per node (Pearce-Kelly), so "is there another path from a to
    b" only searches nodes ranked between them.
    """

    def __init__(self, nodes, key):
        self.succ: dict = {n: set() for n in nodes}
        self.pred: dict = {n: set() for n in nodes}
        self.rank: dict = {n: i for i, n in enumerate(sorted(nodes, key=key))}

    def _forward(self, start, upper) -> set:
        seen, stack = {start}, [start]
        while stack:
            for s in self.succ[stack.pop()]:
                if s not in seen and self.rank[s] <= upper:
                    seen.add(s)
                    stack.append(s)
        return seen

    def _backward(self, start, lower) -> set:
        seen, stack = {start}, [start]
        while stack:
            for p in self.pred[stack.pop()]:
                if p not in seen and self.rank[p] >= lower:
                    seen.add(p)
                    stack.append(p)
        return seen

    def insert_edge(self, x, y) -> bool:
        """Add ``x -> y``; False (and no edge) if it would close a cycle."""
        if x == y or y in self.succ[x]:
            return x != y
        if self.rank[x] > self.rank[y]:
            forward = self._forward(y, self.rank[x])
            if x in forward:
                return False
            backward = self._backward(x, self.rank[y])
            moved = sorted(backward, key=self.rank.get) + sorted(forward, key=self.rank.get)
            for node, rank in zip(moved, sorted(self.rank[n] for n in moved)):
                self.rank[node] = rank
        self.succ[x].add(y)
        self.pred[y].add(x)
        return True

    def contract_edge(self, a, b) -> bool:
        """Merge ``b`` into ``a`` along the edge ``a -> b`` unless another path joins them."""
        self.succ[a].discard(b)
        self.pred[b].discard(a)
        if b in self._forward(a, self.rank[b]):
            self.succ[a].add(b)
            self.pred[b].add(a)
            return False
        succ, pred = self.succ.pop(b), self.pred.pop(b)
        for s in succ:
            self.pred[s].discard(b)
        for p in pred:
            self.succ[p].discard(b)
        del self.rank[b]
        for s in succ:
            if s != a:
                self.insert_edge(a, s)
        for p in pred:
            if p != a:
                self.insert_edge(p, a)
        return True


def _fully_known(shape) -> bool:
    return shape is not None and all(d is not None for d in shape)


class _Model:
    def __init__(self, graph: OpGraph, support: SupportTable, device: str):
        self.graph, self.support, self.device = graph, support, device
        flat = _Flattener(graph)
        flat.run()
        self.units = flat.units
        self.consumers: dict[str, list[str]] = {k: [] for k in self.units}
        for src, dst in sorted(flat.edges, key=lambda e: (self.units[e[1]].order, self.units[e[0]].order)):
            self.consumers[src].append(dst)
        self.edges = flat.edges
        self.control = flat.control
        self.group: dict[str, str] = {k: k for k in self.units}  # unit -> representative (Grappler fusions)
        self.fused: dict[str, tuple[str, list[str]]] = {}  # rep -> (fused op type, member keys)
        self.composed: dict[str, list[str]] = {}  # rep -> members of a _UnaryOpsComposition
        self.reason: dict[str, str] = {}  # rep -> why it is not a compilation candidate

    # -- Grappler -----------------------------------------------------------------------------
    def fold_constants(self) -> None:
        for key in sorted(self.units, key=lambda k: self.units[k].order):
            unit = self.units[key]
            if unit.kind != "op" or unit.type in CONSTANT_OPS or _is_stateful(unit.type):
                continue
            ins = [self.units.get(s) for s in unit.inputs]
            if (ins and all(i is not None and i.kind == "op" and (i.type in CONSTANT_OPS or i.folded) for i in ins)
                    and not {"variant", "resource"} & {o["dtype"] for o in unit.node["outputs"]}):
                unit.folded = True
            elif unit.type in IDEMPOTENT and len(ins) == 1 and ins[0] is not None and ins[0].type == unit.type:
                unit.removed = True
            elif unit.type in NEUTRAL and self._neutral(unit, ins):
                unit.removed = True
            elif (unit.type in REDUCTIONS and unit.node["inputs"] and unit.node["outputs"]
                  and _fully_known(unit.node["inputs"][0]["shape"])
                  and unit.node["inputs"][0]["shape"] == unit.node["outputs"][0]["shape"]):
                unit.removed = True
            elif unit.type in STATIC_SHAPE_OPS and all(_fully_known(i["shape"]) for i in unit.node["inputs"]):
                unit.folded = True

    @staticmethod
    def _neutral(unit: _Unit, ins: list) -> bool:
        """x*1, x+0...: a constant operand whose exported value is all neutral, shapes unchanged.

        Only constants whose value the export keeps (small integer ones today) can be seen."""
        neutral, positions = NEUTRAL[unit.type]
        if len(ins) != 2 or not unit.node["outputs"]:
            return False
        for pos in positions:
            const, other = ins[pos], unit.node["inputs"][1 - pos]
            value = const.node.get("value") if const is not None and const.kind == "op" else None
            if (const is not None and const.type in CONSTANT_OPS and value
                    and all(v == neutral for v in value)
                    and other["shape"] is not None and other["shape"] == unit.node["outputs"][0]["shape"]):
                return True
        return False

    def _dtype(self, key: str) -> str | None:
        outs = self.units[key].node["outputs"]
        return outs[0]["dtype"] if outs else None

    def _single_consumer(self, key: str) -> str | None:
        consumers = self.consumers[key]
        return consumers[0] if len(consumers) == 1 and self.units[key].node["outputs"] else None

    def compose_unary_chains(self) -> None:
        def composable(key):
            unit = self.units[key]
            return (unit.kind == "op" and not unit.folded and not unit.removed and unit.type in COMPOSABLE_UNARY
                    and self._dtype(key) in COMPOSABLE_DTYPES and len(unit.node["outputs"]) == 1)

        for key in sorted(self.units, key=lambda k: self.units[k].order):
            if key in self.group and self.group[key] != key or not composable(key):
                continue
            src = self.units[key].inputs[0] if self.units[key].inputs else None
            if src is not None and composable(src) and self._single_consumer(src) == key:
                continue  # not the head of its chain
            chain = [key]
            while True:
                nxt = self._single_consumer(chain[-1])
                if nxt is None or not composable(nxt) or self.units[nxt].inputs[:1] != [chain[-1]]:
                    break
                chain.append(nxt)
            if len(chain) >= 2:
                rep = chain[-1]  # named "<last op>/unary_ops_composition"
                for member in chain:
                    self.group[member] = rep
                self.composed[rep] = chain

    def fuse_contractions(self) -> None:
        for key in sorted(self.units, key=lambda k: self.units[k].order):
            unit = self.units[key]
            if unit.type not in CONTRACTIONS or unit.kind != "op" or self._dtype(key) not in FUSION_DTYPES:
                continue
            bias = self._single_consumer(key)
            if bias is None or self.units[bias].type != "BiasAdd" or self.group[bias] != bias:
                continue
            members = [key, bias]
            act = self._single_consumer(bias)
            if act is not None and self.units[act].type in FUSED_ACTIVATIONS and self.group[act] == act:
                members.append(act)
            for member in members:
                self.group[member] = key
            self.fused[key] = (CONTRACTIONS[unit.type], members)

    # -- candidates -----------------------------------------------------------------------------
    def _exclusion(self, unit: _Unit, composed: bool = False) -> str | None:
        node, op_type = unit.node, unit.type
        if unit.kind == "arg":
            return "function argument"
        if unit.kind == "control_flow":
            return ("control flow is lowered to Switch/Merge before clustering: its bodies are "
                    "clustered apart from the ops around it")
        # A _UnaryOpsComposition is a new node: the _Xla* attrs of the ops it replaces are lost
        # (measured: jit_scope(compile_ops=False) around one op of a unary chain has no effect).
        if not composed and (node.get("xla_attrs") or {}).get("_XlaCompile") is False:
            return "inside jit_scope(compile_ops=False) (_XlaCompile=False)"
        if unit.removed:
            return None  # gone after Grappler
        if unit.folded:  # a constant after Grappler
            return "string constant: XLA has no string type" if any(
                o["dtype"] == "string" for o in node["outputs"]) else None
        if op_type in CALL_OPS:
            return "call of a function whose body was not exported"
        if op_type in CONTROL_FLOW:  # not lowered: compiled whole, or not at all
            return self._uncompilable_body(node, depth=1)
        if op_type in STATEFUL_RANDOM:
            return "stateful random op: auto-clustering never compiles it (XLA's RNG differs from TensorFlow's)"
        if op_type in DUMMY_IMPL:
            return "Assert/CheckNumerics: auto-clustering keeps them in TensorFlow"
        if op_type in NEVER_AUTO_CLUSTERED:
            return NEVER_AUTO_CLUSTERED[op_type]
        if op_type in SLOW_OR_INACCURATE:
            return "slow or inaccurate under XLA: auto-clustering leaves it to TensorFlow"
        if op_type.startswith(("Stack", "TensorArray")):
            return "Stack/TensorArray op: not auto-clustered"
        if not self.support.has_op(self.device, op_type):
            return f"no XLA kernel on {self.device}"
        types = {t["dtype"] for t in node["inputs"]} | {t["dtype"] for t in node["outputs"]}
        if op_type in CONSTANT_OPS and "string" in types:
            return "string constant: XLA has no string type"
        if "variant" in types:
            return "produces or consumes a variant (TensorList, dataset, optional...)"
        if "string" in types:
            return "string tensors: XLA has no string type"
        mismatch = self.support.dtype_mismatch(self.device, op_type, node["attrs"])
        if mismatch:
            return f"no XLA kernel for {mismatch[1]} ({mismatch[0]}={mismatch[1]}) on {self.device}"
        return None

    def _uncompilable_body(self, node: dict, depth: int) -> str | None:
        """Why a functional While/If/Case (or a call in one) cannot be compiled whole, if it can't.

        IsCompilableCall: every op of every body must be compilable, and ops in called functions
        may not touch resource variables."""
        if depth > 10:
            return "functions nested too deeply"
        for names in node["calls"].values():
            for name in names:
                if name not in self.graph.functions:
                    continue  # a Defun-era body the export cannot see: assumed compilable (ctc_loss: it is)
                inputs = set(self.graph.functions[name]["inputs"])
                for inner in self.graph.nodes():
                    if inner["function"] != name or inner["id"] in inputs or inner["type"] in DROPPED_OPS:
                        continue
                    if inner["type"] in CALL_OPS or inner["type"] in CONTROL_FLOW:
                        why = self._uncompilable_body(inner, depth + 1)
                    elif any(t["dtype"] == "resource" for t in inner["inputs"]):
                        why = "uses a resource variable inside a called function"
                    else:
                        why = self._exclusion(_Unit(inner["name"], inner, -1, -1))
                    if why:
                        return f"{inner['type']} `{inner['name']}` in its body {name}: {why}"
        return None

    def _must_be_constant(self) -> dict[str, str]:
        """Ops whose value XLA would need at compile time (BackwardsConstAnalysis) -> the op needing it."""
        needed: dict[str, str] = {}
        stack = []
        for key, unit in self.units.items():
            args = self.support.const_inputs.get(unit.type, ())
            stack.extend((src, key) for src, inp in zip(unit.inputs, unit.node["inputs"])
                         if src is not None and inp["arg"] in args)
        while stack:
            key, user = stack.pop()
            if key in needed:
                continue
            needed[key] = user
            unit = self.units[key]
            if unit.kind == "op" and unit.type not in self.support.metadata_ops:
                stack.extend((src, user) for src in unit.inputs if src is not None)
        return needed

    def find_candidates(self) -> None:
        # A stateful op whose value must be a compile-time constant is never clustered: XLA could not
        # fold it, and the cluster after it would recompile for each value anyway.
        for key, user in self._must_be_constant().items():
            unit = self.units[key]
            if unit.kind == "op" and (_is_stateful(unit.type) or unit.type in RESOURCE_READS) \
                    and not unit.type.startswith(("Stack", "TensorArray")):
                self.reason.setdefault(self.group[key], f"stateful op whose value {self.units[user].type} "
                                                        "needs at compile time: kept out of clusters")
        for rep, (fused_type, members) in self.fused.items():
            names = "+".join(self.units[m].type for m in members)
            self.reason[rep] = (f"Grappler fuses {names} into {fused_type} on {self.device} before clustering, "
                                "and that op has no XLA kernel")
        for key, unit in self.units.items():
            rep = self.group[key]
            if rep in self.fused:
                continue
            why = self._exclusion(unit, composed=rep in self.composed)
            if why and rep not in self.reason:
                self.reason[rep] = why

    # -- contraction ----------------------------------------------------------------------------
    def _resource_kind(self, unit: _Unit) -> str | None:
        """"r", "w" or "rw" for a resource-variable op, else None."""
        if unit.kind == "op" and (unit.type in CONTROL_FLOW or unit.type in CALL_OPS):
            return "rw"  # MayCallFunction: assumed to read and write variables
        if unit.kind != "op" or not any(i["dtype"] == "resource" for i in unit.node["inputs"]):
            return None
        if unit.type in RESOURCE_READS:
            return "r"
        if unit.type in RESOURCE_WRITES:
            return "w"
        return "rw" if unit.type.startswith(RESOURCE_OP_PREFIXES) else None

    def unsafe_resource_pairs(self, dag: "_DynamicDag") -> set[tuple[str, str]]:
        """(writer, reader) reps that may not share a cluster: a path leads from one to the other."""
        kinds = {k: self._resource_kind(u) for k, u in self.units.items()}
        reaching: dict[str, set[str]] = {}
        pairs = set()
        for rep in sorted(dag.rank, key=dag.rank.get):
            incoming = set().union(*(reaching[p] for p in dag.pred[rep])) if dag.pred[rep] else set()
            mine = [k for k in self.members_of[rep] if kinds[k]]
            for key in mine:
                if kinds[key] in ("r", "rw"):
                    pairs.update((w, rep) for w in incoming)
            if any(kinds[k] in ("w", "rw") for k in mine):
                incoming = incoming | {rep}
            reaching[rep] = incoming
        return pairs

    def contract(self) -> dict[str, list[str]]:
        """Representative -> member reps of each cluster after edge contraction."""
        reps = sorted({self.group[k] for k in self.units}, key=lambda r: self.units[r].order)
        self.members_of = {r: [] for r in reps}
        for key in self.units:
            self.members_of[self.group[key]].append(key)
        dag = _DynamicDag(reps, key=lambda r: self.units[r].order)
        order = self.units
        for src, dst in sorted(self.edges | self.control, key=lambda e: (order[e[0]].order, order[e[1]].order)):
            a, b = self.group[src], self.group[dst]
            if a != b:
                dag.insert_edge(a, b)
        unsafe = self.unsafe_resource_pairs(dag)
        resource_reps = {r for pair in unsafe for r in pair}
        members = {r: [r] for r in reps if r not in self.reason}
        region = {r: self.units[r].region for r in reps}

        def resource_safe(a, b) -> bool:
            left = [r for r in members[a] if r in resource_reps]
            right = [r for r in members[b] if r in resource_reps]
            return not any((x, y) in unsafe or (y, x) in unsafe for x in left for y in right)

        def phase(accept) -> bool:
            changed = False
            for a in sorted(members, key=lambda r: -dag.rank[r]):  # post-order: sinks first
                if a not in members:
                    continue
                for b in sorted(dag.succ[a], key=lambda r: dag.rank[r]):
                    if (b in members and region[a] == region[b] and accept(a, b) and resource_safe(a, b)
                            and dag.contract_edge(a, b)):
                        members[a].extend(members.pop(b))
                        changed = True
            return changed

        # Phase 0: shape consumers join their producer first; then every edge, to a fixed point.
        phase(lambda a, b: len(members[b]) == 1 and self.units[b].type in SHAPE_CONSUMERS)
        while phase(lambda a, b: True):
            pass
        return members

    # -- result -------------------------------------------------------------------------------
    def _weight(self, rep: str) -> int:
        unit = self.units[rep]
        if rep in self.composed:
            return 1
        if unit.folded or unit.removed or unit.type in CONSTANT_OPS or unit.type in IDENTITY_OPS:
            return 0
        return 1

    def _users(self, key: str) -> set[str]:
        """Consumers of ``key``, seen through Identity ops (Grappler removes most of them)."""
        users, stack = set(), list(self.consumers[key])
        while stack:
            user = stack.pop()
            if self.units[user].type in IDENTITY_OPS:
                stack.extend(self.consumers[user])
            else:
                users.add(user)
        return users

    def result(self) -> dict:
        clusters = self.contract()
        rep_members: dict[str, list[str]] = {}
        for key in self.units:
            rep_members.setdefault(self.group[key], []).append(key)
        kept, dropped = [], []
        for rep, reps in sorted(clusters.items(), key=lambda kv: min(self.units[r].order for r in kv[1])):
            keys = sorted((k for r in reps for k in rep_members[r]), key=lambda k: self.units[k].order)
            size = sum(self._weight(r) for r in reps)
            asked = any((self.units[k].node.get("xla_attrs") or {}).get(a) is True
                        for k in keys if self.group[k] not in self.composed
                        for a in ("_XlaCompile", "_XlaMustCompile"))
            keys_set = set(keys)
            # DeclusterNodes: a Fill whose users are all outside the cluster is left out.
            keys = [k for k in keys if not (self.units[k].type == "Fill"
                                            and not keys_set.intersection(self._users(k)))]
            functional = any(self.units[r].type in CONTROL_FLOW for r in reps)  # assumed big enough
            if size >= MIN_CLUSTER_SIZE or asked or functional:
                kept.append(keys)
            elif size:
                dropped.append(keys)
        counted = [k for k, u in self.units.items() if u.kind == "op" and not u.folded and not u.removed
                   and u.type not in CONSTANT_OPS | IDENTITY_OPS | {"IdentityN"}]
        in_clusters = {k for keys in kept for k in keys}
        splitters = []
        for rep, why in sorted(self.reason.items(), key=lambda kv: self.units[kv[0]].order):
            unit = self.units[rep]
            if unit.kind == "arg" or unit.type in CONSTANT_OPS and "string" not in why:
                continue
            splitters.append({"op_name": rep, "op_type": unit.type, "reason": why, "node": unit.node["id"]})
        return {
            "clusters": kept,
            "compiled_ops": sum(1 for k in counted if k in in_clusters),
            "total_ops": len(counted),
            "splitters": splitters,
            "dropped": dropped,
        }


def predict_clusters(graph: OpGraph, support: SupportTable, device: str) -> dict:
    """The clusters ``--tf_xla_auto_jit=2`` would form for the entry's root function.

    Returns ``{"clusters": [[op_name, ...], ...], "compiled_ops": int, "total_ops": int,
    "splitters": [{"op_name", "op_type", "reason", "node"}], "dropped": [[op_name, ...], ...]}``.
    Op names are the root function's op names; ops that come from a nested function are
    qualified the way TensorFlow names them after inlining/lowering (``<call op>/<op>``,
    ``<while op>/body/<op>``...). ``clusters`` and ``dropped`` (clusters under the minimum
    size) list every member, constants included, in program order. ``compiled_ops`` /
    ``total_ops`` count ops that do work: not arguments, constants, identities, folded values or
    the control-flow ops themselves. ``node`` in a splitter is its ``OpGraph`` node id, for
    ``xlalint.sourcemap.locate``.
    """
    model = _Model(graph, support, device)
    model.fold_constants()
    if device == "cpu":
        model.compose_unary_chains()
        model.fuse_contractions()
    model.find_candidates()
    return model.result()


def flattened_ops(graph: OpGraph) -> dict[str, str]:
    """Qualified op name (as ``predict_clusters`` names ops) -> ``OpGraph`` node id, for every op
    of the flattened entry: the root's ops, inlined calls and lowered control-flow bodies."""
    flat = _Flattener(graph)
    flat.run()
    return {key: unit.node["id"] for key, unit in flat.units.items()}
