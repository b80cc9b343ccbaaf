"""List prices of Anthropic's models, for Claude Code transcripts, which record tokens but
no cost (since Claude Code 1.0.9). Pi computes the cost it writes from the same kind of
table; these are the prices Pi 0.73.1 uses (US dollars per million tokens), so a Claude Code
session and a Pi session on the same model are priced alike.
"""

from __future__ import annotations

import re
from typing import Any

#: family -> (input, output, cache read, cache write), dollars per million tokens
_PRICES = {
    "opus-new": (5.0, 25.0, 0.5, 6.25),  # Opus 4.5 and later
    "opus": (15.0, 75.0, 1.5, 18.75),  # Claude 3 Opus, Opus 4 and 4.1
    "sonnet": (3.0, 15.0, 0.3, 3.75),  # 3.5 and later
    "sonnet-3": (3.0, 15.0, 0.3, 0.3),  # Claude 3 Sonnet: Pi's table writes caches at 0.3
    "haiku-4": (1.0, 5.0, 0.1, 1.25),
    "haiku-3-5": (0.8, 4.0, 0.08, 1.0),
    "haiku-3": (0.25, 1.25, 0.03, 0.3),
}

_FAMILY = [
    (re.compile(r"claude-opus-4-([5-9]|\d\d)(\b|-|$)"), "opus-new"),
    (re.compile(r"claude-(3-opus|opus-4)(\b|-|$)"), "opus"),
    (re.compile(r"claude-(3-5-sonnet|3-7-sonnet|sonnet-4)(\b|-|$)"), "sonnet"),
    (re.compile(r"claude-3-sonnet(\b|-|$)"), "sonnet-3"),
    (re.compile(r"claude-haiku-4(\b|-|$)"), "haiku-4"),
    (re.compile(r"claude-3-5-haiku(\b|-|$)"), "haiku-3-5"),
    (re.compile(r"claude-3-haiku(\b|-|$)"), "haiku-3"),
]


def prices(model: str) -> tuple[float, float, float, float] | None:
    """The model's prices, or None for a model this table does not know."""
    for pattern, family in _FAMILY:
        if pattern.search(model):  # also in a gateway's name: us.anthropic.claude-…
            return _PRICES[family]
    return None


def cost(model: str, usage: dict[str, Any], one_hour_writes: int = 0) -> dict[str, float] | None:
    """Pi's ``usage.cost`` object for one turn (``usage`` in Pi's names), or None.
    ``one_hour_writes`` of the cache writes were made for an hour, which costs twice the
    input price (the five-minute writes of the table's rate cost 1.25 times it)."""
    price = prices(model)
    if price is None:
        return None
    priced = cost_at(price, usage)
    hour = min(one_hour_writes, usage.get("cacheWrite", 0))
    if hour > 0:
        extra = hour * (2 * price[0] - price[3]) / 1_000_000
        priced["cacheWrite"] += extra
        priced["total"] += extra
    return priced


def cost_at(price: tuple[float, float, float, float], usage: dict[str, Any]) -> dict[str, float]:
    """Pi's ``usage.cost`` for ``usage`` at ``price`` (input, output, cache read, cache
    write; dollars per million tokens): the arithmetic of any provider's list price."""
    parts = {
        key: usage.get(key, 0) * rate / 1_000_000
        for key, rate in zip(("input", "output", "cacheRead", "cacheWrite"), price, strict=True)
    }
    return {**parts, "total": sum(parts.values())}
