"""`pi-session export`: one session -> one self-contained HTML page."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from exporter.agent_context import (
    AgentContext,
    agent_context_option,
    default_warn,
    read_agent_context,
    redact_agent_context,
)
from exporter.assets_swap import ImagesNotWritten, images_folder, stage_images
from exporter.browser_open import open_in_browser
from exporter.cli import (
    CWD_TYPE,
    CliError,
    all_written,
    listed_session_files,
    open_session,
    project_folder,
    report_diagnostics,
    scope_conflict,
    session_argument,
    write_stdout_bytes,
)
from exporter.discover import no_sessions_said, sessions_root
from exporter.early_scan import EarlyScan, start_early_scan
from exporter.formatting import kept_page_bytes, page_bytes_kept, plural, terminal_text
from exporter.fsutil import (
    HeldSignals,
    atomic_write_bytes,
    atomic_write_text,
    expand_user,
    file_in_the_way,
    is_special_file,
    own_stream,
)
from exporter.jsonl_out import download_bytes
from exporter.markdown_images import IMAGE_MODES, ImageSink
from exporter.policy import RedactionPolicy
from exporter.prepare import policy_changes_nothing, policy_transform, prepare_session
from exporter.redact_cli import (
    check_exclusions,
    echo_path,
    exclude_option,
    finish_report,
    not_empty,
    policy_from_options,
    policy_options,
    public_stem,
    read_files,
    refuse_a_misnamed_output,
    refuse_collisions,
    since_moment,
    since_said,
)
from exporter.render import RenderOptions, render_session
from exporter.secret_warning import secrets_warning
from exporter.session import Session
from exporter.session_skip import skip_help, without_skipped

F = TypeVar("F", bound=Callable[..., Any])

#: Names whose suffix says another format: `-o notes.txt` wrote HTML into a .txt file, and a
#: browser reads `.xhtml` as XML, which an HTML page is not.
_NOT_A_PAGE = frozenset(
    {".txt", ".json", ".jsonl", ".gz", ".zip", ".pdf", ".png", ".jpg", ".jpeg", ".csv"}
    | {".yaml", ".yml", ".xhtml", ".xml"}
)
#: ... and for Markdown, which is text: a `.txt` name holds it well.
_NOT_MARKDOWN = _NOT_A_PAGE - {".txt"}  # (.html: see output_format)
#: Suffixes that ask for Markdown when --format is not given.
_MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})


def default_page_name(
    session_path: str | None,
    session_id: str | None = None,
    suffix: str = ".html",
    policy: RedactionPolicy | None = None,
) -> str:
    """Pi's convention: ``pi-session-<input basename>.html`` in the current folder; for a
    redacted page with the secrets of that name replaced (``public_stem``)."""
    return f"pi-session-{public_stem(session_path, session_id, policy)}{suffix}"


def output_format(chosen: str | None, output: str | None) -> str:
    """``--format``, else what ``-o``'s suffix says (``notes.md`` is Markdown), else html.
    A name whose suffix says the other format is an error, not a file in the wrong one."""
    suffix = Path(output).suffix.lower() if output and output != "-" else ""
    if chosen is None:
        return "md" if suffix in _MARKDOWN_SUFFIXES else "html"
    if chosen == "md" and suffix in (".html", ".htm"):
        raise CliError(f"-o {output}: --format md writes Markdown; name the file .md", 1)
    if chosen == "html" and suffix in _MARKDOWN_SUFFIXES:
        raise CliError(f"-o {output}: --format html writes a page; name the file .html", 1)
    return chosen


def _why_not(kind: str, name: str) -> str | None:
    """Why export's ``kind`` (html, md) does not go into a file of that name (None: it
    may): a suffix that says another format, the other of the two included."""
    suffix = Path(name).suffix
    refused = _NOT_A_PAGE if kind == "html" else _NOT_MARKDOWN
    if suffix.lower() in refused:
        return (
            f"export writes an HTML page (.html) or Markdown (.md), not {suffix} (redact "
            "writes a session's JSONL)"
        )
    other = _MARKDOWN_SUFFIXES if kind == "html" else frozenset({".html", ".htm"})
    if suffix.lower() in other:  # -o's own name chose the format: only a link's file here
        made = "an HTML page" if kind == "html" else "Markdown"
        return f"export writes {made} here, not {suffix}"
    return None


def page_options(func: F) -> F:
    """``--leaf``, ``--theme`` and ``--no-embed``: how a page is made, for export and watch."""
    func = click.option(
        "--no-embed", is_flag=True, help="Do not embed the session for the JSONL download."
    )(func)
    func = click.option(
        "--theme",
        type=click.Choice(["auto", "light", "dark"]),
        default="auto",
        show_default=True,
        help="Initial theme; auto follows the reader's system setting.",
    )(func)
    return click.option(
        "--leaf",
        metavar="ID",
        help="Entry id (or unique prefix) whose branch is the main transcript.",
    )(func)


def _names_a_page(output: str) -> bool:
    """``-o out.html`` with ``--all`` made a folder named ``out.html``: a page's name, not
    a site's (an existing folder of that name is one, made that way before)."""
    if output.endswith(("/", os.sep)):  # "out.html/": a folder, said so
        return False
    path = Path(output)
    return path.suffix.lower() in (".html", ".htm", ".md") and not path.is_dir()


