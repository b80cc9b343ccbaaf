"""List prices of OpenAI's models, for Codex transcripts, which record tokens but no cost.
These are the prices Pi 0.73.1 uses for the ``openai`` provider (US dollars per million
tokens; OpenAI has no cache-write price), so a Codex session and a Pi session on the same
model are priced alike. A Codex user on a ChatGPT plan pays no per-token price: the page
says the dollars are list prices.
"""

from __future__ import annotations

import re
from typing import Any

from exporter.claude_prices import cost_at

#: model -> (input, output, cache read), dollars per million tokens
_PRICES = {
    "gpt-4": (30.0, 60.0, 0.0),
    "gpt-4-turbo": (10.0, 30.0, 0.0),
    "gpt-4.1": (2.0, 8.0, 0.5),
    "gpt-4.1-mini": (0.4, 1.6, 0.1),
    "gpt-4.1-nano": (0.1, 0.4, 0.03),
    "gpt-4o": (2.5, 10.0, 1.25),
    "gpt-4o-2024-05-13": (5.0, 15.0, 0.0),  # a snapshot priced apart from gpt-4o
    "gpt-4o-mini": (0.15, 0.6, 0.08),
    "gpt-5": (1.25, 10.0, 0.125),
    "gpt-5-chat-latest": (1.25, 10.0, 0.125),
    "gpt-5-codex": (1.25, 10.0, 0.125),
    "gpt-5-mini": (0.25, 2.0, 0.025),
    "gpt-5-nano": (0.05, 0.4, 0.005),
    "gpt-5-pro": (15.0, 120.0, 0.0),
    "gpt-5.1": (1.25, 10.0, 0.13),
    "gpt-5.1-chat-latest": (1.25, 10.0, 0.125),
    "gpt-5.1-codex": (1.25, 10.0, 0.125),
    "gpt-5.1-codex-max": (1.25, 10.0, 0.125),
    "gpt-5.1-codex-mini": (0.25, 2.0, 0.025),
    "gpt-5.2": (1.75, 14.0, 0.175),
    "gpt-5.2-chat-latest": (1.75, 14.0, 0.175),
    "gpt-5.2-codex": (1.75, 14.0, 0.175),
    "gpt-5.2-pro": (21.0, 168.0, 0.0),
    "gpt-5.3-chat-latest": (1.75, 14.0, 0.175),
    "gpt-5.3-codex": (1.75, 14.0, 0.175),
    "gpt-5.3-codex-spark": (1.75, 14.0, 0.175),
    "gpt-5.4": (2.5, 15.0, 0.25),
    "gpt-5.4-mini": (0.75, 4.5, 0.075),
    "gpt-5.4-nano": (0.2, 1.25, 0.02),
    "gpt-5.4-pro": (30.0, 180.0, 0.0),
    "gpt-5.5": (5.0, 30.0, 0.5),
    "gpt-5.5-pro": (30.0, 180.0, 0.0),
    "o1": (15.0, 60.0, 7.5),
    "o1-pro": (150.0, 600.0, 0.0),
    "o3": (2.0, 8.0, 0.5),
    "o3-deep-research": (10.0, 40.0, 2.5),
    "o3-mini": (1.1, 4.4, 0.55),
    "o3-pro": (20.0, 80.0, 0.0),
    "o4-mini": (1.1, 4.4, 0.28),
    "o4-mini-deep-research": (2.0, 8.0, 0.5),
}

# A dated snapshot ("gpt-5-codex-2025-09-15") is priced as its model, unless the table
# prices the snapshot itself (gpt-4o-2024-05-13 cost twice what gpt-4o does); a provider
# prefix ("openai/gpt-5") is dropped.
_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$")


def prices(model: str) -> tuple[float, float, float] | None:
    """The model's prices, or None for a model this table does not know."""
    name = model.rsplit("/", 1)[-1].strip().lower()
    found = _PRICES.get(name)
    return found if found is not None else _PRICES.get(_DATED.sub("", name))


def cost(model: str, usage: dict[str, Any]) -> dict[str, float] | None:
    """Pi's ``usage.cost`` object for one turn (``usage`` in Pi's names), or None."""
    price = prices(model)
    return None if price is None else cost_at((*price, 0.0), usage)
