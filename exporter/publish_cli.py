"""`pi-session publish`: many sessions -> one (private) Hugging Face dataset, incrementally.

Redaction is always on here: no ``--no-redact``, ``--keep-hidden``, ``--keep-paths`` or
``--no-env-secrets``; the policy options that are offered can only remove more. The command
picks the sessions, prints the plan or the result, and leaves the work to
``exporter.publish.hub.publish``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

import click

from exporter.cli import (
    CWD_TYPE,
    SESSIONS_DIR_HELP,
    SESSIONS_DIR_TYPE,
    CliError,
    check_http_url,
    existing_sessions_dir,
    listed_session_files,
    named_session_files,
    project_folder,
    project_scope,
    refuse_url_credentials,
    scope_conflict,
    warn,
)
from exporter.discover import files_active_since, gzip_files_left_out, no_sessions_said
from exporter.formatting import fmt_int, plural, render_table, terminal_text
from exporter.fsutil import atomic_write_text
from exporter.policy import RedactionPolicy
from exporter.publish.dataset_card import CLAMPED
from exporter.publish.deny import Denied, DenyPattern, DenyUsageError, deny_patterns
from exporter.publish.errors import PublishError, host_for_messages
from exporter.publish.hub import DEFAULT_ENDPOINT, PublishRequest, PublishResult, publish
from exporter.redact import action_counts
from exporter.redact_cli import (
    parse_since_option,
    policy_from_options,
    policy_options,
    read_files,
    refuse_collisions,
    since_said,
)
from exporter.session_skip import skip_help, without_skipped
from exporter.token_arg import TOKEN_HELP, stdin_reader, token_argument

__all__ = ["publish_command", "select_files"]

_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")


def _check_hub_repo_id(repo_id: str) -> None:
    """The Hub's own rules (no ``--``/``..``, no ``.``/``-`` at the ends, at most 96
    characters): a name it rejects is a usage error, not a failed upload (exit 3)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as error:
        reason = re.split(r"\.\s+(?=[A-Z])", str(error))[0].rstrip(".")  # first sentence
        raise CliError(f"REPO_ID {repo_id!r} is not a valid Hub repo id: {reason}", 1) from None


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class Since(NamedTuple):
    """--since as given and the moment it stands for (a message says both)."""

    given: str
    moment: datetime


def _parse_since(value: str | None) -> Since | None:
    """--since as `export --all` reads it (7d worked there and was refused here)."""
    if value is None:
        return None
    try:
        return Since(value, parse_since_option(value))
    except ValueError as error:
        raise click.BadParameter(str(error).removeprefix(f"--since {value!r}: ")) from None


def select_files(
    sessions: tuple[str, ...],
    cwd: str | None,
    all_projects: bool,
    sessions_dir: str | None,
    since: datetime | None,
) -> tuple[list[Path], int]:
    """SESSION arguments, ``--all``, ``--cwd DIR`` or this folder's sessions; then ``--since``,
    and how many of them it left out as older."""
    if sessions and (cwd is not None or all_projects):
        raise scope_conflict()
    if sessions:
        # hashed, then read again to redact, and named by its file in the dataset; a gzip
        # or UTF-16/UTF-32 file is read as the loader reads it and goes up as UTF-8 JSONL
        files = named_session_files(sessions, sessions_dir, "publish needs")
    else:
        scope = project_scope(cwd, all_projects)  # the project published (None: every one)
        files = listed_session_files(sessions_dir, scope)
        _say_gzip_left_out(sessions_dir, scope)
    every = len(files)
    if since is not None:
        files = files_active_since(files, since)
    return list(dict.fromkeys(files)), every - len(files)


def _say_gzip_left_out(sessions_dir: str | None, scope: str | None) -> None:
    """``*.jsonl.gz`` files are not looked for (``list`` does not show them either, and one
    beside its ``.jsonl`` is a copy of it); those without one are said, not left out unsaid."""
    left = gzip_files_left_out(sessions_dir, scope)
    if left:
        them = "it" if len(left) == 1 else "them"
        first = f" ({left[0]})" if len(left) == 1 else f" (first: {left[0]})"
        warn(
            f"{plural(len(left), '.jsonl.gz file')} in the sessions folder ignored{first}: "
            f"name {them} to publish {them} (`pi-session publish REPO FILE...`) or gunzip {them}"
        )


