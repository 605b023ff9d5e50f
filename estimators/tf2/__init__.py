"""The TF2 path: model_fn in tf.function under tf.distribute, driven from Python between compiled loops.

executor.py is its entry (train, evaluate, predict, export over an EngineContext); train_session.py is one
train() call's state, which training/controller.py runs to its end. Below them: state.py (a strategy's Runtime),
variable_store.py and naming.py (create-once variables under 2.15's names), steps.py and model_fn_call.py (the
per-replica steps around one model_fn call), predictions, the TF2 SavedModel, and the input iterators.
"""
