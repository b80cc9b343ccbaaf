"""Small view objects the templates print: entries, their parts, branch blocks, outline rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from markupsafe import Markup

from exporter.render.folding import Folded
from exporter.render.tools import ImageView, ToolView


@dataclass(slots=True)
class Part:
    """One block of a message, in its original order: text, thinking, tool or image."""

    kind: str
    html: Markup | None = None
    tool: ToolView | None = None
    image: ImageView | None = None
    tool_entry_anchor: str | None = None
    tool_label: str | None = None  # the label on the result shown with the call
    tool_forks: int = 0  # branches that fork at that result (they follow the message)
    redacted: bool = False
    name: str = ""  # a skill's name; a thinking block's length ("312 words")
    fold: Folded | None = None  # a "json" or "other" part: highlighted, its long tail folded


@dataclass(slots=True)
class EntryView:
    id: str
    anchor: str
    kind: str
    type: str
    time: datetime | str | None  # read, or as written when unreadable
    label: str | None = None
    classes: list[str] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    title: str = ""
    heading: str = ""  # instead of the kind's heading (another agent's own context)
    meta: str = ""
    html: Markup | None = None
    notes: list[str] = field(default_factory=list)
    status: str = ""
    forks_here: int = 0
    is_leaf: bool = False  # the active path ends here (`--leaf`), though the session goes on
    odd: Markup | None = None  # fields not of the type Pi writes, as highlighted JSON
    details: Folded | None = None  # an entry's ``details`` the view does not show in full

    @property
    def css(self) -> str:
        return " ".join([f"k-{self.kind}", *self.classes])


@dataclass(slots=True)
class BranchInfo:
    """Summary line of a collapsed alternative branch."""

    first_id: str
    anchor: str
    first_prompt: str
    entries: int
    lines: int  # leaves below: the block holds this many branches (its own and nested ones)
    cost: str
    last_activity: str | None
    labels: list[str]
    depth: int
    separate: str  # another root (a tree of its own, not a branch): why it is one, else ""
    has_user: bool = True  # a user message in it: "User only" hides a branch without
    has_label_shown: bool = True  # a label "Labeled" shows: it hides a branch without
    forks_at: str = ""  # the fork's anchor, when the block is not right after it (too deep)

    @property
    def filter_classes(self) -> str:
        return empty_under_filters(labeled=self.has_label_shown, user=self.has_user)


def empty_under_filters(*, labeled: bool, user: bool) -> str:
    """Classes for a branch block (or a group of them) that "Labeled" / "User only" would
    open to nothing, so those filters hide it."""
    return ("" if labeled else " no-labeled") + ("" if user else " no-user")


@dataclass(slots=True)
class ContextRun:
    """Where entries a compaction took out of the model's context begin, in one block."""

    compaction_anchor: str
    compaction_time: datetime | str | None  # read, or as written when unreadable


@dataclass(slots=True)
class Item:
    """A transcript token: an entry, or the start/end of a branch block.

    Planned first (which entry goes where), rendered later (``html``), possibly in another
    process: an entry's HTML depends only on the plan, never on entries rendered before it.
    """

    kind: str  # entry | open | close | group_open | group_close
    branch: BranchInfo | None = None
    group_size: int = 0  # group_open: how many branch blocks the group holds
    group_classes: str = ""  # group_open: the filters its branches would all open empty
    entry_id: str = ""
    line_set: frozenset[str] | set[str] = frozenset()  # the main line the entry sits on
    forks_here: int = 0
    html: Markup | None = None
    # Runs of entries out of the model's context are wrapped: the wrappers that end before
    # this item, and the one that starts at it (its first entry).
    runs_closed: int = 0
    context_run: ContextRun | None = None


@dataclass(slots=True)
class OutlineRow:
    kind: str  # open | close | row
    anchor: str = ""
    entry_id: str = ""
    text: str = ""
    role: str = ""
    classes: str = ""
    label: str | None = None
    on_path: bool = False
    is_leaf: bool = False
    branch_shows: set[str] = field(default_factory=set)  # filters showing a row below (forks)
    folded: int = 0  # an "open" row: the entries of a branch folded under it (0: not folded)
    # of those, the ones the Default and No tools filters show, where that is not all of them
    folded_by: dict[str, int] = field(default_factory=dict)
    folded_branches: int = 1  # the branches folded: that one and those forking inside it
