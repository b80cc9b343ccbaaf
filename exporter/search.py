"""`pi-session search`: which sessions, and which entries in them, say something.

An entry is searched in what its page shows of it: messages' text and thinking, tool calls'
names and arguments, results (their ``details`` as the page shows them), files attached to
a v1 prompt (names and extracted text), shell commands and their output, summaries,
extensions' names, messages and data, labels, session names and models; so are the file's
damaged lines (no entry: not valid JSON, cut off), as written, which the page shows after
the transcript. Plain text matches across any run of whitespace, as the snippet shows it.
Every branch is searched, and a match off the active path says so. A file is first looked
at as raw bytes (when the pattern is plain text that JSON writes as it is), so sessions
that cannot match are never parsed.

With a policy (``search --redact`` and the other policy options) the search reads what a
shared copy would hold instead: each session redacted and cut as ``share`` and ``publish``
would, so a team can check that a name, a host or a customer is not in what goes out.
"""

from __future__ import annotations

import contextlib
import os
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from exporter.claude_code import SNIFF_LINES, sub_agent_files
from exporter.discover import last_message_time
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
    SPACE_CLASS,
    cluster_cut,
    cluster_start_after,
    collapse_spaces,
    plural,
)
from exporter.jsonl_in import line_value
from exporter.loader import (
    LOAD_FAILURES,
    load_session,
    other_agent,
    why_not_loaded,
    wide_encoding,
)
from exporter.policy import RedactionPolicy
from exporter.prepare import policy_changes_nothing, prepare_session
from exporter.session import Session
from exporter.shown_rules import BLOCKS_SHOWN, SHOWN_ROLES, interrupted
from exporter.times import parse_time
from exporter.tool_truncation import bash_output_cut, read_output_cut

SNIPPET_CONTEXT = 60  # characters of context each side of a match
#: The longest match a snippet shows whole: a longer one (``-E 'a{50,}'`` matched 5,415
#: characters) keeps its start and end, as the context is cut, with "…" between them.
MATCH_SHOWN = 2 * SNIPPET_CONTEXT
#: Characters that ``re.IGNORECASE`` matches with ASCII letters (ı İ ſ K): a file holding one
#: may match an ASCII pattern that its lower-cased bytes do not contain.
_UNICODE_FOLDS = (b"\xc4\xb1", b"\xc4\xb0", b"\xc5\xbf", b"\xe2\x84\xaa")
#: The characters NFC makes ASCII (the Kelvin sign, the Greek question mark, the Greek
#: varia), as JSON writes them (as they are, or escaped): the text searched (composed:
#: :func:`canonical`) holds them as the ASCII of ``_MADE_ASCII``, which their bytes lack.
_NFC_TO_ASCII = re.compile(rb"\xe2\x84\xaa|\xcd\xbe|\xe1\xbf\xaf|\\u(?:212a|037e|1fef)", re.I)
_MADE_ASCII = frozenset("K;`")
#: Plain text JSON writes unchanged: no quote, backslash, slash (``\\/`` is valid JSON),
#: control character or non-ASCII (another writer may escape it).
_RAW_SAFE = re.compile(r"[ !#-.0-\[\]-~]+")
#: A Pi session's first line. Another agent's transcript (the loader's ``other_agent``
#: says which, from a file without it) becomes entries as it is read, with texts its
#: bytes do not hold ("Command exited with code 1", an edit's diff), which a search of its
#: folder missed while a search of the file found them: such a file is always read. (A
#: damaged file that is neither is still ruled out.)
_PI_HEADER = re.compile(rb'(?:\xef\xbb\xbf)?[ \t\r\n]*\{[ \t]*"type"[ \t]*:[ \t]*"session"')
#: Words a Pi entry is searched under that its JSON does not hold (``entry_texts``): a
#: pattern that may start in one is never ruled out by the bytes.
_MADE_UP_WORDS = ("Thinking level: ",)
#: A run of whitespace, which a plain pattern matches as any run (``Pattern.compiled``):
#: the whitespace a snippet shows as one space, not the controls it shows as signs.
_WHITESPACE = re.compile(f"({SPACE_CLASS}+)")


