"""pi-session-export: read Pi coding-agent sessions, render them to HTML, publish them."""

from __future__ import annotations

__version__ = "0.2.11"

from exporter.loader import SessionFormatError, load_session, parse_session_bytes
from exporter.session import Diagnostic, Entry, Session

__all__ = [
    "Diagnostic",
    "Entry",
    "Session",
    "SessionFormatError",
    "__version__",
    "load_session",
    "parse_session_bytes",
]
