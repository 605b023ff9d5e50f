"""model_fns that wrap their features in Keras's `Input(tensor=features)` (tensorflow/tpu's cifar_keras, 2018's
Colab articles): what each Keras makes of it, recognised by the errors the two Kerases raise.

tf_keras's Input(tensor=...) in a tf.function builds a functional model of symbolic tensors, which TensorFlow ops
then refuse; in a TF1 graph, where tf.estimator ran model_fn, its layers return the real tensors, so such a
model_fn runs on the graph path. Keras 3 wraps only its own symbolic tensors, in any graph: a clear error.
"""

from __future__ import annotations

TF_KERAS_SYMBOLIC = "an intermediate TF-Keras symbolic input/output"  # in tf_keras's TypeError
KERAS3_INPUT_TENSOR = "Argument `input_tensor` must be a KerasTensor"  # in Keras 3's ValueError


def graph_path_reason(err: BaseException) -> str | None:
    """Why model_fn needs the graph path, when `err` is tf_keras refusing its Input(tensor=...) model; else None."""
    if isinstance(err, TypeError) and TF_KERAS_SYMBOLIC in str(err):
        return "it wraps its features in tf_keras's Input(tensor=...), whose layers give tensors only in a TF1 graph"
    return None


def keras3_input_error(err: BaseException) -> ValueError | None:
    """The error naming the fix when `err` is Keras 3 refusing Input(tensor=<a TensorFlow tensor>); else None."""
    if not isinstance(err, ValueError) or KERAS3_INPUT_TENSOR not in str(err):
        return None
    return ValueError(
        "model_fn calls keras.Input(tensor=features): Keras 3 wraps only its own symbolic tensors, not the tensors "
        "input_fn gives model_fn. Either call the layers on features directly (drop the Input line: "
        "`x = layers.Conv2D(...)(features)`), or run the program with Keras 2 as tf.estimator did: pip install "
        "--no-deps 'tf_keras==<your TensorFlow X.Y>.*' and set TF_USE_LEGACY_KERAS=1 before TensorFlow is imported.")
