"""xlalint: find what keeps TensorFlow code from compiling under XLA, before the run."""

from xlalint.api import assert_xla_compatible, check
from xlalint.version import VERSION as __version__

__all__ = ["__version__", "assert_xla_compatible", "check"]
