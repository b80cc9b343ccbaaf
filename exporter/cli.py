"""The `pi-session` command line: one click group, thin commands, errors as one clean line.

Commands only parse options, call the library and print; every failure the library can raise
is turned into a one-line message and an exit code (1 usage, 2 bad input, 3 remote/auth).
"""

from __future__ import annotations

import importlib
import io
import itertools
import json
import math
import os
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import click

from exporter import __version__
from exporter.discover import (
    SessionLookupError,
    id_from_name,
    resolve_session_arg,
    scan_summary,
    session_files,
    sessions_root,
)
from exporter.formatting import (
    escape_surrogates,
    fmt_cost,
    fmt_datetime,
    fmt_duration,
    fmt_int,
    json_safe_for_terminal,
    one_line,
    terminal_text,
)
from exporter.jsonl_in import allow_long_integers
from exporter.loader import SessionFormatError, load_session
from exporter.session import Session
from exporter.usage import compute_stats, usage_rows

F = TypeVar("F", bound=Callable[..., Any])


class CliError(click.ClickException):
    """A clean one-line failure with a chosen exit code."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code

    def show(self, file: Any = None) -> None:
        click.echo(terminal_text(f"pi-session: error: {self.format_message()}"), err=True)


# Commands in their own modules, imported only when used: `export` must not pay for
# `requests` or `huggingface_hub` at start-up.
LAZY_COMMANDS = {
    "export": ("exporter.export_cli", "export_command"),
    "redact": ("exporter.redact_cli", "redact_command"),
    "share": ("exporter.share_cli", "share_command"),
    "publish": ("exporter.publish_cli", "publish_command"),
    "pi-extension": ("exporter.pi_extension_cli", "pi_extension_command"),
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

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *LAZY_COMMANDS])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            module, attr = LAZY_COMMANDS[cmd_name]
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        return super().get_command(ctx, cmd_name)

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
        except BrokenPipeError:  # `pi-session list --json | head`: the reader stopped early
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes at exit
            ctx.exit(EXIT_BROKEN_PIPE)  # quietly, but not "done": the output was cut short
        except OSError as error:
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


def _one_line_usage_error(error: click.UsageError, where: str) -> CliError:
    """click's usage error as our one line, exit 1 (our contract: 1 usage, 2 bad input, 3
    remote), with the help command to run instead of click's four-line usage block."""
    command = error.ctx.command_path if error.ctx else where
    return CliError(f"{error.format_message()} (see: {command} --help)", 1)


#: What a shell reports for a tool killed by SIGPIPE (128 + 13), so `set -o pipefail` sees
#: that the output was cut short.
EXIT_BROKEN_PIPE = 141


SESSIONS_DIR_HELP = (
    "Folder of Pi sessions (default: $PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions)."
)


def session_argument(func: F) -> F:
    """SESSION plus the options that locate it, shared by every command that reads one."""
    func = click.option(
        "--sessions-dir",
        type=click.Path(file_okay=False, path_type=str),
        help=SESSIONS_DIR_HELP,
    )(func)
    func = click.option("--demo", is_flag=True, help="Use the real session bundled as a demo.")(
        func
    )
    return click.argument("session", required=False)(func)


def open_session(
    session: str | None, demo: bool, sessions_dir: str | None, leaf: str | None = None
) -> Session:
    """Resolve SESSION, load it, choose the leaf, and print load warnings on stderr."""
    if leaf is not None and not leaf.strip():
        raise CliError("--leaf needs an entry id (it was empty)", 1)
    if demo and session is not None:  # which one did the user mean?
        raise CliError("give SESSION or --demo, not both", 1)
    path = resolve_session_arg(session, demo=demo, sessions_dir=sessions_dir)
    loaded = load_session(path)
    if leaf is not None:
        try:
            loaded.set_leaf(leaf)
        except KeyError as error:
            raise CliError(str(error.args[0]), 1) from None
    report_diagnostics(loaded)
    return loaded


