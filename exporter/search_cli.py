"""`pi-session search PATTERN`: the sessions and entries that say it, newest session first."""

from __future__ import annotations

import functools
import os
import re
import sys
from pathlib import Path
from typing import Any

import click

from exporter.cli import (
    CWD_TYPE,
    SESSIONS_DIR_HELP,
    SESSIONS_DIR_TYPE,
    CliError,
    echo_json,
    existing_sessions_dir,
    listed_session_files,
    named_session_files,
    project_folder,
    project_scope,
    scope_conflict,
    stdout_named,
    warn,
)
from exporter.discover import files_active_since, no_sessions_said
from exporter.formatting import (
    as_printed,
    display_width,
    left_to_right,
    one_line,
    path_for_terminal,
    plural,
    role_label,
    terminal_text,
)
from exporter.policy import RedactionPolicy
from exporter.prepare import CUT_OPTIONS, policy_changes_nothing
from exporter.redact_cli import policy_from_options, policy_options, since_moment, since_said
from exporter.search import Pattern, search_file
from exporter.workers import results_of

#: The entries a session lists on a terminal without --limit (--json: every one).
SHOWN_PER_SESSION = 5


@click.command("search")
@click.argument("pattern")
@click.argument("sessions", nargs=-1, metavar="[SESSION]...")
@click.option("--cwd", type=CWD_TYPE, callback=project_folder, help="Project folder (default: .).")
@click.option(
    "--all",
    "all_projects",
    is_flag=True,
    help="Sessions of every project (with --cwd: of that project, as --cwd alone).",
)
@click.option(
    "--sessions-dir",
    type=SESSIONS_DIR_TYPE,
    metavar="DIRECTORY",
    callback=existing_sessions_dir,
    help=SESSIONS_DIR_HELP,
)
@click.option(
    "--regex",
    "-E",
    is_flag=True,
    help="PATTERN is a Python regular expression (^ and $ match at each line's start and "
    "end). Without it a space in PATTERN matches any run of spaces and line breaks.",
)
@click.option("--case-sensitive", "-s", is_flag=True, help="Match case (default: ignore it).")
@click.option(
    "--since",
    metavar="DATE",
    help="Only sessions active on or after DATE (YYYY-MM-DD local midnight, ISO time, 7d, "
    "12h, 2w).",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    help=f"Entries shown per session, the rest counted (default: {SHOWN_PER_SESSION}; with "
    "--json every one unless --limit is given, the rest counted on stderr).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per matching entry.")
@click.option(
    "-j", "--jobs", type=click.IntRange(min=0), help="Processes (default or 0: one per CPU)."
)
@policy_options(
    redact_default=False,
    report=None,
    redact_help="Search each session redacted as share redacts it (secrets, the home "
    "folder and the user name replaced), not the files; hidden entries are searched too "
    "unless --drop-hidden (share drops them); nothing is written.",
)
def search_command(
    pattern: str,
    sessions: tuple[str, ...],
    cwd: str | None,
    all_projects: bool,
    sessions_dir: str | None,
    regex: bool,
    case_sensitive: bool,
    since: str | None,
    limit: int | None,
    as_json: bool,
    jobs: int | None,
    **policy_values: Any,
) -> None:
    """Find PATTERN in the sessions of this folder (or --cwd, or --all, or the SESSION
    files, ids or id prefixes given): in messages, thinking, tool calls and their output,
    shell commands, summaries and labels, on every branch, and in the file's damaged lines
    (shown as line-N). Each session lists the entries that match, with their ids (open one
    with `pi-session export SESSION` and the page's #<id>).

    With --redact (or any other policy option, as share and publish take them) it searches
    each session redacted and cut by that policy, instead of the files: whether a name, a
    host or a customer would go out (hidden entries too, unless --drop-hidden, which share
    and publish apply). That reads and redacts every session, so it is slower."""
    if sessions and (cwd is not None or all_projects):
        raise scope_conflict()
    if policy_values.get("report"):
        raise CliError("--report is for commands that write a copy; search writes none", 1)
    policy = policy_from_options(**policy_values)
    # resolved: what it reads from the environment, fixed here for the worker processes
    shared = None if policy_changes_nothing(policy) else policy.resolved()
    wanted = Pattern(pattern, regex, case_sensitive)
    if not pattern:
        raise CliError("PATTERN is empty", 1)
    try:
        wanted.compiled()
    except re.error as error:
        raise CliError(f"--regex {pattern!r}: {error}", 1) from None
    except OverflowError as error:  # a repeat past what re counts: a{4294967296}
        raise CliError(f"--regex {pattern!r}: {error}", 1) from None
    except RecursionError:  # groups nested about a thousand deep, deeper than re parses
        raise CliError(f"--regex {pattern!r}: nested too deeply", 1) from None
    since_at = since_moment(since)
    # SESSION files given: no project, and no current folder needed (it may be deleted)
    scope = None if sessions else project_scope(cwd, all_projects)
    if sessions:
        files = _named_files(sessions, sessions_dir)
    else:
        files = listed_session_files(sessions_dir, scope)
    if not files:
        then = "drop --cwd to search {them}" if all_projects else "--all searches {them}"
        raise CliError(no_sessions_said(sessions_dir, scope, then), 2)
    older = ""
    if since_at is not None:
        when = since_said(since or "", since_at)  # the moment: "since 0d" said nothing
        recent = files_active_since(files, since_at)
        if len(recent) < len(files):  # "no matches" alone read as searched and not found
            left = plural(len(files) - len(recent), "session")
            older = f"; left out {left} not active since {when}"
        if not recent:  # said as `list --since` says it ("no matches" would be a lie)
            raise CliError(_none_since(files, sessions, sessions_dir, scope, when), 2)
        files = recent
    found = results_of(
        files,
        # picklable for a worker; a file named on the command line is always read
        functools.partial(search_file, pattern=wanted, skip_by_bytes=not sessions, policy=shared),
        jobs=jobs,
        preload="exporter.search",
        label="searching",
    )
    # said with the count: a "no matches" must not read as "not in the files"
    where = _copies_said(shared) if shared else ""
    _report(_by_last_activity(list(zip(files, found, strict=True))), limit, as_json, older, where)


