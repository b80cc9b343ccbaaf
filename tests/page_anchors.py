"""The DOM id a page gives an entry, for tests that link into or look up entries in a page.

Only tests need it: the page itself gets its ids from ``PageBuilder`` (``build_anchors``).
"""

from __future__ import annotations

from exporter.render.view import entry_anchors
from exporter.session import Session


def anchor_for(session: Session, entry_id: str) -> str:
    """The DOM id the page gives ``entry_id``: every entry's id is worked out at once, in
    file order, as the page does (an id that collides takes a hashed one)."""
    return entry_anchors(session)[entry_id]
