"""FormattedKeyError: a KeyError (and ValueError) printing its multi-line message as written, even from tf.function."""

import pytest
import tensorflow as tf

from estimators.keras.errors import FormattedKeyError


def test_its_str_is_the_message_with_real_newlines():
    error = FormattedKeyError("a\n\tMissed keys: ['b']")
    assert str(error) == "a\n\tMissed keys: ['b']" and error.message == str(error)


def test_it_is_a_key_error_and_a_value_error():
    assert issubclass(FormattedKeyError, KeyError) and issubclass(FormattedKeyError, ValueError)


def test_it_keeps_its_type_when_raised_while_tracing_a_tf_function():
    @tf.function
    def traced():
        raise FormattedKeyError("Missed keys: ['x']")

    with pytest.raises(FormattedKeyError, match="Missed keys"):
        traced()
