"""The in-memory session: header, typed entries and the tree queries everything else reads.

A ``Session`` is built once by the loader and then only read, except that ``set_leaf``
may choose another branch as the active path (saying in ``diagnostics`` when an id the
file uses twice chose its latest copy). Tree facts (children, roots,
active path, branches, tool-call pairing) are computed in O(n) on construction so renderers
and publishers never scan.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from exporter.entries import (
    CONTEXT_ENTRY_TYPES,
    CompactionEntry,
    DamagedLine,
    Entry,
    Header,
    LabelEntry,
    MessageEntry,
    SessionInfoEntry,
    as_str,
    id_key,
)
from exporter.formatting import prompt_line
from exporter.session_parts import (
    Branch,
    Diagnostic,
    ToolCallRef,
    ids_on_damaged_lines,
    parse_time,
    quoted_id,
)

__all__ = ["Branch", "Diagnostic", "Entry", "Header", "Session", "ToolCallRef", "parse_time"]

#: The format every file is read as (``loader.CURRENT_VERSION``; the loader imports this).
_READ_AS = 3


def pi_sibling_order(entries: list[Entry]) -> list[Entry]:
    """Siblings as Pi's tree orders them: ``children.sort((a, b) => new Date(a.timestamp) -
    new Date(b.timestamp))`` (``Entry.order_time``; epoch numbers counted as unreadable and
    went last here before). A time JavaScript cannot read makes the comparison NaN, which
    the sort takes as 0, "equal" to every other: such an entry is neither put last nor kept
    in place, but lands where V8's TimSort leaves it (``_v8_sort_order``)."""
    times = [entry.order_time for entry in entries]
    if any(math.isnan(t) for t in times):
        order = _v8_sort_order(times)
    else:  # a consistent order: every stable sort gives V8's
        order = sorted(range(len(entries)), key=times.__getitem__)
    return [entries[i] for i in order]


def _v8_sort_order(times: list[float]) -> list[int]:
    """The order V8's ``Array.prototype.sort`` gives ``times`` with the comparator
    ``a - b`` (NaN read as 0), where only "below 0" puts one item before another. Below 64
    items V8's TimSort takes a first run (a falling one reversed) and inserts each further
    item by binary search: done here step by step. Past that it merges runs too, as
    CPython's sort does (V8's is a port of it; up to 3.12 the two take the same steps)."""
    if len(times) >= _V8_MIN_MERGE:
        return sorted(range(len(times)), key=functools.cmp_to_key(_js_compare(times)))
    order = list(range(len(times)))
    if len(order) < 2:
        return order
    falling = times[1] - times[0] < 0
    run = 2
    while run < len(order) and (times[run] - times[run - 1] < 0) == falling:
        run += 1
    if falling:
        order[:run] = reversed(order[:run])
    for start in range(run, len(order)):
        pivot = order[start]
        left, right = 0, start
        while left < right:
            middle = (left + right) >> 1
            if times[pivot] - times[order[middle]] < 0:
                right = middle
            else:
                left = middle + 1
        order[left + 1 : start + 1] = order[left:start]
        order[left] = pivot
    return order


#: From this many items on, V8's TimSort (as CPython's) merges runs.
_V8_MIN_MERGE = 64


def _js_compare(times: list[float]) -> Callable[[int, int], int]:
    """Pi's comparator on indices into ``times``: -1 when the first is before (below 0),
    else 0 (NaN included), which is all the sort asks."""
    return lambda a, b: -1 if times[a] - times[b] < 0 else 0


#: The diagnostics that say a file is another agent's transcript, read as a Pi session.
CONVERTED_KINDS = frozenset({"claude-code", "codex"})
#: A title from a prompt is cut here (its readers cut it shorter: 48-120 characters).
TITLE_CHARS = 200

# A prompt that is only a slash command ("/mode") says nothing as a title, nor do the paths
# of files pasted (dropped) before the words.
_SLASH_COMMAND = re.compile(r"/[\w:.\-]+(?:\s+\S+)?")
_PASTED_PATHS = re.compile(  # whole lines: a quoted path (may hold spaces) or a bare one
    r"(?:[ \t]*(?:'(?:~|[A-Za-z]:)?[/\\][^'\n]*'|\"(?:~|[A-Za-z]:)?[/\\][^\"\n]*\""
    r"|(?:~|[A-Za-z]:)?[/\\]\S*)[ \t]*(?:\n|\Z))*"
)


def prompt_words(text: str) -> str | None:
    """A prompt's words after the file paths pasted before them; None when it is only
    paths or only a slash command, which say nothing as a session's title."""
    words = text[_PASTED_PATHS.match(text).end() :].strip()
    return words if words and not _SLASH_COMMAND.fullmatch(words) else None


def _written_id(entry: Entry) -> str | None:
    """The id the file writes for an entry, as the key Pi finds it by (a number as
    JavaScript writes it: ``1``; a v1 entry's is the loader's ``L<line>``, which a v1 file's
    migration writes too); None when this tool made one up (``entry.id``)."""
    return id_key(entry.raw.get("id"), entry.id_number_suffix) or None


