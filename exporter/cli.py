"""The `pi-session` command line: one click group, thin commands, errors as one clean line.

Commands only parse options, call the library and print; every failure the library can raise
is turned into a one-line message and an exit code (1 usage, 2 bad input, 3 remote/auth).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import importlib
import io
import ipaddress
import json
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import click

from exporter import __version__
from exporter.discover import (
    SessionLookupError,
    agent_dir,
    resolve_session_arg,
    session_files,
)
from exporter.formatting import (
    decode_escaped_utf8,
    escape_surrogates,
    json_safe_for_terminal,
    path_said,
    terminal_text,
)
from exporter.jsonl_in import allow_long_integers
from exporter.loader import SessionFormatError, load_session
from exporter.session import Session

F = TypeVar("F", bound=Callable[..., Any])


class CliError(click.ClickException):
    """A clean one-line failure with a chosen exit code."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code

    def show(self, file: Any = None) -> None:
        # a path or an argument in it says its UTF-8 (the C locale decoded it as ASCII)
        said = decode_escaped_utf8(self.format_message())
        click.echo(terminal_text(f"pi-session: error: {said}"), err=True)


# Commands in their own modules, imported only when used: `export` must not pay for
# `requests` or `huggingface_hub` at start-up.
LAZY_COMMANDS = {
    "list": ("exporter.inspect_cli", "list_command"),
    "stats": ("exporter.inspect_cli", "stats_command"),
    "search": ("exporter.search_cli", "search_command"),
    "export": ("exporter.export_cli", "export_command"),
    "redact": ("exporter.redact_cli", "redact_command"),
    "share": ("exporter.share_cli", "share_command"),
    "publish": ("exporter.publish_cli", "publish_command"),
    "pi-extension": ("exporter.pi_extension_cli", "pi_extension_command"),
    "watch": ("exporter.watch_cli", "watch_command"),
}
#: One line per command for `pi-session --help` (click cut each docstring mid-sentence, and
#: listing them imported every command's module).
SHORT_HELP = {
    "export": "Render a session to one HTML page (or Markdown), or every session to a site.",
    "list": "List sessions, newest first.",
    "stats": "A session's header facts and usage tables, or every session's usage (--all).",
    "search": "Find the sessions and entries that say something (every branch).",
    "redact": "Write a redacted copy of a session that Pi can still open.",
    "share": "Share a session as a secret GitHub gist (redacted), or delete one.",
    "publish": "Publish sessions to a private Hugging Face dataset (redacted).",
    "pi-extension": "The Pi package: /export-html, /share-html, /live-html; its folder or install.",
    "watch": "Serve a session's page on 127.0.0.1, made again as the session grows.",
}


