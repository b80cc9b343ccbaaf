"""The one Jinja environment every page is rendered with, and the filters its templates use.

Shared by session pages and listings so templates compile once per process (and are cached
across processes by :mod:`exporter.render.template_cache`). Autoescape and
``StrictUndefined`` are on: session text is untrusted, and a misspelt name must fail loudly
rather than render as nothing.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

import jinja2
from markupsafe import Markup, escape

from exporter.formatting import decimal_pads, exact_attribute, fmt_cost, label_badges
from exporter.render.assets import asset_dir
from exporter.render.outline_html import quoted_row
from exporter.render.template_cache import template_cache
from exporter.session import parse_time
from exporter.times import clock_text, utc_moment

__all__ = [
    "jinja_environment",
    "kind_label",
    "model_breaks",
    "pad_class",
    "path_breaks",
    "pre_text",
    "time_tag",
]


@lru_cache(maxsize=1)
def jinja_environment() -> jinja2.Environment:
    """The environment over ``templates/``, built once per process."""
    # here, not at the top: entry_html imports this module's filters
    from exporter.render.entry_html import folded_html

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(asset_dir("templates"))),
        autoescape=True,
        trim_blocks=False,
        lstrip_blocks=False,
        undefined=jinja2.StrictUndefined,
        bytecode_cache=template_cache(),
    )
    env.filters["time_tag"] = time_tag
    env.filters["cost"] = fmt_cost
    env.filters["kind_label"] = kind_label
    env.filters["pre_text"] = pre_text
    env.filters["exact"] = exact_attribute
    env.filters["path_breaks"] = path_breaks
    env.filters["pad_class"] = pad_class
    env.filters["model_breaks"] = model_breaks
    env.filters["decimal_pads"] = decimal_pads
    env.filters["row"] = quoted_row  # an outline row quoted: its words in their own direction
    env.globals["label_badges"] = label_badges
    env.globals["folded"] = folded_html  # the entries' folds (exporter.render.entry_html)
    return env


def kind_label(kind: str) -> str:
    """An entry's heading by its kind; a kind not listed is shown as written."""
    return _KIND_LABELS.get(kind, kind)


def path_breaks(path: str) -> Markup:
    """A path that may wrap after each ``/`` (``<wbr>``), for the Files table: its long paths
    made it wider than a desktop's column, or broke inside a name on a phone. (Not in tool
    heads: 5 bytes a slash on every call.) Copying it still gives the path as it is."""
    return Markup(str(escape(path)).replace("/", "/<wbr>"))


def model_breaks(name: str) -> Markup:
    """A model's name that wraps only after a ``/``: "anthropic/claude-sonnet-4-5" broke
    at its last hyphen ("...sonnet-" over "4-5") in the site's Models column."""
    parts = [f"<span>{escape(part)}</span>" for part in name.split("/")]
    return Markup("/<wbr>".join(parts))


def pad_class(pad: int) -> Markup:
    """The class giving an amount the hidden digits its decimal point lines up with
    (``decimal_pads``): ``::after`` content, so copying the cell gives the amount alone."""
    return Markup(f' class="p{min(pad, 2)}"') if pad > 0 else Markup("")


def time_tag(iso: datetime | str | None) -> Markup:
    """``<time>`` for a time (read already, or as written): machine-readable in UTC without
    sub-seconds (the page shows seconds at most), shown in UTC (``+14:00`` and ``-12:00``
    times were shown in their own zone and called UTC), the year in four digits (a browser
    reads no ``999-06-01``); nothing without a time. An unreadable time is shown as written,
    without ``datetime``: the page's script localised what a browser reads of it
    (``T24:00:00Z``, ``+002025-…``), a time the session's other outputs do not show.
    ``parse_time`` reads a time without a zone as UTC, as Pi writes every time in UTC. One
    text for both forms (every entry's header has one: ~15,000 on a 25 MB session), and only
    a time as written needs escaping."""
    if not iso:
        return Markup("")
    moment = iso if isinstance(iso, datetime) else parse_time(iso)
    if moment is None:
        return Markup(f"<time>{escape(iso)}</time>")
    stamp = clock_text(utc_moment(moment))  # digits - : and space
    return Markup(f'<time datetime="{stamp.replace(" ", "T")}Z">{stamp} UTC</time>')


def pre_text(text: Markup) -> Markup:
    """``<pre>`` content as written: an HTML parser drops a line break right after
    ``<pre>``, so a text that starts with a blank line gets one more (a fold's hidden
    part said 13 more lines and showed 12)."""
    return Markup("\n") + text if text.startswith("\n") else text


#: An entry's heading by its kind; a kind not listed is shown as written.
_KIND_LABELS = {
    "user": "User",
    "assistant": "Assistant",
    "toolResult": "Tool result",
    "bashExecution": "Shell command (!)",
    "customMessage": "Extension message",
    "compaction": "Compaction",
    "branchSummary": "Branch summary",
    "custom": "Extension data",
    "marker": "·",
    "unknown": "Unknown",
}
