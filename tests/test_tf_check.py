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
