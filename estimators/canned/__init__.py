"""tf.estimator 2.15's canned estimators and heads, written as model_fns on this engine's graph path."""

from estimators.canned.baseline import BaselineClassifier, BaselineEstimator, BaselineRegressor
from estimators.canned.dnn import DNNClassifier, DNNEstimator, DNNRegressor
from estimators.canned.dnn_linear_combined import (
    DNNLinearCombinedClassifier,
    DNNLinearCombinedEstimator,
    DNNLinearCombinedRegressor,
)
from estimators.canned.heads import (
    BinaryClassHead,
    Head,
    LogisticRegressionHead,
    MultiClassHead,
    MultiHead,
    MultiLabelHead,
    PoissonRegressionHead,
    RegressionHead,
)
from estimators.canned.linear import LinearClassifier, LinearEstimator, LinearRegressor
from estimators.canned.parsing import classifier_parse_example_spec, regressor_parse_example_spec

__all__ = [
    "BaselineClassifier", "BaselineEstimator", "BaselineRegressor", "BinaryClassHead", "DNNClassifier",
    "DNNEstimator", "DNNLinearCombinedClassifier", "DNNLinearCombinedEstimator", "DNNLinearCombinedRegressor",
    "DNNRegressor", "Head", "LinearClassifier", "LinearEstimator", "LinearRegressor", "LogisticRegressionHead",
    "MultiClassHead", "MultiHead", "MultiLabelHead", "PoissonRegressionHead", "RegressionHead",
    "classifier_parse_example_spec", "regressor_parse_example_spec",
]
