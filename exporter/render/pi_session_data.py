"""Pi's own ``session-data`` block, for viewers of Pi's exports (``share --pi-viewer``).

pi.dev and its self-hosted clone pi-share-viewer show a shared page only when it carries
``<script id="session-data" type="application/json">``: base64 of the UTF-8 JSON
``{"header", "entries", "leafId"}``, as Pi's own export writes it. Our page needs none of it
(it is rendered at export time), so the block is added only when asked for: it makes the page
about 1.33 times the session file's size larger.

The block holds the session as it is shared: a redacted or cut copy gives its own entries,
never the file's. A script of type ``application/json`` never runs, and base64 holds no
``<``, so the block cannot end the element early or become markup.
"""

from __future__ import annotations

import base64

from exporter.jsonl_out import dumps_line, session_records
from exporter.session import Session

__all__ = ["pi_session_data"]


def pi_session_data(session: Session) -> str:
    """Base64 of ``{"header": ..., "entries": [...], "leafId": ...}`` (v3 entries in file
    order, the leaf the page shows); lone surrogates stay ``\\uXXXX`` escapes, as in the
    page's JSONL, so the UTF-8 is valid and nothing is lost."""
    header, *entries = session_records(session)
    parts = [
        '{"header":',
        dumps_line(header),
        ',"entries":[',
        ",".join(dumps_line(entry) for entry in entries),
        '],"leafId":',
        dumps_line(session.leaf_id),
        "}",
    ]
    return base64.b64encode("".join(parts).encode("utf-8")).decode("ascii")
