"""A thread that never ends, SIGTERM ignored, and a loop that never ends."""
import signal
import threading
import time

import tensorflow as tf  # noqa: F401 - xlalint checks only files that use TensorFlow

signal.signal(signal.SIGTERM, signal.SIG_IGN)
threading.Thread(target=lambda: time.sleep(3600)).start()
while True:
    time.sleep(0.1)
