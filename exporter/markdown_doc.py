"""A session as one Markdown document (`export --format md`): for a pull request, a wiki
or a notes app, where an HTML page cannot go.

It says what the page says, in the page's order: the header's facts and usage tables, then
the active path with each tool call followed by its result, then the other branches, each
under a heading that says where it forks (a line at the fork's entry in the transcript says
which branches leave there, with the id ``--leaf`` takes; a run of entries a compaction took
out of the model's context between a line that says so and one that says where it ends, as
the page's dashed line marks it). Nothing is folded (Markdown has no fold every viewer
honours) and nothing is cut. The messages' own Markdown passes through, made safe
(``markdown_text.prose``); everything else a session supplies is fenced or escaped.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from exporter import __version__
from exporter.agent_context import AgentContext
from exporter.base64_text import decoded_size
from exporter.entries import (
    CONTEXT_ENTRY_TYPES,
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    Entry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    as_str,
)
from exporter.formatting import (
    fmt_cost,
    fmt_datetime,
    fmt_duration,
    fmt_int,
    one_line,
    plain_text_shown,
    plural,
    prompt_line,
    replace_surrogates,
    split_skill,
)
from exporter.header_counts import entries_line, tree_said
from exporter.markdown_images import ImageSink, read_image
from exporter.markdown_text import (
    LIST_END,
    code_span,
    ends_in_a_list,
    escaped,
    fenced,
    may_take_branch_anchor,
    prose,
    quoted,
    shown,
)
from exporter.pasted_diff import fence_pasted_diffs
from exporter.render import path_tool_calls
from exporter.render.entry_lines import entry_row_text
from exporter.render.entry_views import AGENT_CONTEXT, diagnostic_notes, no_usage_said
from exporter.render.folding import terminal_text
from exporter.render.markup import files_api_image, language_for_path
from exporter.render.odd_values import (
    DocumentView,
    attachment_facts,
    attachment_line,
    document_view,
    not_text,
    odd_values,
    shows_as_document,
)
from exporter.render.tools import (
    EXIT_CODE,
    TODO_TOOLS,
    WRITE_CUT_OFF,
    ToolView,
    build_tool_view,
    computed_diff,
    edit_diff_label,
    edit_pairs,
    json_text,
    listing_count,
    patch_diff,
    read_line_range,
    todo_done,
    todo_items,
)
from exporter.render.view import PageBuilder
from exporter.session import Session
from exporter.share_cuts import LEFT_OUT_NOTE
from exporter.shown_rules import is_interrupt
from exporter.usage import (
    BranchStats,
    SessionStats,
    compute_stats,
    models_said,
    models_with_answers,
    turn_usage,
    usage_rows,
)

_USAGE_HEADERS = ["model", "turns", "input", "output", "cache read", "cache write", "cost"]
_LISTINGS = frozenset({"ls", "find", "grep"})
#: The lists of files a compaction or branch summary's ``details`` hold, as the page says
#: them (``render.entry_views``).
_FILE_LISTS = (("readFiles", "Files read"), ("modifiedFiles", "Files modified"))


#: Where this document's images go (``--images inline|files``); None: a note says each.
_IMAGES: ContextVar[ImageSink | None] = ContextVar("markdown_images", default=None)


def session_markdown(
    session: Session,
    agent_context: AgentContext | None = None,
    *,
    timestamps: bool = True,
    images: ImageSink | None = None,
) -> str:
    """The whole session as Markdown text (the active path first, then every branch);
    the agent's system prompt and tools (``--agent-context``) after the usage, when given.
    ``timestamps`` False (``--no-timestamps``): no date or time anywhere (entries' headings,
    branches' last activity, the header's start and end: its duration stays), for a
    document that diffs by what was said. ``images``: where the images go instead of a
    note (in the document, or collected for files beside it)."""
    token = _IMAGES.set(images)
    try:
        return _document(session, agent_context, timestamps)
    finally:
        _IMAGES.reset(token)


def _document(session: Session, agent_context: AgentContext | None, timestamps: bool) -> str:
    stats = compute_stats(session)
    lines = session.lines()
    forks: dict[str, list[int]] = {}  # a fork's entry -> the numbers of its branches
    for number, branch in enumerate(stats.branches[1:], 2):
        if branch.branch.fork_id:
            forks.setdefault(branch.branch.fork_id, []).append(number)
    writer = _Writer(session, forks, lines, timestamps)
    parts = [
        *_header(session, stats, timestamps),
        *_usage(stats),
        *_agent_context(agent_context),
        "## Transcript",
        "",
        f"The active path, root → leaf ({plural(len(session.active_path), 'entry', 'entries')}"
        f"{', leaf ' + code_span(session.leaf_name(session.leaf_id)) if session.leaf_id else ''}).",
        "",
    ]
    if lines:
        parts += writer.line(lines[0], level=3)
    branches = stats.branches
    if len(lines) > 1:
        parts += ["## Other branches", ""]
        for number, (line, branch) in enumerate(zip(lines[1:], branches[1:], strict=True), 2):
            heading = _branch_heading(session, number, len(lines), branch, line, timestamps)
            parts += [heading, ""]
            parts += writer.line(line, level=4)
    parts += _problems(session, writer.not_shown)
    source = Path(session.path).name if session.path else "session.jsonl"
    parts += [
        "---",
        "",
        f"*Exported from {_session_file(source, timestamps)} by pi-session-export {__version__}.*",
    ]
    return _document_text("\n".join(_one_blank_line(parts)) + "\n")


def _one_blank_line(parts: list[str]) -> list[str]:
    """The document's parts with no two blank lines in a row: an empty text block or a
    prompt's blocks each followed by a blank line left two or four (review 2026-12-04)."""
    out: list[str] = []
    for part in parts:
        if part or (out and out[-1]):
            out.append(part)
    return out


def _document_text(text: str) -> str:
    """A last pass over the whole: lone surrogates as U+FFFD, hidden controls as signs.
    Session text came through ``markdown_text``, which decoded hidden tag text before
    escaping it; decoding here could make markup of text no one escaped."""
    return plain_text_shown(replace_surrogates(text), decode_tags=False)


# --- the header ---------------------------------------------------------------------------


# Pi names a session file <ISO time with dashes>_<session id>.jsonl, Codex
# rollout-<local time with dashes>-<session id>.jsonl (Claude Code <session id>.jsonl: no time)
_PI_FILE_NAME = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d(?:-\d{1,9})?Z_(.+)\.jsonl"
    r"|rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-(.+)\.jsonl"
)


def _session_file(path: str, timestamps: bool) -> str:
    """A session's file (the parent this one was forked from, the one the document was
    made from); without timestamps, a Pi or Codex file is named by its session id (its name
    starts with the moment that session began)."""
    named = _PI_FILE_NAME.fullmatch(path.replace("\\", "/").rsplit("/", 1)[-1])
    if timestamps or named is None:
        return code_span(path)
    return f"session {code_span(named.group(1) or named.group(2))}"


def _header(session: Session, stats: SessionStats, timestamps: bool = True) -> list[str]:
    title = escaped(one_line(session.title, 120)) or "Untitled session"
    when = [
        ("Started", fmt_datetime(stats.started)),
        ("Ended", f"{fmt_datetime(stats.ended)} ({fmt_duration(stats.duration_seconds)})"),
    ]
    rows = [
        ("Session", f"{code_span(session.id)} ({session.file_kind})"),
        ("Project", code_span(session.header.cwd) if session.header.cwd else "unknown"),
        *(when if timestamps else [("Duration", fmt_duration(stats.duration_seconds))]),
        ("Models", models_said(models_with_answers(session, stats), code_span)),
        ("Entries", entries_line(stats, len(session.entries), " · ", escaped)),
        ("Tool calls", _tool_calls_said(session, stats)),
        ("Tree", tree_said(stats, session)),
        (
            "Cost",
            f"{fmt_cost(stats.active_path.cost)} on this path, "
            f"{fmt_cost(stats.all.cost)} on all branches{_cost_note(session)}",
        ),
        *_redaction_row(session),
    ]
    if session.header.parent_session:
        rows.insert(2, ("Forked from", _session_file(session.header.parent_session, timestamps)))
    facts = [f"- **{name}:** {value}" for name, value in rows]
    if may_take_branch_anchor(title):  # "# Branch 2 of 2" took that branch's link
        title = f"Session: {title}"
    out = [f"# {title}", "", *facts, ""]
    if session.labels:
        marks = [_label_mark(session, target, label) for target, label in session.labels.items()]
        out += ["**Labels:**", "", *marks, ""]
    return out


