"""Where keras.utils.get_file keeps downloads, so loaders can find data fetched earlier by Keras."""

from __future__ import annotations

import os


def keras_home() -> str:
    """$KERAS_HOME, else ~/.keras (Keras's own default)."""
    return os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