def echo_json(document: Any, indent: int | None = None) -> None:
    """Print a document as strict JSON.

    Lone surrogates (valid in Pi's files, not in UTF-8) become ``\\uXXXX`` escapes, so the
    output is valid UTF-8 and parses back to the same string; a number that overflowed
    (costs adding up past the float range) becomes null, as JSON has no Infinity.
    """
    ascii_only = not _stdout_takes_utf8()  # a Latin-1 terminal gets \\u escapes, not an error
    text = json.dumps(_finite(document), ensure_ascii=ascii_only, indent=indent, allow_nan=False)
    click.echo(json_safe_for_terminal(escape_surrogates(text)))


def _stdout_takes_utf8() -> bool:
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    return encoding.lower().replace("_", "-") in ("utf-8", "utf8")


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def write_stdout_bytes(data: bytes) -> None:
    """All of ``data`` on stdout. Unbuffered (``python -u``, ``PYTHONUNBUFFERED``, common
    in containers) one write can take part of it when the reader goes away; the rest was
    lost and the command said it succeeded. Looping makes the next write fail instead."""
    out = sys.stdout.buffer
    view = memoryview(data)
    while view:
        written = out.write(view)
        view = view[written if written is not None else 0 :]
    out.flush()


def echo_text(text: str) -> None:
    """Print human text built from session strings: controls shown as signs
    (:func:`terminal_text`), a lone surrogate as U+FFFD instead of a crash."""
    click.echo(terminal_text(text))


