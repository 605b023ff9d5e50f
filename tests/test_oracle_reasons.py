"""The oracle's verdicts (bench/estimator_oracle/run.py): a test's own line first, then its longest prefix, then an
`error:` line, which only excuses an error the test's own code raised (the innermost frame, of ours and the
test's, is the test's)."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

_RUN = pathlib.Path(__file__).resolve().parent.parent / "bench" / "estimator_oracle" / "run.py"


@pytest.fixture(scope="module")
def run():
    spec = importlib.util.spec_from_file_location("oracle_run", _RUN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def reasons(run, tmp_path):
    path = tmp_path / "reasons.txt"
    path.write_text("# comment\n"
                    "a_test.py::\tmay stay\twhole file\n"
                    "a_test.py::T::test_one\tdeliberate\tits own line\n"
                    "error:keras.optimizers.legacy` is not supported\tmay stay\tthe test uses a Keras 2 API\n")
    return run.read_reasons(str(path))


def test_a_tests_own_line_wins_over_its_prefix(run, reasons):
    assert run.reason_for("a_test.py::T::test_one", reasons) == ("deliberate", "its own line")
    assert run.reason_for("a_test.py::T::test_two", reasons) == ("may stay", "whole file")


def test_an_error_line_excuses_only_an_error_the_tests_own_code_raised(run, reasons):
    error = "ImportError: `keras.optimizers.legacy` is not supported in Keras 3."
    assert run.reason_for("b_test.py::T::t", reasons, error, raised_in_test=True)[0] == "may stay"
    assert run.reason_for("b_test.py::T::t", reasons, error, raised_in_test=False)[0] == "unexplained"
    assert run.reason_for("b_test.py::T::t", reasons, "ValueError: other", raised_in_test=True)[0] == "unexplained"


def _junit(tmp_path, *cases: tuple[str, str]) -> str:
    body = "".join(f'<testcase classname="up.a_test.T" name="{name}"><failure message="E: x">{text}</failure>'
                   "</testcase>" for name, text in cases)
    xml = tmp_path / "r.xml"
    xml.write_text(f"<testsuites><testsuite>{body}</testsuite></testsuites>")
    return str(xml)


def test_the_innermost_frame_of_ours_or_the_tests_tells_who_raised_it(run, tmp_path):
    upstream = "/o/bench/estimator_oracle/upstream/tensorflow_estimator/python/estimator/a_test.py"
    xml = _junit(tmp_path,
                 ("ours", f"{upstream}:3: in test_ours\n/o/estimators/tf2/steps.py:158: in step\nE ValueError: x"),
                 ("theirs", f"{upstream}:9: in t\n/venv/site-packages/keras/api/__init__.py:1: in f\nE ImportError"),
                 ("model_fn", f"{upstream}:9: in t\n/o/estimators/tf2/steps.py:1: in step\n"
                              f'E  File "/o/estimators/compat/fn_args.py", line 46, in call\n'
                              f'E  File "{upstream}", line 3466, in _model_fn\n'
                              "E  AttributeError: `dense` is not available with Keras 3."))
    results = run.parse_junit(xml, "a_test.py")
    assert results["a_test.py::T::ours"]["raised_in_test"] is False
    assert results["a_test.py::T::theirs"]["raised_in_test"] is True
    assert results["a_test.py::T::model_fn"]["raised_in_test"] is True
    assert results["a_test.py::T::model_fn"]["last"] == "AttributeError: `dense` is not available with Keras 3."
