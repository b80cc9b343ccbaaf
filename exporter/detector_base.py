"""What every secret detector is: a name, cheap pre-checks and the spans it finds."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret at ``text[start:end]`` found by ``detector`` (the name, not the secret)."""

    start: int
    end: int
    detector: str


class Detector:
    """One named detector. ``triggers``/``lower_triggers`` are cheap substring pre-checks."""

    name: str
    summary: str
    triggers: tuple[str, ...] = ()
    lower_triggers: tuple[str, ...] = ()

    def find(self, text: str, lower: str) -> Iterator[Span]:  # pragma: no cover
        """Spans of secrets; ``lower`` is ``text`` lowercased, index for index."""
        raise NotImplementedError
