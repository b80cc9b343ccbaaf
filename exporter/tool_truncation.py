"""Whether Pi cut a tool's output, from its result's ``details``: the page says so in a note
of its own (so shows no ``truncation`` details), and `search` leaves those details out with
it. Kept apart from ``exporter.render`` so that `search` need not import the renderer."""

from __future__ import annotations

from typing import Any

from exporter.entries import as_dict, as_str


def bash_output_cut(details: dict[str, Any]) -> bool:
    """A bash result Pi truncated, or whose full output it saved to a file."""
    truncated = as_dict(details.get("truncation")).get("truncated") is True
    return truncated or bool(as_str(details.get("fullOutputPath")))


def read_output_cut(details: dict[str, Any]) -> bool:
    """A read result whose file Pi truncated for the model (a truncation not said false)."""
    truncation = as_dict(details.get("truncation"))
    return bool(truncation) and truncation.get("truncated") is not False