Searched = list[tuple[Path, dict[str, Any]]]  # each file with what its search found


def _by_last_activity(results: Searched) -> Searched:
    """The sessions by last activity, newest first, as `list` orders them (the files came
    newest written first: a session copied or touched last came first); the time is the
    worker's, from the session it read, so nothing is read again."""
    return sorted(results, key=lambda pair: pair[1].get("last_activity") or 0, reverse=True)


def _copies_said(policy: RedactionPolicy) -> str:
    """ " in the redacted copies", " in the cut copies" or both: what was searched."""
    cut = any(getattr(policy, name) for name in CUT_OPTIONS)
    made = " and ".join(w for w, on in (("redacted", policy.redact), ("cut", cut)) if on)
    return f" in the {made} copies"


def _none_since(
    files: list[Path],
    sessions: tuple[str, ...],
    sessions_dir: str | None,
    scope: str | None,
    when: str,
) -> str:
    """Why nothing is searched when ``--since`` left every session out."""
    if sessions and len(files) == 1:
        return f"the session named is not active since {when}"
    if sessions:
        return f"none of the {len(files)} sessions named is active since {when}"
    return no_sessions_said(sessions_dir, scope, since=when, older=len(files))


def _named_files(sessions: tuple[str, ...], sessions_dir: str | None) -> list[Path]:
    """The SESSION arguments as files, each once (read twice: the byte check, the load)."""
    files = named_session_files(sessions, sessions_dir, "search reads")
    return list(dict.fromkeys(path.resolve() for path in files))


