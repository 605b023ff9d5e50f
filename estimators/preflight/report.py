"""What preflight found, in plain words: one line per problem, errors (a TPU would reject it) and warnings."""

from __future__ import annotations

import dataclasses

from estimators.mode_keys import ModeKeys

ERROR = "error"
WARNING = "warning"
MODE_NAMES = {ModeKeys.TRAIN: "train", ModeKeys.EVAL: "evaluate", ModeKeys.PREDICT: "predict"}


@dataclasses.dataclass(frozen=True)
class Finding:
    """One problem: how bad, which kind, the steps it was found in, what to do, and the user's line."""

    severity: str  # ERROR: a TPU would reject the program; WARNING: it would run, but worse than it could
    kind: str  # "batch", "input", "dynamic shape", "unsupported op", "float64", "string", "model_fn", "compile"
    message: str
    modes: tuple[str, ...] = ()
    where: str | None = None

    def line(self) -> str:
        steps = "/".join(MODE_NAMES.get(m, m) for m in self.modes)
        prefix = f"{self.severity}: {steps}: " if steps else f"{self.severity}: "
        return prefix + self.message + (f"\n    at {self.where}" if self.where else "")


@dataclasses.dataclass(frozen=True)
class StepSummary:
    """How one mode's per-core step fared."""

    mode: str
    batch: str  # "128 examples per core (train_batch_size=1024 / 8 cores)"
    status: str  # "compiles", "does not compile", "skipped: ..."


@dataclasses.dataclass
class PreflightReport:
    """Everything preflight checked and found; `ok` is False when a TPU would reject the model."""

    num_cores: int
    precision: str
    steps: list[StepSummary] = dataclasses.field(default_factory=list)
    findings: list[Finding] = dataclasses.field(default_factory=list)

    def add(self, finding: Finding) -> None:
        """Adds `finding`, or its modes to an identical finding from another mode's step."""
        for index, known in enumerate(self.findings):
            if (known.severity, known.kind, known.message, known.where) == (
                    finding.severity, finding.kind, finding.message, finding.where):
                modes = known.modes + tuple(m for m in finding.modes if m not in known.modes)
                self.findings[index] = dataclasses.replace(known, modes=modes)
                return
        self.findings.append(finding)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == WARNING]

    @property
    def ok(self) -> bool:
        """True when nothing would fail on a TPU (warnings allowed)."""
        return not self.errors

    def __str__(self) -> str:
        lines = [f"TPU preflight: each step as one of {self.num_cores} TPU cores runs it, compiled with XLA on "
                 f"the CPU; precision {self.precision}."]
        width = max((len(MODE_NAMES.get(s.mode, s.mode)) for s in self.steps), default=0)
        for step in self.steps:
            lines.append(f"  {MODE_NAMES.get(step.mode, step.mode):<{width}}  {step.batch}: {step.status}")
        ordered = self.errors + self.warnings
        lines += [finding.line() for finding in ordered]
        warned = f" ({_count(len(self.warnings), 'warning')})" if self.warnings else ""
        if self.ok:
            lines.append(f"TPU preflight passed: nothing a TPU would reject{warned}.")
        else:
            lines.append(f"TPU preflight failed: {_count(len(self.errors), 'problem')} a TPU would reject{warned}.")
        return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
