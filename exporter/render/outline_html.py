"""The outline's rows as HTML, written in Python rather than by the page template: a big
session's ~24,000 rows through the template's loop were a serial tail of its export, where
this runs while the entries render in the forked workers (the same bytes either way)."""

from __future__ import annotations

import re

from markupsafe import Markup, escape

from exporter.render.model import OutlineRow

__all__ = ["isolated", "outline_markup", "quoted_row"]

#: A strong right-to-left character, or near enough (Hebrew, Arabic, Syriac, Thaana, N'Ko…,
#: their presentation forms, the marks and embeddings that say right to left): a text with
#: none is drawn the same isolated or not, so it gets no ``<bdi>`` (no byte more).
_RTL = re.compile(
    "[\u0590-\u08ff\u200f\u202b\u202e\u2067\ufb1d-\ufdff\ufe70-\ufefc"
    "\U00010800-\U00010fff\U0001e800-\U0001efff]"
)

#: An outline row as the page's English around the entry's own words: "[label: …]" and
#: "[name: …]" (group 1), or after a prefix as "user: ", "skill: pdf · user: ", "assistant:
#: (aborted) ", "assistant: error: ", "[bash]: ", "[bash result] " (group 2). Other rows
#: ("[model: …]", "[compaction: …]") are the page's words, or a call's name and path said
#: left to right.
_ROW_WORDS = re.compile(
    r"\[(?:label|name): (.*?)\]?\Z"  # (a row cut short ends "…", not "]")
    r"|(?:(?:skill: .*? · )?(?:user|assistant): (?:\((?:aborted|error)\) |error: )?"
    r"|\[[^\]]*\]:? )(.*)\Z",
    re.S,
)


def outline_markup(rows: list[OutlineRow]) -> Markup:
    """The ``<li>`` items of the page's ``<ul class="tree">``, from ``view.outline``'s
    rows: an entry's row, or where a branch's (or a chunk's) sub-list opens or closes."""
    out: list[str] = []
    for row in rows:
        if row.kind == "open":
            out.append(_branch_opens(row))
        elif row.kind in ("close", "chunk-close"):
            out.append("</ul></li>")
        elif row.kind == "chunk-open":
            out.append('<li class="chunk" role="none"><ul>')
        else:
            out.append(_entry_row(row))
    return Markup("".join(out))


def _branch_opens(row: OutlineRow) -> str:
    """A branch's item and the opening of its sub-list; a long branch says, in its toggle,
    how many entries it folds (and how many of them each filter shows)."""
    head = f'<li class="sub {escape(row.classes)}">' if row.classes else '<li class="sub">'
    if row.folded:
        folded = f"{row.folded:,}"
        head += (
            '<label class="ob"><input type="checkbox" class="ob-t"> '
            f'<span class="n">{folded} entries</span>'
        )
        for name, count in row.folded_by.items():
            head += f'<span class="n-{escape(name)}">{count:,} of {folded} entries</span>'
        branches = row.folded_branches
        head += f" in {'another branch' if branches == 1 else f'{branches} branches'}</label>"
    if "root" in row.classes.split():
        return head + "<ul>"
    return head + '<ul aria-label="other branch">'


def _escaped(text: str) -> str:
    """``markupsafe.escape`` of a plain ``str``, as ``str``: the same five replacements,
    without a ``Markup`` made and turned back into text (~24,000 rows of three each)."""
    if hasattr(text, "__html__"):
        return str(escape(text))
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("'", "&#39;")
        .replace('"', "&#34;")
    )


def _isolated(text: str) -> str:
    """Escaped ``text``, in ``<bdi>`` when it holds a right-to-left letter: in an English
    line a Hebrew label's "!" was drawn at its right, where a reader of Hebrew starts."""
    rtl = not text.isascii() and _RTL.search(text)
    return f"<bdi>{_escaped(text)}</bdi>" if rtl else _escaped(text)


def _row_html(text: str) -> str:
    """An outline row's text, escaped, its entry's own words isolated (``<bdi>``) when they
    hold a right-to-left letter: after "[label: " or "user: " they took the line's
    direction from its English, and "[label: חשוב!]" drew the "!" at the word's start."""
    if text.isascii() or not _RTL.search(text) or (match := _ROW_WORDS.match(text)) is None:
        return _escaped(text)  # (isascii first: most rows, and far quicker than the search)
    start, end = match.span(1 if match.group(1) is not None else 2)
    if not _RTL.search(text, start, end):
        return _escaped(text)
    words = _escaped(text[start:end])
    return f"{_escaped(text[:start])}<bdi>{words}</bdi>{_escaped(text[end:])}"


def quoted_row(text: str) -> Markup:
    """An outline row's text quoted elsewhere (the Labels list, the branch table, "entry u1
    “user: …”"), as the outline shows it: its own words in their own direction."""
    return Markup(_row_html(text))


def isolated(text: str) -> Markup:
    """A text of the session's (a prompt) inside the page's English, in its own direction
    when it holds a right-to-left letter."""
    return Markup(_isolated(text))


def _entry_row(row: OutlineRow) -> str:
    classes = row.classes + ("" if row.on_path else " off") + (" leaf" if row.is_leaf else "")
    label = f'<span class="tlabel">[{_isolated(row.label)}]</span> ' if row.label else ""
    return (
        f'<li class="{_escaped(classes)}"><a href="#{_escaped(row.anchor)}">'
        f"{label}{_row_html(row.text)}</a></li>"
    )