def redaction_line(result: PublishResult) -> str:
    """``redact: 7 secrets in 3 sessions (github-token 4, …); home paths -> ~: 12``."""
    total = sum(result.redactions.values())
    if not result.prepared:
        return "redact: nothing new to redact"
    if total:
        kinds = sorted(result.redactions.items(), key=lambda i: (-i[1], i[0]))
        where = sum(1 for op in result.ops if op.secrets)
        listed = ", ".join(f"{k} {n}" for k, n in kinds)
        text = f"{plural(total, 'secret')} in {plural(where, 'session')} ({listed})"
    else:
        text = "no secrets found"
    return "redact: " + "; ".join([text, *action_counts(result.actions)])


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n:,} B"


def _counts(result: PublishResult) -> str:
    unchanged = result.unchanged + result.count("refresh")
    denied = f", {len(result.denied)} denied" if result.deny_patterns else ""
    return (
        f"{result.count('add')} added, {result.count('update')} updated, "
        f"{result.count('remove')} removed, {unchanged} unchanged, {len(result.failed)} failed"
        f"{denied}"
    )


def print_dry_run(result: PublishResult, repo_id: str) -> None:
    """The table of what would change, with sizes; nothing was written anywhere remote."""
    state = "exists" if result.exists else "would be created"
    if not result.reached:
        state = "not reached: planned as new"
    click.echo(f"dry run: {repo_id} ({state}, {'private' if result.private else 'public'})")
    rows = [
        [op.action, op.path, fmt_int(op.size), fmt_int(op.secrets) if op.uploads else ""]
        for op in result.ops
        if op.is_session and op.action != "refresh"
    ]
    rows += [["deny", d.repo_path, "", ""] for d in result.denied]  # not sent (--deny)
    if rows:
        click.echo(render_table(["action", "path", "bytes", "secrets"], rows, right={2, 3}))
    html = [op for op in result.ops if not op.is_session]
    if html:
        upload = sum(op.size for op in html if op.uploads)
        gone = sum(op.action == "remove" for op in html)
        click.echo(f"html/: {len(html) - gone} files to upload ({_size(upload)}), {gone} to delete")
    if result.metadata:  # what a reader of the dataset sees first, written by every run
        named = {"README.md": "README.md (dataset card)"}
        files = [f"{named.get(n, n)} {_size(b)}" for n, b in sorted(result.metadata.items())]
        click.echo(f"and the dataset's own files: {', '.join(files)}")
    upload = sum(op.size for op in result.ops if op.uploads) + result.metadata_sent
    click.echo(
        f"would be {_counts(result)}; {result.planned_commits} commit(s), "
        f"{_size(upload)} to upload; nothing was sent"
    )


