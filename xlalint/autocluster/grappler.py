"""Stage 2: the Grappler rewrites that run before clustering and change what it sees.

``constant_folding.cc``: values computed from constants only are folded, as are
``Shape``/``Size``/``Rank`` of fully known shapes; ``x*1``, ``x+0``... (when the constant's
value is exported) and reductions that keep their input's shape are removed.
``arithmetic_optimizer.cc``: an idempotent op applied twice (``Floor(Floor(x))``) is removed.
On CPU only (Grappler skips both on GPU): chains of two or more unary float ops become one
``_UnaryOpsComposition`` (``arithmetic_optimizer.cc``; compiled, counted as one op, without the
``_XlaCompile`` attrs of the ops it replaces), and ``MatMul``/``Conv2D``... + ``BiasAdd`` (+ an
activation, or the ops of an exact GELU after a ``MatMul``) become ``_FusedMatMul``/``_FusedConv2D``...
(``remapper.cc``), which XLA cannot compile.
"""

from __future__ import annotations

from xlalint.autocluster.flatten import Unit
from xlalint.autocluster.model import Model
from xlalint.core.tables import version_key
from xlalint.autocluster.tables import (
    COMPOSABLE_DTYPES, COMPOSABLE_UNARY, CONSTANT_OPS, CONTRACTIONS, FUSED_ACTIVATIONS, FUSION_DTYPES, IDEMPOTENT,
    NEUTRAL, REDUCTIONS, STATIC_SHAPE_OPS, is_stateful)

ERF_GELU_UNTIL = (2, 18)  # the last release whose tf.nn.gelu(approximate=False) is written with Erf


def rewrite(model: Model) -> None:
    """Mark what Grappler folds, removes and fuses on ``model.device``."""
    _fold_constants(model)
    if model.device == "cpu":
        _compose_unary_chains(model)
        _fuse_contractions(model)


def _fully_known(shape) -> bool:
    return shape is not None and all(d is not None for d in shape)


def _fold_constants(model: Model) -> None:
    for key in sorted(model.units, key=lambda k: model.units[k].order):
        unit = model.units[key]
        if unit.kind != "op" or unit.type in CONSTANT_OPS or is_stateful(unit.type):
            continue
        ins = [model.units.get(s) for s in unit.inputs]
        if (ins and all(i is not None and i.kind == "op" and (i.type in CONSTANT_OPS or i.folded) for i in ins)
                and not {"variant", "resource"} & {o["dtype"] for o in unit.node["outputs"]}):
            unit.folded = True
        elif unit.type in IDEMPOTENT and len(ins) == 1 and ins[0] is not None and ins[0].type == unit.type:
            unit.removed = True
        elif unit.type in NEUTRAL and _neutral(unit, ins):
            unit.removed = True
        elif (unit.type in REDUCTIONS and unit.node["inputs"] and unit.node["outputs"]
              and _fully_known(unit.node["inputs"][0]["shape"])
              and unit.node["inputs"][0]["shape"] == unit.node["outputs"][0]["shape"]):
            unit.removed = True
        elif unit.type in STATIC_SHAPE_OPS and all(_fully_known(i["shape"]) for i in unit.node["inputs"]):
            unit.folded = True


def _neutral(unit: Unit, ins: list) -> bool:
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


def _dtype(model: Model, key: str) -> str | None:
    outs = model.units[key].node["outputs"]
    return outs[0]["dtype"] if outs else None


def _single_consumer(model: Model, key: str) -> str | None:
    consumers = model.consumers[key]
    return consumers[0] if len(consumers) == 1 and model.units[key].node["outputs"] else None


def _compose_unary_chains(model: Model) -> None:
    def composable(key):
        unit = model.units[key]
        return (unit.kind == "op" and not unit.folded and not unit.removed and unit.type in COMPOSABLE_UNARY
                and _dtype(model, key) in COMPOSABLE_DTYPES and len(unit.node["outputs"]) == 1)

    for key in sorted(model.units, key=lambda k: model.units[k].order):
        if key in model.group and model.group[key] != key or not composable(key):
            continue
        src = model.units[key].inputs[0] if model.units[key].inputs else None
        if src is not None and composable(src) and _single_consumer(model, src) == key:
            continue  # not the head of its chain
        chain = [key]
        while True:
            nxt = _single_consumer(model, chain[-1])
            if nxt is None or not composable(nxt) or model.units[nxt].inputs[:1] != [chain[-1]]:
                break
            chain.append(nxt)
        if len(chain) >= 2:
            rep = chain[-1]  # named "<last op>/unary_ops_composition"
            for member in chain:
                model.group[member] = rep
            model.composed[rep] = chain


