"""Typed views over raw session entries.

Each class wraps the entry's JSON object (``raw``) instead of copying it: unknown fields are
kept for free, memory stays close to the parsed JSON, and every accessor is defensive because
a session file is untrusted and may hold any JSON type in any field.
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from exporter.times import js_date_ms, js_number_text, js_text_ms, parse_time

KNOWN_ENTRY_TYPES = frozenset(
    {
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
# Entry types that the model sees (§1.11 of the format reference).
CONTEXT_ENTRY_TYPES = frozenset({"message", "custom_message", "branch_summary"})
#: A tool call without a name, as the usage table, a turn's footer and its card all say it
UNNAMED_TOOL = "(unnamed tool)"


def as_str(value: Any) -> str | None:
    """Return ``value`` when it is a string, else None (fields may hold any JSON type)."""
    return value if isinstance(value, str) else None


def js_truthy(value: Any) -> bool:
    """JavaScript's truthiness, which Pi's own checks use (``if (entry.label)``)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):  # (math.isnan would make it a float: past 1e308 it overflows)
        return value != 0
    if isinstance(value, float):
        return value != 0 and not math.isnan(value)
    if isinstance(value, str):
        return value != ""
    return True  # an object or array, even an empty one


#: Integers from here up overflow float(): counted as infinite (then as 0). A constant: Python
#: does not fold ``2**1023`` (too big), so written inline it was computed at every call.
_FLOAT_OVERFLOW = 2**1023


