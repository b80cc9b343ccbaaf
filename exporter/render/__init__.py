"""Session -> one self-contained HTML page (server-rendered; the script only enhances).

Entry points: :func:`render_session`. Where templates and static files come from, and the
CSS and scripts a page inlines, are :mod:`exporter.render.assets`; its Content-Security-Policy
is :mod:`exporter.render.csp`; the Jinja environment and its filters are
:mod:`exporter.render.environment`.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import gc
import gzip
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from markupsafe import Markup

from exporter import __version__
from exporter.agent_context import AgentContext
from exporter.entries import MessageEntry
from exporter.formatting import (
    HOME_FOLDER,
    decimal_pads,
    fmt_cost,
    fmt_duration,
    fmt_int,
    one_line,
    plural,
    writable_page,
)
from exporter.header_counts import entries_line, tree_said
from exporter.jsonl_out import download_copy
from exporter.render.agent_context import agent_context_view
from exporter.render.ansi import has_colour
from exporter.render.assets import (
    NOSCRIPT_CSS,
    agent_context_css,
    ansi_css,
    asset_dir,
    head_script,
    live_css_and_script,
    page_css_and_script,
)
from exporter.render.chart import build_chart
from exporter.render.csp import content_security_policy
from exporter.render.entry_html import entry_article
from exporter.render.entry_lines import prompt_preview
from exporter.render.entry_views import default_hides
from exporter.render.environment import jinja_environment
from exporter.render.files_touched import files_touched
from exporter.render.model import Item, OutlineRow
from exporter.render.outline_html import outline_markup
from exporter.render.parallel import ForkedMap, available_workers
from exporter.render.pi_session_data import pi_session_data
from exporter.render.tools import json_text
from exporter.render.view import (
    BRANCH_TITLE_CHARS,
    FILTERS,
    MAX_DAMAGED_SHOWN,
    PageBuilder,
    damaged_views,
    filters_showing,
    row_filters,
)
from exporter.session import Diagnostic, Session
from exporter.usage import (
    BranchStats,
    SessionStats,
    compute_stats,
    models_with_answers,
    usage_rows,
)

__all__ = ["RenderOptions", "asset_dir", "render_session"]


@dataclass(slots=True)
class RenderOptions:
    """How to render: theme, whether to embed the JSONL, the source's name, a link back to a
    site index, and how many processes (the leaf to show is set on the Session)."""

    theme: str = "auto"  # auto | light | dark
    embed_jsonl: bool = True
    source_name: str | None = None
    index_href: str | None = None  # a link back to the site index (set by `export --all`)
    # Processes rendering the transcript (0 = one per CPU, at most 8; none forked under 300
    # entries). Changes speed, never the page;
    # 1 by default because callers such as the site build already run one page per CPU.
    jobs: int = 1
    # Set by `pi-session watch`, which serves the page: this version's name. The page asks
    # its server for the current one and reloads itself when they differ.
    live_version: str | None = None
    # The agent's system prompt and tools (``--agent-context``), not in the session file:
    # folded cards after the header. None (the default) leaves the page as it always was.
    agent_context: AgentContext | None = None
    # Pi's own ``session-data`` block (``share --pi-viewer``): viewers of Pi's exports
    # (pi.dev, pi-share-viewer) show only a page that has it. Off: the page as it was.
    pi_session_data: bool = False
    # The embedded copy made ahead of the load (``exporter.early_scan``): the session's, or
    # None when the session is not that file as it was read (then made as usual).
    embedded_ahead: Callable[[Session], str | None] | None = None


def render_session(session: Session, options: RenderOptions | None = None) -> str:
    """Render the whole session (active path + folded branches) to one HTML string."""
    options = options or RenderOptions()
    if options.theme not in ("auto", "light", "dark"):
        raise ValueError(f"unknown theme {options.theme!r} (auto, light or dark)")
    with _session_frozen():
        return _render(session, options)


@contextlib.contextmanager
def _session_frozen() -> Iterator[None]:
    """Move the loaded session out of the cyclic GC's sight while the page is built.

    A big session is millions of long-lived objects, and rendering allocates enough to
    trigger full collections that walk them all: ~15% of a 25 MB export, for nothing (the
    session holds no garbage). Forked children then also keep its memory pages shared.

    Young collections are also made rarer (every ``RENDER_GC_YOUNG`` new objects, not 700):
    the page's own long-lived objects (plan, views, outline rows) were walked again by
    ~600 collections, 3 of them full (~0.1 s of a 25 MB export), while rendering makes
    little cyclic garbage (~10,000 objects for that page).

    The GC's state is the process's, and a library caller's: :class:`_RenderGcState` says
    how it is kept for them (their frozen objects, their threshold, renders in threads).
    """
    _gc_state.enter()
    try:
        yield
    finally:
        _gc_state.leave()


class _RenderGcState:
    """The GC settings renders share, changed by the first render in and put back by the
    last one out (renders in several threads at once: each saving and restoring on its own
    left the raised threshold for good when their ends crossed, and the first one out
    unfroze the session under the others).

    ``gc.unfreeze()`` cannot tell objects apart: it thaws all, and undid a caller's own
    ``gc.freeze()`` (a server freezing its start-up state before it forks workers). So
    nothing is frozen when the caller has frozen objects already: what they froze stays
    frozen, and the session is walked as usual (slower, never wrong). The threshold is put
    back only when it is still the one set here (one the caller set meanwhile is theirs)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.renders = 0  # renders under way in this process
        self.froze = False  # the first one froze (and the last one out thaws)
        self.threshold: tuple[int, ...] = ()  # as the first one found it
        self.raised: tuple[int, ...] = ()  # as it set it

    def enter(self) -> None:
        with self.lock:
            self.renders += 1
            if self.renders > 1:
                return
            self.froze = gc.get_freeze_count() == 0
            if self.froze:
                # the young generations first: what the caller left there (cyclic garbage
                # too) would be thawed into the oldest generation, uncounted towards its
                # collection, and a loop of renders grew by all it made between them
                gc.collect(1)
                gc.freeze()
            self.threshold = gc.get_threshold()
            self.raised = (max(self.threshold[0], RENDER_GC_YOUNG), *self.threshold[1:])
            gc.set_threshold(*self.raised)

    def leave(self) -> None:
        with self.lock:
            self.renders -= 1
            if self.renders:
                return
            if gc.get_threshold() == self.raised:
                gc.set_threshold(*self.threshold)
            if self.froze:
                gc.unfreeze()
                self.froze = False


