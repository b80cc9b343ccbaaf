"""Claude Code transcripts (``~/.claude/projects/<folder>/<session>.jsonl``) read as Pi
sessions, in memory, so both agents' sessions get the same page, statistics, search and
redaction.

Claude Code keeps a tree too (``uuid``/``parentUuid``), but it writes one line per content
block of an answer (all repeating the answer's usage), tool results as user lines hanging
off the block that called them (parallel calls look like forks), a compaction as a new root,
and bookkeeping lines (file snapshots, progress, hooks, titles) among the conversation. This
module turns those lines into Pi v3 entries: one assistant message per answer with its usage
counted once, its results right after it in call order, a compaction entry in the tree, and
Pi's tool names where a Claude Code tool means the same (Bash, Read, Write, Edit,
MultiEdit). Bookkeeping lines are counted in a note, not shown; the file is never written,
and the page's download is the file as read (unless sub-agents' transcripts, which are
other files, joined the tree: then it is the session as one Pi file).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exporter import claude_prices
from exporter.entries import (
    KNOWN_ENTRY_TYPES,
    DamagedLine,
    as_dict,
    as_str,
    content_blocks,
    token_count,
)
from exporter.formatting import plural
from exporter.jsonl_in import iter_parsed_lines, line_value
from exporter.session_parts import Diagnostic, parse_time, unshown_lines_note

#: How many parsed lines the format check looks at: bookkeeping lines (snapshots, titles,
#: hook progress) can come before the first message.
SNIFF_LINES = 200

_KEPT_SYSTEM = frozenset({"local_command", "compact_boundary"})

#: Claude Code tools shown with the view of the Pi tool that does the same, and how their
#: arguments are named there.
_TOOL_NAMES = {
    "Bash": "bash",
    "Read": "read",
    "Write": "write",
    "Edit": "edit",
    "MultiEdit": "edit",
}
_ARGUMENT_NAMES = {"file_path": "path", "old_string": "oldText", "new_string": "newText"}

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "refusal": "stop",
    "tool_use": "toolUse",
    "max_tokens": "length",
}

# Read's output as the model saw it: "     1→text", or "     1\ttext" since 2.1 (cat -n's)
_NUMBERED_LINE = re.compile(r" *(\d+)[→\t]")
_COMMAND_TAG = re.compile(r"<(command-name|command-args|command-message)>(.*?)</\1>", re.DOTALL)
# The notice Claude Code writes when a background task ends, and the fields inside it
_TASK_NOTIFICATION = re.compile(r"\s*<task-notification>(.*?)</task-notification>", re.DOTALL)
# (a field holds no tag: `.*?` to a closing tag far off, for each unclosed one, was quadratic)
_FIELD_TAG = re.compile(r"<([a-z][a-z0-9_-]{0,40})>([^<]*)</\1>")
# A command the user ran with `!`, and its output, the line after it
_SHELL_INPUT = re.compile(r"<bash-input>(.*)</bash-input>", re.DOTALL)
_SHELL_OUTPUT = re.compile(
    r"<bash-stdout>(?P<out>.*?)</bash-stdout>\s*(?:<bash-stderr>(?P<err>.*?)</bash-stderr>)?",
    re.DOTALL,
)
_OUTPUT_TAG = re.compile(
    r"<(local-command-stdout|local-command-stderr|bash-stdout|bash-stderr|bash-input)>"
    r"(.*?)</\1>",
    re.DOTALL,
)


def is_claude_code(parsed: Iterable[tuple[int, Any]]) -> bool:
    """True when the first lines hold a Claude Code message line (camelCase ``sessionId``,
    ``uuid``, a ``message`` object) and nothing of Pi's."""
    found = False
    for count, (_, value) in enumerate(parsed):
        if count >= SNIFF_LINES:
            break
        if not isinstance(value, dict):
            continue
        kind = value.get("type")
        if kind == "session" or (isinstance(kind, str) and kind in KNOWN_ENTRY_TYPES):
            return False
        if (
            kind in ("user", "assistant")
            and isinstance(value.get("uuid"), str)
            and isinstance(value.get("sessionId"), str)
            and isinstance(value.get("message"), dict)
        ):
            found = True
    return found


#: Claude Code's lines that are no message and carry the session's ``sessionId`` (a summary
#: and a file-history snapshot are told by fields of their own).
_SESSION_BOOKKEEPING = frozenset(
    {
        "queue-operation",
        "custom-title",
        "ai-title",
        "last-prompt",
        "agent-name",
        "tag",
        "pr-link",
        "progress",
        "system",
        "attachment",
    }
)


def _bookkeeping_kind(value: Any) -> str | None:
    """The type of a Claude Code line that is no message (a summary, a file-history snapshot,
    a queue operation, a title), told by a field Claude Code writes there; None for a
    message, a Pi line or anything else (another tool's line is not taken for one)."""
    kind = value.get("type") if isinstance(value, dict) else None
    if not isinstance(kind, str):  # (any JSON value: a list is no set member)
        return None
    if kind == "summary" and isinstance(value.get("leafUuid"), str):
        return kind
    if kind == "file-history-snapshot" and isinstance(value.get("snapshot"), dict):
        return kind
    if kind in _SESSION_BOOKKEEPING and isinstance(value.get("sessionId"), str):
        return kind
    return None


def without_messages(parsed: Iterable[tuple[int, Any]]) -> Counter[str] | None:
    """The line types of a Claude Code file that holds no message at all (a session opened
    and quit before its first prompt leaves a snapshot or a queue operation; summaries get
    files of their own), counted; None when any line is a message or not Claude Code's."""
    kinds: Counter[str] = Counter()
    for _, value in parsed:
        kind = _bookkeeping_kind(value)
        if kind is None:
            return None
        kinds[kind] += 1
    return kinds or None


def no_messages_said(kinds: Counter[str]) -> str:
    """Why such a file is no session, in the words an error gives it."""
    if sum(kinds.values()) == 1:
        held = f"one {next(iter(kinds))} line"
    else:
        names = list(kinds)
        held = (" and ".join(names) if len(names) < 3 else ", ".join(names)) + " lines"
    return f"a Claude Code file with no messages (only {held}), not a Pi session"


#: How much of a file is read to tell that it holds no message: such files are small (a
#: line or a few summaries); a bigger one is read as a session, as before.
NO_MESSAGES_LIMIT = 1 << 20


def holds_no_messages(path: Path, size: int | None = None) -> bool:
    """A Claude Code file of bookkeeping lines only (see :func:`without_messages`): no
    session to list, search, count or take as the latest. Read up to its first line that is
    none (one line of a Pi file or of a conversation); ``size``, when known, spares
    opening a file too big to be one."""
    if size is not None and size > NO_MESSAGES_LIMIT:
        return False
    left, found = NO_MESSAGES_LIMIT, False
    try:
        with open(path, "rb") as handle:
            while left > 0:
                raw = handle.readline(left)
                if not raw:
                    return found
                if left == NO_MESSAGES_LIMIT:  # the file's first line
                    raw = raw.removeprefix(b"\xef\xbb\xbf")
                left -= len(raw)
                if not raw.strip():
                    continue
                if _bookkeeping_kind(line_value(raw)) is None:
                    return False
                found = True
            return found and not handle.read(1)
    except (OSError, MemoryError):  # the listing or the loader says why
        return False


@dataclass
class _Line:
    number: int
    raw: dict[str, Any]

    @property
    def uuid(self) -> str:
        return self.raw["uuid"]

    @property
    def parent(self) -> str | None:
        parent = self.raw.get("parentUuid")
        return parent if isinstance(parent, str) else None

    @property
    def message(self) -> dict[str, Any]:
        message = self.raw.get("message")
        return message if isinstance(message, dict) else {}