class SessionGroup(click.Group):
    """Loads command modules lazily and maps library exceptions to clean one-line errors."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.exceptions.NoArgsIsHelpError as error:  # bare `pi-session`: the help
            error.exit_code = 1
            raise
        except click.UsageError as error:
            raise _one_line_usage_error(error, info_name or "pi-session") from None
        except BrokenPipeError:  # `pi-session --help | head -1`
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise click.exceptions.Exit(EXIT_BROKEN_PIPE) from None
        except OSError as error:  # `--help` or `--version` into a full disk
            if stdout_closed():  # "standard output is closed" names it already
                raise CliError(str(error.strerror or error), 2) from None
            raise CliError(f"standard output: {error.strerror or error}", 2) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *LAZY_COMMANDS])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, SHORT_HELP.get(name, "")) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            module, attr = LAZY_COMMANDS[cmd_name]
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        command = super().get_command(ctx, cmd_name)
        return None if command is None else _with_utf8_arguments(command)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """An unknown command names the nearest one (``exprot``: did you mean export?), as
        a mistyped option already did."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            import difflib

            near = difflib.get_close_matches(name, self.list_commands(ctx), n=1, cutoff=0.6)
            if near:
                ctx.fail(f"No such command '{name}'. Did you mean '{near[0]}'?")
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            sub = ctx.invoked_subcommand
            raise _one_line_usage_error(
                error, f"{ctx.command_path} {sub}" if sub else ctx.command_path
            ) from None
        except (SessionFormatError, SessionLookupError) as error:
            raise CliError(str(error), 2) from None
        except UnicodeError as error:
            raise CliError(f"text encoding problem: {error}", 2) from None
        except MemoryError:  # a file of one endless line, `cat /dev/zero | pi-session ... -`
            raise CliError(
                "not enough memory: the input is too large to read (is it a Pi session?)", 2
            ) from None
        except KeyboardInterrupt:  # Ctrl-C: a shell's 128 + SIGINT, not click's 1 (usage)
            from exporter.launch import interrupted_exit  # (SIGTERM, SIGHUP: 143, 129)

            said, code = interrupted_exit()
            with contextlib.suppress(OSError, ValueError):  # (SIGHUP: the terminal may be gone)
                click.echo(said, err=True)
            ctx.exit(code)
        except BrokenPipeError:  # `pi-session list --json | head`: the reader stopped early
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes at exit
            ctx.exit(EXIT_BROKEN_PIPE)  # quietly, but not "done": the output was cut short
        except OSError as error:
            gone = isinstance(error, FileNotFoundError) and current_folder_if_any() is None
            if gone and not error.filename:
                # os.getcwd() in a deleted folder: "No such file or directory" named nothing
                raise CliError(f"{CWD_GONE}; cd to a folder that exists", 2) from None
            where = f"{error.filename}: " if error.filename else ""
            raise CliError(f"{where}{error.strerror or error}", 2) from None
        except Exception as error:
            # imported only on this path: a plain export does not load the publish and site
            # modules (their import is a few ms of every run)
            from exporter.publish.errors import PublishError
            from exporter.site_manifest import SiteError

            if isinstance(error, PublishError):
                raise CliError(str(error), error.exit_code) from None
            if isinstance(error, SiteError):  # a site folder in use or not ours
                raise CliError(str(error), 1) from None
            raise


class Utf8Text(click.types.StringParamType):
    """A text argument as the user typed it. With Python's UTF-8 mode off in the C locale
    (``PYTHONUTF8=0 LC_ALL=C``) its UTF-8 bytes arrive decoded as ASCII, each one escaped
    (``\\udce7…``): `search 登录` found nothing, and an id or a date in an error was
    ``\\udcXX`` noise. Such a value is decoded as UTF-8 (:func:`decode_escaped_utf8`),
    unless ``names_a_file`` says it names a file: Python opens a file by its escaped bytes,
    and would not find it by its UTF-8 characters (nor one whose bytes are no UTF-8)."""

    def __init__(self, names_a_file: Callable[[str], bool] | None = None) -> None:
        self.names_a_file = names_a_file

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = super().convert(value, param, ctx)
        if not isinstance(text, str) or (self.names_a_file and self.names_a_file(text)):
            return text
        return decode_escaped_utf8(text)


def _is_there(value: str) -> bool:
    """Whether ``value`` (``~`` expanded) is a name in the file system."""
    return os.path.lexists(value) or os.path.lexists(os.path.expanduser(value))


def _session_file(value: str) -> bool:
    """A SESSION (or ``--skip``) value naming a file, as :func:`resolve_session_arg` takes
    it: written as a path, or a file that is there; else it is an id or id prefix."""
    return _names_a_file(value) or _is_there(value)


#: Text options that name a file, whatever they hold (a click.Path type is one too).
_FILE_OPTIONS = frozenset({"output", "pi_binary", "agent_context"})
#: How the text parameters that name a file or something else tell them apart; the other
#: text parameters (PATTERN, --leaf, --since, --redact-pattern, ...) never name a file.
_FILE_OR_TEXT = {
    "session": _session_file,
    "sessions": _session_file,
    "skip": _session_file,  # SESSION|FILE
    "secret": _is_there,  # VALUE|FILE
    "deny": _is_there,  # REGEX|FILE
}


