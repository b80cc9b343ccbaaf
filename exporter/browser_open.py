"""``--open``: a page handed to the user's browser.

`export` opens the file it wrote and waits for the browser to start. `watch` must not wait:
it serves the page itself, and a browser that stays in the foreground (w3m, lynx, a
``$BROWSER`` script) would wait for the page while the watch waited for the browser. Nor
may it name its address on the browser's command line, which every user of the computer
can read (``ps``) for as long as the browser runs: the address's secret is what keeps them
from the session. So `watch` opens a small redirect file, readable by this user only, in a
folder of its own, as Jupyter does, and removes it when the watch ends. A browser that
cannot read that folder (Ubuntu's snap Firefox and Chromium, a Flatpak one, a Windows one
under WSL: "file not found") never asks for the page; when none has come for it
``FALLBACK_SECONDS`` after the opener handed the file over (a console browser, which keeps
it, reads /tmp), the address itself is opened, as before, and said.
"""

from __future__ import annotations

import contextlib
import html
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from exporter.formatting import terminal_text

__all__ = ["FALLBACK_SECONDS", "PrivateOpen", "open_in_browser", "open_privately", "redirect_page"]

#: How long a browser opened on the redirect file has to ask for the page before the address
#: is opened itself (a cold browser's start on a busy machine, then the redirect).
FALLBACK_SECONDS = 15.0

#: What the opener process runs: ``webbrowser.open`` of its argument, exit status 0 when a
#: browser took it. Ctrl-C (sent to the whole foreground group) ends it without a traceback.
_OPENER = (
    "import signal, sys, webbrowser\n"
    "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
    "sys.exit(0 if webbrowser.open(sys.argv[1]) else 1)\n"
)


def open_in_browser(page: Path | str) -> None:
    """``--open``: a browser that cannot be started is a warning (the page was written, or
    is served), not silence: ``webbrowser.open`` says so only by returning False. A string
    is an address, opened as it is. Waits while the browser starts (or, for one that stays
    in the foreground, runs): for a page already written, never for one still to be served."""
    import webbrowser

    address = page if isinstance(page, str) else page.resolve().as_uri()
    with _stdout_to_stderr():  # the browser's chatter is not our output (the page's path)
        opened = webbrowser.open(address)
    if not opened:
        _could_not_open(str(page))


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """File descriptor 1 pointed at stderr while a browser starts: it inherits our stdout,
    and a running Chromium prints "Opening in existing browser session." there, after the
    written page's path that scripts (the Pi package's /export-html) read as the result."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no stdout: nothing to keep apart
        yield
        return
    try:
        with contextlib.suppress(OSError):  # no stderr: the browser shares stdout, as before
            os.dup2(2, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _could_not_open(where: str) -> None:
    click.echo(
        f"pi-session: warning: could not open a browser; the page is {terminal_text(where)}",
        err=True,
    )


def redirect_page(address: str) -> str:
    """A page that sends the browser on to ``address`` at once (a console browser that does
    not follow a refresh shows the link)."""
    target = html.escape(address, quote=True)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="refresh" content="0;url={target}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        "<title>pi-session watch</title>\n</head>\n<body>\n"
        f'<p><a href="{target}">Open the session\'s live page</a></p>\n</body>\n</html>\n'
    )


class PrivateOpen:
    """A browser being started on a served address through a redirect file, in a process of
    its own: the caller goes on serving, asks :meth:`check` now and then (a browser that
    could not be started is said once) and calls :meth:`close` when it stops serving."""

    def __init__(
        self,
        address: str,
        folder: Path,
        opener: subprocess.Popen[bytes],
        served: Callable[[], bool] | None = None,
    ) -> None:
        self.address = address
        self.folder = folder
        self.opener: subprocess.Popen[bytes] | None = opener
        self.served = served  # whether a browser has asked for the page yet
        self.handed_over: float | None = None  # when the opener ended, having opened it

    def check(self) -> None:
        """Say once that no browser took the page, when the opener has ended saying so;
        open the address itself when no browser asked for the page in time after the file
        was handed over."""
        if self.opener is not None:
            if self.opener.poll() is None:
                return  # still handing it over, or a console browser that keeps it
            code, self.opener = self.opener.returncode, None
            if code != 0:  # (< 0: stopped by a signal, Ctrl-C's: nothing to say)
                self.served = None
                if code > 0:
                    _could_not_open(self.address)
                return
            self.handed_over = time.monotonic()
        if self.served is None or self.handed_over is None:
            return
        if time.monotonic() - self.handed_over < FALLBACK_SECONDS:
            return
        came, self.served = self.served(), None  # once
        if came:
            return
        click.echo(
            "pi-session: note: no browser came for the page through the redirect file (a "
            "snap or Flatpak browser cannot read /tmp); opening its address instead",
            err=True,
        )
        try:
            self.opener = _start_opener(self.address)
        except (OSError, ValueError):
            _could_not_open(self.address)

    def close(self) -> None:
        """Remove the redirect file; a browser still running is the user's, left alone."""
        if self.opener is not None:
            self.opener.poll()  # reaped if it has ended
        shutil.rmtree(self.folder, ignore_errors=True)


def _start_opener(target: str) -> subprocess.Popen[bytes]:
    """A process that hands ``target`` to the browser (``webbrowser.open``), not waited for;
    its stdout goes where ours does not ("Opening in existing browser session.")."""
    return subprocess.Popen(
        [sys.executable, "-I", "-c", _OPENER, target],
        stdout=_stderr_or_nothing(),
        close_fds=True,
    )


def open_privately(address: str, served: Callable[[], bool] | None = None) -> PrivateOpen | None:
    """Start a browser on ``address`` without waiting for it and without the address on any
    command line: a redirect file (mode 0600, in a new 0700 folder) is what it opens. None,
    with the warning said, when not even that could be begun. ``served`` says whether a
    browser has asked for the page yet (see :meth:`PrivateOpen.check`)."""
    try:
        folder = Path(tempfile.mkdtemp(prefix="pi-session-open-"))  # 0700, ours alone
    except OSError:
        _could_not_open(address)
        return None
    page = folder / "open.html"
    try:
        handle = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with open(handle, "w", encoding="utf-8") as file:
            file.write(redirect_page(address))
        # no descriptor of ours is changed while we serve
        opener = _start_opener(page.as_uri())
    except (OSError, ValueError):  # a full disk, no Python to run: the address is printed
        shutil.rmtree(folder, ignore_errors=True)
        _could_not_open(address)
        return None
    return PrivateOpen(address, folder, opener, served)


def _stderr_or_nothing() -> int:
    """Our stderr's descriptor for a child's stdout, or the null device without one."""
    try:
        descriptor = sys.stderr.fileno()
        os.fstat(descriptor)
    except (AttributeError, ValueError, OSError):  # none, or not a real file (a test's)
        return subprocess.DEVNULL
    return descriptor
