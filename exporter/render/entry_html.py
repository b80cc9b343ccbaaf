"""A transcript entry's HTML, written by plain Python instead of a Jinja macro.

Every entry of a page goes through here (24,000 on a 25 MB session), and the macro's
per-value ``environment.getattr``, ``context.call`` and ``Markup`` wrapping were ~6% of an
export's instructions. The output is byte for byte what the macros of templates/entry.html.j2
and macros.html.j2 wrote, with the same escaping: every value goes through
``markupsafe.escape`` as Jinja's autoescape did (a ``Markup`` value stays as it is, anything
else is escaped), and the filters are the environment's own functions. Each entry's pieces
are collected in one list and joined once.
"""

from __future__ import annotations

from collections.abc import Callable

from markupsafe import Markup, escape

from exporter.formatting import exact_attribute
from exporter.render.environment import kind_label, pre_text, time_tag
from exporter.render.folding import Folded
from exporter.render.model import EntryView, Part
from exporter.render.tools import ImageView, ToolView

__all__ = ["entry_article", "folded_html"]

Add = Callable[[str], None]

#: An entry status whose notes are warnings.
_WARN_STATUSES = ("error", "aborted", "length")


def entry_article(e: EntryView) -> str:
    """The ``<article>`` of one entry (the page marks it safe when it places it)."""
    out: list[str] = []
    add = out.append
    _header(add, e)
    kind = e.kind
    if kind == "compaction":
        if e.html:
            add(
                '<details class="summary-block"><summary>Summary the model kept instead of'
                f' the earlier history</summary><div class="md">{_html(e.html)}</div></details>'
            )
        for n in e.notes:
            add(f'<p class="note">{escape(n)}</p>')
    elif kind == "bashExecution":
        _shell_command(add, e)
    else:
        for p in e.parts:
            _part(add, p)
        if e.html is not None:
            add(f'<div class="md">{_html(e.html)}</div>')
        if e.notes:
            cls = "note warn" if e.status in _WARN_STATUSES else "note"
            for n in e.notes:
                add(f'<p class="{cls}">{escape(n)}</p>')
    if e.details is not None:
        add('<p class="note">Details:</p>')
        _folded(add, e.details, "args hl")
    if e.odd:
        add(
            '<p class="note warn">Not of the type Pi writes, so shown as written:</p>'
            f'<pre class="args hl">{_html(e.odd)}</pre>'
        )
    if e.meta:
        add(f"<footer>{escape(e.meta)}</footer>")
    add("</article>")
    return "".join(out)


def folded_html(fold: Folded, cls: str = "out") -> Markup:
    """A folded text on its own, for the page template (its damaged lines)."""
    out: list[str] = []
    _folded(out.append, fold, escape(cls))
    return Markup("".join(out))


def _html(value: object) -> Markup:
    """``value`` as Jinja's autoescape writes it, without ``escape``'s copy of a ``Markup``
    (HTML this tool made: message bodies, outputs; the largest values of a page)."""
    return value if type(value) is Markup else escape(value)


def _header(add: Add, e: EntryView) -> None:
    """The opening tag and the ``<header>``: heading, title, badges, time link."""
    anchor = escape(e.anchor)
    status = f" st-{escape(e.status)}" if e.status else ""
    add(
        f'<article data-entry-id="{exact_attribute(e.id)}" class="entry {escape(e.css)}{status}"'
        f' id="{anchor}"><header><h3>{escape(e.heading or kind_label(e.kind))}</h3>'
    )
    if e.title:
        add(f' <span class="title">{escape(e.title)}</span>')
    if e.label:
        add(f' <span class="badge label" title="label">{escape(e.label)}</span>')
    forks = e.forks_here
    if forks:
        es = "es" if forks != 1 else ""
        if e.is_leaf:
            said = f"the session goes on below this leaf: {escape(forks)} branch{es}"
        else:
            said = f"forks here: {escape(forks)} other branch{es} below"
        add(f' <span class="badge fork">{said}</span>')
    if e.time:
        add(f'<a class="ts" href="#{anchor}">{_html(time_tag(e.time))}</a></header>')
    else:
        add(f'<a class="ts" href="#{anchor}" aria-labelledby="lnk"></a></header>')


def _shell_command(add: Add, e: EntryView) -> None:
    """A ``!`` command the user ran: its tool box, with the command's rest and output."""
    add(
        f'<div class="tool tool-bashExecution st-{escape(e.status)}"><div class="tool-head">'
        f'<code class="cmd">{_html(e.html)}</code>'
    )
    for n in e.notes:
        add(f' <span class="sub">{escape(n)}</span>')
    add("</div>")
    tool: ToolView = e.parts[0].tool  # type: ignore[assignment]  # a command's one part
    if tool.command_rest is not None:
        _command_rest(add, tool.command_rest)
    if tool.output.total_lines:  # type: ignore[union-attr]  # always set for a command
        _folded(add, tool.output, "out")  # type: ignore[arg-type]
    add("</div>")


