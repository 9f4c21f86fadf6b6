"""xlalint: find what keeps TensorFlow code from compiling under XLA, before the run."""

from typing import TYPE_CHECKING

from xlalint.version import VERSION as __version__

if TYPE_CHECKING:  # what __getattr__ gives, for type checkers (the package ships py.typed)
    from xlalint.api import assert_xla_compatible, check
    from xlalint.core.results import Entry, Finding, Report

__all__ = ["Entry", "Finding", "Report", "__version__", "assert_xla_compatible", "check"]


def __getattr__(name: str):
    """The API on first use: the tracing server and other children import the package without it
    (libcst, networkx and the rules take a second to import, before TensorFlow even starts)."""
    if name in ("Entry", "Finding", "Report", "assert_xla_compatible", "check"):
        from xlalint import api

        return getattr(api, name)
    raise AttributeError(f"module 'xlalint' has no attribute {name!r}")
