"""The outline's rows as HTML, written in Python rather than by the page template: a big
session's ~24,000 rows through the template's loop were a serial tail of its export, where
this runs while the entries render in the forked workers (the same bytes either way)."""

from __future__ import annotations

from markupsafe import Markup, escape

from exporter.render.model import OutlineRow

__all__ = ["outline_markup"]


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


def _entry_row(row: OutlineRow) -> str:
    classes = row.classes + ("" if row.on_path else " off") + (" leaf" if row.is_leaf else "")
    label = f'<span class="tlabel">[{_escaped(row.label)}]</span> ' if row.label else ""
    return (
        f'<li class="{_escaped(classes)}"><a href="#{_escaped(row.anchor)}">'
        f"{label}{_escaped(row.text)}</a></li>"
    )
