"""Issue 13 on hand-built graphs: constant folding, constant branch indices, nested loops, variable
writes, and the XLA203/XLA204 silent differences. No TensorFlow (their compiler checks run over
rules/XLA203 and rules/XLA204 in test_rules_against_compiler.py, and over fixtures/corpus in
bench/agreement.py)."""

from __future__ import annotations

from graph_builder import GraphBuilder, hits


def _string_of(b, source, function=None):
    text = b.op("as_string", "AsString", [source], dtype="string", shape=[], function=function)
    return b.op("length", "StringLength", [text], dtype="int32", shape=[], function=function)


def test_stateless_ops_on_constants_are_folded_stateful_ones_and_their_users_are_not():
    b = GraphBuilder()
    b.function(b.root, [_string_of(b, b.op("c", "Const", dtype="float32"))])
    assert hits(b.build()) == []
    b = GraphBuilder()
    box = b.op("box", "SampleDistortedBoundingBoxV2", [b.op("size", "Const", dtype="int32", shape=[3])],
               dtype="int32", shape=[3], stateful=True)
    _string_of(b, box)
    assert hits(b.build()) == [("XLA001", "as_string"), ("XLA001", "box"), ("XLA001", "length")]


def _case(b, index, op_type="StatelessCase", value=None):
    x = b.arg("x", shape=[4])
    b.arg("v", shape=[4], function="strings")
    _string_of(b, "strings:v", function="strings")
    b.function("strings", ["strings:length"])
    b.function("size", [b.op("n", "Const", dtype="int32", function="size")])
    calls = {"branches": ["size", "strings"]} if "Case" in op_type else {"then_branch": ["size"],
                                                                          "else_branch": ["strings"]}
    b.op("switch", op_type, [index, x], dtype="int32", calls=calls)
    graph = b.build()
    graph.node(index)["value"] = value
    return graph


def test_a_constant_case_index_prunes_the_other_branches_an_if_predicate_does_not():
    b = GraphBuilder()
    assert hits(_case(b, b.op("zero", "Const", dtype="int32"), value=[0])) == []
    b = GraphBuilder()  # out of range: the last branch
    assert hits(_case(b, b.op("minus_one", "Const", dtype="int32"), value=[-1])) == [("XLA001", "as_string"), ("XLA001", "length")]
    b = GraphBuilder()
    assert hits(_case(b, b.arg("i", dtype="int32"))) == [("XLA001", "as_string"), ("XLA001", "length")]
    b = GraphBuilder()
    pred = b.op("true", "Const", dtype="bool")
    assert hits(_case(b, pred, "StatelessIf", value=[True])) == [("XLA001", "as_string"), ("XLA001", "length")]


def _while(b, function, start, body, carried_body):
    loop = b.op(f"loop_{body}", "StatelessWhile", start, calls={"body": [body], "cond": ["cond"]},
                outputs=len(start), function=function)
    b.function(body, carried_body)
    return loop


def test_a_shape_carried_unchanged_through_nested_loops_is_constant():
    b = GraphBuilder()
    shape = b.op("shape", "Shape", [b.arg("x", shape=[4])], dtype="int32", shape=[1])
    _while(b, "f", [shape], "outer", ["outer:inner_out"])
    outer_shape = b.arg("s", dtype="int32", shape=[1], function="outer")
    inner = _while(b, "outer", [outer_shape], "inner", ["inner:s"])
    b.op("inner_out", "Identity", [(inner, 0)], dtype="int32", function="outer")
    inner_shape = b.arg("s", dtype="int32", shape=[1], function="inner")
    b.op("draw", "RandomStandardNormal", [inner_shape], args=["shape"], function="inner", stateful=True)
    assert hits(b.build()) == []


def _variable_read_as_shape(write_value=None, before=False):
    b = GraphBuilder()
    x = b.arg("x", shape=[8])
    n = b.arg("n", dtype="int32")
    handle = b.arg("handle", dtype="resource")  # a captured variable: after the arguments
    b.num_args = 2

    def write():
        value = b.op("two", "Const", dtype="int32") if write_value == "constant" else n
        b.op("assign", "AssignVariableOp", [handle, value], stateful=True)

    if write_value and not before:
        write()
    read = b.op("read", "ReadVariableOp", [handle], dtype="int32", stateful=True)
    b.op("Reshape", "Reshape", [x, read], args=["tensor", "shape"])
    if write_value and before:
        write()
    return hits(b.build())


def test_a_variable_written_before_it_is_read_as_a_shape_has_the_written_value():
    assert _variable_read_as_shape("argument") == [("XLA101", "Reshape")]
    assert _variable_read_as_shape("constant") == []
    assert _variable_read_as_shape("argument", before=True) == [("XLA102", "Reshape")]
    assert _variable_read_as_shape() == [("XLA102", "Reshape")]


def test_asserts_and_check_numerics_are_reported_as_dropped():
    b = GraphBuilder()
    x = b.arg("x", shape=[4])
    ok = b.op("positive", "Greater", [x, b.op("zero", "Const")], dtype="bool", shape=[4])
    b.op("Assert", "Assert", [ok, x], shape=[], outputs=0, stateful=True)
    b.op("CheckNumerics", "CheckNumerics", [x], shape=[4], stateful=True)
    assert hits(b.build()) == [("XLA203", "Assert"), ("XLA203", "CheckNumerics")]


def test_a_list_read_after_a_pop_is_reported_and_one_without_pops_is_not():
    b = GraphBuilder()
    rows = b.arg("rows", shape=[2, 3])
    made = b.op("made", "TensorListFromTensor", [rows], dtype="variant")
    popped = b.op("pop", "TensorListPopBack", [made], args=["input_handle"], dtype="variant", outputs=2)
    length = b.op("length", "TensorListLength", [(popped, 0)], dtype="int32")
    before = b.op("length_before", "TensorListLength", [made], dtype="int32")
    unread = b.op("length_unread", "TensorListLength", [(popped, 0)], dtype="int32")  # no result needs it
    b.function(b.root, [length, before])
    assert unread and hits(b.build()) == [("XLA204", "length")]


def _guarded_assert(b, predicate):
    """``tf.debugging.Assert`` as TensorFlow guards it: an If that runs the Assert in its else branch."""
    b.arg("p", dtype="bool", function="fails")
    b.op("assert", "Assert", ["fails:p"], function="fails")
    b.function("fails", [])
    b.function("passes", [])
    b.op("guard", "If", [predicate, predicate], calls={"then_branch": ["passes"], "else_branch": ["fails"]})
    return b.build()


def test_an_assert_a_constant_predicate_never_runs_is_not_reported():
    b = GraphBuilder()  # tf.image.rot90's guard: exactly one of three constant conditions holds
    flags = [b.op(f"is_{k}", "Const", dtype="bool", value=[k == 1]) for k in range(3)]
    packed = b.op("preds", "Pack", flags, dtype="bool", shape=[3])
    count = b.op("count", "Sum", [b.op("as_int", "Cast", [packed], dtype="int32", shape=[3]),
                                  b.const("axis", [0])], dtype="int32", shape=[])
    holds = b.op("holds", "LessEqual", [count, b.const("one", [1])], dtype="bool")
    assert hits(_guarded_assert(b, holds)) == []
    b = GraphBuilder()
    assert hits(_guarded_assert(b, b.op("false", "Const", dtype="bool", value=[0]))) == [("XLA203", "assert")]
    b = GraphBuilder()
    assert hits(_guarded_assert(b, b.arg("ok", dtype="bool"))) == [("XLA203", "assert")]
