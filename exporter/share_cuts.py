"""What a share policy keeps of a session before any text is redacted: which entries stay
(hidden ones, other branches), how kept entries are re-linked over dropped parents, and the
content cuts (thinking, tool output, images, signatures), each counted in the report.

``redact.apply_policy`` runs these, then redacts the text of what is left.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from exporter.entries import (
    BranchSummaryEntry,
    CustomMessageEntry,
    Entry,
    LabelEntry,
    MessageEntry,
    SessionInfoEntry,
    blocks_text,
    id_key,
)
from exporter.policy import RedactionPolicy
from exporter.session import Session

if TYPE_CHECKING:
    from exporter.redact import RedactionReport

__all__ = [
    "UnknownExclusionError",
    "check_known_exclusions",
    "cut_content",
    "excluded_ids",
    "is_hidden",
    "moved_first_kept",
    "select_entries",
    "unknown_exclusions",
]

_SIGNATURES = ("thinkingSignature", "thoughtSignature", "textSignature")


def _is_tool_entry(entry: Entry) -> bool:
    """A tool's result, or a shell command run with ``!``: what --no-tool-calls leaves out."""
    return isinstance(entry, MessageEntry) and entry.role in ("toolResult", "bashExecution")


def is_hidden(entry: Entry) -> bool:
    """Never shown by Pi: custom state, ``display:false`` custom messages."""
    if entry.type == "custom":
        return True
    if isinstance(entry, (CustomMessageEntry, MessageEntry)):
        return not entry.display
    return False


def _edit_blocks(blocks: list[Any], policy: RedactionPolicy, report: RedactionReport) -> list[Any]:
    out: list[Any] = []
    calls: Counter[str] = Counter()  # tool calls left out, by tool
    # a signature is the provider's sealed copy of the model's reasoning (Gemini puts one on
    # text and tool calls too): --no-thinking leaves it out as --drop-hidden does
    strip_signatures = policy.drop_hidden or policy.no_thinking
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "toolCall" and policy.no_tool_calls:
            calls[str(block.get("name") or "a tool")[:60]] += 1
        elif kind == "thinking" and policy.no_thinking:
            report.count("thinking_blocks_dropped")
        elif kind == "image" and policy.no_images:
            report.count("images_omitted")
            mime = str(block.get("mimeType", "image"))[:60]
            out.append({"type": "text", "text": f"[image left out (--no-images): {mime}]"})
        elif kind and strip_signatures and any(name in block for name in _SIGNATURES):
            report.count("signatures_dropped")
            out.append({k: v for k, v in block.items() if k not in _SIGNATURES})
        else:
            out.append(block)
    if calls:
        total = sum(calls.values())
        report.count("tool_calls_omitted", total)
        tools = ", ".join(f"{name} {n}" for name, n in calls.most_common())
        # the option's name, not "share policy": a plain export says it too (review 2026-12-02)
        said = f"{total} tool call{'' if total == 1 else 's'} left out (--no-tool-calls): {tools}"
        out.append({"type": "text", "text": f"[{said}]"})
    return out


#: Pi's listing tools, whose view heads its output with a count of what it lists.
_LISTINGS = frozenset({"ls", "find", "grep"})

#: The note ``--no-tool-output`` puts in place of a result; a listing's says what it listed
#: (``listed``: "25 entries (limit reached)"), counted before its output went: the page and
#: the Markdown counted the note's one line ("1 entry").
LEFT_OUT_NOTE = re.compile(
    r"\[tool output left out \(--no-tool-output\): [\d,]+ lines?, [\d,]+ characters"
    r"(?:; it listed (?P<listed>[\d,]+ (?:entry|entries|file|files|match|matches)"
    r"(?: \(limit reached\))?))?\]"
)


def _omitted(text: str, listed: str = "") -> str:
    """The note in place of an output; ``listed``: what a listing tool's output listed."""
    lines = text.count("\n") + 1 if text else 0
    plural = "" if lines == 1 else "s"
    said = f"{lines} line{plural}, {len(text)} characters" + (
        f"; it listed {listed}" if listed else ""
    )
    return f"[tool output left out (--no-tool-output): {said}]"


