"""Importing the engine without TensorFlow >= 2.16 is one clear error that says what to install."""

import pytest
import tensorflow as tf

from estimators._tf_check import require_tensorflow


def test_tensorflow_older_than_2_16_is_refused_with_the_fix(monkeypatch):
    monkeypatch.setattr(tf, "__version__", "2.15.1")
    with pytest.raises(ImportError, match=r"needs TensorFlow >= 2.16 \(Keras 3\), found 2.15.1.*pip install"):
        require_tensorflow()


def test_current_tensorflow_is_accepted():
    require_tensorflow()


def test_a_public_name_checks_tensorflow_when_first_used(monkeypatch):
    """The package loads its names on first use (main.py imports its pure-Python modules before TensorFlow)."""
    import estimators

    monkeypatch.setattr(tf, "__version__", "2.15.1")
    monkeypatch.delitem(vars(estimators), "Estimator", raising=False)
    with pytest.raises(ImportError, match=r"needs TensorFlow >= 2.16 \(Keras 3\), found 2.15.1"):
        estimators.Estimator  # noqa: B018


def test_the_lazy_package_lists_and_reaches_every_public_name():
    import estimators
    import estimators.preflight.report  # the subpackage named like the function; the function stays

    assert set(estimators.__all__) <= set(dir(estimators))
    assert callable(estimators.preflight) and estimators.preflight.__name__ == "preflight"
    assert estimators.export.PredictOutput.__name__ == "PredictOutput"  # a submodule, on first use
    with pytest.raises(AttributeError, match="has no attribute 'Estimater'"):
        estimators.Estimater  # noqa: B018
