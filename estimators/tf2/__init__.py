"""The TF2 path: model_fn in tf.function under tf.distribute, driven from Python between compiled loops.

executor.py is its entry (train, evaluate, predict, export over an EngineContext); train_session.py is one
train() call's state, which the controller (controller.py) runs to its end.
"""