@dataclass
class _Answer:
    """The lines of one API answer (same ``message.id``), each holding one content block."""

    lines: list[_Line]
    chain: list[dict[str, Any]] = field(default_factory=list)  # its results, then after them

    @property
    def id(self) -> str:
        """Its first line's uuid: Claude Code appends an answer's blocks one line at a time,
        so the last line's moved on as the session grew, and a link to the answer from an
        earlier export (or a ``watch`` page before a reload) found nothing."""
        return self.lines[0].uuid

    @property
    def tail(self) -> str:
        return self.chain[-1]["id"] if self.chain else self.id


class _Converter:
    def __init__(self, parsed: list[tuple[int, Any]], damaged: list[DamagedLine]) -> None:
        self.parsed = parsed
        self.damaged = damaged
        self.lines: dict[str, _Line] = {}
        self.order: list[_Line] = []  # kept lines in file order
        self.passed: dict[str, str | None] = {}  # uuid of a line not shown -> its parent
        self.skipped: Counter[str] = Counter()
        self.copies = 0
        self.titles: dict[str, tuple[str, int]] = {}  # line type -> (title, line number)
        self.summaries: list[tuple[str, str, int]] = []  # (leafUuid, summary, line number)
        self.answer_of: dict[str, _Answer] = {}  # uuid of an answer's line -> the answer
        self.caller: dict[str, _Answer] = {}  # tool_use id -> the answer that made the call
        self.result_owner: dict[str, _Answer] = {}  # uuid of a results line -> its answer
        # a line shown as part of another's entry -> that entry's line (a compaction's
        # summary line -> its boundary line, a `!` command's output -> the command)
        self.alias: dict[str, str] = {}
        self.summary_of: dict[str, str] = {}  # a compaction's boundary line -> its summary line
        self.first: dict[str, Any] = {}  # the first message line (session id, cwd, version)
        self.session_id = ""  # the last main-line message's: a resumed file's own id
        self.problems: list[Diagnostic] = []
        self.agent_roots: dict[str, str] = {}  # a sub-agent's first line -> the call's result
        # a sub-agent still at work: its first line -> the line that made its call (no result)
        self.agent_calls: dict[str, str] = {}
        self.shell_output: dict[str, str] = {}  # a `!` command's line -> its output's text

    # reading -----------------------------------------------------------------
    def read(self) -> list[tuple[int, Any]]:
        """Split the lines into conversation (kept), bookkeeping (counted) and others
        (passed on for the loader to report as damaged)."""
        others: list[tuple[int, Any]] = []
        for number, value in self.parsed:
            if not isinstance(value, dict):
                others.append((number, value))
                continue
            kind = value.get("type")
            uuid = value.get("uuid")
            if isinstance(uuid, str) and (uuid in self.lines or uuid in self.passed):
                earlier = self.lines.get(uuid)
                if earlier is None or _same_line(earlier.raw, value):
                    self.copies += 1  # a resumed session copies earlier lines: the first counts
                    continue
                # the same uuid on a line that says something else: kept, under a new one
                renamed = _free_uuid(uuid, self.lines, self.passed)
                self.problems.append(
                    Diagnostic(
                        number,
                        "duplicate-id",
                        f"the uuid {uuid} of line {earlier.number:,} again, on a line that "
                        f"differs: kept as {renamed}",
                    )
                )
                value = {**value, "uuid": renamed}
                uuid = renamed
            self._note_title(kind, value, number)
            if kind == "attachment" and (typed := _queued_prompt(value)) is not None:
                kind, value = "user", typed  # typed while Claude worked: a prompt of its own
            if kind in ("user", "assistant") and not self._whole(number, value):
                continue
            if self._is_conversation(kind, value) and isinstance(uuid, str):
                line = _Line(number, value)
                self.lines[uuid] = line
                self.order.append(line)
                if not self.first and kind in ("user", "assistant"):
                    self.first = value
                if value.get("isSidechain") is not True and isinstance(value.get("sessionId"), str):
                    self.session_id = value["sessionId"]
                continue
            label = kind if isinstance(kind, str) else "(no type)"
            if kind == "system" and isinstance(value.get("subtype"), str):
                label = f"system {value['subtype']}"
            self.skipped[label] += 1
            if isinstance(uuid, str):
                parent = value.get("parentUuid") or value.get("logicalParentUuid")
                self.passed[uuid] = parent if isinstance(parent, str) else None
        return others

    def _whole(self, number: int, value: dict[str, Any]) -> bool:
        """A message line with its uuid and message object; else a damaged line, kept (its
        text as the file has it) and said, as the loader keeps Pi's."""
        missing = [
            key
            for key, kind in (("uuid", str), ("message", dict))
            if not isinstance(value.get(key), kind)
        ]
        if not missing:
            return True
        what = f"a Claude Code {value['type']} line without {' or '.join(missing)}"
        self.damaged.append(DamagedLine(number, "not-an-entry", what, json.dumps(value)))
        self.problems.append(Diagnostic(number, "not-an-entry", what))
        return False

    @staticmethod
    def _is_conversation(kind: Any, value: dict[str, Any]) -> bool:
        if kind in ("user", "assistant"):
            return isinstance(value.get("message"), dict)
        subtype = value.get("subtype")
        return kind == "system" and isinstance(subtype, str) and subtype in _KEPT_SYSTEM

    def _note_title(self, kind: Any, value: dict[str, Any], number: int) -> None:
        for line_type, key in (("custom-title", "customTitle"), ("ai-title", "aiTitle")):
            if kind == line_type and isinstance(value.get(key), str) and value[key].strip():
                self.titles[line_type] = (value[key].strip(), number)
        if kind == "summary" and isinstance(value.get("summary"), str):
            leaf = as_str(value.get("leafUuid")) or ""
            self.summaries.append((leaf, value["summary"], number))

    # structure ---------------------------------------------------------------
    def _link_inline_agents(self) -> None:
        """Before Claude Code 2.0.28 a sub-agent's lines were written into the session's own
        file (``isSidechain``, the first with no parent): each is placed after the result of
        the Task call whose prompt it starts with, as a sub-agent's own file is."""
        roots = [
            line
            for line in self.order
            if line.raw.get("isSidechain") is True
            and _is_root(line.raw)
            and line.uuid not in self.agent_roots
        ]
        if not roots:
            return
        call_of: dict[str, str] = {}  # a Task call's prompt -> its id
        for answer in self.caller.values():
            for line in answer.lines:
                for block in content_blocks(line.message.get("content")):
                    given = as_dict(block.get("input")).get("prompt")
                    if (
                        block.get("type") == "tool_use"
                        and block.get("name") in ("Task", "Agent")
                        and isinstance(given, str)
                        and isinstance(block.get("id"), str)
                    ):
                        call_of.setdefault(given.strip(), block["id"])
        result_of: dict[str, str] = {}  # a call's id -> the line holding its result
        for line in self.order:
            if line.raw.get("type") == "user" and line.raw.get("isSidechain") is not True:
                for block in content_blocks(line.message.get("content")):
                    if block.get("type") == "tool_result":
                        result_of.setdefault(as_str(block.get("tool_use_id")) or "", line.uuid)
        for root in roots:
            call = call_of.get(_plain_text(root.message.get("content")).strip())
            if call is not None and call in result_of:
                self.agent_roots[root.uuid] = result_of[call]

    def shown_parent(self, uuid: str | None) -> str | None:
        """The line a child follows once bookkeeping lines are left out."""
        seen: set[str] = set()
        while uuid is not None and uuid in self.passed and uuid not in seen:
            seen.add(uuid)
            uuid = self.passed[uuid]
        return uuid

    def group_answers(self) -> list[_Answer]:
        answers: list[_Answer] = []
        for line in self.order:
            if line.raw.get("type") != "assistant":
                continue
            answer = self._answer_before(line)
            if answer is None:
                answer = _Answer([line])
                answers.append(answer)
            else:
                answer.lines.append(line)
            self.answer_of[line.uuid] = answer
            for block in content_blocks(line.message.get("content")):
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    self.caller[block["id"]] = answer
        return answers

    def _answer_before(self, line: _Line) -> _Answer | None:
        """The answer this line is the next block of: its parent is a line of the same
        answer, or the result of one of that answer's calls."""
        parent = self.lines.get(self.shown_parent(line.parent) or "")
        if parent is None:
            return None
        if parent.raw.get("type") == "assistant":
            answer = self.answer_of.get(parent.uuid)
        else:
            answer = self._owner(parent)
        if answer is not None and _same_answer(answer.lines[-1].raw, line.raw):
            return answer
        return None

    def _owner(self, line: _Line) -> _Answer | None:
        """The answer whose call a user line's first tool result answers."""
        for block in content_blocks(line.message.get("content")):
            if block.get("type") == "tool_result":
                answer = self.caller.get(as_str(block.get("tool_use_id")) or "")
                if answer is not None:
                    return answer
        return None

    def resolve(self, uuid: str | None) -> str | None:
        """The id of the entry that a line naming ``uuid`` as its parent comes after."""
        uuid = self.shown_parent(uuid)
        if uuid is None:
            return None
        answer = self.answer_of.get(uuid) or self.result_owner.get(uuid)
        if answer is not None:  # after the answer's results (parallel calls are no fork)
            return answer.tail
        return self.alias.get(uuid, uuid)

    # entries -----------------------------------------------------------------
    def convert(self) -> list[tuple[int, Any]]:
        others = self.read()
        answers = self.group_answers()
        self._link_inline_agents()
        for line in self.order:  # a compaction's boundary line and summary line: one entry
            if line.raw.get("type") == "user" and line.raw.get("isCompactSummary"):
                boundary = self.lines.get(self.shown_parent(line.parent) or "")
                if boundary is not None and boundary.raw.get("subtype") == "compact_boundary":
                    self.summary_of[boundary.uuid] = line.uuid
            if line.raw.get("type") == "user" and (ran := self._shell_line(line)) is not None:
                command, output = ran  # shown with the command: one entry
                self.shell_output[command.uuid] = output
                self.alias[line.uuid] = command.uuid
        # the boundary's id, written first, names the entry: the summary line came after it
        # (an export between the two had the boundary's id, then the link broke)
        self.alias.update({summary: boundary for boundary, summary in self.summary_of.items()})
        placed: list[tuple[int, dict[str, Any]]] = []  # (line number, entry)
        parents: list[tuple[dict[str, Any], str | None]] = []  # resolved once all are known
        for line in self.order:
            kind = line.raw.get("type")
            if kind == "assistant":  # answers are made below, from all their lines
                continue
            if kind == "user" and line.raw.get("isCompactSummary"):
                entry, parent = self._compaction(line)
                parents.append((entry, parent))
                placed.append((line.number, entry))
            elif kind == "user" and line.uuid in self.alias:  # a `!` command's output
                continue
            elif kind == "user" and (entry := self._shell_entry(line)) is not None:
                parents.append((entry, line.parent))
                placed.append((line.number, entry))
            elif kind == "user":
                self._user_line(line, placed, parents)
            elif line.raw.get("subtype") == "compact_boundary":
                if line.uuid in self.summary_of:  # its summary line makes the entry
                    continue
                entry = _compaction_entry(line, line, "")
                parents.append((entry, self._compacted_after(line)))
                placed.append((line.number, entry))
            else:
                entry = _command_entry(line)
                parents.append((entry, line.parent))
                placed.append((line.number, entry))
        asked = ""  # the model the last real answer came from
        for answer in sorted(answers, key=lambda a: a.lines[0].number):
            entry = _assistant_entry(answer, asked)
            if entry["message"]["model"] != SYNTHETIC_MODEL:
                asked = entry["message"]["model"] or asked
            placed.append((answer.lines[0].number, entry))
            parents.append((entry, answer.lines[0].parent))
        for entry, parent in parents:
            entry["parentId"] = self.resolve(parent)
            if entry["id"] in self.agent_roots:  # right after the result of its Task call
                entry["parentId"] = self.agent_roots[entry["id"]]
            elif entry["id"] in self.agent_calls:  # at work: after the call, and its answer's
                entry["parentId"] = self.resolve(self.agent_calls[entry["id"]])
        for answer in answers:  # its results and what came with them, one after another
            previous = answer.id
            for entry in answer.chain:
                entry["parentId"] = previous
                previous = entry["id"]
        placed.sort(key=lambda item: item[0])
        return [(0, self.header()), *self._named(self._leaf_last(placed)), *others]

    def _user_line(
        self,
        line: _Line,
        placed: list[tuple[int, dict[str, Any]]],
        parents: list[tuple[dict[str, Any], str | None]],
    ) -> None:
        """A prompt, or tool results (each its own entry, after the call's answer)."""
        results, rest = self._split_results(line)
        entries = []
        for number, (call_id, block) in enumerate(results, start=1):
            entry = _tool_result(line, block, self._call_name(call_id))
            if len(results) == 1 and (diff := _patch_diff(line.raw.get("toolUseResult"))):
                entry["message"]["details"] = {"diff": diff}
            last = number == len(results) and rest is None
            entry["id"] = line.uuid if last else f"{line.uuid}.{number}"
            entries.append((entry, self.caller.get(call_id)))
        if rest is not None or not results:
            entry = self._user_entry(line, rest)
            owner = next((o for _, o in entries if o is not None), None)
            entries.append((entry, owner))
        owner = next((o for _, o in entries if o is not None), None)
        if owner is not None and results:
            self.result_owner[line.uuid] = owner
        for entry, answer in entries:
            placed.append((line.number, entry))
            if answer is None or not results:  # no call found: where the file puts it
                parents.append((entry, line.parent))
            else:
                answer.chain.append(entry)

    def _shell_line(self, line: _Line) -> tuple[_Line, str] | None:
        """The `!` command line this line is the output of, if it is one, and the output
        (stderr after stdout)."""
        ran = self.lines.get(self.shown_parent(line.parent) or "")
        if ran is None or ran.raw.get("type") != "user" or ran.uuid in self.shell_output:
            return None
        if _SHELL_INPUT.fullmatch(_plain_text(ran.message.get("content")).strip()) is None:
            return None
        parts = _SHELL_OUTPUT.fullmatch(_plain_text(line.message.get("content")).strip())
        if parts is None:
            return None
        out, err = parts["out"].strip("\n"), (parts["err"] or "").strip("\n")
        return ran, "\n".join(filter(None, (out, err)))

    def _shell_entry(self, line: _Line) -> dict[str, Any] | None:
        """A command the user ran with `!` (Claude Code's bash mode) as Pi's
        ``bashExecution``, with the output of the line after it (stderr after stdout)."""
        if line.raw.get("isMeta"):
            return None
        command = _SHELL_INPUT.fullmatch(_plain_text(line.message.get("content")).strip())
        if command is None:
            return None
        message = {
            "role": "bashExecution",
            "command": command.group(1).strip(),
            "output": self.shell_output.get(line.uuid, ""),
            "exitCode": None,
            "cancelled": False,
            "truncated": False,
        }
        _stamp(message, line.raw)
        return _entry(line, "message", message=message)

    def _split_results(
        self, line: _Line
    ) -> tuple[list[tuple[str, dict[str, Any]]], list[dict[str, Any]] | None]:
        content = line.message.get("content")
        if not isinstance(content, list):
            return [], None
        results, rest = [], []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                call_id = block.get("tool_use_id")
                results.append((call_id if isinstance(call_id, str) else "", block))
            else:
                rest.append(block)
        return results, (rest or None)

    def _call_name(self, call_id: str) -> str:
        answer = self.caller.get(call_id)
        for line in answer.lines if answer else ():
            for block in content_blocks(line.message.get("content")):
                if block.get("id") == call_id and isinstance(block.get("name"), str):
                    return _TOOL_NAMES.get(block["name"], block["name"])
        return ""

    def _user_entry(self, line: _Line, blocks: list[dict[str, Any]] | None) -> dict[str, Any]:
        content = line.message.get("content") if blocks is None else blocks
        if line.raw.get("isMeta"):  # what Claude Code added for the model (a skill's text)
            return _custom_message(line, "claude-code-meta", _user_content(content), False)
        if (notice := _task_notification(content)) is not None:  # Claude Code's, not typed
            return _custom_message(line, "claude-code-notification", notice, True)
        if isinstance(content, str):
            content = _command_text(content)
        message = {"role": "user", "content": _user_content(content)}
        _stamp(message, line.raw)
        return _entry(line, "message", message=message)

    def _compaction(self, line: _Line) -> tuple[dict[str, Any], str | None]:
        """The summary line after a ``compact_boundary`` line: one Pi compaction entry,
        after the line the boundary names as the conversation's end."""
        summary = _plain_text(line.message.get("content"))
        boundary = self.lines.get(self.shown_parent(line.parent) or "")
        if boundary is None or self.summary_of.get(boundary.uuid) != line.uuid:
            return _compaction_entry(line, line, summary), line.parent
        entry = _compaction_entry(line, boundary, summary)
        return entry, self._compacted_after(boundary)

    def _compacted_after(self, boundary: _Line) -> str | None:
        """The line a compaction follows: the one its boundary names as the conversation's
        end, or, when that line was never written (Claude Code compacted while an answer
        was still streaming), the main line's last line before the boundary, so the
        conversation stays one path rather than the compaction starting a second root."""
        named = as_str(boundary.raw.get("logicalParentUuid")) or None
        if named is None or named in self.lines or named in self.passed:
            return named
        earlier = (
            line
            for line in reversed(self.order)
            if line.number < boundary.number and not line.raw.get("isSidechain")
        )
        last = next(earlier, None)
        return last.uuid if last is not None else named

    def _leaf_last(self, placed: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, Any]]:
        """Pi's leaf is the last entry: the one the file's last main-line line leads to
        (in a sub-agent's file, where every line is a sidechain's, its last line)."""
        main = [line for line in self.order if not line.raw.get("isSidechain")]
        last = (main or self.order or [None])[-1]
        leaf = self.resolve(last.uuid) if last else None
        at = next((i for i, (_, e) in enumerate(placed) if e["id"] == leaf), None)
        if at is not None:
            placed.append(placed.pop(at))
        return list(placed)

    def header(self) -> dict[str, Any]:
        """Pi's header from the first message line. A sub-agent's file (its lines carry the
        parent's session id) is session ``agent-<id>``, with the parent as its parent. A
        resumed session's file starts with the lines it copied, under the old session's id:
        its id is its own lines' (the last ones)."""
        first = self.first
        session_id = as_str(first.get("sessionId")) or ""
        agent = (as_str(first.get("agentId")) or "") if first.get("isSidechain") is True else ""
        header: dict[str, Any] = {
            "type": "session",
            "version": 3,
            "id": f"agent-{agent}" if agent else (self.session_id or session_id),
            "timestamp": as_str(first.get("timestamp")) or "",
            "cwd": as_str(first.get("cwd")) or "",
        }
        if agent and session_id:
            header["parentSession"] = session_id
        version = first.get("version")
        header["source"] = "Claude Code" + (f" {version}" if isinstance(version, str) else "")
        if isinstance(first.get("gitBranch"), str) and first["gitBranch"]:
            header["gitBranch"] = first["gitBranch"]
        header["cost"] = self._cost_note()
        return header

    def _cost_note(self) -> str:
        """Where the page's dollars come from, since Claude Code no longer writes them."""
        unpriced = sorted(
            {
                as_str(line.message.get("model")) or ""
                for line in self.order
                if line.raw.get("type") == "assistant"
                and not _costs(line.raw)
                and claude_prices.prices(as_str(line.message.get("model")) or "") is None
                and any(token_count(v) for v in as_dict(line.message.get("usage")).values())
            }
        )
        answers = [line for line in self.order if line.raw.get("type") == "assistant"]
        if answers and all(_costs(line.raw) for line in answers):
            return "as Claude Code recorded it"
        note = "computed from the models' list prices (Claude Code records tokens, not cost)"
        if unpriced:
            note += f"; no price known for {', '.join(unpriced)}: counted as $0"
        return note

    def title(self) -> tuple[str, int] | None:
        """A /rename title, else Claude Code's own, else a summary of a leaf in this file
        (a known bug writes other sessions' summaries into a file), and its line."""
        if "custom-title" in self.titles:
            return self.titles["custom-title"]
        if "ai-title" in self.titles:
            return self.titles["ai-title"]
        for leaf, summary, number in reversed(self.summaries):
            if (leaf in self.lines or leaf in self.passed) and summary.strip():
                return summary.strip(), number
        return None

    def _named(self, entries: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
        """The title as Pi keeps a /name: a ``session_info`` entry after the leaf (so a Pi
        copy of the session, a gist's or a dataset's, keeps it too)."""
        title = self.title()
        if title is None or not entries:
            return entries
        leaf = entries[-1][1]
        name = {"type": "session_info", "id": f"{leaf['id']}.title", "parentId": leaf["id"]}
        name |= {"timestamp": leaf["timestamp"], "name": title[0]}
        return [*entries, (title[1], name)]

    def notes(self) -> list[Diagnostic]:
        notes = []
        if self.skipped:
            notes.append(unshown_lines_note("claude-code-bookkeeping", "Claude Code", self.skipped))
        if self.copies:
            notes.append(
                Diagnostic(
                    0,
                    "claude-code-copies",
                    f"{plural(self.copies, 'line')} with an earlier line's uuid (a resumed session "
                    "copies them); the first of each is shown",
                    "info",
                )
            )
        return notes


def convert(
    parsed: list[tuple[int, Any]],
    diagnostics: list[Diagnostic],
    damaged: list[DamagedLine],
    path: str | None = None,
) -> list[tuple[int, Any]]:
    """Claude Code lines -> a Pi header at line 0, then Pi v3 entries (the leaf last, or
    the title's ``session_info`` after it), then the lines that are not objects (for the
    loader to report); message lines without their uuid or message go to ``damaged``.
    The sub-agents' transcripts beside the file at ``path`` join the tree (see
    :func:`sub_agents`)."""
    agents = sub_agents(parsed, path, diagnostics)
    lines = list(parsed)
    converter = _Converter(lines, damaged)
    number = max((n for n, _ in parsed), default=0)
    for agent in agents:
        for offset, (_, value) in enumerate(agent.lines, start=1):
            lines.append((number + offset, value))
        number += len(agent.lines)
        converter.agent_roots.update(agent.run_starts())
        converter.agent_calls.update(agent.waiting_start())
    converted = converter.convert()
    diagnostics.append(
        Diagnostic(0, "claude-code", "a Claude Code transcript, read as a Pi session", "info")
    )
    if agents:
        diagnostics.append(
            Diagnostic(
                0,
                SUB_AGENTS,
                f"{plural(len(agents), 'sub-agent transcript')} "
                "shown as a branch after the result of the call that ran it"
                f"{' (after the call, while it runs)' if converter.agent_calls else ''}; "
                "their lines are numbered after this file's",
                "info",
            )
        )
    diagnostics.extend(converter.problems)
    diagnostics.extend(converter.notes())
    return converted


#: The note that a session holds its sub-agents' transcripts: the page's download is then
#: the session as one Pi file, not the Claude Code file alone.
SUB_AGENTS = "claude-code-sub-agents"

#: A sub-agent's id as Claude Code names its file (``agent-<id>.jsonl``).
_AGENT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass
class SubAgent:
    """A sub-agent's transcript, read once, and the Task (Agent) calls that ran it: one, or
    more when the agent was resumed (Claude Code appends each run to the same file)."""

    lines: list[tuple[int, Any]]
    calls: list[tuple[str, str]]  # (the uuid of the line holding a call's result, its prompt)
    # the uuid of the line that made the call, when its result is not written yet: the agent
    # is at work (and ``calls`` empty)
    waiting: str = ""

    def run_starts(self) -> dict[str, str]:
        """Each run's first line -> the result line of the call that made it, in the order
        of the calls: a run starts at the first prompt after the previous run's that says
        the call's prompt. What cannot be told apart stays with the first call's run (the
        whole transcript, when no prompt matches)."""
        prompts = [
            (value["uuid"], _plain_text(value["message"].get("content")).strip())
            for _, value in self.lines
            if isinstance(value, dict)
            and value.get("type") == "user"
            and isinstance(value.get("uuid"), str)
            and isinstance(value.get("message"), dict)
            and not any(
                b.get("type") == "tool_result"
                for b in content_blocks(value["message"].get("content"))
            )
        ]
        starts: dict[str, str] = {}
        at = 0
        for call_line, prompt in self.calls:
            found = next(
                (i for i in range(at, len(prompts)) if prompt and prompts[i][1] == prompt), None
            )
            if found is not None:
                starts.setdefault(prompts[found][0], call_line)
                at = found + 1
        root = next((v for _, v in self.lines if isinstance(v, dict) and _is_root(v)), None)
        if root is not None and self.calls:
            starts.setdefault(root["uuid"], self.calls[0][0])
        return starts

    def waiting_start(self) -> dict[str, str]:
        """An agent still at work: its first line -> the line that made its call, which has
        no result to follow yet."""
        root = next((v for _, v in self.lines if isinstance(v, dict) and _is_root(v)), None)
        return {root["uuid"]: self.waiting} if root is not None and self.waiting else {}


def sub_agents(
    parsed: list[tuple[int, Any]], path: str | None, diagnostics: list[Diagnostic]
) -> list[SubAgent]:
    """The transcripts of the sub-agents this session's Task (Agent) calls ran, each read
    once with the calls that ran it (the uuid of the line holding each call's result, its
    prompt): ``<session>/subagents/agent-<id>.jsonl`` (Claude Code 2.1) or
    ``agent-<id>.jsonl`` beside the file (2.0), named by the result's
    ``toolUseResult.agentId``. A call whose result does not name its agent (the agent is
    still at work, or was stopped) is told by what else Claude Code writes of it: a
    ``progress`` line of the agent's (``data.agentId``, ``parentToolUseID``), or the
    transcript's ``agent-<id>.meta.json`` (``toolUseId``). Read-only; one that cannot be
    read is a warning."""
    if not path:
        return []
    here = Path(path)
    asked = _task_prompts(parsed)
    calls: dict[str, list[tuple[str, str]]] = {}  # agent id -> its calls, in file order
    for _, value in parsed:
        outcome = value.get("toolUseResult") if isinstance(value, dict) else None
        agent = outcome.get("agentId") if isinstance(outcome, dict) else None
        if not isinstance(agent, str) or not _AGENT_ID.fullmatch(agent):
            continue
        if not isinstance(value.get("uuid"), str):
            continue
        prompt = as_str(outcome.get("prompt")) or next(
            (
                asked.get(as_str(b.get("tool_use_id")) or "", "")
                for b in content_blocks(as_dict(value.get("message")).get("content"))
                if b.get("type") == "tool_result"
            ),
            "",
        )
        calls.setdefault(agent, []).append((value["uuid"], prompt.strip()))
    waiting: dict[str, str] = {}  # agent id -> the line that made its call (no result yet)
    made, answered = _task_call_lines(parsed)
    for agent, call in _calls_of_unnamed_agents(parsed, here, set(calls)).items():
        if call in answered:  # its result, which did not name it (a stopped agent)
            calls[agent] = [(answered[call], asked.get(call, "").strip())]
        elif call in made:
            waiting[agent] = made[call]
    agents = []
    for agent in [*calls, *waiting]:
        lines = _sub_agent_lines(here, agent, diagnostics)
        if lines is not None:
            agents.append(SubAgent(lines, calls.get(agent, []), waiting.get(agent, "")))
    return agents


#: While set (:func:`ended_sub_agent_lines_only`), a sub-agent transcript's last line without
#: its newline is not read: the agent is still writing it.
_ENDED_LINES_ONLY: ContextVar[bool] = ContextVar("ended_sub_agent_lines_only", default=False)


@contextmanager
def ended_sub_agent_lines_only() -> Iterator[None]:
    """Within it, sub-agent transcripts are read up to their last newline: `watch` waits for
    a line still being written, as it does for the session file's own, rather than show it
    as damaged and warn of it (it reads them as they are once it has waited enough)."""
    token = _ENDED_LINES_ONLY.set(True)
    try:
        yield
    finally:
        _ENDED_LINES_ONLY.reset(token)


def _ended_lines(lines: Iterable[bytes]) -> Iterator[bytes]:
    """The lines that end with their newline (only a file's last line can lack it)."""
    return (line for line in lines if line.endswith(b"\n"))


def _sub_agent_path(here: Path, agent: str) -> Path | None:
    """Where Claude Code keeps sub-agent ``agent``'s transcript for the session at ``here``:
    in the session's ``subagents`` folder (2.1), else beside it (2.0); None for neither."""
    name = f"agent-{agent}.jsonl"
    candidates = (here.parent / here.stem / "subagents" / name, here.parent / name)
    return next((c for c in candidates if c.is_file()), None)


def _sub_agent_lines(
    here: Path, agent: str, diagnostics: list[Diagnostic]
) -> list[tuple[int, Any]] | None:
    """Sub-agent ``agent``'s transcript, parsed; None when it is not there or unreadable
    (said in ``diagnostics``), as are lines that cannot be read."""
    agent_path = _sub_agent_path(here, agent)
    if agent_path is None:
        return None
    problems: list[Diagnostic] = []
    try:
        with open(agent_path, "rb") as handle:
            source = _ended_lines(handle) if _ENDED_LINES_ONLY.get() else handle
            lines = list(iter_parsed_lines(source, problems, []))
    except OSError as error:
        why = error.strerror or type(error).__name__
        diagnostics.append(Diagnostic(0, "sub-agent", f"{agent_path.name}: {why}"))
        return None
    if problems:
        diagnostics.append(
            Diagnostic(
                0,
                "sub-agent",
                f"{agent_path.name}: {plural(len(problems), 'line')} could not be read "
                f"(first: {problems[0]})",
            )
        )
    return lines


def _task_call_lines(parsed: list[tuple[int, Any]]) -> tuple[dict[str, str], dict[str, str]]:
    """The session's Task (Agent) calls: by the call's id, the uuid of the line that made it,
    and of the line holding its result, where there is one."""
    made: dict[str, str] = {}
    answered: dict[str, str] = {}
    for _, value in parsed:
        if not isinstance(value, dict) or not isinstance(value.get("uuid"), str):
            continue
        for block in content_blocks(as_dict(value.get("message")).get("content")):
            if (
                value.get("type") == "assistant"
                and block.get("type") == "tool_use"
                and block.get("name") in ("Task", "Agent")
                and isinstance(block.get("id"), str)
            ):
                made.setdefault(block["id"], value["uuid"])
            elif value.get("type") == "user" and block.get("type") == "tool_result":
                answered.setdefault(as_str(block.get("tool_use_id")) or "", value["uuid"])
    return made, {call: line for call, line in answered.items() if call in made}


def _calls_of_unnamed_agents(
    parsed: list[tuple[int, Any]], here: Path, named: set[str]
) -> dict[str, str]:
    """The call that ran each sub-agent no result names (not in ``named``), by the agent's
    id, as Claude Code says it elsewhere: its ``progress`` lines in the session's file
    (``data.type`` ``agent_progress``, written before 2.1.71) name the agent and the call,
    ``parentToolUseID``; its transcript's ``agent-<id>.meta.json`` names the call,
    ``toolUseId``."""
    calls: dict[str, str] = {}
    for _, value in parsed:
        if not isinstance(value, dict) or value.get("type") != "progress":
            continue
        data = as_dict(value.get("data"))
        agent, call = data.get("agentId"), value.get("parentToolUseID")
        if (
            data.get("type") == "agent_progress"
            and isinstance(agent, str)
            and _AGENT_ID.fullmatch(agent)
            and agent not in named
            and isinstance(call, str)
        ):
            calls.setdefault(agent, call)
    for file in _subagents_folder_files(here):
        agent = file.name[len("agent-") : -len(".jsonl")]
        if agent in named or agent in calls or not _AGENT_ID.fullmatch(agent):
            continue
        if (call := _call_in_meta(file.with_name(f"agent-{agent}.meta.json"))) is not None:
            calls[agent] = call
    return calls


#: The most of a sub-agent's ``.meta.json`` read: a few fields (its type, description,
#: call), not a file to read whole whatever its size.
_META_BYTES = 64 * 1024


def _call_in_meta(meta: Path) -> str | None:
    """The id of the call that ran a sub-agent, as its ``agent-<id>.meta.json`` says it
    (``toolUseId``); None when it is not there, not such a file or says no call."""
    try:
        if not meta.is_file():  # a FIFO of that name blocked the open: export hung
            return None
        with open(meta, "rb") as handle:
            value = json.loads(handle.read(_META_BYTES))
    except (OSError, ValueError):
        return None
    call = value.get("toolUseId") if isinstance(value, dict) else None
    return call if isinstance(call, str) and call else None


def _task_prompts(parsed: list[tuple[int, Any]]) -> dict[str, str]:
    """The prompt of each Task (Agent) call, by the call's id."""
    prompts: dict[str, str] = {}
    for _, value in parsed:
        if not isinstance(value, dict) or value.get("type") != "assistant":
            continue
        for block in content_blocks(as_dict(value.get("message")).get("content")):
            given = as_dict(block.get("input")).get("prompt")
            if block.get("type") == "tool_use" and isinstance(given, str):
                prompts.setdefault(as_str(block.get("id")) or "", given)
    return prompts


_SIDECHAIN = re.compile(rb'"isSidechain"\s*:\s*true\b')


def is_beside_sub_agent(path: Path) -> bool:
    """A Claude Code 2.0 sub-agent's transcript, kept beside its parent's (``agent-<id>.jsonl``
    whose lines say ``"isSidechain": true``): its parent's session shows it, so a listing
    that counted it too counted its turns and cost twice."""
    if not path.name.startswith("agent-"):
        return False
    try:
        with open(path, "rb") as handle:
            first = handle.readline(1 << 16)
    except OSError:
        return False
    return _SIDECHAIN.search(first) is not None


def sub_agent_files(path: Path) -> list[Path]:
    """The sub-agent transcripts Claude Code keeps for the session at ``path``, for a reader
    of raw bytes (search's filter) and the stamps and digests that tell a change: 2.1's
    (``<session>/subagents/agent-*.jsonl``), then the 2.0 ones beside the file that the
    session names, as the loader links them (one that changed alone left the site's page
    stale). Not every ``agent-*.jsonl`` beside it: the folder holds every session's."""
    own = _subagents_folder_files(path)
    return [*own, *_named_beside_agents(path, {file.name for file in own})]


def _subagents_folder_files(path: Path) -> list[Path]:
    """The transcripts in the session's ``subagents`` folder (Claude Code 2.1)."""
    folder = path.parent / path.stem / "subagents"
    return sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []


def _named_beside_agents(path: Path, taken: Collection[str]) -> list[Path]:
    """The ``agent-<id>.jsonl`` files beside the session at ``path`` (Claude Code 2.0's
    layout) whose lines name it as theirs (``sessionId``, the session file's name) and its
    ``subagents`` folder does not hold (``taken`` names those). Only the agents' first lines
    are read, once per listing of the folder: reading each session file whole to find the
    agents it names made a cached `list` of a 2.0 folder read every session again."""
    agents = _beside_agents(path.parent)
    return [
        path.parent / name
        for name, session in sorted(agents.items())
        if session == path.stem and name not in taken
    ]


def _open_without_waiting(name: str, flags: int) -> int:
    return os.open(name, flags | getattr(os, "O_NONBLOCK", 0))  # (a flag POSIX has)


#: How much of an agent's transcript is read for the session it names.
_AGENT_HEAD_BYTES = 64 * 1024


def _agent_session(path: str) -> str:
    """The ``sessionId`` the first lines of an agent's transcript name ("" for none, or a
    file that cannot be read; a FIFO is not waited for)."""
    try:
        with open(path, "rb", opener=_open_without_waiting) as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return ""
            head = handle.read(_AGENT_HEAD_BYTES)
    except OSError:
        return ""
    for line in head.splitlines():
        value = line_value(line)
        session = value.get("sessionId") if isinstance(value, dict) else None
        if isinstance(session, str) and session:
            return session
    return ""


#: A folder changed this close to its listing is listed again, even at the same time: a
#: file added in the same tick of the file system's clock leaves its time as it was.
_SETTLED_NS = 2_000_000_000

#: Of each project folder listed: its time then, when it was listed, and its
#: ``agent-*.jsonl`` files with the session each names.
_BESIDE_AGENTS: dict[str, tuple[int, int, dict[str, str]]] = {}


def _beside_agents(folder: Path) -> dict[str, str]:
    """The ``agent-*.jsonl`` files in a project folder, each with the session it names,
    read again only when the folder changed: every session of the folder asks, and a
    listing of thousands listed it thousands of times."""
    try:
        changed = folder.stat().st_mtime_ns
    except OSError:
        return {}
    key = os.fspath(folder)
    known = _BESIDE_AGENTS.get(key)
    if known is not None and known[0] == changed and known[1] - changed > _SETTLED_NS:
        return known[2]
    listed_at = time.time_ns()
    agents: dict[str, str] = {}
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith("agent-") and entry.name.endswith(".jsonl"):
                    agents[entry.name] = _agent_session(entry.path)
    except OSError:
        agents = {}
    _BESIDE_AGENTS[key] = (changed, listed_at, agents)
    return agents


def session_digest(path: Path, file_digest: str) -> str:
    """A session's source digest for "has it changed" (publish's manifest): its file's, or,
    when Claude Code keeps sub-agent transcripts for it, of that and theirs, since one that
    changes alone changes the session. A Pi session's digest is its file's, as before."""
    files = sub_agent_files(path)
    if not files:
        return file_digest
    combined = hashlib.sha256(file_digest.encode("ascii"))
    for file in files:
        combined.update(f"\n{file.name}\n".encode("utf-8", "surrogateescape"))
        combined.update(hashlib.sha256(file.read_bytes()).hexdigest().encode("ascii"))
    return combined.hexdigest()


def sub_agent_stamps(path: Path, agents: Collection[str] | None = None) -> str:
    """The sub-agent transcripts' names, sizes and times, as one digest ("" for none): what a
    site compares to see that one changed without reading them. With ``agents``
    (:func:`sub_agent_references`): only theirs, where the session finds them, and the
    ``.meta.json`` files beside them all with their transcripts (a new one may name a call
    of the session's)."""
    if agents is None:
        files = sub_agent_files(path)
    else:
        folder = path.parent / path.stem / "subagents"
        metas = sorted(folder.glob("agent-*.meta.json")) if folder.is_dir() else []
        found = (_sub_agent_path(path, agent) for agent in sorted(agents))
        # and the transcript beside each meta: a meta written first named a call while no
        # transcript was there to link, and the transcript's lines then changed no stamp
        beside = [meta.with_name(meta.name[: -len(".meta.json")] + ".jsonl") for meta in metas]
        files = [*(file for file in found if file is not None), *metas, *beside]
    stamps = []
    for file in files:
        try:
            info = file.stat()
        except OSError:  # removed since the listing, or a dangling link: as the loader sees it
            stamps.append(f"{file.name}:gone")
            continue
        stamps.append(f"{file.name}:{info.st_size}:{info.st_mtime_ns}")
    if not stamps:
        return ""
    text = "\n".join(stamps).encode("utf-8", "surrogateescape")
    return hashlib.sha256(text).hexdigest()[:32]


def sub_agent_transcripts(path: Path, agents: Collection[str] | None = None) -> list[Path]:
    """The transcripts of ``agents`` (for None, :func:`sub_agent_files`) that are there,
    where the session finds them."""
    if agents is None:
        return sub_agent_files(path)
    found = (_sub_agent_path(path, agent) for agent in sorted(agents))
    return [file for file in found if file is not None]


#: An ``"agentId": "<id>"`` field: how Claude Code names a sub-agent in the session's file
#: (a Task result's ``toolUseResult``, a ``progress`` line's ``data``). In a JSON text a
#: quote inside a string is escaped, so no text a message holds looks like one.
_AGENT_ID_FIELD = re.compile(rb'"agentId"\s*:\s*"([A-Za-z0-9_-]{1,64})"')


def sub_agent_references(path: Path, data: bytes) -> frozenset[str]:
    """The sub-agents the Claude Code session at ``path``, whose file holds ``data`` (UTF-8),
    may show: those its file names, and those whose ``.meta.json`` names a call its file
    holds. More than :func:`sub_agents` reads, never fewer: `watch` looks at their
    transcripts alone, as a change to another's cannot change the page."""
    named = {match.decode("ascii") for match in _AGENT_ID_FIELD.findall(data)}
    for file in _subagents_folder_files(path):
        agent = file.name[len("agent-") : -len(".jsonl")]
        if agent in named or not _AGENT_ID.fullmatch(agent):
            continue
        call = _call_in_meta(file.with_name(f"agent-{agent}.meta.json"))
        if call is not None and json.dumps(call).encode("utf-8") in data:
            named.add(agent)
    return frozenset(named)


def _queued_prompt(value: dict[str, Any]) -> dict[str, Any] | None:
    """A prompt the user typed while Claude was working, as a user line: Claude Code folds
    it into the running turn and writes only this ``queued_command`` attachment, no user
    line. (Not another session's message or a notification Claude Code queued itself.)"""
    attachment = value.get("attachment")
    if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
        return None
    origin = attachment.get("origin")
    kind = origin.get("kind", "human") if isinstance(origin, dict) else "human"
    prompt = attachment.get("prompt")
    if (
        attachment.get("commandMode", "prompt") != "prompt"
        or kind != "human"
        or attachment.get("isMeta") is True
        or not isinstance(prompt, str | list)
    ):
        return None
    return {**value, "type": "user", "message": {"role": "user", "content": prompt}}


def _is_root(value: dict[str, Any]) -> bool:
    return isinstance(value.get("uuid"), str) and value.get("parentUuid") is None


# one entry each ----------------------------------------------------------------
def _entry(line: _Line, kind: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "id": line.uuid,
        "parentId": None,
        "timestamp": as_str(line.raw.get("timestamp")) or "",
        **fields,
    }


#: The model Claude Code writes on a message it made itself (an API error, an interruption)
SYNTHETIC_MODEL = "<synthetic>"


def _assistant_entry(answer: _Answer, asked: str = "") -> dict[str, Any]:
    """An answer as Pi's assistant message. One Claude Code made itself (``<synthetic>``: a
    529 it could not get past) is said as from the model it asked, as Pi writes an error
    turn: no model of that name was chosen, and "anthropic/<synthetic>" had a usage row."""
    content: list[Any] = []
    for line in answer.lines:
        blocks = line.message.get("content")
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        for block in blocks if isinstance(blocks, list) else ():
            content.append(_assistant_block(block))
    last = answer.lines[-1]
    models = [m for line in answer.lines if isinstance(m := line.message.get("model"), str)]
    model = next((m for m in models if m != SYNTHETIC_MODEL), "")
    model = model or asked or (models[0] if models else "")
    reasons = [line.message.get("stop_reason") for line in answer.lines]
    reason = next((r for r in reversed(reasons) if isinstance(r, str)), None)
    has_calls = any(isinstance(b, dict) and b.get("type") == "toolCall" for b in content)
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": model,
        "usage": _usage(answer, model),
        "stopReason": _STOP_REASONS.get(reason or "", "toolUse" if has_calls else "stop"),
    }
    if any(line.raw.get("isApiErrorMessage") for line in answer.lines):  # as Pi writes one
        message["stopReason"] = "error"
        message["errorMessage"] = _plain_text(content) or "API error"
        message["content"] = [b for b in content if not _is_text(b)]
    _stamp(message, last.raw)
    return _entry(last, "message", message=message) | {"id": answer.id}