def as_number(value: Any) -> float:
    """Numbers only (bools are not numbers here); anything else counts as 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    number = (
        float(value) if not isinstance(value, int) or abs(value) < _FLOAT_OVERFLOW else math.inf
    )
    return number if math.isfinite(number) else 0.0  # 1e400 parses as inf: not a number here


def token_count(value: Any) -> int:
    """A count of tokens (or lines) another agent's file gives: a whole number from 0 to
    2**53; anything else (negative, fractional, a bool, an absurd 400-digit one that no
    price could multiply) counts as none."""
    count = whole_count(value)
    return 0 if count is None else count


def whole_count(value: Any) -> int | None:
    """A whole number from 0 to 2**53 as itself; anything else None (see token_count)."""
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**53
    return value if ok else None


def id_key(value: Any, number_suffix: str = "") -> str | None:
    """An id field (``id``, ``parentId``, ``targetId``, ``firstKeptEntryId``) as the key Pi's
    JavaScript finds an entry by: a string as itself; a number as JavaScript writes it
    (``1`` and ``1.0`` are one id there) plus the file's ``number_suffix`` (to Pi the number
    ``1`` and the string ``"1"`` are two ids: a file writing both keeps them apart with it);
    None for what names nothing: 0, which Pi's checks read as no id, and other values."""
    if isinstance(value, str):
        return value
    text = js_number_text(value)
    return None if text is None or text == "0" else text + number_suffix


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def content_blocks(content: Any) -> list[dict[str, Any]]:
    """Normalise message content (a string or a list of blocks) to a list of dict blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in as_list(content) if isinstance(block, dict)]


def blocks_text(content: Any) -> str:
    """The text blocks of some content joined with newlines (Pi's rule for user text)."""
    parts = [as_str(b.get("text")) for b in content_blocks(content) if b.get("type") == "text"]
    return "\n".join(p for p in parts if p)


class _Unparsed(enum.Enum):
    """``Entry.moment_cache`` before the first read (None is a read: no readable time). An
    enum member, not a bare ``object()``: a pickled or copied entry keeps it as itself."""

    TOKEN = 0


_UNPARSED = _Unparsed.TOKEN
#: A field the line does not have (JavaScript's undefined: not null).
_ABSENT = object()


@dataclass(slots=True)
class Entry:
    """One line of the session file that belongs to the tree.

    ``id`` may differ from ``raw["id"]``: legacy v1 entries get ids derived from their line
    number, and a duplicate id is renamed so each entry stays addressable.
    """

    raw: dict[str, Any]
    line: int
    id: str
    parent_id: str | None
    type: str
    #: What this file's number ids end with as keys (see ``id_key``): "" unless the file
    #: writes a number and a string that read the same (``1`` and ``"1"``).
    id_number_suffix: str = field(default="", repr=False, compare=False)
    # The time parsed once: the loader's check, the tree's order, the statistics, the
    # branch blocks and every entry's heading all read it (~4 parses an entry before).
    moment_cache: Any = field(default=_UNPARSED, init=False, repr=False, compare=False)

    @property
    def timestamp(self) -> str | None:
        return as_str(self.raw.get("timestamp"))

    @property
    def moment(self) -> datetime | None:
        """``timestamp`` as a time (None: none, or unreadable); epoch numbers are not read
        here, as the session's start and end never counted them."""
        moment = self.moment_cache
        if moment is _UNPARSED:
            moment = self.moment_cache = parse_time(self.timestamp)
        return moment

    @property
    def order_time(self) -> float:
        """The time Pi orders this entry among its siblings by, ``new Date(timestamp)`` in
        milliseconds: epoch numbers count there (NaN: none JavaScript can read, or none)."""
        value = self.raw.get("timestamp", _ABSENT)
        if isinstance(value, str):
            return js_text_ms(value, self.moment)
        return math.nan if value is _ABSENT else js_date_ms(value)

    @property
    def is_known_type(self) -> bool:
        return self.type in KNOWN_ENTRY_TYPES


@dataclass(slots=True)
class MessageEntry(Entry):
    """A ``message`` entry; ``role`` tells which message view applies."""

    # Token usage parsed once (exporter.usage.turn_usage): the header, tables, chart, branch
    # blocks and the turn's own footer all need it.
    usage_cache: Any = field(default=None, init=False, repr=False, compare=False)
    # The role decides every view and statistic; read it from the JSON once.
    role_cache: str | None = field(default=None, init=False, repr=False, compare=False)
    # provider/model keys every usage table and the chart: built once ("" = none).
    model_cache: str | None = field(default=None, init=False, repr=False, compare=False)
    # The message object, looked up once: every accessor below starts from it (~0.5% of a
    # page's instructions went to finding it again). The entry's own dict, not a copy, so
    # a change to its fields shows; a new ``raw`` (``dataclasses.replace``) starts over.
    message_cache: dict[str, Any] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def message(self) -> dict[str, Any]:
        message = self.message_cache
        if message is None:
            found = self.raw.get("message")
            if not isinstance(found, dict):  # (a damaged entry: a fresh empty one each time)
                return {}
            message = self.message_cache = found
        return message

    @property
    def role(self) -> str:
        role = self.role_cache
        if role is None:
            role = self.role_cache = as_str(self.message.get("role")) or "unknown"
        return role

    @property
    def content(self) -> list[dict[str, Any]]:
        return content_blocks(self.message.get("content"))

    @property
    def text(self) -> str:
        return blocks_text(self.message.get("content"))

    # assistant ---------------------------------------------------------------
    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        if self.role != "assistant":
            return []
        return [b for b in self.content if b.get("type") == "toolCall"]

    @property
    def provider(self) -> str | None:
        return as_str(self.message.get("provider"))

    @property
    def model(self) -> str | None:
        return as_str(self.message.get("model"))

    @property
    def model_key(self) -> str | None:
        """``provider/model`` for assistant turns (the key of the per-model tables)."""
        key = self.model_cache
        if key is None:
            model = self.model if self.role == "assistant" else None
            provider = self.provider if model else None
            key = self.model_cache = (f"{provider}/{model}" if provider else model) or ""
        return key or None

    @property
    def stop_reason(self) -> str | None:
        return as_str(self.message.get("stopReason"))

    @property
    def error_message(self) -> str | None:
        return as_str(self.message.get("errorMessage"))

    # toolResult --------------------------------------------------------------
    @property
    def tool_call_id(self) -> str | None:
        return as_str(self.message.get("toolCallId"))

    @property
    def tool_name(self) -> str | None:
        return as_str(self.message.get("toolName"))

    @property
    def is_error(self) -> bool:
        return self.message.get("isError") is True

    @property
    def details(self) -> dict[str, Any]:
        return as_dict(self.message.get("details"))

    # bashExecution -----------------------------------------------------------
    @property
    def command(self) -> str:
        return as_str(self.message.get("command")) or ""

    @property
    def output(self) -> str:
        return as_str(self.message.get("output")) or ""

    @property
    def exit_code(self) -> int | None:
        code = self.message.get("exitCode")
        return code if isinstance(code, int) and not isinstance(code, bool) else None

    @property
    def excluded_from_context(self) -> bool:
        return self.message.get("excludeFromContext") is True

    # custom (hookMessage in v2) --------------------------------------------
    @property
    def custom_type(self) -> str | None:
        return as_str(self.message.get("customType"))

    @property
    def display(self) -> bool:
        """Shown in Pi's UI. A custom (extension's) message only with a truthy ``display``,
        as Pi's chat view reads it (``if (message.display)``): one without it, or with null
        or 0, was shown here. Other roles have no such field: only ``false`` hides them."""
        display = self.message.get("display")
        return js_truthy(display) if self.role == "custom" else display is not False


class ThinkingLevelChangeEntry(Entry):
    __slots__ = ()  # the typed view adds no fields

    @property
    def thinking_level(self) -> str:
        return as_str(self.raw.get("thinkingLevel")) or "?"


class ModelChangeEntry(Entry):
    __slots__ = ()  # the typed view adds no fields

    @property
    def provider(self) -> str | None:
        return as_str(self.raw.get("provider"))

    @property
    def model_id(self) -> str | None:
        return as_str(self.raw.get("modelId"))

    @property
    def model_key(self) -> str | None:
        if not self.model_id:
            return None
        return f"{self.provider}/{self.model_id}" if self.provider else self.model_id


class CompactionEntry(Entry):
    __slots__ = ()  # the typed view adds no fields

    @property
    def summary(self) -> str:
        return as_str(self.raw.get("summary")) or ""

    @property
    def first_kept_entry_id(self) -> str | None:
        return id_key(self.raw.get("firstKeptEntryId"), self.id_number_suffix)

    @property
    def tokens_before(self) -> int | None:
        """The context's size when it was compacted; None when the file does not say (a
        damaged line, another agent's compaction) or says nonsense (-5, 1e300): not "0
        tokens". A whole float (Pi writes ints) counts."""
        value = self.raw.get("tokensBefore")
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return whole_count(value)

    @property
    def details(self) -> dict[str, Any]:
        return as_dict(self.raw.get("details"))


class BranchSummaryEntry(Entry):
    __slots__ = ()  # the typed view adds no fields

    @property
    def summary(self) -> str:
        return as_str(self.raw.get("summary")) or ""

    @property
    def from_id(self) -> str | None:
        return as_str(self.raw.get("fromId"))

    @property
    def details(self) -> dict[str, Any]:
        return as_dict(self.raw.get("details"))


class CustomEntry(Entry):
    __slots__ = ()  # the typed view adds no fields

    @property
    def custom_type(self) -> str:
        return as_str(self.raw.get("customType")) or "?"

    @property
    def data(self) -> Any:
        return self.raw.get("data")


class CustomMessageEntry(Entry):
    __slots__ = ()  # the typed view adds no fields

    @property
    def custom_type(self) -> str:
        return as_str(self.raw.get("customType")) or "?"

    @property
    def content(self) -> list[dict[str, Any]]:
        return content_blocks(self.raw.get("content"))

    @property
    def text(self) -> str:
        return blocks_text(self.raw.get("content"))

    @property
    def display(self) -> bool:
        """Shown in Pi's UI: a truthy ``display`` (``"yes"`` too, as Pi reads it)."""
        return js_truthy(self.raw.get("display"))


class LabelEntry(Entry):
    __slots__ = ()  # the typed view adds no fields

    @property
    def target_id(self) -> str | None:
        return id_key(self.raw.get("targetId"), self.id_number_suffix)

    @property
    def label(self) -> str | None:
        """The label text; None or "" clears the target's label. Pi sets any truthy value
        (``5`` is a label "5"), so one of another type is kept, as JSON."""
        value = self.raw.get("label")
        if isinstance(value, str) or not js_truthy(value):
            return value or None
        return json.dumps(value, ensure_ascii=False)


class SessionInfoEntry(Entry):
    __slots__ = ()  # the typed view adds no fields

    @property
    def name(self) -> str | None:
        name = as_str(self.raw.get("name"))
        return name.strip() or None if name else None


class UnknownEntry(Entry):
    """An entry type this version does not know: kept with its raw JSON, shown under "All"."""

    __slots__ = ()


ENTRY_CLASSES: dict[str, type[Entry]] = {
    "message": MessageEntry,
    "thinking_level_change": ThinkingLevelChangeEntry,
    "model_change": ModelChangeEntry,
    "compaction": CompactionEntry,
    "branch_summary": BranchSummaryEntry,
    "custom": CustomEntry,
    "custom_message": CustomMessageEntry,
    "label": LabelEntry,
    "session_info": SessionInfoEntry,
}


def make_entry(
    raw: dict[str, Any],
    line: int,
    entry_id: str,
    parent_id: str | None,
    id_number_suffix: str = "",
) -> Entry:
    entry_type = as_str(raw.get("type")) or "unknown"
    cls = ENTRY_CLASSES.get(entry_type, UnknownEntry)
    return cls(raw, line, entry_id, parent_id, entry_type, id_number_suffix)


@dataclass(slots=True)
class Header:
    """The ``session`` line. ``version`` is the file's original version (before migration)."""

    raw: dict[str, Any]
    line: int
    version: int
    synthesized: bool = False

    @property
    def id(self) -> str:
        return as_str(self.raw.get("id")) or ""

    @property
    def timestamp(self) -> str | None:
        return as_str(self.raw.get("timestamp"))

    @property
    def cwd(self) -> str:
        return as_str(self.raw.get("cwd")) or ""

    @property
    def parent_session(self) -> str | None:
        return as_str(self.raw.get("parentSession")) or as_str(self.raw.get("branchedFrom"))


@dataclass(slots=True)
class DamagedLine:
    """A line that could not become an entry; its text is kept so nothing is lost."""

    line: int
    kind: str
    message: str
    text: str
