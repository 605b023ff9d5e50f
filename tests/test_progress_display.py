"""The progress renderer: a live bar on a terminal, plain lines elsewhere, compile and summary lines."""

import io
import logging

import pytest

from estimators.training import progress_display
from estimators.training.progress_display import DisplayOptions, ProgressDisplay, format_duration


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make(phase="train", total=600, stream=None, clock=None, **options):
    stream = stream if stream is not None else io.StringIO()
    clock = clock or Clock()
    display = ProgressDisplay(phase, total, opts=DisplayOptions(stream=stream, **options), clock=clock)
    return display, stream, clock


def screen(text: str) -> list[str]:
    """What a terminal shows: each line is what follows its last carriage return."""
    return [line.rsplit("\r", 1)[-1].rstrip() for line in text.split("\n")]


def test_terminal_gets_one_redrawn_line_with_step_loss_speed_and_eta(monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    display, stream, clock = make(stream=FakeTTY())
    clock.now = 10.0
    display.update(100, loss=0.5, examples_per_sec=400.0)
    clock.now = 20.0
    display.update(200, loss=0.31214, examples_per_sec=410.0)
    assert "\n" not in stream.getvalue()
    (line,) = screen(stream.getvalue())
    assert line.startswith("train [")
    assert "200/600 steps  33%" in line and "loss 0.3121" in line and "410 examples/sec" in line
    assert line.endswith("ETA 40s")  # 100 steps per 10 s since the first update; 400 steps left


def test_live_line_fits_the_terminal_width(monkeypatch):
    monkeypatch.setenv("COLUMNS", "50")
    display, stream, clock = make(stream=FakeTTY())
    for step in range(100, 700, 100):
        clock.now += 5
        display.update(step, loss=1.0 / step, examples_per_sec=12345.6, metrics={"accuracy": 0.5})
    drawn = [segment.rstrip() for segment in stream.getvalue().split("\r") if segment.strip()]
    assert drawn and all(len(segment) <= 49 for segment in drawn)


def test_eta_before_a_second_update_leaves_out_compile_time():
    display, stream, clock = make(stream=FakeTTY())
    clock.now = 4.0
    display.compiled(4.0)
    clock.now = 14.0
    display.update(100, loss=1.0)
    assert display.eta_secs() == pytest.approx(50.0)  # 100 steps in 10 s after compiling; 500 left
    assert screen(stream.getvalue())[-1].endswith("ETA 50s")


def test_compiled_is_a_permanent_line():
    display, stream, _ = make(stream=FakeTTY())
    display.compiled(4.2)
    assert screen(stream.getvalue())[0] == "train step function compiled in 4.2 s"


def test_not_a_terminal_writes_a_plain_line_at_the_first_update_then_every_interval():
    display, stream, clock = make(interval_secs=30.0)
    for step in range(1, 8):
        clock.now = 10.0 * step
        display.update(step * 100, loss=1.0 / step, examples_per_sec=400.0)
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert [line.split(",")[0] for line in lines] == ["train: step 100/600 (17%)", "train: step 400/600 (67%)",
                                                      "train: step 700/600 (100%)"]
    assert lines[1] == "train: step 400/600 (67%), 400 examples/sec, loss 0.25, ETA 20s"


def test_not_a_terminal_can_write_every_n_updates():
    display, stream, clock = make(interval_secs=1e9, every_updates=2)
    for step in range(1, 6):
        clock.now = float(step)
        display.update(step)
    assert [line.split(",")[0] for line in stream.getvalue().splitlines()] == [
        "train: step 1/600 (0%)", "train: step 3/600 (0%)", "train: step 5/600 (1%)"]


def test_close_ends_the_live_line_with_a_summary():
    display, stream, clock = make(stream=FakeTTY())
    clock.now = 2.0
    display.compiled(2.0)
    clock.now = 12.0
    display.update(300, loss=0.4, examples_per_sec=1000.0)
    clock.now = 22.0
    display.update(600, loss=0.2376, examples_per_sec=1024.0)
    line = display.close()
    assert line == "train: 600/600 steps in 22s (compile 2.0s), 30 steps/sec, 1024 examples/sec, loss 0.2376"
    assert screen(stream.getvalue())[-2:] == [line, ""]
    assert display.close() is None


def test_evaluate_without_a_total_shows_steps_and_final_metrics_without_eta():
    display, stream, clock = make("evaluate", total=None)
    clock.now = 3.0
    display.update(10, loss=0.3)
    display.close({"accuracy": 0.9141})
    first, last = stream.getvalue().splitlines()
    assert first == "evaluate: step 10, loss 0.3"
    assert last == "evaluate: 10 steps in 3.0s, 3.33 steps/sec, loss 0.3, accuracy 0.9141"


def test_resumed_run_counts_progress_from_its_start_step():
    clock = Clock()
    stream = io.StringIO()
    display = ProgressDisplay("train", 1000, start=500, opts=DisplayOptions(stream=stream), clock=clock)
    clock.now = 10.0
    display.update(600)
    assert stream.getvalue().startswith("train: step 600/1000 (20%)") and display.eta_secs() == 40.0


def test_disabled_display_writes_nothing():
    display, stream, clock = make(enabled=False)
    display.compiling()
    display.compiled(1.0)
    display.update(10, loss=1.0)
    display.note("saved")
    assert display.close() is not None and stream.getvalue() == ""


def test_log_records_start_on_a_clean_line_while_the_bar_shows():
    stream = FakeTTY()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        display, _, clock = make(stream=stream)
        display.update(100, loss=1.0)
        logging.getLogger("progress_test").warning("checkpoint saved")
        display.update(200, loss=0.5)
        display.close()
    finally:
        root.removeHandler(handler)
    lines = screen(stream.getvalue())
    assert lines[0] == "checkpoint saved"
    assert not handler.filters


def test_an_error_inside_the_block_says_where_it_stopped():
    display, stream, clock = make()
    with pytest.raises(RuntimeError), display:
        clock.now = 5.0
        display.update(40)
        raise RuntimeError("boom")
    assert stream.getvalue().splitlines()[-1] == "train: stopped at 40/600 steps after 5.0s"


def test_unknown_phase_is_refused():
    with pytest.raises(ValueError, match="phase must be one of"):
        ProgressDisplay("fit", 10)


@pytest.mark.parametrize(("seconds", "text"), [(4.21, "4.2s"), (42.4, "42s"), (261, "4m21s"), (3720, "1h02m")])
def test_durations_read_like_a_clock(seconds, text):
    assert format_duration(seconds) == text


def test_an_error_before_anything_was_shown_writes_no_stopped_line():
    """A call refused before it began (another trainer holds model_dir) did not stop anywhere."""
    display, stream, _ = make()
    with pytest.raises(RuntimeError), display:
        raise RuntimeError("model_dir is held by another trainer")
    assert stream.getvalue() == ""


def test_a_loop_sized_to_the_interval_that_ends_a_little_early_still_prints_a_line():
    """Loops sized to 30 s end at 29-31 s: each prints, not every other one (60 s of silence)."""
    display, stream, clock = make()
    display.update(10)
    clock.now = 29.0
    display.update(20)
    assert len(stream.getvalue().splitlines()) == 2


def test_updates_well_inside_the_interval_print_nothing():
    display, stream, clock = make()
    display.update(10)
    clock.now = 10.0
    display.update(20)
    assert len(stream.getvalue().splitlines()) == 1


def test_a_caller_expecting_a_total_gives_evaluation_its_total_and_eta():
    stream, clock = io.StringIO(), Clock()
    with progress_display.expecting("evaluate", 10):
        display = ProgressDisplay("evaluate", unit="batches", opts=DisplayOptions(stream=stream, every_updates=1),
                                  clock=clock)
    clock.now = 2.0
    display.update(4, loss=0.3)
    clock.now = 4.0
    display.update(6, loss=0.3)
    display.close()
    assert stream.getvalue().splitlines()[:2] == ["evaluate: 4/10 batches (40%), loss 0.3",
                                                  "evaluate: 6/10 batches (60%), loss 0.3, ETA 4.0s"]


def test_prediction_counts_examples_against_its_expected_total():
    stream, clock = io.StringIO(), Clock()
    with progress_display.expecting("predict", 10000):
        display = ProgressDisplay("predict", unit="examples", opts=DisplayOptions(stream=stream), clock=clock)
    clock.now = 1.0
    display.update(1280)
    display.close()
    assert stream.getvalue().splitlines()[-1].startswith("predict: 1280/10000 examples in 1.0s")


def test_an_expected_total_lasts_only_for_its_block():
    with progress_display.expecting("evaluate", 10):
        pass
    assert ProgressDisplay("evaluate", None, opts=DisplayOptions(enabled=False)).total is None


def test_a_loop_after_which_the_next_would_pass_the_interval_prints_now():
    """Loops of 22 s: waiting for the second would mean 44 s of silence, so the first prints."""
    display, stream, clock = make(interval_secs=30.0)
    display.update(10)
    clock.now = 22.0
    display.update(20)
    assert len(stream.getvalue().splitlines()) == 2


def test_evaluations_first_batch_gives_no_eta_its_step_was_traced_in_it():
    """The first batch of 10 took 30 s, most of it tracing: an ETA of 4m30s would be wrong."""
    stream, clock = io.StringIO(), Clock()
    display = ProgressDisplay("evaluate", 10, unit="batches", opts=DisplayOptions(stream=stream), clock=clock)
    clock.now = 30.0
    display.update(1)
    assert display.eta_secs() is None and "ETA" not in stream.getvalue()
