"""PredictionKeys: the names tf.estimator 2.15's heads gave the entries of `predict()`'s dicts (public contract)."""


class PredictionKeys:
    """Prediction key strings, as 2.15's `canned.prediction_keys.PredictionKeys`."""

    CLASSES = "classes"
    CLASS_IDS = "class_ids"
    ALL_CLASSES = "all_classes"
    ALL_CLASS_IDS = "all_class_ids"
    LOGISTIC = "logistic"
    LOGITS = "logits"
    PREDICTIONS = "predictions"
    PROBABILITIES = "probabilities"
    TOP_K = "top_k"
