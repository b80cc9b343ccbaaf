"""`pi-session watch`: a session's page served on 127.0.0.1, made again whenever the session
grows; the open page reloads itself and keeps the reader's place."""

from __future__ import annotations

import dataclasses
import errno
import functools
import os
import signal
import stat
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from exporter.agent_context import (
    AgentContext,
    agent_context_option,
    read_agent_context,
    redact_agent_context,
)
from exporter.browser_open import PrivateOpen, open_privately
from exporter.claude_code import sub_agent_files
from exporter.cli import CliError, session_argument, session_path, warn
from exporter.discover import session_files
from exporter.export_cli import page_options
from exporter.formatting import terminal_text
from exporter.jsonl_out import download_bytes
from exporter.loader import SessionFormatError, load_session
from exporter.policy import RedactionPolicy
from exporter.prepare import policy_changes_nothing, prepare_session
from exporter.redact_cli import (
    check_exclusions,
    exclude_option,
    policy_from_options,
    policy_options,
)
from exporter.render import RenderOptions
from exporter.secret_warning import likely_secret_values, secrets_warning_line
from exporter.session import Session
from exporter.share_cuts import unknown_exclusions
from exporter.watch import SessionWatch

if TYPE_CHECKING:
    from exporter.live_server import LiveServer

#: Seconds between two looks at the file.
POLL_SECONDS = 0.5


@click.command("watch")
@session_argument
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 to serve the page on; 0 takes a free one.",
)
@page_options
@click.option("--open", "open_page", is_flag=True, help="Open the page in a browser.")
@click.option(
    "--until-stdin-closes",
    is_flag=True,
    help="Stop when stdin reaches its end: for a program that starts the watch on a pipe "
    "and wants it gone with itself, however it ends (Pi's /live-html).",
)
@policy_options(
    redact_default=False,
    report=None,
    redact_help="Replace secrets, the home folder and the user name in every version served.",
)
@exclude_option
@agent_context_option
def watch_command(
    session: str | None,
    demo: bool,
    sessions_dir: str | None,
    port: int,
    leaf: str | None,
    theme: str,
    no_embed: bool,
    open_page: bool,
    until_stdin_closes: bool,
    agent_context: str | None,
    **policy_values: Any,
) -> None:
    """Serve SESSION's page on this computer (http://127.0.0.1:PORT/SECRET/) and make it again
    whenever the session changes: the open page reloads itself, keeping its place, and
    follows the end of the session if the reader is there. Ctrl-C (or SIGTERM) stops it, with
    exit code 0: stopping is how watch ends.

    Without SESSION: this folder's latest session; when a newer one starts here (/new in
    Pi), the page switches to it. The policy options (--redact, --no-tool-output, ...) and
    --exclude apply to every version of the page, as to an exported one: for a screen others
    can see. --agent-context FILE is read once, when the watch starts (the file may go
    then), and shown on every version, redacted with the session.

    The address holds a random secret, so other users of this computer cannot read the
    session ($PI_SESSION_WATCH_SECRET sets it, for an address that outlives one watch).
    """
    if policy_values.get("report"):
        raise CliError(
            "--report is for export, redact, share and publish: watch makes its page again "
            "and again",
            1,
        )
    if session == "-":  # it served a page that could never change, "watching /dev/stdin"
        raise CliError(
            "watch follows a session file as it grows; - (stdin) never changes: name the "
            "file, or use `pi-session export -`",
            1,
        )
    policy = policy_from_options(**policy_values)
    prepare: _LastPrepared | None = None
    if not policy_changes_nothing(policy):
        count = not policy.redact  # a cut alone: its copy is what the page shows
        prepare = _LastPrepared(functools.partial(_prepared, policy.resolved()), count)
    path = session_path(session, demo, sessions_dir, leaf)
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise CliError("watch follows a session file as it grows; a pipe cannot be watched", 1)
    if policy.exclude:  # a typo would show what it meant to hide: refused before serving
        _check_exclusions_in(path, policy, leaf)
    newest = None
    if session is None and not demo:  # (a session named needs no current folder)
        here = os.getcwd()

        def newest() -> list[Path]:
            return session_files(sessions_dir, here)

    # read once, now: the program that wrote it (Pi's /live-html) removes it once we serve
    context = None if agent_context is None else read_agent_context(agent_context, warn)
    server = _bind(port)  # first: a port in use is said before the first page is made
    browser: PrivateOpen | None = None
    # `kill`, a service manager: stop as on Ctrl-C, from here on (the first page of a big
    # session takes seconds: stopped then, it ended with 143, or 130 for Ctrl-C)
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        options = RenderOptions(  # jobs 0: one per CPU
            theme=theme, embed_jsonl=not no_embed, jobs=0, agent_context=context
        )
        try:
            watch = SessionWatch(path, options, leaf=leaf, newest=newest, prepare=prepare)
        except KeyError as error:  # --leaf names no entry of the file
            raise CliError(str(error.args[0]), 1) from None
        server.watch = watch
        # a page made without redaction (a cut alone too: its copy holds them) is checked
        credentials = None if policy.redact else _CredentialWatch(context, prepare)
        _print_warnings(watch)
        if credentials is not None:
            credentials.check(watch.path)
        click.echo(server.url)
        click.echo(
            terminal_text(f"pi-session: watching {path}; Ctrl-C stops"),
            err=True,
        )

        # not waited for: a browser that stays in the foreground (w3m, a $BROWSER script)
        # asks for the page, which only the loop below answers
        def came() -> bool:  # a browser has asked for the page (read each time: an int)
            return server.pages_served > 0

        browser = open_privately(server.url, came) if open_page else None
        server.idle = _looker(watch, until_stdin_closes, credentials, browser)
        server.serve_forever(poll_interval=POLL_SECONDS / 2)
    except (KeyboardInterrupt, _Stopped, _StdinClosed):
        pass
    finally:
        server.server_close()
        if browser is not None:
            browser.close()
        if previous is not None:  # (None: a handler not set from Python, left as it is)
            signal.signal(signal.SIGTERM, previous)
    click.echo("pi-session: stopped", err=True)


