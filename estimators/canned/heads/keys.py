"""The export signature names and loss reductions tf.estimator 2.15's heads used (public contract); prediction and
metric names are canned.prediction_keys' and canned.metric_keys'."""

# Export signature keys.
SERVING_DEFAULT = "serving_default"
CLASSIFY = "classification"
REGRESS = "regression"
PREDICT = "predict"

# Loss reductions: the Keras (V2) spellings 2.15's heads took, and tf.compat.v1's (V1 canned estimators passed them).
AUTO = "auto"
SUM = "sum"
SUM_OVER_BATCH_SIZE = "sum_over_batch_size"
_REDUCTIONS = {"auto": AUTO, "sum": SUM, "weighted_sum": SUM, "sum_over_batch_size": SUM_OVER_BATCH_SIZE,
               "weighted_sum_over_batch_size": SUM_OVER_BATCH_SIZE}


def loss_reduction(value: object) -> str:
    """`value` (Keras' or tf.compat.v1's Reduction, or its string) as Keras' AUTO, SUM or SUM_OVER_BATCH_SIZE; else
    2.15's ValueError (NONE too: a head's training loss is one number)."""
    key = value.value if hasattr(value, "value") else value
    if not isinstance(key, str) or key not in _REDUCTIONS:
        raise ValueError(f"Invalid loss_reduction: {key}. See `tf.losses.Reduction` for valid options.")
    return _REDUCTIONS[key]
