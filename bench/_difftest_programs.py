"""Small TensorFlow programs for the differential tester (bench/difftest.py), drawn from a seed.

A program is a few independent *steps*, each one op of ``OPS`` applied to one argument of the
case function, wrapped in one ``TEMPLATES`` form (plain, a while loop, a cond, a nested
tf.function, a helper, a GradientTape, a TensorArray, a variable update, map_fn, switch_case).
Steps are independent, so a program stays valid when steps are removed: that is what the
minimiser relies on. ``render`` writes a program as a user file in the corpus format (one
module-level ``case`` with an ``input_signature``), every step on a line of its own, so a
finding's line names its step.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Callable

import _difftest_scripts as scripts
from _difftest_families import (ALL, COMPLEX, COMPLEX_OPS, FLOATS, INTS, NUMERIC, RANDOM_OPS, STRING_OPS, Op,
                                nested_loops, tensor_list)

OPS: tuple[Op, ...] = (
    Op("abs", "tf.abs({x})"),
    Op("square", "tf.square({x})"),
    Op("sqrt", "tf.sqrt({x})", FLOATS),
    Op("exp", "tf.exp({x})", FLOATS + ("complex64",)),
    Op("negative", "tf.negative({x})"),
    Op("maximum", "tf.maximum({x}, {x})"),
    Op("logical_not", "tf.logical_not({x})", ("bool",)),
    Op("cast_to_float", "tf.cast({x}, tf.float32)", ALL),
    Op("reduce_sum", "tf.reduce_sum({x}, axis=0)", NUMERIC + ("complex64",)),
    Op("reduce_max", "tf.reduce_max({x}, axis=1)"),
    Op("reduce_prod", "tf.reduce_prod({x})"),
    Op("argmax", "tf.argmax({x}, axis=-1)"),
    Op("cumsum", "tf.cumsum({x}, axis=0)", NUMERIC + ("complex64",)),
    Op("cumprod", "tf.math.cumprod({x}, axis=1)"),
    Op("sort", "tf.sort({x}, axis=-1)"),
    Op("argsort", "tf.argsort({x}, axis=0)"),
    Op("top_k", "tf.math.top_k({x}, k=2).values"),
    Op("matmul", "tf.matmul({x}, {x}, transpose_b=True)", ("float32", "float64", "float16", "int32", "int64",
                                                         "complex64")),
    Op("transpose", "tf.transpose({x})", ALL),
    Op("reverse", "tf.reverse({x}, axis=[0])", ALL),
    Op("roll", "tf.roll({x}, shift=1, axis=0)", ALL),
    Op("tile", "tf.tile({x}, [2, 1])", ALL),
    Op("concat", "tf.concat([{x}, {x}], axis=0)", ALL),
    Op("pad", "tf.pad({x}, [[1, 1], [0, 0]])", NUMERIC + ("bool",)),
    Op("reshape_flat", "tf.reshape({x}, [-1])", ALL),
    Op("gather", "tf.gather({x}, [1, 0])", ALL),
    Op("one_hot", "tf.one_hot(tf.cast({x}, tf.int32), 3)", NUMERIC),
    Op("clip", "tf.clip_by_value({x}, 0, 1)", NUMERIC),
    Op("where_select", "tf.where({x} > 0, {x}, tf.zeros_like({x}))", NUMERIC),
    Op("where_indices", "tf.where({x} > 0)", NUMERIC),
    Op("boolean_mask", "tf.boolean_mask({x}, {x} > 0)", NUMERIC),
    Op("unique", "tf.unique(tf.reshape({x}, [-1]))[0]", NUMERIC),
    Op("bincount", "tf.math.bincount(tf.cast(tf.abs({x}), tf.int32))", NUMERIC),
    Op("segment_sum", "tf.math.segment_sum({x}, tf.constant([0, 0, 1, 1]))", NUMERIC),
    Op("unsorted_segment_sum", "tf.math.unsorted_segment_sum({x}, tf.constant([0, 1, 0, 1]), 2)", NUMERIC),
    Op("histogram", "tf.histogram_fixed_width(tf.cast({x}, tf.float32), [-1.0, 1.0], nbins=4)", NUMERIC),
    Op("searchsorted", "tf.searchsorted(tf.sort({x}, axis=-1), {x})", NUMERIC),
    Op("as_string", "tf.strings.as_string({x})", ("float32", "int32", "int64", "bool"), "string"),
    Op("numpy_function", "tf.numpy_function(lambda a: a, [{x}], {x}.dtype)", ALL),
    Op("print", "tf.print({x})", ALL, "none"),
    Op("random_shuffle", "tf.random.shuffle({x})", ALL),
    Op("stateless_normal", "{x} + tf.cast(tf.random.stateless_normal(tf.shape({x}), [1, 2]), {x}.dtype)", FLOATS),
    Op("linalg_inv", "tf.linalg.inv(tf.matmul({x}, {x}, transpose_a=True) + tf.eye(3, dtype={x}.dtype))",
       ("float32", "float64")),
    Op("fft", "tf.signal.fft({x})", ("complex64",)),
    Op("check_numerics", "tf.debugging.check_numerics({x}, 'bad')", FLOATS),
    Op("floormod", "tf.math.floormod({x}, tf.ones_like({x}) + tf.ones_like({x}))", NUMERIC),
    Op("floordiv", "tf.math.floordiv({x}, tf.ones_like({x}))", NUMERIC),
    Op("round", "tf.round({x})", FLOATS),
    Op("sign", "tf.sign({x})", NUMERIC + COMPLEX),
    Op("pow", "tf.pow({x}, tf.ones_like({x}))", NUMERIC + COMPLEX),
    Op("erf", "tf.math.erf({x})", FLOATS),
    Op("lgamma", "tf.math.lgamma({x})", FLOATS),
    Op("digamma", "tf.math.digamma({x})", FLOATS),
    Op("igamma", "tf.math.igamma(tf.abs({x}) + 1, tf.abs({x}))", FLOATS),
    Op("xlogy", "tf.math.xlogy({x}, tf.abs({x}) + 1)", FLOATS + COMPLEX),
    Op("atan2", "tf.math.atan2({x}, {x})", FLOATS),
    Op("real", "tf.math.real({x})", COMPLEX),
    Op("conj", "tf.math.conj({x})", COMPLEX),
    Op("bitwise_and", "tf.bitwise.bitwise_and({x}, {x})", INTS),
    Op("left_shift", "tf.bitwise.left_shift({x}, tf.ones_like({x}))", INTS),
    Op("einsum", "tf.einsum('ij,kj->ik', {x}, {x})", FLOATS + ("int32", "int64") + COMPLEX),
    Op("matrix_diag", "tf.linalg.diag({x})", ALL),
    Op("band_part", "tf.linalg.band_part(tf.matmul({x}, {x}, transpose_a=True), 0, -1)", FLOATS + ("int32",)),
    Op("conv1d", "tf.nn.conv1d(tf.expand_dims({x}, 0), tf.ones([1, 3, 2], {x}.dtype), 1, 'SAME')",
       FLOATS + ("int32",)),
    Op("resize", "tf.image.resize(tf.expand_dims(tf.expand_dims({x}, -1), 0), [8, 6])", NUMERIC),
    Op("reduce_all", "tf.reduce_all({x}, axis=0)", ("bool",)),
    Op("cumsum_reverse", "tf.cumsum({x}, axis=1, exclusive=True, reverse=True)", NUMERIC),
    Op("squared_difference", "tf.math.squared_difference({x}, {x})", NUMERIC + COMPLEX),
    Op("is_finite", "tf.math.is_finite({x})", FLOATS),
    Op("softmax", "tf.nn.softmax({x})", FLOATS),
    Op("l2_normalize", "tf.math.l2_normalize({x}, axis=-1)", FLOATS),
    Op("range_like", "tf.range(tf.shape({x})[0])", ALL),
    Op("zeros_like", "tf.zeros_like({x})", ALL),
    Op("dynamic_partition", "tf.dynamic_partition({x}, tf.constant([0, 1, 0, 1]), 2)[0]", ALL),
    Op("scatter_nd", "tf.scatter_nd([[0], [2]], {x}[:2], [5, 3])", NUMERIC + COMPLEX),
    Op("tensor_scatter_add", "tf.tensor_scatter_nd_add({x}, [[1]], {x}[:1])", NUMERIC + COMPLEX),
    # sizes from shapes and from data: compile-time constants, bounded dynamic sizes
    Op("zeros_from_shape", "tf.zeros([tf.shape({x})[0], 2], {x}.dtype)", ALL),
    Op("reshape_from_shape", "tf.reshape({x}, [tf.shape({x})[0] * 3])", ALL),
    Op("mask_then_reshape", "tf.reshape(tf.boolean_mask({x}, {x} > 0), [-1, 1])", NUMERIC),
    Op("mask_then_mean", "tf.reduce_mean(tf.boolean_mask({x}, {x} > 0))", FLOATS),
    Op("unique_then_cumsum", "tf.cumsum(tf.unique(tf.reshape({x}, [-1]))[0])", NUMERIC),
    Op("where_then_gather", "tf.gather_nd({x}, tf.where({x} > 0))", NUMERIC),
    Op("one_hot_depth_from_data", "tf.one_hot([0, 1], tf.cast(tf.reduce_max(tf.abs({x})), tf.int32) + 1)",
       ("float32", "int32", "int64")),
    Op("range_from_data", "tf.range(tf.cast(tf.reduce_sum(tf.abs({x})), tf.int32))", ("float32", "int32")),
    Op("random_uniform_shape", "tf.random.uniform(tf.shape({x}))", ALL),
    Op("top_k_from_shape", "tf.math.top_k({x}, k=tf.shape({x})[1] - 1).values", NUMERIC),
    Op("slice_from_data", "tf.slice({x}, [0, 0], [tf.cast(tf.reduce_max(tf.abs({x})), tf.int32) % 2 + 1, 2])",
       ("float32", "int32")),
    Op("repeat_tensor", "tf.repeat({x}, tf.constant([1, 2, 1, 1]), axis=0)", ALL),
    Op("repeat_from_data", "tf.repeat({x}, tf.cast(tf.abs({x}[:, 0]) % 2 + 1, tf.int32), axis=0)",
       ("float32", "int32")),
    Op("sequence_mask", "tf.sequence_mask(tf.constant([1, 3]), tf.shape({x})[1])", ALL),
    Op("fill_from_data", "tf.fill([tf.cast(tf.reduce_max(tf.abs({x})), tf.int32) % 3 + 1], 1.0)", ("float32", "int32")),
)
OPS_BY_NAME = {op.name: op for op in OPS + RANDOM_OPS + COMPLEX_OPS + STRING_OPS + scripts.MODEL_LAYERS}


@dataclass(frozen=True)
class Wrapper:
    """How a wrapper writes one step: lines of ``case``'s body (``value``: for a step whose result is
    returned; ``statement``: for one that returns nothing, by default ``value``) and module-level lines
    (``pre``: per step; ``shared``: once per program). Fields: ``{x}`` the argument, ``{y}`` the result,
    ``{call}`` the op's call, ``{row}`` its call on one row, ``{i}`` the step's index, ``{assign}``
    ``"{y} = "`` and ``{ret}`` ``"return "`` (both empty for a statement)."""

    value: tuple[str, ...]
    statement: tuple[str, ...] | None = None
    pre: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()


_LOOP = ("i = tf.constant(0)", "while i < 2:", "    {assign}{call}", "    i += 1")
_TAPE = ("with tf.GradientTape() as tape:", "    tape.watch({x})", "    {assign}{call}")
TEMPLATES: dict[str, Wrapper] = {
    "plain": Wrapper(("{assign}{call}",)),
    # the loop variable is defined before the loop, as AutoGraph wants
    "while": Wrapper(("{y} = {call}",) + _LOOP, _LOOP),
    "cond": Wrapper(("if tf.reduce_sum(tf.cast({x}, tf.float32)) > 0:", "    {assign}{call}", "else:",
                     "    {assign}{call}")),
    "nested": Wrapper(("{assign}inner{i}({x})",),
                      pre=("", "", "@tf.function", "def inner{i}({x}):", "    {ret}{call}")),
    # a plain Python function: its ops are made at its line
    "helper": Wrapper(("{assign}helper{i}({x})",), pre=("", "", "def helper{i}({x}):", "    {ret}{call}")),
    "gradient": Wrapper(_TAPE + ("{y} = tape.gradient(tf.reduce_sum(tf.cast({y}, tf.float32)), {x})",), _TAPE),
    "tensorarray": Wrapper(("{y} = {call}", "ta{i} = tf.TensorArray({y}.dtype, size=2)",
                            "ta{i} = ta{i}.write(0, {y}).write(1, {y})", "{y} = ta{i}.stack()"), ("{call}",)),
    "variable": Wrapper(("counter.assign_add(1)", "{assign}{call}"), shared=("", "counter = tf.Variable(0)")),
    # the op on each row (an op that changes the dtype makes an invalid program)
    "map_fn": Wrapper(("{y} = tf.map_fn(lambda row: {row}, {x})",), ("{call}",)),
    "switch_case": Wrapper(("{y} = tf.switch_case(tf.cast(tf.size({x}) % 2, tf.int32), "
                            "[lambda: {call}, lambda: {call}])",), ("{call}",)),
}
WRAPPERS = tuple(TEMPLATES)  # drawn in this order: a seed's programs depend on it
# a branch on the argument's size: the core cond casts the argument, which a string cannot be
TEMPLATES["cond_on_size"] = Wrapper(("if tf.size({x}) > 4:", "    {assign}{call}", "else:", "    {assign}{call}"))
SHAPES = ("[4, 3]", "[None, 3]")


@dataclass(frozen=True)
class Family:
    """A kind of program: the calls its steps are drawn from (a table, or a block maker), its wrappers and
    the tag in its programs' names; ``script``: a whole script drawn by bench/_difftest_scripts.py."""

    tag: str
    table: tuple[Op, ...] = ()
    make: Callable[[random.Random], Op] | None = None
    wrappers: tuple[str, ...] = WRAPPERS
    script: bool = False


