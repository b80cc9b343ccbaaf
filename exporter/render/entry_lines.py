"""Entries as one line: outline rows, title and branch previews, and a tool call's
short form ("[read: src/app.py:20-59]"). Plain text, never markup.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from exporter.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
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
    fmt_int,
    one_line,
    plain_line,
    prompt_line,
    short_path,
    skill_and_line,
)
from exporter.render.ansi import SGR
from exporter.render.odd_values import OTHER_TYPE_SAID, odd_content
from exporter.render.tools import TODO_TOOLS, patch_diff, read_line_range, todo_done, todo_items

if TYPE_CHECKING:
    from exporter.session import Session

OUTLINE_CHARS = 80


def _short_tool(call: dict[str, Any], show: Callable[[str], str] | None = None) -> str:
    """A call as Pi's tree names it: ``[read: ~/app.py:1-20]``, ``[bash: make test]``,
    ``[grep: /TODO/ in src]``, ``[find: *.py in .]``, ``[ls: .]``, else the name and the
    start of its arguments (paths as the page shows them, when ``show`` is given)."""
    name = as_str(call.get("name")) or "?"
    args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}

    def text(*keys: str) -> str | None:
        return next((v for k in keys if isinstance(v := args.get(k), str)), None)

    def path(default: str | None = None) -> str:
        value = text("path", "file_path") or default or ""
        return short_path(show(value) if show is not None and value != default else value, 50)

    if name in ("read", "write", "edit") and text("path", "file_path") is not None:
        lines = read_line_range(args) if name == "read" else ""
        return f"[{name}: {path()}{lines}]"
    if name == "bash" and text("command") is not None:
        return f"[bash: {one_line(text('command') or '', 50)}]"
    if name in ("grep", "find") and text("pattern") is not None:
        pattern = one_line(text("pattern") or "", 40)
        shown = f"/{pattern}/" if name == "grep" else pattern
        return f"[{name}: {shown} in {path('.')}]"
    if name == "ls":
        return f"[ls: {path('.')}]"
    if name in TODO_TOOLS and (todos := todo_items(args)) is not None:
        return f"[{name}: {todo_done(todos)}]"
    if name == "apply_patch" and (patch := patch_diff(text("input") or "")) is not None:
        if len(patch.files) == 1:
            where = patch.files[0].path
            return f"[{name}: {short_path(show(where) if show else where, 50)}]"
        return f"[{name}: {len(patch.files)} files]"
    for key in ("command", "pattern", "path", "file_path"):  # other tools: the main argument
        value = text(key)
        if value is not None:
            if key in ("path", "file_path"):
                return f"[{name}: {short_path(show(value) if show else value, 50)}]"
            return f"[{name}: {one_line(value, 50)}]"
    if args:
        serialized = json.dumps(args, ensure_ascii=False, separators=(",", ":"), default=str)
        return f"[{name}: {one_line(serialized, 40)}]"
    return f"[{name}]"


def _skill_and_line(text: str, limit: int, empty: str = "(image)") -> tuple[str, str]:
    """``("skill: pdf · ", "the prompt")``: a skill invocation by its name, not its XML
    wrapper, then the prompt as one line (``empty`` when it has no text)."""
    skill, line = skill_and_line(text, limit)
    return (f"skill: {skill} · " if skill is not None else ""), line or empty


def _prompt_without_text(entry: MessageEntry) -> str:
    """What a prompt of no text holds (a PDF alone was "(empty message)", and so was a value
    of another type, which the page and the Markdown show as written under it)."""
    kinds = {block.get("type") for block in entry.content}
    if "image" in kinds:
        return "(image)"
    if "document" in kinds:
        return "(document)"
    return OTHER_TYPE_SAID if odd_content(entry) else "(empty message)"


def only_tool_calls(entry: MessageEntry) -> bool:
    """An assistant turn that says nothing and only calls tools: "No tools" hides it whole
    (its tool boxes gone, it left pi-v1's transcript 203 empty cards)."""
    if entry.role != "assistant" or entry.stop_reason in ("error", "aborted", "length"):
        return False
    content = entry.message.get("content")
    calls = False
    for block in content if isinstance(content, list) else ():
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(kind, str):  # shown as written (odd_values)
            return False
        if kind == "toolCall":
            calls = True
        elif kind == "text":
            text = block.get("text")
            if text is not None and (not isinstance(text, str) or text.strip()):
                return False  # text, or a value shown as written (odd_values)
        elif kind == "thinking":
            text = block.get("thinking")
            if (text is not None and text != "") or block.get("redacted") is True:
                return False
        else:  # an image or a block of another kind is shown
            return False
    return calls


def prompt_preview(text: str | None, limit: int) -> str:
    """A prompt as one readable line, e.g. for a branch's first prompt."""
    return prompt_line(text, limit) if text else "(no prompt)"


def call_answered(session: Session, result_id: str) -> dict[str, Any] | None:
    """The tool call block a result answers, if the file has it."""
    ref = session.call_for_result(result_id)
    return session.call_block(ref) if ref is not None else None


def entry_row_text(
    session: Session, entry_id: str, show: Callable[[str], str] | None = None
) -> tuple[str, str, bool]:
    """:func:`outline_text` of the entry ``entry_id``, with the call its result answers: the
    outline's row, a label bookmark's text on the page and in the Markdown export."""
    entry = session.by_id[entry_id]
    try:
        return outline_text(entry, call_answered(session, entry_id), show)
    except Exception:  # one odd entry must not cost the reader the page (as entry_view)
        return f"[{entry.type}]", "other", False


def outline_text(
    entry: Entry, call: dict[str, Any] | None = None, show: Callable[[str], str] | None = None
) -> tuple[str, str, bool]:
    """Row text, role class and whether the Default filter hides it. A tool result's row
    names its ``call`` (``[read: app.py]``, as Pi's tree does) when the call is known."""
    if isinstance(entry, MessageEntry):
        role = entry.role
        if role == "user":
            prefix, line = _skill_and_line(entry.text, OUTLINE_CHARS, "")
            return f"{prefix}user: {line or _prompt_without_text(entry)}", "user", False
        if role == "assistant":
            text = plain_line(entry.text, OUTLINE_CHARS)
            if entry.stop_reason == "aborted":
                return f"assistant: (aborted) {text}".rstrip(), "assistant", False
            if entry.stop_reason == "error" and text:  # what it said before it failed
                return f"assistant: (error) {text}", "error", False
            if entry.stop_reason == "error":
                return f"assistant: error: {one_line(entry.error_message, 80)}", "error", False
            if not text and entry.tool_calls:
                calls = " ".join(_short_tool(c, show) for c in entry.tool_calls[:3])
                return f"assistant: {calls}", "assistant", False
            if not text and odd_content(entry):  # its words are shown as written
                return f"assistant: {OTHER_TYPE_SAID}", "assistant", False
            return f"assistant: {text or '(no text)'}", "assistant", False
        if role == "toolResult" and call is not None:
            failed = " → error" if entry.is_error else ""
            return f"{_short_tool(call, show)} result{failed}", "toolResult", False
        if role == "toolResult":
            return (
                # (colour codes do not count towards its 60 characters: the page drops them)
                f"[{entry.tool_name or '?'} result] {one_line(SGR.sub('', entry.text), 60)}",
                "toolResult",
                False,
            )
        if role == "bashExecution":
            return f"[bash]: {one_line(entry.command, 80)}", "bash", False
        if role == "custom":
            return (
                f"[{entry.custom_type or 'custom'}]: {plain_line(entry.text, 80)}",
                "custom",
                not entry.display,
            )
        return f"[{role}]", "other", True
    if isinstance(entry, CompactionEntry):
        size = entry.tokens_before
        said = f"[compaction: {fmt_int(size)} tokens]" if size is not None else "[compaction]"
        return said, "compaction", False
    if isinstance(entry, BranchSummaryEntry):
        return f"[branch summary]: {plain_line(entry.summary, 80)}", "summary", False
    if isinstance(entry, CustomMessageEntry):
        return f"[{entry.custom_type}]: {plain_line(entry.text, 80)}", "custom", not entry.display
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
