"""XLA103, XLA105, XLA106, XLA201, XLA202 and XLA301 on hand-built graphs: no TensorFlow, each hit exact (and the
search behind XLA201's failing reads on graphs whose paths join or go round)."""

from __future__ import annotations

from collections import Counter

import pytest

from graph_builder import GraphBuilder, hits
from xlalint.analyses import data_dependent, tensor_lists
from xlalint.checks import Context, run_checks
from xlalint.core.support import load_support


def test_data_dependent_output_shape_is_flagged_unless_known_when_compiling():
    b = GraphBuilder()
    mask = b.arg("mask", dtype="bool", shape=[8])
    b.op("Where", "Where", [mask], dtype="int64", shape=[None, 1], attrs={"T": "bool"})
    b.op("Unique", "Unique", [b.arg("ids", dtype="int32", shape=[8])], dtype="int32", shape=[None],
         attrs={"T": "int32", "out_idx": "int32"}, outputs=2)
    folded = b.const("fixed_mask", [1, 0, 1], dtype="bool")
    b.op("WhereOfConstant", "Where", [folded], dtype="int64", shape=[None, 1], attrs={"T": "bool"})
    assert hits(b.build()) == [("XLA103", "Unique"), ("XLA103", "Where")]


def _masked(b: GraphBuilder) -> str:
    """``tf.boolean_mask``'s core: the rows of a data-dependent count."""
    mask = b.arg("mask", dtype="bool", shape=[8])
    where = b.op("Where", "Where", [mask], dtype="int64", shape=[None, 1], attrs={"T": "bool"})
    return b.op("GatherNd", "GatherNd", [b.arg("x", shape=[8]), where], shape=[None],
                args=["params", "indices"], attrs={"Tparams": "float32", "Tindices": "int64"})


@pytest.mark.parametrize("target, flagged", [([4], True), ([-1, 2], False), ([2, 2], True)])
def test_reshape_of_a_data_dependent_size_to_a_fixed_shape(target, flagged):
    b = GraphBuilder()
    rows = _masked(b)
    b.op("Reshape", "Reshape", [rows, b.const("shape", target)], shape=[None],
         args=["tensor", "shape"], attrs={"T": "float32", "Tshape": "int32"})
    assert hits(b.build()) == [("XLA103", "Where")] + [("XLA106", "Reshape")] * flagged


def test_cumsum_of_a_data_dependent_size_crashes_but_of_a_static_one_does_not():
    b = GraphBuilder()
    attrs = {"T": "float32", "Tidx": "int32"}
    masked = _masked(b)
    cumsum = b.op("Cumsum", "Cumsum", [masked, b.const("axis", [0])], shape=[None], args=["x", "axis"], attrs=attrs)
    static = b.op("CumsumStatic", "Cumsum", [b.arg("y", shape=[8]), b.const("axis2", [0])], shape=[8],
                  args=["x", "axis"], attrs=attrs)
    b.function(b.root, [cumsum, static])
    assert hits(b.build()) == [("XLA103", "Where"), ("XLA106", "Cumsum")]


@pytest.mark.parametrize("read", ["value", "shape", "assign", "nothing"])
def test_a_cumsum_nothing_reads_is_dropped_before_xla_sees_its_size(read):
    """XLA's dead-code elimination removes it (a gradient that is None leaves it so); its shape keeps it."""
    b = GraphBuilder()
    cumsum = b.op("Cumsum", "Cumsum", [_masked(b), b.const("axis", [0])], shape=[None], args=["x", "axis"],
                  attrs={"T": "float32", "Tidx": "int32"})
    if read == "shape":
        cumsum = b.op("Shape", "Shape", [cumsum], dtype="int32", shape=[1])
    if read == "assign":  # a stateful op: TensorFlow runs it, so its inputs are kept
        b.op("Assign", "AssignVariableOp", [b.arg("v", dtype="resource"), cumsum], stateful=True)
    b.function(b.root, [cumsum] if read in ("value", "shape") else [])
    assert hits(b.build()) == [("XLA103", "Where")] + [("XLA106", "Cumsum")] * (read != "nothing")


