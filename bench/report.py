"""Turns the children's results into rows, ratios, target checks and Markdown tables.

A row aggregates the repetitions of one (workload, precision, K, contender): min and median
examples/sec over the repetitions, median time to first step and median peak RSS.
Ratios are ours / other on medians; "paired" ratios divide results of the same repetition,
which ran minutes apart, so slow drift of the machine cancels out.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable

from bench.plan import INPUT_CHECK, WORKLOADS

HAND_TARGET = 0.97  # ours >= 0.97x the hand loop (cnn, resnet)
KERAS_TARGET = 1.0  # ours >= 1.0x Keras fit (cnn, resnet; mlp at K=100)
RSS_TARGET = 1.2  # ours' peak RSS <= 1.2x Keras fit's
HEAVY_MODELS = ("cnn", "resnet")


def _key(job: dict) -> tuple:
    return (job["workload"], job["precision"], job["iterations_per_loop"], job["contender"])


def aggregate(results: Iterable[dict]) -> list[dict]:
    """One row per configuration; failed runs are counted, not averaged."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for result in results:
        groups[_key(result["job"])].append(result)
    rows = []
    for (workload, precision, k, contender), runs in groups.items():
        ok = [r for r in runs if r.get("ok")]
        row = {
            "workload": workload, "contender": contender, "iterations_per_loop": k, "precision": precision,
            "examples_per_sec_min": None, "examples_per_sec_median": None, "first_step_seconds": None,
            "peak_rss_mb": None, "repeats_ok": len(ok), "repeats_failed": len(runs) - len(ok),
            "errors": sorted({r.get("error", "") for r in runs if not r.get("ok")}),
        }
        if ok:
            rates = [r["examples_per_sec"] for r in ok]
            row.update(
                examples_per_sec_min=min(rates),
                examples_per_sec_median=statistics.median(rates),
                first_step_seconds=statistics.median(r["first_step_seconds"] for r in ok),
                peak_rss_mb=statistics.median(r["peak_rss_mb"] for r in ok),
                samples={
                    "examples_per_sec": rates,
                    "first_step_seconds": [r["first_step_seconds"] for r in ok],
                    "peak_rss_mb": [r["peak_rss_mb"] for r in ok],
                    "repeat": [r["job"]["repeat"] for r in ok],
                },
                warmup_steps=ok[0]["job"]["warmup_steps"], timed_steps=ok[0]["job"]["timed_steps"],
                steps_trained=ok[0]["steps_trained"],
            )
            accuracies = [r["test_accuracy"] for r in ok if "test_accuracy" in r]
            if accuracies:
                row["test_accuracy"] = statistics.median(accuracies)
        rows.append(row)
    order = {name: i for i, name in enumerate(WORKLOADS)}
    contender_order = {"ours": 0, "hand": 1, "keras_fit": 2, INPUT_CHECK: 3}
    rows.sort(key=lambda r: (order.get(r["workload"], 99), r["precision"], r["iterations_per_loop"],
                             contender_order.get(r["contender"], 9)))
    return rows


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _paired(ours: dict, other: dict) -> list[float]:
    """ours / other for every repetition both finished."""
    a = dict(zip(ours["samples"]["repeat"], ours["samples"]["examples_per_sec"], strict=True))
    b = dict(zip(other["samples"]["repeat"], other["samples"]["examples_per_sec"], strict=True))
    return [a[r] / b[r] for r in sorted(a) if r in b]


def ratios(rows: list[dict]) -> list[dict]:
    """ours against hand (same K when measured, else K=1) and Keras fit (same K), per configuration."""
    index = {(r["workload"], r["precision"], r["iterations_per_loop"], r["contender"]): r for r in rows}
    out = []
    for row in rows:
        if row["contender"] != "ours" or row["examples_per_sec_median"] is None:
            continue
        w, p, k = row["workload"], row["precision"], row["iterations_per_loop"]
        hand = index.get((w, p, k, "hand")) or index.get((w, p, 1, "hand"))
        keras = index.get((w, p, k, "keras_fit"))
        entry = {"workload": w, "precision": p, "iterations_per_loop": k}
        if hand and hand["examples_per_sec_median"] is not None:
            entry.update(hand_iterations_per_loop=hand["iterations_per_loop"],
                         vs_hand=_ratio(row["examples_per_sec_median"], hand["examples_per_sec_median"]),
                         vs_hand_paired=_paired(row, hand))
        if keras and keras["examples_per_sec_median"] is not None:
            entry.update(vs_keras_fit=_ratio(row["examples_per_sec_median"], keras["examples_per_sec_median"]),
                         vs_keras_fit_paired=_paired(row, keras),
                         first_step_vs_keras_fit=_ratio(row["first_step_seconds"], keras["first_step_seconds"]),
                         rss_vs_keras_fit=_ratio(row["peak_rss_mb"], keras["peak_rss_mb"]))
        out.append(entry)
    return out


