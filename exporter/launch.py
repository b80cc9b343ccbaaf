"""The ``pi-session`` script's entry point: a Ctrl-C while the program is still importing
(the first ~60 ms: "oops, wrong command") ends as one at work does, with
``pi-session: interrupted`` and exit 130, not a traceback through the import machinery."""

from __future__ import annotations

import sys

EXIT_INTERRUPTED = 130  # a shell's 128 + SIGINT (exporter.cli says the same once loaded)


def run() -> None:
    """Import the CLI and run it (:func:`exporter.cli.run`)."""
    try:
        from exporter.cli import run as run_cli
    except KeyboardInterrupt:
        _interrupted()
    try:
        run_cli()
    except KeyboardInterrupt:  # between the import and the command's own handler
        _interrupted()


def _interrupted() -> None:
    if sys.stderr is not None:
        sys.stderr.write("\npi-session: interrupted\n")
    raise SystemExit(EXIT_INTERRUPTED)
