"""The differential tester's program families beyond the core table (bench/_difftest_programs.py).

Three families are tables of one-line calls, written like the core ones: every random op of
``tf.random`` and ``tf.raw_ops`` (stateful and stateless, seeded and not), elementwise and reduction
ops over complex64/complex128, and string arguments and outputs. Two are *blocks*, drawn piece by
piece, each a module-level function of the case's argument ``x`` (a ``[n, 3]`` tensor): tensor lists
(``TensorArray`` and the raw ``TensorList`` ops: static or dynamic sizes, started empty, reserved or
from a tensor, filled unrolled or in one or two loops, then stacked, gathered, read, popped or
measured) and loops nested two and three deep (AutoGraph ``while``/``for``, ``tf.while_loop``, a
Python loop XLA sees unrolled), whose carried values keep, grow or shrink their shape, with or
without ``shape_invariants`` and ``maximum_iterations``. A block's name says every choice it made.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

FLOATS = ("float32", "float64", "float16", "bfloat16")
INTS = ("int32", "int64", "uint8", "int8", "int16", "uint16", "uint32", "uint64")
NUMERIC = FLOATS + INTS
COMPLEX = ("complex64", "complex128")
ALL = NUMERIC + ("bool",) + COMPLEX
STRING = ("string",)


@dataclass(frozen=True)
class Op:
    """One API call: ``expr`` with ``{x}`` for its input; ``dtypes`` it is tried on; the kind of its output.
    ``module``: module-level lines it needs (once per program); ``block``: the body of a module-level
    function of ``x`` that the step calls instead of ``expr``."""

    name: str
    expr: str
    dtypes: tuple[str, ...] = NUMERIC
    output: str = "numeric"  # numeric | string | none (a statement: nothing to return)
    module: tuple[str, ...] = ()
    block: tuple[str, ...] = ()


_SHAPE = "tf.shape({x})"
_SEED = "seed=[1, 2]"
_KEY = "tf.random.experimental.stateless_split([1, 2], 1)[0]"
_RAW_KEY = "*tf.raw_ops.StatelessRandomGetKeyCounter(seed=[1, 2])"
_LOGITS = "tf.cast({x}, tf.float32)"
_SAMPLER = "true_classes=tf.constant([[0], [1]], tf.int64), num_true=1, num_sampled=2, unique=True"
RANDOM_OPS: tuple[Op, ...] = (
    Op("r_uniform", f"tf.random.uniform({_SHAPE})", ALL),
    Op("r_uniform_seeded", f"tf.random.uniform({_SHAPE}, seed=7)", ALL),
    Op("r_uniform_int", f"tf.random.uniform({_SHAPE}, maxval=5, dtype=tf.int32)", ALL),
    Op("r_uniform_like", f"tf.random.uniform({_SHAPE}, dtype={{x}}.dtype)", FLOATS),
    Op("r_normal", f"{{x}} + tf.random.normal({_SHAPE}, dtype={{x}}.dtype)", FLOATS),
    Op("r_normal_seeded", f"tf.random.normal({_SHAPE}, seed=3)", ALL),
    Op("r_truncated_normal", f"tf.random.truncated_normal({_SHAPE}, seed=3)", ALL),
    Op("r_gamma", "tf.random.gamma([2], alpha=tf.abs({x}) + 1)", ("float32", "float64", "float16")),
    Op("r_poisson", "tf.random.poisson([2], lam=tf.abs({x}) + 1)", ("float32", "float64", "int32", "int64")),
    Op("r_categorical", f"tf.random.categorical({_LOGITS}, 2)", NUMERIC),
    Op("r_categorical_seeded", f"tf.random.categorical({_LOGITS}, 2, seed=5)", NUMERIC),
    Op("r_shuffle", "tf.random.shuffle({x})", ALL),
    Op("r_shuffle_seeded", "tf.random.shuffle({x}, seed=4)", ALL),
    Op("r_shuffle_row", "tf.random.shuffle({x}[0])", ALL),
    Op("r_shuffle_flat", "tf.random.shuffle(tf.reshape({x}, [-1]))", ALL),
    Op("r_global_seed", f"tf.random.uniform({_SHAPE})", ALL, module=("tf.random.set_seed(11)",)),
    Op("r_generator_normal", f"GEN.normal({_SHAPE})", ALL, module=("GEN = tf.random.Generator.from_seed(1)",)),
    Op("r_generator_uniform_int", f"GEN.uniform({_SHAPE}, maxval=5, dtype=tf.int32)", ALL,
       module=("GEN = tf.random.Generator.from_seed(1)",)),
    Op("r_generator_nondeterministic", f"GENND.uniform({_SHAPE})", ALL,
       module=("GENND = tf.random.Generator.from_non_deterministic_state()",)),
    Op("r_stateless_uniform", f"tf.random.stateless_uniform({_SHAPE}, {_SEED})", ALL),
    Op("r_stateless_uniform_int",
       f"tf.random.stateless_uniform({_SHAPE}, {_SEED}, minval=0, maxval=5, dtype=tf.int32)", ALL),
    Op("r_stateless_uniform_full_int", f"tf.random.stateless_uniform({_SHAPE}, {_SEED}, minval=None, dtype=tf.int64)",
       ALL),
    Op("r_stateless_normal", f"tf.random.stateless_normal({_SHAPE}, {_SEED}, dtype={{x}}.dtype)", FLOATS),
    Op("r_stateless_truncated_normal", f"tf.random.stateless_truncated_normal({_SHAPE}, {_SEED})", ALL),
    Op("r_stateless_categorical", f"tf.random.stateless_categorical({_LOGITS}, 2, {_SEED})", NUMERIC),
    Op("r_stateless_binomial", f"tf.random.stateless_binomial({_SHAPE}, {_SEED}, counts=5.0, probs=0.5)", ALL),
    Op("r_stateless_gamma", f"tf.random.stateless_gamma({_SHAPE}, {_SEED}, alpha=1.0)", ALL),
    Op("r_stateless_poisson", f"tf.random.stateless_poisson({_SHAPE}, {_SEED}, lam=2.0)", ALL),
    Op("r_stateless_param_truncated_normal",
       f"tf.random.stateless_parameterized_truncated_normal({_SHAPE}, {_SEED}, means=0.0, stddevs=1.0, "
       "minvals=-1.0, maxvals=1.0)", ALL),
    Op("r_stateless_shuffle", f"tf.random.experimental.stateless_shuffle({{x}}, {_SEED})", ALL),
    Op("r_stateless_seed_from_data",
       f"tf.random.stateless_uniform({_SHAPE}, tf.cast(tf.abs({{x}}[0, :2]), tf.int32))", NUMERIC),
    Op("r_stateless_split_key", f"tf.random.stateless_uniform({_SHAPE}, {_KEY})", ALL),
    Op("r_stateless_fold_in", f"tf.random.stateless_normal({_SHAPE}, tf.random.experimental.stateless_fold_in("
       "[1, 2], tf.size({x})))", ALL),
    Op("r_index_shuffle", "tf.random.experimental.index_shuffle(tf.size({x}), [1, 2, 3], 20)", ALL),
    Op("r_uniform_candidate_sampler", f"tf.random.uniform_candidate_sampler({_SAMPLER}, range_max=5)[0]", ALL),
    Op("r_log_uniform_candidate_sampler", f"tf.random.log_uniform_candidate_sampler({_SAMPLER}, range_max=5)[0]",
       ALL),
    Op("r_raw_random_uniform", f"tf.raw_ops.RandomUniform(shape={_SHAPE}, dtype=tf.float32)", ALL),
    Op("r_raw_random_uniform_seeded", f"tf.raw_ops.RandomUniform(shape={_SHAPE}, dtype=tf.float32, seed=1, seed2=2)",
       ALL),
    Op("r_raw_standard_normal", f"tf.raw_ops.RandomStandardNormal(shape={_SHAPE}, dtype={{x}}.dtype)", FLOATS),
    Op("r_raw_truncated_normal", f"tf.raw_ops.TruncatedNormal(shape={_SHAPE}, dtype=tf.float32)", ALL),
    Op("r_raw_uniform_int", f"tf.raw_ops.RandomUniformInt(shape={_SHAPE}, minval=0, maxval=5)", ALL),
    Op("r_raw_random_shuffle", "tf.raw_ops.RandomShuffle(value={x})", ALL),
    Op("r_raw_random_gamma", "tf.raw_ops.RandomGamma(shape=[2], alpha=tf.abs({x}) + 1)", ("float32", "float64")),
    Op("r_raw_random_poisson", "tf.raw_ops.RandomPoissonV2(shape=[2], rate=tf.abs({x}) + 1)",
       ("float32", "float64", "int32", "int64")),
    Op("r_raw_multinomial", f"tf.raw_ops.Multinomial(logits={_LOGITS}, num_samples=2)", NUMERIC),
    Op("r_raw_parameterized_truncated_normal", f"tf.raw_ops.ParameterizedTruncatedNormal(shape={_SHAPE}, "
       "means=0.0, stdevs=1.0, minvals=-1.0, maxvals=1.0)", ALL),
    Op("r_raw_nondeterministic_ints", f"tf.raw_ops.NonDeterministicInts(shape={_SHAPE})", ALL),
    Op("r_raw_stateless_uniform", f"tf.raw_ops.StatelessRandomUniform(shape={_SHAPE}, {_SEED})", ALL),
    Op("r_raw_stateless_normal", f"tf.raw_ops.StatelessRandomNormal(shape={_SHAPE}, {_SEED})", ALL),
    Op("r_raw_stateless_truncated_normal", f"tf.raw_ops.StatelessTruncatedNormal(shape={_SHAPE}, {_SEED})", ALL),
    Op("r_raw_stateless_uniform_int", f"tf.raw_ops.StatelessRandomUniformInt(shape={_SHAPE}, {_SEED}, "
       "minval=0, maxval=5)", ALL),
    Op("r_raw_stateless_multinomial", f"tf.raw_ops.StatelessMultinomial(logits={_LOGITS}, num_samples=2, "
       f"{_SEED})", NUMERIC),
    Op("r_raw_stateless_uniform_v2", f"tf.raw_ops.StatelessRandomUniformV2(shape={_SHAPE}, "
       "**dict(zip(('key', 'counter'), tf.raw_ops.StatelessRandomGetKeyCounter(seed=[1, 2]))), alg=1)", ALL),
    Op("r_raw_stateless_normal_v2", f"tf.raw_ops.StatelessRandomNormalV2(shape={_SHAPE}, "
       "**dict(zip(('key', 'counter', 'alg'), tf.raw_ops.StatelessRandomGetKeyCounterAlg(seed=[1, 2]))))", ALL),
    Op("r_raw_stateless_shuffle", "tf.raw_ops.StatelessShuffle(value={x}, **dict(zip(('key', 'counter', 'alg'), "
       "tf.raw_ops.StatelessRandomGetKeyCounterAlg(seed=[1, 2]))))", ALL),
    Op("r_raw_stateless_gamma", f"tf.raw_ops.StatelessRandomGammaV2(shape={_SHAPE}, {_SEED}, alpha=1.0)", ALL),
    Op("r_raw_stateless_poisson", f"tf.raw_ops.StatelessRandomPoisson(shape={_SHAPE}, {_SEED}, lam=2.0, "
       "dtype=tf.float32)", ALL),
    Op("r_raw_stateless_binomial", f"tf.raw_ops.StatelessRandomBinomial(shape={_SHAPE}, {_SEED}, counts=5.0, "
       "probs=0.5)", ALL),
    Op("r_raw_random_index_shuffle", "tf.raw_ops.RandomIndexShuffle(index=tf.size({x}), seed=[1, 2, 3], "
       "max_index=20)", ALL),
)

_C = COMPLEX
COMPLEX_OPS: tuple[Op, ...] = tuple(Op(f"c_{name}", expr, _C) for name, expr in (
    ("abs", "tf.abs({x})"), ("square", "tf.square({x})"), ("sqrt", "tf.sqrt({x})"), ("rsqrt", "tf.math.rsqrt({x})"),
    ("exp", "tf.exp({x})"), ("expm1", "tf.math.expm1({x})"), ("log", "tf.math.log({x})"),
    ("log1p", "tf.math.log1p({x})"), ("sin", "tf.sin({x})"), ("cos", "tf.cos({x})"), ("tan", "tf.tan({x})"),
    ("asin", "tf.asin({x})"), ("acos", "tf.acos({x})"), ("atan", "tf.atan({x})"), ("sinh", "tf.sinh({x})"),
    ("cosh", "tf.cosh({x})"), ("tanh", "tf.tanh({x})"), ("asinh", "tf.asinh({x})"), ("acosh", "tf.acosh({x})"),
    ("atanh", "tf.atanh({x})"), ("negative", "tf.negative({x})"), ("reciprocal", "tf.math.reciprocal({x})"),
    ("sign", "tf.sign({x})"), ("conj", "tf.math.conj({x})"), ("real", "tf.math.real({x})"),
    ("imag", "tf.math.imag({x})"), ("angle", "tf.math.angle({x})"), ("sigmoid", "tf.math.sigmoid({x})"),
    ("is_finite", "tf.math.is_finite(tf.math.real({x}))"), ("add", "{x} + {x}"), ("subtract", "{x} - {x}"),
    ("multiply", "{x} * {x}"), ("divide", "{x} / ({x} + 1)"), ("div_no_nan", "tf.math.divide_no_nan({x}, {x})"),
    ("mul_no_nan", "tf.math.multiply_no_nan({x}, {x})"), ("pow", "tf.pow({x}, {x})"),
    ("squared_difference", "tf.math.squared_difference({x}, {x})"), ("xlogy", "tf.math.xlogy({x}, {x})"),
    ("xdivy", "tf.math.xdivy({x}, {x})"), ("xlog1py", "tf.math.xlog1py({x}, {x})"), ("equal", "tf.equal({x}, {x})"),
    ("not_equal", "tf.not_equal({x}, {x})"), ("complex", "tf.complex(tf.math.real({x}), tf.math.imag({x}))"),
    ("add_n", "tf.math.add_n([{x}, {x}, {x}])"), ("zeros_like", "tf.zeros_like({x})"),
    ("ones_like", "tf.ones_like({x})"), ("fill", "tf.fill(tf.shape({x}), {x}[0, 0])"),
    ("reduce_sum", "tf.reduce_sum({x}, axis=0)"), ("reduce_prod", "tf.reduce_prod({x}, axis=1)"),
    ("reduce_mean", "tf.reduce_mean({x})"), ("reduce_std", "tf.math.reduce_std({x}, axis=0)"),
    ("reduce_variance", "tf.math.reduce_variance({x})"),
    ("reduce_euclidean_norm", "tf.math.reduce_euclidean_norm({x})"),
    ("norm", "tf.norm({x})"), ("l2_normalize", "tf.math.l2_normalize({x}, axis=-1)"),
    ("cumsum", "tf.cumsum({x}, axis=0)"), ("cumprod", "tf.math.cumprod({x}, axis=1, exclusive=True)"),
    ("matmul", "tf.matmul({x}, {x}, adjoint_b=True)"), ("einsum", "tf.einsum('ij,kj->ik', {x}, {x})"),
    ("tensordot", "tf.tensordot({x}, {x}, [[1], [1]])"), ("trace", "tf.linalg.trace(tf.matmul({x}, {x}, "
                                                                    "adjoint_a=True))"),
    ("adjoint", "tf.linalg.adjoint({x})"), ("transpose_conjugate", "tf.transpose({x}, conjugate=True)"),
    ("segment_sum", "tf.math.unsorted_segment_sum({x}, tf.constant([0, 1, 0, 1]), 2)"),
    ("segment_prod", "tf.math.unsorted_segment_prod({x}, tf.constant([0, 1, 0, 1]), 2)"),
    ("fft", "tf.signal.fft({x})"), ("ifft2d", "tf.signal.ifft2d({x})"),
    ("raw_complex_abs", "tf.raw_ops.ComplexAbs(x={x})"), ("raw_angle", "tf.raw_ops.Angle(input={x})"),
    ("raw_div_no_nan", "tf.raw_ops.DivNoNan(x={x}, y={x})"), ("raw_mul_no_nan", "tf.raw_ops.MulNoNan(x={x}, y={x})"),
    ("raw_prod", "tf.raw_ops.Prod(input={x}, axis=0)"), ("raw_mean", "tf.raw_ops.Mean(input={x}, axis=[0, 1])"),
    ("raw_inv", "tf.raw_ops.Inv(x={x})"), ("raw_reciprocal_grad", "tf.raw_ops.ReciprocalGrad(y={x}, dy={x})"),
    ("raw_sqrt_grad", "tf.raw_ops.SqrtGrad(y={x}, dy={x})"), ("raw_tanh_grad", "tf.raw_ops.TanhGrad(y={x}, dy={x})"),
))

_NUM_TO_STR = ("float32", "float64", "int32", "int64", "bool")
_TABLE = ("TABLE = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(['text'], [1]), -1)",)
STRING_OPS: tuple[Op, ...] = (
    Op("s_identity", "tf.identity({x})", STRING, "string"),
    Op("s_length", "tf.strings.length({x})", STRING),
    Op("s_upper", "tf.strings.upper({x})", STRING, "string"),
    Op("s_join", "tf.strings.join([{x}, {x}], separator='-')", STRING, "string"),
    Op("s_reduce_join", "tf.strings.reduce_join({x}, axis=0)", STRING, "string"),
    Op("s_substr", "tf.strings.substr({x}, 0, 2)", STRING, "string"),
    Op("s_regex_replace", "tf.strings.regex_replace({x}, 't', 'T')", STRING, "string"),
    Op("s_regex_full_match", "tf.strings.regex_full_match({x}, 't.*')", STRING),
    Op("s_hash", "tf.strings.to_hash_bucket_fast({x}, 10)", STRING),
    Op("s_equal", "tf.equal({x}, 'text')", STRING),
    Op("s_gather", "tf.gather({x}, [1, 0])", STRING, "string"),
    Op("s_concat", "tf.concat([{x}, {x}], axis=0)", STRING, "string"),
    Op("s_reverse", "tf.reverse({x}, axis=[0])", STRING, "string"),
    Op("s_where", "tf.where(tf.strings.length({x}) > 2, {x}, {x})", STRING, "string"),
    Op("s_shape", "tf.shape({x})", STRING),
    Op("s_size", "tf.size({x})", STRING),
    Op("s_unused", "tf.zeros([2])", STRING),
    Op("s_lookup", "TABLE.lookup({x})", STRING, module=_TABLE),
    Op("s_split", "tf.strings.split({x}).flat_values", STRING, "string"),
    Op("s_format", "tf.strings.format('{{}}!', {x})", STRING, "string"),
    Op("s_to_number", "tf.strings.to_number(tf.strings.as_string(tf.strings.length({x})))", STRING),
    Op("s_as_string", "tf.strings.as_string({x})", _NUM_TO_STR, "string"),
    Op("s_as_string_of_shape", "tf.strings.as_string(tf.shape({x}))", ALL, "string"),
    Op("s_constant_length", "tf.strings.length(tf.constant(['ab', 'c'])) + tf.size({x})", ALL),
    Op("s_constant_out", "tf.constant('out')", ALL, "string"),
    Op("s_fill_string", "tf.fill(tf.shape({x}), 'out')", ALL, "string"),
    Op("s_lookup_constant", "TABLE.lookup(tf.constant(['text', 'x'])) + tf.size({x})", ALL, module=_TABLE),
)


# --------------------------------------------------------------------------- blocks

_BLOCK_DTYPES = ("float32", "float64", "int32", "int64", "float16", "uint8", "int16")
_BOUNDS = {"2": "2", "shape": "tf.shape(x)[0]", "data": "tf.reduce_sum(tf.cast(x[0] > 0, tf.int32)) + 1"}
_ELEMENT = "tf.gather(x, k % tf.shape(x)[0])"
_ES = "element_shape=tf.constant([3]), element_dtype=x.dtype"


def _loop(rng: random.Random, counter: str, body: list[str], bound: str, options: list[str]) -> list[str]:
    """``body`` in an AutoGraph loop over ``counter`` (``while`` or ``for`` over ``tf.range``)."""
    head = [f"    {o}" for o in options]
    inner = [f"    {line}" for line in body]
    if rng.random() < 0.5:
        return [f"{counter} = tf.constant(0)", f"while {counter} < {bound}:", *head, *inner, f"    {counter} += 1"]
    return [f"for {counter} in tf.range({bound}):", *head, *inner]


def _maximum(rng: random.Random) -> tuple[str, list[str]]:
    if rng.random() < 0.3:
        return "mi", ["tf.autograph.experimental.set_loop_options(maximum_iterations=3)"]
    return "", []


def tensor_list(rng: random.Random) -> Op:
    """A TensorArray or raw TensorList block: made, filled, read."""
    api = rng.choice(("ta", "tl"))
    size = rng.choice(("2", "tf.shape(x)[0]"))
    shape = rng.choice(("", ", element_shape=[3]"))
    makes = {
        "ta": {"empty": f"ta = tf.TensorArray(x.dtype, size=0, dynamic_size=True{shape})",
               "sized": f"ta = tf.TensorArray(x.dtype, size={size}{shape})",
               "sized_dynamic": f"ta = tf.TensorArray(x.dtype, size={size}, dynamic_size=True{shape})",
               "unstack": f"ta = tf.TensorArray(x.dtype, size={size}).unstack(x)",
               "unstack_dynamic": "ta = tf.TensorArray(x.dtype, size=0, dynamic_size=True).unstack(x)"},
        "tl": {"empty": "tl = tf.raw_ops.EmptyTensorList(element_shape=tf.constant([3]), max_num_elements=-1, "
                        "element_dtype=x.dtype)",
               "empty_bounded": "tl = tf.raw_ops.EmptyTensorList(element_shape=tf.constant([3]), max_num_elements=8, "
                                "element_dtype=x.dtype)",
               "reserve": f"tl = tf.raw_ops.TensorListReserve(element_shape=tf.constant([3]), num_elements={size}, "
                          "element_dtype=x.dtype)",
               "from_tensor": "tl = tf.raw_ops.TensorListFromTensor(tensor=x, element_shape=tf.constant([3]))"}}[api]
    make = rng.choice(sorted(makes))
    # a list of a fixed size is written within it (TensorFlow refuses the rest), one that may grow anywhere
    grows = make in ("empty", "empty_bounded", "sized_dynamic", "unstack_dynamic")
    index = "k" if grows else "k % 2" if size == "2" or make == "unstack_dynamic" else "k % tf.shape(x)[0]"
    if api == "ta":
        write = "ta = ta.write({i}, {e})"
    else:
        write = rng.choice(("tl = tf.raw_ops.TensorListPushBack(input_handle=tl, tensor={e})",
                            "tl = tf.raw_ops.TensorListSetItem(input_handle=tl, index={i}, item={e}"
                            + (", resize_if_index_out_of_bounds=True)" if grows else ")")))
    write = write.format(e=_ELEMENT, i=index)
    fill = rng.choice(("none", "unrolled", "loop", "nested"))
    bound = rng.choice(sorted(_BOUNDS))
    mi, options = _maximum(rng)
    lines = [makes[make], "k = tf.constant(0)"]
    if fill == "unrolled":
        lines += [write, "k += 1", write, "k += 1"]
    elif fill == "loop":
        lines += _loop(rng, "i", [write, "k += 1"], _BOUNDS[bound], options)
    elif fill == "nested":
        inner = _loop(rng, "j", [write, "k += 1"], "2", [])
        lines += _loop(rng, "i", inner, _BOUNDS[bound], options)
    reads = {"ta": {"stack": "y = ta.stack()", "gather": "y = ta.gather([0])", "read": "y = ta.read(0)",
                    "read_last": "y = ta.read(ta.size() - 1)", "size": "y = ta.size()", "concat": "y = ta.concat()"},
             "tl": {"stack": f"y = tf.raw_ops.TensorListStack(input_handle=tl, {_ES}, num_elements=-1)",
                    "gather": f"y = tf.raw_ops.TensorListGather(input_handle=tl, indices=[0], {_ES})",
                    "get": f"y = tf.raw_ops.TensorListGetItem(input_handle=tl, index=0, {_ES})",
                    "length": "y = tf.raw_ops.TensorListLength(input_handle=tl)",
                    "pop": f"tl, y = tf.raw_ops.TensorListPopBack(input_handle=tl, {_ES})",
                    "pop_stack": f"tl, y = tf.raw_ops.TensorListPopBack(input_handle=tl, {_ES})\n"
                                 f"y = tf.raw_ops.TensorListStack(input_handle=tl, {_ES}, num_elements=-1)",
                    "pop_length": f"tl, y = tf.raw_ops.TensorListPopBack(input_handle=tl, {_ES})\n"
                                  "y = tf.raw_ops.TensorListLength(input_handle=tl)",
                    "pop_loop": "for _ in tf.range(2):\n"
                                f"    tl, y = tf.raw_ops.TensorListPopBack(input_handle=tl, {_ES})"}
             }[api]
    read = rng.choice(sorted(reads))
    lines += reads[read].split("\n") + ["return y"]
    where = f"{fill}-{bound}{'-' + mi if mi and fill in ('loop', 'nested') else ''}" if fill in ("loop", "nested") \
        else fill
    sized = "" if make in ("empty", "empty_bounded", "unstack_dynamic", "from_tensor") else f"({size})"
    return Op(f"{api}:{make}{sized}{'+shape' if shape and api == 'ta' else ''}:{where}:{read}", "", _BLOCK_DTYPES,
              block=tuple(lines))


_UPDATES = {"keep": "v{L} = v{L} + v{L}", "grow": "v{L} = tf.concat([v{L}, v{L}[:1]], 0)", "shrink": "v{L} = v{L}[1:]"}
_COMBINES = {"take": "v{L} = v{M}", "add": "v{L} = v{L} + tf.reduce_sum(v{M}, 0)",
             "concat": "v{L} = tf.concat([v{L}, v{M}], 0)"}
_LOOP_KINDS = ("while", "for", "while_loop", "python")


def _level(rng: random.Random, level: int, depth: int, parts: list[str]) -> list[str]:
    """Lines of loop ``level`` (carrying ``v{level}``, which exists before it) and the loops inside it."""
    kind = rng.choice(_LOOP_KINDS)
    update = rng.choice(sorted(_UPDATES))
    body: list[str] = []
    changes = update != "keep"
    if level + 1 < depth:
        start = rng.choice(("outer", "fresh"))
        combine = rng.choice(("take", "add") if start == "outer" else sorted(_COMBINES))
        body.append(f"v{level + 1} = {'v' + str(level) if start == 'outer' else 'x'}")
        body += _level(rng, level + 1, depth, parts)
        body.append(_COMBINES[combine].format(L=level, M=level + 1))
        changes = changes or combine in ("take", "concat")
        parts_here = f"{start}+{combine}"
    else:
        parts_here = ""
    body.append(_UPDATES[update].format(L=level))
    bound = "2" if kind == "python" else rng.choice(sorted(_BOUNDS) + ["outer"] * (level > 0))
    limit = f"i{level - 1} + 1" if bound == "outer" else _BOUNDS[bound]
    invariants = kind != "python" and rng.random() < (0.9 if changes else 0.2)
    maximum = kind != "python" and rng.random() < 0.3
    parts.append(f"{kind}({bound}{',inv' if invariants else ''}{',mi' if maximum else ''},{update}"
                 f"{',' + parts_here if parts_here else ''})")
    counter, value = f"i{level}", f"v{level}"
    if kind == "python":
        return [f"for {counter} in range(2):", *(f"    {line}" for line in body)]
    if kind == "while_loop":
        options = ((", shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, 3])]" if invariants else "")
                   + (", maximum_iterations=3" if maximum else ""))
        return [f"def body{level}({counter}, {value}):", *(f"    {line}" for line in body),
                f"    return {counter} + 1, {value}",
                f"_, {value} = tf.while_loop(lambda {counter}, {value}: {counter} < {limit}, body{level}, "
                f"[tf.constant(0), {value}]{options})"]
    settings = ([f"shape_invariants=[({value}, tf.TensorShape([None, 3]))]"] if invariants else []) + (
        ["maximum_iterations=3"] if maximum else [])
    options = [f"tf.autograph.experimental.set_loop_options({', '.join(settings)})"] if settings else []
    return _loop(rng, counter, body, limit, options)


def nested_loops(rng: random.Random) -> Op:
    """Loops nested two or three deep, each carrying a value of ``x``'s shape or of a changing one."""
    depth = rng.choice((2, 3))
    parts: list[str] = []
    lines = ["v0 = x", *_level(rng, 0, depth, parts), "return v0"]
    return Op("loops:" + ">".join(reversed(parts)), "", _BLOCK_DTYPES, block=tuple(lines))