_gc_state = _RenderGcState()
RENDER_GC_YOUNG = 100_000


def _render(session: Session, options: RenderOptions) -> str:
    """Plan the page, set the entries rendering (in forked children for a big transcript)
    and the embedded copy compressing, then fill the page around them."""
    builder = PageBuilder(session, session_paths(session))
    items = builder.plan()
    entries = [item for item in items if item.kind == "entry"]
    jinja_environment().get_template("page.html.j2")  # compiled once, before any fork

    def render_entry(item: Item) -> str:
        return entry_article(builder.entry_view(item))

    # Children fork first (no fork while another thread runs); then zlib, which releases
    # the GIL, compresses the embedded copy while this process builds the rest of the page.
    rendering = ForkedMap(render_entry, entries, available_workers(options.jobs)).start()
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            made = options.embedded_ahead
            embedded = pool.submit(_embed, session, made) if options.embed_jsonl else None
            html = _render_page(session, options, builder, items, rendering, embedded)
    finally:
        rendering.close()
    return writable_page(html)


def _render_page(
    session: Session,
    options: RenderOptions,
    builder: PageBuilder,
    items: list[Item],
    rendering: ForkedMap[Item],
    embedded: Future[tuple[str, str | None]] | None,
) -> str:
    """Fill the page template, section by section. The order matters for speed only: the
    header's facts are worked out while the forked children render the entries, which are
    collected next to last, and the embedded copy (compressed meanwhile) is waited for last."""
    stats = compute_stats(session)
    outline = builder.outline()
    outline_html = outline_markup(outline)
    context = {
        "anchor": builder.anchor,
        **_header_facts(session, builder, stats),
        **_session_counts(session, stats),
        "labels": _label_bookmarks(session, builder),
        "files": _files_table(session, builder),
        **_problems(session),
        "usage_scopes": _usage_scopes(stats),
        **_branch_table(stats, builder),
        **_context_chart(stats),
        **_transcript(session, builder, items, rendering, outline),
        **_footer(session, options, embedded),
        "agent_context": agent_context_view(options.agent_context),
        "outline_html": outline_html,
    }
    # last: whether the page needs the style of coloured output is known once the
    # entries are rendered
    coloured = any(has_colour(item.html) for item in items if item.html)
    context.update(_page_frame(session, options, coloured))
    return jinja_environment().get_template("page.html.j2").render(context)