def _rotated(b: GraphBuilder, branch_shapes: tuple, index: str | None = None) -> str:
    """``tf.image.rot90``'s core: an If (a Case when ``index`` is given) over a [2, 16, 3] image whose
    branches return ``branch_shapes``."""
    x = b.arg("x", shape=[2, 16, 3])
    names = []
    for k, shape in enumerate(branch_shapes):
        name = f"branch{k}"
        inner = b.arg("image", shape=[2, 16, 3], function=name)
        b.function(name, [b.op("out", "Transpose" if shape != [2, 16, 3] else "Identity", [inner], shape=shape,
                                function=name)])
        names.append(name)
    merged = [size if len({s[d] for s in branch_shapes}) == 1 else None for d, size in enumerate(branch_shapes[0])]
    if index is None:
        calls, first = {"then_branch": names[:1], "else_branch": names[1:]}, b.arg("pred", dtype="bool")
    else:
        calls, first = {"branches": names}, index
    cond = b.op("cond", "StatelessIf" if index is None else "StatelessCase", [first, x], shape=merged, calls=calls)
    return b.op("rotated", "Identity", [cond], shape=merged)


@pytest.mark.parametrize("op_type, axis, flagged", [
    ("Roll", [0, 1, 2], True),  # tf.signal.fftshift: every axis
    ("Roll", [1], True),
    ("Roll", [-3], True),
    ("Roll", [2], False),  # the static channel axis
    ("Cumsum", [1], True),
    ("Cumsum", [2], False),
    ("Cumprod", [0], True),
])
def test_an_op_along_a_dimension_from_branches_of_different_shapes(op_type, axis, flagged):
    b = GraphBuilder()
    rotated = _rotated(b, ([16, 2, 3], [2, 16, 3]))
    inputs = [rotated, b.const("shift", [1] * len(axis)), b.const("axis", axis)] if op_type == "Roll" else \
        [rotated, b.const("axis", axis)]
    b.op(op_type, op_type, inputs, shape=[None, None, 3],
         args=["input", "shift", "axis"] if op_type == "Roll" else ["x", "axis"])
    b.function(b.root, [f"{b.root}:{op_type}"])
    assert hits(b.build()) == [("XLA106", op_type)] * flagged


@pytest.mark.parametrize("op_type, consumer_args, flagged", [
    ("FFT", [], True),
    ("Reshape", [[96]], True),
    ("Reshape", [[-1, 3]], False),
    ("Relu", [], False),
])
def test_other_consumers_of_branches_of_different_shapes(op_type, consumer_args, flagged):
    b = GraphBuilder()
    rotated = _rotated(b, ([16, 2, 3], [2, 16, 3]))
    inputs = [rotated] + [b.const("shape", value) for value in consumer_args]
    b.function(b.root, [b.op(op_type, op_type, inputs, shape=[None, None, 3], args=["input", "shape"][: len(inputs)]
                             if op_type != "Reshape" else ["tensor", "shape"])])
    assert hits(b.build()) == [("XLA106", op_type)] * flagged


@pytest.mark.parametrize("branch_shapes, index, flagged", [
    (([16, 2, 3], [2, 16, 3]), None, True),
    (([2, 16, 3], [2, 16, 3]), None, False),  # same shapes: static
    (([16, 2, 3], [2, 16, 3]), "constant", False),  # a Case on a constant index compiles one branch
    (([16, 2, 3], [2, 16, 3]), "argument", True),
])
def test_only_branches_xla_compiles_with_different_shapes_make_a_bounded_size(branch_shapes, index, flagged):
    b = GraphBuilder()
    chosen = {None: None, "constant": lambda: b.const("index", [1]), "argument": lambda: b.arg("i", dtype="int32")}
    rotated = _rotated(b, branch_shapes, chosen[index]() if index else None)
    b.function(b.root, [b.op("Roll", "Roll", [rotated, b.const("shift", [1]), b.const("axis", [0])],
                             shape=[None, None, 3], args=["input", "shift", "axis"])])
    assert hits(b.build()) == [("XLA106", "Roll")] * flagged


def _loop(body_result: str, leaves_with: list) -> GraphBuilder:
    """A while loop over one float vector of shape [2]; the body returns ``body_result`` of it."""
    b = GraphBuilder()
    x = b.arg("x", shape=[2])
    b.op("while", "StatelessWhile", [x], shape=leaves_with, calls={"body": ["body"], "cond": ["cond"]},
         attrs={"T": ["float32"]})
    carried = b.arg("v", shape=[None], function="body")
    if body_result == "concat":
        axis = b.const("axis", [0], function="body")
        out = b.op("concat", "ConcatV2", [carried, carried, axis], shape=[None], function="body",
                   args=["values", "values", "axis"], attrs={"T": "float32", "Tidx": "int32"})
    else:
        out = b.op("double", "AddV2", [carried, carried], shape=[None], function="body", attrs={"T": "float32"})
    b.function("body", [b.op("same", "Identity", [out], shape=[None], function="body", attrs={"T": "float32"})])
    b.arg("v", shape=[None], function="cond")
    b.function("cond", [b.op("go", "Const", dtype="bool", function="cond", value=[1])])
    return b


