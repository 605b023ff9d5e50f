"""Train, evaluate, predict, export or TPU-preflight a registered model: `python main.py --model=cnn [--use_tpu]`.

Flags -> Settings -> registries (model_fns, input_fns) -> TPUEstimator -> the chosen mode.
Exit status: 0 done (and after --help); 2 the command line is wrong whatever the machine (a flag's
value, flags that contradict each other): one line, nothing run; 1 the run failed here (data,
model_dir, TPU, the model). The flags are defined and checked before TensorFlow is imported, so
help and mistakes are answered in about a second; TensorFlow starts only for a run.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys

from absl import app, flags

import model_fns
from launch import cli_flags, console
from launch.settings import Settings, UsageError

FLAGS = flags.FLAGS
flags.adopt_module_key_flags(cli_flags)  # --help / --helpshort list main.py's flags


def settings_from_flags() -> Settings:
    """The Settings the parsed flags describe."""
    return cli_flags.settings_from_flags()


def _usage_exit(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.exit(console.USAGE)


def main(argv: list[str]) -> None:
    if len(argv) > 1:
        _usage_exit(f"error: unexpected arguments {' '.join(argv[1:])}: every setting is a --flag=value "
                    "(python main.py --helpshort lists them).")
    settings = settings_from_flags()
    try:
        settings.check()  # before TensorFlow starts: a contradiction costs no start-up
    except ValueError as err:  # UsageError (exit 2) or a ValueError (exit 1)
        if FLAGS.verbosity >= console.DEBUG:
            raise
        if isinstance(err, UsageError):
            _usage_exit(console.error_line(err))
        sys.exit(console.error_line(err))
    console.quiet_tensorflow_startup(sys.argv, verbosity=FLAGS.verbosity)
    console.require_tensorflow()  # one line and exit 1, not a ModuleNotFoundError traceback
    console.configure_output(FLAGS.verbosity)
    _run(settings)


def _run(settings: Settings) -> None:
    """The run itself, with TensorFlow: one line per error, exit status as a shell would give it."""
    from estimators import TrainingInterrupted
    from launch.build import start_run
    from launch.flags_file import flag_lines
    from launch.modes import MODES

    try:
        model = model_fns.get_model(settings.model)
        settings = settings.resolved(model.default_dataset)
        run = start_run(settings, model, flag_lines(FLAGS, "model"))
        result = MODES[settings.mode](run)
    except TrainingInterrupted as stopped:  # SIGTERM / first Ctrl-C: saved; say how to resume, exit as a shell would
        print(stopped, file=sys.stderr)
        sys.exit(128 + getattr(signal, stopped.signal_name, signal.SIGINT))
    except UsageError as err:
        if FLAGS.verbosity >= console.DEBUG:
            raise
        _usage_exit(console.error_line(err))
    except console.user_errors() as err:
        if FLAGS.verbosity >= console.DEBUG:
            raise
        sys.exit(console.error_line(err))
    print(f"{settings.mode}: {result}")
    if result.get("ok") is False:  # --mode=preflight found something a TPU would reject
        sys.exit(1)


def run_cli(argv: list[str] | None = None) -> None:
    """`python main.py ...`: absl's app.run with flag errors as one line and exit status 2."""
    app.run(main, argv=argv, flags_parser=console.parse_flags_or_exit)


def _exit_now(status: object) -> None:
    """Ends the process with `status` once its output is flushed: the interpreter's teardown of TensorFlow took
    3-20 s more here, and nothing is left to write (checkpoints, summaries and exports are complete when a
    call returns). A string status is printed and exits 1, as Python does. Before TensorFlow was imported
    (help, flag mistakes) there is nothing slow to tear down: a normal exit, callers' cleanups included."""
    if "tensorflow" not in sys.modules:
        raise SystemExit(status)
    if status is not None and not isinstance(status, int):
        print(status, file=sys.stderr)
        status = 1
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status or 0)


if __name__ == "__main__":
    try:
        run_cli()
    except SystemExit as done:  # absl's app.run ends every run with sys.exit
        _exit_now(done.code)
    _exit_now(0)
