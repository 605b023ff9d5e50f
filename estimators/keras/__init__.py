"""model_to_estimator: a Keras model (Keras 3 or tf_keras) as an Estimator, its weights, losses and errors."""