def canonical(text: str) -> str:
    """``text`` in Unicode's composed form (NFC), as pattern and text are compared: a macOS
    path or Hangul stored decomposed ("e" and a combining accent) was never found by the
    same words typed composed ("é"), nor the other way round."""
    return unicodedata.normalize("NFC", text)


@dataclass(frozen=True, slots=True)
class Pattern:
    """What to look for, in a form a worker process can take."""

    text: str
    regex: bool = False
    case_sensitive: bool = False

    def compiled(self) -> re.Pattern[str]:
        """The regular expression; ``re.error`` for a bad ``--regex``. Plain text matches
        as the snippet shows it: a space (any run of whitespace) in it matches any run of
        whitespace, a line break too ("output second" finds "output\\nsecond"). A
        ``--regex`` is as written, but ``^`` and ``$`` match at each line's start and end
        (before a CRLF too: ``_found_in``). Either is read composed (:func:`canonical`), as
        the text is."""
        if self.regex:
            source, flags = canonical(self.text), re.MULTILINE
        else:  # the text's runs of whitespace (split out, odd places) as any run
            parts = _WHITESPACE.split(canonical(self.text))
            run = SPACE_CLASS + "+"
            source = "".join(run if n % 2 else re.escape(p) for n, p in enumerate(parts))
            if source.startswith(run):  # from a run's start only: tried inside a long
                source = f"(?<!{SPACE_CLASS})" + source  # run too, it read the run again each time
            flags = 0
        return re.compile(source, flags if self.case_sensitive else flags | re.IGNORECASE)

    def _may_start_in(self, words: str) -> bool:
        """Whether a match could begin inside ``words`` (made-up text, then a value)."""
        text = _WHITESPACE.sub(" ", canonical(self.text))  # any run matches the one space
        text, words = (text, words) if self.case_sensitive else (text.lower(), words.lower())
        return text in words or any(words.endswith(text[:k]) for k in range(1, len(text) + 1))

    def cannot_be_in(self, data: bytes) -> bool:
        """True when the raw file cannot hold a match (only said for plain ASCII text in a
        file that is not gzip, UTF-16 or UTF-32, which the loader reads too, nor another
        agent's transcript), and never for a pattern that may start in words the search
        makes up."""
        if self.regex or not _RAW_SAFE.fullmatch(self.text) or data[:2] == b"\x1f\x8b":
            return False
        if wide_encoding(data) is not None:
            return False
        if not _PI_HEADER.match(data) and _another_agents(data):
            return False
        if any(self._may_start_in(words) for words in _MADE_UP_WORDS):
            return False
        said = self.text if self.case_sensitive else self.text.upper()
        if not _MADE_ASCII.isdisjoint(said) and _NFC_TO_ASCII.search(data):
            return False
        # each piece between spaces is in the bytes as it is; a space may be any run of
        # whitespace, which JSON writes escaped ("\\n"): the pieces are looked for alone
        pieces = self.text.split()
        if not pieces:
            return False
        if self.case_sensitive:
            return any(piece.encode() not in data for piece in pieces)
        if any(special in data for special in _UNICODE_FOLDS):
            return False
        lowered = data.lower()
        return any(piece.lower().encode() not in lowered for piece in pieces)


def _another_agents(data: bytes) -> bool:
    """Whether a file's first lines are Claude Code's or Codex's, as the loader decides."""
    head = data.split(b"\n", SNIFF_LINES)[:SNIFF_LINES]
    return other_agent(list(enumerate(map(line_value, head), start=1))) is not None


#: A match's ``kind`` when it is in a line of the file that is no entry (not valid JSON, cut
#: off, glued to the next): the page shows such lines as written, under "Damaged lines".
DAMAGED = "damaged"


@dataclass(frozen=True, slots=True)
class Match:
    entry_id: str | None  # None: a damaged line, which is no entry (``line`` says which)
    kind: str  # a message's role, the entry's type, or DAMAGED
    timestamp: str | None
    on_active_path: bool
    snippet: str
    start: int  # the match inside the snippet
    end: int
    line: int | None = None  # a damaged line's number in the file (the page's #line-N)

    def as_dict(self) -> dict[str, Any]:
        """The match as JSON: ``line`` only for a damaged line (an entry's has none)."""
        said = asdict(self)
        if self.line is None:
            del said["line"]
        return said


