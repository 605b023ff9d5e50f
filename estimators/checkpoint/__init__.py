"""Checkpoints: names, saving and restoring, fallbacks, warm starts and tf.estimator model_dirs."""
