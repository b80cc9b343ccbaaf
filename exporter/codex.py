"""OpenAI Codex CLI transcripts ("rollouts", ``~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl``)
read as Pi sessions, in memory, so a Codex session gets the same page, statistics, search
and redaction as a Pi one.

A rollout is a log, not a tree: one line per model output item (reasoning, a message, a tool
call), per tool output and per event, in the order Codex wrote them, each line wrapped as
``{timestamp, type, payload}`` (files before September 2025: a bare header line, then bare
items). Several events repeat what an item says (``user_message``, ``agent_message``,
``agent_reasoning``); tokens come in ``token_count`` events, the model in ``turn_context``
lines, and what Codex itself tells the model (AGENTS.md, the environment, permissions) comes
as user or developer messages. This module turns the items into Pi v3 entries: one assistant
message per model request with its tool calls, each output right after it as a tool result
(shell output without Codex's header, its exit code as Pi's bash tool says it), injected
context as hidden messages, a compaction entry per ``compacted`` line, and a branch where
Codex rolled turns back. Events that only repeat an item, and bookkeeping, are counted in a
note; the file is never written, and the page's download is the file as read.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exporter import codex_prices
from exporter.entries import UNNAMED_TOOL, DamagedLine, as_dict, as_str, token_count
from exporter.formatting import plural
from exporter.jsonl_in import shorten
from exporter.session_parts import Diagnostic, parse_time, unshown_lines_note

#: How many parsed lines the format check looks at.
SNIFF_LINES = 20

#: The diagnostic that says a file is a Codex transcript read as a Pi session.
KIND = "codex"

_ENVELOPE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context"})
_ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "image_generation_call",
        "tool_search_call",
        "tool_search_output",
    }
)
_CALL_TYPES = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
    | {"image_generation_call", "tool_search_call"}
)
_OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})

#: Events that say again what an item says (the item is shown).
_MIRRORS = frozenset(
    {
        "user_message",
        "agent_message",
        "agent_reasoning",
        "agent_reasoning_raw_content",
        "context_compacted",
    }
)

#: How Codex's own messages to the model begin (AGENTS.md, the environment, skills, a
#: command the user ran with !, an interrupted turn's note, a resumed compaction's summary).
_CONTEXT_STARTS = (
    "# agents.md instructions for",
    "<user_instructions>",
    "<environment_context>",
    "<context_update>",
    "<skill>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<subagents>",
    "<plugins>",
    "another language model started to solve this problem",
    "<user_action>",
    "<user_ide_context>",
)

#: What Codex (its IDE and desktop clients) writes before the words the user typed, after
#: the context it adds (open files, the IDE's state): what follows it is the prompt.
_REQUEST_MARKER = re.compile(r"^## My request for Codex:[ \t]*\n?", re.MULTILINE | re.IGNORECASE)

#: Tools that ran on the model provider's servers: they end no request, and have no output
#: item (an image generation's result is in its own line).
_REMOTE_TOOLS = frozenset({"web_search", "image_generation"})

#: Shell tools, shown with Pi's bash view.
_SHELLS = frozenset({"shell", "container.exec", "shell_command", "exec_command"})
_SHELL_WRAPPERS = re.compile(r"(?:.*/)?(?:ba|z|da|k)?sh")

# The three ways Codex reports a command's outcome to the model (see the module doc).
_FREEFORM = re.compile(
    r"(?:command timed out after (?P<timeout>\d+) milliseconds\n)?"
    r"Exit code: (?P<code>-?\d+)\nWall time: [^\n]*\n(?:Total output lines: \d+\n)?Output:\n"
)
_UNIFIED = re.compile(
    r"(?:Command: [^\n]*\n)?Chunk ID: [^\n]*\nWall time: [^\n]*\n"
    r"(?:Process exited with code (?P<code>-?\d+)|Process running with session ID (?P<live>\d+))"
    r"\n(?:Original token count: \d+\n)?Output:\n"
)
_USER_SHELL = re.compile(
    r"<user_shell_command>\s*<command>(?P<command>.*?)</command>\s*<result>\n?"
    r"(?:Exit code: (?P<code>-?\d+)\n)?(?:Duration: [^\n]*\n)?(?:Output:\n)?(?P<output>.*?)"
    r"\n?</result>\s*</user_shell_command>\s*",
    re.DOTALL,
)
_DATA_URL = re.compile(r"data:(?P<mime>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)", re.DOTALL)


def is_codex(parsed: Iterable[tuple[int, Any]]) -> bool:
    """True when the first objects are Codex's: an enveloped line (``type`` one of Codex's
    line types, a ``payload`` object), or the old bare header (``id``, ``timestamp`` and no
    ``type``) followed by bare items (a ``message`` with ``role`` and no ``message`` object)
    or ``record_type`` lines. A Pi file (a ``session`` header) never is."""
    objects = 0
    legacy_header = False
    for _, value in parsed:
        if not isinstance(value, dict):
            continue
        objects += 1
        if objects > SNIFF_LINES:
            break
        kind = as_str(value.get("type"))
        if kind == "session":
            return False
        if kind in _ENVELOPE_TYPES and isinstance(value.get("payload"), dict):
            return True
        if objects == 1:
            legacy_header = (
                kind is None
                and isinstance(value.get("id"), str)
                and isinstance(value.get("timestamp"), str)
            )
            continue
        if legacy_header and (
            "record_type" in value
            or (kind in _ITEM_TYPES and "message" not in value and "payload" not in value)
        ):
            return True
    return False


@dataclass
class _Open:
    """An assistant message being read: the items of one model request."""

    number: int
    entry: dict[str, Any]
    results: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # outputs meanwhile
    after_output: bool = False  # an output came: the next model item is a new request

    @property
    def message(self) -> dict[str, Any]:
        return self.entry["message"]


class _Converter:
    def __init__(self, parsed: list[tuple[int, Any]], damaged: list[DamagedLine]) -> None:
        self.parsed = parsed
        self.damaged = damaged
        self.entries: list[tuple[int, dict[str, Any]]] = []
        self.leaf: str | None = None
        self.parent_of: dict[str, str | None] = {}  # entry id -> its parent, as placed
        self.placed: dict[str, dict[str, Any]] = {}  # entry id -> the entry
        self.meta: dict[str, Any] = {}
        self.legacy_time = ""
        self.model = ""
        self.effort: str | None = None
        self.provider = "openai"
        self.open: _Open | None = None
        self.calls: dict[str, str] = {}  # call_id -> Pi tool name
        self.server_calls: set[str] = set()  # call_ids of tools the provider's servers ran
        self.last_search = ""  # the last tool search's call_id (an output may name none)
        self.prompts: list[str] = []  # user entries on the current path (for a rollback)
        self.last_total: Any = None  # the previous token_count's total (repeats are skipped)
        self.unplaced: dict[str, int] = {}  # usage of a request whose message is not yet read
        self.counts: dict[int, dict[str, int]] = {}  # id(assistant message) -> Codex's counts
        self.waiting_usage: list[dict[str, Any]] = []  # assistant messages without usage
        self.last_tokens = 0  # the context size at the last request (a compaction's "before")
        self.request_start = False  # a turn_context came and no model item since
        self.counts_first = False  # this turn: each request has its turn_context, its count first
        self.skipped: Counter[str] = Counter()
        self.from_line: Counter[int] = Counter()  # entries made from each line
        self.repeats = 0
        self.rollbacks = 0
        self.name: tuple[int, str] | None = None
        self.others: list[tuple[int, Any]] = []
        self.problems: list[Diagnostic] = []
        self.unpriced: set[str] = set()

    # reading -----------------------------------------------------------------
    def convert(self) -> list[tuple[int, Any]]:
        layouts = _counts_first_by_line(self.parsed)
        for (number, value), counts_first in zip(self.parsed, layouts, strict=True):
            self.counts_first = counts_first  # a resumed file can change layout mid-way
            if not isinstance(value, dict):
                self.others.append((number, value))
                continue
            self._line(number, value)
        self._close()
        if self.unplaced and (last := self._last_assistant()) is not None:
            leftover, self.unplaced = self.unplaced, {}
            self.waiting_usage = [last]
            self._give_usage(leftover)  # a request counted after the last message read
        entries = self._named(self.entries)
        return [(0, self.header()), *entries, *self.others]

    def _line(self, number: int, value: dict[str, Any]) -> None:
        kind = as_str(value.get("type"))
        payload = value.get("payload")
        if kind in _ENVELOPE_TYPES or kind == "compacted":
            if not isinstance(payload, dict):
                self._damaged(number, value, f"a Codex {kind} line without its payload object")
                return
            when = as_str(value.get("timestamp")) or self.legacy_time
            handler = getattr(self, f"_{kind}")
            handler(number, payload, when)
            return
        if not self.meta and not self.entries and "type" not in value and "id" in value:
            self._session_meta(number, value, as_str(value.get("timestamp")) or "")
            self.legacy_time = as_str(value.get("timestamp")) or ""
            return
        if "record_type" in value:
            self.skipped[f"record_type {_label(value.get('record_type'))}"] += 1
            return
        if kind in _ITEM_TYPES:  # a bare item (files before September 2025)
            self._response_item(number, value, self.legacy_time)
            return
        label = f"{_label(kind)} line" if kind is not None else "line without a string type"
        self.skipped[label] += 1

    def _damaged(self, number: int, value: Any, what: str) -> None:
        self.damaged.append(DamagedLine(number, "not-an-entry", what, json.dumps(value)))
        self.problems.append(Diagnostic(number, "not-an-entry", what))

    def _session_meta(self, number: int, payload: dict[str, Any], when: str) -> None:
        if self.meta:  # a fork copies its parent's header among the parent's lines
            self.skipped["session_meta (a parent's, copied)"] += 1
            return
        self.meta = payload
        provider = as_str(payload.get("model_provider"))
        if provider:
            self.provider = provider

    def _turn_context(self, number: int, payload: dict[str, Any], when: str) -> None:
        """A turn's settings (in late-2025 builds, each request's): a request boundary,
        and a marker where the model or the reasoning effort changes."""
        self._close()
        self.request_start = True
        model = as_str(payload.get("model")) or ""
        mode = as_dict(as_dict(payload.get("collaboration_mode")).get("settings"))
        effort = as_str(payload.get("effort")) or as_str(mode.get("reasoning_effort"))
        changed = False
        if model and model != self.model:
            self.model, changed = model, True
            self._add(number, when, "model_change", provider=self.provider, modelId=model)
        if effort and effort != self.effort:
            self.effort, changed = effort, True
            self._add(number, when, "thinking_level_change", thinkingLevel=effort)
        if not changed:
            self.skipped["turn_context"] += 1

    def _compacted(self, number: int, payload: dict[str, Any], when: str) -> None:
        self._close()
        summary = as_str(payload.get("message")) or ""
        fields: dict[str, Any] = {"summary": summary}
        if not summary.strip():
            fields["summary"] = (
                "*(OpenAI compacted the context on its servers: the summary is encrypted, "
                "so it cannot be shown)*"
            )
        if self.last_tokens:
            fields["tokensBefore"] = self.last_tokens
        kept = payload.get("replacement_history")
        if isinstance(kept, list):
            prompts = sum(
                isinstance(item, dict) and item.get("role") == "user" and not _is_context(item)
                for item in kept
            )
            fields["details"] = {"promptsKept": prompts}
        self._add(number, when, "compaction", **fields)

    # items --------------------------------------------------------------------
    def _response_item(self, number: int, item: dict[str, Any], when: str) -> None:
        kind = as_str(item.get("type"))
        if kind == "message":
            role = as_str(item.get("role"))
            if role == "assistant":
                self._assistant_blocks(number, when, _blocks(item.get("content")))
            else:
                self._close()
                self._user_message(number, item, when, role)
        elif kind == "reasoning":
            block = _thinking(item)
            if block is not None:
                self._assistant_blocks(number, when, [block])
            else:
                self.skipped["reasoning (encrypted)"] += 1
        elif kind in _CALL_TYPES:
            call = self._tool_call(number, item)
            self._assistant_blocks(number, when, [call])
            if kind == "image_generation_call":
                self._generated_image(number, when, call["id"], item.get("result"))
        elif kind in _OUTPUT_TYPES:
            self._tool_output(number, item, when)
        else:
            self.skipped[f"response_item {_label(kind)}"] += 1

    def _assistant_blocks(
        self, number: int, when: str, blocks: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """Add blocks to the open assistant message (a new one after a tool output: the
        model has seen it, so this is its next request); returns that message."""
        self.request_start = False
        if self.open is not None and self.open.after_output and not self.counts_first:
            self._close()
        if self.open is None:
            message: dict[str, Any] = {
                "role": "assistant",
                "content": [],
                "api": "openai-responses",
                "provider": self.provider,
                "model": self.model,
                "usage": _usage({}),
                "stopReason": "stop",
            }
            _stamp(message, when)
            entry = self._entry(number, when, "message", message=message)
            self.open = _Open(number, entry)
            self.waiting_usage.append(message)
            if self.unplaced:
                self._give_usage(dict(self.unplaced))
                self.unplaced = {}
        self.open.message["content"].extend(blocks)
        return self.open.message

    def _tool_call(self, number: int, item: dict[str, Any]) -> dict[str, Any]:
        kind = as_str(item.get("type"))
        call_id = as_str(item.get("call_id")) or as_str(item.get("id")) or f"call-L{number}"
        if kind == "custom_tool_call":
            name = as_str(item.get("name")) or UNNAMED_TOOL
            arguments: Any = {"input": item.get("input")}
        elif kind == "local_shell_call":
            name, arguments = "local_shell", as_dict(item.get("action"))
        elif kind == "web_search_call":
            name, arguments = "web_search", as_dict(item.get("action"))
        elif kind == "image_generation_call":
            name = "image_generation"
            arguments = {"prompt": item.get("revised_prompt")} if "revised_prompt" in item else {}
        elif kind == "tool_search_call":  # the model looking for tools (MCP's, connectors')
            name, arguments = "tool_search", _json_arguments(item.get("arguments"))
            self.last_search = call_id
            if item.get("execution") == "server":
                self.server_calls.add(call_id)
        else:
            name = as_str(item.get("name")) or UNNAMED_TOOL
            arguments = _json_arguments(item.get("arguments"))
        name, arguments = _pi_tool(name, arguments)
        self.calls[call_id] = name
        return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}

    def _tool_output(self, number: int, item: dict[str, Any], when: str) -> None:
        call_id = as_str(item.get("call_id")) or ""
        output = item.get("output")
        if item.get("type") == "tool_search_output":  # the tools found, as JSON
            call_id = call_id or self.last_search
            output = json.dumps(item.get("tools", output), ensure_ascii=False, indent=2)
        name = self.calls.get(call_id, "")
        message = _tool_result(output, call_id, name)
        _stamp(message, when)
        entry = self._entry(number, when, "message", message=message)
        if self.open is not None:
            self.open.results.append((number, entry))
            self.open.after_output = self.open.after_output or _ends_request(item)
        else:
            self._place(number, entry)

    def _user_message(self, number: int, item: dict[str, Any], when: str, role: Any) -> None:
        blocks = _blocks(item.get("content"))
        if role != "user":  # the harness's instructions (developer, system)
            kind = f"codex-{role}" if role in ("developer", "system") else "codex-context"
            self._hidden(number, when, kind, blocks)
            return
        blocks = [part for block in _without_image_tags(blocks) for part in _split_request(block)]
        typed = [b for b in blocks if not _is_context_block(b)]
        context = [b for b in blocks if _is_context_block(b)]
        if context:
            shell = _user_shell(context) if not typed else None
            if shell is not None:
                _stamp(shell, when)
                self._add(number, when, "message", message=shell)
            else:
                self._hidden(number, when, "codex-context", context)
        if typed or not context:  # (an empty prompt is shown empty, not lost)
            message = {"role": "user", "content": typed}
            _stamp(message, when)
            entry_id = self._add(number, when, "message", message=message)
            self.prompts.append(entry_id)

    def _generated_image(self, number: int, when: str, call_id: str, result: Any) -> None:
        """An image the provider generated is in the call's own line: its result entry."""
        data = as_str(result)
        if not data:
            return
        message = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "image_generation",
            "content": [{"type": "image", "data": data, "mimeType": "image/png"}],
            "isError": False,
        }
        _stamp(message, when)
        if self.open is not None:
            entry = self._entry(number, when, "message", message=message)
            self.open.results.append((number, entry))

    def _hidden(self, number: int, when: str, kind: str, blocks: list[dict[str, Any]]) -> None:
        blocks = [{k: v for k, v in b.items() if k != "codexContext"} for b in blocks]
        content: Any = blocks
        if all(b.get("type") == "text" for b in blocks):
            content = "\n\n".join(b.get("text") or "" for b in blocks)
        self._add(number, when, "custom_message", customType=kind, content=content, display=False)

    # events -------------------------------------------------------------------
    def _event_msg(self, number: int, payload: dict[str, Any], when: str) -> None:
        kind = as_str(payload.get("type"))
        if kind in _MIRRORS:
            self.repeats += 1
        elif kind == "token_count":
            self._token_count(payload)
        elif kind == "turn_aborted":
            reason = as_str(payload.get("reason")) or "interrupted"
            self._stop(number, when, "aborted", f"Turn aborted ({reason})")
        elif kind in ("error", "stream_error"):
            text = as_str(payload.get("message")) or "error"
            self._stop(number, when, "error", text)
        elif kind == "thread_rolled_back":
            self._rollback(payload.get("num_turns"))
        elif kind == "thread_name_updated":
            name = as_str(payload.get("thread_name")) or as_str(payload.get("name"))
            if name:
                self.name = (number, name)
            self.skipped["event_msg thread_name_updated"] += 1
        else:
            self.skipped[f"event_msg {_label(kind)}"] += 1

    def _token_count(self, payload: dict[str, Any]) -> None:
        info = payload.get("info")
        if not isinstance(info, dict):
            self.skipped["event_msg token_count (rate limits only)"] += 1
            return
        total = info.get("total_token_usage")
        if total is not None and total == self.last_total:
            self.skipped["event_msg token_count (repeated)"] += 1
            return
        previous, self.last_total = self.last_total, total
        last = info.get("last_token_usage")
        if not isinstance(last, dict) and isinstance(total, dict):  # the difference, then
            before = as_dict(previous)
            last = {k: token_count(total.get(k)) - token_count(before.get(k)) for k in total}
        if not isinstance(last, dict):
            return
        counts = {
            key: token_count(last.get(key))
            for key in ("input_tokens", "cached_input_tokens", "output_tokens", "total_tokens")
        }
        self.last_tokens = counts["total_tokens"] or counts["input_tokens"]
        if self.counts_first and self.request_start and self.open is None:
            # written before the request's items (builds of late 2025 count a request when
            # it completes, then record its items with each call's output after it): the
            # message read next is the request's
            for key, value in counts.items():
                self.unplaced[key] = self.unplaced.get(key, 0) + value
            return
        self._give_usage(counts)

    def _give_usage(self, counts: dict[str, int]) -> None:
        """A request's tokens go to the newest assistant message still without any (the
        request that made it; an older one without any made no request Codex counted), else
        to the last one (a request whose items were all encrypted), or to the next one when
        none is read yet. Every token counts once: the totals are Codex's."""
        if self.waiting_usage:
            target = self.waiting_usage[-1]
            self.waiting_usage.clear()
        elif (last := self._last_assistant()) is not None:
            target = last
        else:
            for key, value in counts.items():
                self.unplaced[key] = self.unplaced.get(key, 0) + value
            return
        raw = self.counts.setdefault(id(target), {})
        for key, value in counts.items():
            raw[key] = raw.get(key, 0) + value
        target["usage"] = _usage(raw)
        model = as_str(target.get("model")) or ""
        priced = codex_prices.cost(model, target["usage"])
        if priced is not None:
            target["usage"]["cost"] = priced
        elif model and any(raw.values()):
            self.unpriced.add(model)

    def _last_assistant(self) -> dict[str, Any] | None:
        """The open message, else the nearest assistant message up the current branch
        (after a rollback, not the dropped turns' last one)."""
        if self.open is not None:
            return self.open.message
        entry_id = self.leaf
        while entry_id is not None:
            message = self.placed[entry_id].get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                return message
            entry_id = self.parent_of.get(entry_id)
        return None

    def _stop(self, number: int, when: str, reason: str, text: str) -> None:
        """An interrupted or failed turn: its last answer says so, or an empty one does
        when the turn had none since its prompt."""
        if self.open is not None and self.open.after_output:
            self._close()  # the request whose outputs came had ended: the next one stopped
        message = self.open.message if self.open is not None else None
        if message is None and self.leaf is not None:
            last = self.placed[self.leaf].get("message")
            if isinstance(last, dict) and last.get("role") == "assistant":
                message = last
        if message is None:
            message = self._assistant_blocks(number, when, [])
        message["stopReason"] = reason
        message["errorMessage"] = text
        self._close()

    def _rollback(self, turns: Any) -> None:
        """Codex dropped the last turns from the model's context (they stay in the file):
        what comes next branches off before them, as Pi's /tree makes a branch."""
        self._close()
        if not isinstance(turns, int) or isinstance(turns, bool) or turns < 1:
            return
        if turns > len(self.prompts):
            turns = len(self.prompts)
        if not turns:
            return
        first = self.prompts[-turns]
        del self.prompts[-turns:]
        self.leaf = self.parent_of.get(first)
        self.rollbacks += 1

    # writing ------------------------------------------------------------------
    def _entry(self, number: int, when: str, kind: str, **fields: Any) -> dict[str, Any]:
        """An entry of file line ``number``: its id is ``L<number>`` (``L<number>.2`` for a
        second entry of the same line), so a link names the line it shows."""
        self.from_line[number] += 1
        count = self.from_line[number]
        entry_id = f"L{number}" if count == 1 else f"L{number}.{count}"
        return {"type": kind, "id": entry_id, "parentId": None, "timestamp": when, **fields}

    def _add(self, number: int, when: str, kind: str, **fields: Any) -> str:
        entry = self._entry(number, when, kind, **fields)
        self._place(number, entry)
        return entry["id"]

    def _place(self, number: int, entry: dict[str, Any]) -> None:
        entry["parentId"] = self.leaf
        self.parent_of[entry["id"]] = self.leaf
        self.placed[entry["id"]] = entry
        self.entries.append((number, entry))
        self.leaf = entry["id"]

    def _close(self) -> None:
        """The open assistant message goes into the tree, then the outputs that came while
        it was read, in the order of its calls."""
        if self.open is None:
            return
        opened, self.open = self.open, None
        message = opened.message
        calls = any(
            b.get("type") == "toolCall"
            and b.get("name") not in _REMOTE_TOOLS
            and b.get("id") not in self.server_calls
            for b in message["content"]
        )
        if calls and message["stopReason"] == "stop":
            message["stopReason"] = "toolUse"
        self._place(opened.number, opened.entry)
        order = {
            b.get("id"): i for i, b in enumerate(message["content"]) if b.get("type") == "toolCall"
        }
        calls = len(order)
        results = sorted(
            opened.results, key=lambda r: order.get(r[1]["message"].get("toolCallId"), calls)
        )
        for number, result in results:
            self._place(number, result)

    def _named(self, entries: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
        """Codex's thread name as Pi keeps a /name: a ``session_info`` entry at the leaf."""
        if self.name is None or not entries:
            return entries
        number, name = self.name
        info = self._entry(number, entries[-1][1]["timestamp"], "session_info", name=name)
        info["parentId"] = self.leaf
        return [*entries, (number, info)]

    def header(self) -> dict[str, Any]:
        meta = self.meta
        header: dict[str, Any] = {
            "type": "session",
            "version": 3,
            "id": as_str(meta.get("id")) or "",
            "timestamp": as_str(meta.get("timestamp")) or self.legacy_time,
            "cwd": as_str(meta.get("cwd")) or "",
        }
        parent = as_str(meta.get("forked_from_id")) or _spawned_by(meta.get("source"))
        if parent:
            header["parentSession"] = parent
        version = as_str(meta.get("cli_version"))
        header["source"] = "Codex" + (f" {version}" if version else "")
        originator = as_str(meta.get("originator"))
        if originator:
            header["originator"] = originator
        branch = as_str(as_dict(meta.get("git")).get("branch"))
        if branch:
            header["gitBranch"] = branch
        header["cost"] = self._cost_note()
        return header

    def _cost_note(self) -> str:
        note = "computed from the models' list prices (Codex records tokens, not cost)"
        if self.unpriced:
            note += f"; no price known for {', '.join(sorted(self.unpriced))}: counted as $0"
        return note

    def notes(self) -> list[Diagnostic]:
        notes = []
        if self.skipped:
            notes.append(unshown_lines_note("codex-bookkeeping", "Codex", self.skipped))
        if self.repeats:
            notes.append(
                Diagnostic(
                    0,
                    "codex-repeats",
                    f"{plural(self.repeats, 'Codex event')} repeating a message or reasoning "
                    "shown from its own line",
                    "info",
                )
            )
        if self.rollbacks:
            notes.append(
                Diagnostic(
                    0,
                    "codex-rollback",
                    f"Codex rolled turns back {plural(self.rollbacks, 'time')}: what followed "
                    "is a branch beside the turns it dropped",
                    "info",
                )
            )
        return notes


_UUID_AT_END = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:_[^.]*)?\.jsonl$", re.I
)


