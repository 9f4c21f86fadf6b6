"""What TensorFlow's clustering and the passes before it do with each op type (TF 2.21).

The sets follow ``tensorflow/compiler/jit/mark_for_compilation_pass.cc`` and
``compilability_check_util.cc`` (with the CPU/GPU device registration, every
``cluster_*`` option off), Grappler's ``arithmetic_optimizer.cc``,
``constant_folding.cc`` and ``remapper.cc`` (CPU), ``resource_operation_safety_analysis.cc``
and ``python/framework/auto_control_deps.py``.
"""

from __future__ import annotations

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


def is_stateful(op_type: str) -> bool:
    return op_type in STATEFUL or op_type.startswith(STATEFUL_PREFIXES)
