"""LinearModel: 2.15's Keras linear model over (v2) feature columns, one weight matrix per column plus a bias.

Built in a TF1 graph it creates `<name>/<column>/weights` and `<name>/bias_weights` with
tf.compat.v1.get_variable, the names 2.15's linear estimators saved; a categorical column's weights are looked
up from its ids, combined by `sparse_combiner`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import tensorflow as tf

_COMBINERS = ("sum", "mean", "sqrtn")
_V1_COLUMNS_MESSAGE = (
    "Received a feature column from TensorFlow v1, but this is a TensorFlow v2 Estimator. Please either use v2 "
    "feature columns (accessible via tf.feature_column.* in TF 2.x) with this Estimator, or switch to a v1 "
    "Estimator for use with v1 feature columns (accessible via tf.compat.v1.estimator.* and "
    "tf.compat.v1.feature_column.*, respectively.")


def _keras() -> Any:
    try:
        import tf_keras
    except ImportError as err:  # pragma: no cover - depends on the install
        raise ImportError("LinearModel is a Keras 2 model, as in tf.estimator 2.15: install tf_keras "
                          "(pip install 'tpu-estimators[legacy]', or pip install --no-deps tf_keras).") from err
    return tf_keras


def _fc() -> Any:
    return tf.compat.v2.__internal__.feature_column


def is_v2_columns(feature_columns: Iterable) -> bool:
    """True when every column is a TF2 feature column (tf.feature_column.*), as 2.15's V2 estimators required."""
    return all(isinstance(column, _fc().FeatureColumn) for column in feature_columns)


def check_v2_columns(feature_columns: Iterable) -> None:
    """2.15's ValueError for a TF1 feature column (tf.compat.v1.feature_column.* private kinds) in a V2 model."""
    if not is_v2_columns(feature_columns):
        raise ValueError(_V1_COLUMNS_MESSAGE)


def _is_categorical(column: Any) -> bool:
    return hasattr(column, "num_buckets") and hasattr(column, "get_sparse_tensors")


def _scope_name(column: Any) -> str:
    """The column's variable scope: its name with characters a scope cannot hold (':') made '_'."""
    return column.name.replace(":", "_")


def sorted_columns(feature_columns: Any) -> list:
    """The columns sorted by name (2.15's order of variables and sums); a duplicate name is a ValueError."""
    if isinstance(feature_columns, dict):
        raise ValueError("Expected feature_columns to be iterable, found dict.")
    columns = [feature_columns] if hasattr(feature_columns, "name") else list(feature_columns)
    if not columns:
        raise ValueError("Feature columns must not be empty.")
    by_name: dict = {}
    for column in columns:
        if not (_is_categorical(column) or isinstance(column, _fc().DenseColumn)):
            raise ValueError(f"Items of feature_columns must be either a DenseColumn or CategoricalColumn. "
                             f"Given: {column}")
        if column.name in by_name:
            raise ValueError(f"Duplicate feature column name found for columns: {by_name[column.name]} and "
                             f"{column}. This usually means that these columns refer to same base feature. Either "
                             "one must be discarded or a duplicated but renamed item must be inserted in features "
                             "dict.")
        by_name[column.name] = column
    return [by_name[name] for name in sorted(by_name)]


def _weighted_sum(column: Any, cache: Any, state_manager: Any, weights: tf.Variable, combiner: str) -> tf.Tensor:
    """One column's [batch, units] contribution: dense values @ weights, or its ids' weight rows combined."""
    if _is_categorical(column):
        pair = column.get_sparse_tensors(cache, state_manager)
        ids = tf.sparse.reshape(pair.id_tensor, [pair.id_tensor.dense_shape[0], -1])
        id_weights = pair.weight_tensor
        if id_weights is not None:
            id_weights = tf.sparse.reshape(id_weights, [id_weights.dense_shape[0], -1])
        return tf.nn.safe_embedding_lookup_sparse(weights, ids, sparse_weights=id_weights, combiner=combiner,
                                                  name="weighted_sum")
    values = column.get_dense_tensor(cache, state_manager)
    values = tf.reshape(values, (tf.shape(values)[0], column.variable_shape.num_elements()))
    return tf.matmul(values, weights, name="weighted_sum")


