"""Hardware and input distribution: which tf.distribute strategy runs, and per-replica input pipelines."""
