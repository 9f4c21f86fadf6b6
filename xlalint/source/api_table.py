"""The shipped API table of ``--static``: public TensorFlow API -> the ops one call creates.

Generated from TensorFlow by ``tools/gen_api_table.py`` (see there how); read here without
TensorFlow. Only APIs with an op that has no XLA kernel, or a data-dependent output shape, are listed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from xlalint.core import tables
from xlalint.core.support import installed_tensorflow


@dataclass(frozen=True)
class ApiInfo:
    """What calling ``api`` does to an XLA compilation on one device."""

    api: str
    ops: tuple[str, ...]  # every op one call creates
    unsupported: tuple[str, ...]  # ops without an XLA kernel on the device
    dynamic_shape: bool  # creates an op whose output shape depends on data
    stateful: bool  # never constant-folded, even on constant arguments
    max_args: int | None  # the record holds only for calls with at most this many arguments


@lru_cache(maxsize=None)
def load_table(tensorflow: str | None = None) -> dict:
    """The table for ``tensorflow`` (default: the installed version, read without importing it);
    the closest shipped table when there is none for that version (``xlalint.core.tables``)."""
    version = tables.closest(tables.API, tensorflow or installed_tensorflow())
    return json.loads(tables.path(tables.API, version).read_text(encoding="utf-8"))


def no_kernel(table: dict, device: str) -> frozenset[str]:
    """Op types of the table with no XLA kernel on ``device`` (tpu: the cpu list, as in ``xlalint.core.support``)."""
    missing = table["no_kernel"]
    return frozenset(missing.get(device, missing["cpu"]))


def lookup(table: dict, api: str, missing: frozenset[str],
           keywords: dict[str, str | bytes] | None = None) -> ApiInfo | None:
    """``api`` (e.g. ``tf.strings.length``) when a call blocks or warns on the device ``missing``
    is for; ``keywords``: the call's string (or bytes) keyword arguments (``method="area"``)."""
    record = table["apis"].get(api)
    if record is None:
        return None
    ops = list(record["ops"])
    for keyword, blocked in record.get("by_keyword", {}).items():
        ops += [op for op in blocked.get((keywords or {}).get(keyword), ()) if op not in ops]
    unsupported = tuple(op for op in ops if op in missing)
    if not unsupported and not record["dynamic_shape"]:
        return None
    return ApiInfo(api, tuple(ops), unsupported, record["dynamic_shape"], record["stateful"],
                   record.get("max_args"))