_BLOCK_WRAPPERS = tuple(w for w in WRAPPERS if w != "map_fn")  # a block reads a [n, 3] argument, not a row
FAMILIES: dict[str, Family] = {
    "core": Family("", OPS),
    "tensor_list": Family("tl", make=tensor_list, wrappers=_BLOCK_WRAPPERS),
    "nested_loop": Family("loop", make=nested_loops, wrappers=_BLOCK_WRAPPERS),
    "random": Family("rand", RANDOM_OPS),
    "complex": Family("cplx", COMPLEX_OPS),
    "string": Family("str", STRING_OPS, wrappers=tuple(w for w in WRAPPERS if w not in ("cond", "gradient"))
                     + ("cond_on_size",)),
    "distribute": Family("dist", script=True),
    "wrapper": Family("wrap", script=True),
    "preprocessing": Family("prep", script=True),
}


@dataclass(frozen=True)
class Step:
    op: str
    arg: int  # which argument of ``case`` it reads
    block: Op | None = None  # a drawn block (its name is ``op``); None: ``op`` names a table entry

    @property
    def call(self) -> Op:
        return self.block or OPS_BY_NAME[self.op]


@dataclass(frozen=True)
class Program:
    """A case: argument dtypes and shapes, steps, and one wrapper around all of them."""

    name: str
    dtypes: tuple[str, ...]
    shapes: tuple[str, ...]
    steps: tuple[Step, ...]
    wrapper: str = "plain"
    family: str = "core"
    frame: scripts.Frame | None = None  # a script family's choices around the steps

    def without_step(self, index: int) -> "Program":
        return replace(self, steps=self.steps[:index] + self.steps[index + 1:])