def _with_utf8_arguments(command: click.Command) -> click.Command:
    """``command`` with its text parameters typed :class:`Utf8Text`: one place for every
    command's arguments, as click hands them over."""
    for param in command.params:
        if type(param.type) is not click.types.StringParamType:  # paths, flags, choices
            continue
        if param.name in _FILE_OPTIONS:
            continue
        param.type = Utf8Text(_FILE_OR_TEXT.get(param.name or ""))
    return command


def _one_line_usage_error(error: click.UsageError, where: str) -> CliError:
    """click's usage error as our one line, exit 1 (our contract: 1 usage, 2 bad input, 3
    remote), with the help command to run instead of click's four-line usage block."""
    command = error.ctx.command_path if error.ctx else where
    if isinstance(error, click.NoSuchOption) and error.ctx is not None:
        other = _SAME_ROOT_OPTION.get(error.option_name)
        if other and any(other in param.opts for param in error.ctx.command.params):
            error.possibilities = [other]  # `share --endpoint`: "did you mean --report?"
    return CliError(f"{_lower_first(error.format_message())} (see: {command} --help)", 1)


def _lower_first(message: str) -> str:
    """click's "No such option …", "Invalid value …" in our style, lower case after
    ``error:``; a name in capitals (``PATTERN``, ``REPO_ID``) stays as it is."""
    if len(message) > 1 and message[0].isupper() and message[1].islower():
        return message[0].lower() + message[1:]
    return message


#: The API root is `share --api-url` (GitHub's name) but `publish --endpoint` (the Hub's,
#: and HF_ENDPOINT's): the one typed at the other command is suggested as what it means.
_SAME_ROOT_OPTION = {"--endpoint": "--api-url", "--api-url": "--endpoint"}


#: What a shell reports for a tool killed by SIGPIPE (128 + 13), so `set -o pipefail` sees
#: that the output was cut short.
EXIT_BROKEN_PIPE = 141
#: ... and for one stopped by Ctrl-C (128 + 2).
EXIT_INTERRUPTED = 130