def _tool_calls_said(session: Session, stats: SessionStats) -> str:
    """The page's "Tool calls" fact: with other branches, this path's calls apart from all
    branches' (the per-tool counts are the whole tree's), counted as the page counts them;
    the Markdown had only the all-branches table, and no word of what this path called."""
    if not stats.tools:
        return "none"
    per_tool = ", ".join(f"{code_span(name)} {fmt_int(t.calls)}" for name, t in stats.tools.items())
    if len(stats.branches) > 1:
        on_path = fmt_int(path_tool_calls(session))
        return f"{on_path} on this path · {fmt_int(stats.tool_calls)} on all branches: {per_tool}"
    return f"{fmt_int(stats.tool_calls)} · {per_tool}"


def _redaction_row(session: Session) -> list[tuple[str, str]]:
    """The page's "Left out" or "Redaction" fact, after the cost as on the page: a document
    made with --exclude or --redact said nothing of what it lacks, or of what was replaced."""
    note = session.redaction_note
    return [(session.redaction_heading, escaped(note))] if note else []


def _cost_note(session: Session) -> str:
    """:attr:`Session.cost_note` on the Cost line: the Markdown said "$0.00" unexplained."""
    note = session.cost_note
    return f", {escaped(one_line(note, 300))}" if note else ""


def _label_mark(session: Session, target: str, label: str) -> str:
    """A label, its entry's id and what the entry says, as the page's bookmark list has it
    (a bare id told a reader nothing: visual review 2026-12-04)."""
    mark = f"- {code_span(label)} on {code_span(session.leaf_name(target))}"
    if target not in session.by_id:
        return f"{mark}, an entry not in the file"
    return f"{mark}: {escaped(one_line(entry_row_text(session, target)[0], 100))}"


def _usage(stats: SessionStats) -> list[str]:
    numeric = set(range(1, 7))
    path = _code_first(usage_rows(stats.by_model_path, "total"))
    every = _code_first(usage_rows(stats.by_model_all, "total"))
    if path == every:  # one table for both, as on the page
        out = ["## Usage", "", "**This path** (root → leaf) **and all branches** (the same):"]
        out += ["", _table(_USAGE_HEADERS, path, numeric), ""]
    else:
        out = ["## Usage", "", "**This path** (root → leaf):", ""]
        out += [_table(_USAGE_HEADERS, path, numeric), "", "**All branches:**", ""]
        out += [_table(_USAGE_HEADERS, every, numeric), ""]
    if stats.tools:
        rows = [[code_span(n), fmt_int(t.calls), fmt_int(t.errors)] for n, t in stats.tools.items()]
        table = _table(["tool", "calls", "errors"], rows, {1, 2})
        out += ["**Tools** (all branches):", "", table, ""]
    return out


def _agent_context(context: AgentContext | None) -> list[str]:
    """The system prompt fenced whole, and each tool with its parameters (a tool's
    description fenced too: it is the agent's text, often Markdown of its own)."""
    if context is None:
        return []
    context = context.capped()  # cut only now: any redaction has read the whole texts
    out: list[str] = []
    if context.system_prompt:
        said = f"{plural(context.prompt_lines, 'line')}, {fmt_int(len(context.system_prompt))}"
        out += ["## System prompt", "", f"*{said} characters.*", ""]
        out += [fenced(context.system_prompt), ""]
    if context.tools:
        active = f", {fmt_int(context.active_count)} active" if context.active_known else ""
        out += ["## Tools", "", f"*{plural(len(context.tools), 'tool')}{active}.*", ""]
        for tool in context.tools:
            mark = " *(inactive)*" if tool.active is False else ""
            out += [f"- {code_span(tool.name)}{mark}"]
            if tool.description.strip():
                out += ["", _indented(fenced(tool.description))]
            for param in tool.params:
                need = "required" if param.required else "optional"
                line = f"  - {code_span(param.name)} ({escaped(param.type)}, {need})"
                if param.description.strip():
                    line += f": {escaped(param.description)}"
                out.append(line)
            if tool.params_left_out:
                out.append(f"  - *{fmt_int(tool.params_left_out)} more parameters left out*")
            out.append("")
    if context.left_out:
        out += [f"*Left out: {escaped('; '.join(context.left_out))}.*", ""]
    return out


def _indented(block: str) -> str:
    """A block inside a list item: two spaces before every line."""
    return "\n".join(f"  {line}" if line else "" for line in block.split("\n"))


def _code_first(rows: list[list[str]]) -> list[list[str]]:
    """Model names as code (they come from the file), the total row's label as it is."""
    return [[code_span(row[0]) if i < len(rows) - 1 else row[0], *row[1:]] for i, row in
            enumerate(rows)]  # fmt: skip