@click.command("publish")
@click.argument("repo_id")
@click.argument("sessions", nargs=-1)
@click.option("--cwd", type=CWD_TYPE, callback=project_folder, help="This project's sessions.")
@click.option(
    "--all",
    "all_projects",
    is_flag=True,
    help="Every session of every project (with --cwd: of that project, as --cwd alone).",
)
@click.option(
    "--sessions-dir",
    type=SESSIONS_DIR_TYPE,
    metavar="DIRECTORY",
    callback=existing_sessions_dir,
    help=SESSIONS_DIR_HELP,
)
@click.option(
    "--since",
    callback=lambda _ctx, _param, value: _parse_since(value),
    metavar="DATE",
    help="Only sessions whose last user or assistant message (what `list` shows) is on or "
    "after DATE (YYYY-MM-DD local midnight, ISO time, 7d, 12h, 2w).",
)
@click.option(
    "--skip",
    "skip",
    multiple=True,
    metavar="SESSION|FILE",
    help=skip_help("With --prune, a skipped session the dataset holds is deleted from it."),
)
@click.option(
    "--deny",
    "deny",
    multiple=True,
    metavar="REGEX|FILE",
    help="Leave out every session this Python regex matches (case-sensitive unless it says "
    "(?i)), matched after redaction against each string of the session as published; a "
    "value naming a file is a list of them, one per line ('#' lines are comments). "
    "Repeatable. A denied session is named on stderr with the pattern and the entry, "
    "never the text matched; one the dataset holds stays unless --prune, which deletes it.",
)
@click.option(
    "--public",
    is_flag=True,
    help="Create the dataset public (default: private); needed to publish to a public one. "
    "At a terminal, what would go out to a public dataset is shown and asked about first "
    "(default no); without one (a script, a pipe) it is not asked.",
)
@click.option(
    "--yes",
    "-y",
    "yes",
    is_flag=True,
    help="Do not ask before publishing to a public dataset.",
)
@click.option(
    "--html",
    is_flag=True,
    help="Also upload a static site of every session in the dataset under html/; later runs "
    "keep it up to date.",
)
@click.option(
    "--prune",
    is_flag=True,
    help="Delete remote sessions not in this selection: with --all every other one, else "
    "those of its projects this machine published (its publish key's).",
)
@click.option(
    "--allow-weaker-policy",
    is_flag=True,
    help="Re-publish sessions the dataset holds with more removed (--no-tool-output, "
    "--no-thinking, ..., or more --secret/--env-file/environment values replaced) without "
    "it; refused otherwise.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Show what would change; send nothing. The plan reads the dataset: when the Hub "
    "cannot be reached it is a guess (a new dataset, every session added), said on stderr; "
    "an --endpoint given here that cannot be reached is exit 3, before any session is "
    "redacted.",
)
@click.option(
    "-j", "--jobs", type=click.IntRange(min=0), help="Worker processes (default or 0: CPUs)."
)
@click.option(
    "--endpoint",
    envvar="HF_ENDPOINT",
    default=DEFAULT_ENDPOINT,
    show_default=True,
    metavar="URL",
    help="Hub URL (also HF_ENDPOINT).",
)
@click.option(
    "--token",
    metavar="TOKEN",
    help=f"Hub token (default: HF_TOKEN, then `hf auth login`'s token){TOKEN_HELP}.",
)
@policy_options(redact_default=True)
def publish_command(
    repo_id: str,
    sessions: tuple[str, ...],
    cwd: str | None,
    all_projects: bool,
    sessions_dir: str | None,
    since: Since | None,
    skip: tuple[str, ...],
    deny: tuple[str, ...],
    public: bool,
    yes: bool,
    html: bool,
    prune: bool,
    allow_weaker_policy: bool,
    dry_run: bool,
    jobs: int | None,
    endpoint: str,
    token: str | None,
    **policy_values: Any,
) -> None:
    """Publish sessions (default: this folder's) to the dataset REPO_ID, redacted, incrementally.

    SESSIONS are session files, ids or id prefixes (not `-` or a pipe). Give SESSIONS, --cwd
    DIR (DIR's sessions; --all --cwd DIR says the same) or --all, or none of them for this
    folder's sessions. Layout: sessions/<YYYY-MM>/<file>.jsonl, index.jsonl,
    manifest.json, README.md (and html/). Unchanged sessions are skipped; a re-run after an
    interruption finishes the job.
    """
    since_at = since.moment if since else None
    _check_arguments(repo_id, endpoint, prune, sessions, since_at)
    patterns = _deny_patterns(deny)  # a bad one is exit 1 before any session is read
    token = token_argument(token, "Hugging Face", stdin_taken=stdin_reader(None, policy_values))
    files, older = select_files(sessions, cwd, all_projects, sessions_dir, since_at)
    scope = project_scope(cwd, all_projects)
    _refuse_empty_selection(files, since, older, scope, sessions_dir, sessions, all_projects)
    files = without_skipped(files, skip, sessions_dir, "nothing sent")
    policy = _publish_policy(policy_values)
    report_path = policy_values.get("report")
    # checked before publishing, not after
    refuse_collisions({"--report": report_path}, read_files(map(str, files), policy_values))
    request = PublishRequest(
        repo_id=repo_id,
        files=files,
        policy=policy,
        endpoint=endpoint,
        token=token,
        public=public,
        dry_run=dry_run,
        prune=prune,
        prune_all=scope is None,  # --all --cwd X: X's sessions only
        partial_selection=bool(sessions) or since_at is not None,
        allow_weaker_policy=allow_weaker_policy,
        deny=patterns,
        html=html,
        jobs=jobs or _cpu_count(),
        want_records=bool(report_path),
        endpoint_typed=_endpoint_typed(),
    )
    result, report_failed = _publish_and_report(request, report_path, ask=not yes)
    if dry_run:
        print_dry_run(result, repo_id)
        if not result.reached:
            _say_plan_guessed(endpoint, result)
    else:
        _print_published(result, repo_id, len(files))
    if sessions:  # sessions named one by one: each was wanted
        _refuse_unpublished(result, len(files), dry_run, report_failed)
    if report_failed is not None:  # said after the run's own outcome, which stands
        raise report_failed


