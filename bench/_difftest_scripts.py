"""The differential tester's script families (bench/difftest.py): whole scripts run as ``__main__``.

Three kinds of program cannot be written as one ``case`` function, because what XLA compiles is decided
by objects around it: a distribution strategy and where its variables live, the object a ``tf.function``
wraps, the layers of a Keras model that Keras looks at before it picks XLA. Each is a script with a
``main()``, drawn piece by piece: a *frame* (the choices around the steps, all recorded in its name) and
steps that go inside it, each independent of the others so that the minimiser can remove them.

- ``distribute``: two logical CPU devices; a ``MirroredStrategy`` over both, over one, a
  ``OneDeviceStrategy`` or the default strategy; either a step that calls ``strategy.run`` in a
  ``tf.function(jit_compile=True)`` (with or without an ``input_signature``, made at module level or in
  ``main()``, its variables made in the strategy's scope, outside it, in a Keras layer, or none, fed a
  tensor or a distributed dataset, forward or through a gradient), or a Keras model compiled with
  ``jit_compile`` True, ``"auto"`` or the default, made in a module-level ``with strategy.scope():``, by a
  builder or in ``main()``, and fit. Steps: ops of the core table (custom step) or Keras layers (model).
- ``wrapper``: ``tf.function(obj, jit_compile=True)`` (or without it) of a subclassed Keras model, a
  Keras layer or a plain object with ``__call__``, made at module level or in ``main()``, with or
  without a signature, called once or twice. Steps: ops of the core and random tables in its call.
- ``preprocessing``: a Keras functional model, one input branch per step, each branch one or two
  preprocessing layers (text, integer, float and image ones) and a small head, compiled with
  ``jit_compile`` True, ``"auto"`` or the default, made at module level or by a builder, fit on a tiny
  dataset (arrays or a ``tf.data.Dataset``).

A frame says whether the compiled code can be seen without running the script (``visible``): what the
check command is asked about; ``xlalint run`` is asked about every program.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from _difftest_families import RANDOM_OPS, Op


@dataclass(frozen=True)
class Frame:
    """A script family's choices around the steps, in the order drawn."""

    family: str
    choices: tuple[tuple[str, str], ...]

    @property
    def name(self) -> str:
        return ":".join(f"{key}={value}" for key, value in self.choices)

    def __getitem__(self, key: str) -> str:
        return dict(self.choices)[key]

    @property
    def visible(self) -> bool:
        """The compiled code is made where the check command sees it without a run (module level, a builder), and
        it can trace it: a Keras model, or a function with a signature (a subclassed model has no input shapes)."""
        choices = dict(self.choices)
        return choices.get("where", "module") in ("module", "builder") and choices.get("sig", "sig") != "none"


def _pick(rng: random.Random, choices: list[tuple[str, str]], key: str, options: tuple[str, ...]) -> str:
    value = rng.choice(options)
    choices.append((key, value))
    return value


# --------------------------------------------------------------------------- frames

STRATEGIES = {
    "mirrored2": 'tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])',
    "mirrored1": 'tf.distribute.MirroredStrategy(["/cpu:0"])',
    "one_device": 'tf.distribute.OneDeviceStrategy("/cpu:0")',
    "default": "tf.distribute.get_strategy()",
}
JIT = {"true": ", jit_compile=True", "auto": ', jit_compile="auto"', "default": "", "off": ""}


def distribute_frame(rng: random.Random) -> Frame:
    choices: list[tuple[str, str]] = []
    # the two-device strategy twice as often: it is the one XLA refuses
    _pick(rng, choices, "strategy", ("mirrored2", "mirrored2", "mirrored1", "one_device", "default"))
    if _pick(rng, choices, "kind", ("step", "keras")) == "keras":
        _pick(rng, choices, "jit", ("true", "true", "auto", "default"))
        _pick(rng, choices, "where", ("module", "builder", "main"))
        _pick(rng, choices, "compile", ("in_scope", "after_scope"))
        _pick(rng, choices, "data", ("arrays", "dataset"))
        return Frame("distribute", tuple(choices))
    variables = _pick(rng, choices, "vars", ("scope", "outside", "layer", "none"))
    feed = _pick(rng, choices, "input", ("tensor", "tensor", "distributed"))
    _pick(rng, choices, "sig", ("sig", "none") if feed == "tensor" else ("none",))
    _pick(rng, choices, "where", ("module", "main"))
    _pick(rng, choices, "pass", ("forward", "gradient") if variables != "none" else ("forward",))
    return Frame("distribute", tuple(choices))