def _prepared(
    policy: RedactionPolicy, session: Session, context: AgentContext | None
) -> tuple[Session, AgentContext | None]:
    """One version's session under the policy, and the agent's context redacted with it
    (counted in the same report, so the page's redaction note says both), as export does.
    A newer session followed after Pi's /new has none of the --exclude ids (checked on the
    first): they are left out of the policy, which would refuse them."""
    unknown = unknown_exclusions(session, policy.exclude)
    if unknown:
        policy = dataclasses.replace(
            policy, exclude=tuple(spec for spec in policy.exclude if spec not in unknown)
        )
    prepared, report = prepare_session(session, policy)
    return prepared, redact_agent_context(context, policy, report, prepared, session.header.cwd)


def _check_exclusions_in(path: Path, policy: RedactionPolicy, leaf: str | None) -> None:
    """``--exclude`` ids the session does not have are refused as ``export`` refuses them,
    and so is a ``--leaf`` they leave out; later versions leave the same entries out (a
    newer session followed has none of them)."""
    try:
        session = load_session(path)
    except (OSError, SessionFormatError):
        return  # the watch's own first read says what is wrong with the file
    if leaf is not None:
        try:
            session.set_leaf(leaf)
        except KeyError:
            leaf = None  # the watch's own first read says the leaf is not there
    check_exclusions(session, policy, "nothing was served", leaf)


class _StdinClosed(BaseException):
    """--until-stdin-closes: the program that started the watch has gone."""


class _Stopped(BaseException):
    """SIGTERM arrived. A BaseException, as KeyboardInterrupt is: the server's request
    handling catches every Exception, and the signal may come while it answers one."""


def _stop(signum: int, frame: object) -> None:
    raise _Stopped


def _bind(port: int) -> LiveServer:
    """The server (its module imported only here) on its port, with its secret; a port
    taken by another program, or one this user may not take, is a clean error."""
    from exporter.live_server import LiveServer, url_secret

    try:
        secret = url_secret()
    except ValueError as error:
        raise CliError(str(error), 1) from None
    try:
        return LiveServer(None, port, secret=secret)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise CliError(
                f"port {port} on 127.0.0.1 is in use; pass another --port (0 takes a free one)",
                2,
            ) from None
        reason = error.strerror or str(error)
        raise CliError(f"cannot listen on 127.0.0.1 port {port}: {reason}", 2) from None


