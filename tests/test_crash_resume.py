"""Issue 8 ("must show"): a training run killed at random times - kill -9 (also in the middle of saves and during
start-up) and SIGTERM - and resumed each time ends with exactly the weights of an uninterrupted run, bit for bit.

Each life of the run is a tests/crash_worker.py process (tiny model, Keras Adam, a shuffled-but-seeded input
stream, 3 steps per loop, a checkpoint every 2 steps: saving is most of its wall time, so many kills land in a
save). A fixed RNG seed chooses the order of trials, their kinds and delays; the moments themselves depend on the
machine, which is the point. Checked in every life: it resumes from the newest complete checkpoint the previous
life left (never from scratch, never a damaged one), and a SIGTERM loses no step. At the end: every variable of
the final checkpoint (weights, Adam slots, global step, input position) equals the uninterrupted run's.
"""

import json
import os
import random
import re
import signal
import time

from estimators.checkpoint.checkpointer import Checkpointer
from tests.worker_process import Worker, assert_bit_exact, checkpoint_values, reference_values, run_to_end

SEED = 20260
MAX_STEPS = 240
ARGS = ("--iterations_per_loop=3", "--save_steps=2")
KILLS, SIGTERMS, STARTUP_KILLS = 10, 3, 1
MAX_STEPS_PER_LIFE = 12  # a life is stopped after at most this many steps: 14 lives cannot finish the run
IN_SAVE_SHARE = 0.5  # kills aimed at a save: sent 0-2 ms after the worker announces one
LEFTOVER = re.compile(r"\.tempstate\d+$|_temp(_[0-9a-f]{32})?$|\.tmp[0-9a-f]{32}$")


def _latest_step(model_dir) -> int | None:
    latest = Checkpointer(str(model_dir), None, is_chief=False).latest()
    return None if latest is None else int(latest.rsplit("-", 1)[1])


def _stop_at_a_random_moment(worker: Worker, rng: random.Random, begin_step: int, aim_at_save: bool) -> None:
    if aim_at_save:
        assert worker.wait_for_event("before_save") is not None, worker.events[-5:]
        time.sleep(rng.uniform(0.0, 0.002))
        return
    target, delay = begin_step + rng.randint(1, MAX_STEPS_PER_LIFE), rng.uniform(0.0, 0.25)
    try:
        worker.wait_for(lambda e: e["event"] == "loop" and e["step"] >= target, timeout=delay)
    except TimeoutError:
        pass


def test_random_kills_and_sigterms_then_the_final_weights_equal_an_uninterrupted_run_bit_for_bit(tmp_path):
    rng = random.Random(SEED)
    plan = ["kill"] * KILLS + ["sigterm"] * SIGTERMS + ["startup_kill"] * STARTUP_KILLS
    rng.shuffle(plan)
    model_dir = tmp_path / "run"
    expected_begin, trials = 0, []
    for kind in plan:
        worker = Worker(model_dir, MAX_STEPS, *ARGS)
        trial = {"kind": kind}
        if kind == "startup_kill":
            time.sleep(rng.uniform(0.0, 2.5))  # TensorFlow's import, the trace, the restore, or early training
        else:
            begin = worker.wait_for_event("begin")
            assert begin is not None, f"trial {len(trials)}: the worker ended before training: {worker.events}"
            _stop_at_a_random_moment(worker, rng, begin["step"], kind == "kill" and rng.random() < IN_SAVE_SHARE)
        worker.signal(signal.SIGTERM if kind == "sigterm" else signal.SIGKILL)
        code = worker.wait()
        assert worker.last("done") is None, "a life finished the run: raise MAX_STEPS"
        began = worker.last("begin")
        if began is not None:  # it resumed from the newest complete checkpoint the previous life left
            assert began["step"] == expected_begin, (len(trials), began["step"], expected_begin)
        last_loop = worker.last("loop")
        ran_to = last_loop["step"] if last_loop else (began["step"] if began else None)
        saving, saved = worker.last("before_save"), worker.last("after_save")
        trial["began"] = began is not None
        trial["in_save"] = saving is not None and (saved is None or saved["step"] != saving["step"])
        names = os.listdir(model_dir) if model_dir.exists() else []
        trial["leftovers"] = sorted(n for n in names if LEFTOVER.search(n))
        latest = _latest_step(model_dir)
        trial["unpublished"] = sorted(n for n in names if n.startswith("model.ckpt-")
                                      and int(re.match(r"model\.ckpt-(\d+)", n).group(1)) > (latest or 0))
        trial["steps_lost"] = None if ran_to is None else ran_to - (latest or 0)
        if kind == "sigterm":
            assert code == 0, f"SIGTERM: the worker exited with {code}"
            stopped = worker.last("interrupted")
            assert stopped is not None and stopped["step"] == ran_to == latest, (stopped, ran_to, latest)
        else:
            assert code == -signal.SIGKILL
        expected_begin = latest or 0
        trials.append(trial)
    final = run_to_end(model_dir, MAX_STEPS, *ARGS)
    assert final.events[0] == {"event": "begin", "step": expected_begin}
    assert_bit_exact(checkpoint_values(model_dir), reference_values(tmp_path, MAX_STEPS, *ARGS))

    kills = [t for t in trials if t["kind"] != "sigterm"]
    sigterms = [t for t in trials if t["kind"] == "sigterm"]
    lost_per_kill = [t["steps_lost"] for t in kills if t["steps_lost"] is not None]
    summary = {
        "trials": len(trials),
        "kill_9": len(kills),
        "kill_9_after_training_began": sum(t["began"] for t in kills),
        "kill_9_during_a_save": sum(t["in_save"] for t in kills),
        "kill_9_leaving_temp_files": sum(bool(t["leftovers"]) for t in kills),
        "kill_9_leaving_an_unpublished_checkpoint": sum(bool(t["unpublished"]) for t in kills),
        "kill_9_steps_lost_max": max(lost_per_kill),
        "kill_9_steps_lost_mean": round(sum(lost_per_kill) / len(lost_per_kill), 2),
        "sigterm": len(sigterms),
        "sigterm_steps_lost": [t["steps_lost"] for t in sigterms],
        "resumed_to_step": MAX_STEPS,
    }
    print("crash summary:", json.dumps(summary))
    (tmp_path / "crash_summary.json").write_text(json.dumps({"summary": summary, "trials": trials}, indent=1))
    assert summary["kill_9_after_training_began"] >= KILLS and summary["sigterm"] == SIGTERMS
    assert summary["kill_9_during_a_save"] >= 1
    assert summary["sigterm_steps_lost"] == [0] * SIGTERMS