def existing_sessions_dir(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Any:
    """--sessions-dir as given, when it is a folder: a typo is said as such (exit 2), not
    as "no Pi sessions for <cwd> under <typo>"; a file there is a folder not found too (it
    was click's exit 1, in click's words); a folder behind one the user may not enter, or
    one they may not read, is said as that (it was "does not exist", or click's exit 1)."""
    if value is None:
        return value
    place = os.path.expanduser(value)
    try:
        is_folder = stat.S_ISDIR(os.stat(place).st_mode)
    except PermissionError:
        raise CliError(
            f"--sessions-dir: {value} cannot be reached: a folder on its way does not let "
            "you in (Permission denied)",
            2,
        ) from None
    except (FileNotFoundError, NotADirectoryError):
        raise CliError(f"--sessions-dir: {value} does not exist", 2) from None
    except OSError as error:
        raise CliError(f"--sessions-dir: {value}: {error.strerror or error}", 2) from None
    if not is_folder:
        raise CliError(f"--sessions-dir: {value} is a file, not a folder", 2)
    if not os.access(place, os.R_OK | os.X_OK):
        raise CliError(f"--sessions-dir: {value} is not readable to you (Permission denied)", 2)
    return value


def _names_a_file(session: str | None) -> bool:
    """A SESSION argument written as a file's path, not an id looked up in the folder."""
    if not session:
        return False
    return "/" in session or os.sep in session or session.endswith((".jsonl", ".gz"))


def refuse_a_missing_agent_dir(sessions_dir: str | None) -> None:
    """PI_CODING_AGENT_DIR naming a file or nothing (a typo), when the sessions are looked
    for under it, said as such (exit 2) by every command, as a --sessions-dir typo is: "no
    Pi sessions for … under /typo/sessions (it does not exist)" read as Pi never having
    run. An agent folder without sessions yet is no error (Pi has not saved one)."""
    if sessions_dir or not os.environ.get("PI_CODING_AGENT_DIR"):
        return
    folder = agent_dir()
    if folder.is_dir():
        return
    what = "is not a folder" if folder.exists() else "does not exist"
    raise CliError(f"PI_CODING_AGENT_DIR: {folder} {what}", 2)


#: --sessions-dir's type: checked by :func:`existing_sessions_dir`, not by click.
SESSIONS_DIR_TYPE = click.Path(path_type=str, readable=False)


def project_folder(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Any:
    """--cwd as every command takes it: an absolute path, ``~`` expanded as --sessions-dir's
    is (``--cwd=~/p`` reaches us unexpanded), relative to this folder. A folder that is gone
    is fine (a deleted project's sessions); a file is a usage error, and so is an empty
    value (``--cwd "$DIR"`` with DIR unset), which `stats --all` and `export --all` took
    for every project and `list`, `search` and `publish` for this folder."""
    if value is None:
        return None
    if not value.strip():
        raise CliError("--cwd is empty: give a project folder", 1)
    place = os.path.abspath(os.path.expanduser(value))
    if os.path.exists(place) and not os.path.isdir(place):
        raise CliError(f"--cwd: {value} is a file, not a project folder", 1)
    return place


def project_scope(cwd: str | None, all_projects: bool) -> str | None:
    """The project a command's sessions are of (None: every project's). ``--cwd X`` picks X
    with or without ``--all``; ``--all`` alone is every project, neither this folder."""
    if cwd is not None:
        return os.path.abspath(cwd)
    return None if all_projects else current_folder("pass --cwd DIR or --all")


#: Said when the current folder was deleted under the shell (a removed git worktree).
CWD_GONE = "the current folder no longer exists (deleted?)"


def current_folder(instead: str) -> str:
    """The current folder, which a command without SESSION or --cwd works on. Deleted
    under the shell (``cd wt && git worktree remove wt``): a clean error saying so and what
    to pass ``instead`` (exit 2); it was "error: No such file or directory", naming nothing."""
    here = current_folder_if_any()
    if here is None:
        raise CliError(f"{CWD_GONE}; {instead}", 2)
    return here


def current_folder_if_any() -> str | None:
    """The current folder; None when it was deleted under the shell."""
    try:
        return os.path.abspath(os.getcwd())
    except FileNotFoundError:
        return None


#: --cwd's type: checked by :func:`project_folder`, not by click (which saw no ``~``).
CWD_TYPE = click.Path(path_type=str)


SESSIONS_DIR_HELP = (
    "Folder of Pi sessions (default: $PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions;"
    " ~/.claude/projects for Claude Code's, ~/.codex/sessions for Codex's)."
)


def session_argument(func: F) -> F:
    """SESSION plus the options that locate it, shared by every command that reads one.
    ``--pick`` asks which session (a numbered list) and hands the command its path."""

    command = func

    @functools.wraps(command)
    def picking(*args: Any, pick: bool = False, **kwargs: Any) -> Any:
        if pick:
            if kwargs.get("session") is not None or kwargs.get("demo"):
                raise CliError("give SESSION, --demo or --pick, not two of them", 1)
            from exporter.picker import pick_session

            kwargs["session"] = str(pick_session(kwargs.get("sessions_dir")))
        return command(*args, **kwargs)

    func = click.option(
        "--pick",
        is_flag=True,
        help="Choose the session from a numbered list of this folder's newest (every "
        "project's when it has none).",
    )(picking)  # type: ignore[assignment]
    func = click.option(
        "--sessions-dir",
        type=SESSIONS_DIR_TYPE,
        metavar="DIRECTORY",
        callback=existing_sessions_dir,
        help=SESSIONS_DIR_HELP,
    )(func)
    func = click.option("--demo", is_flag=True, help="Use the real session bundled as a demo.")(
        func
    )
    return click.argument("session", required=False)(func)


def scope_conflict(named: str = "SESSION") -> CliError:
    """SESSION (or ``--demo``) given with ``--cwd``/``--all``: both choose the sessions to
    work on. Said in these words by every command that takes both (it had three wordings)."""
    return CliError(
        f"{named} and --cwd/--all both choose the sessions: give {named}, or --cwd DIR "
        "(a project's sessions) or --all (every project's), not both",
        1,
    )


def session_path(
    session: str | None, demo: bool, sessions_dir: str | None, leaf: str | None = None
) -> Path:
    """SESSION (or --demo) as a file, once the choice and ``--leaf`` make sense."""
    if leaf is not None and not leaf.strip():
        raise CliError("--leaf needs an entry id (it was empty)", 1)
    if demo and session is not None:  # which one did the user mean?
        raise CliError("give SESSION or --demo, not both", 1)
    return resolved_session(session, demo=demo, sessions_dir=sessions_dir)


def resolved_session(
    session: str | None, *, demo: bool = False, sessions_dir: str | None = None
) -> Path:
    """:func:`resolve_session_arg`, with its note on stderr when an id named copies in
    several project folders and one of them was taken (identical ones, or this project's
    of copies that differ)."""
    notes: list[str] = []
    # this folder's latest: said as such when the folder is gone (not "No such file...")
    here = current_folder(PASS_SESSION) if session is None and not demo else None
    try:
        path = resolve_session_arg(
            session, demo=demo, sessions_dir=sessions_dir, cwd=here, notes=notes
        )
    except SessionLookupError:  # none found where it looked: the folder may not be there
        if not _names_a_file(session):  # (a mistyped file name is said as one)
            refuse_a_missing_agent_dir(sessions_dir)
        raise
    for note in notes:
        click.echo(terminal_text(f"pi-session: note: {note}"), err=True)
    return path


#: What a command that reads one session can be given when this folder has none to use.
PASS_SESSION = "pass SESSION (a session file, id or id prefix) or --pick"


def named_session_files(
    sessions: tuple[str, ...], sessions_dir: str | None, reader: str
) -> list[Path]:
    """SESSION arguments (paths, ids, id prefixes) as files, for a command that reads each
    file twice (``reader``: "publish needs", "search reads"): stdin and pipes are refused."""
    if "-" in sessions:  # stdin from a file passed as one (it went up as "stdin.jsonl")
        raise CliError(f"{reader} session files, not - (stdin): name the file", 1)
    files = [resolved_session(s, sessions_dir=sessions_dir) for s in sessions]
    piped = [s for s, f in zip(sessions, files, strict=True) if not f.is_file()]
    if piped:
        raise CliError(f"{reader} session files, not a pipe ({piped[0]}): save it first", 1)
    return files


def open_session(
    session: str | None,
    demo: bool,
    sessions_dir: str | None,
    leaf: str | None = None,
    *,
    warnings: bool = True,
) -> Session:
    """Resolve SESSION, load it, choose the leaf, and print load warnings on stderr.

    ``warnings=False``: the caller prints them from its redacted copy, as they quote ids and
    values from the file (a parent id holding a token would reach a CI log in clear)."""
    path = session_path(session, demo, sessions_dir, leaf)
    loaded = load_session(path) if session or demo else _latest_readable(path, sessions_dir)
    if leaf is not None:
        try:
            loaded.set_leaf(leaf)
        except KeyError as error:
            raise CliError(str(error.args[0]), 1) from None
    if warnings:
        report_diagnostics(loaded)
    return loaded


#: How many older sessions SESSION's default looks through when the latest cannot be read.
FALLBACK_SESSIONS = 5


def _latest_readable(latest: Path, sessions_dir: str | None) -> Session:
    """SESSION left out: this folder's latest session or, when it cannot be read (a file
    being written, a damaged copy), the newest of the next few that can, with a warning
    naming the one skipped (it was an error, though an older session was right there)."""
    try:
        return load_session(latest)
    except (SessionFormatError, OSError) as error:
        first_error = error
    older = session_files(sessions_dir, current_folder(PASS_SESSION))[1 : 1 + FALLBACK_SESSIONS]
    for candidate in older:
        try:
            loaded = load_session(candidate)
        except (SessionFormatError, OSError):
            continue
        warn(
            f"the latest session cannot be read ({_reason(first_error)}); using the newest "
            f"one that can: {candidate.name} (pass SESSION to choose)"
        )
        return loaded
    raise first_error


def _reason(error: Exception) -> str:
    """An error as the one line the CLI prints for it (an OSError's text with its file)."""
    if isinstance(error, OSError):
        return f"{error.filename}: {error.strerror or error}" if error.filename else str(error)
    return str(error)


def echo_json(document: Any, indent: int | None = None) -> None:
    """Print a document as strict JSON.

    Lone surrogates (valid in Pi's files, not in UTF-8) become ``\\uXXXX`` escapes, so the
    output is valid UTF-8 and parses back to the same string; a number that overflowed
    (costs adding up past the float range) becomes null, as JSON has no Infinity.
    """
    ascii_only = not _stdout_takes_utf8()  # a Latin-1 terminal gets \\u escapes, not an error
    text = json.dumps(_for_json(document), ensure_ascii=ascii_only, indent=indent, allow_nan=False)
    with stdout_named():
        click.echo(json_safe_for_terminal(escape_surrogates(text)))


def _stdout_takes_utf8() -> bool:
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    return encoding.lower().replace("_", "-") in ("utf-8", "utf8")


def _for_json(value: Any) -> Any:
    """``value`` with its overflowed numbers None and its file paths (each ``"path"``) as
    :func:`path_said` says them: a name Python decoded as ASCII (the C locale) held
    ``\\udcXX`` escapes, which `jq` turns into U+FFFD, a path that does not exist."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {
            key: path_said(item) if key == "path" and isinstance(item, str) else _for_json(item)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_for_json(item) for item in value]
    return value


def write_stdout_bytes(data: bytes) -> None:
    """All of ``data`` on stdout. Unbuffered (``python -u``, ``PYTHONUNBUFFERED``, common
    in containers) one write can take part of it when the reader goes away; the rest was
    lost and the command said it succeeded. Looping makes the next write fail instead.
    A failure names standard output: "No space left on device" alone, after `export -o
    page.html >/dev/full` had written the page, read as the page's write failing."""
    out = sys.stdout.buffer
    view = memoryview(data)
    with stdout_named():
        while view:
            written = out.write(view)
            view = view[written if written is not None else 0 :]
        out.flush()


@contextlib.contextmanager
def stdout_named() -> Iterator[None]:
    """Writes to stdout whose failure names it ("standard output: No space left on
    device"): the error alone, after a page had been written, read as its write failing;
    `list --json >/dev/full` said no more than that either."""
    try:
        yield
    except BrokenPipeError:  # the reader went away: quietly, as every command does
        raise
    except OSError as error:
        if error.filename or stdout_closed():  # (closed: "standard output is closed")
            raise
        raise OSError(error.errno, error.strerror, "standard output") from None


def echo_text(text: str) -> None:
    """Print human text built from session strings: controls shown as signs
    (:func:`terminal_text`), a lone surrogate as U+FFFD instead of a crash."""
    with stdout_named():
        click.echo(terminal_text(text))


def check_http_url(url: str, option: str) -> None:
    """An API root must be an https URL with a host (plain http only on this machine: the
    token would cross the network readable); anything else is a usage error."""
    # credentials are never printed: without "://" all before the host's "@" may be one;
    # nor is a query or fragment ("?access_token=…"), cut from every message
    masked = (
        _USERINFO.sub(r"\1***@", url, count=1)
        if "://" in url
        else re.sub(r"^[^/]*@", "***@", url, count=1)
    )
    shown = repr(re.split(r"[?#]", masked, maxsplit=1)[0])
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:  # e.g. "http://[::1" (an unclosed IPv6 bracket)
        parts, host = None, None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        raise click.BadParameter(f"{shown} is not an http(s) URL with a host", param_hint=option)
    try:
        parts.port  # noqa: B018 (read for its check: 0 to 65535)
    except ValueError:
        raise click.BadParameter(
            f"{shown} names a port that does not exist (ports are 1 to 65535)", param_hint=option
        ) from None
    if "?" in url or "#" in url:
        # the API's paths are added to the root as text: "/api/v3?per_page=1" + "/gists"
        # sent everything after the "?" as the query (before the check below: a backslash
        # in the query was said as an ambiguous host)
        raise click.BadParameter(
            f"{shown} is followed by a query or fragment ('?' or '#'), which an API root "
            "cannot have: the request paths would go inside it; give the root alone",
            param_hint=option,
        )
    if _AMBIGUOUS_URL.search(url) or _sent_to_host(url) != host.lower():
        # urllib and the HTTP client end the host part at different characters:
        # "https://evil\@api.github.com" was checked as GitHub and sent to "evil"
        raise click.BadParameter(
            f"{shown} names its host ambiguously (a backslash, space or control character)",
            param_hint=option,
        )
    if parts.scheme == "http" and not _is_loopback(host):
        raise click.BadParameter(
            f"{shown} would send the token unencrypted; use https:// (plain http:// is for "
            "127.0.0.1, ::1 or localhost only)",
            param_hint=option,
        )


def refuse_url_credentials(url: str, where: str, service: str, token_from: str) -> None:
    """A ``user:pass@`` in an API root made the HTTP client send those instead of the token,
    and the service's refusal was then blamed on a good token: a usage error before
    anything is sent, said without the user part (it may hold a token or a password)."""
    if "@" not in urlsplit(url).netloc:
        return
    from exporter.publish.errors import host_for_messages

    raise CliError(
        f"{where} {host_for_messages(url)!r} holds a user name or password before its host: "
        f"{service} is reached with the token ({token_from}), not those; give the URL without "
        "them (a proxy's go in HTTPS_PROXY); nothing sent",
        1,
    )


_AMBIGUOUS_URL = re.compile(r"[\\\s\x00-\x1f\x7f]")
# a URL's user part (`scheme://user:password@`, also without `//` or a scheme at all, or
# after a blank): everything before its host's "@" may be a credential
#: (to the last "@" before the path: a password may hold "?" or "#", and its start was shown)
_USERINFO = re.compile(r"^(\s*(?:[A-Za-z][A-Za-z0-9+.\-]*:(?://)?)?)[^/]*@")


def _sent_to_host(url: str) -> str:
    """The host the HTTP client (urllib3, under requests) would connect to."""
    from urllib3.util import parse_url

    try:
        return (parse_url(url).host or "").strip("[]").lower()
    except ValueError:
        return ""


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listed_session_files(sessions_dir: str | None, cwd: str | None) -> list[Path]:
    """:func:`session_files`, saying on stderr which project folders could not be read:
    their sessions are missing from the listing, the site or the dataset."""
    refuse_a_missing_agent_dir(sessions_dir)
    unreadable: list[tuple[Path, OSError]] = []
    files = session_files(sessions_dir, cwd, unreadable)
    for folder, error in unreadable:
        reason = error.strerror or type(error).__name__
        what = "it is" if folder.suffix == ".jsonl" else "its sessions are"  # a file's stat
        warn(f"cannot read {folder} ({reason}); {what} left out")
    return files


def warn(message: str) -> None:
    """``pi-session: warning: …`` on stderr, safe for a terminal (a path or an error may
    hold controls), a path's UTF-8 said as such (:func:`decode_escaped_utf8`)."""
    click.echo(terminal_text(f"pi-session: warning: {decode_escaped_utf8(message)}"), err=True)


def report_diagnostics(session: Session, limit: int = 20) -> None:
    problems = [d for d in session.diagnostics if d.severity != "info"]
    for diagnostic in problems[:limit]:
        click.echo(terminal_text(f"pi-session: warning: {diagnostic}"), err=True)
    if len(problems) > limit:
        click.echo(f"pi-session: warning: … and {len(problems) - limit} more", err=True)


#: Under the commands in `pi-session --help`: a script needs them, and they were only in
#: the README (CLI review).
EXIT_CODES_HELP = (
    "Exit codes: 0 done (warnings on stderr; also `list` finding no session); 1 a usage or "
    "setting error; 2 a session or file that cannot be found, read or written (also no "
    "session to work on); 3 a remote or authentication failure; "
    "130 stopped by Ctrl-C (0 for `watch`, which runs until stopped), 143 by SIGTERM and 129 "
    "by SIGHUP (cleaned up as for Ctrl-C; 0 for `watch` too); 141 (quietly) when the command "
    "reading the output went away (`| head`)."
)


@click.group(
    cls=SessionGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=EXIT_CODES_HELP,
)
@click.version_option(__version__, prog_name="pi-session")
def cli() -> None:
    """Export, inspect, redact, share and publish Pi coding-agent sessions (and Claude Code's
    and Codex's)."""


#: Set by a command once all it made is written and closed (see :func:`run`).
_WORK_ALL_WRITTEN: list[bool] = []


def all_written() -> None:
    """A command's output is written and closed, and it leaves nothing running: the
    process may end without the interpreter's teardown."""
    _WORK_ALL_WRITTEN.append(True)


def _wrap_help_between_words() -> None:
    """click wraps help text at hyphens too (``--with-`` / ``jsonl``, ``pi-session-`` /
    ``share-<name>.html``): a name copied from the help then fails when pasted. Its wrapper
    (looked up by click each time it wraps) breaks lines between words only here."""
    try:
        from click import _textwrap
    except ImportError:  # a click that wraps some other way: its help stays as it is
        return
    base = getattr(_textwrap, "TextWrapper", None)
    if not isinstance(base, type) or getattr(base, "whole_words", False):
        return

    class WholeWords(base):  # type: ignore[misc, valid-type]
        whole_words = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("break_on_hyphens", False)
            super().__init__(*args, **kwargs)

    _textwrap.TextWrapper = WholeWords


class _ClosedOutput(io.TextIOBase):
    """Standard output when the shell closed it (`>&-`): Python leaves ``sys.stdout`` None,
    and printing to it crashed, or wrote nothing and said it was done. Any write is the
    error a full disk gives, which each command reports (exit 2)."""

    def writable(self) -> bool:
        return True

    def write(self, text: Any) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def isatty(self) -> bool:
        return False

    @property
    def buffer(self) -> _ClosedOutput:  # bytes go nowhere either
        return self


def stdout_closed() -> bool:
    """Whether the shell closed standard output (``>&-``)."""
    return sys.stdout is None or isinstance(sys.stdout, _ClosedOutput)


def _streams_for_closed_ones() -> None:
    """Closed standard streams as a script meets them without a terminal: stdin reads
    nothing, stderr goes nowhere (a warning or a progress bar is no reason to fail),
    stdout fails at its first write."""
    if sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 (for the process)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (for the process)
    if sys.stdout is None:
        sys.stdout = _ClosedOutput()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    _streams_for_closed_ones()
    _wrap_help_between_words()
    allow_long_integers()  # for rendering and writing them, not only loading
    for stream in (sys.stdout, sys.stderr):
        # a title in Chinese on a Latin-1 terminal: shown as \\u escapes, not an abort
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")
    cli.main(args=argv, prog_name="pi-session")


def run() -> None:
    """The program itself (the ``pi-session`` script, ``python -m exporter``): :func:`main`,
    then, once a command said all it made is written, an exit without the interpreter's
    teardown, which frees every module and object one by one: ~45 ms of a 0.45 s export,
    for nothing. Called in-process, :func:`main` raises SystemExit as click does."""
    try:
        main()
    except SystemExit as stop:
        if _WORK_ALL_WRITTEN and stop.code in (0, None):
            _leave_now()
        raise


def _leave_now() -> None:
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):  # a closed or broken stream: the usual exit reports it
        return
    os._exit(0)


__all__ = [
    "CliError",
    "all_written",
    "cli",
    "current_folder",
    "current_folder_if_any",
    "listed_session_files",
    "main",
    "open_session",
    "project_scope",
    "resolved_session",
    "run",
    "scope_conflict",
    "session_argument",
    "session_path",
    "stdout_closed",
]