def colour_wanted() -> bool:
    """Matches in colour only on a terminal that wants it: not with NO_COLOR set and not
    empty (https://no-color.org), nor on TERM=dumb, which shows escape codes as text."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty()


def _report(
    results: list[tuple[Path, dict[str, Any]]],
    limit: int | None,
    as_json: bool,
    older: str = "",
    where: str = "",
) -> None:
    """The matches per session on stdout, ``limit`` of each (None: the default, every one
    for --json); on stderr, how many (``where``: in what), those --json left out, and the
    sessions that ``older`` says --since left out."""
    listed = SHOWN_PER_SESSION if limit is None else limit  # (--json: all without --limit)
    styled = not as_json and colour_wanted()
    sessions = unreadable = 0
    found: list[dict[str, Any]] = []  # every match: how many entries and damaged lines
    for path, result in results:
        if "error" in result:
            unreadable += 1
            said = str(result["error"])  # the loader's error names the file already
            if said.startswith(f"{path}: "):
                said = said[len(f"{path}: ") :]
            warn(f"{path_for_terminal(path)}: {said}; not searched")
            continue
        for said in result.get("warnings") or ():  # Pi cannot open a UTF-16 file, say
            warn(f"{path_for_terminal(path)}: {said}")
        matches = result.get("matches") or []
        if not matches:
            continue
        sessions += 1
        found += matches
        if as_json:  # --limit as for the listing; the rest said on stderr, not dropped unsaid
            for match in matches[:limit]:
                echo_json({"session": result["id"], "path": str(path), **match})
            if limit is not None and len(matches) > limit:
                rest = f"{len(matches) - limit:,} more (--limit {len(matches)})"
                click.echo(f"pi-session: {path_for_terminal(path)}: … and {rest}", err=True)
            continue
        count = _matches_said(matches)
        head = f"{one_line(result['title'], 70)}  ({one_line(result['id'], None)}, {count})"
        lines = [terminal_text(head), f"  {path_for_terminal(path)}"]
        shown = matches[:listed]
        # the ids' column aligned (up to a uuid with a suffix: one odd id pads no other line)
        width = min(ID_COLUMN, max(display_width(_id_said(match)) for match in shown))
        lines += ["  " + _match_line(match, styled, width) for match in shown]
        if len(matches) > listed:
            lines.append(f"  … and {len(matches) - listed:,} more (--limit {len(matches)})")
        with stdout_named():  # `search … >/dev/full`: "standard output: No space …", as
            click.echo("\n".join([*lines, ""]))  # every other command says it
    if results and unreadable == len(results):  # "no matches" would be a lie
        raise CliError(f"no session could be searched ({plural(unreadable, 'file')} unreadable)", 2)
    if not found:
        click.echo(terminal_text(f"pi-session: no matches{where}{older}"), err=True)
    elif not as_json:
        said = f"{_matches_said(found)} in {plural(sessions, 'session')}"
        click.echo(terminal_text(f"pi-session: {said}{where}{older}"), err=True)


def _matches_said(matches: list[dict[str, Any]]) -> str:
    """ "3 entries", "1 damaged line" or "3 entries and 1 damaged line": a damaged line is
    no entry, and a count of entries said it was."""
    damaged = sum(1 for match in matches if _damaged(match))
    counts = [
        plural(len(matches) - damaged, "entry", "entries") if len(matches) > damaged else "",
        plural(damaged, "damaged line") if damaged else "",
    ]
    return " and ".join(count for count in counts if count)


#: An entry's type as the page and `stats` name it (a message's role: ``role_label``); the
#: JSON output keeps the type as the file has it.
_KIND_SAID = {
    "compaction": "compaction",
    "branch_summary": "branch summary",
    "custom_message": "extension message",
    "custom": "extension state",
    "label": "label",
    "model_change": "model change",
    "thinking_level_change": "thinking level",
    "session_info": "session name",
}


#: The widest ids the listing lines up (Pi's are 8 characters, Claude Code's uuids 36).
ID_COLUMN = 48


def _damaged(match: dict[str, Any]) -> bool:
    """A match in a damaged line of the file (it has a line number; an entry, whatever its
    type says, has none)."""
    return match.get("line") is not None


def _id_said(match: dict[str, Any]) -> str:
    """An entry's id whole (a Claude Code uuid cut to 16 characters found no entry), on one
    line and with its controls made visible; a damaged line's place on the page
    (``line-N``), since it has no id. As stdout writes it (:func:`as_printed`): its column
    is measured as seen on a Latin-1 terminal too."""
    if _damaged(match):
        return f"line-{match['line']}"
    return left_to_right(as_printed(terminal_text(one_line(match["entry_id"], None))))


def _match_line(match: dict[str, Any], styled: bool, width: int = 0) -> str:
    snippet, start, end = match["snippet"], match["start"], match["end"]
    before, hit, after = (terminal_text(part) for part in (
        snippet[:start], snippet[start:end], snippet[end:]))  # fmt: skip
    if hit:  # an empty match (-E '^', '(?=x)') is a place: the text there, nothing marked
        hit = click.style(hit, bold=True, fg="yellow") if styled else f"[{hit}]"
    if _damaged(match):  # on no branch: not "other branch"
        kind, where = "damaged line", ""
    else:
        where = "" if match["on_active_path"] else " (other branch)"
        kind = _KIND_SAID.get(match["kind"]) or left_to_right(
            as_printed(terminal_text(role_label(one_line(match["kind"], 24), 1)))
        )
    said_id = _id_said(match)
    pad = " " * (width - display_width(said_id))  # (an id's marks take no column)
    return f"{said_id}{pad}  {kind}{where}: {before}{hit}{after}"
