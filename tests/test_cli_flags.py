"""launch.cli_flags: main.py's flags, defined without TensorFlow, name what the registries and modes hold."""

from __future__ import annotations

import input_fns
import model_fns
from launch import cli_flags, console
from launch.modes import MODES


def test_mode_names_are_the_modes_main_runs():
    assert list(cli_flags.MODE_NAMES) == list(MODES)


def test_model_choices_are_the_registered_models():
    assert cli_flags.FLAGS["model"].parser.enum_values == model_fns.model_names()


def test_dataset_choices_are_the_registered_datasets():
    assert cli_flags.FLAGS["dataset"].parser.enum_values == input_fns.dataset_names()


def test_help_is_recognised_before_a_double_dash_only():
    assert console.asked_for_help(["main.py", "--mode=train", "--helpfull"])
    assert console.asked_for_help(["main.py", "-?"])
    assert not console.asked_for_help(["main.py", "--", "--help"])
    assert not console.asked_for_help(["main.py", "--helper=1"])