#: What ``export --all -o`` is for: said the same way whatever file it was given.
_SITE_IS_A_FOLDER = (
    "--all writes a site, a folder with an index and a page per session: give a folder (-o site/)"
)


def _refuse_a_file_for_a_site(output: str) -> None:
    """``--all -o`` naming a file, one there (``exist.html``, ``afile``) or a page's name
    (``new.html``): one message each, not two wordings for "this is a file"."""
    target = Path(output)
    if target.exists() and not target.is_dir():
        raise CliError(f"-o {output} is a file; {_SITE_IS_A_FOLDER}", 1)
    if _names_a_page(output):
        raise CliError(f"-o {output} names a page; {_SITE_IS_A_FOLDER}", 1)


def _check_site_folder(target: Path) -> None:
    """A site folder not there yet is made in its parent, which must exist and take it: a
    read-only parent was reported as the (missing) site folder that "cannot write"."""
    if target.is_symlink() or target.exists():
        return
    parent = target.parent
    if not parent.is_dir():  # a typo in a site's path built it elsewhere (as `-o FILE`)
        blocking = file_in_the_way(parent)
        if blocking is not None:
            raise CliError(f"-o: {blocking} is a file, not a folder", 1)
        raise CliError(f"-o: the folder {parent} does not exist", 1)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CliError(f"-o {target}: cannot make the folder: cannot write in {parent}", 2)