def id_from_path(path: str | None) -> str:
    """A header-less rollout's id: the uuid its name ends with
    (``rollout-2025-12-28T12-18-30-<uuid>.jsonl``), else the name."""
    name = Path(path).name if path else ""
    match = _UUID_AT_END.search(name)
    if match:
        return match.group(1)
    return name.rsplit(".", 1)[0] or "unknown"


def session_cwd(path: Path) -> str | None:
    """The project folder a rollout's first line names (its ``session_meta``, or the old
    bare header), without reading the rest: how a project's Codex sessions are found."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(_FIRST_LINE_LIMIT)
        value = json.loads(first)
    except (OSError, ValueError):
        return None
    if not isinstance(value, dict):
        return None
    meta = value.get("payload") if as_str(value.get("type")) == "session_meta" else value
    return as_str(as_dict(meta).get("cwd"))


#: A first line longer than this (its instructions are ~20 KB) is not read for its folder.
_FIRST_LINE_LIMIT = 4 * 1024 * 1024


def convert(
    parsed: list[tuple[int, Any]],
    diagnostics: list[Diagnostic],
    damaged: list[DamagedLine],
    path: str | None = None,
) -> list[tuple[int, Any]]:
    """Codex lines -> a Pi header at line 0, then Pi v3 entries in file order (the leaf
    last, or the thread name's ``session_info`` after it), then the lines that are not
    objects (for the loader to report)."""
    converter = _Converter(parsed, damaged)
    converted = converter.convert()
    diagnostics.append(Diagnostic(0, KIND, "a Codex transcript, read as a Pi session", "info"))
    diagnostics.extend(converter.problems)
    diagnostics.extend(converter.notes())
    return converted


# one item each -------------------------------------------------------------------
def _is_context(item: dict[str, Any]) -> bool:
    blocks = _blocks(item.get("content"))
    return bool(blocks) and all(_is_context_block(b) for b in blocks)


def _is_context_block(block: dict[str, Any]) -> bool:
    if block.get("codexContext") is True:
        return True
    text = block.get("text")
    return (
        block.get("type") == "text"
        and isinstance(text, str)
        and text.lstrip().lower().startswith(_CONTEXT_STARTS)
    )


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for item in content if isinstance(content, list) else ():
        block = _content_block(item)
        if block is not None:
            blocks.append(block)
    return blocks


def _content_block(item: Any) -> dict[str, Any] | None:
    """A Responses API content item as Pi's block: text, or an image from its data URL
    (an image given by address is named, never loaded)."""
    if not isinstance(item, dict):
        return {"type": "text", "text": json.dumps(item, ensure_ascii=False)}
    kind = as_str(item.get("type"))
    if kind in ("input_text", "output_text", "text", "summary_text", "reasoning_text"):
        return {"type": "text", "text": as_str(item.get("text")) or ""}
    if kind == "input_image":
        url = as_str(item.get("image_url")) or ""
        match = _DATA_URL.match(url)
        if match:
            return {"type": "image", "data": match["data"], "mimeType": match["mime"]}
        return {"type": "text", "text": f"[image: {url}]" if url else "[image]"}
    if kind == "input_file" and (document := _document_block(item)) is not None:
        return document
    if kind == "refusal":
        return {"type": "text", "text": as_str(item.get("refusal")) or ""}
    if kind == "image" and as_str(item.get("data")) and as_str(item.get("mimeType")):
        return {"type": "image", "data": item["data"], "mimeType": item["mimeType"]}  # MCP's
    return {"type": "text", "text": json.dumps(item, ensure_ascii=False)}


def _document_block(item: dict[str, Any]) -> dict[str, Any] | None:
    """A file attached to a prompt (``input_file``: a PDF as a data URL, its ``filename``)
    as the Anthropic API's document block, the shape Claude Code's are in: the page and the
    Markdown say it by its name and size, and the redactor leaves a PDF out, where its
    JSON as text put its base64 on the page and past the redactor. None for a file given
    otherwise (by id or address: its JSON as text, as before)."""
    match = _DATA_URL.match(as_str(item.get("file_data")) or "")
    if match is None:
        return None
    source = {"type": "base64", "media_type": match["mime"], "data": match["data"]}
    document: dict[str, Any] = {"type": "document", "source": source}
    if name := as_str(item.get("filename")):
        document["title"] = name
    return document


def _thinking(item: dict[str, Any]) -> dict[str, Any] | None:
    """Reasoning as a thinking block: its summary, and its text where Codex kept it (an
    encrypted part alone is none)."""
    parts = []
    for key in ("summary", "content"):
        for part in item.get(key) or () if isinstance(item.get(key), list) else ():
            text = as_str(part.get("text")) if isinstance(part, dict) else None
            if text:
                parts.append(text)
    if not parts:
        return None
    return {"type": "thinking", "thinking": "\n\n".join(parts)}


def _json_arguments(raw: Any) -> Any:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {"arguments": raw}  # as the model sent it
        return value if isinstance(value, dict) else {"arguments": value}
    return {"arguments": raw}


def _pi_tool(name: str, arguments: Any) -> tuple[str, Any]:
    """Codex's shell tools as Pi's bash (the command as one line of shell, the timeout in
    seconds), a patch as ``apply_patch`` with its text in ``input``; others as they are."""
    if not isinstance(arguments, dict):
        return name, arguments
    if name == "apply_patch":
        if isinstance(arguments.get("input"), str):
            return name, arguments
        if isinstance(arguments.get("patch"), str):
            rest = {k: v for k, v in arguments.items() if k != "patch"}
            return name, {"input": arguments["patch"], **rest}
        return name, arguments
    if name not in _SHELLS and name != "local_shell":
        return name, arguments
    rest = dict(arguments)
    key = "cmd" if name == "exec_command" else "command"
    command = rest.pop(key, None)
    if name == "local_shell":
        rest.pop("type", None)
    if isinstance(command, list) and all(isinstance(p, str) for p in command):
        if len(command) == 2 and command[0] == "apply_patch":
            return "apply_patch", {"input": command[1], **rest}
        if (
            len(command) == 3
            and _SHELL_WRAPPERS.fullmatch(command[0])
            and command[1] in ("-lc", "-c")
        ):
            command = command[2]
        else:
            command = shlex.join(command)
    if not isinstance(command, str):
        return name, arguments
    timeout = rest.pop("timeout_ms", rest.pop("timeout", None))
    pi_args: dict[str, Any] = {"command": command}
    if isinstance(timeout, int | float) and not isinstance(timeout, bool):
        pi_args["timeout"] = timeout / 1000
    elif timeout is not None:
        pi_args["timeout_ms"] = timeout
    return "bash", {**pi_args, **rest}


def _tool_result(output: Any, call_id: str, name: str) -> dict[str, Any]:
    """A tool output as Pi's tool result. A shell's output loses Codex's header (exit code,
    wall time): a failure ends with "Command exited with code N", as Pi's bash says it."""
    message: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [],
        "isError": False,
    }
    if isinstance(output, dict):  # {"content": ..., "success": ...}, as the API takes it
        if output.get("success") is False:
            message["isError"] = True
        output = output.get("content", json.dumps(output, ensure_ascii=False))
    if isinstance(output, str) and (blocks := _mcp_blocks(output)) is not None:
        output = blocks
    if isinstance(output, list):
        message["content"] = [b for b in map(_content_block, output) if b is not None]
        return message
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    code: int | None = None
    wrapped = _wrapped_output(text)
    if wrapped is not None:
        text, code = wrapped
    if name in ("bash", "write_stdin", "apply_patch"):
        text, shell_code = _shell_output(text)
        code = shell_code if shell_code is not None else code
        if name == "bash" and code not in (None, 0):
            text = f"{text.rstrip(chr(10))}\n\nCommand exited with code {code}".lstrip("\n")
    refused = name == "apply_patch" and text.lstrip().lower().startswith(_PATCH_REFUSALS)
    if code not in (None, 0) or (code is None and refused):
        message["isError"] = True
    message["content"] = [{"type": "text", "text": text}]
    return message