def _names_given_or_named(entries: list[Entry]) -> set[str]:
    """The ids a renamed duplicate must not take: those made up for entries without one,
    and those a line names as a parent, a label's target or a compaction's kept entry (a
    dangling ``parentId "x~2"`` must not find the renamed second ``x``)."""
    names = {entry.id for entry in entries if _written_id(entry) is None}
    for entry in entries:
        if entry.parent_id is not None:
            names.add(entry.parent_id)
        if isinstance(entry, LabelEntry) and entry.target_id is not None:
            names.add(entry.target_id)
        elif isinstance(entry, CompactionEntry) and entry.first_kept_entry_id is not None:
            names.add(entry.first_kept_entry_id)
    return names


def _names_shown(
    entries: list[Entry], by_id: dict[str, Entry], latest: dict[str, str]
) -> dict[str, str]:
    """The name each entry is shown and chosen by where it is not its id here, so that
    every output and option says the same: an id used twice names its latest copy (as in
    Pi, whose ``?targetId=`` finds it), which is kept as ``a~2`` here but shown as ``a``;
    an entry whose own id chooses another (a later line writes it too) is ``a~1`` for the
    first ``a``, a name the file has being skipped."""
    names = {entry_id: written for written, entry_id in latest.items() if entry_id != written}
    taken: set[str] = set()
    for entry in entries:
        if entry.id in names or latest.get(entry.id, entry.id) == entry.id:
            continue
        name, n = f"{entry.id}~1", 2
        while name in by_id or name in latest or name in taken:
            name, n = f"{entry.id}~1~{n}", n + 1
        names[entry.id] = name
        taken.add(name)
    return names


