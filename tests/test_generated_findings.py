"""What the differential tester's new program families (bench/_difftest_families.py) found, each reduced to
a small user file that xlalint and the real XLA compiler judge: the compiler compiles and runs it (on CPU),
compares with TensorFlow without XLA, and xlalint must report an error exactly when XLA fails or returns
another result, and, where XLA fails, name the compiler's line (``# compiler``) as a finding's place or as
one of its related locations."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import tensorflow as tf

import groundtruth as gt
from helpers import REPO, run_json
from xlalint.backend.op_stack import created_at

sys.path.insert(0, str(REPO / "bench"))
import agreement  # noqa: E402 - bench/agreement.py: the op a compiler message names
import difftest  # noqa: E402 - bench/difftest.py: the line of an op the message names by its node only

pytestmark = pytest.mark.tf  # the compiler's side needs TensorFlow

HEAD = "import tensorflow as tf\n\n"
SIGNATURE = "@tf.function(input_signature=[tf.TensorSpec({shape}, tf.{dtype})])\ndef case(x):\n"

# name: (what XLA does: fails, differs, compiles, or runs (compiles; random outputs are not compared), the error
# codes xlalint must report, argument shape, dtype, body of case)
CASES: dict[str, tuple[str, set[str], str, str, str]] = {
    # loops: a body compiled once for the shapes its variables enter with
    "loop_cut_under_invariants": ("fails", {"XLA105"}, "[4, 3]", "float32", """\
    v = x
    i = tf.constant(0)
    while i < 2:  # compiler
        tf.autograph.experimental.set_loop_options(shape_invariants=[(v, tf.TensorShape([None, 3]))])
        v = v[1:]
        i += 1
    return v
"""),
    "loop_cut_of_unknown_dimension": ("fails", {"XLA105"}, "[None, 3]", "float32", """\
    v = x
    for i in tf.range(2):
        v = v[1:]
    return v
"""),
    "loop_grown_by_an_argument_of_unknown_size": ("fails", {"XLA105"}, "[None, 3]", "float32", """\
    v = x
    i = tf.constant(0)
    while i < 2:  # compiler
        tf.autograph.experimental.set_loop_options(shape_invariants=[(v, tf.TensorShape([None, 3]))])
        v = tf.concat([v, x], 0)
        i += 1
    return v
"""),
    "loop_appends_all_but_two_rows": ("fails", {"XLA105"}, "[None, 3]", "float32", """\
    v = x
    for i in tf.range(2):
        v = tf.concat([v, x[2:]], 0)
    return v
"""),
    "inner_loop_inside_outer_loop": ("fails", {"XLA105"}, "[4, 3]", "float32", """\
    v = x
    i = tf.constant(0)
    while i < 2:
        w = x
        for j in tf.range(2):  # compiler
            tf.autograph.experimental.set_loop_options(shape_invariants=[(w, tf.TensorShape([None, 3]))])
            w = tf.concat([w, w[:1]], 0)
        v = v + tf.reduce_sum(w, 0)
        i += 1
    return v
"""),
    "inner_loop_keeps_its_shape_as_the_value_grows_outside": ("compiles", set(), "[4, 3]", "float32", """\
    v = x
    for _ in range(2):
        v = tf.concat([v, v[:1]], 0)
        i = tf.constant(0)
        while i < 2:
            v = v + v
            i += 1
    return v
"""),
    # random ops: what TensorFlow folds before XLA sees it
    "stateless_gamma_of_an_argument_shape": ("compiles", set(), "[None, 3]", "float32", """\
    return tf.raw_ops.StatelessRandomGammaV2(shape=tf.shape(x), seed=[1, 2], alpha=1.0)
"""),
    "stateless_gamma_in_a_loop_body": ("compiles", set(), "[None, 3]", "float32", """\
    y = x
    i = tf.constant(0)
    while i < 2:
        y = tf.raw_ops.StatelessRandomGammaV2(shape=tf.shape(x), seed=[1, 2], alpha=1.0)
        i += 1
    return y