def _deny_patterns(values: tuple[str, ...]) -> tuple[DenyPattern, ...]:
    """The --deny patterns, read and compiled; a bad one is a usage error (exit 1)."""
    try:
        return tuple(deny_patterns(values))
    except DenyUsageError as error:
        raise CliError(terminal_text(f"{error}; nothing sent"), 1) from None


def _endpoint_typed() -> bool:
    """Whether --endpoint was typed on the command line (not HF_ENDPOINT, not the default):
    one that cannot be reached is most likely a typo or a dead proxy, so a dry run stops
    (exit 3) before redacting every session for a plan that would only be a guess."""
    source = click.get_current_context().get_parameter_source("endpoint")
    return source == click.core.ParameterSource.COMMANDLINE


def _say_plan_guessed(endpoint: str, result: PublishResult) -> None:
    """A dry run that could not read the dataset planned a first publish: said as the last
    line on stderr, so a successful-looking plan is not taken for the dataset's (an
    --endpoint typed on the command line that cannot be reached stopped the run before any
    plan: see ``PublishRequest.endpoint_typed``). HF_HUB_OFFLINE is a choice."""
    offline = any(w.startswith("HF_HUB_OFFLINE") for w in result.warnings)
    where = host_for_messages(endpoint)  # never the token a URL's user part may hold
    guess = "the plan above is a guess: it assumes a new dataset with every session added"
    why = "HF_HUB_OFFLINE is set" if offline else f"{where} could not be reached"
    click.echo(f"pi-session: warning: the dataset was not read ({why}), so {guess}", err=True)


def _check_arguments(
    repo_id: str, endpoint: str, prune: bool, sessions: tuple[str, ...], since: datetime | None
) -> None:
    """Usage errors (exit 1), found before a token is read (perhaps from stdin) or any
    session is looked for."""
    if not _REPO_ID.fullmatch(repo_id):
        raise CliError(f"REPO_ID must look like namespace/name, not {repo_id!r}", 1)
    _check_hub_repo_id(repo_id)
    source = click.get_current_context().get_parameter_source("endpoint")
    where = "HF_ENDPOINT" if source == click.core.ParameterSource.ENVIRONMENT else "--endpoint"
    check_http_url(endpoint, where)  # (an HF_ENDPOINT error named --endpoint, never typed)
    refuse_url_credentials(endpoint, where, "the Hub", "--token, HF_TOKEN")
    if prune and (sessions or since):
        raise CliError("--prune needs a whole selection: not with SESSION arguments or --since", 1)


def _refuse_empty_selection(
    files: list[Path],
    since: Since | None,
    older: int,
    scope: str | None,
    sessions_dir: str | None,
    sessions: tuple[str, ...],
    all_projects: bool = False,
) -> None:
    """An empty selection (most likely the wrong folder) is said as every command says it,
    with where it looked and what else there is to pick (exit 2), before the dataset is
    read or created."""
    if files:
        return
    # as list, search and stats say it: "… (1h); 3 sessions … older"
    when = since_said(since.given, since.moment) if since is not None else None
    if sessions:  # only --since leaves out a session named
        which = "the session named is not" if len(set(sessions)) == 1 else "no session named is"
        raise CliError(f"{which} active since {when}; nothing sent", 2)
    then = "drop --cwd to publish {them}" if all_projects else "--all publishes {them}"
    said = no_sessions_said(sessions_dir, scope, then, when, older=older)
    raise CliError(f"{said}; nothing sent", 2)