def _part(add: Add, p: Part) -> None:
    """One block of a message, by its kind (a kind not listed writes nothing)."""
    kind = p.kind
    if kind == "text":
        add(f'<div class="md">{_html(p.html)}</div>')
    elif kind == "thinking":
        name = f" · {escape(p.name)}" if p.name else ""
        redacted = " (redacted by the provider)" if p.redacted else ""
        add(
            f'<details class="thinking"><summary>Thinking{name}{redacted}</summary>'
            f'<div class="md">{_html(p.html)}</div></details>'
        )
    elif kind == "tool":
        tool = p.tool
        anchor = p.tool_entry_anchor
        result_id = tool.result_entry_id if anchor else None  # type: ignore[union-attr]
        _tool(add, tool, anchor, result_id, p.tool_label, p.tool_forks)  # type: ignore[arg-type]
    elif kind == "image":
        _image(add, p.image)  # type: ignore[arg-type]
    elif kind == "skill":
        add(
            f'<details class="skill"><summary>Skill <b>{escape(p.name)}</b> <span class="pl">'
            "(instructions loaded into the prompt)</span></summary>"
            f'<div class="md">{_html(p.html)}</div></details>'
        )
    elif kind == "attachment":
        add(
            f'<details class="fold attachment"><summary>Text of the attached {escape(p.name)}'
            f'</summary><pre class="out">{_html(pre_text(p.html))}</pre></details>'  # type: ignore[arg-type]
        )
    elif kind in ("json", "other"):
        _folded(add, p.fold, "args hl")  # type: ignore[arg-type]


def _folded(add: Add, f: Folded, cls: str, attrs: str = "") -> None:
    """Long text with its fold: the hidden part before (a command's output) or after.
    ``cls`` and ``attrs`` (more attributes of the visible part, which page.js copies
    from) are written as they are: this module's constants, or escaped by the caller."""
    hidden = f.hidden
    if hidden is not None and f.hidden_first:
        add(
            f'<details class="fold fold-before"><summary>{escape(f.summary)}</summary>'
            f'<pre class="{cls}">{_html(pre_text(hidden))}</pre></details>'
            f'<pre class="{cls}"{attrs}>{_html(pre_text(f.visible))}</pre>'
        )
    elif hidden is not None:
        add(
            f'<pre class="{cls}"{attrs}>{_html(pre_text(f.visible))}</pre>'
            f'<details class="fold fold-after"><summary>{escape(f.summary)}</summary>'
            f'<pre class="{cls}">{_html(pre_text(hidden))}</pre></details>'
        )
    elif f.total_lines:
        add(f'<pre class="{cls}"{attrs}>{_html(pre_text(f.visible))}</pre>')


def _command_rest(add: Add, f: Folded | None) -> None:
    """The rest of a long shell command, folded under its tool's head."""
    if f is not None and f.hidden is not None:
        add(
            f'<details class="fold fold-after cmd-rest"><summary>{escape(f.summary)} of this'
            f' command</summary><pre class="cmd">{_html(pre_text(f.hidden))}</pre></details>'
        )


def _image(add: Add, img: ImageView) -> None:
    """An image (zoomable), or what was said of one not shown."""
    if img.src:
        add(
            '<label class="zoom"><input type="checkbox" class="zoom-toggle" aria-label="Enlarge'
            f' the image"><img src="{escape(img.src)}" alt="image ({escape(img.mime_type)})"'
            ' loading="lazy"></label>'
        )
    elif img.held:
        add(f'<span class="bad-image">[{escape(img.held)}]</span>')
    else:
        add(
            f'<span class="bad-image">[image of type {escape(img.mime_type)} not shown:'
            " unsupported or invalid data]</span>"
        )


def _tool(
    add: Add,
    t: ToolView,
    anchor: str | None,
    result_id: str | None,
    label: str | None,
    forks: int,
) -> None:
    """A tool call and its result. ``anchor``: the result entry's own anchor, when the
    result is shown here rather than as an entry of its own."""
    _tool_head(add, t, anchor, result_id, label, forks)
    if t.command_rest is not None:
        _command_rest(add, t.command_rest)
    for a in t.invalid_args:
        add(f'<p class="warn">[invalid arg] {escape(a)} is not a string</p>')
    for n in t.notes:
        add(f'<p class="note">{escape(n)}</p>')
    if t.args_json is not None:
        _folded(add, t.args_json, "args hl")
    if t.other_args is not None:
        add('<p class="note">Other arguments:</p>')
        _folded(add, t.other_args, "args hl")
    if t.body is not None:
        if t.body_label:
            add(f'<p class="note">{escape(t.body_label)}</p>')
        eol = f' data-eol="{t.body_eol}"' if t.body_eol else ""  # letters of tools.py
        _folded(add, t.body, _body_class(t), eol)
    _tool_result(add, t)
    add("</div>")


