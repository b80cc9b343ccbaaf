"""Session -> view objects for the page: transcript items, branch blocks and the outline.

The transcript is the whole tree laid out once: the active path as the main line, and at
each fork every other child as a collapsed branch block holding its own main line, nested
for nested forks. Each entry appears exactly once. Built iteratively (no recursion), so
deep or pathological trees cannot overflow the stack the way Pi's page does.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from exporter.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    DamagedLine,
    Entry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    as_str,
)
from exporter.formatting import fmt_cost, fmt_int, one_line
from exporter.render.markup import highlight, markdown, safe_image_src
from exporter.render.tools import (
    ImageView,
    ToolView,
    build_tool_view,
    fold,
    plain_lines,
    standalone_result_view,
)
from exporter.session import Session, parse_time
from exporter.usage import sum_usage, turn_usage

DEDUPE_MIN_CHARS = 400
OUTLINE_CHARS = 80
_SAFE_ANCHOR = re.compile(r"^[A-Za-z][A-Za-z0-9_.:~-]{0,80}$")


# ids the page itself uses, and prefixes of ids it derives (branch blocks, damaged lines)
RESERVED_IDS = frozenset(
    {"tree", "sidebar", "content", "transcript", "usage", "usage-h", "chart-title", "damaged",
     "theme-toggle", "toggle-thinking", "toggle-tools", "download-jsonl", "tree-search",
     "tree-status", "session-jsonl"}
)  # fmt: skip
RESERVED_PREFIXES = ("branch-", "line-", "flt-", "e-")


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


@dataclass(slots=True)
class Part:
    """One block of a message, in its original order: text, thinking, tool or image."""

    kind: str
    html: Markup | None = None
    tool: ToolView | None = None
    image: ImageView | None = None
    tool_entry_anchor: str | None = None
    redacted: bool = False
    name: str = ""


@dataclass(slots=True)
class EntryView:
    id: str
    anchor: str
    kind: str
    type: str
    time: str | None
    label: str | None = None
    classes: list[str] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    title: str = ""
    meta: str = ""
    html: Markup | None = None
    notes: list[str] = field(default_factory=list)
    compacted_by: str | None = None
    status: str = ""
    forks_here: int = 0

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
    cost: str
    last_activity: str | None
    labels: list[str]
    depth: int
    contains_leaf: bool


@dataclass(slots=True)
class Item:
    """A transcript token: an entry, or the start/end of a branch block."""

    kind: str  # entry | open | close
    entry: EntryView | None = None
    branch: BranchInfo | None = None


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


def _short_tool(call: dict[str, Any]) -> str:
    name = as_str(call.get("name")) or "?"
    args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
    for key in ("command", "path", "pattern", "file_path"):
        if isinstance(args.get(key), str):
            return f"[{name}: {one_line(args[key], 50)}]"
    return f"[{name}]"


class PageBuilder:
    """Builds transcript items and outline rows for one session (one pass each)."""

    def __init__(self, session: Session, display_path: Callable[[str], str]) -> None:
        self.session = session
        self.show = display_path
        self.path_set = set(session.active_path)
        self.compacted = session.context_status()
        self.consumed: set[str] = set()
        self.anchors = build_anchors([e.id for e in session.entries])
        self.outputs_seen: dict[int, tuple[str, str]] = {}

    def anchor(self, entry_id: str) -> str:
        """The DOM id of an entry (see :func:`build_anchors`)."""
        return self.anchors.get(entry_id) or "e-missing"

    def dedupe_output(self, tool: ToolView, anchor: str) -> None:
        """Show a long output once; later identical outputs link to the first one."""
        if tool.result_entry_id is None or tool.output is None:
            return
        result = self.session.by_id[tool.result_entry_id]
        text = result.text if isinstance(result, MessageEntry) else ""
        if len(text) < DEDUPE_MIN_CHARS:
            return
        key = hash(text)
        first = self.outputs_seen.get(key)
        if first is not None and first[1] == text:
            tool.same_output_as = first[0]
        else:
            self.outputs_seen[key] = (anchor, text)

    # -- main line of a subtree -----------------------------------------------------
    def main_line(self, start: str) -> list[str]:
        """From ``start`` down: follow the active path, else the newest child (Pi's rule)."""
        line = [start]
        children = self.session.children
        node = start
        while children.get(node):
            kids = children[node]
            on_path = [k for k in kids if k in self.path_set]
            node = on_path[0] if on_path else kids[-1]
            line.append(node)
        return line

    def transcript(self) -> list[Item]:
        """Items in page order; each fork's alternatives follow the fork entry directly."""
        session = self.session
        if not session.roots:
            return []
        main_root = session.active_path[0] if session.active_path else session.roots[0]
        # Work: ("line", ids, id_set, position, depth) | ("open", id, depth) | ("close",)
        work: list[tuple[Any, ...]] = []
        for root in reversed([r for r in session.roots if r != main_root]):
            work += [("close",), ("line", *self._line(root), 0, 1), ("open", root, 1)]
        work.append(("line", *self._line(main_root), 0, 0))
        items: list[Item] = []
        while work:
            task = work.pop()
            if task[0] == "close":
                items.append(Item("close"))
            elif task[0] == "open":
                items.append(Item("open", branch=self.branch_info(task[1], task[2])))
            else:
                self._run_line(task, work, items)
        return items

    def _line(self, start: str) -> tuple[list[str], set[str]]:
        line = self.main_line(start)
        return line, set(line)

    def _run_line(self, task: tuple[Any, ...], work: list[Any], items: list[Item]) -> None:
        """Emit a main line until a fork; then queue the rest behind the fork's branches."""
        _, line, line_set, position, depth = task
        for index in range(position, len(line)):
            entry_id = line[index]
            view = None
            if entry_id not in self.consumed:
                view = self.entry_view(self.session.by_id[entry_id], line_set)
                items.append(Item("entry", entry=view))
            kids = self.session.children.get(entry_id, ())
            alternatives = [k for k in kids if k not in line_set] if len(kids) > 1 else []
            if alternatives:
                if view is not None:
                    view.forks_here = len(alternatives)
                work.append(("line", line, line_set, index + 1, depth))
                for alt in reversed(alternatives):
                    work += [("close",), ("line", *self._line(alt), 0, depth + 1)]
                    work.append(("open", alt, depth + 1))
                return

    def branch_info(self, first_id: str, depth: int) -> BranchInfo:
        session = self.session
        ids = list(session.walk(first_id))
        entries = [session.by_id[i] for i in ids]
        usage = sum_usage(entries)
        times = [t for t in (parse_time(e.timestamp) for e in entries) if t]
        return BranchInfo(
            first_id=first_id,
            anchor="branch-" + self.anchor(first_id),
            first_prompt=one_line(session.first_prompt(ids) or "(no prompt)", 90),
            entries=len(ids),
            cost=fmt_cost(usage.cost),
            last_activity=max(times).isoformat() if times else None,
            labels=[session.labels[i] for i in ids if i in session.labels],
            depth=depth,
            contains_leaf=session.leaf_id in set(ids),
        )

    # -- one entry ------------------------------------------------------------------
    def entry_view(self, entry: Entry, line_set: set[str]) -> EntryView:
        session = self.session
        label = session.labels.get(entry.id)
        view = EntryView(
            id=entry.id,
            anchor=self.anchor(entry.id),
            kind=entry.type,
            type=entry.type,
            time=entry.timestamp,
            label=label,
        )
        if label:
            view.classes.append("is-labeled")
        if entry.id in self.compacted:
            view.compacted_by = self.anchor(self.compacted[entry.id])
            view.classes.append("compacted")
        builder = _ENTRY_BUILDERS.get(type(entry))
        if builder is None:
            _unknown(self, entry, view)
        else:
            builder(self, entry, view, line_set)
        return view

    # -- outline ----------------------------------------------------------------------
    def outline(self) -> list[OutlineRow]:
        """Rows for the sidebar; a sub-list opens only at forks (chains stay flat, like Pi).

        "open"/"close" rows wrap a child subtree; the active path's child comes first.
        """
        session = self.session
        rows: list[OutlineRow] = []
        roots = sorted(session.roots, key=lambda r: r not in self.path_set)
        work: list[tuple[str, str]] = []
        for root in reversed(roots):
            work += (
                [("close", ""), ("chain", root), ("open", "")]
                if len(roots) > 1
                else [("chain", root)]
            )
        while work:
            action, node = work.pop()
            if action != "chain":
                rows.append(OutlineRow(action))
                continue
            while True:
                rows.append(self._outline_row(node))
                kids = session.children.get(node, [])
                if len(kids) != 1:
                    break
                node = kids[0]
            for kid in reversed(sorted(kids, key=lambda k: k not in self.path_set)):
                work += [("close", ""), ("chain", kid), ("open", "")]
        return rows

    def _outline_row(self, entry_id: str) -> OutlineRow:
        entry = self.session.by_id[entry_id]
        text, role, hidden = outline_text(entry)
        classes = [f"r-{role}"]
        if hidden:
            classes.append("hide-default")
        if entry_id in self.session.labels:
            classes.append("is-labeled")
        if role in ("tool", "toolResult"):
            classes.append("is-tool")
        if role == "user":
            classes.append("is-user")
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


_SKILL = re.compile(r'^<skill name="([^"]*)"(?: location="([^"]*)")?>\n?(.*?)\n?</skill>\n*', re.S)


def split_skill(text: str) -> tuple[tuple[str, str] | None, str]:
    """Pi wraps a skill invocation as ``<skill name=…>body</skill>`` before the prompt."""
    match = _SKILL.match(text)
    if not match:
        return None, text
    return (match.group(1), match.group(3)), text[match.end() :]


def outline_text(entry: Entry) -> tuple[str, str, bool]:
    """Row text, role class and whether the Default filter hides it."""
    if isinstance(entry, MessageEntry):
        role = entry.role
        if role == "user":
            skill, text = split_skill(entry.text)
            prefix = f"skill: {skill[0]} · " if skill else ""
            return f"{prefix}user: {one_line(text, OUTLINE_CHARS) or '(image)'}", "user", False
        if role == "assistant":
            text = one_line(entry.text, OUTLINE_CHARS)
            if entry.stop_reason == "aborted":
                return f"assistant: (aborted) {text}".rstrip(), "assistant", False
            if entry.stop_reason == "error":
                return f"assistant: error: {one_line(entry.error_message, 80)}", "error", False
            if not text and entry.tool_calls:
                calls = " ".join(_short_tool(c) for c in entry.tool_calls[:3])
                return f"assistant: {calls}", "assistant", False
            return f"assistant: {text or '(no text)'}", "assistant", False
        if role == "toolResult":
            return (
                f"[{entry.tool_name or '?'} result] {one_line(entry.text, 60)}",
                "toolResult",
                False,
            )
        if role == "bashExecution":
            return f"[bash]: {one_line(entry.command, 80)}", "bash", False
        if role == "custom":
            return (
                f"[{entry.custom_type or 'custom'}]: {one_line(entry.text, 80)}",
                "custom",
                not entry.display,
            )
        return f"[{role}]", "other", True
    if isinstance(entry, CompactionEntry):
        return f"[compaction: {fmt_int(entry.tokens_before)} tokens]", "compaction", False
    if isinstance(entry, BranchSummaryEntry):
        return f"[branch summary]: {one_line(entry.summary, 80)}", "summary", False
    if isinstance(entry, CustomMessageEntry):
        return f"[{entry.custom_type}]: {one_line(entry.text, 80)}", "custom", not entry.display
    if isinstance(entry, ModelChangeEntry):
        return f"[model: {entry.model_key or '?'}]", "meta", True
    if isinstance(entry, ThinkingLevelChangeEntry):
        return f"[thinking: {entry.thinking_level}]", "meta", True
    if isinstance(entry, LabelEntry):
        return f"[label: {one_line(entry.label or '(cleared)', 40)}]", "meta", True
    if isinstance(entry, SessionInfoEntry):
        return f"[name: {one_line(entry.name or '(cleared)', 60)}]", "meta", False
    if isinstance(entry, CustomEntry):
        return f"[{entry.custom_type}] (extension data)", "hidden", True
    return f"[{one_line(entry.type, 40)}]", "hidden", True


# --- per-type builders -------------------------------------------------------------------


def _images_of(blocks: list[dict[str, Any]]) -> list[Part]:
    parts = []
    for block in blocks:
        if block.get("type") == "image":
            mime = as_str(block.get("mimeType")) or "?"
            parts.append(
                Part("image", image=ImageView(safe_image_src(mime, block.get("data")), mime))
            )
    return parts


def _message(
    builder: PageBuilder, entry: MessageEntry, view: EntryView, line_set: set[str]
) -> None:
    role = entry.role
    view.kind = role
    if role == "user":
        view.classes.append("is-user")
        view.parts = _images_of(entry.content)
        skill, text = split_skill(entry.text)
        if skill is not None:
            name, body = skill
            view.parts.insert(0, Part("skill", html=markdown(body), name=name))
        view.html = markdown(text)
    elif role == "assistant":
        _assistant(builder, entry, view, line_set)
    elif role == "toolResult":
        ref = builder.session.call_for_result(entry.id)
        call = None
        if ref is not None:
            owner = builder.session.by_id[ref.entry_id]
            content = owner.raw.get("message", {}).get("content")  # type: ignore[union-attr]
            call = content[ref.block_index] if isinstance(content, list) else None
        view.kind = "toolResult"
        view.classes.append("is-tool")
        tool = standalone_result_view(entry, call, builder.show)
        builder.dedupe_output(tool, view.anchor)
        view.parts = [Part("tool", tool=tool)]
        view.status = view.parts[0].tool.status  # type: ignore[union-attr]
    elif role == "bashExecution":
        view.kind = "bashExecution"
        view.html = highlight(entry.command, "bash")
        output = fold(plain_lines(entry.output), 12, tail=True)
        view.parts = [Part("output", html=None)]
        view.parts[0].tool = ToolView(call_id="", name="bash", kind="bashExecution", output=output)
        code = entry.exit_code
        cancelled = entry.message.get("cancelled") is True
        view.status = "error" if cancelled or (code not in (None, 0)) else "ok"
        notes = []
        if code is not None:
            notes.append(f"exit {code}")
        if cancelled:
            notes.append("cancelled")
        if entry.message.get("truncated") is True:
            path = as_str(entry.message.get("fullOutputPath"))
            notes.append(f"output truncated by Pi{f' (full output: {path})' if path else ''}")
        if entry.excluded_from_context:
            notes.append("!! not sent to the model")
            view.classes.append("excluded")
        view.notes = notes
    elif role == "custom":
        view.kind = "customMessage"
        view.title = entry.custom_type or "custom"
        view.parts = _images_of(entry.content)
        view.html = markdown(entry.text)
        if not entry.display:
            view.classes.append("hide-default")
            view.notes.append("hidden in Pi's UI (display: false), still sent to the model")
    else:
        _unknown(builder, entry, view)


def _assistant(
    builder: PageBuilder, entry: MessageEntry, view: EntryView, line_set: set[str]
) -> None:
    session = builder.session
    content = entry.message.get("content")
    blocks = content if isinstance(content, list) else []
    for index, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            view.parts.append(Part("text", html=markdown(as_str(block.get("text")) or "")))
        elif kind == "thinking":
            text = as_str(block.get("thinking")) or ""
            redacted = block.get("redacted") is True
            if text or redacted:
                view.parts.append(Part("thinking", html=markdown(text), redacted=redacted))
        elif kind == "toolCall":
            # Results on other branches render there, next to a copy of the call.
            result = session.result_for_call(entry.id, index, within=line_set)
            tool = build_tool_view(
                block, result if isinstance(result, MessageEntry) else None, builder.show
            )
            anchor = None
            if result is not None:
                builder.consumed.add(result.id)
                anchor = builder.anchor(result.id)
                builder.dedupe_output(tool, anchor)
            view.parts.append(Part("tool", tool=tool, tool_entry_anchor=anchor))
        elif kind == "image":
            view.parts.extend(_images_of([block]))
        else:
            view.parts.append(
                Part(
                    "other", html=highlight(json.dumps(block, ensure_ascii=False, indent=2), "json")
                )
            )
    if isinstance(content, str):
        view.parts.append(Part("text", html=markdown(content)))
    usage = turn_usage(entry)
    model = entry.model_key or "unknown model"
    if usage.turns_without_usage:
        view.meta = f"{model} · no usage recorded"
    else:
        view.meta = (
            f"{model} · in {fmt_int(usage.input)} · out {fmt_int(usage.output)}"
            f" · cache {fmt_int(usage.cache_read)}/{fmt_int(usage.cache_write)}"
            f" · {fmt_cost(usage.cost)}"
        )
    reason = entry.stop_reason
    if reason == "error":
        view.status = "error"
        view.notes.append(f"Error: {entry.error_message or 'the model call failed'}")
    elif reason == "aborted":
        view.status = "aborted"
        view.notes.append("Aborted by the user")
    elif reason == "length":
        view.status = "length"
        view.notes.append("Stopped: output token limit reached (stopReason: length)")


def _compaction(
    builder: PageBuilder, entry: CompactionEntry, view: EntryView, line_set: set[str]
) -> None:
    view.title = f"Compacted from {fmt_int(entry.tokens_before)} tokens"
    view.html = markdown(entry.summary)
    details = entry.details
    for key, label in (("readFiles", "read"), ("modifiedFiles", "modified")):
        files = details.get(key)
        if isinstance(files, list) and files:
            shown = ", ".join(builder.show(str(f)) for f in files[:20])
            more = f" and {len(files) - 20} more" if len(files) > 20 else ""
            view.notes.append(f"{label}: {shown}{more}")
    kept = entry.first_kept_entry_id
    if kept and kept in builder.session.by_id:
        view.notes.append(f"context kept from entry {kept}")


def _branch_summary(
    builder: PageBuilder, entry: BranchSummaryEntry, view: EntryView, line_set: set[str]
) -> None:
    view.kind = "branchSummary"
    view.html = markdown(entry.summary)
    view.title = f"branched away from {entry.from_id}" if entry.from_id else ""


def _custom_message(
    builder: PageBuilder, entry: CustomMessageEntry, view: EntryView, line_set: set[str]
) -> None:
    view.kind = "customMessage"
    view.title = entry.custom_type
    view.parts = _images_of(entry.content)
    view.html = markdown(entry.text)
    if not entry.display:
        view.classes.append("hide-default")
        view.notes.append("hidden in Pi's UI (display: false), still sent to the model")


def _json_view(view: EntryView, value: Any) -> None:
    try:
        text = json.dumps(value, ensure_ascii=False, indent=2)
    except (TypeError, ValueError):
        text = repr(value)
    view.parts = [Part("json", html=highlight(text, "json"))]


def _custom(builder: PageBuilder, entry: CustomEntry, view: EntryView, line_set: set[str]) -> None:
    view.title = entry.custom_type
    view.classes.append("hide-default")
    _json_view(view, entry.data)


def _model_change(
    builder: PageBuilder, entry: ModelChangeEntry, view: EntryView, line_set: set[str]
) -> None:
    view.kind = "marker"
    view.title = f"Model: {entry.model_key or '?'}"


def _thinking_change(
    builder: PageBuilder, entry: ThinkingLevelChangeEntry, view: EntryView, line_set: set[str]
) -> None:
    view.kind = "marker"
    view.title = f"Thinking level: {entry.thinking_level}"


def _session_info(
    builder: PageBuilder, entry: SessionInfoEntry, view: EntryView, line_set: set[str]
) -> None:
    view.kind = "marker"
    view.title = f"Session named “{entry.name}”" if entry.name else "Session name cleared"


def _label(builder: PageBuilder, entry: LabelEntry, view: EntryView, line_set: set[str]) -> None:
    view.kind = "marker"
    target = entry.target_id or "?"
    view.title = (
        f"Label “{entry.label}” on {target}" if entry.label else f"Label cleared on {target}"
    )
    view.classes.append("hide-default")


def _unknown(
    builder: PageBuilder, entry: Entry, view: EntryView, line_set: set[str] | None = None
) -> None:
    view.kind = "unknown"
    view.title = f"Unknown entry type “{entry.type}”"
    if isinstance(entry, MessageEntry):
        view.title = f"Message with unknown role “{entry.role}”"
    view.classes.append("hide-default")
    _json_view(view, entry.raw)


_ENTRY_BUILDERS: dict[type, Callable[..., None]] = {
    MessageEntry: _message,
    CompactionEntry: _compaction,
    BranchSummaryEntry: _branch_summary,
    CustomMessageEntry: _custom_message,
    CustomEntry: _custom,
    ModelChangeEntry: _model_change,
    ThinkingLevelChangeEntry: _thinking_change,
    SessionInfoEntry: _session_info,
    LabelEntry: _label,
}


def damaged_views(damaged: list[DamagedLine]) -> list[dict[str, Any]]:
    return [
        {
            "line": d.line,
            "kind": d.kind,
            "message": d.message,
            "text": fold(plain_lines(d.text), 6),
            "anchor": f"line-{d.line}",
        }
        for d in damaged
    ]


def anchor_for(session: Session, entry_id: str) -> str:
    """The DOM id the page gives ``entry_id`` (for tests and tools that link into a page)."""
    return build_anchors([e.id for e in session.entries])[entry_id]
