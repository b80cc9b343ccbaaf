"""pi-session-export: read Pi coding-agent sessions, render them to HTML, publish them."""

from __future__ import annotations

__version__ = "0.2.55"

TYPE_CHECKING = False  # typing itself is a few ms of import: see _LAZY
if TYPE_CHECKING:
    from typing import Any

    from exporter.loader import SessionFormatError, load_session, parse_session_bytes
    from exporter.session import Diagnostic, Entry, Session
del TYPE_CHECKING  # not one of the package's names

#: The library's names, imported when first used: the ``pi-session`` script imports this
#: package before it can catch a Ctrl-C (see exporter.launch), so it imports little here.
_LAZY = {
    "SessionFormatError": "exporter.loader",
    "load_session": "exporter.loader",
    "parse_session_bytes": "exporter.loader",
    "Diagnostic": "exporter.session",
    "Entry": "exporter.session",
    "Session": "exporter.session",
}


def __getattr__(name: str) -> Any:
    import importlib

    module = _LAZY.get(name)
    if module is None:  # `exporter.loader` without importing it, as when this file did
        try:
            return importlib.import_module(f"exporter.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"exporter.{name}":  # that module's own import failed
                raise
            raise AttributeError(f"module 'exporter' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The package's public names (its library names load lazily, so the module's own
    namespace held only private ones: ``dir(exporter)`` and completion showed nothing)."""
    return sorted(__all__)


__all__ = [
    "Diagnostic",
    "Entry",
    "Session",
    "SessionFormatError",
    "__version__",
    "load_session",
    "parse_session_bytes",
]