@click.command("export")
@session_argument
@click.option(
    "-o",
    "--output",
    "output",
    metavar="PATH",
    callback=not_empty,
    help="Output file (default: pi-session-<name>.html; - for stdout).",
)
@page_options
@click.option(
    "--format",
    "chosen_format",
    type=click.Choice(["html", "md"]),
    help="html (default) or md: one Markdown document (active path, then the other "
    "branches; images and hidden entries left out). Default: md when -o ends in .md.",
)
@click.option(
    "--no-timestamps",
    is_flag=True,
    help="With --format md: no date or time anywhere (entries' headings, branches' last "
    "activity, the session's start and end; its duration stays), for Markdown that diffs by "
    "what was said.",
)
@click.option(
    "--images",
    "image_mode",
    type=click.Choice(IMAGE_MODES),
    default="note",
    show_default=True,
    help="With --format md: what an image becomes: a note saying what it was, the image in "
    "the document (inline: a data: URI; VS Code and Obsidian show it, GitHub does not), or "
    "a file beside it in <name>.assets/, linked (files; not with -o -).",
)
@click.option("--open", "open_page", is_flag=True, help="Open the page in a browser afterwards.")
@click.option(
    "--all",
    "all_sessions",
    is_flag=True,
    help="Every session (of all projects, or of --cwd) as a static site in the -o folder.",
)
@click.option(
    "--cwd",
    type=CWD_TYPE,
    callback=project_folder,
    help="With --all: only this project's sessions; pages of other projects' sessions are "
    "removed from the site (without --all: an error that says the command to type).",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=0),
    help="Worker processes (default or 0: one per CPU, up to 8 for one page): pages of --all, "
    "or parts of one big transcript. -j 1 renders in this process.",
)
@click.option(
    "--since",
    metavar="DATE",
    help="With --all: only sessions whose last user or assistant message (what `list` shows) "
    "is on or after DATE (YYYY-MM-DD local midnight, ISO time, 7d, 12h, 2w); pages of older "
    "sessions are removed from the site.",
)
@click.option("--force", is_flag=True, help="With --all: render every session again.")
@click.option(
    "--skip",
    "skip",
    multiple=True,
    metavar="SESSION|FILE",
    help=skip_help("A skipped session's page is removed from the site.", "With --all: "),
)
@policy_options(redact_default=False, report=" Not with --all.")
@exclude_option
@agent_context_option
def export_command(
    session: str | None,
    demo: bool,
    sessions_dir: str | None,
    output: str | None,
    leaf: str | None,
    theme: str,
    chosen_format: str | None,
    no_embed: bool,
    no_timestamps: bool,
    image_mode: str,
    open_page: bool,
    all_sessions: bool,
    cwd: str | None,
    jobs: int | None,
    since: str | None,
    force: bool,
    skip: tuple[str, ...],
    agent_context: str | None,
    **policy_values: Any,
) -> None:
    """Render SESSION (default: the latest session of this folder) to one HTML file (or,
    with --format md, one Markdown document).

    With --all, every session becomes a page of a static site in the -o folder, with an
    index; rebuilding only renders what changed (SESSION, --leaf, --report and --exclude
    are for one page: not with --all).
    """
    output = home_expanded(output)  # `--output=~/x` and `-o '~/x'`: no shell expanded them
    policy_values["report"] = home_expanded(policy_values.get("report"))
    policy = policy_from_options(**policy_values)
    if all_sessions and output:
        _refuse_a_file_for_a_site(output)
    kind = output_format(chosen_format, output)
    html_only = {"--all": all_sessions, "--open": open_page, "--no-embed": no_embed,
                 "--theme": theme != "auto", "-j": jobs}  # fmt: skip
    given = [option for option, value in html_only.items() if value]
    if kind == "md" and given:
        raise CliError(f"{' and '.join(given)}: for HTML pages, not --format md", 1)
    if kind != "md" and no_timestamps:  # a page's times are the reader's own, and link
        raise CliError("--no-timestamps: for --format md, not HTML pages", 1)
    if kind != "md" and image_mode != "note":  # a page shows its images, always
        raise CliError(f"--images {image_mode}: for --format md, not HTML pages", 1)
    if image_mode == "files" and output == "-":
        raise CliError("--images files writes files beside the document: not with -o -", 1)
    if (all_sessions or cwd is not None) and (session or demo):
        raise scope_conflict("SESSION" if session else "--demo")
    if all_sessions:
        if agent_context is not None:
            raise CliError("--agent-context is one session's: not with --all", 1)
        if leaf or policy_values.get("report") or policy.exclude:
            raise CliError(
                "--all exports every session: --leaf, --report and --exclude are for one page",
                1,
            )
        options = RenderOptions(theme=theme, embed_jsonl=not no_embed)
        selection = SiteSelection(cwd, since, skip)
        export_site(sessions_dir, output, selection, jobs, force, options, policy, open_page)
        return
    if cwd is not None:  # one page is one session: a project's sessions make a site
        raise CliError(
            "--cwd picks a project's sessions, and export makes one page without --all; for "
            f"a site of them type: {_site_command(cwd, output)}",
            1,
        )
    if since is not None or force or skip:
        raise CliError("--since, --force and --skip only go with --all", 1)
    if output == "-" and open_page:
        raise CliError("--open needs a file to open; -o - writes the page to stdout", 1)
    if output and open_page and own_stream(output) is not None:  # `-o /dev/stdout`, as `-o -`
        raise CliError(f"--open needs a file to open; -o {output} writes the page to a stream", 1)
    early = None  # the file read ahead: a page of it as it is (a copy is made as usual)
    sink: ImageSink | None = None  # --images inline or files: the document's images
    images_at: Path | None = None  # --images files: the folder they go to
    if kind == "html" and output != "-" and not demo and policy_changes_nothing(policy):
        # (with --agent-context the warning scans the cards too: made after the load)
        how = CREDENTIALS_HOW if agent_context is None else None
        early = start_early_scan(session, not no_embed, how)
    try:
        loaded = open_session(session, demo, sessions_dir, leaf, warnings=False)
        check_exclusions(loaded, policy, leaf=leaf)
        suffix = ".md" if kind == "md" else ".html"
        target = (
            None
            if output == "-"
            else Path(output or default_page_name(loaded.path, loaded.id, suffix, policy))
        )
        written = "the Markdown document" if kind == "md" else "the page"
        page = "-o" if output else f"{written} (default name; -o names another)"
        refuse_collisions(
            {page: output if output else target, "--report": policy_values.get("report")},
            [*read_files([loaded.path], policy_values), ("--agent-context", agent_context)],
        )
        # what is written, a link's file too (`-o page.html` linked to notes.txt overwrote it)
        refuse_a_misnamed_output(
            "-o" if output else "the default name",
            output or target,
            functools.partial(_why_not, kind),
        )
        if image_mode == "files" and target is not None and is_special_file(target):
            raise CliError(
                f"--images files writes files beside the document: not with -o {output} "
                f"({'a stream' if own_stream(target) is not None else 'a device or pipe'})",
                1,
            )
        context = None if agent_context is None else read_agent_context(agent_context, default_warn)
        prepared, report = prepare_session(loaded, policy)
        context = redact_agent_context(context, policy, report, prepared, loaded.header.cwd)
        report_diagnostics(prepared)  # from the redacted copy, when redacted: they quote the file
        if kind == "md":
            from exporter.markdown_doc import session_markdown

            if image_mode == "files" and target is not None:
                # beside the file written (a link's target), named after it: its links say so
                images_at = images_folder(target)
            if image_mode != "note":
                sink = ImageSink(image_mode, images_at.name if images_at is not None else "")
            document = session_markdown(
                prepared, agent_context=context, timestamps=not no_timestamps, images=sink
            )
            data = None
        else:
            options = RenderOptions(
                theme=theme,
                embed_jsonl=not no_embed,
                jobs=jobs or 0,
                agent_context=context,
                embedded_ahead=early.embedded_for if early is not None else None,
            )
            with page_bytes_kept():  # the page's UTF-8, made by its last check, is written
                document = render_session(prepared, options)
                data = kept_page_bytes(document)
        # --report: a Ctrl-C (or SIGTERM) from the page's rename to the report's is acted on
        # once both are written; between the two it left the old report beside the new page
        held = HeldSignals()
        try:
            hold = held if report is not None and policy_values.get("report") else None
            if output == "-":
                write_stdout_bytes(data if data is not None else document.encode("utf-8"))
                sys.stdout.flush()
                if hold is not None:
                    hold.hold()
            elif images_at is not None and sink is not None:
                assert target is not None
                _write_with_images(target, document, images_at, sink.files, hold)
                echo_path(target)
            else:
                assert target is not None
                if data is not None:
                    atomic_write_bytes(target, data, hold_from_replace=hold)
                else:
                    atomic_write_text(target, document, hold_from_replace=hold)
                echo_path(target)
            if report is not None:  # after the page: no report of a page a full disk stopped
                finish_report(report, policy_values.get("report"), _not_redacted(kind))
        finally:
            held.release()
        if not policy.redact:
            _warn_of_credentials(prepared, context, early)
        if output == "-":
            all_written()
            return
        if open_page:
            open_in_browser(target)
        else:
            all_written()
    finally:  # an error before the page: the child must not run on alone
        if early is not None:
            early.close()