"""),
    "stateless_gamma_into_a_loop": ("fails", {"XLA001"}, "[4, 3]", "float32", """\
    y = tf.raw_ops.StatelessRandomGammaV2(shape=tf.shape(x), seed=[1, 2], alpha=1.0)  # compiler
    i = tf.constant(0)
    while i < 2:
        y = y * 2
        i += 1
    return y
"""),
    "stateless_gamma_from_a_key_and_counter": ("fails", {"XLA001"}, "[4, 3]", "float32", """\
    return tf.random.stateless_gamma(tf.shape(x), seed=[1, 2], alpha=1.0)  # compiler
"""),
    "integer_draw_into_a_loop": ("fails", {"XLA001"}, "[4, 3]", "float32", """\
    y = tf.random.stateless_binomial(tf.shape(x), seed=[1, 2], counts=5.0, probs=0.5)  # compiler
    i = tf.constant(0)
    while i < 2:
        y = y + 1
        i += 1
    return y
"""),
    "normal_v2_with_its_derived_algorithm": ("compiles", set(), "[4, 3]", "float32", """\
    key, counter, alg = tf.raw_ops.StatelessRandomGetKeyCounterAlg(seed=[1, 2])
    return tf.raw_ops.StatelessRandomNormalV2(shape=tf.shape(x), key=key, counter=counter, alg=alg)
"""),
    # found by the script families: a shape read is folded only where XLA knows the value's dimensions, and a
    # folded value only where an op TensorFlow does not fold reads it
    "shape_of_a_variable_product_of_static_size": ("runs", set(), "[4, 3]", "float32", """\
    return tf.random.stateless_poisson(tf.shape(x * WEIGHT), seed=[1, 2], lam=2.0)
"""),
    "poisson_of_constants_summed_into_an_unused_loss": ("compiles", set(), "[4, 3]", "float32", """\
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.raw_ops.StatelessRandomPoisson(shape=[4, 3], seed=[1, 2], lam=2.0, dtype=tf.float32)
        loss = tf.reduce_sum(x) + tf.reduce_sum(y)
    return tape.gradient(loss, x)
"""),
    "poisson_of_constants_read_by_a_gradient_of_none": ("fails", {"XLA001"}, "[4, 3]", "float32", """\
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.raw_ops.StatelessRandomPoisson(shape=[4, 3], seed=[1, 2], lam=2.0, dtype=tf.float32)  # compiler
    gradient = tape.gradient(tf.reduce_sum(y), x)
    return x * 2 if gradient is None else gradient
"""),
    "shuffle_of_a_rank_one_float": ("fails", {"XLA002"}, "[12]", "float32", """\
    return tf.random.shuffle(x)
"""),
    "shuffle_of_a_rank_two_float": ("runs", set(), "[4, 3]", "float32", """\
    return tf.random.shuffle(x)
"""),
    # strings
    "string_result_made_from_constants": ("fails", {"XLA002"}, "[None, 3]", "int32", """\
    return tf.strings.as_string(tf.shape(x))
"""),
    "string_result_of_a_nested_function": ("fails", {"XLA002"}, "[None, 3]", "int32", """\
    return inner(x)
"""),
    "string_argument_passed_to_a_nested_function": ("fails", {"XLA002"}, "[4, 3]", "string", """\
    return inner(x)
"""),
    "lookup_table_in_a_cond": ("fails", {"XLA001"}, "[4, 3]", "float32", """\
    if tf.size(x) > 4:  # compiler
        y = TABLE.lookup(tf.constant(["text", "x"])) + tf.size(x)
    else:
        y = tf.constant([0, 0])
    return y
"""),
    # tensor lists
    "bounded_empty_list_written_within_its_slots": ("compiles", set(), "[4, 3]", "float32", """\
    tl = tf.raw_ops.EmptyTensorList(element_shape=tf.constant([3]), max_num_elements=8, element_dtype=x.dtype)
    for i in tf.range(4):
        tl = tf.raw_ops.TensorListSetItem(input_handle=tl, index=i, item=x[i], resize_if_index_out_of_bounds=True)
    return tf.raw_ops.TensorListGather(input_handle=tl, indices=[0, 3], element_shape=tf.constant([3]),
                                       element_dtype=x.dtype)