def entry_texts(entry: Entry, session: Session | None = None) -> Iterator[str]:
    """The texts of an entry that a search looks at. With its ``session``, a tool result's
    ``details`` are those its tool's view shows (``_details_shown``); without, all."""
    if isinstance(entry, MessageEntry) and entry.role not in SHOWN_ROLES:
        yield from _strings(entry.raw)  # the page shows such a message as its JSON, whole
        return
    yield from _texts_read(entry, session)
    yield from _shown_as_written(entry)


def _texts_read(entry: Entry, session: Session | None) -> Iterator[str]:
    """The texts the views of an entry read (``entry_texts`` without what is shown as
    written)."""
    if isinstance(entry, MessageEntry):
        content = entry.message.get("content")
        if isinstance(content, str):
            yield content
        for block in entry.content:
            kind = block.get("type")
            if kind == "text":
                yield as_str(block.get("text")) or ""
            elif kind == "thinking":
                yield as_str(block.get("thinking")) or ""
            elif kind == "toolCall":
                yield as_str(block.get("name")) or ""
                yield from _strings(block.get("arguments"))
        # what a tool returned beside its text (an edit's diff, a grep's counts): the page
        # shows it, so its own search finds it there; but not what the view of its tool
        # says in words instead (a read's truncation: "the read tool truncated this file")
        details = entry.message.get("details")
        if entry.role == "toolResult" and session is not None:
            details = _details_shown(details, _call_of(session, entry.id))
        yield from _strings(details, keys=False)  # "diff" is no match
        if entry.role == "bashExecution":
            yield entry.command
            yield entry.output
        if entry.role == "assistant" and entry.error_message and not interrupted(entry):
            yield entry.error_message
        if entry.role == "custom":  # an extension's message, titled with its name
            yield from _custom_type(entry)
        if entry.role == "user":  # a v1 prompt's attached files, which its view shows
            yield from _attachment_texts(entry.message.get("attachments"))
    elif isinstance(entry, CompactionEntry | BranchSummaryEntry):
        yield entry.summary
        yield from _strings(entry.raw.get("details"), keys=False)  # the files it read, ...
    elif isinstance(entry, CustomMessageEntry):
        yield from _custom_type(entry)  # the page's "[note]: ..."
        yield entry.text
        yield from _strings(entry.raw.get("details"), keys=False)  # its "Details:"
    elif isinstance(entry, LabelEntry):
        yield entry.label or ""
    elif isinstance(entry, SessionInfoEntry):
        yield entry.name or ""
    elif isinstance(entry, ModelChangeEntry):
        yield entry.model_key or ""
    elif isinstance(entry, ThinkingLevelChangeEntry):  # as the page says it, not its JSON
        yield f"Thinking level: {entry.thinking_level}"
    elif isinstance(entry, CustomEntry):
        yield from _custom_type(entry)  # the page's "[myext] (extension data)"
        yield from _strings(entry.data)
    else:  # an unknown type: what it holds
        yield from _strings(entry.raw)


def _attachment_texts(attachments: Any) -> Iterator[str]:
    """What a v1 prompt's page says of its attached files (``render.entry_views``'s
    ``_attachments``): each one's name, kind and type, a document's extracted text, and an
    attachment that is no object as its JSON. Not an image's data, which it shows."""
    if not isinstance(attachments, list):
        return
    for item in attachments:
        if not isinstance(item, dict):
            yield from _strings(item)
            continue
        for key in ("fileName", "type", "mimeType", "extractedText"):
            yield as_str(item.get(key)) or ""