@pytest.mark.parametrize("body_result, leaves_with, expected", [
    ("concat", [None], [("XLA105", "while")]),  # grows from itself
    ("add", [None], []),  # shape unknown after the loop, but nothing grows it
    ("concat", [2], []),  # TensorFlow's shape inference says it keeps its shape
])
def test_a_loop_variable_grown_by_concat_of_itself(body_result, leaves_with, expected):
    assert hits(_loop(body_result, leaves_with).build()) == expected


@pytest.mark.parametrize("first, body, expected", [
    ("constant", "where", [("XLA103", "again"), ("XLA105", "while")]),  # [2, 1] before, [<=3, 1] after
    ("argument", "where", [("XLA103", "again"), ("XLA103", "first")]),  # bounded on both sides
    ("constant", "same", []),  # the body returns it unchanged
    # the body needs the mask's value (a shape from it): XLA passes the constant in, both sides static
    ("constant", "where, shape from mask", [("XLA102", "shaped"), ("XLA103", "again")]),
])
def test_a_loop_variable_sized_when_compiling_then_bounded_by_the_body(first, body, expected):
    """``y = tf.where(m)`` before a loop whose body makes ``y = tf.where(m)`` again (found by bench/difftest.py)."""
    assert hits(_where_before_and_in_a_loop(first, body)) == expected


def test_xla103_and_xla105_share_one_search_for_data_dependent_sizes(monkeypatch):
    searches = []

    def counted(*args):
        searches.append(args)
        return real(*args)

    real = data_dependent._dynamic_size_ops
    monkeypatch.setattr(data_dependent, "_dynamic_size_ops", counted)
    assert hits(_where_before_and_in_a_loop("argument", "where")) == [("XLA103", "again"), ("XLA103", "first")]
    assert len(searches) == 1


def _where_before_and_in_a_loop(first: str, body: str):
    b = GraphBuilder()
    where = {"dtype": "int64", "shape": [None, 1], "attrs": {"T": "bool"}}
    source = b.const("fixed", [1, 0, 1], dtype="bool") if first == "constant" else b.arg("m0", dtype="bool", shape=[3])
    start = b.op("first", "Where", [source], **where)
    b.op("while", "StatelessWhile", [start, b.arg("m", dtype="bool", shape=[3])], calls={"body": ["body"]},
         outputs=2, **where)
    carried, mask = b.arg("y", "int64", [None, 1], function="body"), b.arg("mask", "bool", [3], function="body")
    if body.endswith("shape from mask"):
        b.op("shaped", "Reshape", [b.arg("t", function="body"), mask], args=["tensor", "shape"], function="body")
    b.function("body", [b.op("again", "Where", [mask], function="body", **where) if body != "same" else carried, mask])
    return b.build()


def _write(b: GraphBuilder, handle: str, index: str) -> str:
    return b.op("write", "TensorListSetItem", [handle, index, b.arg("item")], dtype="variant",
                args=["input_handle", "index", "item"],
                attrs={"element_dtype": "float32", "resize_if_index_out_of_bounds": True})


def _reserve(b: GraphBuilder, size: str) -> str:
    return b.op("list", "TensorListReserve", [b.const("element_shape", [-1]), size], dtype="variant",
                args=["element_shape", "num_elements"], attrs={"element_dtype": "float32", "shape_type": "int32"})


@pytest.mark.parametrize("size, index, expected", [
    (2, 5, [("XLA201", "write")]),  # past the initial size: certainly lost under XLA
    (2, 1, []),  # inside it
    (0, None, [("XLA201", "write")]),  # TensorArray(dynamic_size=True) starts empty: any write grows it
    ("argument", 1, [("XLA102", "list"), ("XLA202", "write")]),  # size known only at run time
    (2, None, [("XLA202", "write")]),  # index known only at run time
])
def test_tensor_array_writes_that_grow_or_may_grow(size, index, expected):
    b = GraphBuilder()
    handle = _reserve(b, b.arg("n", dtype="int32") if size == "argument" else b.const("size", [size]))
    position = b.arg("i", dtype="int32") if index is None else b.const("index", [index])
    written = _write(b, b.op("passed_on", "Identity", [handle], dtype="variant", attrs={"T": "variant"}), position)
    b.function(b.root, [_stack(b, written)])
    assert hits(b.build()) == expected


def _stack(b: GraphBuilder, handle: str) -> str:
    return b.op("stack", "TensorListStack", [handle, b.const("stacked_shape", [-1])], shape=[None],
                args=["input_handle", "element_shape"], attrs={"element_dtype": "float32"})


