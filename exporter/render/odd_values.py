"""Fields whose value is not of the type Pi writes, so the page can show them as written.

The views read text with forgiving accessors (a number where text belongs reads as no
text), which kept the page whole but left such a value nowhere on it: a user message with
``content: 42`` was an empty box. The values found here are shown under the entry instead.
"""

from __future__ import annotations

from typing import Any

from exporter.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    Entry,
    MessageEntry,
)
from exporter.shown_rules import BLOCKS_SHOWN

_TEXT_FIELDS = {"text": "text", "thinking": "thinking"}  # block type -> its text field
# block types a role's view shows (an assistant's other blocks are shown as JSON anyway)
_SHOWN = {role: BLOCKS_SHOWN[role] for role in ("user", "toolResult", "custom")}


def odd_values(entry: Entry) -> dict[str, Any]:
    """``{field: value}`` of the fields a view reads that hold another type than Pi's;
    for list content, the blocks that are not shown (``content[2]``). Missing (null)
    fields are not odd: they are just absent."""
    odd: dict[str, Any] = {}
    if isinstance(entry, MessageEntry):
        message = entry.message
        if entry.role in _SHOWN or entry.role == "assistant":
            _check_content(message.get("content"), odd, _SHOWN.get(entry.role))
        elif entry.role == "bashExecution":
            for field in ("command", "output"):
                _check_text(field, message.get(field), odd)
    elif isinstance(entry, (CompactionEntry, BranchSummaryEntry)):
        _check_text("summary", entry.raw.get("summary"), odd)
    elif isinstance(entry, CustomMessageEntry):
        _check_content(entry.raw.get("content"), odd, _SHOWN["custom"])
    return odd


def _check_text(field: str, value: Any, odd: dict[str, Any]) -> None:
    if value is not None and not isinstance(value, str):
        odd[field] = value


def _check_content(content: Any, odd: dict[str, Any], shown: set[str] | None) -> None:
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        odd["content"] = content
        return
    for index, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(kind, str) or (shown is not None and kind not in shown):
            odd[f"content[{index}]"] = block
        elif kind in _TEXT_FIELDS:
            value = block.get(_TEXT_FIELDS[kind])
            if value is not None and not isinstance(value, str):
                odd[f"content[{index}]"] = block
