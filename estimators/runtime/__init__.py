"""Running model_fn under tf.distribute: create-once variables, per-replica steps, one strategy's state."""
