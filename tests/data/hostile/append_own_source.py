"""Appends to its own source and overwrites it."""
import tensorflow as tf

with open(__file__, "a") as own:
    own.write("# appended\n")
with open(__file__, "w") as own:
    own.write("gone\n")