def _assistant_block(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    kind = block.get("type")
    if kind == "tool_use":
        name = block.get("name")
        arguments = block.get("input")
        if isinstance(name, str) and name in _TOOL_NAMES and isinstance(arguments, dict):
            arguments = _pi_arguments(name, arguments)
            name = _TOOL_NAMES[name]
        return {"type": "toolCall", "id": block.get("id"), "name": name, "arguments": arguments}
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.get("thinking")}
    if kind == "redacted_thinking":
        return {"type": "thinking", "thinking": "", "redacted": True}
    return block


def _pi_arguments(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Claude Code's argument names as Pi's tool views read them (the values unchanged but
    Bash's timeout, which is milliseconds there and seconds in Pi)."""
    renamed = {_ARGUMENT_NAMES.get(key, key): value for key, value in arguments.items()}
    timeout = renamed.get("timeout")
    if tool == "Bash" and isinstance(timeout, int | float) and not isinstance(timeout, bool):
        renamed["timeout"] = timeout / 1000
    edits = renamed.get("edits")
    if tool == "MultiEdit" and isinstance(edits, list):
        renamed["edits"] = [
            {_ARGUMENT_NAMES.get(k, k): v for k, v in item.items()}
            if isinstance(item, dict)
            else item
            for item in edits
        ]
    return renamed


def _usage(answer: _Answer, model: str) -> dict[str, Any]:
    """Every line of an answer repeats its usage; the output count grows as it streams.
    The cost is Claude Code's own where it wrote one, else the model's list price."""
    first = next(
        (u for line in answer.lines if isinstance(u := line.message.get("usage"), dict)), {}
    )
    outputs = [
        token_count(u.get("output_tokens"))
        for line in answer.lines
        if isinstance(u := line.message.get("usage"), dict)
    ]
    usage: dict[str, Any] = {
        "input": token_count(first.get("input_tokens")),
        "output": max(outputs, default=0),
        "cacheRead": token_count(first.get("cache_read_input_tokens")),
        "cacheWrite": token_count(first.get("cache_creation_input_tokens")),
    }
    usage["totalTokens"] = sum(usage.values())
    costs = [cost for line in answer.lines for cost in _costs(line.raw)]
    if costs:  # written by Claude Code before 1.0.9 (every line the answer's cost)
        usage["cost"] = {"total": max(costs)}
    elif (priced := claude_prices.cost(model, usage, _one_hour_writes(first))) is not None:
        usage["cost"] = priced
    return usage


def _one_hour_writes(usage: dict[str, Any]) -> int:
    """The cache writes made for an hour (``cache_creation.ephemeral_1h_input_tokens``),
    which cost more than the five-minute ones."""
    split = usage.get("cache_creation")
    return token_count(split.get("ephemeral_1h_input_tokens")) if isinstance(split, dict) else 0


def _costs(raw: dict[str, Any]) -> list[float]:
    cost = raw.get("costUSD")
    ok = isinstance(cost, int | float) and not isinstance(cost, bool)
    return [float(cost)] if ok else []


def _tool_result(line: _Line, block: dict[str, Any], tool_name: str) -> dict[str, Any]:
    content = block.get("content")
    if isinstance(content, str):
        blocks: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        blocks = [_content_block(b) for b in content]
    else:
        blocks = [] if content is None else [content]
    if tool_name == "read":
        blocks = [_unnumbered(b) for b in blocks]
    message: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": block.get("tool_use_id"),
        "toolName": tool_name,
        "content": blocks,
        "isError": block.get("is_error") is True,
    }
    _stamp(message, line.raw)
    return _entry(line, "message", message=message)


def _unnumbered(block: Any) -> Any:
    """Read's text without the ``     1→`` Claude Code puts before each line, so the view
    highlights the file's own text; left as it is unless every line is numbered in order."""
    if not isinstance(block, dict) or block.get("type") != "text":
        return block
    text = block.get("text")
    if not isinstance(text, str) or not text:
        return block
    lines = text.removesuffix("\n").split("\n")
    bodies = []
    for expected, line in enumerate(lines, start=_first_number(lines[0])):
        match = _NUMBERED_LINE.match(line)
        if match is None or int(match.group(1)) != expected:
            return block
        bodies.append(line[match.end() :])
    return {**block, "text": "\n".join(bodies) + ("\n" if text.endswith("\n") else "")}


def _first_number(line: str) -> int:
    match = _NUMBERED_LINE.match(line)
    return int(match.group(1)) if match else -1


def _same_line(earlier: dict[str, Any], value: dict[str, Any]) -> bool:
    """A copy of an earlier line (a resumed session's): the same kind and message."""
    return earlier.get("type") == value.get("type") and earlier.get("message") == value.get(
        "message"
    )


def _free_uuid(uuid: str, *taken: Mapping[str, Any]) -> str:
    number = 2
    while any(f"{uuid}~{number}" in names for names in taken):
        number += 1
    return f"{uuid}~{number}"


def _patch_diff(outcome: Any) -> str | None:
    """An edit's ``structuredPatch`` as a diff in Pi's shape (a sign, the line's number,
    its text; ``...`` between hunks), so the page shows the file's own line numbers."""
    hunks = outcome.get("structuredPatch") if isinstance(outcome, dict) else None
    if not isinstance(hunks, list) or not hunks:
        return None
    numbers = [h.get(k) for h in hunks if isinstance(h, dict) for k in ("oldStart", "newStart")]
    if len(numbers) != 2 * len(hunks) or not all(token_count(n) for n in numbers):
        return None
    texts = [h.get("lines") for h in hunks]
    if not all(isinstance(t, list) and all(isinstance(x, str) for x in t) for t in texts):
        return None  # (`"lines": 5` crashed every command on the file)
    width = len(str(max(numbers) + max(len(t) for t in texts)))
    out: list[str] = []
    for hunk, lines in zip(hunks, texts, strict=True):
        old, new = hunk["oldStart"], hunk["newStart"]
        if out or old > 1:
            out.append(" " * (width + 1) + "...")
        for text in lines:
            sign, body = text[:1], text[1:]
            if sign == "-":
                out.append(f"-{old:>{width}} {body}")
                old += 1
            elif sign == "+":
                out.append(f"+{new:>{width}} {body}")
                new += 1
            elif sign != "\\":  # "\\ No newline at end of file" is about the line above
                out.append(f" {new:>{width}} {body}")
                old, new = old + 1, new + 1
    return "\n".join(out)


def _compaction_entry(line: _Line, boundary: _Line, summary: str) -> dict[str, Any]:
    meta = boundary.raw.get("compactMetadata")
    before = meta.get("preTokens") if isinstance(meta, dict) else None
    entry = _entry(line, "compaction", summary=summary) | {"id": boundary.uuid}
    if isinstance(before, int) and not isinstance(before, bool):
        entry["tokensBefore"] = before
    if isinstance(meta, dict) and isinstance(meta.get("trigger"), str):
        entry["details"] = {"trigger": meta["trigger"]}
    return entry  # no firstKeptEntryId: Claude Code keeps only the summary


def _command_entry(line: _Line) -> dict[str, Any]:
    content = line.raw.get("content")
    text = _command_text(content) if isinstance(content, str) else ""
    return _custom_message(line, "claude-code-command", text, True)


def _custom_message(line: _Line, kind: str, content: Any, display: bool) -> dict[str, Any]:
    return _entry(line, "custom_message", customType=kind, content=content, display=display)


def _command_text(text: str) -> str:
    """A slash command or its output without the tags Claude Code wraps them in."""
    tags = dict((m.group(1), m.group(2).strip()) for m in _COMMAND_TAG.finditer(text))
    if "command-name" in tags and not _COMMAND_TAG.sub("", text).strip():
        return " ".join(filter(None, (tags["command-name"], tags.get("command-args"))))
    outputs = _OUTPUT_TAG.findall(text)
    if outputs and not _OUTPUT_TAG.sub("", text).strip():
        return "\n".join(body.strip("\n") for _, body in outputs)
    return text


def _task_notification(content: Any) -> str | None:
    """The notice Claude Code writes as a user line when a background task ends
    (``<task-notification>`` with its fields as tags, then what to do with the output), as
    readable lines; None for anything the user typed."""
    text = content if isinstance(content, str) else None
    if isinstance(content, list) and content and all(_is_text(b) for b in content):
        text = _plain_text(content)
    found = _TASK_NOTIFICATION.match(text) if text is not None else None
    if found is None:
        return None
    fields = _FIELD_TAG.findall(found.group(1))
    summary = next((value.strip() for name, value in fields if name == "summary"), "")
    listed = "\n".join(f"- {name}: {value.strip()}" for name, value in fields if name != "summary")
    rest = _FIELD_TAG.sub("", found.group(1)).strip()
    parts = (summary, listed, rest, text[found.end() :].strip())
    return "\n\n".join(part for part in parts if part)


def _user_content(content: Any) -> Any:
    if isinstance(content, list):
        return [_content_block(block) for block in content]
    return content if isinstance(content, str) else ("" if content is None else content)


def _content_block(block: Any) -> Any:
    """An image as Pi writes it (``data``, ``mimeType``); one given by its address as that
    address in text, as Codex's importer says it (never loaded: a page fetching it would
    tell its server who reads the session); other blocks as they are."""
    if isinstance(block, dict) and block.get("type") == "image":
        source = block.get("source")
        if isinstance(source, dict) and source.get("type") == "base64":
            return {
                "type": "image",
                "data": source.get("data"),
                "mimeType": source.get("media_type"),
            }
        if isinstance(source, dict) and source.get("type") == "url":
            url = as_str(source.get("url")) or ""
            return {"type": "text", "text": f"[image: {url}]" if url else "[image]"}
    return block


def _is_text(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "text"


def _plain_text(content: Any) -> str:
    texts = [b.get("text") for b in content_blocks(content) if b.get("type") == "text"]
    return "\n\n".join(t for t in texts if isinstance(t, str))


def _same_answer(earlier: dict[str, Any], later: dict[str, Any]) -> bool:
    first, second = earlier.get("message") or {}, later.get("message") or {}
    message_id = first.get("id")
    if not isinstance(message_id, str) or message_id != second.get("id"):
        return False
    request = earlier.get("requestId"), later.get("requestId")
    return None in request or request[0] == request[1]


def _stamp(message: dict[str, Any], raw: dict[str, Any]) -> None:
    """Pi's messages carry their time in milliseconds too."""
    text = raw.get("timestamp")
    moment = parse_time(text) if isinstance(text, str) else None
    if moment is not None:
        message["timestamp"] = int(moment.timestamp() * 1000)