def _check_batch_sizes(sums: list, columns: list) -> None:
    """A ValueError when two columns' static batch sizes differ (they would not add up)."""
    seen = None
    for column, value in zip(columns, sums, strict=True):
        size = value.shape[0] if value.shape.rank else None
        if size is None:
            continue
        if seen is None:
            seen = (column.name, size)
        elif seen[1] != size:
            raise ValueError(f"Batch size (first dimension) of each feature must be same. Batch size of columns "
                             f"({seen[0]}, {column.name}): ({seen[1]}, {size})")


def _layer_class() -> type:
    keras = _keras()

    class LinearModelLayer(keras.layers.Layer):
        """The weights and the weighted sum; variables in variable scope `<name>/<column>`."""

        def __init__(self, feature_columns: Any, units: int = 1, sparse_combiner: str = "sum",
                     trainable: bool = True, name: str | None = None, **kwargs):
            super().__init__(name=name, trainable=trainable, **kwargs)
            if sparse_combiner not in _COMBINERS:
                raise ValueError(f"sparse_combiner must be one of {_COMBINERS}, got {sparse_combiner!r}.")
            self._feature_columns = sorted_columns(feature_columns)
            self._units = units
            self._sparse_combiner = sparse_combiner
            self._state_manager = _fc().StateManager(self, self.trainable)
            self.bias = None

        def build(self, _):
            zeros = keras.initializers.Zeros()
            with tf.compat.v1.variable_scope(self.name, auxiliary_name_scope=False):
                for column in self._feature_columns:
                    with tf.compat.v1.variable_scope(_scope_name(column), auxiliary_name_scope=False):
                        column.create_state(self._state_manager)
                        rows = column.num_buckets if _is_categorical(column) else \
                            column.variable_shape.num_elements()
                        self._state_manager.create_variable(column, name="weights", dtype=tf.float32,
                                                            shape=(rows, self._units), initializer=zeros,
                                                            trainable=self.trainable)
                self.bias = self.add_weight(name="bias_weights", dtype=tf.float32, shape=[self._units],
                                            initializer=zeros, trainable=self.trainable, use_resource=True,
                                            getter=tf.compat.v1.get_variable)
            super().build(None)

        def call(self, features):
            if not isinstance(features, dict):
                raise ValueError(f"We expected a dictionary here. Instead we got: {features}")
            cache = _fc().FeatureTransformationCache(features)
            sums = []
            for column in self._feature_columns:
                with tf.name_scope(_scope_name(column)):
                    weights = self._state_manager.get_variable(column, "weights")
                    sums.append(_weighted_sum(column, cache, self._state_manager, weights, self._sparse_combiner))
            _check_batch_sizes(sums, self._feature_columns)
            no_bias = tf.math.add_n(sums, name="weighted_sum_no_bias")
            return tf.nn.bias_add(no_bias, self.bias, name="weighted_sum")

    LinearModelLayer.__qualname__ = "LinearModelLayer"
    return LinearModelLayer


def _model_class() -> type:
    keras = _keras()
    layer_class = _layer_class()

    class LinearModel(keras.Model):
        """tf.estimator 2.15's LinearModel: logits = sum over columns of (column input @ weights) + bias."""

        def __init__(self, feature_columns: Any, units: int = 1, sparse_combiner: str = "sum",
                     trainable: bool = True, name: str | None = None, **kwargs):
            super().__init__(name=name, **kwargs)
            self.layer = layer_class(feature_columns, units, sparse_combiner, trainable, name=self.name, **kwargs)

        def call(self, features):
            return self.layer(features)

        @property
        def bias(self):
            return self.layer.bias

    LinearModel.__qualname__ = "LinearModel"
    return LinearModel


_CLASSES: dict = {}


def linear_model_class() -> type:
    """The LinearModel class, made once on first use (it subclasses tf_keras.Model, an optional install)."""
    if "model" not in _CLASSES:
        _CLASSES["model"] = _model_class()
    return _CLASSES["model"]