def _listed(message: dict[str, Any], text: str) -> str:
    """What a listing tool's successful result lists ("25 entries"), as its view counts it;
    empty for any other result."""
    name = message.get("toolName")
    if not isinstance(name, str) or name not in _LISTINGS or message.get("isError") is True:
        return ""
    from exporter.render.tools import listing_count  # the renderer: only for such a result

    return listing_count(name, text.rstrip("\n"))


def _edit_message(
    message: dict[str, Any], policy: RedactionPolicy, report: RedactionReport
) -> dict[str, Any]:
    role = message.get("role")
    new = dict(message)
    if isinstance(message.get("content"), list):
        new["content"] = _edit_blocks(message["content"], policy, report)
    if policy.no_tool_output and role == "toolResult":
        report.count("tool_outputs_omitted")
        text = blocks_text(message.get("content"))
        new["content"] = [{"type": "text", "text": _omitted(text, _listed(message, text))}]
        new.pop("details", None)
    if policy.no_tool_output and role == "bashExecution" and isinstance(new.get("output"), str):
        report.count("tool_outputs_omitted")
        new["output"] = _omitted(new["output"])
    if policy.no_images and isinstance(message.get("attachments"), list):
        attachments = []
        for item in message["attachments"]:
            if isinstance(item, dict) and item.get("type") == "image":
                report.count("images_omitted")
                item = {k: v for k, v in item.items() if k not in ("content", "preview")}
            attachments.append(item)
        new["attachments"] = attachments
    return new


def cut_content(
    raw: dict[str, Any], policy: RedactionPolicy, report: RedactionReport
) -> dict[str, Any]:
    """A shallow copy with the policy's content cuts (the walker deep-copies afterwards)."""
    if raw.get("type") == "message" and isinstance(raw.get("message"), dict):
        return {**raw, "message": _edit_message(raw["message"], policy, report)}
    if raw.get("type") == "custom_message" and isinstance(raw.get("content"), list):
        return {**raw, "content": _edit_blocks(raw["content"], policy, report)}
    return raw


def _excluded_entry(spec: str) -> tuple[str, bool]:
    """``ID`` or ``ID/`` (the entry and everything after it) as (id, with its subtree)."""
    return (spec[:-1], True) if spec.endswith("/") else (spec, False)


def unknown_exclusions(session: Session, specs: tuple[str, ...]) -> list[str]:
    """The ``--exclude`` values that name no entry of ``session`` (a typo would otherwise
    share what it meant to leave out)."""
    return [spec for spec in specs if session.named_entry(_excluded_entry(spec)[0]) is None]


class UnknownExclusionError(ValueError):
    """A policy's ``exclude`` names an entry the session does not have."""


def check_known_exclusions(session: Session, specs: tuple[str, ...]) -> None:
    """:class:`UnknownExclusionError` for ``exclude`` ids ``session`` does not have, in the
    words of the CLI's check (``--exclude: no entry … in this session``), which refuses
    them before any work: a library caller's typo left the entry in, silently."""
    unknown = unknown_exclusions(session, specs)
    if unknown:
        listed = ", ".join(repr(spec) for spec in unknown[:5])
        more = f" and {len(unknown) - 5:,} more" if len(unknown) > 5 else ""
        raise UnknownExclusionError(f"exclude: no entry {listed}{more} in this session")


def excluded_ids(session: Session, specs: tuple[str, ...]) -> set[str]:
    """The entries ``--exclude`` leaves out: each named entry, with the results of the tool
    calls it made (they show what it ran); with ``ID/``, its whole subtree; and the labels
    set on any of them (a label's text is about what was left out)."""
    ids: set[str] = set()
    callers: set[str] = set()
    for spec in specs:
        name, subtree = _excluded_entry(spec)
        entry_id = session.named_entry(name)  # "a" the latest copy of an id written twice
        if entry_id is None:
            continue
        if subtree:
            ids.update(session.walk(entry_id))
        else:
            ids.add(entry_id)
            callers.add(entry_id)
    for entry in session.entries:
        ref = session.call_for_result(entry.id) if callers else None
        if ref is not None and ref.entry_id in callers:
            ids.add(entry.id)
    ids.update(
        e.id
        for e in session.entries
        if isinstance(e, LabelEntry) and session.label_target(e) in ids
    )
    return ids


