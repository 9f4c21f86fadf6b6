"""TensorArray writes that may grow the array, which XLA silently does not (behind XLA201/XLA202).

A ``TensorArray(dynamic_size=True)`` writes with ``resize_if_index_out_of_bounds``; XLA keeps the
list at its initial size and drops a write past it or puts it on the last element
(tensorflow#119375, #127528). A write is certain to be lost when its index is a constant at or past
the initial size, or when the array starts empty (XLA201); it may be lost when either is only
known at run time (XLA202). A raw ``EmptyTensorList`` with ``max_num_elements=M`` starts with M
slots under XLA (measured on TF 2.21 CPU: resizing writes and pushes within them read back right).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from xlalint.analyses.liveness import kept_nodes
from xlalint.analyses.loop_shapes import ELEMENTWISE, REDUCTIONS
from xlalint.analyses.values import small_value
from xlalint.core.opgraph import PASS_THROUGH, WHILE_OPS, OpGraph

HANDLE_UPDATES = frozenset({"TensorListSetItem", "TensorListPushBack", "TensorListPopBack"})
HINT = ("Create the TensorArray with its final size and dynamic_size=False (bound the loop with "
        "maximum_iterations and size the array to it), or build the result with a tensor of that size.")


@dataclass(frozen=True)
class GrowingWrite:
    """A resizing write: ``past`` a constant index at or past the initial size ``smallest``, ``empty``
    into an array that starts empty, ``push`` onto a list that starts full, or ``maybe`` (size or index
    known only at run time)."""

    node: dict
    kind: str
    smallest: int | None  # None: known only at run time
    fails: dict | None = None  # the op XLA cannot compile on the list that starts empty, needed or not


def _input(node: dict, arg: str) -> dict | None:
    return next((i for i in node["inputs"] if i["arg"] == arg), None)


def _initial_sizes(graph: OpGraph, src: str, index: int, seen: set) -> list[int | None]:
    """Initial sizes of the lists a handle may come from (None: not a constant; [] : not found)."""
    if (src, index) in seen:
        return []
    seen.add((src, index))
    node = graph.node(src)
    op_type = node["type"]
    if op_type == "TensorListReserve":
        size = _input(node, "num_elements")
        value = small_value(graph, size["src"]) if size else None
        return [value[0] if value else None]
    if op_type == "TensorListFromTensor":
        shape = node["inputs"][0]["shape"]
        return [shape[0] if shape else None]
    if op_type == "EmptyTensorList":  # XLA makes max_num_elements slots (measured: writes within them land)
        bound = _input(node, "max_num_elements")
        value = small_value(graph, bound["src"]) if bound else None
        return [value[0] if value and value[0] > 0 else 0]
    if op_type in HANDLE_UPDATES or op_type in PASS_THROUGH:
        handle = _input(node, "input_handle") or node["inputs"][0]
        return _initial_sizes(graph, handle["src"], handle["index"], seen)
    if op_type in WHILE_OPS:  # a handle out of a loop is the one that went in
        inp = node["inputs"][index]
        return _initial_sizes(graph, inp["src"], inp["index"], seen)
    if op_type == "Placeholder" and node["function"] != graph.root:
        position = graph.functions[node["function"]]["inputs"].index(src)
        sources = [graph.argument_source(graph.node(caller_id), position)
                   for caller_id, _ in graph.callers(node["function"])]
        return [size for inp in sources if inp for size in _initial_sizes(graph, inp["src"], inp["index"], seen)]
    return [None]


def growing_writes(graph: OpGraph) -> list[GrowingWrite]:
    """Every TensorArray write that is or may be past its array's initial size and whose list something reads
    later (measured: an array grown in a loop and never read compiles and runs), once per graph."""
    kept = kept_nodes(graph)

    def judged(write: GrowingWrite) -> GrowingWrite | None:
        fails = _failing_read(graph, write.node) if write.smallest == 0 else None
        if fails is None and not any(r["id"] in kept for r in _reads(graph, write.node["id"], 0, set(), LIST_READERS)):
            return None
        return replace(write, fails=fails)

    return graph.analysis("growing_writes", lambda: [w for w in map(judged, _growing_writes(graph)) if w])


def _growing_writes(graph: OpGraph):
    for node in graph.nodes():
        if node["type"] == "TensorListPushBack":
            yield from _growing_push(graph, node)
            continue
        if node["type"] != "TensorListSetItem" or not node["attrs"].get("resize_if_index_out_of_bounds"):
            continue
        handle = _input(node, "input_handle")
        if handle is None:  # every TensorListSetItem has one
            continue
        sizes = _initial_sizes(graph, handle["src"], handle["index"], set()) or [None]
        index = _input(node, "index")
        value = small_value(graph, index["src"]) if index else None
        known = [size for size in sizes if size is not None]
        smallest = min(known) if len(known) == len(sizes) else None
        if value is not None and smallest is not None:
            if value[0] >= smallest:  # within the initial size XLA writes it as TensorFlow does
                yield GrowingWrite(node, "past", smallest)
        else:
            yield GrowingWrite(node, "empty" if smallest == 0 else "maybe", smallest)


def _growing_push(graph: OpGraph, node: dict):
    """A push onto a list that starts full: made from a tensor or reserved with a size (XLA keeps that size;
    measured on TF 2.21 CPU: the pushed rows are missing from the stacked result). Lists that start empty
    are pushed into their max_num_elements slots, or fail without them (XLA101)."""
    handle = _input(node, "input_handle")
    if handle is None:
        return
    starts = {graph.node(start)["type"] if start != "?" else start
              for start in _starts(graph, handle["src"], handle["index"], set())}
    sizes = _initial_sizes(graph, handle["src"], handle["index"], set())
    known = [size for size in sizes if size is not None]
    if starts and starts <= {"TensorListFromTensor", "TensorListReserve"} and \
            next(_reads(graph, node["id"], 0, set(), WHOLE_LIST_READERS), None) is not None:
        yield GrowingWrite(node, "push", min(known) if known and len(known) == len(sizes) else None)


# A pop is left out: XLA pops the list's own last element, which the generated programs' pushes repeated.
WHOLE_LIST_READERS = frozenset({"TensorListLength", "TensorListStack", "TensorListConcatV2"})
LIST_READERS = WHOLE_LIST_READERS | {"TensorListGetItem", "TensorListGather", "TensorListPopBack"}


def list_reader(graph: OpGraph, write: dict) -> dict | None:
    """The first op that reads the list a write (or push) leaves behind."""
    return next(_reads(graph, write["id"], 0, set(), LIST_READERS), None)


def _reads(graph: OpGraph, src: str, index: int, seen: set, readers: frozenset):
    """The ops of ``readers`` that read the list a handle holds, later, first found first: through updates,
    identities, while loops and function arguments."""
    if (src, index) in seen:
        return
    seen.add((src, index))
    function = graph.node(src)["function"]
    for position, returned in enumerate(graph.functions[function]["outputs"]):  # out of the function that made it
        if tuple(returned) == (src, index):
            for caller_id, attr in graph.callers(function):
                if attr != "cond":
                    yield from _reads(graph, caller_id, position, seen, readers)
    for consumer in graph.consumers(src):
        for position, inp in enumerate(consumer["inputs"]):
            if (inp["src"], inp["index"]) != (src, index):
                continue
            if consumer["type"] in readers:
                yield consumer
                continue
            onward: list[tuple[str, int]] = []
            if consumer["type"] in HANDLE_UPDATES or consumer["type"] in PASS_THROUGH:
                onward.append((consumer["id"], 0 if consumer["type"] != "IdentityN" else position))
            for names in consumer["calls"].values():  # into the functions it runs, and out of a loop
                for name in names:
                    inputs = graph.functions[name]["inputs"]
                    offset = len(consumer["inputs"]) - len(inputs)
                    if 0 <= position - offset < len(inputs):
                        onward.append((inputs[position - offset], 0))
            if consumer["type"] in WHILE_OPS:
                onward.append((consumer["id"], position))
            for next_src, next_index in onward:
                yield from _reads(graph, next_src, next_index, seen, readers)


# Under XLA a list that starts empty has no rows, whatever is written into it; the bridge then fails on ops that
# read it, needed or not (measured on TF 2.21 CPU). Reading one element: "Slice dim size 1 greater than dynamic slice
# dimension: 0". A gather gives one element's shape, a rank less than TensorFlow's: an op after it that needs that
# rank fails ("Invalid reduction dimension", "transpose expects a vector of size 1", "Ranks of all input tensors
# should match"); elementwise ops carry the lower rank on, a reshape or slice that fits it compiles.
ELEMENT_READERS = frozenset({"TensorListGetItem", "TensorListPopBack"})
RANK_BLIND = frozenset({"Shape", "ShapeN", "Size", "Rank"})


def _failing_read(graph: OpGraph, write: dict) -> dict | None:
    """The first op XLA fails to compile on the list that ``write`` leaves behind, when that list starts empty."""
    for reader in _reads(graph, write["id"], 0, set(), LIST_READERS):
        if reader["type"] in ELEMENT_READERS:
            return reader
        shape = reader["outputs"][0]["shape"] if reader["type"] == "TensorListGather" else None
        failing = _needs_rank(graph, reader["id"], shape, set()) if shape else None
        if failing is not None:
            return failing
    return None


def unwritten_empty_reads(graph: OpGraph) -> list[dict]:
    """Reads of a list reserved with no elements (``TensorArray(size=0)``) that nothing writes before them. XLA
    fails to compile them, needed or not (measured on TF 2.21 CPU; a TensorFlow run refuses the needed ones too):
    reading one element always, and any read of its rows when its element shape is unknown ("TensorList is not
    initialized")."""
    return graph.analysis("unwritten_empty_reads",
                          lambda: [node for node in graph.nodes() if _unwritten_empty_read(graph, node)])


def _unwritten_empty_read(graph: OpGraph, node: dict) -> bool:
    if node["type"] not in LIST_READERS - {"TensorListLength"} or not node["inputs"]:
        return False
    handle = node["inputs"][0]
    starts = _starts(graph, handle["src"], handle["index"], set())
    if not starts or "?" in starts or any(graph.node(start)["type"] != "TensorListReserve" for start in starts):
        return False
    if set(_initial_sizes(graph, handle["src"], handle["index"], set())) != {0} or \
            _went_through(graph, handle["src"], handle["index"], set(), frozenset({"TensorListSetItem",
                                                                                  "TensorListPushBack"})):
        return False
    return node["type"] in ELEMENT_READERS or not all(_element_shape_known(graph, graph.node(s)) for s in starts)


def _element_shape_known(graph: OpGraph, reserve: dict) -> bool:
    shape = _input(reserve, "element_shape")
    value = small_value(graph, shape["src"]) if shape else None
    return value is not None and all(dim >= 0 for dim in value)


def _needs_rank(graph: OpGraph, src: str, shape: list, seen: set[str]) -> dict | None:
    """The first op that reads ``src`` (TensorFlow's ``shape``, XLA's ``shape[1:]``) and fails on the lower rank;
    ``seen``: the ops whose readers were looked at already (each once, where paths join or go round)."""
    rank = len(shape) - 1
    seen.add(src)
    for consumer in graph.consumers(src):
        op_type, inputs = consumer["type"], consumer["inputs"]
        if op_type in RANK_BLIND or consumer["calls"]:
            continue
        if op_type in ELEMENTWISE:
            others = [i.get("shape") for i in inputs if i["src"] != src]
            if consumer["id"] not in seen and all(other is not None and len(other) <= rank for other in others):
                failing = _needs_rank(graph, consumer["id"], shape, seen)  # no operand brings the rank back
                if failing is not None:
                    return failing
            continue
        operand = small_value(graph, inputs[1]["src"]) if len(inputs) > 1 else None
        if op_type in REDUCTIONS and operand is not None:
            if any(not -rank <= axis < rank for axis in operand):
                return consumer
        elif op_type == "Reshape" and operand is not None:
            if -1 not in operand and None not in shape[1:] and math.prod(operand) != math.prod(shape[1:]):
                return consumer
        elif op_type == "StridedSlice" and operand is not None:
            if len(operand) > rank:
                return consumer
        else:
            return consumer
    return None


def _starts(graph: OpGraph, src: str, index: int, seen: set) -> set[str]:
    """The ops that made the lists a handle may hold (through updates, identities and loops); "?" where a handle
    comes from nowhere the graph shows."""
    if (src, index) in seen:
        return set()
    seen.add((src, index))
    node = graph.node(src)
    if node["type"] in HANDLE_UPDATES or node["type"] in PASS_THROUGH:
        handle = _input(node, "input_handle") or (node["inputs"][0] if node["inputs"] else None)
        return _starts(graph, handle["src"], handle["index"], seen) if handle else {"?"}
    if node["type"] in WHILE_OPS:
        inp = node["inputs"][index]
        return _starts(graph, inp["src"], inp["index"], seen)
    if node["type"] == "Placeholder" and node["function"] != graph.root:
        position = graph.functions[node["function"]]["inputs"].index(src)
        found: set[str] = set()
        for caller_id, _ in graph.callers(node["function"]):
            inp = graph.argument_source(graph.node(caller_id), position)
            found |= _starts(graph, inp["src"], inp["index"], seen) if inp else {"?"}
        return found
    return {src}


def _went_through(graph: OpGraph, src: str, index: int, seen: set, types: frozenset) -> bool:
    """Whether the list a handle holds went through an op of ``types`` since it was made: through updates,
    identities, while loops (what went in and what the body hands back) and function arguments."""
    if (src, index) in seen:
        return False
    seen.add((src, index))
    node = graph.node(src)
    if node["type"] in types:
        return True
    if node["type"] in HANDLE_UPDATES or node["type"] in PASS_THROUGH:
        handle = _input(node, "input_handle") or (node["inputs"][0] if node["inputs"] else None)
        return handle is not None and _went_through(graph, handle["src"], handle["index"], seen, types)
    if node["type"] in WHILE_OPS:
        (body,) = node["calls"]["body"]
        back = graph.functions[body]["outputs"][index]
        inp = node["inputs"][index]
        return _went_through(graph, back[0], back[1], seen, types) or \
            _went_through(graph, inp["src"], inp["index"], seen, types)
    if node["type"] == "Placeholder" and node["function"] != graph.root:
        position = graph.functions[node["function"]]["inputs"].index(src)
        sources = [graph.argument_source(graph.node(caller_id), position)
                   for caller_id, _ in graph.callers(node["function"])]
        return any(_went_through(graph, inp["src"], inp["index"], seen, types) for inp in sources if inp)
    return False


LIST_SIZE_READERS = WHOLE_LIST_READERS


def sized_after_pop(graph: OpGraph):
    """Ops that read a list's length (or stack it) after elements were popped from it: XLA keeps the
    list's buffer, so its length does not go down (measured: 2 elements, 2 pops: length 0 without
    XLA, 2 with it; the stacked list keeps the popped rows). A read no result needs is left out: XLA drops it
    (measured: the length after a pop under a tape whose gradient is None compiles and runs)."""
    kept = kept_nodes(graph)
    for node in graph.nodes():
        if node["type"] in LIST_SIZE_READERS and node["inputs"] and node["id"] in kept:
            handle = node["inputs"][0]
            if _went_through(graph, handle["src"], handle["index"], set(), frozenset({"TensorListPopBack"})):
                yield node
