"""Appends to its own source and overwrites it."""
import tensorflow as tf  # noqa: F401 - xlalint checks only files that use TensorFlow

with open(__file__, "a") as own:
    own.write("# appended\n")
with open(__file__, "w") as own:
    own.write("gone\n")