def _table(headers: list[str], rows: list[list[str]], numeric: set[int]) -> str:
    """A GitHub table; cells are made by this module (escaped or code), ``|`` escaped."""

    def cells(values: list[str]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|").replace("\n", " ") for v in values) + " |"

    rule = ["---:" if i in numeric else "---" for i in range(len(headers))]
    return "\n".join([cells(headers), "|" + "|".join(rule) + "|", *map(cells, rows)])


def _branch_heading(
    session: Session,
    number: int,
    total: int,
    branch: BranchStats,
    line: list[str],
    timestamps: bool = True,
) -> str:
    """A branch's heading, ``Branch 2 of 7`` alone (an anchor that does not change with
    its cost: the fork's line in the transcript links to it), then its facts, then where it
    forks said as the page says it (the entry's role, time and words: a bare id appeared
    nowhere else in the document; the heading said the id a second time) and what it
    starts with when that is no prompt."""
    fork = branch.branch.fork_id
    said = [plural(branch.entries, "entry", "entries"), fmt_cost(branch.usage.cost)]
    if branch.last_activity and timestamps:
        said.append(f"last activity {fmt_datetime(branch.last_activity)}")
    said.append(f"leaf {code_span(session.leaf_name(branch.branch.leaf_id))}")
    if not fork:
        said.insert(0, "a separate root")
    elif fork not in session.by_id:
        said.insert(0, f"forks after entry {code_span(fork)}, which is not in this file")
    notes = [" · ".join(said)]
    if fork and fork in session.by_id:
        notes.append(f"Forks after {_entry_said(session, fork, timed=timestamps)}")
    summary = _opening_summary(session, line)
    first = next(session.iter_messages(line), None)
    if summary is not None:  # it opened with no word of what it starts with (review #2)
        notes.append(summary)
    elif line and not (branch.first_prompt and (first is None or first.role == "user")):
        opening = entry_row_text(session, first.id if first is not None else line[0])[0]
        notes.append(f"Starts with {escaped(one_line(opening, 120))}")
    if branch.first_prompt:
        notes.append(f"First prompt: {escaped(prompt_line(branch.first_prompt, 120))}")
    return f"### Branch {number} of {total}" + "".join(f"\n\n{note}" for note in notes)


def _opening_summary(session: Session, line: list[str]) -> str | None:
    """``Starts with a summary of an abandoned branch: “…”`` when a branch's first shown
    entry is a branch summary or a compaction (a prompt after it was all its heading
    said, as if the branch began there)."""
    for entry_id in line:
        entry = session.by_id[entry_id]
        if isinstance(entry, (BranchSummaryEntry, CompactionEntry)):
            what = (
                "a summary of an abandoned branch"
                if isinstance(entry, BranchSummaryEntry)
                else "a compaction"
            )
            words = one_line(entry.summary, 120)
            return f"Starts with {what}: “{escaped(words)}”" if words else f"Starts with {what}"
        if isinstance(entry, MessageEntry):
            return None
    return None


def _branch_link(number: int, total: int, said: str) -> str:
    """``said`` as a link to branch ``number``'s heading (GitHub's anchor for it)."""
    return f"[{said}](#branch-{number}-of-{total})"


def _entry_said(session: Session, entry_id: str, *, timed: bool = False) -> str:
    """``entry `e01` (time) “user: Look at this…”``: an entry by its id (what --leaf and
    --exclude take) and its words (the outline's row, as the page quotes it)."""
    said = f"entry {code_span(session.leaf_name(entry_id))}"
    entry = session.by_id.get(entry_id)
    if entry is None:
        return said
    when = entry.moment if timed else None
    said += f" ({fmt_datetime(when)})" if when else ""
    return f"{said} “{escaped(one_line(entry_row_text(session, entry_id)[0], 80))}”"


def _fork_marker(
    session: Session,
    entry_id: str,
    numbers: list[int],
    total: int,
    hidden: bool = False,
    above: str = "",
    before_results: bool = False,
) -> str:
    """The line under a fork's entry that says which branches leave there, each linked to
    its heading (the link says where the branch is: "under “Other branches”" said it
    twice); at an entry this document does not show (extension data), which entry that
    is, and that it comes right after what is above (its id appeared nowhere else).
    ``before_results``: the entry is an assistant message whose tool results are shown in
    its turn above; they came after the fork, so the line says the branch leaves before
    them (under the turn, "here" read as after its last output). ``above``: what the entry
    is, said when it has no heading of its own (a result shown with its call, a model
    change): its id is nowhere else in the transcript."""
    if len(numbers) == 1:
        which = f"{_branch_link(numbers[0], total, f'Branch {numbers[0]} of {total}')} forks"
        them = "that branch"
    else:
        links = [_branch_link(n, total, str(n)) for n in numbers]
        which = f"Branches {', '.join(links[:-1])} and {links[-1]} of {total} fork"
        them = "those branches"
    if hidden:
        return (
            f"*⑂ {which} here, after {_entry_said(session, entry_id)}, which is not shown: "
            "it comes right after the entry above.*"
        )
    if before_results:
        return (
            f"*⑂ {which} after entry {code_span(session.leaf_name(entry_id))}, "
            "the assistant message above, "
            f"before its tool results: the results shown with its calls are on this path, "
            f"not on {them}.*"
        )
    said = f", {above} just above" if above else ""
    return f"*⑂ {which} here, after entry {code_span(session.leaf_name(entry_id))}{said}.*"


_CHANGES = (ModelChangeEntry, ThinkingLevelChangeEntry)


def _changed_to(entry: Entry) -> str:
    """The model or thinking level a change entry set."""
    if isinstance(entry, ModelChangeEntry):
        return entry.model_key or "?"
    return entry.thinking_level if isinstance(entry, ThinkingLevelChangeEntry) else "?"


def _headless_said(entry: Entry) -> str:
    """What an entry shown without a heading is, for a line that names it by its id."""
    if isinstance(entry, MessageEntry) and entry.role == "toolResult":
        name = entry.tool_name
        return f"the {code_span(name)} result" if name else "the result"
    if isinstance(entry, ModelChangeEntry):
        return "the model change"
    if isinstance(entry, ThinkingLevelChangeEntry):
        return "the thinking-level change"
    if isinstance(entry, SessionInfoEntry):
        return "the session name"
    return "the entry"


def _problems(session: Session, not_shown: dict[tuple[str, str], int]) -> list[str]:
    out: list[str] = []
    if not_shown:
        counts = ", ".join(plural(n, one, many) for (one, many), n in not_shown.items())
        out += [
            "## Not shown",
            "",
            f"Entries the page hides by default and this document leaves out: {counts}. "
            "The HTML page (`pi-session export`) shows them under “All”.",
            "",
        ]
    if session.diagnostics:
        out += ["## Problems in the file", ""]
        for problem in session.diagnostics:
            where = f"line {fmt_int(problem.line)}: " if problem.line else ""
            out.append(f"- {where}{escaped(problem.message)} \\[{escaped(problem.kind)}\\]")
        out.append("")
    if session.damaged:  # kept as text, as the page keeps them: nothing in the file is lost
        out += ["### Damaged lines", "", "The lines that could not be read, as they are:", ""]
        for damaged in session.damaged:
            said = f"**Line {fmt_int(damaged.line)}** ({escaped(damaged.message)}):"
            out += [said, "", fenced(damaged.text), ""]
    return out


# --- the transcript -----------------------------------------------------------------------


#: How the Markdown says where a run of entries out of the model's context starts and ends
#: (the page draws a dashed line beside it).
_RUN_START = "Not in the model's context from here"
_RUN_END = "End of the entries not in the model's context"


@dataclasses.dataclass
class _ContextRun:
    """The run of entries out of the model's context a line is in, grouped as the page
    groups them (``render.view``'s ``_mark_context_runs``): an entry the model sees ends it,
    and so does an entry another compaction took out (a new run starts there); a marker
    the model never sees (a model change, a label, a compaction it kept) does not. Its
    start is said over the first entry shown in it."""

    compaction_id: str | None = None
    announced: bool = False  # its start has been said

    def ends_at(self, entry: Entry | None, compaction_id: str | None) -> list[str]:
        """The line that ends the run before ``entry`` (None: the end of the line), if it
        ends there; the run that ``entry`` starts, if any, is taken up."""
        if compaction_id == self.compaction_id or (
            compaction_id is None and entry is not None and entry.type not in CONTEXT_ENTRY_TYPES
        ):
            return []
        said = [f"*{_RUN_END}.*", ""] if self.announced else []
        self.compaction_id, self.announced = compaction_id, False
        return said


class _Writer:
    """Writes lines of the tree; remembers what it left out, for the closing note."""

    def __init__(
        self,
        session: Session,
        forks: dict[str, list[int]],
        lines: list[list[str]],
        timestamps: bool = True,
    ) -> None:
        self.session = session
        self.timestamps = timestamps  # each entry's heading says its time
        self.forks = forks  # a fork's entry -> the numbers of the branches that leave it
        self.lines = len(lines)
        #: entry id -> the number of the line it is on (1: the active path; n: Branch n)
        self.line_of = {entry_id: n for n, line in enumerate(lines, 1) for entry_id in line}
        #: entry id -> the compaction that took it out of the model's context, as the page
        #: marks them (the active path's, and a branch's own compactions on its line)
        self.compacted = PageBuilder(session, str).compacted
        self.not_shown: dict[tuple[str, str], int] = {}  # (one, many) -> how many
        self._spans: dict[str, tuple[int, int]] | None = None
        #: (change kind, entry id) -> what the last change of that kind up to it set
        self._priors: dict[tuple[type, str], str | None] = {}

    def line(self, entry_ids: list[str], level: int) -> list[str]:
        on_line = set(entry_ids)
        shown_results: set[str] = set()
        out: list[str] = []
        changes: list[Entry] = []  # model and thinking-level changes in a row, not yet said
        run = _ContextRun()
        for entry_id in entry_ids:
            if entry_id in shown_results:
                continue
            entry = self.session.by_id[entry_id]
            if isinstance(entry, _CHANGES):
                changes.append(entry)
                if entry_id in self.forks or entry_id in self.session.labels:
                    out += self._changes(changes, level)  # its id is said under the run
                    changes = []
                continue
            ended = run.ends_at(entry, self.compacted.get(entry_id))
            if ended:  # the changes before a kept entry are in the run, as on the page
                out += self._changes(changes, level) + ended
                changes = []
            before = len(shown_results)
            written = self.entry(entry, level, on_line, shown_results)
            if not written and entry_id not in self.forks:
                continue  # nothing shown (a label, extension data): the run goes on
            out += self._changes(changes, level)
            changes = []
            out += self._run_start(run) if written else []
            out += written
            headless = bool(written) and not written[0].startswith("#")
            out += self._headless_label(entry) if headless else []
            out += self._fork_marker(
                entry_id,
                hidden=not written,
                above=_headless_said(entry) if headless else "",
                before_results=len(shown_results) > before,
            )
        return out + self._changes(changes, level) + run.ends_at(None, None)

    def _run_start(self, run: _ContextRun) -> list[str]:
        """The line over the first entry shown of a run out of the model's context, in the
        page's words (its dashed line's): which compaction replaced them, and when."""
        if run.compaction_id is None or run.announced:
            return []
        run.announced = True
        compaction = self.session.by_id.get(run.compaction_id)
        when = compaction.moment if compaction is not None and self.timestamps else None
        at = f" ({fmt_datetime(when)})" if when else ""  # (as an entry's time is said)
        return [
            f"*{_RUN_START}, to the line “{_RUN_END}”: the compaction below{at} replaced these "
            "entries with its summary.*",
            "",
        ]

    def _changes(self, changes: list[Entry], level: int) -> list[str]:
        """Model and thinking-level changes with nothing between them as one line that
        says where they ended and how many there were (runs of 15 lines each saying a
        level buried the transcript: review 2026-12-04). A run ends at a fork or a
        labelled change, so the line under it names that entry's id as before."""
        if not changes:
            return []
        last = changes[-1]
        models = [c for c in changes if isinstance(c, ModelChangeEntry)]
        levels = [c for c in changes if isinstance(c, ThinkingLevelChangeEntry)]
        if len(models) <= 1 and len(levels) <= 1:  # a line each says it as well
            out = [line for change in changes for line in self.entry(change, level, set(), set())]
            above = _headless_said(last)
        else:
            said = [
                self._run_said(run, kind)
                for run, kind in ((models, "model"), (levels, "thinking level"))
                if run
            ]
            text = "; ".join(said)
            out = [f"*{text[0].upper()}{text[1:]}*", ""]
            for change in changes:  # (the run's line names none of them)
                out += _odd_said(change, f"entry {code_span(self.session.leaf_name(change.id))}")
            above = f"the last of the {len(changes)} changes"
        return [*out, *self._headless_label(last, above), *self._fork_marker(last.id, above=above)]

    def _run_said(self, run: list[Entry], kind: str) -> str:
        """``thinking level: `off` → `high` (7 changes)``: the value before the run (the
        last change of that kind on the path above it), the value after, and how many."""
        values = [_changed_to(entry) for entry in run]
        if len(run) == 1:
            return f"{kind} {'changed to' if kind == 'model' else 'set to'} {code_span(values[0])}"
        prior = self._prior(run[0])
        final = code_span(values[-1])
        count = f"{len(run)} changes"
        if prior is None:
            return f"{kind} changed {len(run)} times, ending at {final}"
        if prior == values[-1]:
            return f"{kind} changed {len(run)} times, back to {final}"
        return f"{kind}: {code_span(prior)} → {final} ({count})"

    def _prior(self, entry: Entry) -> str | None:
        """What the last change of ``entry``'s kind before it on its path set, if any;
        remembered for every entry walked past (a long session of many runs walked its
        path once per run)."""
        kind = type(entry)
        walked: list[str] = []
        found: str | None = None
        node = self.session.parent_of(entry.id)
        while node is not None:
            if (kind, node) in self._priors:
                found = self._priors[kind, node]
                break
            walked.append(node)
            earlier = self.session.by_id.get(node)
            if earlier is not None and type(earlier) is kind:
                found = _changed_to(earlier)
                break
            node = self.session.parent_of(node)
        for done in walked:  # the value at (after) each walked entry
            self._priors[kind, done] = found
        return found

    def _fork_marker(
        self,
        entry_id: str,
        hidden: bool = False,
        above: str = "",
        before_results: bool = False,
    ) -> list[str]:
        """Under an entry that is a fork, a line saying which branches leave there; a
        result shown with its call gets it right under it, not under the whole turn (a
        branch from the first of two results read as leaving after the second).
        ``hidden``: the entry is not shown (the line goes under the one before); ``above``:
        what it is when it has no heading (``_headless_said``);
        ``before_results``: an assistant turn that showed its results (they follow the
        fork: the line says the branch leaves before them)."""
        if entry_id not in self.forks:
            return []
        numbers = self.forks[entry_id]
        said = _fork_marker(
            self.session, entry_id, numbers, self.lines, hidden, above, before_results
        )
        return [said, ""]

    def _is_before(self, earlier: str, entry_id: str) -> bool:
        """``earlier`` is on the path to ``entry_id`` (the page's test, on the same spans)."""
        if self._spans is None:
            self._spans = self.session.subtree_spans()
        outer, inner = self._spans.get(earlier), self._spans.get(entry_id)
        return outer is not None and inner is not None and outer[0] <= inner[0] <= outer[1]

    def _skip(self, one: str, many: str) -> list[str]:
        self.not_shown[one, many] = self.not_shown.get((one, many), 0) + 1
        return []

    def entry(self, entry: Entry, level: int, on_line: set[str], shown: set[str]) -> list[str]:
        if isinstance(entry, MessageEntry):
            return self.message(entry, level, on_line, shown)
        if isinstance(entry, CompactionEntry):
            size = entry.tokens_before
            head = "Compaction" + (f" · {fmt_int(size)} tokens before" if size is not None else "")
            odd = _odd_said(entry)
            if entry.summary.strip():
                body = quoted(prose(entry.summary, level))
            elif entry.raw.get("summary") is not None and odd:  # one, shown as written below
                body = ""  # ("holds no summary" was untrue: a list of texts is one)
            else:
                body = "*The file holds no summary for this compaction.*"
            notes = self._summary_notes(entry)
            kept = self.session.first_kept_id(entry)
            if kept and kept in self.session.by_id and self._is_before(kept, entry.id):
                notes.append(f"*Context kept from {_entry_said(self.session, kept)}*")
            elif kept:  # as the page: Pi keeps nothing from before this compaction then
                where = "is not in this file" if kept not in self.session.by_id else (
                    "is not before this compaction on its branch")  # fmt: skip
                notes.append(
                    f"*Context kept from {_entry_said(self.session, kept)}, which {where}: by "
                    "Pi's rule nothing before this compaction stays in context.*"
                )
            return [*self._heading(entry, level, head), body, "", *_paragraphs(notes), *odd]
        if isinstance(entry, BranchSummaryEntry):
            body = prose(entry.summary, level)
            notes = self._summary_notes(entry)
            if entry.from_id:
                notes.insert(0, f"*Branched away from {_entry_said(self.session, entry.from_id)}*")
            head = "Summary of an abandoned branch"
            heading = self._heading(entry, level, head)
            return [*heading, *_paragraphs(notes), body, "", *_odd_said(entry)]
        if isinstance(entry, CustomMessageEntry):
            agents = AGENT_CONTEXT if self.session.agent != "Pi" else {}
            said = agents.get(entry.custom_type)
            if not entry.display:
                kind = f"{said[0]} message" if said else "hidden extension message"
                return self._skip(kind, kind + "s")
            head = said[0] if said else f"Extension message {code_span(entry.custom_type)}"
            details = [*_extension_details(entry.raw.get("details")), *_odd_said(entry)]
            if not isinstance(entry.raw.get("content"), list):
                body = [prose(entry.text, level), ""]
                return [*self._heading(entry, level, head), *body, *details]
            # its blocks as a message's: its images were left out without a word
            body = []
            for block in entry.content:
                body += _after(body, _block(block, level))
            return [*self._heading(entry, level, head), *body, *details]
        if isinstance(entry, ModelChangeEntry):
            said = f"*Model changed to {code_span(entry.model_key or '?')}*"
            return [said, "", *_odd_said(entry)]
        if isinstance(entry, ThinkingLevelChangeEntry):
            said = f"*Thinking level: {code_span(entry.thinking_level or '?')}*"
            return [said, "", *_odd_said(entry)]
        if isinstance(entry, SessionInfoEntry):
            return [_session_named(entry), "", *_odd_said(entry)]
        if isinstance(entry, LabelEntry):
            return []  # shown on the entry it labels
        if entry.type == "custom":
            return self._skip("extension state entry", "extension state entries")
        return self._skip("entry of an unknown type", "entries of unknown types")

    def _summary_notes(self, entry: CompactionEntry | BranchSummaryEntry) -> list[str]:
        """The files a compaction or branch summary read and modified, every one (the page
        lists 20 and folds the rest), any other ``details`` as JSON, and who made it."""
        raw = entry.raw.get("details")
        details = raw if isinstance(raw, dict) else {}
        notes: list[str] = []
        for key, label in _FILE_LISTS:
            files = details.get(key)
            if isinstance(files, list) and files:
                listed = ", ".join(
                    code_span(f if isinstance(f, str) else json_text(f)) for f in files
                )
                notes.append(f"*{label}:* {listed}")
        lists = dict(_FILE_LISTS)
        rest = {k: v for k, v in details.items() if not (k in lists and isinstance(v, list))}
        other = rest if isinstance(raw, dict) else raw
        if other not in (None, {}):
            notes.append(f"*Details:*\n\n{fenced(json_text(other, 2), 'json')}")
        if entry.raw.get("fromHook") is True:
            notes.append("*Made by an extension (fromHook), not by Pi's own summariser.*")
        return notes

    def _headless_label(self, entry: Entry, said: str = "") -> list[str]:
        """The label on an entry shown without a heading (a result shown with its call),
        under it: it was in the header's list only, by an id the transcript never showed."""
        label = self.session.labels.get(entry.id)
        if not label:
            return []
        name = self.session.leaf_name(entry.id)
        return [f"**Label** {code_span(label)} · id {code_span(name)}, "
                f"{said or _headless_said(entry)} above", ""]  # fmt: skip

    def _heading(self, entry: Entry, level: int, title: str) -> list[str]:
        when = entry.moment if self.timestamps else None
        said = [title, fmt_datetime(when)] if when else [title]
        if entry.id in self.forks:  # the id --leaf and --exclude take, where branches leave
            said.append(f"id {code_span(self.session.leaf_name(entry.id))}")
        heading = " · ".join(said)
        if may_take_branch_anchor(heading):  # a role "Branch 2 of 2" (no time): that link
            heading = f"Entry · {heading}"
        out = [f"{'#' * level} {heading}", ""]
        label = self.session.labels.get(entry.id)
        name = self.session.leaf_name(entry.id)
        out += [f"**Label** {code_span(label)} · id {code_span(name)}", ""] if label else []
        return out

    def message(
        self, entry: MessageEntry, level: int, on_line: set[str], shown: set[str]
    ) -> list[str]:
        role = entry.role
        if role == "user":
            odd = _odd_said(entry)
            blocks = self._blocks(entry, level, prompt=True)
            attached = _attachments(entry.message.get("attachments"))
            if not any(part.strip() for part in (*blocks, *attached, *odd)):
                blocks = ["*(empty message)*"]  # as the page says it: the heading stood alone
            if attached and blocks and blocks[-1]:
                attached = ["", *attached]  # (a prompt's text ends without its blank line)
            return [*self._heading(entry, level, "User"), *blocks, *attached, "", *odd]
        if role == "assistant":
            return self._assistant(entry, level, on_line, shown)
        if role == "toolResult":
            ref = self.session.call_for_result(entry.id)
            call = self.session.call_block(ref) if ref else None
            if call is None:
                note = "no call found for it"
            elif ref is not None and ref.entry_id in on_line:
                note = "another result of a call above"  # the first is shown with the call
            else:
                note = "its call is on another branch"
            head = f"Tool result {code_span(entry.tool_name or '?')} ({note})"
            return [*self._heading(entry, level, head), *_tool(call, entry), ""]
        if role == "bashExecution":
            head = self._heading(entry, level, "Shell command (!)")
            return [*head, *_shell(entry), "", *_odd_said(entry)]
        if role == "custom":
            if not entry.display:
                return self._skip("hidden extension message", "hidden extension messages")
            head = f"Extension message {code_span(entry.custom_type or 'custom')}"
            details = _extension_details(entry.message.get("details"))
            details += _odd_said(entry)
            return [*self._heading(entry, level, head), *self._blocks(entry, level), "", *details]
        # a role no view knows (an extension's): the message as written, as the page shows
        # it (under "All"); its heading alone was empty, its data gone
        said = "*A message of a role this exporter does not know, as written:*"
        fence = _json_fence(entry.message)
        return [*self._heading(entry, level, escaped(role)), said, "", fence, ""]

    def _assistant(
        self, entry: MessageEntry, level: int, on_line: set[str], shown: set[str]
    ) -> list[str]:
        out = self._heading(entry, level, f"Assistant · {code_span(entry.model_key or '?')}")
        for index, block in enumerate(entry.content):
            kind = block.get("type")
            if kind == "toolCall":
                result = self.session.result_for_call(entry.id, index, on_line)
                if result is not None:
                    shown.add(result.id)
                    elsewhere = ""
                else:
                    elsewhere = self._result_elsewhere(entry.id, index)
                answer = result if isinstance(result, MessageEntry) else None
                out += [*_tool(block, answer, elsewhere), ""]
                if result is not None:
                    out += self._headless_label(result)
                    out += self._fork_marker(result.id, above=_headless_said(result))
            else:
                out += _after(out, _block(block, level))
        out += _stop_reason(entry) + _odd_said(entry)
        usage = turn_usage(entry)
        said = no_usage_said(usage) or (  # the page's words for none (not "in 0 · … $0.00")
            f"in {fmt_int(usage.input)} · out {fmt_int(usage.output)} · cache read "
            f"{fmt_int(usage.cache_read)} · cache write {fmt_int(usage.cache_write)} · "
            f"{fmt_cost(usage.cost)}"
        )
        return [*out, f"*{said}*", ""]

    def _result_elsewhere(self, assistant_id: str, index: int) -> str:
        """Where a call's result is when the tree forks between them, as the page's line
        says it (its first in file order, the one the page links to), with a link to the
        branch that shows it: "no result" was untrue, the result was further down. Empty
        when the call has no result anywhere."""
        result = self.session.result_for_call(assistant_id, index)
        if result is None:
            return ""
        said = "result on another branch"
        number = self.line_of.get(result.id, 1)
        if number < 2:  # (a result is below its call: never on the active path's line)
            return said
        return f"{said} ({_branch_link(number, self.lines, f'Branch {number} of {self.lines}')})"

    def _blocks(self, entry: MessageEntry, level: int, *, prompt: bool = False) -> list[str]:
        """An entry's content; a diff pasted into a ``prompt`` without a fence gets one."""
        content = entry.message.get("content")
        if isinstance(content, str):
            return _prompt(content, level) if prompt else [prose(content, level)]
        out: list[str] = []
        for index, block in enumerate(entry.content):
            if prompt and block.get("type") == "text" and isinstance(block.get("text"), str):
                text = block["text"]
                out += _after(out, _prompt(text, level) if index == 0 else [_pasted(text, level)])
                continue
            out += _after(out, _block(block, level))
        return out


def _attachments(raw: Any) -> list[str]:
    """Files attached to a v1 prompt (the model saw them; Pi stopped reading them), as the
    page says them: a line each, an image as the document's images go, a document's
    extracted text in a block. The Markdown left them out without a word."""
    if not isinstance(raw, list):
        return []
    out: list[str] = []
    for item in raw:
        if not isinstance(item, dict):
            out += [f"*Attachment:* {code_span(json_text(item))}", ""]
            continue
        facts = attachment_facts(item)
        said = escaped(attachment_line(facts))
        out += [f"*Attached {escaped(facts.kind)}:* {code_span(facts.name)} ({said})", ""]
        if facts.kind == "image":
            image = {"type": "image", "data": item.get("content"), "mimeType": facts.mime}
            out += [_image_note(image), ""]
        out += _attached_text(as_str(item.get("extractedText")))
    return out


def _attached_text(text: str | None) -> list[str]:
    """An attached document's text in a code block (nothing when it has none)."""
    return [fenced(text), ""] if text else []


def _document_said(document: DocumentView) -> list[str]:
    """An API document (a PDF, a text file attached to a Claude Code prompt or read by a
    tool) as the page says it: a line saying what it is, its name and size, not its base64
    (a 1 MB PDF, 1.3 MB of it); a text document's text as an attachment's; its address
    as text a renderer may link only when it is a web address (``escaped``)."""
    line = f"*{document.kind}:* {code_span(document.title)}" if document.title else (
        f"*{document.kind}*")  # fmt: skip
    if document.facts:
        line += f" ({escaped(document.facts)})"
    if document.url is not None:
        line += f" at {escaped(document.url)}"
    out = [line, ""]
    if document.context is not None:
        out += [f"*Context given with it:* {escaped(document.context)}", ""]
    if document.other:
        out += [f"*Other fields of it:* {code_span(json_text(document.other))}", ""]
    return out + _attached_text(document.text)


def _holds_documents(result: MessageEntry | None) -> bool:
    return result is not None and any(map(shows_as_document, result.content))


def _result_documents(result: MessageEntry | None) -> list[str]:
    """The API documents in a tool's result (a PDF Claude Code's Read returned), each part
    a paragraph of :func:`_tool`'s."""
    if result is None:
        return []
    documents = filter(None, map(document_view, result.content))
    return [part for document in documents for part in _document_said(document) if part]


def _extension_details(details: Any) -> list[str]:
    """An extension message's ``details`` as the page's "Details:" (Pi's UI may render
    from them; the Markdown left them out), nothing when empty."""
    if details in (None, {}, []):
        return []
    return ["*Details:*", "", fenced(json_text(details, 2), "json"), ""]


def _after(out: list[str], block: list[str]) -> list[str]:
    """A block's parts to add after ``out``, then a blank line. An indented block after
    one that ends in a list was read as part of the list's last item (its code lines as a
    paragraph): a blank HTML comment ends the list first, as CommonMark advises."""
    first = next((part for part in block if part), "")
    before = next((part for part in reversed(out) if part), "")
    if first[:1] in (" ", "\t") and before and ends_in_a_list(before):
        return [LIST_END, "", *block, ""]
    return [*block, ""]


def _paragraphs(notes: list[str]) -> list[str]:
    return [part for note in notes for part in (note, "")]


def _pasted(text: str, level: int) -> str:
    return prose(fence_pasted_diffs(text), level)


def _prompt(text: str, level: int) -> list[str]:
    """A prompt's text: a skill Pi wrapped around it (``<skill name=…>``) as a quoted block
    under its name, as the page folds it (the wrapper came out as raw markup)."""
    skill, rest = split_skill(text)
    if skill is None:
        return [_pasted(text, level)]
    name, body = skill
    said = [quoted(f"**Skill** {code_span(name)}\n\n" + prose(body, level))]
    return [*said, "", _pasted(rest, level)] if rest.strip() else said


def _block(block: dict[str, Any], level: int) -> list[str]:
    """One content block; headings in its text go below the entry's heading (``level``)."""
    kind = block.get("type")
    if kind == "text":
        return [prose(as_str(block.get("text")) or "", level)]
    if kind == "thinking":
        text = as_str(block.get("thinking")) or ""
        redacted = block.get("redacted") is True  # Pi's placeholder text, not the thinking
        said = "**Thinking** (redacted by the provider)" if redacted else "**Thinking**"
        if text.strip():
            return [quoted(f"{said}\n\n" + prose(text, level))]
        return [quoted(said)] if redacted else []
    if kind == "image":
        return [_image_note(block)]
    if kind == "redacted_thinking":
        return ["*(thinking the provider keeps encrypted)*"]
    if (document := document_view(block)) is not None:
        return _document_said(document)[:-1]
    return [_json_fence(block)]


#: How deep :func:`_without_blobs` looks (a value nested deeper is shown as it is).
_BLOB_DEPTH = 64


def _without_blobs(value: Any, depth: int = 0) -> Any:
    """A block as JSON shows it, a base64 ``source``'s data (a PDF's, of megabytes) said by
    its type and size instead: bytes nobody reads in a document meant for reading."""
    if depth > _BLOB_DEPTH:
        return value
    if isinstance(value, list):
        return [_without_blobs(item, depth + 1) for item in value]
    if not isinstance(value, dict):
        return value
    data = value.get("data")
    # (Pi's image block, ``{"type": "image", "data": …}``, as a source's: an unknown role's
    # screenshot put 600 KB of base64 into the document)
    if isinstance(data, str) and (
        value.get("type") == "base64" or (value.get("type") == "image" and _blob(data))
    ):
        size = len(data) * 3 // 4
        mime = as_str(value.get("media_type")) or as_str(value.get("mimeType")) or "data"
        said = f"[{mime}, {fmt_int(size)} bytes of base64: not in the Markdown]"
        return {**value, "data": said}
    return {key: _without_blobs(item, depth + 1) for key, item in value.items()}


#: Base64 as an image's data holds it, whole or wrapped in lines (``base64``, MIME)
_BASE64_HEAD = re.compile(r"[A-Za-z0-9+/=\r\n]+")


def _blob(data: str) -> bool:
    """Image data worth no reading (base64 of some length), not an address or a note."""
    return len(data) >= 256 and _BASE64_HEAD.fullmatch(data, 0, 1024) is not None


def _image_note(block: dict[str, Any]) -> str:
    """An image block as the document says it: where ``--images`` puts it, else a note of
    its type and size (the bytes it holds: the length of its base64 counted its padding
    and line breaks, 75 bytes for a 73-byte file) and whether the page shows it."""
    held = _held_by_files_api(block)
    if held is not None:
        return held
    data = block.get("data")
    image = read_image(data)
    mime = as_str(block.get("mimeType")) or "image"
    if image is None:  # the page shows none either (safe_image_src: the same test)
        return f"*[{escaped(mime)}{_no_picture(data)}]*"
    amount = _amount(len(image[1]))
    sink = _IMAGES.get()
    if sink is not None:
        return sink.said(data, *image, escaped(f"{mime}, {amount}"))
    return f"*[{escaped(mime)}, {amount}: not in the Markdown; the page shows it]*"


#: Said of an image block whose data is empty: a redacted copy empties the data of an
#: image that is no picture (its bytes cannot be scanned), which read "0 bytes".
IMAGE_LEFT_OUT = (
    "its bytes are not in this file (a redacted copy leaves out those of an image that are "
    "neither a picture nor text)"
)


def _no_picture(data: Any) -> str:
    """What the note says of an image's data that is no picture the page shows, after its
    type: the bytes it holds (``decoded_size``), or why it holds none; never "0 bytes" for
    data a redacted copy emptied, or that is not there or not text."""
    if isinstance(data, str) and data.strip():
        return f", {_amount(decoded_size(data))}: not shown: unsupported or invalid data"
    if isinstance(data, str):
        return f": not shown: {IMAGE_LEFT_OUT}"
    if data is None:
        return ": not shown: the block holds no data"
    kind = {dict: "an object", list: "a list", bool: "true or false"}.get(type(data), "a number")
    return f": not shown: its data is {kind}, not base64 text"


def _amount(size: int) -> str:
    """A count of bytes as the image notes say it (``1,000 bytes``, ``12 KB``)."""
    return f"{fmt_int(size)} bytes" if size < 1024 else f"{fmt_int(size // 1024)} KB"


def _held_by_files_api(block: dict[str, Any]) -> str | None:
    """The page's note for an image the Anthropic Files API holds, in the document's words."""
    held = files_api_image(block)
    return None if held is None else f"*[{escaped(held)}]*"


#: The longest error message said on its line; longer ones, and any with a line break, are
#: fenced whole.
ONE_LINE_ERROR = 200


def _stop_reason(entry: MessageEntry) -> list[str]:
    """How the turn ended, when not plainly, and what the provider said besides: the
    page's notes (an aborted turn's own message, an unknown stop reason, an error message
    on a turn that stopped, the provider's diagnostics were left out)."""
    reason, said = entry.stop_reason, (entry.error_message or "").strip()
    out: list[str] = []
    if reason == "error" and not said and "errorMessage" in odd_values(entry):
        out += ["> **Error** (its errorMessage is not text: shown below as written)", ""]
    elif reason == "error":
        out += _said("Error", said) if said else ["> **Error** (no message)", ""]
    elif reason == "aborted":
        out += ["> **Aborted** by the user", ""] if is_interrupt(said) else _said("Aborted", said)
    elif reason == "length":
        out += ["> **Cut off** at the output-token limit", ""]
    elif reason not in (None, "stop", "toolUse"):
        out += [f"> **Stopped:** {code_span(reason)} (stopReason)", ""]
    if reason not in ("error", "aborted") and said:
        out += _said("Error message", said)
    for note in diagnostic_notes(entry.message.get("diagnostics")):
        label, _, rest = note.partition(": ")
        out += _said(label, rest)
    return out


def _said(label: str, said: str) -> list[str]:
    """``> **label:** said``: a short one-line text on the line, as code (a fence made five
    lines of it); else whole, its lines kept (an API error's JSON body, a stack trace)."""
    if not said:
        return [f"> **{label}**", ""]
    if "\n" not in shown(said).strip() and len(said) <= ONE_LINE_ERROR:
        return [f"> **{label}:** {code_span(said)}", ""]
    return [quoted(f"**{label}:**\n\n{fenced(said)}"), ""]


# --- tools --------------------------------------------------------------------------------


def _tool(
    call: dict[str, Any] | None, result: MessageEntry | None, elsewhere: str = ""
) -> list[str]:
    """One call and its result, per tool as the page shows them, nothing folded; a blank
    line between the parts (two fences in a row read as one block). ``call`` None: a
    result whose call was not found (its heading says so). ``elsewhere``: where the
    result of a call without one here is (``_Writer._result_elsewhere``)."""
    view = _page_view(call, result) if call is not None else None
    out: list[str] = []
    read = view.read_details if view is not None else set()  # the details the parts show
    parts = [*_tool_parts(call or {}, result, view, elsewhere), *_result_documents(result)]
    parts += [*_odd_result(result), *_details(result, read)]
    for part in parts:
        if part:
            out += [part, ""]
    return out[:-1]


def _page_view(call: dict[str, Any], result: MessageEntry | None) -> ToolView:
    """The page's view of a call (``render.tools``), for what it says beyond the
    Markdown's own parts: the facts on its line (a timeout, a workdir), the arguments its
    view does not show, its notes. The name is the one the Markdown goes by (the result's
    when the call has none). Built on the result without its content: those facts come
    from the call and the result's details and flags, and highlighting a read file's text
    (most of the view's cost) would be thrown away."""
    name = _tool_name(call, result)
    bare = None
    if result is not None:
        message = {**result.message, "content": []}
        bare = dataclasses.replace(result, raw={**result.raw, "message": message})
    return build_tool_view({**call, "name": name}, bare, result_odd=False)


def _tool_name(call: dict[str, Any], result: MessageEntry | None) -> str:
    return as_str(call.get("name")) or (result.tool_name if result else None) or "?"


def _odd_result(result: MessageEntry | None) -> list[str]:
    """What the page shows of a result as written (blocks of a type Pi does not write: a
    PDF Claude Code read as a ``document``, a ``tool_reference``), which the Markdown had
    left out without a word."""
    odd = odd_values(result) if result is not None else {}
    if not odd:
        return []
    return [_odd_heading("the result"), _json_fence(odd)]


#: The page's words over an entry's values it shows as written (``render.odd_values``).
_ODD_SAID = "Not of the type Pi writes, so shown as written:"


def _odd_heading(where: str = "") -> str:
    """The line over values shown as written (``where``: whose, when the line above does
    not say it)."""
    return f"*In {where}, {_ODD_SAID[0].lower()}{_ODD_SAID[1:]}*" if where else f"*{_ODD_SAID}*"


def _json_fence(value: Any) -> str:
    """Values shown as written: their JSON in a fence, without picture or document bytes."""
    return fenced(json_text(_without_blobs(value), 2), "json")


def _odd_said(entry: Entry, where: str = "") -> list[str]:
    """The values of an entry that are not of the type Pi writes (a text block's ``text``
    that is a list, a summary that is an object, a bare string as a block), under it as
    written, as the page shows them: the Markdown dropped them without a word, or said
    what was untrue ("empty message", "no summary"). ``where``: which entry, when the
    line above does not say it (a run of changes)."""
    odd = odd_values(entry)
    if not odd:
        return []
    return [_odd_heading(where), "", _json_fence(odd), ""]


def _session_named(entry: SessionInfoEntry) -> str:
    """A session name entry's line; a name that is no text is not a name cleared (the
    value is shown as written under it)."""
    if entry.name:
        return f"*Session named {code_span(entry.name)}*"
    if not_text(entry.raw.get("name")):
        return "*Session named with a value that is not text*"
    return "*Session name cleared*"


def _details(result: MessageEntry | None, shown: set[str]) -> list[str]:
    """The result's structured ``details`` but what the view showed of them, as the page's
    "Details (the tool's structured result)": for an extension's or an MCP tool, often
    the real payload."""
    details = result.message.get("details") if result else None
    if isinstance(details, dict):
        details = {k: v for k, v in details.items() if k not in shown}
    if details in (None, {}, []):
        return []
    return ["*Details (the tool's structured result):*", fenced(json_text(details, 2), "json")]


def _output(text: str, info: str = "") -> str:
    """A tool's output fenced; the note ``--no-tool-output`` left in its place as a note
    (in a fence it was highlighted as the file's language)."""
    if LEFT_OUT_NOTE.fullmatch(text.strip()):
        return f"*{escaped(text.strip())}*"
    return fenced(text, info)


#: How the page's notes on a call cut off before its arguments were whole begin (a write's,
#: an edit's): the Markdown says an edit's its own way (``_cut_edit``).
_INCOMPLETE = WRITE_CUT_OFF.partition(":")[0]


def _notes(view: ToolView | None, *, own_cut_off: bool = False) -> list[str]:
    """The page's notes on a call, each a line of its own as the page has them (Pi's
    truncation, an update_plan's explanation, a search that ran on the provider's servers,
    a result that names another tool), and its warnings of arguments that are not text.
    ``own_cut_off``: the Markdown says the call's cut-off its own way."""
    if view is None:
        return []
    notes = [n for n in view.notes if not (own_cut_off and n.startswith(_INCOMPLETE))]
    notes += [f"[invalid arg] {name} is not a string" for name in view.invalid_args]
    return [_note(note) for note in notes]


def _note(note: str) -> str:
    """A note in italics, as a sentence."""
    said = escaped(note)
    said = said[:1].upper() + said[1:]
    return f"*{said}{'' if said.endswith(('.', ':', '!', '?')) else '.'}*"


def _subtitle(view: ToolView | None) -> str:
    """What the page's line says after the call's name and target (a timeout, a workdir,
    an exec_command's limits; a write's lines, an edit's +/−)."""
    return f" · {escaped(view.subtitle)}" if view is not None and view.subtitle else ""


def _other_args(view: ToolView | None, args: dict[str, Any]) -> list[str]:
    """The call's arguments the page's view of it does not show, as its "Other
    arguments:" has them (a Claude Code Bash call's description, a write's append)."""
    if view is None or view.other_args is None:
        return []
    rest = {key: value for key, value in args.items() if key not in view.used_args}
    return ["*Other arguments:*", fenced(json_text(rest, 2), "json")] if rest else []


def _tool_parts(
    call: dict[str, Any], result: MessageEntry | None, view: ToolView | None, elsewhere: str = ""
) -> list[str]:
    """The call and its result as the Markdown shows each tool; what the page's ``view``
    says beyond that (the facts on its line, its notes, the arguments its view does not
    show) with the tool's own parts, in the page's order."""
    name = _tool_name(call, result)
    args = call.get("arguments")
    args = args if isinstance(args, dict) else {"arguments": args} if args is not None else {}
    text = result.text if result else ""
    status = _status(result, view, elsewhere)
    notes = _notes(view)
    if name == "bash" and isinstance(args.get("command"), str):
        head = f"**bash**{_subtitle(view)}{status}"
        output = terminal_text(text)
        # Pi's bash says a code ("Command exited with code N") only when the command
        # failed: "exit 7" on a call that succeeded and printed "exit code: 7" was untrue
        match = EXIT_CODE.search(output[-200:]) if result and result.is_error else None
        if match:
            head += f" · exit {match.group(1)}"
        out = [head, *notes, fenced(args["command"], "sh"), *_other_args(view, args)]
        return [*out, *([_output(output)] if output else []), *_images(result)]
    if name in ("read", "write") and isinstance(_path(args), str):
        path = _path(args)
        said = code_span(path) + (read_line_range(args) if name == "read" else _subtitle(view))
        out = [f"**{name}** {said}{status}", *notes, *_other_args(view, args)]
        content = args.get("content")
        if name == "write" and content is None:  # not an empty file written (a note says)
            return out + ([_output(text)] if text.strip() else []) + _images(result)
        if name == "write":  # every line written, blank ones at the end too, as the
            # page counts and shows them (content not text: as the page shows it, its JSON)
            body = content if isinstance(content, str) else json_text(content)
        elif result is None:  # nothing was read: the line says so (an empty block said more)
            return out
        else:
            body = text.rstrip("\n")
        if not (name == "read" and not body and _holds_documents(result)):  # a PDF read
            out += [_output(body, _language(path))]  # (said below: no empty block first)
        if name == "write" and text.strip():
            out += [_output(text)]
        return out + _images(result)
    if name == "edit" and isinstance(_path(args), str):
        path = _path(args)
        diff = as_str(result.details.get("diff")) if result else None
        cut: list[str] = []
        computed_from: int | None = None  # the call's replacements a diff was computed from
        if not diff:  # the pairs read once: a cut-off call's parts, else the diff of the whole ones
            probe = ToolView(call_id="", name="edit", kind="edit")
            pairs = edit_pairs(args, probe)
            cut = _cut_edit(args, path, pairs, probe)
            whole = [(o, n) for o, n in pairs if o is not None and n is not None]
            if not cut:
                diff = computed_diff(whole, path) if whole else ""
                computed_from = len(whole)
        if cut:  # the Markdown says what is missing its own way
            notes = _notes(view, own_cut_off=True)
        out = [f"**edit** {code_span(path)}{_subtitle(view) if diff else ''}{status}", *notes]
        if diff:  # said as the page labels it: not the tool's diff, or not applied
            label = edit_diff_label(computed_from, bool(result and result.is_error))
            out += _other_args(view, args)
            out += [f"*{escaped(label[:1].upper() + label[1:])}.*"] if label else []
            out += [fenced(diff.rstrip("\n"), "diff")]
        elif cut:  # its other arguments are among its parts
            out += cut
        else:
            out += [fenced(_json(args), "json")]
        return out + ([_output(text)] if text.strip() else []) + _images(result)
    if name == "apply_patch" and (patch := patch_diff(as_str(args.get("input")) or "")):
        files = ", ".join(code_span(f.label()) for f in patch.files)
        out = [f"**apply_patch** {files} · +{patch.added} −{patch.removed}{status}", *notes]
        out += [*_other_args(view, args), fenced(patch.diff.rstrip("\n"), "diff")]
        return out + ([_output(text)] if text.strip() else []) + _images(result)
    if name in TODO_TOOLS and (todos := todo_items(args)) is not None:
        out = [f"**{name}** · {todo_done(todos)}{status}", *notes, *_other_args(view, args)]
        out += ["\n".join(_todo_line(item) for item in todos)]
        return out + ([_output(text)] if text.strip() else []) + _images(result)
    if name in _LISTINGS:
        said = " ".join(f"{k}={_json(v)}" for k, v in args.items())
        listed = listing_count(name, text.rstrip()) if result and not result.is_error else ""
        count = f" · {listed}" if listed else ""  # none for a note of nothing listed
        out = [f"**{name}** {code_span(said) if said else ''}{count}{status}", *notes]
        return out + ([_output(text.rstrip("\n"))] if text.strip() else []) + _images(result)
    out = [f"**{escaped(name)}**{status}", *notes, fenced(_json(args), "json")]
    return out + ([_output(text)] if text.strip() else []) + _images(result)


def _cut_edit(
    args: dict[str, Any],
    path: str,
    pairs: list[tuple[str | None, str | None]],
    probe: ToolView,
) -> list[str]:
    """An edit call cut off before its arguments were whole (an aborted turn, the output
    limit): the texts that could be read as code, each under its name, and what is
    missing (its arguments were one escaped JSON string). Empty when nothing is missing.
    ``pairs`` and ``probe``: what ``edit_pairs`` read of ``args`` (and the keys it used)."""
    if not pairs or all(o is not None and n is not None for o, n in pairs):
        return []
    language = _language(path)
    out: list[str] = []
    missing: list[str] = []
    for number, (old, new) in enumerate(pairs, 1):
        which = f" ({number} of {len(pairs)})" if len(pairs) > 1 else ""
        for name, value in (("oldText", old), ("newText", new)):
            if value is None:
                missing.append(code_span(name) + which)
            else:
                out += [f"*{name}{which}:*", fenced(value, language)]
    said = " and ".join(missing) if len(missing) < 3 else ", ".join(missing)
    note = f"*Cut off: the call's arguments end before its {said}; what could be read is below.*"
    rest = {k: v for k, v in args.items() if k not in ("path", "file_path", *probe.used_args)}
    extra = ["*Other arguments:*", fenced(_json(rest), "json")] if rest else []
    return [note, *out, *extra]


def _todo_line(item: dict[str, Any]) -> str:
    """A to-do item as a task-list line, its state in words unless done or to do."""
    status = item.get("status")
    said = {"completed": "", "pending": "", "in_progress": " *(under way)*"}.get(
        status if isinstance(status, str) else "", f" *(state: {escaped(_json(status))})*"
    )
    if item.get("priority") is not None:
        said += f" *(priority: {escaped(_json(item['priority']))})*"
    return f"- [{'x' if status == 'completed' else ' '}] {escaped(item['content'])}{said}"


def _status(result: MessageEntry | None, view: ToolView | None = None, elsewhere: str = "") -> str:
    """What the page's line says of a call's result: none (or where it is), failed."""
    if result is None:  # a search the provider ran has none to wait for (the page's words)
        if view is not None and view.status == "remote":
            return " · *results not recorded*"
        return f" · *{elsewhere}*" if elsewhere else " · *no result*"
    return " · **failed**" if result.is_error else ""


def _path(args: dict[str, Any]) -> Any:
    return args.get("path", args.get("file_path"))


def _language(path: str) -> str:
    return language_for_path(path) or ""


def _json(value: Any) -> str:
    return json_text(value, 2)


def _images(result: MessageEntry | None) -> list[str]:
    if result is None:
        return []
    return [_image_note(b) for b in result.content if b.get("type") == "image"]


def _shell(entry: MessageEntry) -> Iterator[str]:
    """A ``!`` command, its output and how it ended; a command that is no text (a list of
    arguments) is shown as written under the entry, not as an empty block."""
    command = entry.message.get("command")
    if command is None or isinstance(command, str):
        yield fenced(entry.command, "sh")
    output = terminal_text(entry.output)
    if output:
        yield ""
        yield _output(output)
    said = []
    if entry.exit_code is not None:
        said.append(f"exit {entry.exit_code}")
    if entry.message.get("cancelled") is True:
        said.append("cancelled")
    if entry.message.get("truncated") is True:
        path = as_str(entry.message.get("fullOutputPath"))  # the page's words
        said.append(
            f"output truncated by Pi (full output: {code_span(path)})"
            if path
            else "output truncated by Pi"
        )
    if entry.excluded_from_context:
        said.append("not sent to the model (!!)")
    if said:
        yield ""
        yield f"*{' · '.join(said)}*"