def _publish_policy(policy_values: dict[str, Any]) -> RedactionPolicy:
    """The options' policy with what makes a dataset safe to publish forced on: redacted,
    hidden entries dropped, home paths hidden, environment secrets replaced."""
    forced = {"redact": True, "drop_hidden": True, "keep_paths": False, "no_env_secrets": False}
    return policy_from_options(**{**policy_values, **forced})


def _publish_and_report(
    request: PublishRequest, report_path: str | None, *, ask: bool = False
) -> tuple[PublishResult, CliError | None]:
    """The run, with its progress on stderr; its warnings and redaction summary are said
    once the sessions are redacted, before anything is uploaded (as ``share`` does), then
    the rest; when a commit fails, what was redacted and uploaded before it is still said.
    With ``ask``, a run that would send to a public dataset asks first at a terminal.
    A ``--report`` that cannot be written is returned, for the caller to say after the
    run's outcome; when the run failed, its error is said first and keeps its exit code."""
    said: dict[str, int] = {}

    def before_upload(result: PublishResult) -> None:
        _report_found(result, said)
        if ask:
            _confirm_public(result, request.repo_id)

    request.before_upload = before_upload
    try:
        result = publish(request, notify=lambda m: click.echo(f"pi-session: {m}", err=True))
    except PublishError as error:
        if isinstance(error.partial, PublishResult):  # what was redacted (and uploaded,
            if error.landed is not None:  # when a commit failed) is still said
                planned = error.partial.planned_commits
                # a commit answered with an error may have landed all the same: "confirmed"
                error.message += f" ({error.landed} of {planned} commits confirmed)"
            failed = _report(error.partial, report_path, said)
            if failed is not None:  # the Hub's error (exit 3) first, not lost behind it
                CliError(str(error), error.exit_code).show()
                raise CliError(failed.message, error.exit_code) from None
        raise
    return result, _report(result, report_path, said)


def _confirm_public(result: PublishResult, repo_id: str) -> None:
    """Before the first commit to a public dataset (one this run creates with --public, or
    one that is public already), at a terminal: what goes out, then a question whose
    default is no. Scripts (stdin not a terminal) and --yes are not asked."""
    if result.private or not result.planned_commits:
        return
    if sys.stdin is None or not sys.stdin.isatty():
        return
    sent = result.count("add") + result.count("update")
    state = "exists and is public" if result.exists else "will be created public"
    pages = sum(not op.is_session and op.uploads for op in result.ops)
    site = f", {plural(pages, 'html/ page')}" if pages else ""
    click.echo(
        f"pi-session: {repo_id} {state}: anyone can read what goes up, and its history "
        f"keeps it. Going up: {plural(sent, 'session')} ({result.count('add')} new, "
        f"{result.count('update')} updated){site}, {result.count('remove')} removed; "
        f"{result.sessions:,} in the dataset after. {redaction_line(result)}.",
        err=True,
    )
    try:
        agreed = click.confirm(f"Publish to the public dataset {repo_id}?", default=False, err=True)
    except click.Abort as stop:  # Ctrl-D: no answer, so no; Ctrl-C: an interrupt (130)
        if not isinstance(stop.__context__, EOFError):
            raise KeyboardInterrupt from None
        agreed = False
    if not agreed:
        said = f"not published: nothing was sent to {repo_id} (--yes skips the question)"
        raise CliError(said, 1)


def _print_published(result: PublishResult, repo_id: str, selected: int) -> None:
    """One summary line and the dataset's URL, on stdout for a script to read."""
    done = f"{len(result.commits)} commit(s)" if result.commits else "nothing changed, no commit"
    held = f"{result.sessions:,} in the dataset"
    click.echo(f"{repo_id}: {selected:,} selected, {held}; {_counts(result)}; {done}")
    click.echo(result.url)
    if result.private and not result.exists and result.commits:  # once: when it is made
        click.echo(
            "pi-session: note: the dataset is private: the Hub's Dataset Viewer shows a "
            "private dataset only on a PRO, Team or Enterprise plan (its files, the card "
            "and load_dataset with a token work on any)",
            err=True,
        )


