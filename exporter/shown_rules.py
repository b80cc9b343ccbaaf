"""What the page shows of a message as itself, and which aborted turn's error message it
leaves unsaid. One set of rules for the renderer, the Markdown export and both searches
(`search`, a site's text search), kept apart from ``exporter.render`` so that `search` need
not import the renderer (about 0.1 s of a search)."""

from __future__ import annotations

from exporter.entries import MessageEntry

#: The message roles the page shows as themselves (any other: an unknown one, shown as its
#: JSON under "All").
SHOWN_ROLES = frozenset({"user", "assistant", "toolResult", "bashExecution", "custom"})
#: The content blocks each role's view shows as themselves; any other block is shown as its
#: JSON.
BLOCKS_SHOWN = {
    "user": frozenset({"text", "image"}),
    "toolResult": frozenset({"text", "image"}),
    "custom": frozenset({"text", "image"}),
    "assistant": frozenset({"text", "thinking", "toolCall", "image"}),
}
#: An aborted turn's error messages that say no more than Pi's own interrupt does.
INTERRUPT_MESSAGES = frozenset(
    ("", "aborted", "request was aborted", "the operation was aborted", "operation aborted")
)


def is_interrupt(said: str) -> bool:
    """An aborted turn's message that says no more than Pi's own interrupt does."""
    return said.strip().lower().rstrip(".") in INTERRUPT_MESSAGES


def interrupted(entry: MessageEntry) -> bool:
    """A turn the user stopped, its error message Pi's own interrupt: the page says
    "Aborted" only, and no search finds the message."""
    return entry.stop_reason == "aborted" and is_interrupt(entry.error_message or "")