"""),
    "push_onto_a_list_made_from_a_tensor": ("differs", {"XLA201"}, "[4, 3]", "float32", """\
    tl = tf.raw_ops.TensorListFromTensor(tensor=x, element_shape=tf.constant([3]))
    for i in tf.range(2):
        tl = tf.raw_ops.TensorListPushBack(input_handle=tl, tensor=x[i] + 1)
    return tf.raw_ops.TensorListStack(input_handle=tl, element_shape=tf.constant([3]), element_dtype=x.dtype)
"""),
    "array_grown_in_a_loop_and_never_read": ("compiles", set(), "[4, 3]", "float32", """\
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    i = tf.constant(0)
    while i < 3:
        ta = ta.write(i, x[0])
        i += 1
    return x * 2
"""),
    "gradient_through_a_gather_of_an_array_that_starts_empty": ("fails", {"XLA201"}, "[4, 3]", "float32", """\
    with tf.GradientTape() as tape:
        tape.watch(x)
        ta = tf.TensorArray(x.dtype, size=0, dynamic_size=True)
        ta = ta.write(0, x[0])
        y = ta.gather([0])
    gradient = tape.gradient(tf.reduce_sum(y), x)  # compiler
    return x * 2 if gradient is None else gradient
"""),
    "unused_read_of_an_array_that_starts_empty": ("fails", {"XLA201"}, "[4, 3]", "float32", """\
    ta = tf.TensorArray(x.dtype, size=0, dynamic_size=True)
    for i in tf.range(2):
        ta = ta.write(i, x[i])
    first = ta.read(0)  # compiler
    return x * 2
"""),
    "unused_gather_of_an_array_that_starts_empty_summed_over_rows": ("compiles", set(), "[4, 3]", "float32", """\
    ta = tf.TensorArray(x.dtype, size=0, dynamic_size=True)
    for i in tf.range(2):
        ta = ta.write(i, x[i])
    rows = tf.reduce_sum(ta.gather([0, 1]), 0)
    return x * 2
"""),
    "read_of_an_array_that_starts_empty_in_a_cond": ("fails", {"XLA201"}, "[4, 3]", "float32", """\
    if tf.reduce_sum(x) > 0:  # compiler
        ta = tf.TensorArray(x.dtype, size=0, dynamic_size=True, element_shape=[3])
        for i in tf.range(2):
            ta = ta.write(i, x[i])
        y = ta.read(ta.size() - 1)
    else:
        y = x[0]
    return y
"""),
    "unused_read_of_an_array_never_written": ("fails", {"XLA201"}, "[4, 3]", "float32", """\
    ta = tf.TensorArray(x.dtype, size=0, dynamic_size=True)
    first = ta.read(0)  # compiler
    return x * 2
"""),
    "unused_stack_of_an_array_never_written_with_its_element_shape": ("compiles", set(), "[4, 3]", "float32", """\
    ta = tf.TensorArray(x.dtype, size=0, dynamic_size=True, element_shape=[3])
    rows = ta.stack()
    return x * 2
"""),
    "length_after_pop_that_no_result_needs": ("compiles", set(), "[4, 3]", "float32", """\
    with tf.GradientTape() as tape:
        tape.watch(x)
        tl = tf.raw_ops.TensorListFromTensor(tensor=x, element_shape=tf.constant([3]))
        tl, _ = tf.raw_ops.TensorListPopBack(input_handle=tl, element_shape=tf.constant([3]), element_dtype=x.dtype)
        n = tf.raw_ops.TensorListLength(input_handle=tl)
    gradient = tape.gradient(tf.cast(n, tf.float32), x)  # None: the length is not differentiable
    return x * 2 if gradient is None else gradient