def draw(seed: int, index: int, ops: tuple[str, ...] | None = None, family: str = "core") -> Program:
    """The ``index``-th program of ``seed`` in ``family``: the same arguments always give the same program
    (the core family's programs are those of the seeds drawn before there were families)."""
    kind = FAMILIES[family]
    rng = random.Random(f"{seed}:{index}" if family == "core" else f"{seed}:{family}:{index}")
    if kind.script:
        frame, dtype, calls = scripts.draw(family, rng, OPS)
        steps = tuple(Step(op.name, 0, None if op.name in OPS_BY_NAME else op) for op in calls)
        return Program(f"p{seed}_{kind.tag}_{index}", (dtype,), ("",), steps, family=family, frame=frame)
    names = ops or tuple(op.name for op in kind.table)
    n_args = rng.randint(1, 2)
    chosen = [kind.make(rng) if kind.make else OPS_BY_NAME[rng.choice(names)] for _ in range(rng.randint(1, 3))]
    dtypes: list[str] = []
    steps: list[Step] = []
    for op in chosen:
        block = op if kind.make else None
        if len(dtypes) < n_args:
            dtypes.append(rng.choice(op.dtypes))
            steps.append(Step(op.name, len(dtypes) - 1, block))
        else:
            usable = [i for i, d in enumerate(dtypes) if d in op.dtypes]
            steps.append(Step(op.name, rng.choice(usable), block) if usable else Step(op.name, 0, block))
            if not usable:
                dtypes[0] = rng.choice(op.dtypes)
    shapes = tuple(rng.choice(SHAPES) for _ in dtypes)
    wrapper = rng.choice(kind.wrappers)
    if wrapper == "gradient" and not all(d in FLOATS for d in dtypes):
        wrapper = "plain"
    name = f"p{seed}_{kind.tag}_{index}" if kind.tag else f"p{seed}_{index}"
    return Program(name, tuple(dtypes), shapes, tuple(steps), wrapper, family)