def _shown_as_written(entry: Entry) -> Iterator[str]:
    """What the page shows of an entry as JSON, because no view of it reads it as text:
    content blocks of other types (an ``audio`` block's transcript, a user's ``file``
    block), values not of Pi's types (``content: 42``). They were on the page, but no
    search found them."""
    if isinstance(entry, MessageEntry):
        if entry.role == "bashExecution":
            yield from _not_text(entry.message, ("command", "output"))
        else:
            yield from _odd_blocks(entry.message.get("content"), BLOCKS_SHOWN[entry.role])
    elif isinstance(entry, CompactionEntry | BranchSummaryEntry):
        yield from _not_text(entry.raw, ("summary",))
    elif isinstance(entry, CustomMessageEntry):
        yield from _odd_blocks(entry.raw.get("content"), BLOCKS_SHOWN["custom"])


def _not_text(holder: dict[str, Any], fields: tuple[str, ...]) -> Iterator[str]:
    for field in fields:
        value = holder.get(field)
        if value is not None and not isinstance(value, str):
            yield from _strings(value)


def _odd_blocks(content: Any, shown: frozenset[str]) -> Iterator[str]:
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        yield from _strings(content)
        return
    for block in content:
        if isinstance(block, dict) and block.get("type") == "document":
            said = _document_said(block)
            if said is not None:  # as the page says it: its words, never its base64
                yield from said
                continue
        if not _read_as_text(block, shown):
            yield from _strings(block)


def _document_said(block: dict[str, Any]) -> list[str] | None:
    """What the page says of an API document block (a PDF a Claude Code prompt or Read
    holds): its kind, name and size, address, context and a text document's text. Its
    base64 and field names matched a search ("JVBER", "media_type") the page never shows.
    None for a block the page shows as written."""
    from exporter.render.odd_values import document_view  # (only for such a block)

    view = document_view(block)
    if view is None:
        return None
    titled = f"{view.kind}: {view.title}" if view.title else view.kind
    said = [f"{titled} ({view.facts})" if view.facts else titled]
    said += [text for text in (view.url, view.context, view.text) if text]
    return said


def _read_as_text(block: Any, shown: frozenset[str]) -> bool:
    """A block a view shows as itself: of a type it shows, its text (if any) text."""
    kind = block.get("type") if isinstance(block, dict) else None
    if not isinstance(kind, str) or kind not in shown:
        return False
    return kind not in ("text", "thinking") or isinstance(block.get(kind), str | None)


def _custom_type(entry: Entry) -> Iterator[str]:
    """An extension's name, which the page shows with what it wrote (when it has one)."""
    if isinstance(entry, MessageEntry):  # a message of role "custom": in the message
        name = entry.custom_type
    else:
        name = as_str(entry.raw.get("customType"))
    if name:
        yield name


def _call_of(session: Session, result_id: str) -> dict[str, Any] | None:
    """The tool call block a result answers, if the file has it (as the page pairs them)."""
    ref = session.call_for_result(result_id)
    return session.call_block(ref) if ref is not None else None


def _details_shown(details: Any, call: dict[str, Any] | None) -> Any:
    """A tool result's ``details`` but the keys its tool's view says in words of its own
    (``exporter.render.tools``: ``_bash``, ``_read``): a truncation (its byte and line
    counts, a copy of the output) is "output truncated by Pi", which no search of those
    numbers should find. An edit's ``diff`` is shown, as a diff, and stays; a result with
    no call, or a call whose arguments are not an object, shows them all as JSON."""
    if not isinstance(details, dict) or call is None or not isinstance(call.get("arguments"), dict):
        return details
    name = call.get("name")
    if name == "bash":  # the full output's path is said in the note: it stays
        said = bash_output_cut(details)
    elif name == "read":
        said = read_output_cut(details)
    else:
        said = False
    return {k: v for k, v in details.items() if k != "truncation"} if said else details