def wrapper_frame(rng: random.Random) -> Frame:
    choices: list[tuple[str, str]] = []
    target = _pick(rng, choices, "target", ("model", "layer", "callable"))
    dtype = _pick(rng, choices, "dtype", ("float32", "float32", "int32"))
    _pick(rng, choices, "weights", ("dense", "none") if target != "callable" and dtype == "float32" else ("none",))
    _pick(rng, choices, "jit", ("true", "true", "true", "off"))
    _pick(rng, choices, "sig", ("none", "static", "none_batch"))
    _pick(rng, choices, "where", ("module", "main"))
    _pick(rng, choices, "calls", ("1", "2"))
    return Frame("wrapper", tuple(choices))


def preprocessing_frame(rng: random.Random) -> Frame:
    choices: list[tuple[str, str]] = []
    _pick(rng, choices, "jit", ("true", "true", "auto", "default"))
    _pick(rng, choices, "where", ("module", "builder"))
    _pick(rng, choices, "data", ("arrays", "dataset"))
    return Frame("preprocessing", tuple(choices))


# --------------------------------------------------------------------------- steps

@dataclass(frozen=True)
class Layer:
    """A preprocessing layer: its construction (``{v}``: its variable), what it reads and gives (``text``,
    ``int``, ``float``, ``ids``, ``image``), and whether it is adapted to the data first."""

    name: str
    make: str
    reads: tuple[str, ...]
    gives: str
    adapt: bool = False


_VOCAB = '["the cat sat", "a dog ran"]'
_IMAGE = ("image",)
LAYERS: tuple[Layer, ...] = (
    Layer("text_vectorization", "keras.layers.TextVectorization(max_tokens=20, output_sequence_length=4)",
          ("text",), "ids", True),
    Layer("text_multi_hot", 'keras.layers.TextVectorization(max_tokens=20, output_mode="multi_hot")',
          ("text",), "float", True),
    Layer("string_lookup", f"keras.layers.StringLookup(vocabulary={_VOCAB})", ("text",), "ids"),
    Layer("string_lookup_one_hot", f'keras.layers.StringLookup(vocabulary={_VOCAB}, output_mode="one_hot")',
          ("text",), "float"),
    Layer("hashing", "keras.layers.Hashing(num_bins=8)", ("text", "int"), "ids"),
    Layer("integer_lookup", "keras.layers.IntegerLookup(vocabulary=[1, 2, 3])", ("int",), "ids"),
    Layer("category_one_hot", 'keras.layers.CategoryEncoding(num_tokens=8, output_mode="one_hot")', ("int",), "float"),
    Layer("category_multi_hot", 'keras.layers.CategoryEncoding(num_tokens=32, output_mode="multi_hot")',
          ("int", "ids"), "float"),
    Layer("category_count", 'keras.layers.CategoryEncoding(num_tokens=32, output_mode="count")', ("int", "ids"),
          "float"),
    Layer("normalization_adapted", "keras.layers.Normalization()", ("float",), "float", True),
    Layer("normalization_fixed", "keras.layers.Normalization(mean=0.0, variance=1.0)", ("float",), "float"),
    Layer("rescaling", "keras.layers.Rescaling(0.5, offset=1.0)", ("float", "image"), "float"),
    Layer("discretization", "keras.layers.Discretization(bin_boundaries=[-1.0, 0.0, 1.0])", ("float",), "ids"),
    Layer("discretization_adapted", "keras.layers.Discretization(num_bins=4)", ("float",), "ids", True),
    Layer("random_flip", "keras.layers.RandomFlip()", _IMAGE, "image"),
    Layer("random_rotation", "keras.layers.RandomRotation(0.1)", _IMAGE, "image"),
    Layer("random_zoom", "keras.layers.RandomZoom(0.1)", _IMAGE, "image"),
    Layer("random_contrast", "keras.layers.RandomContrast(0.2)", _IMAGE, "image"),
    Layer("random_translation", "keras.layers.RandomTranslation(0.1, 0.1)", _IMAGE, "image"),
    Layer("random_brightness", "keras.layers.RandomBrightness(0.1)", _IMAGE, "image"),
    Layer("random_crop", "keras.layers.RandomCrop(6, 6)", _IMAGE, "image"),
    Layer("resizing", "keras.layers.Resizing(6, 6)", _IMAGE, "image"),
    Layer("center_crop", "keras.layers.CenterCrop(6, 6)", _IMAGE, "image"),
    # image layers Keras lets XLA compile (supports_jit): whether XLA can is the compiler's answer
    *(Layer(name, f"keras.layers.{call}", _IMAGE, "image") for name, call in (
        ("equalization", "Equalization()"), ("auto_contrast", "AutoContrast()"), ("solarization", "Solarization(0.5)"),
        ("random_hue", "RandomHue(0.1)"), ("random_saturation", "RandomSaturation(0.5)"),
        ("random_sharpness", "RandomSharpness(0.5)"), ("random_grayscale", "RandomGrayscale()"),
        ("random_erasing", "RandomErasing()"), ("random_gaussian_blur", "RandomGaussianBlur()"),
        ("random_invert", "RandomInvert()"), ("random_posterization", "RandomPosterization(4)"),
        ("rand_augment", "RandAugment()"), ("mix_up", "MixUp()"), ("cut_mix", "CutMix()"))),
)
LAYERS_BY_NAME = {layer.name: layer for layer in LAYERS}
# each input kind: the Keras input and the data it is fed
INPUTS = {"text": ('keras.Input((1,), dtype="string")', "WORDS"), "int": ('keras.Input((1,), dtype="int64")', "INTS"),
          "float": ("keras.Input((3,))", "FLOATS"), "image": ("keras.Input((8, 8, 3))", "IMAGES")}
