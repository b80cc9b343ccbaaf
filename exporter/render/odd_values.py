"""Fields whose value is not of the type Pi writes, so the page can show them as written.

The views read text with forgiving accessors (a number where text belongs reads as no
text), which kept the page whole but left such a value nowhere on it: a user message with
``content: 42`` was an empty box. The values found here are shown under the entry instead.

The Anthropic API's document blocks (a PDF or a text file attached to a Claude Code prompt
or read by its Read tool, a Codex file) are of no type Pi writes either, but shown as
written they put a PDF's whole base64 into the page: :func:`document_view` says what each
is instead, and they are not odd.
"""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass, field
from typing import Any

from exporter.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    Entry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    as_str,
)
from exporter.formatting import fmt_int, one_line
from exporter.shown_rules import BLOCKS_SHOWN

_TEXT_FIELDS = {"text": "text", "thinking": "thinking"}  # block type -> its text field
# block types a role's view shows (an assistant's other blocks are shown as JSON anyway)
_SHOWN = {role: BLOCKS_SHOWN[role] for role in ("user", "toolResult", "custom")}


#: A message's text fields its view reads besides its content, by role: of another type
#: they read as none, so an ``errorMessage`` object left only "the model call failed", a
#: ``toolName`` list nothing at all.
_MESSAGE_TEXT_FIELDS = {
    "assistant": ("provider", "model", "responseModel", "stopReason", "errorMessage"),
    "toolResult": ("toolName",),
    "custom": ("customType",),
    "bashExecution": ("command", "output"),
}
#: The same for the entries that are no message (a model change's title, a session name).
_ENTRY_TEXT_FIELDS: dict[type[Entry], tuple[str, ...]] = {
    CompactionEntry: ("summary",),
    BranchSummaryEntry: ("summary",),
    CustomMessageEntry: ("customType",),
    CustomEntry: ("customType",),
    ModelChangeEntry: ("provider", "modelId"),
    ThinkingLevelChangeEntry: ("thinkingLevel",),
    SessionInfoEntry: ("name",),
}


def odd_values(entry: Entry) -> dict[str, Any]:
    """``{field: value}`` of the fields a view reads that hold another type than Pi's;
    for list content, the blocks that are not shown (``content[2]``) and a tool call's
    name that is no text (``content[1].name``). Missing (null) fields are not odd: they
    are just absent."""
    odd: dict[str, Any] = {}
    if isinstance(entry, MessageEntry):
        message = entry.message
        if entry.role in _SHOWN or entry.role == "assistant":
            _check_content(message.get("content"), odd, _SHOWN.get(entry.role))
        for field in _MESSAGE_TEXT_FIELDS.get(entry.role, ()):
            _check_text(field, message.get(field), odd)
    else:
        for field in _ENTRY_TEXT_FIELDS.get(type(entry), ()):
            _check_text(field, entry.raw.get(field), odd)
        if isinstance(entry, CustomMessageEntry):
            _check_content(entry.raw.get("content"), odd, _SHOWN["custom"])
    return odd


#: What a message's words are said to be when they are a value of another type (its
#: content, or a block's text): shown as written under it, so it is not "empty".
OTHER_TYPE_SAID = "(a value not of the type Pi writes, shown as written)"


def odd_content(entry: MessageEntry) -> bool:
    """Whether a message's content, or one of its blocks, holds a value of another type than
    Pi's: a message of no text that is not empty (its value is shown as written)."""
    return any(field.startswith("content") for field in odd_values(entry))


def not_text(value: Any) -> bool:
    """A text field given, but not as text: shown as written under its entry (a view that
    reads it says so rather than read it as none)."""
    return value is not None and not isinstance(value, str)


def _check_text(field: str, value: Any, odd: dict[str, Any]) -> None:
    if not_text(value):
        odd[field] = value


