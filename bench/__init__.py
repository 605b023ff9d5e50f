"""Throughput benchmark: our TPUEstimator against a hand-written tf.function loop and Keras fit.

Entry point: `python bench/throughput.py --help`. The parent process (plan, launcher, report)
never imports TensorFlow; every measured run happens in its own child process (worker).
"""