def _dropped_by_rule(entry: Entry, policy: RedactionPolicy) -> bool:
    """Left out by a rule about its kind (hidden, a tool's output), not by choice of entry."""
    return (policy.drop_hidden and is_hidden(entry)) or (
        policy.no_tool_calls and _is_tool_entry(entry)
    )


def _with_fields(entry: Entry, **fields: Any) -> Entry:
    """A copy of ``entry`` with some of its JSON fields replaced: the session stays as read."""
    return dataclasses.replace(entry, raw={**entry.raw, **fields})


def select_entries(
    session: Session, policy: RedactionPolicy
) -> tuple[list[Entry], dict[str, str | None]]:
    """Kept entries (leaf last) and new raw parent ids for those whose parent was dropped.

    An entry left out by a rule (hidden, a tool's output) does not take its bookmark with it:
    its label moves to the nearest kept ancestor (see :func:`_moved_labels`), and a branch
    summary's ``fromId`` naming a dropped entry names that entry's nearest kept ancestor, as
    its ``parentId`` does (``"root"`` when there is none, as Pi writes it). Kept entries so
    edited are copies.

    With ``active_branch_only``, the label entries that decide a kept entry's label and the
    entry that names the session are kept even when they were written while another branch
    was checked out (so they sit on that branch): they are chained after the leaf, so the
    copy is still one branch, and its entries keep their labels and the session its name.
    An entry ``--exclude`` left out never comes back that way. An ``exclude`` id the
    session does not have is an :class:`UnknownExclusionError` (see
    :func:`check_known_exclusions`).
    """
    check_known_exclusions(session, policy.exclude)
    active = set(session.active_path) if policy.active_branch_only else None
    excluded = excluded_ids(session, policy.exclude) if policy.exclude else set()

    def chosen(entry_id: str) -> bool:
        """In the part of the session the policy shares: its branch, less ``--exclude``."""
        return (active is None or entry_id in active) and entry_id not in excluded

    kept = [e for e in session.entries if chosen(e.id) and not _dropped_by_rule(e, policy)]
    kept_ids = {e.id for e in kept}
    moved_labels, stray_labels = _moved_labels(session, kept_ids, chosen, excluded)
    if stray_labels:
        kept = [e for e in kept if e.id not in stray_labels]
        kept_ids -= stray_labels
    nearest: dict[str, str | None] = {}  # dropped id -> its nearest kept ancestor

    def kept_ancestor(entry_id: str) -> str | None:
        return _ancestor_where(session, entry_id, lambda node: node not in kept_ids, nearest)

    def raw_id(entry_id: str | None) -> str | None:
        return session.by_id[entry_id].raw.get("id") if entry_id is not None else None

    reparent: dict[str, str | None] = {}
    edits: dict[str, dict[str, Any]] = {
        label_id: {"targetId": raw_id(place)} for label_id, place in moved_labels.items()
    }
    for entry in kept:
        parent = session.parent_of(entry.id)
        if parent is not None and parent not in kept_ids:
            reparent[entry.id] = raw_id(kept_ancestor(entry.id))
        if isinstance(entry, BranchSummaryEntry):
            origin = entry.from_id
            if origin is not None and origin in session.by_id and origin not in kept_ids:
                edits[entry.id] = {"fromId": raw_id(kept_ancestor(origin)) or "root"}
    leaf = session.leaf_id
    if leaf is not None and leaf not in kept_ids:
        leaf = kept_ancestor(leaf)
    if leaf is not None and kept[-1].id != leaf:  # Pi opens on the last line
        kept.append(kept.pop(next(i for i, e in enumerate(kept) if e.id == leaf)))
    if active is not None and leaf is not None:
        others = _state_from_other_branches(session, kept_ids, excluded, set(moved_labels))
        for entry in others:
            reparent[entry.id] = kept[-1].raw.get("id")
            kept.append(entry)
    if edits:
        kept = [_with_fields(e, **edits[e.id]) if e.id in edits else e for e in kept]
    return kept, reparent


def _ancestor_where(
    session: Session,
    entry_id: str,
    passed_over: Callable[[str], bool],
    known: dict[str, str | None],
) -> str | None:
    """The nearest ancestor of ``entry_id`` that ``passed_over`` does not skip (None at the
    root); ``known`` remembers each walked node's answer, so a long run is walked once."""
    walked = []
    node = session.parent_of(entry_id)
    while node is not None and passed_over(node):
        if node in known:
            node = known[node]
            break
        walked.append(node)
        node = session.parent_of(node)
    known.update(dict.fromkeys(walked, node))
    return node