# --- the page's sections ------------------------------------------------------------------


def _page_frame(session: Session, options: RenderOptions, coloured: bool) -> dict[str, Any]:
    """What frames the content: versions, theme, the way back to a site's index, and the
    inline CSS and scripts with the policy that allows exactly them. ``coloured``: tool
    output on the page shows terminal colours, whose style (static/ansi.css) follows the
    page's own in its <style> (and so in its hash); other pages stay as they were."""
    css, js = page_css_and_script()
    if coloured:
        css += ansi_css()
    styles, scripts, live = [css, NOSCRIPT_CSS], [head_script(), js], None
    if options.agent_context is not None:  # its cards' style, on the pages that have them
        styles.append(agent_context_css())
    if options.live_version is not None:
        live_css, live_js = live_css_and_script()
        styles.append(live_css)
        scripts.append(live_js)
        live = {
            "version": options.live_version,
            "session": session.id or "",
            "css": Markup(live_css),
            "js": Markup(live_js),
        }
    return {
        "tool_version": __version__,
        "file_version": session.version,
        "redaction_note": session.redaction_note,
        "redaction_heading": session.redaction_heading,
        "theme": options.theme,
        "csp": content_security_policy(styles, scripts, ask_own_server=live is not None),
        "css": Markup(css),
        "noscript_css": Markup(NOSCRIPT_CSS),
        "head_js": Markup(head_script()),
        "js": Markup(js),
        "index_href": options.index_href,
        "live": live,
    }


def _header_facts(session: Session, builder: PageBuilder, stats: SessionStats) -> dict[str, Any]:
    """The header's facts: title, times, folders, the header's other fields, models."""
    return {
        "title": page_title(session),
        "agent": session.agent,
        "started": _iso(stats.started),
        "created": _iso(stats.created_apart),
        "ended": _iso(stats.ended),
        "duration": fmt_duration(stats.duration_seconds),
        "cwd": builder.show(session.header.cwd),
        "session_id": session.id,
        "parent_session": builder.show(session.header.parent_session or ""),
        "header_extra": header_extra(session),
        "models": models_with_answers(session, stats),
    }


def _session_counts(session: Session, stats: SessionStats) -> dict[str, Any]:
    """The header's counts: entries by role, tools, branches, errors, and the cost."""
    return {
        "entry_count": len(session.entries),
        "entries_line": entries_line(stats, len(session.entries)),
        "tools": list(stats.tools.items()),
        "tool_calls": stats.tool_calls,
        # the per-tool counts are the whole tree's: with other branches, what this path
        # called is said apart (every-entry-type said "8" where its path calls none)
        "path_tool_calls": path_tool_calls(session) if len(stats.branches) > 1 else None,
        "branch_count": len(stats.branches),
        "tree_said": tree_said(stats, session),
        "cost_path": fmt_cost(stats.active_path.cost),
        "cost_all": fmt_cost(stats.all.cost),
    }


def path_tool_calls(session: Session) -> int:
    """The tool calls of the active path's assistant turns (the header's "on this path"; the
    Markdown's header says the same)."""
    return sum(
        len(entry.tool_calls)
        for entry in session.active_entries()
        if isinstance(entry, MessageEntry) and entry.role == "assistant"
    )


#: Links per file in the Files table (to its writes and edits); the rest are counted.
FILE_LINKS = 12


