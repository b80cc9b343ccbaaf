"""Session -> view objects for the page: transcript items, branch blocks and the outline.

The transcript is the whole tree laid out once: the active path as the main line, and at
each fork every other child as a collapsed branch block holding its own main line, nested
for nested forks. Each entry appears exactly once. Built iteratively (no recursion), so
deep or pathological trees cannot overflow the stack the way Pi's page does.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import Any

from exporter.entries import CONTEXT_ENTRY_TYPES, DamagedLine, Entry, MessageEntry
from exporter.formatting import fmt_cost, one_line, terminal_text
from exporter.render.entry_lines import (
    call_answered,
    entry_row_text,
    only_tool_calls,
    prompt_preview,
)
from exporter.render.entry_views import ENTRY_BUILDERS, unknown_view
from exporter.render.folding import fold_text
from exporter.render.markup import highlight, text_direction
from exporter.render.model import (
    BranchInfo,
    ContextRun,
    EntryView,
    Item,
    OutlineRow,
    empty_under_filters,
)
from exporter.render.odd_values import odd_values
from exporter.render.tools import ToolView, json_text
from exporter.session import Session, parse_time
from exporter.usage import sum_usage

log = logging.getLogger(__name__)

DEDUPE_MIN_CHARS = 400
_SAFE_ANCHOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:~-]{0,80}\Z")  # HTML ids may start with a digit


# ids the page itself uses, and prefixes of ids it derives (branch blocks, damaged lines)
RESERVED_IDS = frozenset(
    {"tree", "sidebar", "content", "transcript", "usage", "usage-h", "chart-title", "damaged",
     "theme-toggle", "toggle-thinking", "toggle-tools", "download-jsonl", "tree-search",
     "tree-status", "session-jsonl", "outline-open", "keys-toggle", "keys-help",
     "ts-help", "tree-keys", "session-data", "lnk"}  # page.js makes ts-help and tree-keys;
)  # fmt: skip  # session-data: Pi's own block (share --pi-viewer), which its viewers look up;
# lnk: the one "Link to this entry" every "#" link is named by (aria-labelledby: 373 copies
# of the words were 11 KB of pi-large-session's page)
RESERVED_PREFIXES = ("branch-", "line-", "flt-", "e-")
#: A fork with more alternatives than this folds them into one block, or a 50-way fork put
#: 49 branch summaries (2,700 px) between the fork and the rest of the conversation.
GROUP_BRANCHES_OVER = 8
#: Branch blocks nest at most this deep; a fork deeper down puts its branches after the
#: block it sits in, each saying where it forks. Each level is two elements, and Chromium's
#: parser stops nesting at 512: a staircase of 400 retries lost its shape at level 254.
MAX_BRANCH_NESTING = 120


BRANCH_TITLE_CHARS = 80  # a branch's title, in its block and in the table of branches


def build_anchors(entry_ids: list[str]) -> dict[str, str]:
    """A unique, safe DOM id for every entry (in file order, so they are stable).

    The entry id itself when it is a plain token that collides with nothing; else a
    stable ``e-<hash>``. Session ids are untrusted and may look like the page's own ids.
    """
    anchors: dict[str, str] = {}
    used: set[str] = set(RESERVED_IDS)
    for entry_id in entry_ids:
        candidate = entry_id
        if (
            not _SAFE_ANCHOR.match(candidate)
            or candidate in used
            or candidate.startswith(RESERVED_PREFIXES)
        ):
            digest = hashlib.sha256(entry_id.encode("utf-8", "surrogatepass")).hexdigest()
            candidate = "e-" + digest[:24]
            n = 2
            while candidate in used:
                candidate = f"e-{digest[:24]}-{n}"
                n += 1
        anchors[entry_id] = candidate
        used.add(candidate)
    return anchors


#: is_before walks up the tree for this many questions, then uses the tree's spans (chained
#: compactions asked it once each: walking every path was quadratic).
PATH_WALKS_BEFORE_SPANS = 8


class PageBuilder:
    """Builds transcript items and outline rows for one session (one pass each)."""

    def __init__(self, session: Session, display_path: Callable[[str], str]) -> None:
        self.session = session
        self.show = display_path
        self.path_set = set(session.active_path)
        self.compacted = session.context_status()
        self._mark_branch_compactions()
        self.anchors = build_anchors([e.id for e in session.entries])
        # Filled by plan(): results shown inside their call, and repeated long outputs.
        self.consumed: set[str] = set()
        self.shown_in: dict[str, str] = {}  # result id -> the message showing it
        self.same_output: dict[str, str] = {}  # result -> anchor of the copy shown in full
        self.result_forks: dict[str, int] = {}  # a result shown with its call -> forks there
        self._outputs: dict[str, list[str]] = {}  # long output text -> results, in page order
        self.runs_open_at_end = 0  # out-of-context runs the page closes after its last item
        self._spans: dict[str, tuple[int, int]] | None = None  # see _tree_spans
        self._path_walks = 0  # is_before's questions answered by a walk up (see there)

    def anchor(self, entry_id: str) -> str:
        """The DOM id of an entry (see :func:`build_anchors`)."""
        return self.anchors.get(entry_id) or "e-missing"

    def is_before(self, earlier: str, entry_id: str) -> bool:
        """``earlier`` is on the path from the root to ``entry_id`` (or is it): one lookup
        in the tree's pre-order spans (walking each path was quadratic in chained
        compactions)."""
        if self._spans is None and self._path_walks < PATH_WALKS_BEFORE_SPANS:
            # a few questions (a session's compactions) walk up from entry_id: the whole
            # tree's spans cost ~50 ms on a 25 MB session, one path ~1 ms
            self._path_walks += 1
            by_id = self.session.by_id
            if earlier not in by_id or entry_id not in by_id:
                return False
            return earlier in self.session.path_to(entry_id)
        spans = self._tree_spans()
        outer, inner = spans.get(earlier), spans.get(entry_id)
        return outer is not None and inner is not None and outer[0] <= inner[0] <= outer[1]

    def _tree_spans(self) -> dict[str, tuple[int, int]]:
        """The session's pre-order spans, made once for the plan and the entries alike
        (made at plan time, forked children inherit them)."""
        if self._spans is None:
            self._spans = self.session.subtree_spans()
        return self._spans

    def dedupe_output(self, tool: ToolView) -> None:
        """Show a long output once; its other copies link to it (see :meth:`_pick_shown`)."""
        if tool.result_entry_id is not None and tool.output is not None:
            tool.same_output_as = self.same_output.get(tool.result_entry_id)

    def _note_output(self, result: Entry) -> None:
        """Record a shown result in page order (plan time), for :meth:`dedupe_output`."""
        text = result.text if isinstance(result, MessageEntry) else ""
        if len(text) >= DEDUPE_MIN_CHARS:
            self._outputs.setdefault(text, []).append(result.id)

    def _pick_shown(self) -> None:
        """Which copies of a repeated long output are shown in full: the first on each path
        from the root. A copy whose path holds a copy shown in full links to that one, which
        the reader has passed on the way; a copy in another branch is shown again (it linked
        to an output outside its branch, at times one further down the page)."""
        groups = [ids for ids in self._outputs.values() if len(ids) > 1]
        self._outputs = {}
        on_path = self.path_set
        one_path = [ids for ids in groups if all(i in on_path for i in ids)]
        if one_path:  # all on the active path (a linear session): the first there shows
            path_place = {entry_id: n for n, entry_id in enumerate(self.session.active_path)}
            for ids in one_path:
                first = min(ids, key=path_place.__getitem__)
                for result_id in ids:
                    if result_id != first:
                        self.same_output[result_id] = self.anchor(first)
        branched = [ids for ids in groups if not all(i in on_path for i in ids)]
        spans = self._tree_spans() if branched else {}
        for ids in branched:
            shown: list[str] = []  # shown copies that hold the current one in their subtree
            for result_id in sorted(ids, key=lambda i: spans[i][0]):
                at = spans[result_id][0]
                while shown and spans[shown[-1]][1] < at:
                    shown.pop()
                if shown:
                    self.same_output[result_id] = self.anchor(shown[-1])
                else:
                    shown.append(result_id)

    def _note_results(self, entry: Entry, line_set: set[str]) -> None:
        """What rendering ``entry`` shows besides itself: the results of its tool calls
        (they render next to their call, not again on their own) and its outputs."""
        if not isinstance(entry, MessageEntry):
            return
        role = entry.role
        if role == "toolResult":
            self._note_output(entry)
        elif role == "assistant":
            content = entry.message.get("content")
            if not isinstance(content, list):
                return
            for index, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    result = self.session.result_for_call(entry.id, index, within=line_set)
                    if result is not None:
                        self.consumed.add(result.id)
                        self.shown_in[result.id] = entry.id
                        if isinstance(result, MessageEntry):
                            self._note_output(result)

    def _mark_branch_compactions(self) -> None:
        """A compaction inside a branch takes entries out of that branch's context: mark
        them as on the active path. Each entry is judged along the line it is shown in (a
        compaction in a sub-branch does not change what the line it forks from keeps), and
        entries of the active path only at its leaf (``--leaf`` before a compaction). Each
        line is judged once, however many compactions it holds."""
        session = self.session
        judged: set[str] = set()
        for entry in session.entries:
            if entry.type != "compaction" or entry.id in self.path_set or entry.id in judged:
                continue
            line = self._line_through(entry.id)
            members = set(line)
            judged |= members
            dropped = session.context_status(session.path_to(line[-1]))
            for entry_id, compaction_id in dropped.items():
                if entry_id in members and entry_id not in self.path_set:
                    self.compacted.setdefault(entry_id, compaction_id)

    def _line_through(self, entry_id: str) -> list[str]:
        """The line of the page (see :meth:`main_line`) that shows ``entry_id``."""
        start = entry_id
        while True:
            parent = self.session.parent_of(start)
            if parent is None or self.session.next_on_line(parent, self.path_set) != start:
                return self.main_line(start)
            start = parent

    # -- main line of a subtree -----------------------------------------------------
    def main_line(self, start: str) -> list[str]:
        """From ``start`` down: follow the active path, else the newest child (Pi's rule)."""
        return self.session.line_from(start, self.path_set)

    def plan(self) -> list[Item]:
        """Items in page order; each fork's alternatives follow the fork entry directly.

        Entry items are not rendered yet (see :meth:`render_item`): planning fixes every
        decision that depends on page order, so items can then be rendered in any order.
        """
        session = self.session
        if not session.roots:
            return []
        main_root, other_roots = session.page_roots()
        # Work: ("line", ids, id_set, position, depth) | ("open", id, depth[, fork id])
        #       | ("close", depth)
        #       | ("group_open", count) | ("group_close",)
        work: list[tuple[Any, ...]] = []
        for root in reversed(other_roots):
            work += [("close", 1), ("line", *self._line(root), 0, 1), ("open", root, 1)]
        work.append(("line", *self._line(main_root), 0, 0))
        items: list[Item] = []
        groups: list[tuple[Item, list[bool]]] = []  # open groups: [a label shown, a user message]
        while work:
            task = work.pop()
            if task[0] in ("close", "group_close"):
                items.append(Item(task[0]))
                if task[0] == "group_close":
                    group, (labeled, user) = groups.pop()
                    group.group_classes = empty_under_filters(labeled=labeled, user=user)
            elif task[0] == "group_open":
                items.append(Item("group_open", group_size=task[1]))
                groups.append((items[-1], [False, False]))
            elif task[0] == "open":
                branch = self.branch_info(task[1], task[2])
                if len(task) > 3:  # placed after the block its fork sits in (nesting cap)
                    branch.forks_at = self.anchor(task[3])
                items.append(Item("open", branch=branch))
                for _, holds in groups:  # a branch's counts cover the branches inside it
                    holds[0] |= branch.has_label_shown
                    holds[1] |= branch.has_user
            else:
                self._run_line(task, work, items)
        self._pick_shown()
        self._mark_context_runs(items)
        return items

    def _mark_context_runs(self, items: list[Item]) -> None:
        """Group each run of entries out of the model's context, per block (see Item).

        The page says it once, at the top of a run that a line beside it spans (and which
        compaction), not only on each of what can be hundreds of entries. Neither a branch
        block nor a marker the model never sees ends a run; an entry it does see, a
        different compaction, or the end of the block does.
        """
        open_runs: list[ContextRun | None] = [None]
        for item in items:
            if item.kind in ("open", "group_open"):
                open_runs.append(None)
            elif item.kind in ("close", "group_close"):
                if len(open_runs) > 1:
                    item.runs_closed += open_runs.pop() is not None
            else:
                compaction_id = self.compacted.get(item.entry_id)
                run = open_runs[-1]
                if compaction_id is None:
                    entry = self.session.by_id[item.entry_id]
                    if run is not None and entry.type in CONTEXT_ENTRY_TYPES:
                        item.runs_closed += 1  # a kept entry ends the run
                        open_runs[-1] = None
                    continue  # markers (model changes, labels) do not
                anchor = self.anchor(compaction_id)
                if run is None or run.compaction_anchor != anchor:
                    item.runs_closed += run is not None
                    compaction = self.session.by_id.get(compaction_id)
                    time = None if compaction is None else compaction.moment or compaction.timestamp
                    item.context_run = open_runs[-1] = ContextRun(anchor, time)
        self.runs_open_at_end = sum(run is not None for run in open_runs)

    def _line(self, start: str) -> tuple[list[str], set[str]]:
        line = self.main_line(start)
        return line, set(line)

    def _run_line(self, task: tuple[Any, ...], work: list[Any], items: list[Item]) -> None:
        """Emit a main line until a fork; then queue the rest behind the fork's branches."""
        _, line, line_set, position, depth = task
        for index in range(position, len(line)):
            entry_id = line[index]
            item = None
            if entry_id not in self.consumed:
                item = Item("entry", entry_id=entry_id, line_set=line_set)
                items.append(item)
                self._note_results(self.session.by_id[entry_id], line_set)
            alternatives = self.session.alternatives(entry_id, line_set)
            if alternatives:
                if item is not None:
                    item.forks_here = len(alternatives)
                else:  # a result shown inside its call's message: the badge goes there
                    self.result_forks[entry_id] = len(alternatives)
                work.append(("line", line, line_set, index + 1, depth))
                capped = depth >= MAX_BRANCH_NESTING
                level = depth if capped else depth + 1
                blocks: list[tuple[Any, ...]] = []
                grouped = len(alternatives) > GROUP_BRANCHES_OVER
                if grouped:
                    blocks.append(("group_close",))
                for alt in reversed(alternatives):
                    blocks += [("close", level), ("line", *self._line(alt), 0, level)]
                    blocks.append(("open", alt, level, *([entry_id] if capped else [])))
                if grouped:
                    blocks.append(("group_open", len(alternatives)))
                if capped:  # after this branch's own block closes, as its siblings
                    at = max(i for i, t in enumerate(work) if t[0] == "close" and t[1] == depth)
                    work[at:at] = blocks
                else:
                    work += blocks
                return

    def branch_info(self, first_id: str, depth: int) -> BranchInfo:
        session = self.session
        ids = list(session.walk(first_id))
        entries = [session.by_id[i] for i in ids]
        usage = sum_usage(entries)
        times = [t for t in (e.moment for e in entries) if t]
        return BranchInfo(
            first_id=first_id,
            anchor="branch-" + self.anchor(first_id),
            first_prompt=self.branch_title(self.main_line(first_id)),
            entries=len(ids),
            lines=sum(i not in session.children for i in ids),
            cost=fmt_cost(usage.cost),
            last_activity=max(times).isoformat() if times else None,
            labels=[session.labels[i] for i in ids if i in session.labels],
            # a label the Default rules hide (extension data) shows nothing under Labeled
            has_label_shown=any(not self._outline_text(i)[2] for i in ids if i in session.labels),
            has_user=any(getattr(e, "role", None) == "user" for e in entries),
            depth=depth,
            separate=self._why_separate(first_id),
        )

    def _why_separate(self, first_id: str) -> str:
        """Why a line starts a tree of its own ("" when it is a branch): a cut parentId
        loop is told apart from a parent the file lacks."""
        session = self.session
        if session.parent_of(first_id) is not None:
            return ""
        named = session.by_id[first_id].raw.get("parentId")
        if isinstance(named, str) and named in session.by_id:
            return "its parentId loop was cut here"
        if isinstance(named, str) and named in session.parents_on_damaged_lines:
            return f"its parent is on damaged line {session.parents_on_damaged_lines[named]:,}"
        return "its parent is not in this file" if named else "a second root in this file"

    def branch_opening(self, line: list[str]) -> tuple[str | None, str | None]:
        """A branch's first prompt, and what it starts with when that is no prompt (another
        answer to the prompt it forks at, a shell command): None for what it lacks."""
        session = self.session
        first = next(session.iter_messages(line), None)
        prompt = session.first_prompt(line)
        if prompt and (first is None or first.role == "user"):
            return prompt, None
        return prompt, self.row_text(first.id if first is not None else line[0])

    def branch_title(self, line: list[str]) -> str:
        """What a branch (a line of the page) is about, in its block's summary: its first
        prompt; a branch that starts at another answer says that answer first, then its
        first prompt (if it has one)."""
        prompt, opening = self.branch_opening(line)
        if opening is None:
            return prompt_preview(prompt, BRANCH_TITLE_CHARS)
        if not prompt:
            return self.opening_line(opening)
        said = prompt_preview(prompt, BRANCH_TITLE_CHARS // 2)
        return f"{self.opening_line(opening, half=True)} · first prompt: {said}"

    @staticmethod
    def opening_line(opening: str, half: bool = False) -> str:
        """What a branch opens with (an outline row: already plain) cut for its title, to
        half of it beside its first prompt. Not read as a prompt: a command's ``**`` stays."""
        return one_line(opening, BRANCH_TITLE_CHARS // 2 if half else BRANCH_TITLE_CHARS)

    # -- one entry ------------------------------------------------------------------
    def entry_view(self, item: Item) -> EntryView:
        """The view of a planned entry item (pure: reads the plan, changes nothing)."""
        session = self.session
        entry = session.by_id[item.entry_id]
        line_set = item.line_set
        label = session.labels.get(entry.id)
        view = EntryView(
            id=entry.id,
            anchor=self.anchor(entry.id),
            kind=entry.type,
            type=entry.type,
            time=shown_time(entry),
            label=label,
            forks_here=item.forks_here,
            is_leaf=entry.id == session.leaf_id,
        )
        if label:
            view.classes.append("is-labeled")
        if entry.id in self.compacted:
            view.classes.append("compacted")
        builder = ENTRY_BUILDERS.get(type(entry)) or unknown_view
        try:
            builder(self, entry, view, line_set)
            if view.forks_here and "hide-default" in view.classes:
                # a fork at extension state or a label: its header stays under the filters
                # that show what follows it, so the branches below have a place to start
                view.classes.append("fork-at")
            odd = odd_values(entry)
            if odd:  # read as no text by the view: shown as written instead of nowhere
                view.odd = highlight(json_text(odd, 2), "json")
        except Exception as error:  # one odd entry must not cost the reader the whole page
            # ...but a bug in a view must not ship unseen either: it is said on stderr (the
            # id and the error may quote the file: no escape sequence reaches a terminal)
            said = f"{type(error).__name__}: {one_line(str(error), 200)}"
            log.warning(
                "%s",
                terminal_text(
                    f"pi-session: warning: entry {one_line(entry.id, 80)} could not be shown "
                    f"({said}); please report it"
                ),
            )
            view.parts, view.html = [], None
            view.notes.append(
                f"This entry could not be shown ({type(error).__name__}); it is whole in the "
                "session file (and in this page's Download JSONL, unless it was made "
                "without it)."
            )
        return view

    # -- outline ----------------------------------------------------------------------
    def outline(self) -> list[OutlineRow]:
        """Rows for the sidebar, in the transcript's shape.

        A line runs flat (the active path, else the newest child: :meth:`main_line`), and
        a fork's other branches open a sub-list right under its row, as their blocks follow
        it in the transcript; then the line goes on at its own level. Nesting one level per
        fork along a line pushed a session of retries off the sidebar (25 forks: 250 px of
        indent) and past the browser's nesting limit. "open"/"close" rows wrap a branch.
        """
        session = self.session
        if not session.roots:
            return []
        main_root, other_roots = session.page_roots()
        rows: list[OutlineRow] = []
        # work: ("line", ids, id_set, position) | ("open", fork row or None) | ("close",)
        work: list[tuple[Any, ...]] = []
        for root in reversed(other_roots):
            work += [("close",), ("line", *self._line(root), 0), ("open", None)]
        work.append(("line", *self._line(main_root), 0))
        # open sub-lists: (the fork row they leave from, the filters that show a row in them,
        # the entries listed before it)
        open_lists: list[tuple[OutlineRow | None, OutlineRow, set[str], int]] = []
        listed = 0
        while work:
            task = work.pop()
            if task[0] == "open":
                rows.append(OutlineRow("open", classes="" if task[1] else "root"))
                open_lists.append((task[1], rows[-1], set(), listed))
            elif task[0] == "close":
                rows.append(OutlineRow("close"))
                fork_row, opener, shows, before = open_lists.pop()
                # a fork's row (and another tree's note) stays under a filter that shows
                # something in its branches, so they never hang under nothing
                (fork_row or opener).branch_shows |= shows
                if fork_row is not None and listed - before >= FOLD_BRANCH_ROWS:
                    opener.folded = listed - before  # the main line's rows come first
                    opener.branch_shows |= shows  # its fold line shows where the fork does
                if open_lists:
                    open_lists[-1][2].update(shows)
            else:
                _, line, line_set, position = task
                for index in range(position, len(line)):
                    entry_id = line[index]
                    row = self._outline_row(entry_id)
                    rows.append(row)
                    listed += 1
                    if open_lists:
                        open_lists[-1][2].update(row_filters(row))
                    alternatives = self.session.alternatives(entry_id, line_set)
                    if alternatives:
                        work.append(("line", line, line_set, index + 1))
                        for alt in reversed(alternatives):
                            work += [("close",), ("line", *self._line(alt), 0), ("open", row)]
                        break
        for row in rows:
            if row.branch_shows:
                kept = " ".join(f"br-{name}" for name in FILTERS if name in row.branch_shows)
                row.classes = f"{row.classes} {kept}".strip()
        _mark_branch_starts(rows)
        _count_folded_by_filter(rows)
        return _in_chunks(rows) if len(rows) > OUTLINE_CHUNK_FROM else rows

    def row_text(self, entry_id: str) -> str:
        """What the outline says of an entry (label bookmarks reuse it)."""
        return self._outline_text(entry_id)[0]

    def _outline_text(self, entry_id: str) -> tuple[str, str, bool]:
        return entry_row_text(self.session, entry_id, self.show)

    def call_of(self, result_id: str) -> dict[str, Any] | None:
        """The tool call block a result answers, if the file has it."""
        return call_answered(self.session, result_id)

    def _outline_row(self, entry_id: str) -> OutlineRow:
        text, role, hidden = self._outline_text(entry_id)
        classes = [f"r-{role}"]
        if hidden:
            classes.append("hide-default")
        if entry_id in self.session.labels:
            classes.append("is-labeled")
        elif self.shown_in.get(entry_id) in self.session.labels:
            classes.append("in-labeled")  # a result shown in a labeled turn: Labeled shows it
        entry = self.session.by_id[entry_id]
        if role in ("tool", "toolResult") or (
            isinstance(entry, MessageEntry) and only_tool_calls(entry)
        ):
            classes.append("is-tool")
        if role == "user":
            classes.append("is-user")
        if self.session.alternatives(entry_id, ()):
            classes.append("fork")  # the sub-lists below start here
        if row_direction(text) == "rtl":
            classes.append("rtl")
        on_path = entry_id in self.path_set
        return OutlineRow(
            "row",
            anchor=self.anchor(entry_id),
            entry_id=entry_id,
            text=text,
            role=role,
            classes=" ".join(classes),
            label=self.session.labels.get(entry_id),
            on_path=on_path,
            is_leaf=entry_id == self.session.leaf_id,
        )


#: A branch of this many outline rows or more is folded under one line in the outline (a
#: fork's abandoned tries pushed the main line's next row down 51 rows in the demo).
FOLD_BRANCH_ROWS = 4

#: The outline's filters besides All, by the suffix of their radio button's id (flt-...).
FILTERS = ("default", "notools", "user", "labeled")


def filters_showing(classes: list[str]) -> set[str]:
    """The filters whose page.css rules show an outline row with these classes."""
    if "hide-default" in classes:
        return set()
    shown = {"default"}
    if "is-tool" not in classes:
        shown.add("notools")
    if "is-user" in classes:
        shown.add("user")
    if "is-labeled" in classes or "in-labeled" in classes:
        shown.add("labeled")
    return shown


def row_filters(row: OutlineRow) -> set[str]:
    """The filters that show an outline row: by its own classes, or (a fork's row) for
    what its branches show."""
    return filters_showing(row.classes.split()) | row.branch_shows


#: What an outline row says before its entry's own words: "user: ", "skill: pdf · user: ",
#: "assistant: (aborted) ", "[bash]: ".
_ROW_PREFIX = re.compile(
    r"(?:skill: .*? · )?(?:user|assistant): (?:\((?:aborted|error)\) )?|\[[^\]]*\]: "
)


def row_direction(text: str) -> str | None:
    """The direction of an outline row's own words (its prefix is the page's, in English): a
    Hebrew prompt's row laid out left to right with its end cut off showed the prompt's end
    and clipped its start, the right-to-left run's first words past the row's right edge."""
    prefix = _ROW_PREFIX.match(text)
    return text_direction(text[prefix.end() :] if prefix else text)


def _in_chunks(rows: list[OutlineRow]) -> list[OutlineRow]:
    """A long outline's top level cut into chunks of about ``OUTLINE_CHUNK_ROWS`` rows,
    which the browser lays out only when they scroll into view (``content-visibility``):
    10,078 rows took half of a 10k-entry page's load, and pi-large-session's 1,018 a
    quarter of its. A cut falls only before a main-line row, so a fork's row and the
    branches that leave it stay together. Each chunk's ``ul`` is the list its rows are
    items of (the page's template makes the outer list and the chunks' ``li`` role="none"):
    Chromium makes an ``li`` a list item only as the child of a list, and under a
    role="none" ``ul`` pi-large-session's 1,018 rows were no list items at all."""
    out = [OutlineRow("chunk-open")]
    depth = in_chunk = 0
    for row in rows:
        if depth == 0 and row.kind == "row" and in_chunk >= OUTLINE_CHUNK_ROWS:
            out += [OutlineRow("chunk-close"), OutlineRow("chunk-open")]
            in_chunk = 0
        depth += {"open": 1, "close": -1}.get(row.kind, 0)
        in_chunk += row.kind == "row"
        out.append(row)
    out.append(OutlineRow("chunk-close"))
    return out


#: Outlines of more rows than this (open and close markers counted) are cut into chunks: from
#: two chunks on, the second is off screen at load (a chunk is ~4,400 px of rows).
OUTLINE_CHUNK_FROM = 400
OUTLINE_CHUNK_ROWS = 200


def _count_folded_by_filter(rows: list[OutlineRow]) -> None:
    """How many of a folded branch's rows the Default and No tools filters show (they keep
    its fold line): "12 entries" under No tools opened onto 3; only a count that differs
    from the whole is kept (said "3 of 12 entries"). Counted once every fork row
    knows what its branches show, nested branches' rows included, as in ``folded``."""
    stack: list[tuple[OutlineRow, Counter[str]]] = []
    for row in rows:
        if row.kind == "open":
            stack.append((row, Counter()))
        elif row.kind == "close":
            opener, counts = stack.pop()
            if opener.folded:
                opener.folded_by = {
                    name: counts[name]
                    for name in FOLD_COUNT_FILTERS
                    if counts[name] != opener.folded
                }
                # "45 entries in 3 branches", as the transcript's block says of them
                opener.folded_branches = 1 + counts[_NESTED_BRANCHES]
            if stack:
                stack[-1][1].update(counts)
                stack[-1][1][_NESTED_BRANCHES] += 1
        elif stack:
            stack[-1][1].update(row_filters(row))


#: The filters that keep a fold line (User and Labeled list every row, unfolded).
FOLD_COUNT_FILTERS = ("default", "notools")
_NESTED_BRANCHES = " branches"  # (a key no filter's name can be)


def _mark_branch_starts(rows: list[OutlineRow]) -> None:
    """Class each branch's first row that a filter shows ``first-<filter>``: its mark and
    gap go there, so two branches of one fork stay two when a filter hides a first row."""
    unmarked: list[set[str]] = []  # per open sub-list: filters whose first row is still to come
    for row in rows:
        if row.kind == "open":
            unmarked.append(set(FILTERS))
        elif row.kind == "close":
            unmarked.pop()
        elif unmarked and unmarked[-1]:
            shown = row_filters(row)
            firsts = [name for name in FILTERS if name in shown and name in unmarked[-1]]
            if firsts:
                unmarked[-1].difference_update(firsts)
                row.classes += "".join(f" first-{name}" for name in firsts)


#: Damaged lines shown one by one; the rest share one block (a file of 500,000 garbage lines
#: made a 190 MB page when each had its own header).
MAX_DAMAGED_SHOWN = 200


def shown_time(entry: Entry) -> datetime | str | None:
    """The entry's time (as written when it is not one); without one (or as a number), its
    message's own time (epoch milliseconds), which Pi also writes: such an entry showed no
    time at all. A time, not its text, where one was read: the heading's ``time_tag``
    would parse it again."""
    if entry.timestamp:
        return entry.moment or entry.timestamp
    for value in (entry.raw.get("timestamp"), _message_time(entry)):
        moment = parse_time(value) if type(value) in (int, float) and value > 0 else None
        if moment is not None:
            return moment
    return None


def _message_time(entry: Entry) -> Any:
    message = entry.raw.get("message")
    return message.get("timestamp") if isinstance(message, dict) else None


def damaged_views(damaged: list[DamagedLine]) -> list[dict[str, Any]]:
    """One view per damaged line, up to :data:`MAX_DAMAGED_SHOWN`; then one for the rest,
    every line still there with its number and what was wrong with it."""
    views = [
        {
            "line": d.line,
            "kind": d.kind,
            "message": d.message,
            "text": fold_text(d.text, 6),
            "anchor": f"line-{d.line}",
        }
        for d in damaged[:MAX_DAMAGED_SHOWN]
    ]
    rest = damaged[MAX_DAMAGED_SHOWN:]
    if rest:
        text = "\n".join(f"line {d.line} [{d.kind}] {d.text}" for d in rest)
        views.append(
            {
                "line": f"{rest[0].line}–{rest[-1].line}",
                "kind": "more",
                "message": f"{len(rest):,} more damaged lines, together: line number, "
                "[what was wrong], text",
                "text": fold_text(text, 6),
                "anchor": f"line-{rest[0].line}",
            }
        )
    return views