def _moved_labels(
    session: Session,
    kept_ids: set[str],
    chosen: Callable[[str], bool],
    excluded: set[str],
) -> tuple[dict[str, str], set[str]]:
    """Where the labels of entries left out by a rule go: ``{label entry id: new target}``,
    and the label entries that go nowhere (their target is not in the copy).

    A dropped entry's label (the last label entry on it, if that one sets a label; earlier
    ones are undone or replaced by it) moves to its nearest kept ancestor that is not itself
    a label entry, so the bookmark keeps its place in the conversation, unless that entry has
    a label of its own (which stays), or a later moved label takes the place. A label on an
    entry of another branch (``active_branch_only``) stays behind with it. Labels of ids the
    file does not have are kept as read.
    """
    own_last: dict[str, LabelEntry] = {}  # kept target -> the last label entry on it
    dropped_last: dict[str, LabelEntry] = {}  # target dropped by a rule -> likewise
    stray: set[str] = set()
    position: dict[str, int] = {}
    for index, entry in enumerate(session.entries):
        if not isinstance(entry, LabelEntry) or entry.id in excluded:
            continue
        target = session.label_target(entry)
        if target is None or target not in session.by_id:
            continue
        position[entry.id] = index
        if target in kept_ids:
            own_last[target] = entry
            continue
        stray.add(entry.id)
        if chosen(target):  # shared, but left out by a rule
            dropped_last[target] = entry

    places: dict[str, str | None] = {}  # entry passed over -> where its labels would go

    def passed_over(node: str) -> bool:  # dropped, or a label entry (no bookmark's place)
        return node not in kept_ids or isinstance(session.by_id[node], LabelEntry)

    def place_for(target: str) -> str | None:
        return _ancestor_where(session, target, passed_over, places)

    taken: dict[str, LabelEntry] = {}  # new target -> the label entry that moves there
    for target, entry in dropped_last.items():
        place = place_for(target) if entry.label else None
        if place is None or (place in own_last and own_last[place].label):
            continue
        if place not in taken or position[taken[place].id] < position[entry.id]:
            taken[place] = entry
    moved = {entry.id: place for place, entry in taken.items()}
    return moved, stray - moved.keys()


def _state_from_other_branches(
    session: Session, kept_ids: set[str], excluded: set[str], moved_labels: set[str]
) -> list[Entry]:
    """Label and session-name entries off the kept path that decide the kept copy's labels
    and name (the last one in file order wins, as in Pi), in file order, with the labels
    moved off dropped entries. A label clear only counts if it undoes a kept label entry.
    Excluded entries are not looked at: the copy reads as if they had never been written."""
    last_label: dict[str, LabelEntry] = {}
    labelled_on_path: set[str] = set()
    last_name: SessionInfoEntry | None = None
    for entry in session.entries:
        if entry.id in excluded:
            continue
        if isinstance(entry, LabelEntry) and (target := session.label_target(entry)) in kept_ids:
            last_label[target] = entry
            if entry.id in kept_ids:
                labelled_on_path.add(target)
        elif isinstance(entry, SessionInfoEntry):
            last_name = entry
    chosen = {
        entry.id
        for target, entry in last_label.items()
        if entry.label or target in labelled_on_path
    }
    if last_name is not None:
        chosen.add(last_name.id)
    chosen |= moved_labels
    return [e for e in session.entries if e.id in chosen and e.id not in kept_ids]


def moved_first_kept(session: Session, entry: Entry, kept_ids: set[str]) -> str | None:
    """A compaction's ``firstKeptEntryId`` moved to the next kept entry on its path (a
    number id too: ``id_key`` reads it as Pi does)."""
    target = id_key(entry.raw.get("firstKeptEntryId"), entry.id_number_suffix)
    if target is None or target not in session.by_id or target in kept_ids:
        return None
    path = session.path_to(entry.id)
    if target not in path:
        return None
    following = path[path.index(target) :]
    return next((session.by_id[i].raw.get("id") for i in following if i in kept_ids), None)