def _looker(
    watch: SessionWatch,
    until_stdin_closes: bool,
    credentials: _CredentialWatch | None = None,
    browser: PrivateOpen | None = None,
) -> Callable[[], None]:
    """A look at the file at most every half second, saying on stderr what changed; with
    ``until_stdin_closes``, a look at stdin too (its end stops the watch); ``credentials``
    (a page made without redaction): said when the page comes to hold more of them;
    ``browser`` (--open): said if no browser took the page."""
    last = [time.monotonic()]

    def look() -> None:
        if until_stdin_closes and _stdin_ended():
            raise _StdinClosed
        if browser is not None:
            browser.check()
        if time.monotonic() - last[0] < POLL_SECONDS:
            return
        news = watch.step()
        last[0] = time.monotonic()  # after the page is made: a slow one is not made twice
        _print_warnings(watch)
        if news:
            moment = time.strftime("%H:%M:%S")
            click.echo(terminal_text(f"pi-session: {moment} {news}"), err=True)
            if credentials is not None:
                credentials.check(watch.path)

    return look


class _LastPrepared:
    """The policy applied to each version; with ``count`` (a cut without redaction, whose
    copy is what the page shows and still holds credentials), the credentials that copy
    holds, counted as soon as it is made: only their digests are kept, not the copy (a
    25 MB session's copy is ~75 MB more for as long as the watch runs)."""

    def __init__(
        self, prepare: Callable[..., tuple[Session, AgentContext | None]], count: bool = False
    ) -> None:
        self.prepare = prepare
        self.count = count
        self.found: tuple[dict[str, str], bool] | None = None

    def __call__(
        self, session: Session, context: AgentContext | None
    ) -> tuple[Session, AgentContext | None]:
        prepared, context = self.prepare(session, context)
        if self.count:
            self.found = likely_secret_values(download_bytes(prepared))
        return prepared, context


class _CredentialWatch:
    """What `export` says of a page made without redaction, said by `watch` when it
    starts serving, and again whenever a new version holds a credential of a known format
    not said before (a token the agent just printed; with --active-branch-only also one
    on a branch that became active as another left the page), never on every version and
    never with their values. ``cut`` (a policy that cuts but does not redact): its copy is
    what is counted, not the file."""

    def __init__(self, context: AgentContext | None, cut: _LastPrepared | None = None) -> None:
        told: list[str] = []
        if context is not None:  # every string the cards show, as export scans them
            context.map_text(lambda value, _where: told.append(value) or value)
        self.context, self.context_more = likely_secret_values("\n".join(told))
        self.cut = cut
        self.said: set[str] = set()

    def check(self, path: Path) -> None:
        if self.cut is not None and self.cut.found is not None:
            found, more = self.cut.found
        else:
            try:  # the file, and the sub-agents' transcripts a Claude Code page shows too
                data = b"\n".join(file.read_bytes() for file in [path, *sub_agent_files(path)])
            except OSError:  # the watch says what is wrong with the file
                return
            found, more = likely_secret_values(data)
        found = {**found, **self.context}
        if found.keys() <= self.said:
            return
        self.said.update(found)
        line = secrets_warning_line(
            Counter(found.values()), more or self.context_more, "watch --redact serves it redacted"
        )
        click.echo(terminal_text(f"pi-session: warning: {line}"), err=True)


def _stdin_ended() -> bool:
    """Whether stdin is at its end (readable, and a read gives nothing), without waiting."""
    import select

    stream = sys.stdin
    if stream is None:
        return True
    try:
        ready, _, _ = select.select([stream.fileno()], [], [], 0)
        return bool(ready) and os.read(stream.fileno(), 4096) == b""
    except (OSError, ValueError):  # closed, or no file descriptor at all
        return True


def _print_warnings(watch: SessionWatch) -> None:
    for message in watch.warnings:
        warn(message)
    watch.warnings.clear()
