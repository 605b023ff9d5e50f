"""The names tf.estimator 2.15's heads gave predictions, metrics and export signatures (public contract)."""

# Prediction keys.
LOGITS = "logits"
LOGISTIC = "logistic"
PROBABILITIES = "probabilities"
CLASS_IDS = "class_ids"
CLASSES = "classes"
ALL_CLASS_IDS = "all_class_ids"
ALL_CLASSES = "all_classes"
PREDICTIONS = "predictions"

# Metric keys.
LOSS = "loss"
LOSS_MEAN = "average_loss"
ACCURACY = "accuracy"
ACCURACY_BASELINE = "accuracy_baseline"
PRECISION = "precision"
RECALL = "recall"
AUC = "auc"
AUC_PR = "auc_precision_recall"
LABEL_MEAN = "label/mean"
PREDICTION_MEAN = "prediction/mean"

# Export signature keys.
SERVING_DEFAULT = "serving_default"
CLASSIFY = "classification"
REGRESS = "regression"
PREDICT = "predict"

# Loss reductions: the Keras (V2) spellings 2.15's canned estimators took, and the tf.compat.v1 ones.
SUM = "sum"
SUM_OVER_BATCH_SIZE = "sum_over_batch_size"
_REDUCTIONS = {"sum": SUM, "weighted_sum": SUM, "sum_over_batch_size": SUM_OVER_BATCH_SIZE,
               "weighted_sum_over_batch_size": SUM_OVER_BATCH_SIZE}


def loss_reduction(value: object) -> str:
    """`value` (Keras' or tf.compat.v1's Reduction, or its string) as SUM or SUM_OVER_BATCH_SIZE; else ValueError
    (2.15 refused NONE and AUTO for heads: a head's training loss is one number)."""
    key = str(getattr(value, "value", value))
    if key not in _REDUCTIONS:
        raise ValueError(f"Invalid loss_reduction: {value!r}. Use tf.losses.Reduction.SUM_OVER_BATCH_SIZE (the "
                         "default) or SUM; NONE and AUTO are not allowed for a head's training loss.")
    return _REDUCTIONS[key]