def _check_content(content: Any, odd: dict[str, Any], shown: set[str] | None) -> None:
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        odd["content"] = content
        return
    for index, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if shown is not None and shows_as_document(block):
            continue  # said in words (`document_view`), not as its base64
        if not isinstance(kind, str) or (shown is not None and kind not in shown):
            odd[f"content[{index}]"] = block
        elif kind in _TEXT_FIELDS:
            value = block.get(_TEXT_FIELDS[kind])
            if value is not None and not isinstance(value, str):
                odd[f"content[{index}]"] = block
        elif kind == "toolCall":  # its box reads "(unnamed tool)": the name as written here
            _check_text(f"content[{index}].name", block.get("name"), odd)


# --- the Anthropic API's document blocks ---------------------------------------------------


@dataclass(slots=True)
class DocumentView:
    """An API document block (a PDF attached to a prompt or read by a tool, a text file, an
    address, a Files API id) as the page and the Markdown say it: what it is, its name and
    size, a text document's text; never its base64 (a 1 MB PDF put 1.3 MB of it into the
    page, on top of the download's copy)."""

    kind: str  # "PDF document", "Text document", "Document"
    title: str  # the block's title (a Codex file's name), "" when it has none
    facts: str = ""  # "application/pdf, 735 bytes"; "Files API file file_011…"
    url: str | None = None  # the address it was given by: shown, never fetched
    text: str | None = None  # a text document's text, folded as an attachment's is
    context: str | None = None  # what the block told the model about the document
    other: dict[str, Any] = field(default_factory=dict)  # fields said nowhere else

    @property
    def name(self) -> str:
        """What its folded text is called: "Text of the attached report.txt"."""
        return self.title or "document"


#: The fields of a document block said by :class:`DocumentView`, or settings of the API
#: call (citations, caching) that say nothing of the document.
_DOCUMENT_FIELDS = frozenset({"type", "source", "title", "context", "citations", "cache_control"})
#: Each source type's fields, as the API defines them.
_SOURCE_FIELDS = {
    "base64": frozenset({"type", "media_type", "data"}),
    "text": frozenset({"type", "media_type", "data"}),
    "url": frozenset({"type", "url"}),
    "file": frozenset({"type", "file_id"}),
    "content": frozenset({"type", "content"}),
}
_PDF_MEDIA = "application/pdf"
_PDF_BASE64 = "JVBER"  # "%PDF" in base64
#: The longest title or media type said on the line (a title is the page's to show, not
#: the file's to fill).
_TITLE_CHARS = 200
_MEDIA_CHARS = 80
_WHITESPACE = re.compile(r"\s+")


def shows_as_document(block: Any) -> bool:
    """Whether a content block is an API document the views say in words: a source of a
    type the API defines, holding what that type holds (else it is shown as written)."""
    return _document_source(block) is not None


def _document_source(block: Any) -> dict[str, Any] | None:
    if not isinstance(block, dict) or block.get("type") != "document":
        return None
    source = block.get("source")
    if not isinstance(source, dict):
        return None
    kind = source.get("type")
    needs = {"base64": "data", "text": "data", "url": "url", "file": "file_id"}
    if kind in needs:
        return source if isinstance(source.get(needs[kind]), str) else None
    if kind == "content" and _content_texts(source.get("content")) is not None:
        return source
    return None


def _content_texts(content: Any) -> list[str] | None:
    """A ``content`` source's texts, when it is text blocks only (else None)."""
    if not isinstance(content, list):
        return None
    texts = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "text":
            return None
        text = block.get("text")
        if not isinstance(text, str):
            return None
        texts.append(text)
    return texts