def _body_class(t: ToolView) -> str:
    """A body's ``<pre>`` class: a diff's gutter width (its wrapped lines' indent), or code."""
    if not t.diff:
        return "code hl"
    return f"diff g{t.diff_gutter}" if t.diff_gutter > 1 else "diff"


def _tool_head(
    add: Add,
    t: ToolView,
    anchor: str | None,
    result_id: str | None,
    label: str | None,
    forks: int,
) -> None:
    """The box's opening tag and its head: name, what it acted on, badges, status."""
    kind = t.kind
    status = t.status
    ids = f' data-entry-id="{exact_attribute(result_id)}" id="{escape(anchor)}"' if anchor else ""
    add(
        f'<div{ids} class="tool tool-{escape(kind)} st-{escape(status)}'
        f'{" is-tool" if result_id else ""}{" is-labeled" if label else ""}">'
        '<div class="tool-head"><h4>'
    )
    if kind == "bash" or kind == "bashExecution":
        command = t.command
        if command is not None:
            add(f'<span class="tool-name">bash</span><code class="cmd">{_html(command)}</code>')
        else:
            add('<span class="tool-name">bash</span>')
    elif t.path is not None:
        name = escape(t.name)
        add(f'<span class="tool-name">{name}</span> <code class="path">{escape(t.path)}</code>')
        if t.title:
            add(f' <code class="args">{escape(t.title)}</code>')
    elif t.title:
        name = escape(t.name)
        add(f'<span class="tool-name">{name}</span> <code class="args">{escape(t.title)}</code>')
    else:
        add(f'<span class="tool-name">{escape(t.name)}</span>')
    if t.subtitle:
        add(f' <span class="sub">{escape(t.subtitle)}</span>')
    if label:
        add(f' <span class="badge label" title="label on the result">{escape(label)}</span>')
    if forks:
        es = "es" if forks != 1 else ""
        said = f"forks here: {escape(forks)} other branch{es} after this turn"
        add(f' <span class="badge fork">{said}</span>')
    exit_code = t.exit_code
    if status != "ok" or exit_code is not None:
        _tool_status(add, t)
    if anchor:
        add(f'</h4><a class="permalink" href="#{escape(anchor)}" aria-labelledby="lnk">#</a></div>')
    else:
        add("</h4></div>")


def _tool_status(add: Add, t: ToolView) -> None:
    """What the head says of a call that did not simply succeed, and its exit code."""
    status = t.status
    if status == "pending" and t.result_elsewhere:
        said = f'<a href="#{escape(t.result_elsewhere)}">result on another branch</a>'
    elif status == "pending":
        said = "no result"
    elif status == "error":
        said = "error"
    elif status == "remote":
        said = "results not recorded"
    else:
        said = ""
    if t.exit_code is not None:
        comma = ", " if status in ("pending", "error") else ""
        said = f"{said}{comma}exit {escape(t.exit_code)}"
    add(f'<span class="status">{said}</span>')


def _tool_result(add: Add, t: ToolView) -> None:
    """The result: its output (or where it is shown), images, documents, details."""
    output = t.output
    if t.same_output_as:
        total = output.total_lines  # type: ignore[union-attr]  # set with same_output_as
        add(
            f'<p class="note same-output">Output: {escape(f"{total:,}")}'
            f" line{'s' if total != 1 else ''}, identical to"
            f' <a href="#{escape(t.same_output_as)}">an earlier result</a> on this path'
            " (shown there, not repeated).</p>"
        )
    elif output is not None and output.total_lines:
        _folded(add, output, "out hl" if t.kind == "read" else "out")
    elif t.status == "error" and not t.images and not t.documents:
        add('<p class="note pl">The tool failed without any output.</p>')
    for img in t.images:
        _image(add, img)
    for d in t.documents:
        for line in d.lines:
            add(f'<p class="note">{_html(line)}</p>')
        if d.text is not None:
            add(
                f'<details class="fold attachment"><summary>Text of the {escape(d.name)}'
                f'</summary><pre class="out">{_html(pre_text(d.text))}</pre></details>'
            )
    if t.details is not None:
        add('<p class="note">Details (the tool\'s structured result):</p>')
        _folded(add, t.details, "args hl")
    if t.result_odd:
        add(
            '<p class="note warn">In the result, not of the type Pi writes, so shown as'
            f' written:</p><pre class="args hl">{_html(t.result_odd)}</pre>'
        )
