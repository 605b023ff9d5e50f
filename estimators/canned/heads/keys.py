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
LOSS_REGULARIZATION = "regularization_loss"
ACCURACY = "accuracy"
ACCURACY_BASELINE = "accuracy_baseline"
PRECISION = "precision"
RECALL = "recall"
AUC = "auc"
AUC_PR = "auc_precision_recall"
LABEL_MEAN = "label/mean"
PREDICTION_MEAN = "prediction/mean"
ACCURACY_AT_THRESHOLD = "accuracy/positive_threshold_%g"
PRECISION_AT_THRESHOLD = "precision/positive_threshold_%g"
RECALL_AT_THRESHOLD = "recall/positive_threshold_%g"
PROBABILITY_MEAN_AT_CLASS = "probability_mean/class%d"
AUC_AT_CLASS = "auc/class%d"
AUC_PR_AT_CLASS = "auc_precision_recall/class%d"
PROBABILITY_MEAN_AT_NAME = "probability_mean/%s"
AUC_AT_NAME = "auc/%s"
AUC_PR_AT_NAME = "auc_precision_recall/%s"

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