def document_view(block: Any) -> DocumentView | None:
    """How the page and the Markdown say an API document block (None: the block is not
    one :func:`shows_as_document` takes, shown as written)."""
    source = _document_source(block)
    if source is None:
        return None
    kind = source["type"]
    title = one_line(as_str(block.get("title")), _TITLE_CHARS)
    media = _media_type(source.get("media_type"))
    if kind == "base64":
        view = _base64_document(source["data"], media, title)
    elif kind == "text":
        text = source["data"]
        facts = f"{media or 'text'}, {_bytes(len(text.encode('utf-8', 'surrogatepass')))}"
        view = DocumentView("Text document", title, facts, text=text)
    elif kind == "content":
        text = "\n\n".join(_content_texts(source["content"]) or [])
        view = DocumentView("Text document", title, "given as text blocks", text=text)
    elif kind == "url":  # (the API reads a PDF from an address)
        view = DocumentView("PDF document", title, url=source["url"])
    else:
        view = DocumentView("Document", title, f"Files API file {one_line(source['file_id'])}")
    context = block.get("context")
    if isinstance(context, str) and context.strip():
        view.context = context
    elif context is not None:
        view.other["context"] = context
    if block.get("title") is not None and not isinstance(block.get("title"), str):
        view.other["title"] = block["title"]
    view.other |= {k: v for k, v in block.items() if k not in _DOCUMENT_FIELDS}
    own = _SOURCE_FIELDS[kind]
    view.other |= {f"source.{k}": v for k, v in source.items() if k not in own}
    media_given = source.get("media_type")
    if kind in ("base64", "text") and media_given is not None and not isinstance(media_given, str):
        view.other["source.media_type"] = media_given  # (not said on the line)
    return view


def _base64_document(data: str, media: str, title: str) -> DocumentView:
    """A document of inline bytes: a PDF by its media type or its first bytes, text when
    its bytes are UTF-8 (a text file, as the redactor reads it too), else a document of
    its media type; the size its bytes have, not its base64."""
    pdf = media.lower() == _PDF_MEDIA or data.lstrip().startswith(_PDF_BASE64)
    try:
        raw = base64.b64decode(_WHITESPACE.sub("", data), validate=True)
    except ValueError:  # (binascii.Error is one)
        kind = "PDF document" if pdf else "Document"
        broken = f"{fmt_int(len(data))} characters of broken base64"
        return DocumentView(kind, title, f"{media or 'no media type'}, {broken}")
    facts = f"{media or 'no media type'}, {_bytes(len(raw))}"
    if pdf or raw.startswith(b"%PDF"):
        return DocumentView("PDF document", title, facts)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return DocumentView("Document", title, facts)
    return DocumentView("Text document", title, facts, text=text)


def _media_type(value: Any) -> str:
    """A source's media type as written, on one line and not too long to read ("" when it
    has none)."""
    return one_line(value, _MEDIA_CHARS) if isinstance(value, str) else ""


def _bytes(count: int) -> str:
    return f"{fmt_int(count)} byte{'' if count == 1 else 's'}"


#: Said of a v1 attachment whose bytes a redacted copy left out (not text: not scanned).
ATTACHMENT_LEFT_OUT = "its bytes are not in this file: a redacted copy leaves out what is not text"


@dataclass(frozen=True)
class AttachmentFacts:
    """What the page and the Markdown say of one file attached to a v1 prompt."""

    name: str
    kind: str  # "image", "document" or what the file says
    mime: str
    size: int | None  # in bytes, as the file says
    left_out: bool  # a document whose bytes a redacted copy dropped: the size says what was


def attachment_facts(item: dict[str, Any]) -> AttachmentFacts:
    """One v1 attachment's facts; a document with empty content (and a size other than 0)
    is one whose bytes ``redact`` left out (a PDF: no text to scan), said so rather than
    left to read as whole."""
    size = item.get("size")
    if type(size) is float and math.isfinite(size) and abs(size) < 2**53:  # (1e400: inf)
        size = int(size)
    size = size if type(size) is int else None
    kind = as_str(item.get("type")) or "file"
    # (an empty file says size 0; one without a size and without bytes is taken as dropped)
    left_out = kind != "image" and item.get("content") == "" and size != 0
    return AttachmentFacts(
        as_str(item.get("fileName")) or "(no name)",
        kind,
        as_str(item.get("mimeType")) or "?",
        size,
        left_out,
    )


def attachment_line(facts: AttachmentFacts) -> str:
    """``application/pdf, 606 bytes`` and, when its bytes were left out, why not here."""
    said = facts.mime
    if facts.size is not None:
        said += f", {fmt_int(facts.size)} bytes"
    return f"{said}; {ATTACHMENT_LEFT_OUT}" if facts.left_out else said
