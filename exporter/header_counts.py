"""The header's "Entries" and "Tree" lines, said the same way by the page, the Markdown
document and `stats`: the three had drifted apart (one listed forks, another "0 labels",
another left custom messages out) and the entries' count did not add up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from exporter.formatting import one_line, plural, role_label
from exporter.usage import SessionStats

if TYPE_CHECKING:
    from exporter.session import Session

__all__ = ["entries_line", "entries_said", "labels_said", "tree_said"]

#: Entry types that are no message, as the "Entries" line names them.
ENTRY_KIND_LABELS = {
    "compaction": "compactions",
    "branch_summary": "branch summaries",
    "custom_message": "custom messages",
    "custom": "extension state",
    "label": "labels",
    "model_change": "model changes",
    "thinking_level_change": "thinking-level changes",
    "session_info": "session names",
}

#: Kinds of other entries named (most frequent first); the rest are "…".
OTHER_KINDS_NAMED = 3


def entries_said(stats: SessionStats, say: Callable[[str], str] = str) -> str:
    """``8 tool results, 4 assistant, 3 user, 1 shell command, 9 other (model changes, …)``:
    the messages by role, then the other entries, so that the parts add up to the total.
    ``say`` escapes a name for the document it goes into (an unknown type is the file's)."""
    parts = [f"{n:,} {say(role_label(role, n))}" for role, n in stats.roles.most_common()]
    others = stats.other_entries
    if others:
        kinds = [kind for kind, _ in others.most_common()]
        names = [say(ENTRY_KIND_LABELS.get(kind) or one_line(kind, 40)) for kind in kinds]
        named = ", ".join(names[:OTHER_KINDS_NAMED])
        more = ", …" if len(names) > OTHER_KINDS_NAMED else ""
        parts.append(f"{sum(others.values()):,} other ({named}{more})")
    return ", ".join(parts)


def entries_line(
    stats: SessionStats, total: int, sep: str = " · ", say: Callable[[str], str] = str
) -> str:
    """``25 · 8 tool results, …``: the total, then :func:`entries_said` (none: the total)."""
    said = entries_said(stats, say)
    return f"{total:,}{sep}{said}" if said else f"{total:,}"


def labels_said(session: Session) -> str:
    """``3 labels``: every label the file holds, as ``stats --json`` and the lists of
    labels have them, those on an id no entry of the file has said as such (Pi's label
    map keeps them too; counting only the others, the header said 7 over a list of 8)."""
    lacking = sum(target not in session.by_id for target in session.labels)
    said = plural(len(session.labels), "label")
    return f"{said} ({lacking:,} on an entry not in the file)" if lacking else said


def tree_said(stats: SessionStats, session: Session) -> str:
    """``2 branches (1 fork), 1 compaction, 3 labels; 1 error, 2 aborted``: the shape of the
    tree, then what went wrong; a count of none is left out (but the branches'). A
    ``--leaf`` in mid-chain is said: its continuation is one more branch."""
    branches = plural(len(stats.branches), "branch", "branches")
    forks = len(session.fork_ids)
    why = [plural(forks, "fork")] if forks else []
    if session.leaf_id in session.children:  # `3 branches (1 fork)` did not add up
        why.append("the chosen leaf goes on")
    shape = [f"{branches} ({'; '.join(why)})" if why else branches]
    for count, one, many in (
        (stats.compactions, "compaction", None),
        (stats.branch_summaries, "branch summary", "branch summaries"),
        (stats.custom_messages, "custom message", None),
    ):
        if count:
            shape.append(plural(count, one, many))
    if session.labels:
        shape.append(labels_said(session))
    tool_errors = sum(tool.errors for tool in stats.tools.values())
    wrong = [
        said
        for count, said in (
            (stats.errors, plural(stats.errors, "error")),
            (tool_errors, plural(tool_errors, "failed tool call")),
            (stats.aborted, f"{stats.aborted:,} aborted"),
            (stats.length_stops, f"{stats.length_stops:,} cut off at the length limit"),
        )
        if count
    ]
    return ", ".join(shape) + ("; " + ", ".join(wrong) if wrong else "")