def _files_table(session: Session, builder: PageBuilder) -> list[dict[str, Any]]:
    """The Files table: what the active path read, wrote and edited, with links."""
    return [
        {
            "path": f.path,
            "moved_from": f.moved_from,
            "reads": f.reads,
            "reads_left_out": _not_made(f.failed_reads, f.unrun_reads),
            "writes": f.writes,
            "writes_left_out": _not_made(f.failed_writes, f.unrun_writes),
            "edits": f.edits,
            "edits_left_out": _not_made(f.failed_edits, f.unrun_edits),
            "lines": f"+{f.added:,} −{f.removed:,}" if f.edits > f.edits_without_diff else "",
            "lines_unknown": f.edits_without_diff,
            "links": [builder.anchor(entry_id) for entry_id in f.changes[:FILE_LINKS]],
            "more_links": max(len(f.changes) - FILE_LINKS, 0),
        }
        for f in files_touched(session, builder.show)
    ]


def _not_made(failed: int, unrun: int) -> str:
    """The calls a count leaves out, in the Tools table's words: refused, or never run."""
    parts = []
    if failed:
        parts.append(f"{failed:,} failed")
    if unrun:
        parts.append(f"{unrun:,} with no result")
    return f"and {', '.join(parts)}" if parts else ""


def _label_bookmarks(session: Session, builder: PageBuilder) -> list[dict[str, Any]]:
    """One link per label on an entry the file has, with what the outline says of it."""
    on_path = set(session.active_path)
    return [
        {
            "anchor": builder.anchor(target),
            "label": label,
            "text": one_line(builder.row_text(target), 80),  # a row whole: a cut one ended "…]…"
            # folded on screen, and not printed at all: the list says where it points
            "other_branch": target not in on_path,
        }
        if target in session.by_id
        else {
            "anchor": None,
            "label": label,
            "other_branch": False,
            "text": f"on {one_line(target, 80)}, an entry not in the file",
        }
        for target, label in session.labels.items()
    ]


def _problems(session: Session) -> dict[str, Any]:
    """The file's problems as the header lists them, and how many there are in all."""
    return {
        "diagnostics": _listed_diagnostics(session.diagnostics),
        "diagnostic_count": sum(d.severity != "info" for d in session.diagnostics),
    }


def _usage_scopes(stats: SessionStats) -> list[dict[str, Any]]:
    """The usage tables by model: the active path's, then all branches' together; one
    table naming both when they are the same (one branch: two equal tables read as a
    mistake, visual review 2026-12-04)."""
    path, every = usage_rows(stats.by_model_path), usage_rows(stats.by_model_all)
    scopes = [("This path (root → current leaf)", path), ("All branches", every)]
    if path == every:
        scopes = [("This path (root → current leaf) and all branches: the same", path)]
    return [
        {"caption": caption, "rows": rows, "pads": decimal_pads([row[-1] for row in rows])}
        for caption, rows in scopes
    ]


BRANCH_TABLE_OPEN_MAX = 20
FORK_TEXT_CHARS = 40  # of the fork's entry in the branch table's "Forks at"


def _branch_table(stats: SessionStats, builder: PageBuilder) -> dict[str, Any]:
    """The table of branches, when there is more than one."""
    branches = [_branch_row(branch, builder) for branch in stats.branches]
    for row, pad in zip(branches, decimal_pads([b["cost"] for b in branches]), strict=True):
        row["pad"] = pad
    return {
        "branches": branches if len(branches) > 1 else [],
        # past this many rows the table starts folded: 2,000 retries made it 58,000 px
        # tall above the transcript (whose blocks fold past GROUP_BRANCHES_OVER)
        "branch_table_open_max": BRANCH_TABLE_OPEN_MAX,
    }


def _branch_row(b: BranchStats, builder: PageBuilder) -> dict[str, Any]:
    """One branch's row: where it forks, what it is about, its size, cost and last activity."""
    first = b.branch.entry_ids[0] if b.branch.entry_ids else b.branch.leaf_id
    fork = b.branch.fork_id
    said = builder.row_text(fork) if fork else ""
    prompt, opening = builder.branch_opening(b.branch.entry_ids)
    return {
        "active": b.branch.is_active,
        "fork_anchor": builder.anchor(fork) if fork else None,
        # what is there, not a bare id (the id and more of the text on hover); the main line
        # starts at the root, another root's line is a tree of its own
        "fork_text": one_line(said, FORK_TEXT_CHARS)
        if fork
        else ("root" if b.branch.is_active else "separate tree"),
        "fork_title": f"entry {builder.session.leaf_name(fork)}: {one_line(said, 80)}"
        if fork
        else None,
        # the column holds the prompt; a branch that opens with something else says so after it
        "first_prompt": prompt_preview(prompt, BRANCH_TITLE_CHARS) if prompt else None,
        "opening": builder.opening_line(opening, half=bool(prompt)) if opening else None,
        # to the prompt the column shows (a branch may start at a marker: the link led there)
        "link": builder.anchor(
            (builder.session.first_prompt_id(b.branch.entry_ids) or first) if prompt else first
        ),
        "labels": b.labels,
        "entries": fmt_int(b.entries),
        "tokens": fmt_int(b.usage.total_tokens),
        "cost": fmt_cost(b.usage.cost),
        "last_activity": _iso(b.last_activity),
    }


