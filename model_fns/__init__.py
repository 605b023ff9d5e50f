"""Model functions for the TPUEstimator engine: `get_model(name).model_fn`, plus defaults.

Importing the package registers the built-in models (cnn for Fashion-MNIST, resnet for CIFAR-10).
"""

from model_fns import cnn, resnet  # noqa: F401 - imported to register
from model_fns.registry import ModelInfo, get_model, model_names, register

__all__ = ["ModelInfo", "get_model", "model_names", "register"]
