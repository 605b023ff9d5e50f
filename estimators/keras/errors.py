"""FormattedKeyError: the KeyError model_to_estimator raises for missing keys, with its message printed as written.

Python shows a KeyError's message through repr() (quotes, "\\n" escaped: https://bugs.python.org/issue2651),
so 2.15's keras_lib raised this subclass for its multi-line "Missed keys" messages. It is a ValueError
too, so code that catches this project's ValueError for a bad input structure still does.

model_fn runs inside tf.function, whose AutoGraph re-raises an error from traced code as the same
type only when it can rebuild it from a message: a type whose constructor is Exception's own is one
(a KeyError subclass with its own constructor would come out as a StagingError). So the class keeps
Exception.__init__ and reads its message from args.
"""

from __future__ import annotations


class FormattedKeyError(KeyError, ValueError):
    """A KeyError (and ValueError) whose str() is its message, newlines and all: FormattedKeyError(message)."""

    __init__ = Exception.__init__  # see the module docstring: AutoGraph rebuilds such errors as their own type

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __str__(self) -> str:
        return self.message
