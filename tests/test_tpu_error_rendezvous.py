"""ErrorRendezvous: errors of several threads collected, the most telling one re-raised."""

import pytest
import tensorflow as tf

from estimators.tpu.error_rendezvous import ErrorRendezvous


def test_an_error_caught_in_a_source_is_raised_later():
    rendezvous = ErrorRendezvous(1)
    with rendezvous.catch_errors(source="infeed"):
        raise tf.errors.InternalError(None, None, "bad file")
    with pytest.raises(tf.errors.InternalError, match="bad file"):
        rendezvous.raise_errors()


def test_aborted_and_unavailable_errors_are_not_recorded():
    rendezvous = ErrorRendezvous(1)
    with rendezvous.catch_errors(source="infeed"):
        raise tf.errors.AbortedError(None, None, "aborted")
    rendezvous.raise_errors()


def test_a_telling_error_wins_over_a_cancellation():
    rendezvous = ErrorRendezvous(2)
    with rendezvous.catch_errors(source="outfeed"):
        raise tf.errors.CancelledError(None, None, "cancelled")
    with rendezvous.catch_errors(source="infeed"):
        raise ValueError("the real cause")
    with pytest.raises(ValueError, match="the real cause"):
        rendezvous.raise_errors()


def test_finished_sources_raise_nothing():
    rendezvous = ErrorRendezvous(2)
    rendezvous.record_done("infeed")
    rendezvous.record_done("outfeed")
    rendezvous.raise_errors(timeout_sec=1)
