"""The graph-and-session path: TF1 model_fns run on TensorFlow's own v1 machinery, as tf.estimator ran them.

tf.Graph per call, Scaffold, Saver, MonitoredSession and SessionRunHooks; checkpoints go through the
Checkpointer so they are published verified, as on the TF2 path.
"""
