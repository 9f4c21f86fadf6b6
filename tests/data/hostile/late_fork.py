"""A forked child that writes into the tree after its parent is done."""
import os
import time

import tensorflow as tf  # noqa: F401 - xlalint checks only files that use TensorFlow

HERE = os.path.dirname(os.path.realpath(__file__))
if os.fork() == 0:
    time.sleep(2)
    try:
        with open(os.path.join(HERE, "late.txt"), "w") as out:
            out.write("late\n")
    finally:
        os._exit(0)