@dataclass(slots=True)
class Session:
    """A loaded session. Build it with :func:`exporter.loader.load_session`."""

    header: Header
    entries: list[Entry]
    damaged: list[DamagedLine] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    path: str | None = None
    leaf_id: str | None = None
    by_id: dict[str, Entry] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    roots: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    label_times: dict[str, str] = field(default_factory=dict)
    #: label entry id -> the entry its ``targetId`` names (of an id written twice: a copy)
    label_targets: dict[str, str] = field(default_factory=dict)
    name: str | None = None
    # Where this session's own bytes are, for the page's download: (size, mtime_ns) of the
    # file load_session read, or the bytes parse_session_bytes was given. The file as read
    # keeps what a re-serialisation would lose (damaged lines) or change (a legacy version,
    # number formats). Any copy (redacted, rebuilt from records) has neither and is
    # serialised instead; code that edits entries in place must clear both.
    source_stamp: tuple[int, int] | None = None
    source_data: bytes | None = None
    # (length, SHA-256) of the bytes load_session read: Pi appends while a page is made, and
    # the file's first bytes are then still the session as read when they hash the same.
    source_read: tuple[int, bytes] | None = None
    # A copy made under a share policy says so on its page: what was replaced and left out.
    redaction_note: str | None = None
    redaction_heading: str = "Redaction"  # or "Left out": a copy only trimmed, not redacted
    _call_for_result: dict[str, ToolCallRef] = field(default_factory=dict)
    _results_for_call: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    _parent: dict[str, str | None] = field(default_factory=dict)
    _latest_with_id: dict[str, str] = field(default_factory=dict)  # file id -> latest entry
    _first_with_id: dict[str, str] = field(default_factory=dict)  # file id -> first entry
    # entry -> the name it is shown and chosen by, where that is not its id (_names_shown)
    _copy_names: dict[str, str] = field(default_factory=dict)
    _named_copies: dict[str, str] = field(default_factory=dict)  # that name -> entry
    _leaf_note: Diagnostic | None = field(default=None, repr=False, compare=False)
    #: a missing parent whose id a damaged line still shows -> that line's number
    parents_on_damaged_lines: dict[str, int] = field(default_factory=dict)
    # (leaf id, parent map, path): the active path is asked for ~10 times per page
    _path_cache: tuple[str, dict[str, str | None], list[str]] | None = field(
        default=None, repr=False, compare=False
    )
    # (parent map, entry -> its place in the tree's pre-order, -> its subtree's size)
    _subtree_cache: tuple[dict[str, str | None], dict[str, int], dict[str, int]] | None = field(
        default=None, repr=False, compare=False
    )
    # (parent map, written id -> the entries written with it, in file order)
    _copies_cache: tuple[dict[str, str | None], dict[str, list[str]]] | None = field(
        default=None, repr=False, compare=False
    )
    # (leaf id, parent map, entry -> its child on the active path): a line's next entry
    _successor_cache: tuple[str, dict[str, str | None], dict[str, str]] | None = field(
        default=None, repr=False, compare=False
    )

    # construction ------------------------------------------------------------
    @classmethod
    def build(
        cls,
        header: Header,
        entries: list[Entry],
        *,
        damaged: Iterable[DamagedLine] = (),
        diagnostics: Iterable[Diagnostic] = (),
        path: str | None = None,
        leaf_id: str | None = None,
    ) -> Session:
        """Index entries into a tree; repairs (duplicates, cycles, orphans) become diagnostics."""
        session = cls(
            header=header,
            entries=list(entries),
            damaged=list(damaged),
            diagnostics=list(diagnostics),
            path=path,
        )
        session._index()
        session._replay_labels_and_name()
        session._pair_tool_calls()
        if leaf_id is not None:
            session.set_leaf(leaf_id)
        return session

    def _index(self) -> None:
        """Index entries by id and resolve each written ``parentId`` to the entry it names:
        the latest entry written with that id before it (the one it was written after), else
        a later one. Only ids as written take part: an id this tool gives (``L5`` for a line
        without one, ``x~2`` for a repeated ``x``) is never what a file's ``parentId`` says
        (Pi's tree hangs such a child under the entry that wrote that id)."""
        diagnostics = self.diagnostics
        by_id: dict[str, Entry] = {}
        latest: dict[str, str] = {}  # id as written -> the latest entry so far written with it
        first: dict[str, str] = {}  # id as written -> the first entry written with it
        self_parent: set[int] = set()  # id() of entries whose parentId is their own id
        resolved: set[int] = set()  # id() of entries whose parent was written before them
        given: set[str] | None = None  # read only if an id repeats
        renamed: list[Entry] = []  # entries kept under another id here: said once named
        for entry in self.entries:
            written = _written_id(entry)
            pid = entry.parent_id
            if pid is not None and pid == written:
                self_parent.add(id(entry))  # Pi: parentId === id means a root
            elif pid is not None and pid in latest:
                entry.parent_id = latest[pid]  # the entry it was written after
                resolved.add(id(entry))
            if entry.id in by_id:
                original = entry.id
                if given is None:
                    given = _names_given_or_named(self.entries)
                n = 2
                while f"{original}~{n}" in by_id or f"{original}~{n}" in given:
                    n += 1
                entry.id = f"{original}~{n}"
                renamed.append(entry)
            by_id[entry.id] = entry
            if written is not None:
                latest[written] = entry.id
                first.setdefault(written, entry.id)
        self.by_id = by_id
        self._latest_with_id = latest
        self._first_with_id = first
        self._copy_names = _names_shown(self.entries, by_id, latest)
        self._named_copies = {name: entry_id for entry_id, name in self._copy_names.items()}
        diagnostics.extend(filter(None, map(self._repeat_note, renamed)))

        parent: dict[str, str | None] = {}
        damaged_ids: dict[str, int] | None = None  # read only if an entry lacks its parent
        for entry in self.entries:
            pid = entry.parent_id
            if pid is not None and id(entry) not in resolved:
                pid = first.get(pid)  # an entry written after it, or none
            if entry.parent_id is None or id(entry) in self_parent or pid == entry.id:
                parent[entry.id] = None
            elif pid is None:
                pid = entry.parent_id  # no entry writes this id (whatever this tool names)
                parent[entry.id] = None
                if damaged_ids is None:
                    damaged_ids = ids_on_damaged_lines(self.damaged)
                where = "does not exist"
                if pid in damaged_ids:
                    self.parents_on_damaged_lines[pid] = damaged_ids[pid]
                    where = f"is on damaged line {damaged_ids[pid]}"
                diagnostics.append(
                    Diagnostic(
                        entry.line,
                        "orphan",
                        f"parent {quoted_id(pid)} of entry "
                        f"{quoted_id(self.leaf_name(entry.id))} {where}; "
                        "shown as a root",
                    )
                )
            else:
                parent[entry.id] = pid
        self._break_cycles(parent)
        self._parent = parent

        # Roots in file order, as Pi's tree and page keep them (sorted by time here before,
        # a separate tree written after the main one was shown before it)
        children: dict[str, list[str]] = {}
        roots: list[str] = []
        for entry in self.entries:
            pid = parent[entry.id]
            if pid is None:
                roots.append(entry.id)
            else:
                children.setdefault(pid, []).append(entry.id)
        for pid, kids in children.items():
            if len(kids) > 1:
                children[pid] = [e.id for e in pi_sibling_order([by_id[i] for i in kids])]
        self.children = children
        self.roots = roots
        self.leaf_id = self.entries[-1].id if self.entries else None

    def _break_cycles(self, parent: dict[str, str | None]) -> None:
        """Find parentId cycles (Pi hangs on them) and cut each at its first entry in file order."""
        state: dict[str, int] = {}  # 1 = on the current walk, 2 = known to reach a root
        line_of = {e.id: e.line for e in self.entries}
        for start in parent:
            if state.get(start) == 2:
                continue
            walk: list[str] = []
            node: str | None = start
            while node is not None and state.get(node) is None:
                state[node] = 1
                walk.append(node)
                node = parent[node]
            if node is not None and state.get(node) == 1:
                cycle = walk[walk.index(node) :]
                cut = min(cycle, key=lambda i: line_of[i])
                parent[cut] = None
                self.diagnostics.append(
                    Diagnostic(
                        line_of[cut],
                        "cycle",
                        f"parentId cycle through {len(cycle)} entries; entry "
                        f"{quoted_id(self.leaf_name(cut))} "
                        "made a root to break it",
                    )
                )
            for item in walk:
                state[item] = 2

    def _replay_labels_and_name(self) -> None:
        """Labels and the session's name as the file sets them, in order. A label's
        ``targetId`` names, as a ``parentId`` does, the latest entry written with that id
        before the label (the one it was written after), else a later one, not always the
        first copy of a repeated id."""
        labels: dict[str, str] = {}
        times: dict[str, str] = {}
        name: str | None = None
        latest: dict[str, str] = {}  # id as written -> the latest entry so far written with it
        targets: dict[str, str] = {}
        for entry in self.entries:
            if (written := _written_id(entry)) is not None:
                latest[written] = entry.id
            if isinstance(entry, LabelEntry):
                target = entry.target_id
                if target is None:
                    continue
                target = latest.get(target) or self._first_with_id.get(target, target)
                targets[entry.id] = target
                if entry.label:
                    labels[target] = entry.label
                    times[target] = entry.timestamp or ""
                else:
                    labels.pop(target, None)
                    times.pop(target, None)
            elif isinstance(entry, SessionInfoEntry):
                name = entry.name
        # Labels of ids that do not exist are kept: they still say something about the file.
        self.labels = labels
        self.label_times = times
        self.label_targets = targets
        self.name = name

    def label_target(self, entry: LabelEntry) -> str | None:
        """The entry a label entry is about: its ``targetId`` as :meth:`_replay_labels_and_name`
        reads it (of an id written twice, the copy written before the label)."""
        return self.label_targets.get(entry.id, entry.target_id)

    def _pair_tool_calls(self) -> None:
        """Pair each toolResult with the nearest call of the same id above it, per path.

        Ids repeat across branches, so a global map would be wrong; a DFS keeps a stack of
        visible calls per id and pops them on the way back up, O(n) overall.
        """
        visible: dict[str, list[ToolCallRef]] = {}
        taken: dict[ToolCallRef, int] = {}  # calls answered on the current path
        call_for_result: dict[str, ToolCallRef] = {}
        results_for_call: dict[tuple[str, int], list[str]] = {}
        by_id = self.by_id
        stack: list[tuple[str, bool]] = [(r, False) for r in reversed(self.roots)]
        while stack:
            entry_id, leaving = stack.pop()
            entry = by_id[entry_id]
            is_message = isinstance(entry, MessageEntry)
            if leaving:
                if is_message and entry.role == "assistant":
                    for ref in self._calls_of(entry):
                        refs = visible.get(ref.call_id)
                        if refs:
                            refs.pop()
                elif entry_id in call_for_result:
                    taken[call_for_result[entry_id]] -= 1
                continue
            if is_message:
                role = entry.role
                if role == "assistant":
                    for ref in self._calls_of(entry):
                        visible.setdefault(ref.call_id, []).append(ref)
                elif role == "toolResult":
                    call_id = entry.tool_call_id
                    refs = visible.get(call_id) if call_id else None
                    if refs:
                        ref = self._answered_call(refs, entry, taken)
                        taken[ref] = taken.get(ref, 0) + 1
                        results_for_call.setdefault((ref.entry_id, ref.block_index), []).append(
                            entry_id
                        )
                        call_for_result[entry_id] = ref
            stack.append((entry_id, True))
            kids = self.children.get(entry_id)
            if kids:
                stack.extend((k, False) for k in reversed(kids))
        self._call_for_result = call_for_result
        self._results_for_call = results_for_call

    def _answered_call(
        self, refs: list[ToolCallRef], result: MessageEntry, taken: dict[ToolCallRef, int]
    ) -> ToolCallRef:
        """Which of the visible calls with a result's id it answers: the nearest above. When
        that message repeats the id (backends that number calls per turn: two ``call_0``),
        its first call not yet answered on this path, of the result's tool if it names one;
        before, every such result went to the last call and the others had none."""
        last = refs[-1]
        if len(refs) == 1 or refs[-2].entry_id != last.entry_id:
            return last
        same = list(itertools.takewhile(lambda r: r.entry_id == last.entry_id, reversed(refs)))
        same = [r for r in reversed(same) if not taken.get(r)]
        name = result.tool_name
        for ref in same:
            if name and as_str((self.call_block(ref) or {}).get("name")) == name:
                return ref
        return same[0] if same else last

    @staticmethod
    def _calls_of(entry: MessageEntry) -> Iterator[ToolCallRef]:
        content = entry.message.get("content")
        if not isinstance(content, list):
            return
        for index, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "toolCall":
                call_id = as_str(block.get("id"))
                if call_id:
                    yield ToolCallRef(entry.id, index, call_id)

    # queries ---------------------------------------------------------------------
    @property
    def id(self) -> str:
        return self.header.id

    @property
    def version(self) -> int:
        return self.header.version

    def set_leaf(self, leaf_id: str) -> None:
        """Choose which leaf is active (KeyError with a clear message when unknown).

        An id the file uses twice names its latest entry, as in Pi (whose id map keeps the
        last one): Pi's /export-html passes that id for the branch the user is on. The
        earlier copies are chosen by the names :meth:`leaf_name` gives them (``a~1`` for
        the first ``a``); a choice by such an id is said in a warning naming them.
        """
        asked = leaf_id
        leaf_id = self.find_leaf(asked)
        self.leaf_id = leaf_id
        if self._leaf_note is not None:  # said of an earlier choice
            self.diagnostics = [d for d in self.diagnostics if d is not self._leaf_note]
            self._leaf_note = None
        if leaf_id != asked and asked in self._latest_with_id:
            self._leaf_note = self._copies_note(asked, leaf_id)
            self.diagnostics = [self._leaf_note, *self.diagnostics]  # a CLI prints 20

    def find_leaf(self, name: str) -> str:
        """The entry :meth:`set_leaf` chooses for ``name``: see :meth:`named_entry`, else the
        one id ``name`` begins; KeyError when none or several."""
        leaf_id = self.named_entry(name)
        if leaf_id is not None:
            return leaf_id
        # by the names entries are shown by (a repeated id's copies: "a~1", "a")
        matches = [i for i in self.by_id if self.leaf_name(i).startswith(name)]
        if not matches:
            raise KeyError(f"no entry with id {name!r} in this session")
        if len(matches) > 1:
            names = [self.leaf_name(i) for i in matches[:8]]
            shown = ", ".join(names) + (" …" if len(matches) > 8 else "")
            raise KeyError(f"entry id prefix {name!r} is ambiguous: {shown}")
        return matches[0]

    def named_entry(self, name: str) -> str | None:
        """The entry ``name`` names as a whole: an id as the file writes it (an id used twice:
        its latest copy, as in Pi), a name from :meth:`leaf_name`, or an id this tool gave
        (``L5``, ``a~2``); None when it names none."""
        entry_id = self._latest_with_id.get(name) or self._named_copies.get(name, name)
        return entry_id if entry_id in self.by_id else None

    def leaf_name(self, entry_id: str) -> str:
        """The name an entry is shown by everywhere (search, the page's anchors, ``stats``,
        warnings) and that ``--leaf`` and ``--exclude`` take: its id; for an id the file
        uses twice, that id for its latest copy (as in Pi) and ``a~1`` for the earlier."""
        return self._copy_names.get(entry_id, entry_id)

    def _repeat_note(self, entry: Entry) -> Diagnostic | None:
        """The warning for a line that writes an id an earlier line wrote, in the names
        the outputs use; None for a line whose id only a name given here took (``a~2``
        for a repeated ``a``): it is still shown and chosen by the id it writes."""
        written = _written_id(entry)
        first = self._first_with_id.get(written) if written is not None else None
        if written is None or first is None or first == entry.id:
            return None
        holder = self.by_id[first]
        shown = self.leaf_name(entry.id)
        if shown == written:  # the latest copy
            said = (
                f"as in Pi, it names this later copy, and line {holder.line}'s is "
                f"{quoted_id(self.leaf_name(first))}"
            )
        else:
            said = f"kept as {quoted_id(shown)} (the id names its latest copy, as in Pi)"
        return Diagnostic(
            entry.line,
            "duplicate-id",
            f"id {quoted_id(written)} already used on line {holder.line}; {said}",
        )

    def _copies_note(self, asked: str, chosen: str) -> Diagnostic:
        """The warning for a leaf chosen by an id several entries are written with."""
        others = [
            entry
            for entry in self.entries
            if entry.id != chosen and (entry.id == asked or _written_id(entry) == asked)
        ]
        named = [f"{quoted_id(self.leaf_name(e.id))} (line {e.line})" for e in others[:4]]
        said = ", ".join(named) + (f" and {len(others) - 4:,} more" if len(others) > 4 else "")
        which = "the other is" if len(others) == 1 else "the others are"
        return Diagnostic(
            self.by_id[chosen].line,
            "duplicate-leaf-id",
            f"leaf {quoted_id(asked)} names {len(others) + 1:,} entries: the latest (line "
            f"{self.by_id[chosen].line}) is the leaf, as in Pi; {which} chosen as {said}",
        )

    def parent_of(self, entry_id: str) -> str | None:
        return self._parent.get(entry_id)

    def path_to(self, entry_id: str) -> list[str]:
        """Entry ids from the root down to ``entry_id`` (cycle-free by construction)."""
        path: list[str] = []
        node: str | None = entry_id
        while node is not None:
            path.append(node)
            node = self._parent.get(node)
        path.reverse()
        return path

    @property
    def active_path(self) -> list[str]:
        """Entry ids from the root down to the active leaf (a fresh list each time): one walk
        per leaf, as a page asks for it ~10 times (a 25 MB session's path is 24,000 ids)."""
        leaf = self.leaf_id
        if not leaf:
            return []
        cached = self._path_cache
        if cached is None or cached[0] != leaf or cached[1] is not self._parent:
            cached = self._path_cache = (leaf, self._parent, self.path_to(leaf))
        return list(cached[2])

    def active_entries(self) -> list[Entry]:
        return [self.by_id[i] for i in self.active_path]

    @property
    def fork_ids(self) -> list[str]:
        """Entries with more than one child, in file order."""
        return [e.id for e in self.entries if len(self.children.get(e.id, ())) > 1]

    @property
    def leaf_ids(self) -> list[str]:
        """Entries with no children, in file order."""
        return [e.id for e in self.entries if e.id not in self.children]

    def subtree_spans(self) -> dict[str, tuple[int, int]]:
        """Each entry's place in a pre-order walk and the place of its subtree's last entry:
        ``a`` is an ancestor of ``b`` (or ``b`` itself) when a's span holds b's place."""
        order = list(self.walk())
        place = {entry_id: i for i, entry_id in enumerate(order)}
        last = list(range(len(order)))
        for i in range(len(order) - 1, -1, -1):  # children come after their parent
            kids = self.children.get(order[i])
            if kids:
                last[i] = max(last[place[kids[-1]]], last[i])
        return {entry_id: (i, last[i]) for i, entry_id in enumerate(order)}

    def walk(self, start: str | None = None) -> Iterator[str]:
        """Depth-first pre-order over the tree (or a subtree), children in Pi's order (by
        time), roots in file order."""
        stack = [start] if start else list(reversed(self.roots))
        while stack:
            entry_id = stack.pop()
            yield entry_id
            kids = self.children.get(entry_id)
            if kids:
                stack.extend(reversed(kids))

    def next_on_line(self, entry_id: str, path_set: Container[str]) -> str | None:
        """The child a line of the page goes on with: the one on the active path, else the
        newest (Pi's rule); the other children start lines of their own. ``path_set``: the
        ids of a path from a root (an entry's child is on it only if the entry is). One
        lookup, not a look through the children: asked for each of a fork's children, a
        fork of 24,000 took 20 s."""
        kids = self.children.get(entry_id)
        if not kids or entry_id == self.leaf_id:  # the active path ends at its leaf, even
            return None  # an inner one (--leaf): what follows it are branches
        if len(kids) == 1 or entry_id not in path_set:
            return kids[-1]  # (off the path, none of its children is on it)
        on_path = self._successors().get(entry_id)
        if on_path is not None and on_path in path_set:
            return on_path
        return next((kid for kid in kids if kid in path_set), kids[-1])

    def _successors(self) -> dict[str, str]:
        """Each entry of the active path but its leaf -> its child on it (made once per leaf)."""
        leaf = self.leaf_id or ""
        cached = self._successor_cache
        if cached is None or cached[0] != leaf or cached[1] is not self._parent:
            path = self.active_path
            cached = self._successor_cache = (leaf, self._parent, dict(itertools.pairwise(path)))
        return cached[2]

    def alternatives(self, entry_id: str, on_line: Container[str]) -> list[str]:
        """The children of an entry on a line that start lines of their own: at a fork, all
        but the one the line goes on with; at an inner leaf, all of them."""
        kids = self.children.get(entry_id, ())
        if len(kids) < 2 and entry_id != self.leaf_id:
            return []
        return [kid for kid in kids if kid not in on_line]

    def line_from(self, start: str, path_set: Container[str]) -> list[str]:
        """From ``start`` down, as :meth:`next_on_line` goes."""
        line = [start]
        node = self.next_on_line(start, path_set)
        while node is not None:
            line.append(node)
            node = self.next_on_line(node, path_set)
        return line

    def page_roots(self) -> tuple[str, list[str]]:
        """The root the page's main line starts at (the active path's), and the others in
        file order, as the roots are (each a tree of its own), as Pi's page puts them.
        Needs at least one root."""
        path = self.active_path
        main_root = path[0] if path else self.roots[0]
        return main_root, [r for r in self.roots if r != main_root]

    def lines(self) -> list[list[str]]:
        """The tree cut into the lines the page shows: the main line (through the active
        path) first, then each fork's other children's lines in page order (a branch's own
        forks before the next branch), then separate roots. Every entry is on one line."""
        if not self.roots:
            return []
        path_set = set(self.active_path)
        main_root, other_roots = self.page_roots()
        stack = [*reversed(other_roots), main_root]
        result: list[list[str]] = []
        while stack:
            line = self.line_from(stack.pop(), path_set)
            result.append(line)
            on_line = set(line)
            alternatives = []
            for entry_id in line:
                alternatives += self.alternatives(entry_id, on_line)
            stack += reversed(alternatives)
        return result

    def branches(self) -> list[Branch]:
        """One branch per line of the page (:meth:`lines`; one per leaf), the active one
        first: the table of branches and the page's branch blocks cut the tree alike."""
        return [
            Branch(line[-1], self.parent_of(line[0]), line, self.leaf_id in line)
            for line in self.lines()
        ]

    def call_for_result(self, result_entry_id: str) -> ToolCallRef | None:
        return self._call_for_result.get(result_entry_id)

    def call_block(self, ref: ToolCallRef) -> dict[str, Any] | None:
        """The tool call block ``ref`` points at."""
        caller = self.by_id.get(ref.entry_id)
        content = caller.message.get("content") if isinstance(caller, MessageEntry) else None
        if isinstance(content, list) and ref.block_index < len(content):
            block = content[ref.block_index]
            return block if isinstance(block, dict) else None
        return None

    def result_for_call(
        self, assistant_entry_id: str, block_index: int, within: set[str] | None = None
    ) -> Entry | None:
        """The call's result: the first in file order, or the one among ``within`` ids.

        One call can have several results when the tree forks between call and result.
        """
        for result_id in self._results_for_call.get((assistant_entry_id, block_index), ()):
            if within is None or result_id in within:
                return self.by_id[result_id]
        return None

    @property
    def agent(self) -> str:
        """The agent that wrote it: "Pi", or "Claude Code" or "Codex" for a transcript read
        as a Pi session (its header says so, and so does a Pi copy of one)."""
        source = self.header.raw.get("source")
        if isinstance(source, str):
            for agent in ("Claude Code", "Codex"):
                if source == agent or source.startswith(f"{agent} "):
                    return agent
        return "Pi"

    @property
    def cost_note(self) -> str | None:
        """Where the dollars come from, when the header says (a Claude Code or Codex
        transcript: list prices, and the models with none, counted as $0), as the page's
        header says it. None for a Pi file: Pi records each turn's cost."""
        note = self.header.raw.get("cost")
        if self.agent == "Pi" or not isinstance(note, str) or not note.strip():
            return None
        return note

    @property
    def file_kind(self) -> str:
        """What the file read is: "file v3" (its version before migration), or "Claude Code
        2.0.46 transcript" for one read as a Pi session."""
        if any(d.kind in CONVERTED_KINDS for d in self.diagnostics):
            return f"{self.header.raw.get('source')} transcript"
        read_as = f", read as v{_READ_AS}" if self.version != _READ_AS else ""
        return f"file v{self.version}{read_as}"  # as the page says it

    @property
    def title(self) -> str:
        """Session name, else the first user prompt that says something (file order) as one
        plain line, else the id: the same title in ``list``, ``stats``, the page, a gist and
        a dataset (`list` showed a prompt's ``**`` and backticks, which the page leaves out)."""
        if self.name:
            return self.name
        prompt = self.title_prompt()
        if prompt:
            return prompt_line(prompt, TITLE_CHARS)
        return f"Session {self.id}" if self.id else "Untitled session"

    def title_prompt(self) -> str | None:
        """The first prompt's words without the paths pasted before them, skipping prompts
        that are only a slash command or only paths; the first prompt if none says more."""
        first = None
        for text in self.prompts():
            first = first or text
            words = prompt_words(text)
            if words:
                return words
        return first

    def first_prompt(self, entry_ids: Iterable[str] | None = None) -> str | None:
        """The first non-empty user text among ``entry_ids`` (default: the whole file)."""
        return next(self.prompts(entry_ids), None)

    def first_prompt_id(self, entry_ids: Iterable[str] | None = None) -> str | None:
        """The id of the entry :meth:`first_prompt` reads."""
        for entry in self.iter_messages(entry_ids):
            if entry.role == "user" and entry.text.strip():
                return entry.id
        return None

    def prompts(self, entry_ids: Iterable[str] | None = None) -> Iterator[str]:
        """The non-empty user texts among ``entry_ids`` (default: the whole file), stripped,
        in file order."""
        for entry in self.iter_messages(entry_ids):
            if entry.role == "user":
                text = entry.text.strip()
                if text:
                    yield text

    def context_status(self, path: list[str] | None = None) -> dict[str, str]:
        """For the active path (or ``path``, root to leaf): entry id -> id of the compaction
        that took it out of context.

        Mirrors ``buildSessionContext`` (§1.11): after a compaction only entries from its
        ``firstKeptEntryId`` on stay; an unknown ``firstKeptEntryId`` keeps nothing before it.
        Only the entries the model would otherwise see are marked.
        """
        path = self.active_path if path is None else path
        position = {entry_id: i for i, entry_id in enumerate(path)}
        return self._dropped_along(path, lambda wanted, index: position.get(wanted, index))

    def line_context_status(self, line: list[str]) -> dict[str, str]:
        """:meth:`context_status` of the path down to ``line[-1]``, for the entries of
        ``line`` (each the child of the one before) and its compactions, without walking
        the path above it: a compaction above ``line[0]`` drops only entries above it, and
        one in the line that keeps from above ``line[0]`` drops none of the line. (Asked for
        each branch that holds a compaction, the whole path was walked each time: 3,000
        branches off a deep line took 18 s.)"""
        position = {entry_id: i for i, entry_id in enumerate(line)}

        def kept(wanted: str, index: int) -> int:
            if wanted in position:
                return position[wanted]
            return -1 if wanted and self._is_above(wanted, line[0]) else index

        return self._dropped_along(line, kept)

    def _dropped_along(
        self, path: list[str], kept_position: Callable[[str, int], int]
    ) -> dict[str, str]:
        """The rule of :meth:`context_status` along ``path``; ``kept_position(id, index)``:
        where a compaction at ``index`` keeps from (``index`` for an id not on the path, a
        negative number for one above ``path``'s start)."""
        compactions = [
            (i, e)
            for i, e in enumerate(map(self.by_id.__getitem__, path))
            if isinstance(e, CompactionEntry)
        ]
        dropped: dict[str, str] = {}
        if not compactions:
            return dropped
        last_index, last = compactions[-1]
        final_kept = min(kept_position(self.first_kept_id(last) or "", last_index), last_index)
        done = 0  # path[:done] is decided: each entry goes to the first compaction dropping it
        for index, entry in compactions:
            wanted = self.first_kept_id(entry) or ""
            kept_from = max(min(kept_position(wanted, index), index, final_kept), 0)
            for earlier in path[done:kept_from]:
                if self.by_id[earlier].type in CONTEXT_ENTRY_TYPES:
                    dropped[earlier] = entry.id
            done = max(done, kept_from)
        # Entries between an older compaction's kept span and a newer compaction stay dropped
        # only if the newer one drops them; the loop above already applies that ordering.
        # Only the latest compaction's summary is sent: older compactions are out of context.
        for _, entry in compactions[:-1]:
            dropped.setdefault(entry.id, last.id)
        return dropped

    def _is_above(self, ancestor: str, entry_id: str) -> bool:
        """Whether ``ancestor`` is on the path from a root down to ``entry_id``, before it
        (one look-up: each subtree is a run of the tree's pre-order, found once)."""
        order, size = self._subtrees()
        first, at = order.get(ancestor), order.get(entry_id)
        return first is not None and at is not None and first < at < first + size[ancestor]

    def _subtrees(self) -> tuple[dict[str, int], dict[str, int]]:
        """Each entry's place in the tree's pre-order, and its subtree's size (itself
        included): made once per parent map."""
        cached = self._subtree_cache
        if cached is None or cached[0] is not self._parent:
            order: dict[str, int] = {}
            for number, walked in enumerate(self.walk()):
                order.setdefault(walked, number)
            size = dict.fromkeys(order, 1)
            for walked in reversed(order):  # (pre-order reversed: children before parents)
                parent = self._parent.get(walked)
                if parent is not None and parent in size:
                    size[parent] += size[walked]
            cached = self._subtree_cache = (self._parent, order, size)
        return cached[1], cached[2]

    def first_kept_id(self, compaction: CompactionEntry) -> str | None:
        """The entry a compaction keeps the context from, as Pi finds it: by the id as
        written, on the compaction's own line, so an id the file uses twice names the copy
        there (renamed ``x~2`` here; looked up as ``x``, the other copy's entries were taken
        for out of context). Elsewhere, or not in the file: the id as written."""
        wanted = compaction.first_kept_entry_id
        if not wanted or self._latest_with_id.get(wanted, wanted) == wanted:
            return wanted  # (an id used once: itself)
        on_line = [
            copy
            for copy in self._copies_of(wanted)
            if copy == compaction.id or self._is_above(copy, compaction.id)
        ]  # (a look-up each, not a walk from the root per compaction: quadratic)
        order, _ = self._subtrees()  # (the nearest the root of them)
        return min(on_line, key=lambda copy: order.get(copy, 0)) if on_line else wanted

    def _copies_of(self, written: str) -> list[str]:
        """The entries the file writes with the id ``written``, in file order (made once)."""
        cached = self._copies_cache
        if cached is None or cached[0] is not self._parent:
            copies: dict[str, list[str]] = {}
            for entry in self.entries:
                if (key := _written_id(entry)) is not None:
                    copies.setdefault(key, []).append(entry.id)
            cached = self._copies_cache = (self._parent, copies)
        return cached[1].get(written, [])

    def entry(self, entry_id: str) -> Entry:
        return self.by_id[entry_id]

    def iter_messages(self, entry_ids: Iterable[str] | None = None) -> Iterator[MessageEntry]:
        source = (self.by_id[i] for i in entry_ids) if entry_ids is not None else self.entries
        for entry in source:
            if isinstance(entry, MessageEntry):
                yield entry
