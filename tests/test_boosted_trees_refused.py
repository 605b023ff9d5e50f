"""tf.estimator's boosted trees (gone since 2.10) are refused with one error naming what to use instead."""

import pytest

import estimators
from estimators.canned import boosted_trees


@pytest.mark.parametrize("name", ["BoostedTreesClassifier", "BoostedTreesRegressor"])
def test_public_boosted_trees_estimators_refuse_naming_ydf_and_tfdf(name):
    cls = getattr(estimators, name)
    with pytest.raises(NotImplementedError, match=rf"{name} is not available: .*ydf.*tensorflow_decision_forests"):
        cls(feature_columns=[], n_batches_per_layer=1, train_in_memory=True)


@pytest.mark.parametrize("fn", [boosted_trees.boosted_trees_classifier_train_in_memory,
                                boosted_trees.boosted_trees_regressor_train_in_memory])
def test_in_memory_training_functions_refuse_too(fn):
    with pytest.raises(boosted_trees.BoostedTreesUnavailableError, match="removed its boosted trees in 2.10"):
        fn(input_fn=lambda: None, feature_columns=[])


def test_experimental_boosted_trees_estimator_refuses():
    with pytest.raises(boosted_trees.BoostedTreesUnavailableError, match="BoostedTreesEstimator is not available"):
        boosted_trees.BoostedTreesEstimator(feature_columns=[], n_batches_per_layer=1, head=None)