def _refuse_unpublished(
    result: PublishResult, selected: int, dry_run: bool, report_failed: CliError | None = None
) -> None:
    """A session named on the command line that could not be published fails the run
    (exit 2), after the rest was published and reported (and after ``report_failed``, the
    ``--report`` that could not be written, is said)."""
    if result.failed:
        failed = len(result.failed)
        which = "the session" if selected == 1 else f"{failed} of the {selected} sessions"
        which += " you named"
        verb = "would not be published" if dry_run else "could not be published"
        if report_failed is not None:
            report_failed.show()
        raise CliError(f"{which} {verb}", 2)


def _report_found(result: PublishResult, said: dict[str, int]) -> None:
    """Warnings, skipped files and the redaction line, each said once (``said``: how many
    of each were said already, before the upload)."""
    if result.ops and not said.get("clamped"):  # the sessions are redacted and planned
        result.warnings += _clamped_warnings(result)
        said["clamped"] = 1
    for warning in result.warnings[said.get("warnings", 0) :]:  # controls shown as signs
        click.echo(terminal_text(f"pi-session: warning: {warning}"), err=True)
    for path, error in result.failed[said.get("failed", 0) :]:
        click.echo(terminal_text(f"pi-session: warning: skipped {path.name}: {error}"), err=True)
    for denied in result.denied[said.get("denied", 0) :]:  # never the text that matched
        click.echo(terminal_text(f"pi-session: {_denied_line(denied)}"), err=True)
    if not said.get("redaction"):
        click.echo(f"pi-session: {redaction_line(result)}", err=True)
    said.update(
        warnings=len(result.warnings),
        failed=len(result.failed),
        denied=len(result.denied),
        redaction=1,
    )


def _clamped_warnings(result: PublishResult) -> list[str]:
    """The sessions whose index counts were brought into 0..int64 (a count a file recorded
    as -5 or 1e30): said, as the index then differs from what the file says."""
    warnings = []
    for op in result.ops:
        names = (op.row or {}).get(CLAMPED)
        if names:
            warnings.append(
                f"{op.path}: {', '.join(names)} below 0 or above 2^63-1 in the file: written "
                "in index.jsonl as the nearest of those bounds (a column of whole numbers)"
            )
    return warnings


def _denied_line(denied: Denied) -> str:
    """``denied: FILE: --deny pattern 'acme' matches (first in entry ID); not published``,
    and what becomes of the dataset's copy of it."""
    line = (
        f"denied: {denied.path.name}: --deny {denied.pattern.label} matches "
        f"(first in {denied.where}); not published"
    )
    if not denied.published:
        return line
    if denied.removed:
        return f"{line}; --prune deletes its published copy {denied.repo_path}"
    return f"{line}; its published copy {denied.repo_path} stays (--prune deletes it)"


def _report(
    result: PublishResult, report_path: str | None, said: dict[str, int]
) -> CliError | None:
    """What :func:`_report_found` did not say yet, the note on sessions left in the dataset
    and the ``--report`` file; the error to say when that file cannot be written (a full
    disk), else None."""
    _report_found(result, said)
    if result.without_file:  # deleted here (or, with --all, published elsewhere): kept
        many = result.without_file != 1
        click.echo(
            f"pi-session: note: {plural(result.without_file, 'published session')} "
            f"{'have' if many else 'has'} no file in this selection; "
            f"{'they stay' if many else 'it stays'} in the dataset (--prune removes "
            f"{'them' if many else 'it'})",
            err=True,
        )
    if not report_path:
        return None
    lines = [json.dumps(r, ensure_ascii=True) for r in result.records]
    try:
        atomic_write_text(report_path, "".join(line + "\n" for line in lines))
    except OSError as error:  # the sessions went up (or the Hub refused them) all the same
        reason = error.strerror or str(error)
        return CliError(f"could not write the report {report_path}: {reason}", 2)
    click.echo(f"pi-session: report written to {report_path}", err=True)
    return None


# Publishing always redacts, drops hidden entries, hides the home folder and user name and
# removes the environment's secrets: the switches that would weaken that are not offered.
_WEAKENING = ("redact", "drop_hidden", "keep_paths", "no_env_secrets")
publish_command.params = [p for p in publish_command.params if p.name not in _WEAKENING]
