"""`pi-session redact` and the share-policy options that export, share and publish reuse.

`policy_options` adds the same flags to every publishing command; `policy_from_options`
turns the parsed values (including ``--secret`` files and ``--env-file`` contents) into a
`RedactionPolicy`; `finish_report` prints the one-line summary and writes ``--report``.
"""

from __future__ import annotations

import codecs
import gzip
import json
import os
import re
import shlex
import stat
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from exporter.claude_code import is_claude_code
from exporter.cli import (
    CliError,
    open_session,
    report_diagnostics,
    session_argument,
    stdout_closed,
    warn,
    write_stdout_bytes,
)
from exporter.codex import is_codex
from exporter.entries import KNOWN_ENTRY_TYPES
from exporter.formatting import local_minute, path_for_terminal, plural, terminal_text
from exporter.fsutil import (
    FileState,
    HeldSignals,
    WrittenMeanwhile,
    atomic_write_bytes,
    file_in_the_way,
    file_state,
    is_special_file,
    linked_file,
    own_stream,
    write_target,
)
from exporter.jsonl_in import JS_SPACE, header_object
from exporter.jsonl_out import copy_to_jsonl, read_source_bytes
from exporter.loader import session_lines, wide_encoding
from exporter.policy import MIN_LITERAL, RedactionPolicy
from exporter.prepare import CUT_OPTIONS
from exporter.session import Session
from exporter.share_cuts import excluded_ids, unknown_exclusions
from exporter.times import read_iso

if TYPE_CHECKING:
    from exporter.redact import RedactionReport

__all__ = [
    "finish_report",
    "parse_env_text",
    "policy_from_options",
    "policy_options",
    "redact_command",
]

F = TypeVar("F", bound=Callable[..., Any])
_ENV_LINE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*)")


_REDACT_HELP = "Replace secrets, the home folder and the user name before anything is written."


def policy_options(
    redact_default: bool,
    drop_hidden_default: bool | None = None,
    *,
    report: str | None = "",
    redact_help: str = _REDACT_HELP,
) -> Callable[[F], F]:
    """The shared policy flags; hidden entries are dropped by default whenever redacting is.
    ``report``: what to add to --report's help; None hides it from the help (a command that
    refuses it still says why when it is given). ``redact_help``: --redact's, for a command
    that writes nothing (search) or serves (watch)."""
    hidden = redact_default if drop_hidden_default is None else drop_hidden_default
    # said where redacting is off by default (publish always redacts: it has no --redact)
    implies = " Implies --redact." if not redact_default else ""
    options = [
        click.option(
            "--redact/--no-redact",
            default=redact_default,
            show_default=True,
            help=redact_help,
        ),
        click.option(
            "--active-branch-only",
            is_flag=True,
            help="Keep only the active branch (with its labels and the session name, even "
            "when they were set on another branch).",
        ),
        click.option("--no-thinking", is_flag=True, help="Drop thinking text and signatures."),
        click.option(
            "--no-tool-output", is_flag=True, help="Keep tool calls; replace results by a note."
        ),
        click.option(
            "--no-tool-calls",
            is_flag=True,
            help="The conversation only: leave out tool calls (their arguments hold code and "
            "file contents) and their results, and shell commands run with !; each message "
            "says how many calls it made.",
        ),
        click.option("--no-images", is_flag=True, help="Replace images by a one-line note."),
        click.option(
            "--drop-hidden/--keep-hidden",
            default=hidden,
            show_default=True,
            help="Drop custom entries, display:false messages and thinking signatures.",
        ),
        click.option("--keep-paths", is_flag=True, help="Keep the home folder and user name."),
        click.option(
            "--secret",
            "secret",
            multiple=True,
            metavar="VALUE|FILE",
            help="A literal secret to remove (4+ characters), or a file of them: every "
            "non-blank line is one, a line starting with # too (a password may: no comments). "
            "Repeatable." + implies,
        ),
        click.option(
            "--pii",
            is_flag=True,
            help="Also replace e-mail addresses, phone numbers and IPv4 and IPv6 addresses "
            "(personal data; off by default, as most in a coding session are the project's "
            "own)." + implies,
        ),
        click.option(
            "--redact-pattern",
            "redact_pattern",
            multiple=True,
            metavar="NAME=REGEX",
            help="Also replace every match of this regular expression (Python syntax) by "
            "[REDACTED:NAME:n]. Repeatable." + implies,
        ),
        click.option(
            "--env-file",
            "env_file",
            multiple=True,
            type=click.Path(exists=True, dir_okay=False),
            help="Remove the values of sensitive NAME=value lines of this file. Repeatable."
            + implies,
        ),
        click.option(
            "--no-env-secrets",
            is_flag=True,
            help="Do not remove the values of this process's sensitive environment variables.",
        ),
        click.option(
            "--report",
            "report",
            type=click.Path(dir_okay=False, writable=True),
            callback=not_empty,
            hidden=report is None,
            help="Write the full redaction report (JSONL, no secrets) to FILE."
            + implies
            + (report or ""),
        ),
    ]

    def decorate(func: F) -> F:
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


def exclude_option(func: F) -> F:
    """``--exclude ID``: for the commands that take one session."""
    return click.option(
        "--exclude",
        "exclude",
        multiple=True,
        metavar="ID[/]",
        help="Leave out the entry with this id (as in the page's #links) and the results of "
        "the tool calls it made; ID/ also leaves out everything after it (its subtree). "
        "Repeatable. An id the session does not have is an error.",
    )(func)