def _fuse_contractions(model: Model) -> None:
    for key in sorted(model.units, key=lambda k: model.units[k].order):
        unit = model.units[key]
        if unit.type not in CONTRACTIONS or unit.kind != "op" or _dtype(model, key) not in FUSION_DTYPES:
            continue
        bias = _single_consumer(model, key)
        if bias is None or model.group[bias] != bias or not (
                model.units[bias].type == "BiasAdd" or _adds_a_bias(model, key, bias)):
            continue
        members = [key, bias]
        act = _single_consumer(model, bias)
        if act is not None and model.units[act].type in FUSED_ACTIVATIONS and model.group[act] == act:
            members.append(act)
        elif unit.type == "MatMul":
            members += _gelu_exact(model, bias)
        for member in members:
            model.group[member] = key
        model.fused[key] = (CONTRACTIONS[unit.type], members)


def _adds_a_bias(model: Model, contraction: str, add: str) -> bool:
    """An ``Add``/``AddV2`` the remapper takes for a ``BiasAdd``, which it does only with oneDNN on (the graph's
    ``onednn``, read where it was traced; TensorFlow's x86 Linux builds have it on by default):
    one input is the contraction's output, of known last dimension; the other, of another shape, is a
    rank-1 bias of that size after a ``MatMul``, or ones but that last dimension after a channel-last
    convolution (``tf.matmul(x, w) + b``: measured, fused; docs/autocluster.md)."""
    unit = model.units[add]
    if not model.graph.data.get("onednn", True):
        return False
    if unit.type not in ("Add", "AddV2") or len(unit.inputs) != 2 or unit.inputs.count(contraction) != 1:
        return False
    out = model.units[contraction].node["outputs"][0]["shape"]
    bias = unit.node["inputs"][1 - unit.inputs.index(contraction)]["shape"]
    if not out or not bias or len(out) < 2 or out[-1] is None or bias[-1] != out[-1] or bias == out:
        return False
    if model.units[contraction].type == "MatMul":
        return len(bias) == 1
    channel_last = model.units[contraction].node["attrs"].get("data_format", "NHWC") in ("NHWC", "NDHWC")
    return channel_last and len(bias) <= len(out) and all(d == 1 for d in bias[:-1])


def _gelu_exact(model: Model, bias: str) -> list[str]:
    """The ops of ``tf.nn.gelu(approximate=False)`` after ``bias``, which the remapper fuses into the
    ``_FusedMatMul`` as GeluExact: ``Mul(Mul(c, x), Erfc(Mul(Neg(x), c)))`` (TensorFlow 2.19 on); up to 2.18
    ``tf.nn.gelu`` makes ``Mul(Mul(c, x), AddV2(c, Erf(RealDiv(x, c))))``, which those releases fuse in a Keras
    ``Dense`` (measured with bench/version_matrix.py; docs/versions.md). [] when they are not there."""
    def only(key, op_type):
        nxt = _single_consumer(model, key)
        return nxt if nxt is not None and model.units[nxt].type == op_type and model.group[nxt] == nxt else None

    def constant_operand(key, op_type):  # ``key`` is an ``op_type`` of its input and a constant
        unit = model.units[key]
        return unit.type == op_type and any(model.units[s].type in CONSTANT_OPS for s in unit.inputs if s and s != key)

    consumers = model.consumers[bias]
    if len(consumers) != 2:
        return []
    half = next((c for c in consumers if constant_operand(c, "Mul") and model.units[c].inputs.count(bias) == 1), None)
    if version_key(model.support.tensorflow)[:2] <= ERF_GELU_UNTIL:
        divided = next((c for c in consumers if constant_operand(c, "RealDiv")), None)
        erf = only(divided, "Erf") if divided else None
        plus = only(erf, "AddV2") if erf else None
        chain = [divided, erf, plus] if plus and constant_operand(plus, "AddV2") else []
    else:
        neg = next((c for c in consumers if model.units[c].type == "Neg"), None)
        scale = only(neg, "Mul") if neg else None
        erfc = only(scale, "Erfc") if scale and constant_operand(scale, "Mul") else None
        chain = [neg, scale, erfc] if erfc else []
    out = only(chain[-1], "Mul") if chain else None
    if half is None or out is None or _single_consumer(model, half) != out:
        return []
    return [half, *chain, out]