def _check(name: str, entry: dict, field: str, need: float, higher_is_better: bool = True) -> dict | None:
    value = entry.get(field)
    if value is None:
        return None
    met = value >= need if higher_is_better else value <= need
    # How far ours is from the target, as a fraction of it (negative = missed).
    margin = (value / need - 1.0) if higher_is_better else (need / value - 1.0)
    return {"target": name, "workload": entry["workload"], "precision": entry["precision"],
            "iterations_per_loop": entry["iterations_per_loop"], "value": value, "need": need,
            "met": met, "margin": margin}


def targets(ratio_entries: list[dict]) -> list[dict]:
    """The issue's targets, checked wherever the needed numbers were measured."""
    checks = []
    for e in ratio_entries:
        model = WORKLOADS[e["workload"]].model if e["workload"] in WORKLOADS else ""
        if model in HEAVY_MODELS:
            checks.append(_check(f"ours >= {HAND_TARGET}x hand", e, "vs_hand", HAND_TARGET))
            checks.append(_check(f"ours >= {KERAS_TARGET}x keras_fit", e, "vs_keras_fit", KERAS_TARGET))
        if model == "mlp" and e["iterations_per_loop"] == 100:
            checks.append(_check(f"mlp K=100: ours >= {KERAS_TARGET}x keras_fit", e, "vs_keras_fit", KERAS_TARGET))
        checks.append(_check("first step: ours <= keras_fit", e, "first_step_vs_keras_fit", 1.0, False))
        checks.append(_check(f"peak RSS: ours <= {RSS_TARGET}x keras_fit", e, "rss_vs_keras_fit", RSS_TARGET, False))
    return [c for c in checks if c is not None]


def precision_comparison(rows: list[dict], base: str = "float32") -> list[dict]:
    """Speed-up and accuracy change of each other precision against `base`, per configuration."""
    index = {(r["workload"], r["precision"], r["iterations_per_loop"], r["contender"]): r for r in rows}
    out = []
    for row in rows:
        if row["precision"] == base or row["contender"] == INPUT_CHECK:
            continue
        ref = index.get((row["workload"], base, row["iterations_per_loop"], row["contender"]))
        if ref is None:
            continue
        entry = {"workload": row["workload"], "contender": row["contender"],
                 "iterations_per_loop": row["iterations_per_loop"], "precision": row["precision"],
                 "base_examples_per_sec": ref["examples_per_sec_median"],
                 "examples_per_sec": row["examples_per_sec_median"],
                 "speedup": _ratio(row["examples_per_sec_median"], ref["examples_per_sec_median"])}
        if "test_accuracy" in row and "test_accuracy" in ref:
            entry.update(base_test_accuracy=ref["test_accuracy"], test_accuracy=row["test_accuracy"],
                         accuracy_change=row["test_accuracy"] - ref["test_accuracy"])
        out.append(entry)
    return out


# -- Markdown ----------------------------------------------------------------------------------------


def _fmt(value, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def _table(header: list[str], lines: list[list[str]]) -> str:
    rule = ["---:" if i else "---" for i in range(len(header))]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in [header, rule, *lines])


def throughput_table(rows: list[dict]) -> str:
    with_acc = any("test_accuracy" in r for r in rows)
    header = ["workload", "precision", "K", "contender", "ex/s min", "ex/s median", "first step s",
              "peak RSS MB", "runs ok"] + (["test acc"] if with_acc else [])
    lines = []
    for r in rows:
        if r["contender"] == INPUT_CHECK:
            continue
        line = [r["workload"], r["precision"], str(r["iterations_per_loop"]), r["contender"],
                _fmt(r["examples_per_sec_min"]), _fmt(r["examples_per_sec_median"]),
                _fmt(r["first_step_seconds"], ".2f"), _fmt(r["peak_rss_mb"], ".0f"),
                f"{r['repeats_ok']}/{r['repeats_ok'] + r['repeats_failed']}"]
        if with_acc:
            line.append(_fmt(r.get("test_accuracy"), ".4f"))
        lines.append(line)
    return _table(header, lines)