def _context_chart(stats: SessionStats) -> dict[str, Any]:
    """The context size chart, and how many turns it could not plot."""
    return {
        "chart": build_chart(stats.context_series),
        # turns that reported no context size (aborted, failed) are not plotted: say so
        "chart_unplotted": max(0, stats.active_path.turns - len(stats.context_series)),
    }


def _transcript(
    session: Session,
    builder: PageBuilder,
    items: list[Item],
    rendering: ForkedMap[Item],
    outline: list[OutlineRow],
) -> dict[str, Any]:
    """The transcript with its rendered entries (waiting for the children), the outline
    beside it, and the damaged lines below it."""
    return {
        "items": _with_html(items, rendering.results()),
        "runs_open_at_end": builder.runs_open_at_end,
        "outline": outline,
        "rows_shown": rows_shown(outline),
        "path_length": len(session.active_path),
        "printed_by_default": _printed_by_default(session),
        "damaged": damaged_views(session.damaged),
        "damaged_lines": {d.line for d in session.damaged[:MAX_DAMAGED_SHOWN]},
    }


def _footer(
    session: Session, options: RenderOptions, embedded: Future[tuple[str, str | None]] | None
) -> dict[str, Any]:
    """The footer: the source's name, and the embedded copy of the session to download."""
    source = options.source_name or (Path(session.path).name if session.path else "session.jsonl")
    embed, embed_note = embedded.result() if embedded is not None else (None, None)
    return {
        "embed": embed,
        "embed_note": embed_note,
        "download_name": f"{session.id or 'session'}.jsonl",
        "source_name": source,
        "pi_session_data": pi_session_data(session) if options.pi_session_data else None,
    }


# --- what the sections are made of (render/index.py uses some too) ------------------------


def display_path(path: str, owner_home: str | None = None) -> str:
    """A home folder shortened as its user's shell would: ``owner_home`` (where the session
    ran) as ``~``, another user's as ``~name``; without ``owner_home``, the path's own home
    as ``~`` (a project folder). For display only: the data is not changed."""
    if not path:
        return path
    match = HOME_FOLDER.match(path)
    if match is None:
        return path
    rest = path[match.end() :]
    if owner_home is None or match.group(0) == owner_home:
        return "~" + rest
    return f"~{match.group('user')}{rest}"


def session_paths(session: Session) -> Callable[[str], str]:
    """``display_path`` for one session's page: ``~`` is the home its cwd is in, so
    ``/home/bob/x`` in Alice's session reads ``~bob/x``, not ``~/x``, and the page does not
    depend on who exports it."""
    owner = HOME_FOLDER.match(session.header.cwd or "")
    return functools.partial(display_path, owner_home=owner.group(0) if owner else "")


EMBED_BEST_COMPRESSION_BYTES = 1_000_000


def _embed(
    session: Session, made: Callable[[Session], str | None] | None
) -> tuple[str, str | None]:
    """The session's JSONL, gzip + base64, for the page's Download button (``made``: the
    copy made ahead of the load, when it is this session's), and what the page says of it
    when it is not the file's bytes (``jsonl_out.download_copy``)."""
    if made is not None and (copy := made(session)) is not None:
        return copy, None
    jsonl, note = download_copy(session)
    return embedded_copy(jsonl), note


