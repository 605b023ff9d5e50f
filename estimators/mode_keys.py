"""The three modes a model_fn is called in, spelled as tf.estimator spelled them."""


class ModeKeys:
    """String constants for the `mode` argument of a model_fn (same values as tf.estimator)."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"

    ALL = (TRAIN, EVAL, PREDICT)
