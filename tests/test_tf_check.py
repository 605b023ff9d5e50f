"""Importing the engine without TensorFlow >= 2.16 is one clear error that says what to install."""

import pytest
import tensorflow as tf

from estimators._tf_check import check_installed_version, require_tensorflow


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
    for name in estimators.__all__:
        assert getattr(estimators, name) is not None, name
    assert not hasattr(estimators, "no_such_submodule")
    assert callable(estimators.preflight) and estimators.preflight.__name__ == "preflight"
    assert estimators.export.PredictOutput.__name__ == "PredictOutput"  # a submodule, on first use
    with pytest.raises(AttributeError, match="has no attribute 'Estimater'"):
        estimators.Estimater  # noqa: B018


def test_an_installed_tensorflow_older_than_2_16_is_refused_before_it_is_imported(monkeypatch):
    """`import estimators` before TensorFlow reads the installed version from package metadata (no import)."""
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "packages_distributions", lambda: {"tensorflow": ["tensorflow_cpu"]})
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "2.15.1")
    with pytest.raises(ImportError, match=r"needs TensorFlow >= 2.16 \(Keras 3\), found 2.15.1"):
        check_installed_version()
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "2.21.0")
    check_installed_version()


def test_a_tensorflow_build_under_another_distribution_name_is_checked_too(monkeypatch):
    """TensorFlow's own distribution names are looked up first (a few ms); any other build that installs the
    `tensorflow` package is found through the full metadata scan."""
    import importlib.metadata

    def version(name):
        if name != "my-tensorflow-build":
            raise importlib.metadata.PackageNotFoundError(name)
        return "2.15.0"

    monkeypatch.setattr(importlib.metadata, "packages_distributions", lambda: {"tensorflow": ["my-tensorflow-build"]})
    monkeypatch.setattr(importlib.metadata, "version", version)
    with pytest.raises(ImportError, match=r"found 2.15.0"):
        check_installed_version()