def embedded_copy(jsonl: bytes) -> str:
    """A session file's bytes as the page embeds them: gzip, then base64."""
    # Level 9 saves ~1% over 6 but takes 1.7x as long: on a 2.4 MB session 8 KB of page for
    # ~35 ms, which the export of a session that size feels; below 1 MB it costs little.
    level = 9 if len(jsonl) <= EMBED_BEST_COMPRESSION_BYTES else 6
    return base64.b64encode(gzip.compress(jsonl, level, mtime=0)).decode("ascii")


def page_title(session: Session) -> str:
    """:attr:`Session.title` as one plain line for a heading (a prompt's Markdown, skill
    wrapper and line breaks are noise there)."""
    if session.name:
        return session.name if len(session.name) <= 120 else one_line(session.name, 120)
    prompt = session.title_prompt()
    return prompt_preview(prompt, 120) if prompt else session.title


def _iso(moment: datetime | None) -> str | None:
    """ISO time with at most milliseconds, as HTML's <time datetime> allows."""
    return moment.isoformat(timespec="milliseconds") if moment else None


#: Header fields the facts above already show (or that only say what kind of line it is).
_HEADER_SHOWN = frozenset(
    {"type", "version", "id", "timestamp", "cwd", "parentSession", "branchedFrom"}
)


def header_extra(session: Session) -> list[tuple[str, str]]:
    """The header's other fields, one short line each: a v1 file's first model and
    thinking level (``provider``, ``modelId``, ``thinkingLevel``), or any newer field."""
    if session.header.synthesized:
        return []
    return [
        (one_line(key, 40), one_line(value if isinstance(value, str) else json_text(value), 120))
        for key, value in session.header.raw.items()
        if key not in _HEADER_SHOWN
    ]


#: Problems of one kind listed one by one in the header; the rest are counted (every damaged
#: line is also under "Damaged lines", every orphan or cycle on its entry).
MAX_LISTED_PER_KIND = 20


def _listed_diagnostics(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    shown: list[Diagnostic] = []
    more: dict[str, int] = {}
    for diagnostic in diagnostics:
        if diagnostic.severity == "info":
            continue
        seen = more.get(diagnostic.kind, 0)
        more[diagnostic.kind] = seen + 1
        if seen < MAX_LISTED_PER_KIND:
            shown.append(diagnostic)
    for kind, count in more.items():
        if count > MAX_LISTED_PER_KIND:
            rest = count - MAX_LISTED_PER_KIND
            shown.append(Diagnostic(0, kind, f"… and {rest:,} more like these"))
    return shown


def _printed_by_default(session: Session) -> str | None:
    """What paper printed with the Default filter leaves out of the path (in the Markdown
    export's words), or None: on screen the filters say it, on paper nothing did."""
    left = Counter(kind for entry in session.active_entries() if (kind := default_hides(entry)))
    if session.damaged:
        left["damaged line", "damaged lines"] += len(session.damaged)
    if not left:
        return None
    said = ", ".join(plural(n, one, many) for (one, many), n in left.items())
    return f"Printed with the filter “Default”: {said} left out (“All” prints them)."


def rows_shown(outline: list[OutlineRow]) -> dict[str, tuple[int, int, int]]:
    """Per filter, how many outline rows it shows (page.css's rules for rows, which page.js
    also reads from the classes), how many of those are fork rows kept only for what
    their branches show, and (Labeled) how many are tool results shown with a labelled
    turn, not labelled themselves: a status line that is right without the script, and
    whose count is the labels' ("90 shown" read as 90 labels on pi-branched-1's 63)."""
    counts = {name: [0, 0, 0] for name in FILTERS}
    for row in outline:
        if row.kind != "row":
            continue
        classes = row.classes.split()
        own = filters_showing(classes)
        with_labeled = "in-labeled" in classes and "is-labeled" not in classes
        for name in row_filters(row):  # a fork's row also stays for what its branches show
            counts[name][0] += 1
            counts[name][1] += name not in own
            counts[name][2] += name == "labeled" and name in own and with_labeled
    return {name: (shown, kept, along) for name, (shown, kept, along) in counts.items()}


def _with_html(items: list[Item], entry_html: list[str]) -> list[Item]:
    """Put the rendered entries back in their places (``entry_html`` is in entry order)."""
    rendered = iter(entry_html)
    for item in items:
        if item.kind == "entry":
            item.html = Markup(next(rendered))
    return items