def check_exclusions(
    session: Session,
    policy: RedactionPolicy,
    outcome: str = "nothing was written",
    leaf: str | None = None,
) -> None:
    """Refused before any work: an ``--exclude`` id the session does not have (a typo
    would share what it was meant to leave out), and a ``--leaf`` the exclusions leave out
    (the copy's leaf became its nearest kept ancestor, so another branch was made the main
    line, unsaid). ``session`` has the leaf set (a prefix resolved); without ``--leaf`` the
    session's own leaf may go, and its nearest kept ancestor leads."""
    if not policy.exclude:
        return
    unknown = unknown_exclusions(session, policy.exclude)
    if unknown:
        listed = ", ".join(terminal_text(spec) for spec in unknown[:5])
        raise CliError(f"--exclude: no entry {listed} in this session; {outcome}", 1)
    excluded = excluded_ids(session, policy.exclude)
    if len(excluded) >= len(session.entries):
        raise CliError(f"--exclude leaves no entry of this session; {outcome}", 1)
    if leaf is None or session.leaf_id not in excluded:
        return
    cutting = next(
        spec for spec in policy.exclude if session.leaf_id in excluded_ids(session, (spec,))
    )
    raise CliError(
        f"--leaf {terminal_text(leaf)}: --exclude {terminal_text(cutting)} leaves that entry "
        "out; choose a leaf that stays, or exclude less",
        1,
    )


def parse_env_text(text: str) -> list[tuple[str, str]]:
    """``export NAME=value`` / ``NAME=value`` lines as python-dotenv and Docker read them: a
    double-quoted value with its escapes decoded (``"Xy9\\"kLm2#Qz"`` was cut at the
    escaped quote, and the real password went out), a single-quoted one as written, an
    unquoted one up to a `` #`` comment. A double-quoted value with escapes comes twice:
    decoded, and as written (``Q7w9\\tZk3`` as `cat .env` or code shows it)."""
    pairs = []
    for line in text.splitlines():
        match = _ENV_LINE.match(line)
        if not match:
            continue
        value = match.group(2).strip()
        if value[:1] == '"':
            value, written = _double_quoted(value)
            if written != value:
                pairs.append((match.group(1), written))
        elif value[:1] == "'":
            end = value.find("'", 1)
            value = value[1:end] if end > 0 else value[1:]
        else:
            value = _INLINE_COMMENT.split(value, 1)[0].strip()
        pairs.append((match.group(1), value))
    return pairs


#: A comment after an unquoted value: a ``#`` after a blank (``pa#ss`` is one value)
_INLINE_COMMENT = re.compile(r"\s#")
#: The escapes a double-quoted dotenv value may hold (python-dotenv's, Docker Compose's);
#: any other backslash stays as written (``"C:\dir"``)
_DOTENV_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "'": "'", "\\": "\\"}


def _double_quoted(value: str) -> tuple[str, str]:
    """The text of a value that opens with ``"``, up to its closing quote (or the line's
    end): escapes decoded, and as written."""
    chars: list[str] = []
    position = 1
    while position < len(value):
        char = value[position]
        if char == '"':
            break
        if char == "\\" and position + 1 < len(value):
            escaped = value[position + 1]
            chars.append(_DOTENV_ESCAPES.get(escaped, char + escaped))
            position += 2
            continue
        chars.append(char)
        position += 1
    return "".join(chars), value[1:position]


#: Most bytes a --secret or --env-file may hold: /dev/zero is a character device too, and
#: read whole it never ended.
_MAX_LIST_BYTES = 64 << 20


def _read(path: str, what: str) -> str:
    """The file's text, read once: a pipe (``--secret <(pass show x)``) cannot be read twice.
    A terminal (``/dev/tty``) is refused: reading it waited for input without a prompt."""
    try:
        with open(path, "rb") as handle:
            if handle.isatty():
                raise CliError(f"{what}: {path} is a terminal; give a file or a pipe", 2)
            data = handle.read(_MAX_LIST_BYTES + 1)
    except OSError as error:
        raise CliError(f"{what}: cannot read {path}: {error.strerror}", 2) from None
    if len(data) > _MAX_LIST_BYTES:
        raise CliError(f"{what}: {path} holds more than {_MAX_LIST_BYTES >> 20} MB", 2)
    # Notepad's or PowerShell's UTF-16 (by its byte order mark), as the session loader reads
    # it: read as UTF-8, an --env-file's secrets were never found and nothing said so
    wide = wide_encoding(data)
    if wide is not None:
        try:
            text = data.decode(wide)  # (the codec takes the mark off)
        except UnicodeDecodeError:
            raise CliError(f"{what}: {path} is not valid {wide.upper()} text", 2) from None
    else:
        # a Windows editor's byte-order mark made the first secret "\ufeffvalue": never found
        text = data.removeprefix(codecs.BOM_UTF8).decode("utf-8", errors="surrogateescape")
    if "\0" in text:  # UTF-16 without its mark: every secret read with NULs, none found
        raise CliError(
            f"{what}: {path} holds NUL characters (UTF-16 without a byte order mark?); "
            "save it as UTF-8",
            2,
        )
    return text


def _is_file(value: str) -> bool:
    """A file to read secrets from: a regular file, or a pipe or device (``<(cmd)`` gives a
    ``/dev/fd/N`` pipe, which ``is_file()`` called "no such file"); never a folder."""
    try:
        mode = os.stat(value).st_mode
    except (OSError, ValueError):  # a long or NUL-bearing secret is no file name
        return False
    return stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