def home_expanded(path: str | None) -> str | None:
    """An output's ``~/x`` (or ``~alice/x``) as the home folder's ``x``, as a session's
    path is read: the shell leaves ``--output=~/x`` and a quoted ``'~/x'`` as they are, and
    "the folder ~ does not exist" followed. Anything else as given (a closing ``/`` says a
    folder)."""
    if path is None or not path.startswith("~"):
        return path
    return str(expand_user(path))


def _write_with_images(
    target: Path,
    document: str,
    folder: Path,
    files: dict[str, bytes],
    held: HeldSignals | None = None,
) -> None:
    """The Markdown document and its images, both or neither: the images are staged, the
    document written, then the images moved in. A failed document write (a full disk)
    left the old document linking images that were overwritten or removed. A Ctrl-C (or
    SIGTERM) from the document's rename to the images' move is acted on once both are
    done: between the two it left the new document linking the old export's images.
    ``held``: the caller's, which it releases once its own next step is done too."""
    own = held is None
    held = HeldSignals() if held is None else held
    try:
        staged = stage_images(folder, files)
    except ImagesNotWritten as error:  # a file or a dead link where the folder goes
        raise CliError(f"--images files: cannot write {folder}: {error}", 2) from None
    except OSError as error:  # a folder not writable, a name too long, a full disk
        why = error.strerror or str(error)
        raise CliError(f"--images files: cannot write {folder}: {why}", 2) from None
    try:  # (held by the write from just before its rename)
        try:
            atomic_write_text(target, document, hold_from_replace=held)
        except BaseException:
            staged.discard()
            raise
        try:
            staged.commit()
        except OSError as error:  # (a move within one folder: hardly ever)
            why = error.strerror or str(error)
            raise CliError(
                f"--images files: {target} is written, but its images could not be moved "
                f"into {folder}: {why}",
                2,
            ) from None
    finally:
        if own:
            held.release()  # a Ctrl-C that came meanwhile is raised here: both are written


