"""What one prompt caused: the replies, tool calls, cost and time of its turn.

A prompt's turn is what follows it on its line of the page, up to the next prompt: the
usage tables give a session's totals, this says which prompt spent them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container

from exporter.entries import UNNAMED_TOOL, MessageEntry
from exporter.formatting import clipped, fmt_cost, fmt_duration, plural
from exporter.session import Session
from exporter.usage import turn_usage

__all__ = ["turn_summary"]


def turn_summary(session: Session, prompt_id: str, line: Container[str]) -> str:
    """``Turn: 3 replies · 12 tool calls (7 bash, 3 edit, 2 read) · $0.482 · 1m 12s``; ""
    when nothing answered it.

    ``line``: the ids of the line the prompt is shown on (its turn goes on with the child
    on it; the other children are branches, with their own prompts)."""
    replies = commands = 0
    tools: Counter[str] = Counter()
    cost = 0.0
    last_entry = None
    node: str | None = prompt_id
    while node is not None:
        node = next((kid for kid in session.children.get(node, ()) if kid in line), None)
        entry = session.by_id.get(node) if node is not None else None
        if entry is None:
            break
        if isinstance(entry, MessageEntry):
            if entry.role == "user":
                break
            if entry.role == "assistant":
                replies += 1
                cost += turn_usage(entry).cost
                tools.update(_tool_name(call) for call in entry.tool_calls)
            elif entry.role == "bashExecution":
                commands += 1
            # its time runs to its last message: a label or a name set later (hours later,
            # maybe) is not part of the turn
            last_entry = entry
    if not replies and not commands:
        return ""
    parts = [plural(replies, "reply", "replies")]
    if tools:
        parts.append(f"{plural(tools.total(), 'tool call')} ({_by_tool(tools)})")
    if commands:
        parts.append(plural(commands, "shell command"))
    parts.append(fmt_cost(cost))
    # from the prompt to the turn's last message (two times parsed, not every entry's)
    start = session.by_id[prompt_id].moment
    last = last_entry.moment if last_entry is not None else None
    seconds = (last - start).total_seconds() if start is not None and last is not None else 0
    if seconds >= 1:  # (a generated session's turn takes milliseconds: no "under 1s")
        parts.append(fmt_duration(seconds))
    return "Turn: " + " · ".join(parts)


#: The tools a turn's summary names (the most used first); the others are counted together
NAMED_TOOLS = 3


def _tool_name(call: dict) -> str:
    name = call.get("name")
    if not isinstance(name, str) or not name.strip():
        return UNNAMED_TOOL
    name = " ".join(name.split())
    return clipped(name, 32)


def _by_tool(tools: Counter[str]) -> str:
    """``7 bash, 3 edit, 2 read, 3 other`` (peers say which tools a prompt set to work);
    a turn of one tool says just its name."""
    if len(tools) == 1:
        return next(iter(tools))
    ranked = sorted(tools.items(), key=lambda item: (-item[1], item[0]))
    said = [f"{count:,} {name}" for name, count in ranked[:NAMED_TOOLS]]
    if len(ranked) > NAMED_TOOLS:
        said.append(f"{sum(count for _, count in ranked[NAMED_TOOLS:]):,} other")
    return ", ".join(said)