def test_a_grown_list_that_nothing_reads_is_left_alone():
    """Measured: a TensorArray grown in a loop and never read compiles and runs (nothing comes back cut)."""
    b = GraphBuilder()
    _write(b, _reserve(b, b.const("size", [0])), b.arg("i", dtype="int32"))
    assert hits(b.build()) == []


def test_a_write_without_resizing_is_left_alone():
    b = GraphBuilder()
    handle = _reserve(b, b.const("size", [2]))
    b.op("write", "TensorListSetItem", [handle, b.const("index", [5]), b.arg("item")], dtype="variant",
         args=["input_handle", "index", "item"], attrs={"element_dtype": "float32"})
    assert hits(b.build()) == []


def _gathered_from_a_list_that_starts_empty(b: GraphBuilder) -> str:
    """A TensorArray that starts empty, written and gathered: [2, 3] to TensorFlow, one rank less under XLA."""
    written = _write(b, _reserve(b, b.const("size", [0])), b.arg("i", dtype="int32"))
    return b.op("gather", "TensorListGather", [written, b.const("indices", [0, 1]), b.const("gathered_shape", [3])],
                shape=[2, 3], args=["input_handle", "indices", "element_shape"], attrs={"element_dtype": "float32"})


def _transpose(b: GraphBuilder, src: str) -> str:
    """An op that needs the gather's rank (XLA fails on the lower one)."""
    return b.op("transpose", "Transpose", [src, b.const("perm", [1, 0])], shape=[3])


def test_the_op_that_needs_a_lost_rank_is_found_past_a_cycle():
    """The search through elementwise ops after the gather goes round a cycle once (hand-built: the shapes keep
    every operand at the lower rank, so each join lets the search in from both sides)."""
    b = GraphBuilder()
    low = b.op("low", "Neg", [_gathered_from_a_list_that_starts_empty(b)], shape=[3])
    b.op("join", "AddV2", [low, "f:round"], shape=[3])  # reads "round", added below
    b.function(b.root, [_transpose(b, b.op("round", "Neg", ["f:join"], shape=[3]))])
    (write,) = tensor_lists.growing_writes(b.build())
    assert write.kind == "empty" and write.fails is not None and write.fails["name"] == "transpose"


def test_the_search_for_an_op_that_needs_a_lost_rank_reads_each_op_once_where_paths_join(monkeypatch):
    """A ladder of diamonds after the gather (2**16 paths down it): each op's readers are looked at once, and the
    op that needs the rank, read from the first diamond's second side, is found after the whole ladder."""
    b = GraphBuilder()
    level = _gathered_from_a_list_that_starts_empty(b)
    ladder = []
    for step in range(16):
        sides = [b.op(f"neg{step}", "Neg", [level], shape=[3]), b.op(f"exp{step}", "Exp", [level], shape=[3])]
        level = b.op(f"join{step}", "AddV2", sides, shape=[3])
        ladder += [*sides, level]
    b.function(b.root, [level, _transpose(b, "f:exp0")])
    graph = b.build()
    read: Counter[str] = Counter()
    consumers = graph.consumers
    monkeypatch.setattr(graph, "consumers", lambda node_id: read.update([node_id]) or consumers(node_id))
    (write,) = tensor_lists.growing_writes(graph)
    assert write.fails is not None and write.fails["name"] == "transpose"
    assert {read[node_id] for node_id in ladder} == {1}


LSTM = {"name": "lstm", "class": "LSTM", "file": "/src/model.py", "line": 12, "devices": ["gpu"]}
AUGMENT = {"name": "flip", "class": "RandomFlip", "file": "/src/model.py", "line": 9, "devices": ["cpu", "gpu"]}


@pytest.mark.parametrize("device, expected", [
    ("gpu", [("XLA301", ("/src/model.py", 9), "RandomFlip"), ("XLA301", ("/src/model.py", 12), "LSTM")]),
    ("cpu", [("XLA301", ("/src/model.py", 9), "RandomFlip")]),  # the LSTM runs without cuDNN on a CPU
])
def test_keras_layers_without_xla_one_finding_per_construction_line(device, expected):
    inner = {**AUGMENT, "name": "flip_inner"}  # a nested layer built on the same line: no second finding
    ctx = Context(load_support("2.21.0"), device, "model", kind="keras-model", keras_layers=(AUGMENT, inner, LSTM))
    found = sorted((h.code, h.site, h.api) for h in run_checks(GraphBuilder().build(), ctx))
    assert found == expected