def _strings(value: Any, keys: bool = True) -> Iterator[str]:
    """The text in a JSON value: its strings (keys too, unless ``keys`` is false) and
    numbers, as a page shows them (a command, a path, a file's new content), not their
    JSON escapes."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            for key, inner in reversed(item.items()):
                stack += [inner, key] if keys else [inner]
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, int | float) and not isinstance(item, bool):
            yield str(item)


def _snippet(text: str, start: int, end: int) -> tuple[str, int, int]:
    """The match with some context, on one line; where the match is inside it. The context
    and a long match's parts are cut at grapheme clusters' starts: no emoji sequence, flag
    or accented letter is broken beside an ellipsis."""
    cut_left = start > SNIPPET_CONTEXT
    left_start = cluster_start_after(text, start - SNIPPET_CONTEXT) if cut_left else 0
    left = text[min(left_start, start) : start]
    right = text[end : max(end, cluster_cut(text, end + SNIPPET_CONTEXT))]
    before = collapse_spaces(left) + (" " if _WHITESPACE.fullmatch(left[-1:]) else "")
    after = (" " if _WHITESPACE.fullmatch(right[:1]) else "") + collapse_spaces(right)
    before = ("…" if cut_left else "") + before.lstrip(" ")  # a "\x1f" there stays
    after = after.rstrip(" ") + ("…" if end + SNIPPET_CONTEXT < len(text) else "")
    # each run of whitespace one space, those at its edges too (" word" is a space and the
    # word: "with[ word]", not "with[word]"), and no second space beside them
    found = _WHITESPACE.sub(" ", text[start:end])
    if len(found) > MATCH_SHOWN:
        tail = cluster_start_after(found, len(found) - (MATCH_SHOWN - SNIPPET_CONTEXT - 1))
        found = found[: cluster_cut(found, SNIPPET_CONTEXT)] + "…" + found[tail:]
    if found.startswith(" ") and before.endswith(" "):
        before = before[:-1]
    if found.endswith(" ") and after.startswith(" "):
        after = after[1:]
    return before + found + after, len(before), len(before) + len(found)


def _first_match(expression: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first match in ``text`` that is not empty, else its first empty one: a pattern
    that matches only a place (``-E '(?=hello)'``, ``^``, ``\\b``) finds the text there, as
    ``grep -P`` lists its lines; "no matches" was a lie. An empty text (a field the entry
    does not have) holds no place to find."""
    if not text:
        return None
    empty = None
    for found in expression.finditer(text):
        if found.end() > found.start():
            return found
        empty = empty or found
    return empty


def _found_in(expression: re.Pattern[str], text: str) -> tuple[str, int, int] | None:
    """The snippet of the first match in ``text``, and where the match is in it (an empty
    one only when no reading of the text has another). A ``--regex`` (``re.MULTILINE``)
    reads a CRLF as the line break it is: Python's ``$`` matches only before ``\\n``, so
    ``end$`` found nothing in a Windows tool's output. A pattern that names ``\\r`` itself
    still finds it in the text as written. The text is read composed (:func:`canonical`),
    as the pattern is: the snippet is of the composed text."""
    text = canonical(text)
    readings = [text]
    if expression.flags & re.MULTILINE and "\r\n" in text:
        readings.insert(0, text.replace("\r\n", "\n"))
    place: tuple[str, int] | None = None  # the first empty match: where it is
    for reading in readings:
        found = _first_match(expression, reading)
        if found is None:
            continue
        if found.end() > found.start():
            return _snippet(reading, found.start(), found.end())
        place = place or (reading, found.start())
    return None if place is None else _snippet(place[0], place[1], place[1])


def _kind(entry: Entry) -> str:
    """What a match is: a message's role, another entry's type. An extension's message
    (role ``custom``, a v2 ``hookMessage``) is a ``custom_message`` as the page shows it, not
    the ``custom`` entry type: that is extension state the model never reads."""
    if isinstance(entry, MessageEntry):
        return "custom_message" if entry.role == "custom" else entry.role
    return entry.type