#: How a file name starts and a secret does not: such a value that names no file is a typo,
#: and taking it as a literal secret left every secret in the meant file unredacted.
_PATH_STARTS = ("/", "./", "../", "~/", "~")
#: ... or how a file name ends: ``--secret mysecrets.txt`` in the wrong folder.
_FILE_NAME = re.compile(
    r"[\w.-]*\.(?:txt|env|list|lst|conf|cfg|ini|json|ya?ml|toml|keys?|secrets?|pem)"
    r"|\.(?:env|secrets?|netrc|pgpass)(?:\.[\w-]+)?|id_(?:rsa|dsa|ecdsa|ed25519)",
    re.IGNORECASE,
)


def _path_or_value(value: str) -> str:
    """``value`` with ``~`` expanded; a folder (``--secret keys`` was the literal secret
    "keys", the files in it unread), or a path to nothing, is an error."""
    if _is_file(value):
        return value
    expanded = os.path.expanduser(value)
    if os.path.isdir(expanded):
        raise CliError(f"--secret: {value} is a folder; give a file of secrets or a value", 1)
    if not (value.startswith(_PATH_STARTS) or _FILE_NAME.fullmatch(value)):
        return value
    if _is_file(expanded):
        return expanded
    # not echoed: a secret may start with "/" (AWS secret keys do), and stderr ends up in logs
    shown = f"a value of {len(value)} characters"
    raise CliError(
        f"--secret: no such file ({shown}); to remove a secret that looks like a file name, "
        "put it in a file, one per line, and pass the file",
        1,
    )


def _secrets(values: Iterable[str], env_files: Iterable[str]) -> tuple[str, ...]:
    """The ``--secret`` values and files, then the ``--env-file`` secrets. Every non-blank
    line of a file is a secret: a ``#`` line was taken for a comment, and a password that
    starts with ``#`` (``--secret <(pass show db)``) went out without a word. A ``#`` line
    too short to be a secret (``#``, ``##``) is passed over, not refused: a file that used
    it as a comment line still works."""
    found: list[tuple[str, str]] = []  # (secret, where it was given: said of a short one)
    for value in values:
        value = _path_or_value(value)
        if _is_file(value):
            lines = _read(value, "--secret").splitlines()
            found += [
                (line.strip(), f"line {number} of {value}")
                for number, line in enumerate(lines, 1)
                if line.strip()
                and not (line.strip().startswith("#") and len(line.strip()) < MIN_LITERAL)
            ]
        else:
            found.append((value, "given on the command line"))
    short = [where for secret, where in found if len(secret) < MIN_LITERAL]
    if short:  # a usage error (exit 1): such a value would shred ordinary words
        raise CliError(
            f"--secret values need {MIN_LITERAL}+ characters (a shorter one would cut into "
            f"ordinary words): {plural(len(short), 'value')} of {len(found)} "
            f"{'is' if len(short) == 1 else 'are'} shorter "
            f"({'' if len(short) == 1 else 'the first: '}{short[0]})",
            1,
        )
    secrets = [secret for secret, _ in found]
    for path in env_files:
        from exporter.redact import sensitive_env_values  # the detectors load only when used

        secrets += sensitive_env_values(parse_env_text(_read(path, "--env-file")))
    return tuple(dict.fromkeys(secrets))


def policy_from_options(**options: Any) -> RedactionPolicy:
    """A policy from `policy_options` values; other keyword arguments are ignored. A
    ``--report`` that cannot be written is refused here, before anything else is written."""
    _check_report_path(options.get("report"))
    redact = _redaction_wanted(options)
    if not redact:
        _warn_no_effect(options)
    return RedactionPolicy(
        redact=redact,
        active_branch_only=bool(options.get("active_branch_only")),
        no_thinking=bool(options.get("no_thinking")),
        no_tool_output=bool(options.get("no_tool_output")),
        no_tool_calls=bool(options.get("no_tool_calls")),
        no_images=bool(options.get("no_images")),
        drop_hidden=bool(options.get("drop_hidden")),
        keep_paths=bool(options.get("keep_paths")),
        exclude=tuple(spec.strip().removeprefix("#") for spec in options.get("exclude") or ()),
        pii=bool(options.get("pii")),
        patterns=_patterns(options.get("redact_pattern") or ()),
        secrets=_secrets(options.get("secret") or (), options.get("env_file") or ()),
        env_secrets=not options.get("no_env_secrets"),
    )


#: Options that keep something redaction would replace: nothing to keep without it.
_KEEPS_WHAT_REDACTION_REPLACES = (("keep_paths", "--keep-paths"),
                                  ("no_env_secrets", "--no-env-secrets"))  # fmt: skip


def _warn_no_effect(options: dict[str, Any]) -> None:
    """``--keep-paths`` or ``--no-env-secrets`` where nothing is redacted (export's default,
    ``--no-redact``): accepted silently, they read as if they did something."""
    for name, flag in _KEEPS_WHAT_REDACTION_REPLACES:
        if options.get(name):
            warn(f"{flag} has no effect without redaction (--redact)")


#: Options that only mean something when secrets are removed.
_ASKS_FOR_REDACTION = (
    ("secret", "--secret"), ("env_file", "--env-file"), ("pii", "--pii"),
    ("redact_pattern", "--redact-pattern"), ("report", "--report"),
)  # fmt: skip


