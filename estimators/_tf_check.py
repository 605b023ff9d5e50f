"""One clear error when TensorFlow is missing or older than 2.16 (Keras 3 and tf.distribute needed)."""

MINIMUM = (2, 16)


def require_tensorflow() -> None:
    try:
        import tensorflow as tf
    except ImportError:
        raise ImportError(
            "estimators needs TensorFlow >= 2.16, which is not installed. Install it with "
            "`pip install -e .[cpu]` (or .[gpu], or tensorflow-tpu on a TPU VM: see BUILD_NOTES.md)."
        ) from None
    parts = tuple(int(p) for p in tf.__version__.split(".")[:2] if p.isdigit())
    if parts < MINIMUM:
        raise ImportError(
            f"estimators needs TensorFlow >= 2.16 (Keras 3), found {tf.__version__}. Upgrade with "
            "`pip install -U 'tensorflow>=2.16'`; for TF 2.15 and older use tf.estimator itself."
        )
