"""One clear error when TensorFlow is missing or older than 2.16 (Keras 3 and tf.distribute needed)."""

MINIMUM = (2, 16)


def _parts(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".")[:2] if p.isdigit())


def _too_old(version: str) -> ImportError:
    return ImportError(
        f"estimators needs TensorFlow >= 2.16 (Keras 3), found {version}. Upgrade with "
        "`pip install -U 'tensorflow>=2.16'`; for TF 2.15 and older use tf.estimator itself."
    )


# The distributions TensorFlow's own builds install the `tensorflow` package under.
_KNOWN_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-tpu", "tensorflow-gpu", "tensorflow-macos",
                        "tensorflow-intel", "tensorflow-aarch64", "tf-nightly", "tf-nightly-cpu", "tf-nightly-tpu")


def _versions(names) -> list[str]:
    import importlib.metadata

    found = []
    for name in names:
        try:
            found.append(importlib.metadata.version(name))
        except importlib.metadata.PackageNotFoundError:
            pass
    return found


def check_installed_version() -> None:
    """The same refusal from the installed packages' metadata, without importing TensorFlow (seconds): for
    `import estimators` before TensorFlow, so `from estimators.estimator import ...` is checked too. With no
    TensorFlow installed nothing is said here: main.py answers --help without it; first use says what to do."""
    import importlib.metadata

    try:
        versions = _versions(_KNOWN_DISTRIBUTIONS)  # a few ms; a full metadata scan costs ~150 ms per import
        if not versions:  # another build, or none: every distribution that installs a `tensorflow` package
            versions = _versions(importlib.metadata.packages_distributions().get("tensorflow", ()))
    except Exception:  # unreadable metadata: first use checks the imported module instead
        return
    if versions and max(_parts(v) for v in versions) < MINIMUM:
        raise _too_old(max(versions, key=_parts))


def require_tensorflow() -> None:
    try:
        import tensorflow as tf
    except ImportError:
        raise ImportError(
            "estimators needs TensorFlow >= 2.16, which is not installed. Install it with "
            "`pip install -e .[cpu]` (or .[gpu], or tensorflow-tpu on a TPU VM: see BUILD_NOTES.md)."
        ) from None
    if _parts(tf.__version__) < MINIMUM:
        raise _too_old(tf.__version__)
