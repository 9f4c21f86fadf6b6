"""Which ``tf.data`` datasets feed a captured call, their relaxed specs, and which end on a partial batch.

A ``batch``/``padded_batch`` the user's code calls without ``drop_remainder=True`` on a dataset
whose size is not a multiple of the batch (or not known) is remembered with its line; a ``for``
loop's iterator is tied to the dataset it walks (through ``map``, ``prefetch``... to that batch);
the element it gave last is matched, tensor by tensor, with a captured call's arguments. Any
dataset's ``element_spec`` is its relaxed spec (``None`` where a batch can be smaller), shown
beside the concrete shapes of the first call it feeds.
"""

from __future__ import annotations

import os
import weakref

import tensorflow as tf

from xlalint.backend.run import hooks as run_hooks
from xlalint.backend.discover import spec_json
from xlalint.backend.frames import is_user_file
from xlalint.core.wire import PartialBatch

INFINITE = int(tf.data.INFINITE_CARDINALITY)  # repeated forever: no last batch


class Batches:
    """The partial-batch datasets of one run and the elements their loops gave."""

    def __init__(self):
        self._partial: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # batched dataset -> its batch
        self._feeds: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # iterator -> its dataset's batch
        self._relaxed: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # iterator -> its dataset's spec
        self._last: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # iterator -> its last element

    def install(self) -> None:
        run_hooks.on_dataset_batch(self._on_batch)
        run_hooks.on_dataset_iter(self._on_iter)

    def _on_batch(self, batched, unbatched, batch_size, drop_remainder, caller) -> None:
        if drop_remainder is not False or not is_user_file(caller.f_code.co_filename):
            return
        try:
            size, count = int(batch_size), int(unbatched.cardinality())
        except (TypeError, ValueError):  # a batch size only known in a graph
            return
        if count == INFINITE or size <= 0 or (count >= 0 and count % size == 0):
            return
        self._partial[batched] = {"site": [os.path.realpath(caller.f_code.co_filename), caller.f_lineno,
                                           caller.f_code.co_name],
                                  "batch_size": size, "size": count if count >= 0 else None,
                                  "left": count % size if count >= 0 else None}

    def _on_iter(self, iterator, dataset) -> None:
        specs = [s for s in tf.nest.flatten(dataset.element_spec) if isinstance(s, tf.TensorSpec)]
        self._relaxed[iterator] = [spec_json(s) for s in specs]
        batch = self._batch_of(dataset)
        if batch is not None:
            self._feeds[iterator] = {**batch, "relaxed": self._relaxed[iterator]}

    def _batch_of(self, dataset) -> dict | None:
        """The partial batch ``dataset`` is made from, searching its inputs breadth first."""
        queue, seen = [dataset], set()
        while queue:
            current = queue.pop(0)
            if id(current) in seen:
                continue
            seen.add(id(current))
            if current in self._partial:
                return self._partial[current]
            queue += run_hooks.dataset_inputs(current)
        return None

    def gave(self, iterator, element) -> None:
        """The element a loop's ``next()`` just returned."""
        if iterator in self._relaxed:
            self._last[iterator] = tf.nest.flatten(element)

    def feeding(self, args, kwargs) -> tuple[list[PartialBatch], list[list[dict]]]:
        """``(partial batches, relaxed specs)`` of the loops whose last elements are among these call arguments."""
        given = {id(value) for value in tf.nest.flatten((args, kwargs))}
        iterators = [iterator for iterator, last in self._last.items() if any(id(value) in given for value in last)]
        return ([self._feeds[i] for i in iterators if i in self._feeds],
                [self._relaxed[i] for i in iterators if i in self._relaxed])