"""),
}
WEIGHT = "WEIGHT = tf.Variable(tf.ones([3]))\n\n\n"
MODULE_LEVEL = {"shape_of_a_variable_product_of_static_size": WEIGHT,
                "string_argument_passed_to_a_nested_function":
                "@tf.function\ndef inner(s):\n    return tf.zeros([2])\n\n\n",
                "lookup_table_in_a_cond":
                "TABLE = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(['text'], [1]), -1)\n\n\n",
                "string_result_of_a_nested_function":
                "@tf.function\ndef inner(n):\n    return tf.strings.as_string(tf.shape(n))\n\n\n"}


def _source(name: str) -> str:
    _, _, shape, dtype, body = CASES[name]
    return HEAD + MODULE_LEVEL.get(name, "") + SIGNATURE.format(shape=shape, dtype=dtype) + body


@pytest.fixture(scope="module")
def judged(tmp_path_factory) -> dict[str, tuple[str, list[dict], int | None, int | None]]:
    """Each case: (what the compiler did, xlalint's error findings, the line the compiler names, the line
    marked ``# compiler``)."""
    folder = tmp_path_factory.mktemp("generated")
    paths = {}
    for name in CASES:
        paths[name] = folder / f"{name}.py"
        paths[name].write_text(_source(name), encoding="utf-8")
    report, _ = run_json(str(folder), "--device", "cpu", "--no-cache")
    results = {}
    for name, path in paths.items():
        fn = gt.entries(gt.load_module(path))["case"]
        failed, line = _failure(fn, str(path.resolve()))
        outcome = "fails" if failed else "runs" if CASES[name][0] == "runs" else \
            "differs" if gt.xla_result_differs(fn) else "compiles"
        errors = [f for f in report["findings"] if Path(f["path"]).name == path.name and f["severity"] == "error"]
        marked = [i for i, text in enumerate(path.read_text().splitlines(), 1) if re.search(r"#\s*compiler\b", text)]
        results[name] = (outcome, errors, line, marked[0] if marked else None)
    return results


def _failure(fn, path: str) -> tuple[bool, int | None]:
    """Whether XLA fails to compile or run ``fn`` on CPU, and the line of ``path`` it then names, read as the
    differential tester reads it."""
    args = gt.make_args(fn)
    jitted, concrete = tf.function(fn.python_function, jit_compile=True), None
    try:
        with tf.device("/CPU:0"):
            concrete = jitted.get_concrete_function(*args)
            jitted(*args)
    except Exception as error:  # the compiler's verdict is the point
        line = created_at(str(error), path)
        if line is None and concrete is not None:
            _, node = agreement._error_op(str(error), agreement._op_types(concrete))
            line = difftest._op_line(concrete, node, path)
        return True, line
    return False, None


@pytest.mark.parametrize("name", sorted(CASES))
def test_xlalint_and_the_compiler_agree(name, judged):
    outcome, errors, _, _ = judged[name]
    expected_outcome, codes, *_ = CASES[name]
    assert outcome == expected_outcome, "the compiler changed its answer: the case no longer shows the finding"
    assert {f["code"] for f in errors} == codes


@pytest.mark.parametrize("name", sorted(n for n, case in CASES.items() if case[0] == "fails"))
def test_the_compilers_line_is_among_the_findings_places(name, judged):
    _, errors, line, marked = judged[name]
    assert line == marked  # the compiler names the marked line, or none at all
    if marked is None:
        return
    places = {f["line"] for f in errors} | {r["line"] for f in errors for r in f["related"]}
    assert marked in places, (marked, places)


@pytest.mark.parametrize("value, fails", [("x * WEIGHT", True), ("x * 2.0", False)])
def test_a_shape_read_with_an_unknown_dimension_is_folded_unless_a_variable_makes_the_value(tmp_path, value, fails):
    """Compiled with its signature (the cases above are compiled for their arguments' shapes): XLA knows an
    argument's ``None`` dimension when it folds ``tf.shape``, not that of a value computed from a variable's."""
    path = tmp_path / "case.py"
    path.write_text(HEAD + WEIGHT + "@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([None, 3])])\n"
                    f"def case(x):\n    return tf.random.stateless_poisson(tf.shape({value}), seed=[1, 2], lam=2.0)\n",
                    encoding="utf-8")
    fn = gt.entries(gt.load_module(path))["case"]
    try:
        with tf.device("/CPU:0"):
            fn(*gt.make_args(fn))
        failed = False
    except tf.errors.InvalidArgumentError as error:
        failed = "StatelessRandomPoisson" in str(error)
    report, _ = run_json(str(path), "--device", "cpu", "--no-cache")
    assert failed is fails
    assert [f["op_type"] for f in report["findings"] if f["severity"] == "error"] == (
        ["StatelessRandomPoisson"] if fails else [])
