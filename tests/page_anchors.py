"""The DOM id a page gives an entry, for tests that link into or look up entries in a page.

Only tests need it: the page itself gets its ids from ``PageBuilder`` (``build_anchors``).
"""

from __future__ import annotations

from exporter.render.view import entry_anchors
from exporter.session import Session

#: The anchors last worked out, by ``id(session)``: (the session, its ``by_id`` and entry
#: ids then, the anchors). Tests ask for every entry of a session in turn, and working out
#: all its anchors on each call was quadratic (36,000 calls, a third of
#: test_render_structure's time). The session is held, so its ``id`` names no other.
_MEMO: dict[int, tuple[Session, dict, list[str], dict[str, str]]] = {}
_MEMO_SIZE = 4


def anchor_for(session: Session, entry_id: str) -> str:
    """The DOM id the page gives ``entry_id``: every entry's id is worked out at once, in
    file order, as the page does (an id that collides takes a hashed one)."""
    return _anchors(session)[entry_id]


def _anchors(session: Session) -> dict[str, str]:
    """``entry_anchors(session)``, worked out again whenever the session's entries or their
    ids have changed since (an index built again makes a new ``by_id``)."""
    ids = [e.id for e in session.entries]
    held = _MEMO.get(id(session))
    if held is not None and held[0] is session and held[1] is session.by_id and held[2] == ids:
        return held[3]
    anchors = entry_anchors(session)
    if len(_MEMO) >= _MEMO_SIZE:
        del _MEMO[next(iter(_MEMO))]  # the oldest
    _MEMO[id(session)] = (session, session.by_id, ids, anchors)
    return anchors