def _body(program: Program) -> tuple[list[str], list[str]]:
    """(module-level lines before ``case``, the lines of ``case``'s body) for the program's wrapper."""
    wrapper = TEMPLATES[program.wrapper]
    pre: list[str] = list(wrapper.shared)
    body: list[str] = []
    results: list[str] = []
    for i, step in enumerate(program.steps):
        op, name = step.call, f"y{i}"
        pre += [line for line in op.module if line not in pre]
        expr = op.expr
        if op.block:
            pre += ["", "", f"def block{i}(x):", *(f"    {line}" for line in op.block)]
            expr = f"block{i}({{x}})"
        keep = op.output != "none"
        fields = {"x": f"x{step.arg}", "y": name, "call": expr.format(x=f"x{step.arg}"),
                  "row": expr.format(x="row"), "i": i, "assign": f"{name} = " if keep else "",
                  "ret": "return " if keep else ""}
        lines = wrapper.value if keep or wrapper.statement is None else wrapper.statement
        pre += [line.format(**fields) for line in wrapper.pre]
        body += [line.format(**fields) for line in lines]
        if keep:
            results.append(name)
    body.append(f"return {', '.join(results)}" if results else "return tf.constant(0)")
    return pre, body


def describe(program: Program) -> str:
    steps = "; ".join(f"{s.op}(x{s.arg})" for s in program.steps) or "nothing"
    if program.frame:
        return f"{program.family} script {program.frame.name}; steps: {steps}"
    return f"{program.wrapper} wrapper; steps: {steps}"


def render(program: Program, docstring: str | None = None) -> str:
    """The program as a corpus-shaped user file, or a script (``docstring``: its text, by default what it is)."""
    text = docstring or f"Generated by bench/difftest.py: {describe(program)}."
    if program.frame:
        return scripts.render(program.frame, [step.call for step in program.steps], text)
    pre, body = _body(program)
    specs = ", ".join(f"tf.TensorSpec({shape}, tf.{dtype})" for dtype, shape in zip(program.dtypes, program.shapes))
    args = ", ".join(f"x{i}" for i in range(len(program.dtypes)))
    lines = [f'"""{text}"""', "",
             "import tensorflow as tf", *pre, "", "",
             f"@tf.function(input_signature=[{specs}])", f"def case({args}):", *(f"    {l}" for l in body), ""]
    return "\n".join(lines)