def _span(values: list[float] | None) -> str:
    return f"{min(values):.3f}-{max(values):.3f}" if values else "-"


def ratio_table(entries: list[dict]) -> str:
    header = ["workload", "precision", "K", "ours/hand", "(hand K)", "paired", "ours/keras_fit", "paired",
              "first step ours/keras", "RSS ours/keras"]
    lines = [[e["workload"], e["precision"], str(e["iterations_per_loop"]), _fmt(e.get("vs_hand"), ".3f"),
              str(e.get("hand_iterations_per_loop", "-")), _span(e.get("vs_hand_paired")),
              _fmt(e.get("vs_keras_fit"), ".3f"), _span(e.get("vs_keras_fit_paired")),
              _fmt(e.get("first_step_vs_keras_fit"), ".3f"), _fmt(e.get("rss_vs_keras_fit"), ".3f")]
             for e in entries]
    return _table(header, lines)


def target_table(checks: list[dict]) -> str:
    header = ["target", "workload", "precision", "K", "value", "need", "met", "margin"]
    lines = [[c["target"], c["workload"], c["precision"], str(c["iterations_per_loop"]), f"{c['value']:.3f}",
              f"{c['need']:.2f}", "yes" if c["met"] else "**MISSED**", f"{c['margin']:+.1%}"] for c in checks]
    return _table(header, lines)


def input_table(rows: list[dict]) -> str:
    best: dict[str, float] = {}
    for r in rows:
        if r["contender"] != INPUT_CHECK and r["examples_per_sec_median"] is not None:
            best[r["workload"]] = max(best.get(r["workload"], 0.0), r["examples_per_sec_median"])
    header = ["workload", "input_fn ex/s min", "ex/s median", "fastest contender ex/s", "headroom"]
    lines = [[r["workload"], _fmt(r["examples_per_sec_min"], ".0f"), _fmt(r["examples_per_sec_median"], ".0f"),
              _fmt(best.get(r["workload"]), ".1f"), _fmt(_ratio(r["examples_per_sec_median"],
                                                                best.get(r["workload"])), ".1f") + "x"]
             for r in rows if r["contender"] == INPUT_CHECK]
    return _table(header, lines)


def precision_table(entries: list[dict]) -> str:
    header = ["workload", "K", "contender", "precision", "fp32 ex/s", "ex/s", "speed-up", "fp32 acc", "acc",
              "acc change"]
    lines = [[e["workload"], str(e["iterations_per_loop"]), e["contender"], e["precision"],
              _fmt(e["base_examples_per_sec"]), _fmt(e["examples_per_sec"]), _fmt(e["speedup"], ".2f") + "x",
              _fmt(e.get("base_test_accuracy"), ".4f"), _fmt(e.get("test_accuracy"), ".4f"),
              _fmt(e.get("accuracy_change"), "+.4f")] for e in entries]
    return _table(header, lines)


def markdown(rows: list[dict], ratio_entries: list[dict], checks: list[dict], precision: list[dict]) -> str:
    """Every table of the run, as Markdown (printed, and pasted into bench/README.md)."""
    parts = ["### Throughput (examples/sec over the timed window; medians over repetitions)", "",
             throughput_table(rows), "", "### Ratios (ours / other, medians)", "", ratio_table(ratio_entries), "",
             "### Targets", "", target_table(checks) if checks else "(nothing to check)"]
    if any(r["contender"] == INPUT_CHECK for r in rows):
        parts += ["", "### Input pipeline alone", "", input_table(rows)]
    if precision:
        parts += ["", "### Precision", "", precision_table(precision)]
    failed = [r for r in rows if r["repeats_failed"]]
    if failed:
        parts += ["", "### Failures", ""] + [
            f"- {r['workload']} {r['precision']} K={r['iterations_per_loop']} {r['contender']}: "
            f"{r['repeats_failed']} failed: {'; '.join(e[:300] for e in r['errors'])}" for r in failed]
    return "\n".join(parts)
