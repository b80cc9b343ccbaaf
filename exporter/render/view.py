"""Session -> view objects for the page: transcript items, branch blocks and the outline.

The transcript is the whole tree laid out once: the active path as the main line, and at
each fork every other child as a collapsed branch block holding its own main line, nested
for nested forks. Each entry appears exactly once. Built iteratively (no recursion), so
deep or pathological trees cannot overflow the stack the way Pi's page does.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from markupsafe import Markup

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
from exporter.render.outline_html import isolated, quoted_row
from exporter.render.tools import ToolView, json_text
from exporter.session import Session, parse_time
from exporter.usage import turn_usage

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


def build_anchors(entry_ids: list[str], names: list[str] | None = None) -> dict[str, str]:
    """A unique, safe DOM id for every entry (in file order, so they are stable).

    The entry's name (``names``, in the same order; else its id) when it is a plain token
    that collides with nothing; else a stable ``e-<hash>``. Session ids are untrusted and
    may look like the page's own ids. A page's are :func:`entry_anchors`.
    """
    anchors: dict[str, str] = {}
    used: set[str] = set(RESERVED_IDS)
    for entry_id, name in zip(entry_ids, entry_ids if names is None else names, strict=True):
        candidate = name
        if (
            not _SAFE_ANCHOR.match(candidate)
            or candidate in used
            or candidate.startswith(RESERVED_PREFIXES)
        ):
            digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
            candidate = "e-" + digest[:24]
            n = 2
            while candidate in used:
                candidate = f"e-{digest[:24]}-{n}"
                n += 1
        anchors[entry_id] = candidate
        used.add(candidate)
    return anchors


def entry_anchors(session: Session) -> dict[str, str]:
    """Each entry's DOM id (keyed by its id here), made from the name the CLI shows and
    takes for it (:meth:`Session.leaf_name`): ``#a`` is the copy ``--leaf a`` and Pi's
    ``?targetId=a`` choose, the latest of an id written twice, and the earlier is ``#a~1``."""
    entry_ids = [e.id for e in session.entries]
    return build_anchors(entry_ids, [session.leaf_name(i) for i in entry_ids])


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
        self.anchors = entry_anchors(session)
        # Filled by plan(): results shown inside their call, and repeated long outputs.
        self.consumed: set[str] = set()
        self.shown_in: dict[str, str] = {}  # result id -> the message showing it
        self.same_output: dict[str, str] = {}  # result -> anchor of the copy shown in full
        self.result_forks: dict[str, int] = {}  # a result shown with its call -> forks there
        self._outputs: dict[str, list[str]] = {}  # long output text -> results, in page order
        self.runs_open_at_end = 0  # out-of-context runs the page closes after its last item
        self._spans: dict[str, tuple[int, int]] | None = None  # see _tree_spans
        self._path_walks = 0  # is_before's questions answered by a walk up (see there)
        self._facts: SubtreeFacts | None = None  # see _subtree_facts

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
            dropped = session.line_context_status(line)
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
        # Work: ("line", ids, id_set, position, depth) | ("open", id, depth, line[, fork id])
        #       | ("close", depth)
        #       | ("group_open", count) | ("group_close",)
        work: list[tuple[Any, ...]] = []
        for root in reversed(other_roots):
            line, line_set = self._line(root)
            work += [("close", 1), ("line", line, line_set, 0, 1), ("open", root, 1, line)]
        work.append(("line", *self._line(main_root), 0, 0))
        items: list[Item] = []
        groups: list[tuple[Item, list[bool]]] = []  # open groups: [a label shown, a user message]
        # per open block, the tasks of the branches that fork too deep inside it, in page
        # order: they follow its close (see _run_line)
        after_block: list[list[list[tuple[Any, ...]]]] = []
        while work:
            task = work.pop()
            if task[0] in ("close", "group_close"):
                items.append(Item(task[0]))
                if task[0] == "group_close":
                    group, holds = groups.pop()
                    group.group_classes = empty_under_filters(labeled=holds[0], user=holds[1])
                    if groups:  # a group's counts cover the groups inside it
                        groups[-1][1][0] |= holds[0]
                        groups[-1][1][1] |= holds[1]
                else:
                    for blocks in reversed(after_block.pop()):
                        work += blocks
            elif task[0] == "group_open":
                items.append(Item("group_open", group_size=task[1]))
                groups.append((items[-1], [False, False]))
            elif task[0] == "open":
                branch = self.branch_info(task[1], task[2], task[3])
                if len(task) > 4:  # placed after the block its fork sits in (nesting cap)
                    branch.forks_at = self.anchor(task[4])
                items.append(Item("open", branch=branch))
                after_block.append([])
                if groups:  # a branch's counts cover the branches inside it
                    groups[-1][1][0] |= branch.has_label_shown
                    groups[-1][1][1] |= branch.has_user
            else:
                self._run_line(task, work, items, after_block)
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

    def _run_line(
        self,
        task: tuple[Any, ...],
        work: list[Any],
        items: list[Item],
        after_block: list[list[list[tuple[Any, ...]]]],
    ) -> None:
        """Emit a main line until a fork; then queue the rest behind the fork's branches.
        Past :data:`MAX_BRANCH_NESTING`, the fork's branches wait in ``after_block`` for the
        block the line is in to close, in the order of their forks."""
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
                    alt_line, alt_set = self._line(alt)
                    blocks += [("close", level), ("line", alt_line, alt_set, 0, level)]
                    blocks.append(("open", alt, level, alt_line, *([entry_id] if capped else [])))
                if grouped:
                    blocks.append(("group_open", len(alternatives)))
                if capped:  # after this branch's own block closes, as its siblings
                    after_block[-1].append(blocks)
                else:
                    work += blocks
                return

    def branch_info(self, first_id: str, depth: int, line: list[str] | None = None) -> BranchInfo:
        """A branch block's summary: its first line's title, and what its whole subtree
        holds (nested branches too), read from :meth:`_subtree_facts` (walking each
        branch's subtree was quadratic in branches nested inside branches)."""
        facts = self._subtree_facts()
        start, end = facts.span(first_id)
        return BranchInfo(
            first_id=first_id,
            anchor="branch-" + self.anchor(first_id),
            first_prompt=self.branch_title(line if line is not None else self.main_line(first_id)),
            entries=end - start + 1,
            lines=facts.count(facts.leaves, start, end),
            cost=fmt_cost(facts.cost(first_id)),
            last_activity=facts.latest_time(start),
            labels=facts.labels_in(start, end),
            # a label the Default rules hide (extension data) shows nothing under Labeled
            has_label_shown=facts.count(facts.labels_shown, start, end) > 0,
            has_user=facts.count(facts.users, start, end) > 0,
            depth=depth,
            separate=self._why_separate(first_id),
        )

    def _subtree_facts(self) -> SubtreeFacts:
        """Made once, at the first branch block (a linear session needs none)."""
        if self._facts is None:
            session, path_set = self.session, self.path_set
            self._facts = SubtreeFacts(
                session,
                self._tree_spans(),
                lambda entry_id: not self._outline_text(entry_id)[2],
                lambda entry_id: session.next_on_line(entry_id, path_set),
            )
        return self._facts

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
        first prompt (if it has one). A row's words and the prompt are each in their own
        direction (markup: a Hebrew answer's "!" was drawn at its start after "assistant: ")."""
        prompt, opening = self.branch_opening(line)
        if opening is None:
            return prompt_preview(prompt, BRANCH_TITLE_CHARS)
        if not prompt:
            return quoted_row(self.opening_line(opening))
        said = prompt_preview(prompt, BRANCH_TITLE_CHARS // 2)
        return Markup("{} · first prompt: {}").format(
            quoted_row(self.opening_line(opening, half=True)), isolated(said)
        )

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
            id=session.leaf_name(entry.id),  # data-entry-id: what ?targetId= names
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
            for part in view.parts:  # a result shown with its call: its data-entry-id too
                if part.tool_entry_anchor and part.tool and part.tool.result_entry_id:
                    part.tool.result_entry_id = session.leaf_name(part.tool.result_entry_id)
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
            name = one_line(session.leaf_name(entry.id), 80)
            log.warning(
                "%s",
                terminal_text(
                    f"pi-session: warning: entry {name} could not be shown "
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
        Sub-lists nest at most :data:`MAX_BRANCH_NESTING` deep, as the transcript's blocks
        do, and deeper forks' branches follow the sub-list they fork in: Chromium's parser
        stops nesting at 512 elements, and past ~253 levels rows landed in the wrong list.
        """
        session = self.session
        if not session.roots:
            return []
        main_root, other_roots = session.page_roots()
        rows: list[OutlineRow] = []
        # work: ("line", ids, id_set, position) | ("close",)
        #       | ("open", fork row or None, the sub-list holding that row or -1, moved)
        work: list[tuple[Any, ...]] = []
        for root in reversed(other_roots):
            work += [("close",), ("line", *self._line(root), 0), ("open", None, -1, False)]
        work.append(("line", *self._line(main_root), 0))
        lists: list[_SubList] = []  # every sub-list, in page order
        # the sub-lists open now (indexes into lists), each with the entries listed before it
        # and the work of the sub-lists that fork too deep inside it (they follow it)
        open_lists: list[tuple[int, int, list[list[tuple[Any, ...]]]]] = []
        listed = 0
        while work:
            task = work.pop()
            if task[0] == "open":
                _, fork_row, holder, moved = task
                # "deep": it forks in the sub-list before it (a hook for the page's style)
                classes = " ".join(c for c, on in (("root", not fork_row), ("deep", moved)) if on)
                rows.append(OutlineRow("open", classes=classes))
                open_lists.append((len(lists), listed, []))
                lists.append(_SubList(rows[-1], fork_row, holder))
            elif task[0] == "close":
                rows.append(OutlineRow("close"))
                index, before, after = open_lists.pop()
                sub_list = lists[index]
                if sub_list.fork_row is not None and listed - before >= FOLD_BRANCH_ROWS:
                    sub_list.opener.folded = listed - before  # the main line's rows come first
                for blocks in reversed(after):
                    work += blocks
            else:
                _, line, line_set, position = task
                holder = open_lists[-1][0] if open_lists else -1
                for index in range(position, len(line)):
                    entry_id = line[index]
                    row = self._outline_row(entry_id)
                    rows.append(row)
                    listed += 1
                    if holder >= 0:
                        lists[holder].shows.update(row_filters(row))
                    alternatives = self.session.alternatives(entry_id, line_set)
                    if alternatives:
                        work.append(("line", line, line_set, index + 1))
                        moved = len(open_lists) >= MAX_BRANCH_NESTING
                        blocks: list[tuple[Any, ...]] = []
                        for alt in reversed(alternatives):
                            blocks += [("close",), ("line", *self._line(alt), 0)]
                            blocks.append(("open", row, holder, moved))
                        if moved:  # after the sub-list it forks in, as the transcript does
                            open_lists[-1][2].append(blocks)
                        else:
                            work += blocks
                        break
        _show_forks_for_their_branches(lists)
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


class SubtreeFacts:
    """What each entry's subtree holds (entries, leaves, users, labels, cost, latest time),
    for every entry at once: a branch block's summary covers its whole subtree, nested
    branches too, and walking each block's subtree was quadratic in branches nested inside
    branches (2,500 of them: 12 s). In pre-order (``spans``) a subtree is one run of places,
    so its counts are differences of running totals; its latest time comes up from its
    children, and its cost from its own lines and the blocks inside (see _summed_from).
    Each is one pass over the tree, without recursion."""

    def __init__(
        self,
        session: Session,
        spans: dict[str, tuple[int, int]],
        label_shown: Callable[[str], bool],
        next_on_line: Callable[[str], str | None],
    ) -> None:
        order = [""] * len(spans)
        for entry_id, (place, _) in spans.items():
            order[place] = entry_id
        self._spans = spans
        children, labels = session.children, session.labels
        entries = [session.by_id[entry_id] for entry_id in order]
        self.leaves = _running_count(entry_id not in children for entry_id in order)
        self.users = _running_count(getattr(e, "role", None) == "user" for e in entries)
        labeled = [place for place, entry_id in enumerate(order) if entry_id in labels]
        self._label_places = labeled
        self._label_texts = [labels[order[place]] for place in labeled]
        self.labels_shown = _running_count(
            entry_id in labels and label_shown(entry_id) for entry_id in order
        )
        # the latest time in each subtree, children before their parent (places backwards);
        # the first of equal times in pre-order, as max() over the walk gave
        latest: list[datetime | None] = [None] * len(order)
        for place in range(len(order) - 1, -1, -1):
            best = entries[place].moment
            for kid in children.get(order[place], ()):
                time = latest[spans[kid][0]]
                if time is not None and (best is None or time > best):
                    best = time
            latest[place] = best
        self._latest = latest
        self._children = children
        self._next_on_line = next_on_line
        self._turn_cost = {
            e.id: turn_usage(e).cost
            for e in entries
            if isinstance(e, MessageEntry) and e.role == "assistant"
        }
        self._block_cost: dict[str, float] = {}
        for entry_id in reversed(order):  # a block inside another starts after it
            parent = session.parent_of(entry_id)
            if parent is None or next_on_line(parent) != entry_id:
                self._block_cost[entry_id] = self._summed_from(entry_id)

    def span(self, entry_id: str) -> tuple[int, int]:
        """The places of an entry and of its subtree's last entry."""
        return self._spans[entry_id]

    @staticmethod
    def count(running: list[int], start: int, end: int) -> int:
        """How many of the places ``start`` to ``end`` a running count counts."""
        return running[end + 1] - running[start]

    def labels_in(self, start: int, end: int) -> list[str]:
        """The labels set on the places ``start`` to ``end``, in pre-order."""
        low = bisect.bisect_left(self._label_places, start)
        high = bisect.bisect_right(self._label_places, end)
        return self._label_texts[low:high]

    def cost(self, entry_id: str) -> float:
        """The dollars of the assistant turns in the subtree of ``entry_id``."""
        cost = self._block_cost.get(entry_id)
        return self._summed_from(entry_id) if cost is None else cost

    def _summed_from(self, start: str) -> float:
        """A block's dollars, added in the order of a walk of its subtree (as the table of
        branches adds a branch's), each block inside it as its total: a block without
        branches inside says what it said, to the cent at a half cent, and each entry is
        added in one block only. The blocks inside must be summed already."""
        children, next_on_line = self._children, self._next_on_line
        total = 0.0
        stack: list[tuple[bool, str]] = [(True, start)]  # (on the block's lines, entry)
        while stack:
            on_lines, entry_id = stack.pop()
            if not on_lines:
                total += self._block_cost[entry_id]
                continue
            cost = self._turn_cost.get(entry_id)
            if cost is not None:
                total += cost
            kids = children.get(entry_id)
            if kids:
                goes_on = next_on_line(entry_id)
                stack.extend((kid == goes_on, kid) for kid in reversed(kids))
        return total

    def latest_time(self, place: int) -> str | None:
        """The latest time in the subtree at ``place``, as ISO text (None: no time)."""
        time = self._latest[place]
        return time.isoformat() if time is not None else None


def _running_count(flags: Iterable[bool]) -> list[int]:
    """``[0, f0, f0 + f1, ...]``: the count of the places ``a`` to ``b`` is
    ``running[b + 1] - running[a]``."""
    return [0, *itertools.accumulate(map(int, flags))]


@dataclass(slots=True)
class _SubList:
    """An outline sub-list while the outline is made: its "open" row, the row of the fork it
    leaves from (None: another tree), the sub-list holding that row (-1: none) and the
    filters that show a row in it or in the sub-lists that fork inside it."""

    opener: OutlineRow
    fork_row: OutlineRow | None
    holder: int
    shows: set[str] = field(default_factory=set)


def _show_forks_for_their_branches(lists: list[_SubList]) -> None:
    """A fork's row (and another tree's note) stays under a filter that shows something in
    its branches, so they never hang under nothing; a folded branch's fold line shows where
    its fork does. A sub-list's filters go to the one holding its fork's row, which is not
    the one around it when the sub-list follows the one it forks in (see ``outline``): a
    sub-list holds only sub-lists made after it, so going backwards each is complete."""
    for sub_list in reversed(lists):
        shows = sub_list.shows
        (sub_list.fork_row or sub_list.opener).branch_shows |= shows
        if sub_list.opener.folded:
            sub_list.opener.branch_shows |= shows
        if sub_list.holder >= 0:
            lists[sub_list.holder].shows |= shows


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
    r"(?:skill: .*? · )?(?:user|assistant): (?:\((?:aborted|error)\) |error: )?|\[[^\]]*\]: "
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
