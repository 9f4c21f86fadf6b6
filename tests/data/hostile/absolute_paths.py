"""Writes, removes, renames, chmods and touches files of its own folder by absolute paths."""
import os
import shutil

import tensorflow as tf  # noqa: F401 - xlalint checks only files that use TensorFlow

HERE = os.path.dirname(os.path.realpath(__file__))
BESIDE = os.path.join(HERE, "beside.txt")
for attempt in (lambda: open(os.path.join(HERE, "new.txt"), "w"),
                lambda: os.remove(BESIDE),
                lambda: os.rename(BESIDE, os.path.join(HERE, "moved.txt")),
                lambda: os.chmod(BESIDE, 0o777),
                lambda: os.utime(BESIDE, (0, 0)),
                lambda: shutil.rmtree(os.path.join(HERE, "data"))):
    try:
        attempt()
    except OSError:
        pass