# what turns a layer's output into features for the last Dense layer
HEADS = {"ids": "keras.layers.Flatten()(keras.layers.Embedding(32, 2)({t}))", "float": "{t}",
         "image": "keras.layers.Flatten()({t})"}


def _gives(layer: Layer, reads: str) -> str:
    """What ``layer`` gives when it reads ``reads`` (a rescaled image is an image)."""
    return "image" if reads == "image" else layer.gives


def preprocessing_branch(rng: random.Random) -> Op:
    """One input branch: an input kind, one or two layers that read what comes before them. Its name says all."""
    kind = rng.choice(sorted(INPUTS))
    chain = [rng.choice([layer for layer in LAYERS if kind in layer.reads])]
    gives = _gives(chain[0], kind)
    follow = [layer for layer in LAYERS if gives in layer.reads]
    if rng.random() < 0.4 and follow:
        chain.append(rng.choice(follow))
    return Op(f"{kind}:" + ">".join(layer.name for layer in chain), "", (kind,))


# the Keras layers a distributed model's steps add: each keeps a [batch, features] input valid
MODEL_LAYERS: tuple[Op, ...] = tuple(Op(f"k_{name}", expr, ("float32",)) for name, expr in (
    ("dense", 'keras.layers.Dense(4, activation="relu")'), ("dropout", "keras.layers.Dropout(0.25)"),
    ("batch_norm", "keras.layers.BatchNormalization()"), ("layer_norm", "keras.layers.LayerNormalization()"),
    ("gaussian_noise", "keras.layers.GaussianNoise(0.1)"), ("tanh", 'keras.layers.Activation("tanh")'),
))


def body_ops(table: tuple[Op, ...], dtype: str, numeric: bool) -> tuple[Op, ...]:
    """The ops of ``table`` (and the random ones) that take ``dtype``; ``numeric``: only those whose result
    can be summed as floats (a replica's loss)."""
    return tuple(op for op in table + RANDOM_OPS if dtype in op.dtypes and op.output != "string"
                 and not (numeric and op.output == "none"))


def draw(family: str, rng: random.Random, table: tuple[Op, ...]) -> tuple[Frame, str, list[Op]]:
    """A script family's frame, the dtype of its input, and one to three steps (``table``: the core ops)."""
    frame = FRAMES[family](rng)
    count = rng.randint(1, 3)
    if family == "preprocessing":
        return frame, "mixed", [preprocessing_branch(rng) for _ in range(count)]
    if family == "distribute" and frame["kind"] == "keras":
        return frame, "float32", [rng.choice(MODEL_LAYERS) for _ in range(count)]
    dtype = frame["dtype"] if family == "wrapper" else "float32"
    ops = body_ops(table, dtype, numeric=family == "distribute")
    return frame, dtype, [rng.choice(ops) for _ in range(count)]


FRAMES = {"distribute": distribute_frame, "wrapper": wrapper_frame, "preprocessing": preprocessing_frame}


# --------------------------------------------------------------------------- rendering

_IMPORTS = ("import keras", "import numpy as np", "import tensorflow as tf")


def _indent(lines: list[str], by: int = 1) -> list[str]:
    return [("    " * by + line) if line else line for line in lines]


def _op_lines(calls: list[Op], x: str) -> tuple[list[str], list[str]]:
    """Each step on a line of its own, applied to ``x``: (the lines, the names of the values they make)."""
    lines, results = [], []
    for i, op in enumerate(calls):
        if op.output == "none":
            lines.append(op.expr.format(x=x))
        else:
            lines.append(f"y{i} = {op.expr.format(x=x)}")
            results.append(f"y{i}")
    return lines, results


