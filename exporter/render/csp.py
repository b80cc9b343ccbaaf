"""The Content-Security-Policy every page (session page, index, project page) ships.

A page is opened from disk or a gist and holds untrusted text: it may load nothing and run
nothing but its own inline style and scripts, each allowed by its SHA-256. A page served
live by ``pi-session watch`` may also ask its own server whether the session changed.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence

__all__ = ["content_security_policy"]


def content_security_policy(
    styles: Sequence[str], scripts: Sequence[str], *, ask_own_server: bool = False
) -> str:
    """Every inline style and script allowed by its hash, and nothing else at all (but, with
    ``ask_own_server``, requests to the origin that served the page)."""
    connect = " connect-src 'self';" if ask_own_server else ""
    return (
        f"default-src 'none';{connect} img-src data:; "
        f"style-src {_hashes(styles)}; script-src {_hashes(scripts)}; "
        "base-uri 'none'; form-action 'none'"
    )


def _hashes(texts: Sequence[str]) -> str:
    """CSP source expressions: each text's SHA-256 (of its UTF-8), base64, space-separated."""
    return " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(t.encode('utf-8')).digest()).decode()}'"
        for t in texts
    )
