"""TPUEstimator-style input functions: `get_dataset(name).input_fn(mode, data_dir)(params)`.

Importing the package registers the built-in datasets (fashion_mnist, cifar10, synthetic).
"""

from input_fns import cifar10, fashion_mnist, synthetic  # noqa: F401 - imported to register
from input_fns.errors import DatasetNotFoundError
from input_fns.registry import DatasetSource, dataset_names, get_dataset, register

__all__ = [
    "DatasetNotFoundError",
    "DatasetSource",
    "dataset_names",
    "get_dataset",
    "register",
]