def _module(calls: list[Op]) -> list[str]:
    lines: list[str] = []
    for op in calls:
        lines += [line for line in op.module if line not in lines]
    return lines


def _decorator(frame: Frame) -> str:
    """The step's: ``jit_compile=True`` always (without it xlalint does not ask about the strategy: XLA305 is
    about a compiled step), and the signature when drawn."""
    signature = ", input_signature=[tf.TensorSpec([8, 3], tf.float32)]" if frame["sig"] == "sig" else ""
    return f"@tf.function(jit_compile=True{signature})"


_VARIABLES = {"scope": (["with strategy.scope():", "    weight = tf.Variable(tf.ones([3]))"], "x * weight", "weight"),
              "outside": (["weight = tf.Variable(tf.ones([3]))"], "x * weight", "weight"),
              "layer": (["with strategy.scope():", "    layer = keras.layers.Dense(3)", "    layer.build((None, 3))"],
                        "layer(x)", "layer.kernel"),
              "none": ([], "x", "")}


def _distributed_step(frame: Frame, calls: list[Op]) -> tuple[list[str], list[str]]:
    """(module lines, main's lines) of a custom step that calls ``strategy.run``."""
    made, value, differentiated = _VARIABLES[frame["vars"]]
    ops, results = _op_lines(calls, "h")
    loss = " + ".join(["tf.reduce_sum(h)"] + [f"tf.reduce_sum(tf.cast({y}, tf.float32))" for y in results])
    forward = [f"h = {value}", *ops, f"loss = {loss}"]
    if frame["pass"] == "gradient":
        replica = ["with tf.GradientTape() as tape:", *_indent(forward),
                   f"return tape.gradient(loss, {differentiated})"]
    else:
        replica = [*forward, "return loss"]
    step = [_decorator(frame), "def step(x):",
            '    return strategy.reduce("SUM", strategy.run(replica_step, args=(x,)), axis=None)']
    if frame["input"] == "tensor":
        calls_ = ["print(step(tf.constant(DATA)).shape)"]
    else:
        calls_ = ["for batch in strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(DATA)"
                  ".batch(8)):", "    print(step(batch).shape)"]
    module = [*made, "", "", "def replica_step(x):", *_indent(replica)]
    if frame["where"] == "module":
        return [*module, "", "", *step], calls_
    return module, [*step, *calls_]


def _model_lines(layers: list[str], jit: str, compile_in_scope: bool) -> list[str]:
    """A model made in the strategy's scope and compiled there or after it."""
    made = [f"model = keras.Sequential([{', '.join(['keras.Input((3,))', *layers, 'keras.layers.Dense(1)'])}])"]
    compiled = [f'model.compile("sgd", "mse"{JIT[jit]})']
    if compile_in_scope:
        return ["with strategy.scope():", *_indent(made + compiled)]
    return ["with strategy.scope():", *_indent(made), *compiled]


def _fit(inputs: str, data: str) -> str:
    if data == "arrays":
        return f"model.fit({inputs}, LABELS, batch_size=4, epochs=1, verbose=0)"
    return f"model.fit(tf.data.Dataset.from_tensor_slices(({inputs}, LABELS)).batch(4), epochs=1, verbose=0)"


def _placed(frame: Frame, made: list[str], fit: str) -> tuple[list[str], list[str]]:
    """(module lines, main's lines) of a model made at module level, by a builder, or in ``main()``."""
    if frame["where"] == "module":
        return made, [fit]
    if frame["where"] == "builder":
        return ["def build_model():", *_indent(made), "    return model"], ["model = build_model()", fit]
    return [], [*made, fit]


def _distributed_model(frame: Frame, calls: list[Op]) -> tuple[list[str], list[str]]:
    made = _model_lines([op.expr for op in calls], frame["jit"], frame["compile"] == "in_scope")
    return _placed(frame, made, _fit("DATA", frame["data"]))


def _distribute(frame: Frame, calls: list[Op]) -> tuple[list[str], list[str]]:
    head = ['cpu = tf.config.list_physical_devices("CPU")[0]',
            "tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)",
            f"strategy = {STRATEGIES[frame['strategy']]}",
            'DATA = np.random.default_rng(0).standard_normal((8, 3)).astype("float32")',
            "LABELS = DATA.sum(axis=1, keepdims=True)", "", ""]
    module, main = (_distributed_model if frame["kind"] == "keras" else _distributed_step)(frame, calls)
    return [*head, *_module(calls), *module], main  # the steps' objects after the devices are set up