#: How to make a page without the credentials the warning counts.
CREDENTIALS_HOW = "--redact replaces them, as share does by default"


def _warn_of_credentials(
    prepared: Session, context: AgentContext | None, early: EarlyScan | None
) -> None:
    """Say when a page made without redaction holds credentials of a well-known format
    (what --redact would replace): it is one attachment away from leaking them. ``early``:
    the file scanned ahead of the load, when the page's session is that file."""
    known = early.warning_for(prepared) if early is not None and context is None else None
    if known is not None:
        line = known[0]
        if line:
            click.echo(terminal_text(f"pi-session: warning: {line}"), err=True)
        return
    text = download_bytes(prepared)
    if context is not None:  # every string the cards show: names, types, descriptions
        told: list[str] = []
        context.map_text(lambda value, _where: told.append(value) or value)
        text += b"\n" + "\n".join(told).encode("utf-8", "replace")
    line = secrets_warning(text, CREDENTIALS_HOW)
    if line:
        click.echo(terminal_text(f"pi-session: warning: {line}"), err=True)


def _not_redacted(kind: str = "html") -> str:
    """Why a page (or Markdown document, ``kind`` "md") that left entries out was not
    scanned for secrets, for its summary line ("(no secret scan)" read like an error): what
    --exclude names is not in it at all, and export redacts only with --redact (every other
    cut implies it)."""
    made = "document" if kind == "md" else "page"
    return f"left out of the {made} entirely; the {made} is not redacted: --redact scans it"


def _site_command(cwd: str, output: str | None) -> str:
    """The `export --all --cwd` command to paste, with -o's folder when one was given."""
    import shlex

    folder = output if output and output != "-" and not _names_a_page(output) else None
    site = shlex.quote(folder) if folder else "DIR"
    return f"pi-session export --all --cwd {shlex.quote(cwd)} -o {site}"


@dataclass(frozen=True)
class SiteSelection:
    """Which sessions ``export --all`` makes pages of: a project (``--cwd``), those active
    since a date, less the ``--skip`` ones. Every other page leaves the site."""

    cwd: str | None = None
    since: str | None = None
    skip: tuple[str, ...] = ()


