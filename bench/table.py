"""The one table every benchmark contributes to: measure, figure, baseline, ratio.

A benchmark module exposes ``rows(args) -> list[Row]`` (``args`` is the parsed command
line of ``bench/run.py``, see ``add_arguments``) and may print details to stderr; ``run.py``
collects the rows of every module it is given and prints them as one table. To add a row,
write a module with ``rows`` and add its name to ``run.MODULES``.

Figures are medians of ``--runs`` repetitions (3 by default): the machine is shared and
noisy, so one run says little.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    measure: str
    #: the median figure, and its unit
    figure: float
    unit: str
    #: what the figure is compared with, measured in the same run (None: no baseline)
    baseline: float | None = None
    baseline_name: str = ""
    #: the target, as text ("<= 50 ms", "ratio <= 1.5"): shown, not checked
    target: str = ""
    #: every run's figure, for the reader who wants the spread
    samples: tuple[float, ...] = ()

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or self.baseline == 0:
            return None
        return self.figure / self.baseline


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def row(
    measure: str,
    samples: Sequence[float],
    unit: str,
    *,
    baseline: Sequence[float] | None = None,
    baseline_name: str = "",
    target: str = "",
) -> Row:
    """A row from the samples of every run: figure and baseline are their medians."""
    return Row(
        measure=measure,
        figure=median(samples),
        unit=unit,
        baseline=None if baseline is None else median(baseline),
        baseline_name=baseline_name,
        target=target,
        samples=tuple(samples),
    )


def _number(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def render(rows: Sequence[Row]) -> str:
    header = ("measure", "figure", "baseline", "ratio", "target", "runs")
    lines = [header]
    for r in rows:
        baseline = (
            "-"
            if r.baseline is None
            else f"{_number(r.baseline)} {r.unit} ({r.baseline_name})".strip()
        )
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
        runs = ", ".join(_number(s) for s in r.samples)
        lines.append(
            (r.measure, f"{_number(r.figure)} {r.unit}", baseline, ratio, r.target or "-", runs)
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for n, line in enumerate(lines):
        out.append("| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |")
        if n == 0:
            out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out)


def note(text: str) -> None:
    """Details for the reader, on stderr so the table on stdout stays clean."""
    print(text, file=sys.stderr, flush=True)
