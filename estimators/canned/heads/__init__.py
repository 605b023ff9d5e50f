"""tf.estimator 2.15's heads: logits in, loss, predictions, metrics and export signatures out."""

from estimators.canned.heads.base import Head
from estimators.canned.heads.binary import BinaryClassHead
from estimators.canned.heads.multi_class import MultiClassHead
from estimators.canned.heads.multi_head import MultiHead
from estimators.canned.heads.multi_label import MultiLabelHead
from estimators.canned.heads.regression import LogisticRegressionHead, PoissonRegressionHead, RegressionHead

__all__ = ["BinaryClassHead", "Head", "LogisticRegressionHead", "MultiClassHead", "MultiHead", "MultiLabelHead",
           "PoissonRegressionHead", "RegressionHead"]