def export_site(
    sessions_dir: str | None,
    output: str | None,
    selection: SiteSelection,
    jobs: int | None,
    force: bool,
    options: RenderOptions,
    policy: RedactionPolicy,
    open_page: bool,
) -> None:
    """`export --all`: build or update the site; per-session failures are warnings."""
    from exporter.discover import files_active_since
    from exporter.site import (
        SiteBusy,
        SiteError,
        SiteIncomplete,
        SitePagesUnwritten,
        build_site,
        sessions_were_deleted,
    )

    if not output or output == "-":
        raise CliError("--all needs -o SITE_DIR (a folder)", 1)
    since, since_at = selection.since, since_moment(selection.since)
    target = Path(output)
    _refuse_a_file_for_a_site(output)
    _check_site_folder(target)
    root = os.path.realpath(sessions_root(sessions_dir))
    inside = os.path.realpath(target)
    if inside == root or inside.startswith(root + os.sep):
        # index.html, sessions/, projects/ and a lock among Pi's own files
        raise CliError(f"-o {target} is inside Pi's sessions folder {root}; choose another", 1)
    scope = os.path.abspath(selection.cwd) if selection.cwd else None
    files = listed_session_files(sessions_dir, scope)
    # a wrong --sessions-dir (or --cwd) must not empty an existing site; a site of every
    # project whose sessions were all deleted from this folder is emptied, as it goes on
    if not files and (
        scope is not None or not sessions_were_deleted(target, sessions_root(sessions_dir))
    ):
        raise CliError(no_sessions_said(sessions_dir, scope, "drop --cwd to include {them}"), 2)
    if since_at is not None:
        every = len(files)
        files = files_active_since(files, since_at)
        if not files:
            when = since_said(since or "", since_at)
            said = no_sessions_said(sessions_dir, scope, since=when, older=every)
            raise CliError(f"{said}; the site was left as it is", 2)
    files = without_skipped(files, selection.skip, sessions_dir, "the site was left as it is")
    plain = policy_changes_nothing(policy)
    options_key, source_mark, public_name = policy.key(), None, None
    if policy.redact:  # the folder gets published: no hash that could confirm a guess
        from exporter.publish.publish_key import load_publish_key
        from exporter.redact import name_scrubber

        public_name = name_scrubber(policy.resolved())  # no token in a page's name either

        try:
            marks = load_publish_key()
        except ValueError as error:  # PI_SESSION_PUBLISH_KEY too short
            raise CliError(str(error), 1) from None
        if marks.note:  # a new key, a throw-away one, or one others can read
            click.echo(terminal_text(f"pi-session: warning: {marks.note}"), err=True)
        options_key, source_mark = marks.mark(options_key), marks.mark
    unwritten: SitePagesUnwritten | None = None
    try:
        report = build_site(
            files,
            target,
            jobs=jobs,
            force=force,
            render_options=options,
            options_key=options_key,  # with the render options: a change rebuilds every page
            # resolved: a forkserver worker's environment is the one the server started with
            transform=None if plain else functools.partial(policy_transform, policy.resolved()),
            source_mark=source_mark,
            public_name=public_name,
            count_credentials=not policy.redact,  # a cut without --redact holds them too
        )
    except SitePagesUnwritten as error:  # the index is written: said as a build's, then exit 2
        report, unwritten = error.report, error
    except SiteBusy as error:  # a folder that cannot be written now, as a full disk's
        raise CliError(str(error), 2) from None
    except SiteError as error:
        raise CliError(str(error), 1) from None
    except SiteIncomplete as error:
        _warn_failed(error.report.failed)
        raise CliError(error.strerror or str(error), 2) from None
    _warn_failed(report.failed)
    echo_path(report.index_path)
    click.echo(f"pi-session: {report.summary()}", err=True)
    if not policy.redact and report.credential_pages:
        _warn_of_site_credentials(report.credential_pages, report.credentials)
    if report.unindexed:
        _warn_unindexed(report.unindexed)
    if unwritten is not None:  # a full disk: a cron job must see it
        raise CliError(unwritten.strerror or str(unwritten), 2)
    if report.failed and not report.rendered and not report.unchanged:  # a cron job must see it
        raise CliError("no session could be made into a page (the warnings above say why)", 2)
    if open_page:
        open_in_browser(report.index_path)


def _warn_of_site_credentials(pages: int, found: dict[str, int]) -> None:
    """A site made without redaction whose pages hold credentials of a well-known format,
    said once per build (as `export` says it of one page), never their values."""
    total = sum(found.values())
    ranked = sorted(found, key=lambda kind: (-found[kind], kind))
    kinds = ", ".join(ranked[:4]) + (", …" if len(ranked) > 4 else "")
    click.echo(
        terminal_text(
            f"pi-session: warning: {plural(pages, 'page')} of the site "
            f"{'holds' if pages == 1 else 'hold'} {total:,} "
            f"{'credential' if total == 1 else 'credentials'} of a known format in clear "
            f"({kinds}); --redact replaces them"
        ),
        err=True,
    )


def _warn_unindexed(unindexed: list[tuple[Path, str]]) -> None:
    """Pages made whose text the index's search cannot find, said once with the first
    reason (one cause, e.g. a file where the search's folder should be, fails them all)."""
    from exporter.site_manifest import NOT_CURED_BY_RUNNING_AGAIN  # (a site build only)

    _path, reason = unindexed[0]
    count = plural(len(unindexed), "session")
    again = (
        ""  # (the reason says what to do: the next build would fail alike)
        if reason.endswith(NOT_CURED_BY_RUNNING_AGAIN)
        else f"; {'it is' if len(unindexed) == 1 else 'they are'} rendered again at the next build"
    )
    click.echo(
        terminal_text(
            f"pi-session: warning: the text search cannot find {count} ({reason}){again}"
        ),
        err=True,
    )


def _warn_failed(failed: list[tuple[Path, str]]) -> None:
    """Each session that could not be made into a page, on stderr."""
    for path, error in failed:
        click.echo(terminal_text(f"pi-session: warning: {path}: {error}"), err=True)