_BASES = {"model": "(keras.Model)", "layer": "(keras.layers.Layer)", "callable": ""}
_BATCHES = {"float32": 'np.random.default_rng(0).standard_normal((4, 3)).astype("float32")',
            "int32": 'np.random.default_rng(0).integers(-3, 4, (4, 3)).astype("int32")'}


def _wrapper(frame: Frame, calls: list[Op]) -> tuple[list[str], list[str]]:
    target, dense = frame["target"], frame["weights"] == "dense"
    ops, results = _op_lines(calls, "h")
    method = "__call__" if target == "callable" else "call"
    init = (["def __init__(self):", "    super().__init__()", "    self.dense = keras.layers.Dense(3)", ""]
            if dense else [])
    body = ["h = self.dense(x)" if dense else "h = x", *ops, f"return {', '.join(results) or 'h'}"]
    klass = [f"class Net{_BASES[target]}:", *_indent([*init, f"def {method}(self, x):", *_indent(body)])]
    arguments = ["Net()"] + ["jit_compile=True"] * (frame["jit"] == "true") + (
        [f"input_signature=[tf.TensorSpec({'[4, 3]' if frame['sig'] == 'static' else '[None, 3]'}, "
         f"tf.{frame['dtype']})]"] if frame["sig"] != "none" else [])
    wrap = [f"fast = tf.function({', '.join(arguments)})"]
    call = ["for _ in range(2):", "    out = fast(BATCH)"] if frame["calls"] == "2" else ["out = fast(BATCH)"]
    main = [*call, "print([v.shape for v in tf.nest.flatten(out)])"]
    module = [*_module(calls), f"BATCH = {_BATCHES[frame['dtype']]}", "", "", *klass]
    if frame["where"] == "module":
        return [*module, "", "", *wrap], main
    return module, [*wrap, *main]


_DATA = ['RNG = np.random.default_rng(0)',
         'WORDS = tf.constant([["the cat sat"], ["a dog ran"], ["birds fly high"], ["the dog sat"]] * 2)',
         "INTS = RNG.integers(1, 6, (8, 1))", 'FLOATS = RNG.standard_normal((8, 3)).astype("float32")',
         'IMAGES = RNG.uniform(0, 255, (8, 8, 8, 3)).astype("float32")',
         'LABELS = RNG.standard_normal((8, 1)).astype("float32")', "", ""]


def _branch(i: int, op: Op) -> list[str]:
    """Branch ``i``'s lines: its input, its layers (adapted to what reaches them), its head ``h{i}``."""
    kind, chain = op.name.split(":")
    keras_input, data = INPUTS[kind]
    lines, value, reads = [f"input{i} = {keras_input}"], f"input{i}", kind
    for j, name in enumerate(chain.split(">")):
        layer, variable = LAYERS_BY_NAME[name], f"layer{i}_{j}"
        lines.append(f"{variable} = {layer.make}")
        if layer.adapt:
            lines.append(f"{variable}.adapt({data})")
        data, value, reads = f"{variable}({data})", f"{variable}({value})", _gives(layer, reads)
    return lines + [f"h{i} = {HEADS[reads].format(t=value)}"]


def _preprocessing(frame: Frame, calls: list[Op]) -> tuple[list[str], list[str]]:
    made = [line for i, op in enumerate(calls) for line in _branch(i, op)]
    heads = ", ".join(f"h{i}" for i in range(len(calls)))
    features = f"keras.layers.Concatenate()([{heads}])" if len(calls) > 1 else "h0"
    inputs = ", ".join(f"input{i}" for i in range(len(calls)))
    made += [f"model = keras.Model([{inputs}], keras.layers.Dense(1)({features}))",
             f'model.compile("sgd", "mse"{JIT[frame["jit"]]})']
    data = ", ".join(INPUTS[op.name.split(":")[0]][1] for op in calls)
    together = f"[{data}]" if frame["data"] == "arrays" else f"({data},)" if len(calls) == 1 else f"({data})"
    module, main = _placed(frame, made, _fit(together, frame["data"]))
    return [*_DATA, *module], main


RENDERERS = {"distribute": _distribute, "wrapper": _wrapper, "preprocessing": _preprocessing}


def render(frame: Frame, calls: list[Op], text: str) -> str:
    """The script: ``text`` as its docstring, the frame's module-level lines, ``main()`` and its guard."""
    module, main = RENDERERS[frame.family](frame, calls)
    return "\n".join([f'"""{text}"""', "", *_IMPORTS, "", *module, "", "",
                      "def main():", *_indent(main), "", "", 'if __name__ == "__main__":', "    main()", ""])