def search_file(
    path: str | os.PathLike[str],
    pattern: Pattern,
    *,
    skip_by_bytes: bool = True,
    policy: RedactionPolicy | None = None,
) -> dict[str, Any]:
    """The matches in one session file: ``{"matches": [...], "id", "title", "cwd"}``,
    ``{"skipped": True}`` when its bytes cannot hold one (``skip_by_bytes``: a folder's
    many sessions; a file the user named is read, so a damaged one is said to be), or
    ``{"error": …}``. With a ``policy``, in the copy it makes (redacted, cut): every file
    is read, since a placeholder or ``~`` it writes is in no file's bytes. ``path``: a str
    or any path (made a Path here: what finds a Claude Code session's sub-agents takes one)."""
    path = Path(os.fsdecode(path))
    if policy is not None and policy_changes_nothing(policy):
        policy = None
    try:
        files = [path, *sub_agent_files(path)]  # a Claude Code session's sub-agents too
        unread = skip_by_bytes and policy is None
        if unread and all(pattern.cannot_be_in(file.read_bytes()) for file in files):
            return {"skipped": True}
        session = load_session(path)
    except LOAD_FAILURES as error:
        return {"error": why_not_loaded(error)}
    active = last_activity(session, path)  # of the file, as `list` orders it: before a cut
    if policy is not None:
        session = prepare_session(session, policy)[0]
    expression = pattern.compiled()
    on_path = set(session.active_path)
    matches = []
    for entry in session.entries:
        for text in entry_texts(entry, session):
            if found := _found_in(expression, text):
                snippet, start, end = found
                kind = _kind(entry)
                # named as --leaf, --exclude and the page's #anchor take it: an id written
                # twice names its latest copy, the earlier one is "a~1"
                name = session.leaf_name(entry.id)
                on_active_path = entry.id in on_path
                matches.append(
                    Match(name, kind, entry.timestamp, on_active_path, snippet, start, end)
                )
                break  # one line per entry: its first match
    # the lines that became no entry, which the page shows as written after the transcript
    # (a crash's NUL bytes before an entry, two entries glued): "no matches" for a word the
    # page shows there was a lie
    for damaged in session.damaged:
        if found := _found_in(expression, damaged.text):
            snippet, start, end = found
            matches.append(Match(None, DAMAGED, None, False, snippet, start, end, damaged.line))
    return {
        "id": session.id,
        "title": session.title,
        "cwd": session.header.cwd,
        "matches": [m.as_dict() for m in matches],
        "warnings": warnings_said(session),
        "last_activity": active.timestamp() if active else None,
    }


#: The loader's warnings a search says (as export, stats and redact do): those about the
#: whole file (which Pi may not open, what was read of it, bytes after the gzip data or a
#: sub-agent's transcript left out), and those about lines whose text is not what the
#: file wrote (invalid UTF-8 read as U+FFFD: "no matches" for "café" said nothing of
#: it). Other line-level ones (an orphan, a duplicate id) change nothing searched.
SAID_KINDS = frozenset(
    {"not-utf8", "truncated", "missing-header", "gzip-trailing-data", "sub-agent", "invalid-utf8"}
)
#: Of ``SAID_KINDS``, those said once per file with a count: there may be one per line.
_SAID_ONCE = frozenset({"invalid-utf8"})


def warnings_said(session: Session) -> list[str]:
    """The warnings of ``SAID_KINDS`` a session's file has, a kind of ``_SAID_ONCE`` as its
    first with how many more lines have it (a file of a thousand bad lines: one warning)."""
    said: list[str] = []
    more: dict[str, int] = {}
    first_at: dict[str, int] = {}
    for diagnostic in session.diagnostics:
        if diagnostic.kind not in SAID_KINDS:
            continue
        if diagnostic.kind in _SAID_ONCE and diagnostic.kind in first_at:
            more[diagnostic.kind] = more.get(diagnostic.kind, 0) + 1
            continue
        first_at[diagnostic.kind] = len(said)
        said.append(str(diagnostic))
    for kind, count in more.items():
        said[first_at[kind]] += f" (and {plural(count, 'more line')})"
    return said


def last_activity(session: Session, path: Path) -> datetime | None:
    """The session's last activity as `list` orders sessions by it (``discover``'s summary
    of a loaded file): its last user or assistant message's time, else the header's, else
    the file's. Worked out from the session a search has loaded, so ordering the matches
    reads no file again."""
    latest = last_message_time(session)
    if latest is None:
        latest = parse_time(session.header.timestamp)
    if latest is None:
        with contextlib.suppress(OSError):
            latest = datetime.fromtimestamp(path.stat().st_mtime).astimezone()
    return latest
