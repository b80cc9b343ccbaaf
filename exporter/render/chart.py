"""An inline SVG chart (no JavaScript): context size per turn and cumulative cost."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from exporter.formatting import fmt_cost, fmt_tokens_short
from exporter.usage import ContextPoint

WIDTH, HEIGHT = 720, 200
LEFT, RIGHT, TOP, BOTTOM = 52, 68, 14, 26


@dataclass(slots=True)
class Chart:
    """Precomputed SVG geometry; the template only prints these strings."""

    width: int
    height: int
    context_path: str
    cost_path: str
    compactions: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]
    cost_ticks: list[tuple[float, str]]
    x_ticks: list[tuple[float, str]]
    points: list[tuple[float, float, str, str]]
    turns: int
    max_context: int
    total_cost: float
    plot_left: int = LEFT
    plot_right: int = WIDTH - RIGHT
    plot_top: int = TOP
    plot_bottom: int = HEIGHT - BOTTOM


def nice_ceiling(value: float, steps: tuple[float, ...] = (1, 2, 2.5, 5, 10)) -> float:
    """The axis maximum: the smallest 1, 2, 2.5, 5 or 10 (``steps``) times a power of ten
    >= ``value``.

    Absurd totals (a session whose costs add up past the float range) get no rounding, and
    nothing that is not a positive number gets an axis above 1.
    """
    if not value > 0:  # zero, negative, NaN
        return 1.0
    if not math.isfinite(value):
        return sys.float_info.max
    magnitude = 10.0 ** math.floor(math.log10(value))
    for step in steps:
        ceiling = step * magnitude
        if ceiling >= value * (1 - 1e-12):
            return ceiling if math.isfinite(ceiling) else value
    return value


def axis_cost(value: float) -> str:
    """A cost axis label short enough for the chart's right margin (on a phone the labels
    grow as the chart shrinks): "$2.5k", "$50", "$1.5", under a dollar in cents ("25¢",
    "0.25¢": "$0.0025" spilled out of the chart); the exact sums are in the tables."""
    if value == 0:
        return "$0"
    if not 0 < value < 1e12:  # damaged or summed-up usage: the tables' short form
        return fmt_cost(value)
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k"), (1.0, "")):
        if value >= scale:
            return f"${value / scale:.3g}{suffix}"
    return f"{value * 100:.3g}¢" if value >= 1e-5 else f"${value:.0e}"  # not "1e-05¢"


def cost_ceiling(total: float) -> float:
    """The cost axis's top: 1, 2, 5 or 10 times a power of ten, so that its middle tick
    (0.5, 1, 2.5) has two digits at most ("$1.25k" did not fit a phone's margin) and its
    ticks sit on the context axis's gridlines (a top of 2.5 had its middle at 1: $0, $1,
    $2.5, uneven and off the lines; visual review 2026-12-04)."""
    return nice_ceiling(total, (1, 2, 5, 10))


def cost_ticks_at(top: float) -> tuple[float, float]:
    """Where the cost axis is labelled: the middle and ``top``; its 0 is the context axis's
    (a "$0" ran into the last turn's number under it on a phone)."""
    return (top / 2, top)


def on_axis(value: float, top: float) -> float:
    """A plotted value inside 0..top (overflowed sums and negative costs stay on the chart)."""
    return min(max(value, 0.0), top) if math.isfinite(value) else (top if value > 0 else 0.0)


def build_chart(series: list[ContextPoint], max_points: int = 600) -> Chart | None:
    """None when there is nothing to plot (fewer than two assistant turns)."""
    if len(series) < 2:
        return None
    inner_w = WIDTH - LEFT - RIGHT
    inner_h = HEIGHT - TOP - BOTTOM
    max_ctx = nice_ceiling(max(p.context_tokens for p in series))
    max_cost = cost_ceiling(series[-1].cumulative_cost)
    n = len(series)
    # placed and named by turn number: a turn that reported no usage leaves a gap, and the
    # axis and tooltips count it (numbering the plotted points called turn 3 "turn 2")
    turns = [p.turn or i + 1 for i, p in enumerate(series)]
    span = max(turns[-1] - turns[0], 1)

    def x(i: int) -> float:
        return LEFT + inner_w * (turns[i] - turns[0]) / span

    def y_ctx(v: float) -> float:
        return TOP + inner_h * (1 - on_axis(v, max_ctx) / max_ctx)

    def y_cost(v: float) -> float:
        return TOP + inner_h * (1 - on_axis(v, max_cost) / max_cost)

    step = max(1, n // max_points)
    indices = list(range(0, n, step))
    if indices[-1] != n - 1:
        indices.append(n - 1)
    ctx_path = "M" + " L".join(f"{x(i):.1f},{y_ctx(series[i].context_tokens):.1f}" for i in indices)
    cost_path = "M" + " L".join(
        f"{x(i):.1f},{y_cost(series[i].cumulative_cost):.1f}" for i in indices
    )
    compactions = [
        (x(i), p.compaction_before or "") for i, p in enumerate(series) if p.compaction_before
    ]
    y_ticks = [(y_ctx(max_ctx * f), fmt_tokens_short(max_ctx * f)) for f in (0, 0.5, 1)]
    cost_ticks = [(y_cost(v), axis_cost(v)) for v in cost_ticks_at(max_cost)]
    x_ticks = [(x(i), str(turns[i])) for i in sorted({0, (n - 1) // 2, n - 1})]
    points = (
        [
            (
                x(i),
                y_ctx(series[i].context_tokens),
                series[i].entry_id,
                f"turn {turns[i]}: {series[i].context_tokens:,} tokens in context, "
                f"{fmt_cost(series[i].cumulative_cost)} so far",
            )
            for i in indices
        ]
        if n <= 200
        else []
    )
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        context_path=ctx_path,
        cost_path=cost_path,
        compactions=compactions,
        y_ticks=y_ticks,
        cost_ticks=cost_ticks,
        x_ticks=x_ticks,
        points=points,
        turns=n,
        max_context=max(p.context_tokens for p in series),
        total_cost=series[-1].cumulative_cost,
    )