def check_http_url(url: str, option: str) -> None:
    """An API root must be an http(s) URL with a host; anything else is a usage error."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:  # e.g. "http://[::1" (an unclosed IPv6 bracket)
        parts, host = None, None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        raise click.BadParameter(f"{url!r} is not an http(s) URL with a host", param_hint=option)


def report_diagnostics(session: Session, limit: int = 20) -> None:
    problems = [d for d in session.diagnostics if d.severity != "info"]
    for diagnostic in problems[:limit]:
        click.echo(terminal_text(f"pi-session: warning: {diagnostic}"), err=True)
    if len(problems) > limit:
        click.echo(f"pi-session: warning: … and {len(problems) - limit} more", err=True)


@click.group(cls=SessionGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pi-session")
def cli() -> None:
    """Export, inspect and share Pi coding-agent sessions."""


# --- list ---------------------------------------------------------------------------------


@cli.command("list")
@click.option("--cwd", "cwd", type=click.Path(file_okay=False), help="Project folder (default: .).")
@click.option("--all", "all_projects", is_flag=True, help="Sessions of every project.")
@click.option("--sessions-dir", type=click.Path(file_okay=False), help=SESSIONS_DIR_HELP)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def list_command(
    cwd: str | None, all_projects: bool, sessions_dir: str | None, as_json: bool
) -> None:
    """List sessions, newest first, without parsing every message."""
    if cwd and all_projects:
        raise CliError("use either --cwd or --all", 1)
    scope = None if all_projects else os.path.abspath(cwd or os.getcwd())
    root = sessions_root(sessions_dir)
    if sessions_dir and not root.is_dir():  # a typo, not an empty list (--json too)
        raise CliError(f"--sessions-dir: {root} does not exist", 2)
    summaries = [scan_summary(p) for p in session_files(sessions_dir, scope)]
    summaries.sort(key=lambda s: s.modified.timestamp() if s.modified else 0, reverse=True)
    if as_json:
        for summary in summaries:
            echo_json(summary.as_dict())
        return
    if not summaries:
        where = "any project" if scope is None else scope
        missing = "" if root.is_dir() else f" ({root} does not exist)"
        click.echo(f"pi-session: no sessions for {where}{missing}", err=True)
        return
    # unique among every session, not only those listed: SESSION is looked up in this
    # folder's project first, then everywhere, so the prefix must name one file anywhere
    every = [id_from_name(p) for p in session_files(sessions_dir, None)]
    shortest = dict(zip(every, unique_prefixes(every), strict=True))
    ids = [shortest.get(i, i) for i in (id_from_name(s.path) for s in summaries)]
    rows = [
        [
            fmt_datetime(s.modified)[:16],
            one_line(s.title, 48),
            one_line(s.cwd, 30),
            fmt_int(s.messages),
            str(s.branches),
            fmt_int(s.tokens),
            fmt_cost(s.cost),
            short_id,
        ]
        for s, short_id in zip(summaries, ids, strict=True)
    ]
    headers = ["last activity", "session", "project", "messages", "branches", "tokens", "cost"]
    headers.append("id")
    right = {"messages", "branches", "tokens", "cost"}
    keep = [i for i, h in enumerate(headers) if scope is None or h != "project"]
    shown = [headers[i] for i in keep]
    echo_text(
        render_table(
            shown,
            [[r[i] for i in keep] for r in rows],
            right={n for n, h in enumerate(shown) if h in right},
        )
    )


def unique_prefixes(ids: list[str], shortest: int = 8) -> list[str]:
    """Each id cut to the shortest prefix (at least ``shortest``) no other id shares, so
    what ``list`` shows can be passed back as SESSION. Pi's ids are UUIDv7: sessions
    started within a minute share their first 8 digits."""
    ordered = sorted(set(ids))
    need = {i: len(i) for i, n in Counter(ids).items() if n > 1}  # two files, one id: all of it
    for before, after in itertools.pairwise(ordered):
        pairs = enumerate(zip(before, after, strict=False))
        common = next((n for n, (a, b) in pairs if a != b), min(len(before), len(after)))
        need[before] = max(need.get(before, 0), common + 1)
        need[after] = max(need.get(after, 0), common + 1)
    return [i[: max(shortest, need.get(i, 0))] for i in ids]


def display_width(text: str) -> int:
    """Terminal columns: wide (CJK, emoji) characters take two, combining marks none."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def render_table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    """Aligned columns, measured as the terminal shows them (controls made visible first)."""
    right = right or set()
    rows = [[terminal_text(str(cell)) for cell in row] for row in rows]
    widths = [max(display_width(str(c)) for c in col) for col in zip(headers, *rows, strict=True)]

    def fmt(row: list[str]) -> str:
        cells = []
        for i, (cell, width) in enumerate(zip(row, widths, strict=True)):
            pad = " " * (width - display_width(str(cell)))
            cells.append(f"{pad}{cell}" if i in right else f"{cell}{pad}")
        return "  ".join(cells).rstrip()

    lines = [fmt(headers), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines)


# --- stats --------------------------------------------------------------------------------


def stats_document(session: Session) -> dict[str, Any]:
    """The `stats --json` object; later tools and checks rely on these keys."""
    stats = compute_stats(session)
    return {
        "id": session.id,
        "name": session.name,
        "title": session.title,
        "cwd": session.header.cwd,
        "parent_session": session.header.parent_session,
        "version": session.version,
        "path": session.path,
        "entries": len(session.entries),
        "leaf_id": session.leaf_id,
        "active_path": session.active_path,
        "branches": len(stats.branches),
        "forks": len(session.fork_ids),
        "labels": dict(session.labels),
        "started": stats.started.isoformat() if stats.started else None,
        "ended": stats.ended.isoformat() if stats.ended else None,
        "duration_seconds": stats.duration_seconds,
        "models": stats.models_used,
        "messages": dict(stats.roles),
        "compactions": stats.compactions,
        "branch_summaries": stats.branch_summaries,
        "custom_messages": stats.custom_messages,
        "errors": stats.errors,
        "aborted": stats.aborted,
        "usage": {
            "all": stats.all.as_dict(),
            "active_path": stats.active_path.as_dict(),
            "by_model": [{"model": m, **u.as_dict()} for m, u in stats.by_model_all],
            "by_model_active_path": [{"model": m, **u.as_dict()} for m, u in stats.by_model_path],
            "by_branch": [
                {
                    "leaf_id": b.branch.leaf_id,
                    "fork_id": b.branch.fork_id,
                    "active": b.branch.is_active,
                    "entries": b.entries,
                    "first_prompt": b.first_prompt,
                    "last_activity": b.last_activity.isoformat() if b.last_activity else None,
                    **b.usage.as_dict(),
                }
                for b in stats.branches
            ],
        },
        "tools": {name: {"calls": t.calls, "errors": t.errors} for name, t in stats.tools.items()},
        "diagnostics": [d.as_dict() for d in session.diagnostics],
    }


USAGE_HEADERS = ["model", "turns", "input", "output", "cache read", "cache write", "cost"]


@cli.command("stats")
@session_argument
@click.option("--leaf", help="Entry id (or unique prefix) to treat as the active leaf.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def stats_command(
    session: str | None, demo: bool, sessions_dir: str | None, leaf: str | None, as_json: bool
) -> None:
    """Header facts and usage tables: this path vs all branches, per model, branch and tool."""
    loaded = open_session(session, demo, sessions_dir, leaf)
    if as_json:
        echo_json(stats_document(loaded), indent=2)
        return
    stats = compute_stats(loaded)
    numeric = {1, 2, 3, 4, 5, 6}
    lines = [
        f"{loaded.title}",
        f"  id        {loaded.id}  (file v{loaded.version})",
        f"  project   {loaded.header.cwd or 'unknown'}",
        f"  started   {fmt_datetime(stats.started)}",
        f"  ended     {fmt_datetime(stats.ended)}  ({fmt_duration(stats.duration_seconds)})",
        f"  models    {', '.join(stats.models_used) or 'none'}",
        f"  entries   {fmt_int(len(loaded.entries))}, messages "
        + ", ".join(f"{n} {r}" for r, n in stats.roles.most_common()),
        f"  branches  {len(stats.branches)} (forks: {len(loaded.fork_ids)}), compactions "
        f"{stats.compactions}, branch summaries {stats.branch_summaries}, custom messages "
        f"{stats.custom_messages}, labels {stats.labels}, errors {stats.errors}, "
        f"aborted {stats.aborted}",
        "",
        "Usage on this path (root → leaf)",
        render_table(USAGE_HEADERS, usage_rows(stats.by_model_path, "total"), numeric),
        "",
        "Usage on all branches",
        render_table(USAGE_HEADERS, usage_rows(stats.by_model_all, "total"), numeric),
        "",
        "Branches",
        render_table(
            ["", "leaf", "forks at", "entries", "tokens", "cost", "first prompt"],
            [
                [
                    "*" if b.branch.is_active else "",
                    b.branch.leaf_id[:10],
                    (b.branch.fork_id or "root")[:10],
                    fmt_int(b.entries),
                    fmt_int(b.usage.total_tokens),
                    fmt_cost(b.usage.cost),
                    one_line(b.first_prompt, 50),
                ]
                for b in stats.branches
            ],
            {3, 4, 5},
        ),
    ]
    if stats.tools:
        lines += [
            "",
            "Tools",
            render_table(
                ["tool", "calls", "errors"],
                [[n, fmt_int(t.calls), fmt_int(t.errors)] for n, t in stats.tools.items()],
                {1, 2},
            ),
        ]
    echo_text("\n".join(lines))


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    allow_long_integers()  # for rendering and writing them, not only loading
    for stream in (sys.stdout, sys.stderr):
        # a title in Chinese on a Latin-1 terminal: shown as \\u escapes, not an abort
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")
    cli.main(args=argv, prog_name="pi-session")


__all__ = ["CliError", "cli", "main", "open_session", "session_argument", "stats_document"]
