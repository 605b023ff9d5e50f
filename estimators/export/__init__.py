"""SavedModel export for serving (tf.estimator.export's names)."""

from estimators.export.saved_model import ServingInputReceiver, build_raw_serving_input_receiver_fn

__all__ = ["ServingInputReceiver", "build_raw_serving_input_receiver_fn"]
