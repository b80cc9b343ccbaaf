"""The ``pi-session`` script's entry point: a Ctrl-C while the program is still importing
(the first ~60 ms: "oops, wrong command") ends as one at work does, with
``pi-session: interrupted`` and exit 130, not a traceback through the import machinery.

SIGTERM (``kill``, ``timeout``, a service manager) and SIGHUP (the terminal closed) end a
command as Ctrl-C does, its cleanup included, with the shell's 128 + the signal (143, 129):
they ended it at once, leaving the hidden temporary file of the page being written (up to
megabytes) beside it. Forked children get the system's default back: they must never run
this process's cleanup.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

EXIT_INTERRUPTED = 130  # a shell's 128 + SIGINT (exporter.cli says the same once loaded)
#: The signals that stop a command as Ctrl-C does (those this system has).
STOPPING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: a KeyboardInterrupt, so that every cleanup a Ctrl-C runs
    (a temporary file removed, a site's index made again, workers ended) runs for it too."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: The signals that stopped this run, in the order they came (see :func:`stopped_by`).
_CAME: list[int] = []
_FORK_HOOKED: list[bool] = []


def _stop(signum: int, _frame: object) -> None:
    _CAME.append(signum)
    raise Stopped(signum)


def stop_as_ctrl_c(signums: tuple[int, ...] = STOPPING) -> dict[int, object]:
    """``signums`` (SIGTERM, SIGHUP) raise :class:`Stopped` from now on; the handlers they
    had, to put back. A signal ignored (``nohup``) or handled already stays as it is."""
    _CAME.clear()
    previous: dict[int, object] = {}
    for signum in signums:
        with contextlib.suppress(OSError, ValueError):  # (not the main thread)
            if signal.getsignal(signum) == signal.SIG_DFL:
                previous[signum] = signal.signal(signum, _stop)
    if previous and not _FORK_HOOKED and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_defaults_in_child)
        _FORK_HOOKED.append(True)
    return previous


def _defaults_in_child() -> None:
    """A forked child (a renderer, the early scan, a pool's worker before its own setup)
    ends on SIGTERM as it did: it must not unwind into this process's cleanup."""
    for signum in STOPPING:
        with contextlib.suppress(OSError, ValueError):
            if signal.getsignal(signum) is _stop:
                signal.signal(signum, signal.SIG_DFL)


def put_back(previous: dict[int, object]) -> None:
    """The handlers :func:`stop_as_ctrl_c` replaced, as they were."""
    for signum, handler in previous.items():
        with contextlib.suppress(OSError, ValueError, TypeError):
            if signal.getsignal(signum) is _stop:
                signal.signal(signum, handler)  # type: ignore[arg-type]


def stopped_by() -> int | None:
    """The signal (SIGTERM, SIGHUP) that stopped this run, or None (a Ctrl-C, or none)."""
    return _CAME[0] if _CAME else None


def interrupted_exit() -> tuple[str, int]:
    """What a run stopped by a signal says on stderr, and its exit code (128 + signal)."""
    signum = stopped_by()
    if signum is None:
        return "\npi-session: interrupted", EXIT_INTERRUPTED
    return f"pi-session: stopped ({signal.Signals(signum).name})", 128 + signum


def _signals_for(argv: list[str]) -> tuple[int, ...]:
    """The signals to stop the command in ``argv`` as Ctrl-C does: all but SIGTERM for
    `watch`, which sets its own once it begins (stopping is how it ends: exit 0). The
    command is the first word not an option (the group's options take no value)."""
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    if command == "watch":
        return tuple(signum for signum in STOPPING if signum != signal.SIGTERM)
    return STOPPING


def run() -> None:
    """Import the CLI and run it (:func:`exporter.cli.run`)."""
    previous = stop_as_ctrl_c(_signals_for(sys.argv[1:]))
    try:
        try:
            from exporter.cli import run as run_cli
        except KeyboardInterrupt:
            _interrupted()
        try:
            run_cli()
        except KeyboardInterrupt:  # between the import and the command's own handler
            _interrupted()
    finally:
        put_back(previous)


def _interrupted() -> None:
    said, code = interrupted_exit()
    if sys.stderr is not None:
        with contextlib.suppress(OSError, ValueError):  # (SIGHUP: the terminal may be gone)
            sys.stderr.write(f"{said}\n")
    raise SystemExit(code)