def _patterns(specs: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``--redact-pattern`` values as (name, regex) pairs; a bad one is a usage error."""
    if not specs:
        return ()
    from exporter.pii_detectors import parse_pattern  # the detectors load only when used

    parsed = []
    for spec in specs:
        try:
            parsed.append(parse_pattern(spec))
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--redact-pattern") from None
    return tuple(parsed)


def _redaction_wanted(options: dict[str, Any]) -> bool:
    """``--redact``, also implied by ``--secret``, ``--env-file`` or ``--report`` where it is
    off by default (export): those were accepted and ignored, leaving the named secret in
    the page. With an explicit ``--no-redact``, a secret to remove is a contradiction."""
    redact = bool(options.get("redact", True))
    asked = [flag for name, flag in _ASKS_FOR_REDACTION if options.get(name)]
    if redact or not asked:
        return redact
    context = click.get_current_context(silent=True)
    source = context.get_parameter_source("redact") if context else None
    if source in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
        secrets = [flag for flag in asked if flag != "--report"]
        if secrets:
            raise CliError(f"{secrets[0]} is part of redaction, which --no-redact turns off", 1)
        if not _leaves_out(options):  # the report would list nothing
            raise CliError(
                "--report lists what was redacted or left out; with --no-redact and nothing "
                "left out (--drop-hidden, --exclude, --no-thinking, ...) it would be empty",
                1,
            )
        return False
    return True


def _leaves_out(options: dict[str, Any]) -> bool:
    """Whether the options leave entries or parts out, which a report without redaction
    lists: a cut (``--drop-hidden``, redact's default, ``--no-thinking``...) or ``--exclude``
    (export refused a report with --exclude, said to have nothing to list)."""
    return bool(options.get("exclude")) or any(options.get(name) for name in CUT_OPTIONS)


def _check_report_path(report: str | None) -> None:
    if not report:
        return
    if report == "-":
        raise CliError("--report needs a file name, not - (the report is an output of its own)", 1)
    _check_output_path("--report", report)


def not_empty(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``-o ""`` wrote the default file name and ``--report ""`` wrote no report, without a
    word: an empty name is refused."""
    if value == "":
        stdout = ", or - for stdout" if param.name == "output" else ""
        raise click.BadParameter(f"the name is empty; give a file name{stdout}")
    return value


_SINCE_FORMS = "use YYYY-MM-DD, an ISO date-time, or 7d/12h/2w"
_SINCE_AGE = re.compile(r"\s*\d+\s*[hdw]\s*")


def parse_since_option(text: str) -> datetime:
    """``--since`` of `export --all` and `publish`; a ``ValueError`` names the value. An
    empty one quietly meant no filter. ``0001-01-01`` was told "use YYYY-MM-DD": its local
    midnight cannot be placed (Python looks up the UTC offset a day earlier, in year 0)."""
    from exporter.site import parse_since

    if not text.strip():
        raise ValueError(f"--since {text!r}: the value is empty; {_SINCE_FORMS}")
    try:
        return parse_since(text)
    except ValueError:
        pass
    year = _iso_year(text.strip())
    if _SINCE_AGE.fullmatch(text):
        reason = "out of range, it reaches back before the year 1"
    elif year == 1:
        reason = "out of range, the earliest date is 0001-01-02"
    elif year is not None:  # the last hours of 9999, a day short of the end in the same way
        reason = "out of range at the end of year 9999; give an earlier time"
    else:
        reason = _SINCE_FORMS
    raise ValueError(f"--since {text!r}: {reason}")


def since_moment(text: str | None) -> datetime | None:
    """``--since`` as the commands read it (None without one); a value that is no time is
    a usage error."""
    if text is None:
        return None
    try:
        return parse_since_option(text)
    except ValueError as error:
        raise CliError(str(error), 1) from None


def since_said(text: str, moment: datetime) -> str:
    """``--since`` as the moment it stands for, in the reader's time: "active since 0d"
    said nothing. The value as given follows when it is not that moment's own text."""
    shown = local_minute(moment)
    given = text.strip()
    return shown if shown.startswith(given) else f"{shown} ({given})"  # a date: its midnight


def _iso_year(text: str) -> int | None:
    moment = read_iso(text)
    return None if moment is None else moment.year


def echo_path(path: Path) -> None:
    """The path just written, on stdout. To a script (``$(pi-session export …)``) exactly
    its bytes: click.echo drops escape codes when stdout is no terminal, and printed a path
    that did not exist. To a terminal its controls as signs, which the terminal would act on.
    Not one of the process's own streams (``-o /dev/stdout``): the page went there itself,
    and its name after it ran into the page's last line."""
    if stdout_closed():  # closed (`>&-`): the file is written, said nowhere
        return
    if own_stream(path) is not None:
        return
    out = sys.stdout
    if out.isatty():
        click.echo(path_for_terminal(path))
    elif getattr(out, "buffer", None) is None:  # a text stream (the CLI run in-process)
        click.echo(str(path))
    else:
        out.flush()
        write_stdout_bytes(os.fsencode(path) + b"\n")


def _check_output_path(option: str, path: str) -> None:
    """An output is a file name in a folder that exists and takes files. Checked before
    any work, so a failure does not come after another output was written."""
    if os.path.basename(path) in ("", ".", ".."):  # pathlib drops a closing / or /.:
        raise CliError(f"{option}: {path} names a folder; give a file name", 1)  # a file `nodir`
    if own_stream(path) is not None:  # written through the shell's descriptor, as `-o -`
        return
    if is_special_file(path):  # a device or pipe is written as it is, not replaced
        if not os.access(path, os.W_OK):
            raise CliError(f"{option}: cannot write to {path}", 2)
        return
    try:
        target = write_target(path)
    except OSError as error:
        raise CliError(f"{option}: cannot write to {path}: {error.strerror}", 2) from None
    if target.is_dir():
        raise CliError(f"{option}: {path} is a folder; give a file name", 1)
    if not target.parent.is_dir():
        blocking = file_in_the_way(target.parent)
        if blocking is not None:
            raise CliError(f"{option}: {blocking} is a file, not a folder", 1)
        raise CliError(f"{option}: the folder {target.parent} does not exist", 1)
    _check_replaceable(option, path, target)


def _check_replaceable(option: str, path: str, target: Path) -> None:
    """The file at ``target`` can be made, or replaced: a new file is written beside it and
    renamed over it, which takes a writable folder, not a writable file. Said as what
    stands in the way (the folder named absolute: "the folder ." told nothing)."""
    place = os.fspath(target.parent)  # (relative as given: its absolute path may be too long)
    folder = os.path.abspath(place)
    if _read_only_mount(place):
        raise CliError(f"{option}: cannot write {path}: {folder} is on a read-only file system", 2)
    exists = os.path.lexists(target)
    if not os.access(place, os.W_OK | os.X_OK):
        if exists and os.access(target, os.W_OK):
            hint = f"; to write into the file as it is: -o - > {shlex.quote(path)}"
            raise CliError(
                f"{option}: cannot replace {path}: replacing a file writes a new one beside it "
                f"and needs its folder writable, and the folder {folder} is not writable to you"
                + (hint if option == "-o" else ""),
                2,
            )
        raise CliError(f"{option}: cannot write in the folder {folder}", 2)
    if exists and _sticky_and_theirs(place, target):
        raise CliError(
            f"{option}: cannot replace {path}: the folder {folder} is sticky (as /tmp is: only "
            "a file's owner may replace it) and the file belongs to another user; choose "
            "another path",
            2,
        )


def _read_only_mount(folder: str) -> bool:
    """``folder`` is on a file system mounted read-only (said as that, not as a permission
    the user could change)."""
    try:
        return bool(os.statvfs(folder).f_flag & getattr(os, "ST_RDONLY", 0))
    except (OSError, AttributeError):  # (no statvfs on Windows)
        return False


def _sticky_and_theirs(folder: str, target: Path) -> bool:
    """Whether the sticky ``folder`` keeps this user from renaming a file over ``target``:
    it is another user's, in a folder that is not this user's either (root may)."""
    if not hasattr(os, "geteuid") or os.geteuid() == 0:
        return False
    try:
        folder_info, file_info = os.stat(folder), os.lstat(target)
    except OSError:
        return False
    me = os.geteuid()
    return bool(folder_info.st_mode & stat.S_ISVTX) and me not in (
        folder_info.st_uid,
        file_info.st_uid,
    )


def refuse_a_misnamed_output(
    option: str, path: str | os.PathLike[str] | None, why_not: Callable[[str], str | None]
) -> None:
    """An output whose name says another kind of file is refused (``why_not(name)`` says
    why, None: the name fits), and so is a symbolic link to one: the write replaces the
    file the link leads to, so ``-o page.html`` linked to ``notes.txt`` overwrote the notes
    with a page. A device or pipe, and a process's own streams, are written as they are."""
    if not path or path == "-":
        return
    shown = os.fspath(path)
    why = why_not(shown)
    if why is not None:
        raise CliError(f"{option} {shown}: {why}", 1)
    target = linked_file(path)
    if target is None or is_special_file(target):
        return
    why = why_not(str(target))
    if why is not None:
        raise CliError(
            f"{option} {shown} is a symbolic link to {target}, the file the write would "
            f"replace: {why}",
            1,
        )


_SESSION_HEADER = re.compile(rb'\s*\{\s*"type"\s*:\s*"session"\s*[,}]')


def _header_id(path: Path) -> str | None:
    """The id in a session file's header line, if it has one."""
    try:
        with open(path, "rb") as handle:
            return header_object(handle.readline(1 << 26)).get("id")
    except OSError:
        return None


def is_session_file(path: Path) -> bool:
    """A session any command reads (Pi's, Claude Code's, Codex's), as a cheap look tells."""
    return session_kind(path) is not None


def session_kind(path: Path) -> str | None:
    """What session ``path`` holds, as its first lines tell: "a Pi session file" (its
    header line, or entries without one), "a Claude Code transcript", "a Codex session
    file"; None for anything else (a page, a report, a missing or unreadable file)."""
    if not path.is_file():  # missing, or a FIFO that an open would wait on
        return None
    lines = _first_lines(path)
    if not lines:  # empty or unreadable: nothing a look can tell
        return None
    # what Pi's trim takes before the header: BOMs and Unicode spaces
    text = b"".join(lines).decode("utf-8", errors="ignore").lstrip(JS_SPACE)
    if _SESSION_HEADER.match(text.encode()) is not None:
        return "a Pi session file"
    parsed = list(_first_objects(text))
    if is_claude_code(parsed):
        return "a Claude Code transcript"
    if is_codex(parsed):
        return "a Codex session file"
    first = next((value for _, value in parsed if isinstance(value, dict)), None)
    if first is not None and first.get("type") in KNOWN_ENTRY_TYPES and "parentId" in first:
        return "a Pi session file"  # entries whose header line was lost: the loader reads it
    return None


#: How many of a file's first lines :func:`_first_lines` reads, and at most how many bytes
#: (whole lines: a picture pasted into a transcript's first prompt makes it megabytes long).
_SNIFF_LINES, _SNIFF_LINES_BYTES = 8, 64 << 20


def _first_lines(path: Path) -> list[bytes]:
    """The file's first lines as the loader reads them (gzip data uncompressed, UTF-16 and
    UTF-32 as UTF-8), whole; only the first when it is a Pi header line."""
    lines: list[bytes] = []
    budget = _SNIFF_LINES_BYTES
    try:
        with session_lines(path) as handle:
            while len(lines) < _SNIFF_LINES and budget > 0:
                line = handle.readline(budget)
                if not line:
                    break
                lines.append(line)
                budget -= len(line)
                header = line.decode("utf-8", errors="ignore").lstrip(JS_SPACE).encode()
                if len(lines) == 1 and _SESSION_HEADER.match(header):
                    break  # a Pi session: its other lines need not be read
    except (OSError, zlib.error, EOFError):  # unreadable, or damaged gzip data: what was read
        pass
    return lines


def _first_objects(text: str) -> Iterator[tuple[int, Any]]:
    """The JSON values of ``text``'s lines, numbered (a line cut short is no JSON: left out)."""
    for number, line in enumerate(text.split("\n"), 1):
        try:
            yield number, json.loads(line)
        except ValueError:
            continue


def read_files(
    sessions: Iterable[str | None], options: dict[str, Any]
) -> list[tuple[str, str | None]]:
    """What a command reads: its sessions, and its --secret and --env-file files."""
    paths = (_path_or_value(v) for v in options.get("secret") or ())
    secrets = [("--secret", v) for v in paths if _is_file(v)]
    env_files = [("--env-file", v) for v in options.get("env_file") or ()]
    return [*(("session", s) for s in sessions), *secrets, *env_files]


def refuse_collisions(
    outputs: dict[str, Any],
    inputs: Iterable[tuple[str, str | None]],
    copy_of: dict[str, str] | None = None,
) -> None:
    """Outputs are files in existing folders, checked before any work; no output may be an
    input (the session, an --env-file, a --secret file), a Pi session file, or another
    output (-o and --report naming one file would leave only the report). ``copy_of`` names
    outputs at the tool's own default names (``<name>.redacted.jsonl``, the dry run's
    files) with the id of the session they copy: there an earlier copy of that session may
    be replaced (a second run). A name the user chose never replaces a session file: a copy
    keeps its session's id, so the id cannot tell a copy from the original or a backup."""
    named = [(option, str(path)) for option, path in outputs.items() if path and path != "-"]
    if any(path == "-" for path in outputs.values()):
        for kind, source in inputs:  # `-o - >> session.jsonl`: stdout is the input itself
            if source and _stdout_is(source):
                what = "the input session" if kind == "session" else f"{kind}'s file"
                raise CliError(
                    f"refusing to write into {what} {source} (standard output is that "
                    "file); choose another output",
                    1,
                )
    for option, path in named:  # before any work: a big session takes seconds to render
        for kind, source in inputs:
            if not source or not _same_file(path, source):
                continue
            if kind == "session":
                raise CliError(
                    f"refusing to overwrite the input session {source}; choose another path", 1
                )
            raise CliError(f"refusing to overwrite {source} (read with {kind}) with {option}", 1)
        _check_output_path(option, path)
        _refuse_a_session_file(option, path, copy_of)
    for index, (option, path) in enumerate(named):
        for other, other_path in named[index + 1 :]:
            if _same_file(path, other_path) and not is_special_file(path):  # /dev/null twice
                raise CliError(f"{option} and {other} name the same file: {path}", 1)


def _refuse_a_session_file(option: str, path: str, copy_of: dict[str, str] | None = None) -> None:
    """A session file at an output is never replaced (`export -o` onto one turned a session
    into HTML); ``copy_of`` as for :func:`refuse_collisions`. Judged before any work, and
    again when what stands there changed before the write."""
    kind = session_kind(Path(path))
    if kind is None:
        return
    same = copy_of is not None and option in copy_of
    if not same or _header_id(Path(path)) != copy_of[option]:
        raise CliError(
            f"{option}: refusing to overwrite {path}, {kind} (a copy made "
            "earlier is one too): remove it first, or choose another path",
            1,
        )


def _stdout_is(path: str) -> bool:
    """Whether the process's standard output (file descriptor 1) is the file at ``path``."""
    try:
        out = os.fstat(1)
        return stat.S_ISREG(out.st_mode) and os.path.samestat(out, os.stat(path))
    except (OSError, ValueError):
        return False


def _same_file(a: str, b: str) -> bool:
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def finish_report(
    report: RedactionReport,
    report_path: str | None,
    not_redacted: str = "not redacted: --no-redact",
    *,
    looked: OutputLook | None = None,
) -> None:
    """The summary on stderr; the full JSONL report when ``--report`` asked for it (its
    path was checked by `refuse_collisions` before anything was written). A copy that only
    left things out says why it was not scanned (``not_redacted``): "(no secret scan)"
    read like an error. ``looked``: the report's file as it was when those checks ran
    (:func:`look_at_output`); without it, as it is now, judged again: a session file
    another run wrote there meanwhile was replaced by the report."""
    click.echo(f"pi-session: {report.summary_line(not_redacted)}", err=True)
    if not report_path:
        return
    if looked is None:
        looked = look_at_output(report_path)
        _refuse_a_session_file("--report", report_path)
    data = "".join(json.dumps(record) + "\n" for record in report.records())
    write_output("--report", report_path, looked, data.encode("utf-8", "surrogateescape"))
    click.echo(f"pi-session: report written to {report_path}", err=True)


@dataclass(frozen=True)
class OutputLook:
    """An output file as the checks before any work judged it: the file a write replaces
    (a symbolic link's target) and which file stood there then (None: none). Only that one
    is replaced: a file another run or program wrote there since is kept."""

    target: Path
    state: FileState | None


def look_at_output(path: str | os.PathLike[str] | None) -> OutputLook | None:
    """``path`` as it is now: taken before its checks, so that what they judged is what the
    write may replace. None for stdout, a device or a pipe (written as they are) and a loop
    of links (the write says so)."""
    if not path or path == "-" or is_special_file(path):
        return None
    try:
        target = write_target(path)
    except OSError:
        return None
    return OutputLook(target, file_state(target))


def _still_as_looked(looked: OutputLook | None) -> bool:
    """Nothing changed at the output since its look (or the file there went away)."""
    if looked is None:
        return True
    return file_state(looked.target) in (looked.state, None)


def write_output(
    option: str,
    path: str | os.PathLike[str],
    looked: OutputLook | None,
    data: bytes,
    *,
    copy_of: dict[str, str] | None = None,
    hold_from_replace: HeldSignals | None = None,
) -> None:
    """``data`` written to the output ``path`` at once (temp file, then rename), replacing
    only the file its checks judged (``looked``). A file written there since (two
    ``redact -o`` at once: the second replaced the first's copy, a session file) is kept,
    and the command stops: with the checks' own message when they refuse what is there
    now, else saying it changed. ``copy_of`` as for :func:`refuse_collisions`."""
    if looked is None:  # a device, a pipe: written as it is
        atomic_write_bytes(path, data, hold_from_replace=hold_from_replace)
        return
    try:
        atomic_write_bytes(path, data, hold_from_replace=hold_from_replace, only_over=looked.state)
    except WrittenMeanwhile:
        _refuse_a_changed_output(option, os.fspath(path), copy_of)


def _refuse_a_changed_output(option: str, path: str, copy_of: dict[str, str] | None) -> None:
    """Why an output that changed since its checks is not written (exit 1, as they do)."""
    _refuse_a_session_file(option, path, copy_of)
    raise CliError(
        f"{option}: {path} was written to while this command ran (by another run?); "
        "it was kept as it is: run again, or choose another path",
        1,
    )


_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
#: Names that say nothing of the session behind them: stdin and open file descriptors.
_NAMELESS = re.compile(r"-|stdin|/dev/stdin|/dev/fd/\d+|/proc/(?:self|\d+)/fd/\d+")


def source_stem(session_path: str | None, session_id: str | None) -> str:
    """The input's base name for a default output name. A pipe has none worth keeping
    (``<(ssh host cat s.jsonl)`` is ``/dev/fd/63``: every such export wrote
    ``pi-session-63.html`` over the last one), so the session's id names it, when the id
    is a plain file name."""
    if not session_path:
        return "session"
    nameless = _NAMELESS.fullmatch(session_path)
    if nameless and session_id and _SAFE_ID.fullmatch(session_id):
        return session_id
    name = Path(session_path).name
    return name[: -len(".jsonl.gz")] if name.endswith(".jsonl.gz") else Path(session_path).stem


def public_stem(
    session_path: str | None, session_id: str | None, policy: RedactionPolicy | None
) -> str:
    """:func:`source_stem` for an output's name, with redaction's rule for a name that goes
    out when the output is redacted: ``export --redact`` of ``debug-ghp_….jsonl`` wrote
    ``pi-session-debug-ghp_….html``, the token it had just removed from the page."""
    stem = source_stem(session_path, session_id)
    if policy is None or not policy.redact:
        return stem
    from exporter.redact import name_scrubber  # the detectors load only when redacting

    return name_scrubber(policy.resolved())(stem)


def default_copy_name(
    session_path: str | None,
    session_id: str | None = None,
    scrub: Callable[[str], str] | None = None,
) -> str:
    """``<input basename>.redacted.jsonl`` in the current folder. ``scrub`` is redaction's
    rule for a name that goes out (:func:`exporter.redact.name_scrubber`, the one a site's
    and a dataset's names follow): a copy of ``debug-ghp_….jsonl`` was named after the
    token it had just removed."""
    stem = source_stem(session_path, session_id)
    return f"{scrub(stem) if scrub is not None else stem}.redacted.jsonl"


def refuse_default_in_sessions(
    target: Path, sessions_dir: str | None, hint: str = "name another place with -o"
) -> None:
    """The default name in Pi's sessions folder (run from there) made a second session file
    with the same id, in Pi's resume list and making id prefixes ambiguous."""
    from exporter.discover import sessions_root

    root = os.path.realpath(sessions_root(sessions_dir))
    place = os.path.realpath(target.parent)
    if place == root or place.startswith(root + os.sep):
        raise CliError(
            f"the copy would be a second session file in Pi's sessions folder ({place}); " + hint,
            1,
        )


def _refuse_a_non_jsonl_name(option: str, output: str | os.PathLike[str] | None) -> None:
    """``-o clean.md`` wrote JSONL into a .md file without a word (``export -o z.txt`` is
    refused): a copy is named .jsonl (or .jsonl.gz), and so is the file a link named so
    leads to; a device or pipe is taken as it is."""
    if output and output != "-" and is_special_file(output):
        return
    refuse_a_misnamed_output(option, output, _why_not_jsonl)
    target = linked_file(output) if output and output != "-" else None
    gzipped = str(output).lower().endswith(".gz")  # (the name says how the copy is written)
    if target is not None and str(target).lower().endswith(".gz") != gzipped:
        raise CliError(
            f"{option} {output} is a symbolic link to {target}, the file the write would "
            f"replace: the copy would be {'gzip' if gzipped else 'plain JSONL'} in a file "
            f"named {'without' if gzipped else 'with'} .gz",
            1,
        )


def _why_not_jsonl(output: str) -> str | None:
    """Why a redacted copy does not go into a file of that name (None: it is a .jsonl)."""
    if output.lower().endswith((".jsonl", ".jsonl.gz")):
        return None
    page = Path(output).suffix.lower() in (".html", ".htm")
    other = (
        f"a redacted page: pi-session export --redact -o {shlex.quote(output)}"
        if page
        else "redacted Markdown: pi-session export --redact --format md -o "
        + shlex.quote(
            str(Path(output).with_suffix(".md")) if Path(output).suffix else output + ".md"
        )
    )
    return f"redact writes a session's JSONL, which Pi opens: name the file .jsonl (for {other})"


@click.command("redact")
@session_argument
@click.option(
    "-o",
    "--output",
    "output",
    metavar="PATH",
    callback=not_empty,
    help="Output file (default: <name>.redacted.jsonl, which a re-run replaces; - for "
    "stdout). A session file you name (Pi's, Claude Code's, Codex's) is never replaced, an "
    "earlier copy included: remove it first.",
)
@policy_options(redact_default=True)
@exclude_option
def redact_command(
    session: str | None, demo: bool, sessions_dir: str | None, output: str | None, **options: Any
) -> None:
    """Write a redacted copy of SESSION that is still a valid Pi session: the same ids, and the
    same tree unless entries are dropped (hidden ones by default; their children move up)."""
    policy = policy_from_options(**options)
    # an unreadable one: exit 2 (cli.py); its warnings are the redacted copy's
    loaded = open_session(session, demo, sessions_dir, warnings=False)
    check_exclusions(loaded, policy)
    renamed = False  # the default name left out a secret of the session's file name
    if output is None:
        scrub = None
        if policy.redact:
            from exporter.redact import name_scrubber

            scrub = name_scrubber(policy)
        target: Path | None = Path(default_copy_name(loaded.path, loaded.id, scrub))
        renamed = target.name != default_copy_name(loaded.path, loaded.id)
    else:
        target = None if output == "-" else Path(output)
    if output is None and target is not None:
        refuse_default_in_sessions(target, sessions_dir)
    copy = "-o" if output else "the copy (default name; -o names another)"
    copy_of = {copy: loaded.id} if output is None else None  # only at the default name
    report_path = options.get("report")
    # what the checks judge is all the writes may replace: a copy another run (or another
    # program) wrote meanwhile is kept (two runs at once: the first's copy was replaced)
    copy_look = look_at_output(target)
    report_look = look_at_output(report_path)
    refuse_collisions(
        {copy: output if output else target, "--report": report_path},
        read_files([loaded.path], options),
        copy_of=copy_of,
    )
    # (after: a folder, or the input, is said as such)
    _refuse_a_non_jsonl_name("-o" if output else "the default name", output or target)
    from exporter.redact import GPS_IMAGES, apply_policy, gps_warning

    redacted, report = apply_policy(loaded, policy, shows_name=False)  # JSONL: no file name
    report_diagnostics(redacted)
    # (what the redaction left as it was goes out as the file had it, byte for byte)
    source = read_source_bytes(loaded)
    data = copy_to_jsonl(redacted, source, report.source_lines)
    del source
    if report_path and not _still_as_looked(report_look):  # (the copy would go without it)
        _refuse_a_changed_output("--report", report_path, None)
    held = HeldSignals()  # the copy and its --report: both or neither under a signal
    hold = held if report_path else None
    try:
        if output == "-":
            write_stdout_bytes(data)
            sys.stdout.flush()
            if hold is not None:
                hold.hold()
        else:
            assert target is not None
            if target.name.lower().endswith(".jsonl.gz"):  # what the name says (it was plain text)
                data = gzip.compress(data, compresslevel=6, mtime=0)
            shown = output if output else str(target)
            write_output(copy, shown, copy_look, data, copy_of=copy_of, hold_from_replace=hold)
            echo_path(target)  # like `export`: the file written, on stdout
            if renamed:  # (the session's own name is not said: it holds the secret)
                click.echo(
                    "pi-session: the session's file name holds a secret (or your user "
                    "name), left out of the "
                    f"copy's name: {path_for_terminal(target)}",
                    err=True,
                )
        if redacted.damaged:  # copy_to_jsonl writes entries; a damaged line is none
            count = len(redacted.damaged)
            click.echo(
                f"pi-session: {count} damaged line{'s' if count != 1 else ''} not copied (lines "
                "not read as entries; the warnings above say why)",
                err=True,
            )
        finish_report(report, report_path, looked=report_look)
    finally:
        held.release()
    if located := gps_warning(report.actions.get(GPS_IMAGES, 0), ("is copied", "are copied")):
        warn(located)  # (README: images are copied as they are, metadata included)