#: How apply_patch's refusals begin when Codex reports them as plain text (no exit code).
_PATCH_REFUSALS = ("apply_patch verification failed", "failed to apply patch", "invalid patch")


def _split_request(block: dict[str, Any]) -> list[dict[str, Any]]:
    """A text with Codex's "## My request for Codex:" marker: what comes before it (the
    IDE's context), hidden as context, and the words after it, the prompt."""
    text = block.get("text")
    if block.get("type") != "text" or not isinstance(text, str):
        return [block]
    marker = _REQUEST_MARKER.search(text)
    if marker is None:
        return [block]
    before, after = text[: marker.start()].rstrip(), text[marker.end() :]
    parts = [{"type": "text", "text": after}]
    if before:
        parts.insert(0, {"type": "text", "text": before, "codexContext": True})
    return parts


def _image_tag(block: dict[str, Any]) -> bool:
    """Codex's text around an attached image: ``<image name=[Image #1]>`` (or ``<image>``)
    before it, ``</image>`` after it."""
    text = block.get("text") if block.get("type") == "text" else None
    if not isinstance(text, str):
        return False
    text = text.strip()
    return text in ("<image>", "</image>") or (text.startswith("<image name=") and text[-1] == ">")


def _without_image_tags(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks without the tags that wrap each image (only right beside one)."""
    kept = []
    for at, block in enumerate(blocks):
        beside = [blocks[i] for i in (at - 1, at + 1) if 0 <= i < len(blocks)]
        if _image_tag(block) and any(b.get("type") == "image" for b in beside):
            continue
        kept.append(block)
    return kept


def _mcp_blocks(text: str) -> list[dict[str, Any]] | None:
    """An MCP tool's result as Codex saves it: its content blocks as a JSON string
    (``[{"type":"text","text":…}]``); None when the text is anything else."""
    if not text.startswith('[{"type":'):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, list) or not all(
        isinstance(b, dict) and b.get("type") in ("text", "image") for b in value
    ):
        return None
    return [block for b in value if (block := _content_block(b)) is not None]


def _wrapped_output(text: str) -> tuple[str, int | None] | None:
    """``{"output": ..., "metadata": {"exit_code": N}}``, the shell's and apply_patch's
    answer in 2025: its text and exit code."""
    if not text.startswith('{"output"'):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("output"), str):
        return None
    code = as_dict(value.get("metadata")).get("exit_code")
    ok = isinstance(code, int) and not isinstance(code, bool)
    return value["output"], code if ok else None


def _shell_output(text: str) -> tuple[str, int | None]:
    match = _FREEFORM.match(text)
    if match:
        body = text[match.end() :]
        if match["timeout"]:
            body = f"command timed out after {match['timeout']} ms\n{body}"
        return body, int(match["code"])
    match = _UNIFIED.match(text)
    if match:
        body = text[match.end() :]
        if match["live"]:
            note = f"(the command was still running: session {match['live']})"
            return f"{body.rstrip(chr(10))}\n\n{note}", None
        return body, int(match["code"])
    return text, None


def _user_shell(blocks: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A command the user ran with ``!`` (Codex tells the model in a tagged message) as
    Pi's ``bashExecution`` message."""
    if len(blocks) != 1:
        return None
    match = _USER_SHELL.fullmatch(blocks[0].get("text") or "")
    if match is None:
        return None
    code = int(match["code"]) if match["code"] else None
    return {
        "role": "bashExecution",
        "command": match["command"].strip(),
        "output": match["output"],
        "exitCode": code,
        "cancelled": False,
        "truncated": False,
    }


def _counts_first_by_line(parsed: list[tuple[int, Any]]) -> list[bool]:
    """For each parsed line, whether a build that wrote a ``turn_context`` before every
    model request wrote it (late 2025): those builds counted a request's tokens before its
    items, each call followed by its output, so there a request ends at the next
    ``turn_context``, not at an output. ``codex resume`` under a newer build appends to the
    same file, so each turn (a user message starts one) is judged by its first sign; a turn
    that shows neither layout takes the one before it (the first turns, the first shown)."""
    turn_of_line: list[int] = []
    votes: list[bool | None] = [None]  # each turn's layout, where its lines show it
    last = ""  # the last item or turn_context: "context", "model", "output" or "user"
    after_output = False  # the last item was an output the model reads next request
    context_after_output = False  # a turn_context came after such an output
    last_total: Any = None
    for _, value in parsed:
        payload = value.get("payload") if isinstance(value, dict) else None
        if not isinstance(payload, dict):
            turn_of_line.append(len(votes) - 1)
            continue
        kind, item = as_str(value.get("type")), as_str(payload.get("type"))
        is_item = kind == "response_item"
        is_prompt = is_item and item == "message" and payload.get("role") != "assistant"
        if is_prompt:
            votes.append(None)
            last, after_output, context_after_output = "user", False, False
        turn = len(votes) - 1
        turn_of_line.append(turn)
        if kind == "turn_context":
            context_after_output = context_after_output or after_output
            last = "context"
        elif is_item and item in _OUTPUT_TYPES:
            after_output, last = _ends_request(payload), "output"
        elif is_item and item in _ITEM_TYPES and not is_prompt:
            if context_after_output and votes[turn] is None:  # went on after a turn_context
                votes[turn] = True
            after_output, context_after_output, last = False, False, "model"
        elif kind == "event_msg" and item == "token_count":
            info = payload.get("info")
            total = info.get("total_token_usage") if isinstance(info, dict) else None
            if not isinstance(info, dict) or (total is not None and total == last_total):
                continue  # no count, or a repeated one: it shows no layout
            last_total = total
            if votes[turn] is not None:  # its first sign: a /compact or a review after an
                continue  # older build's answer writes a turn_context and a count of its own
            if last == "context":  # counted before the request's items
                votes[turn] = True
            elif last in ("model", "output"):  # counted after them
                votes[turn] = False
    shown = [vote for vote in votes if vote is not None]
    layout = shown[0] if shown else False
    by_turn = []
    for vote in votes:
        layout = layout if vote is None else vote
        by_turn.append(layout)
    return [by_turn[turn] for turn in turn_of_line]


def _ends_request(item: dict[str, Any]) -> bool:
    """A tool output the model reads in its next request: one of a tool Codex ran (a tool
    search the provider's servers ran comes in the same answer as its call)."""
    kind = as_str(item.get("type"))
    server = kind == "tool_search_output" and item.get("execution") == "server"
    return kind in _OUTPUT_TYPES and not server


def _label(kind: Any) -> str:
    """A line or item type as a note names it (any JSON value; long ones shortened)."""
    return shorten(kind if isinstance(kind, str) else json.dumps(kind, ensure_ascii=False), 40)


def _spawned_by(source: Any) -> str | None:
    spawn = as_dict(as_dict(as_dict(source).get("subagent")).get("thread_spawn"))
    return as_str(spawn.get("parent_thread_id"))


def _usage(counts: dict[str, int]) -> dict[str, Any]:
    """Pi's usage from Codex's counts: OpenAI's input includes the cached part (Pi's input
    does not) and its output includes the reasoning."""
    cached = counts.get("cached_input_tokens", 0)
    usage = {
        "input": max(counts.get("input_tokens", 0) - cached, 0),
        "output": counts.get("output_tokens", 0),
        "cacheRead": cached,
        "cacheWrite": 0,
    }
    total = counts.get("total_tokens", 0)
    usage["totalTokens"] = total or sum(usage.values())
    return usage


def _stamp(message: dict[str, Any], when: str) -> None:
    moment = _ms(when)
    if moment is not None:
        message["timestamp"] = moment


def _ms(when: str) -> int | None:
    moment = parse_time(when) if when else None
    return int(moment.timestamp() * 1000) if moment is not None else None
