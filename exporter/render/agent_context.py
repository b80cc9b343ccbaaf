"""The page's System prompt and Tools cards, from ``--agent-context`` (see
:mod:`exporter.agent_context`): folded ``<details>`` after the header, plain escaped text.

Their style (``static/agent-context.css``) is inlined, and allowed in the page's policy,
only on a page that has them: a page made without a context stays byte for byte what it was.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from exporter.agent_context import PREVIEW_LINES, AgentContext
from exporter.formatting import one_line
from exporter.render.assets import agent_context_css

__all__ = ["agent_context_view"]

#: A tool's description in its summary line, at most this many characters (the whole one
#: is in its body when longer, or on several lines).
SUMMARY_CHARS = 160


def agent_context_view(context: AgentContext | None) -> dict[str, Any] | None:
    """What the template prints for the cards; None without a context."""
    if context is None:
        return None
    context = context.capped()  # cut only now: any redaction has read the whole texts
    prompt = context.system_prompt
    lines = context.prompt_lines
    tools = []
    for tool in context.tools:
        short = one_line(tool.description, SUMMARY_CHARS)
        whole = tool.description.strip()
        tools.append(
            {
                "name": tool.name,
                "summary": short,
                # the body repeats it only when the line did not say all of it
                "description": whole if whole and whole != short else "",
                "params": tool.params,
                "params_left_out": tool.params_left_out,
                "inactive": tool.active is False,
            }
        )
    return {
        "css": Markup(agent_context_css()),  # ours, inlined as hashed in the page's policy
        "prompt": prompt,
        "prompt_lines": lines,
        "prompt_chars": len(prompt),
        "preview": context.preview,
        "more_lines": max(lines - PREVIEW_LINES, 0),
        "preview_cut": context.preview.endswith("…") and not prompt.endswith("…"),
        "tools": tools,
        "active_known": context.active_known,
        "active_count": context.active_count,
        "left_out": list(context.left_out),
    }
