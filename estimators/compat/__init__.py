"""What tf.estimator and TF1 code expects inside model_fn and input_fn, provided on TensorFlow >= 2.16."""
