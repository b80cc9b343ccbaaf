"""View models for tool calls: one small object per call that the template can print as is.

Each built-in tool (bash, read, write, edit, ls, find, grep) gets a tailored view; any other
tool shows its name, its arguments as highlighted JSON and its result text. Long text is
folded, never cut (``folding``): the hidden part is in the page inside a <details> block.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from html import escape
from typing import Any

from markupsafe import Markup

from exporter.entries import UNNAMED_TOOL, MessageEntry, as_dict, as_str
from exporter.render.folding import (
    Folded,
    fold,
    fold_chars,
    fold_code,
    fold_command,
    fold_text,
    terminal_text,
)
from exporter.render.markup import (
    files_api_image,
    highlight,
    highlight_lines,
    language_for_path,
    safe_image_src,
)
from exporter.render.odd_values import DocumentView, document_view, odd_values
from exporter.share_cuts import LEFT_OUT_NOTE
from exporter.tool_truncation import bash_output_cut, read_output_cut

BASH_TAIL_LINES = 12
READ_HEAD_LINES = 12
GENERIC_HEAD_LINES = 12
DIFF_FOLD_LINES = 60
EXIT_CODE = re.compile(r"(?:Command exited with code|exit code:?)\s*(-?\d+)\s*$", re.I)


@dataclass(slots=True)
class ImageView:
    src: str | None
    mime_type: str
    held: str | None = None  # where an image not in the file is (the Files API), said


@dataclass(slots=True)
class DocumentPart:
    """An API document in a tool's result as the page shows it: its lines (what it is,
    what the model was told of it), and a text document's text, folded."""

    lines: list[Markup]
    name: str
    text: Markup | None = None


@dataclass(slots=True)
class ToolView:
    """Everything the template needs for one call and its result."""

    call_id: str
    name: str
    kind: str
    title: str = ""
    subtitle: str = ""
    path: str | None = None
    command: Markup | None = None
    command_rest: Folded | None = None  # a long command's lines after those in the head
    args_json: Folded | None = None
    body: Folded | None = None  # content from the arguments (write) or the diff (edit)
    body_label: str = ""
    body_eol: str = ""  # a write's line ends the shown text cannot tell (see _copy_ends)
    diff: bool = False
    diff_gutter: int = 1  # characters before a diff line's code: a wrapped line's indent
    output: Folded | None = None
    images: list[ImageView] = field(default_factory=list)
    documents: list[DocumentPart] = field(default_factory=list)  # a PDF a Read returned
    status: str = "pending"  # ok | error | pending | remote (ran elsewhere, not recorded)
    exit_code: int | None = None
    notes: list[str] = field(default_factory=list)
    result_entry_id: str | None = None
    invalid_args: list[str] = field(default_factory=list)
    result_elsewhere: str | None = None  # the anchor of its result on another branch
    same_output_as: str | None = None  # anchor of the result above with this output in full
    other_args: Folded | None = None  # a built-in tool's arguments its view does not show
    details: Folded | None = None  # another tool's structured result (``details``)
    result_odd: Markup | None = None  # result content not of the type Pi writes, as written
    used_args: set[str] = field(default_factory=set)  # arguments the view shows
    read_details: set[str] = field(default_factory=set)  # result ``details`` keys it shows


def _arg(args: dict[str, Any], name: str, view: ToolView) -> str | None:
    value = args.get(name)
    if value is None:
        return None
    view.used_args.add(name)
    if isinstance(value, str):
        return value
    view.invalid_args.append(name)
    return json_text(value)


TOO_DEEP = "(nested too deeply to show here; the entry is whole in the embedded JSONL)"


#: Indented JSON may be at most this many times its one-line size (and this many characters)
#: before the one line is shown instead. Every level of nesting indents each line inside it, so
#: a value nested 900 deep, 4 KB on one line, is 3 MB indented (100 MB at 5,000 levels).
INDENT_GROWTH_LIMIT = 8
INDENT_FREE_SIZE = 64 * 1024
#: Nesting up to this depth is indented in one call (C-accelerated on Python 3.13): its
#: indentation cannot outgrow the limit above by much, and the watched way is 1.5-6x slower.
SHALLOW_LEVELS = 10


def json_text(value: Any, indent: int | None = None) -> str:
    """``value`` as JSON for reading; JSON nested deeper than Python can walk (a session may
    hold such a string or value) gets a note instead of a traceback, and JSON nested so deep
    that its indentation would outweigh it stays on one line."""
    try:
        if indent is not None and not _nests_deeper_than(value, SHALLOW_LEVELS):
            return json.dumps(value, ensure_ascii=False, indent=indent)
        one_line = json.dumps(value, ensure_ascii=False)
    except RecursionError:
        return TOO_DEEP
    except (TypeError, ValueError):
        try:
            return repr(value)
        except RecursionError:
            return TOO_DEEP
    if indent is None:
        return one_line
    budget = max(INDENT_FREE_SIZE, INDENT_GROWTH_LIMIT * len(one_line))
    return _indented(value, indent, budget, one_line)


def _nests_deeper_than(value: Any, levels: int) -> bool:
    """Whether ``value`` holds lists or objects more than ``levels`` deep (walked without
    recursion, stopping at the first such one)."""
    containers = (dict, list)
    stack: list[tuple[Any, int]] = [(value, 0)] if isinstance(value, containers) else []
    while stack:
        item, depth = stack.pop()
        if depth == levels:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, containers))
    return False


def _indented(value: Any, indent: int, budget: int, one_line: str) -> str:
    """``value`` indented, or ``one_line`` if that takes more than ``budget`` characters
    (written piece by piece, so a hostile value stops costing at the budget). The one line
    is the one already made: encoding it again here ran a frame deeper, past the limit."""
    chunks: list[str] = []
    size = 0
    try:
        for chunk in json.JSONEncoder(ensure_ascii=False, indent=indent).iterencode(value):
            size += len(chunk)
            if size > budget:
                return one_line
            chunks.append(chunk)
    except RecursionError:  # indenting walks deeper than the one-line encoder
        return one_line
    return "".join(chunks)


def json_fold(value: Any) -> Folded:
    """A value as highlighted JSON, its first lines in view and the rest folded."""
    return fold_code(json_text(value, 2), "json", GENERIC_HEAD_LINES, head_only=False)


def details_fold(details: Any) -> Folded | None:
    """``details`` (a tool's or an extension's structured data) folded, None when empty."""
    return None if details in (None, {}, []) else json_fold(details)


def _result_text(result: MessageEntry | None) -> str:
    return result.text if result else ""


def _output(text: str, keep: int, *, tail: bool = False) -> Folded:
    """A result's text folded; its terminal colour codes (a test runner's red FAIL, a
    diff's green +) show as colours (a read's file content is code, highlighted instead)."""
    return fold_text(text, keep, tail=tail, ansi=True)


#: An address a document was given by that the page may link: the web's, whole, with no
#: space or control (``javascript:`` and the like stay text).
_WEB_ADDRESS = re.compile(r"https?://[^\s\x00-\x1f\x7f]{1,2048}", re.IGNORECASE)


def document_lines(document: DocumentView) -> list[Markup]:
    """What the page says of a document, a line each: "PDF document: report.pdf
    (application/pdf, 735 bytes)", its address (a link only when it is a web address; it
    is never fetched), what the block told the model of it, and any field said nowhere
    else as written. Every word from the file escaped."""
    line = Markup("{}").format(document.kind)
    if document.title:
        line += Markup(": {}").format(document.title)
    if document.facts:
        line += Markup(" ({})").format(document.facts)
    if document.url is not None:
        url = document.url
        link = '<a href="{}" rel="noreferrer noopener">{}</a>'
        shown = Markup(link).format(url, url) if _WEB_ADDRESS.fullmatch(url) else url
        line += Markup(" at {}").format(shown)
    lines = [line]
    if document.context is not None:
        lines.append(Markup("Context given with it: {}").format(document.context))
    if document.other:
        lines.append(Markup("Other fields of it: {}").format(json_text(document.other)))
    return lines


def _result_documents(result: MessageEntry) -> list[DocumentPart]:
    """The API documents a result holds (a PDF Claude Code's Read returned), said in
    words: their base64 was the page's biggest part."""
    parts = []
    for block in result.content:
        if (document := document_view(block)) is not None:
            text = Markup(escape(document.text)) if document.text else None
            parts.append(DocumentPart(document_lines(document), document.name, text))
    return parts


def _result_images(result: MessageEntry | None) -> list[ImageView]:
    if result is None:
        return []
    images = []
    for block in result.content:
        if block.get("type") == "image":
            mime = as_str(block.get("mimeType")) or "?"
            held = files_api_image(block)
            images.append(ImageView(safe_image_src(block.get("data")), mime, held))
    return images


_DIFF_TAGS = {
    "+": ("<ins>", "</ins>"),
    "-": ("<del>", "</del>"),
    "@": ('<span class="dh">', "</span>"),
}
_CONTEXT = ("", "")  # context lines are plain text: the most common, and 13 bytes each


def _diff_lines(diff: str) -> list[str]:
    """One line of HTML per diff line: added and removed lines (and hunk headers) in short
    elements coloured by their leading +/- (Pi diffs carry line numbers after it), context
    lines as plain text; <ins>/<del> keep the markup small and say what the line is."""
    out = []
    lines = diff.rstrip("\n").split("\n")
    header = _DIFF_TAGS["@"]
    for at, line in enumerate(lines):
        opening, closing = _DIFF_TAGS.get(line[:1], _CONTEXT)
        if _file_header(lines, at):  # "--- a" / "+++ b" name the file: no removed or added line
            opening, closing = header
        out.append(f"{opening}{escape(line, quote=False)}{closing}")
    return out


#: Pi's diff line: its marker, the line number padded to the widest one's width (so the
#: widest has no space before it: ``-150 x`` beside ``- 99 y``), a space.
_NUMBERED_LINE = re.compile(r"[+\- ] *\d+ ")
#: A unified diff's hunk header: its lines carry no numbers of their own (``-1 2`` is code).
_UNIFIED_HUNK = re.compile(r"@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")
#: Widest gutter the page's CSS indents wrapped lines by (``.g2`` to ``.g8``).
MAX_DIFF_GUTTER = 8


def diff_gutter(diff: str) -> int:
    """How many characters come before the code on the lines of a diff Pi's edit tool
    returned: the +/- marker, and the line number padded to the widest one (``+ 53 ``). A
    line that wraps on a phone or on paper is indented by it, so its rest does not read as
    a line of its own. Lines that do not mostly start so (an old Pi's diff), or a unified
    diff's (numbered in its ``@@ -1 +1 @@``), have a marker only."""
    head = diff.split("\n", 400)[:400]
    if any(_UNIFIED_HUNK.match(line) for line in head):
        return 1
    lines = [
        line for line in head if line[:1] in ("+", "-", " ") and line[:4] not in ("+++ ", "--- ")
    ]
    widths = Counter(m.end() for line in lines if (m := _NUMBERED_LINE.match(line)))
    if sum(widths.values()) * 2 <= len(lines):  # a patch's lines, some starting with a number
        return 1
    return min(widths.most_common(1)[0][0], MAX_DIFF_GUTTER)


def _file_header(lines: list[str], at: int) -> bool:
    """Whether ``lines[at]`` is half of a file's ``---``/``+++`` pair, which a hunk's ``@@``
    follows (an apply_patch of several files has one per file)."""
    start = at - 1 if lines[at].startswith("+++ ") else at
    return (
        start >= 0
        and start + 2 < len(lines)
        and lines[start].startswith("--- ")
        and lines[start + 1].startswith("+++ ")
        and lines[start + 2].startswith("@@")
    )


def computed_diff(pairs: list[tuple[str, str]], path: str) -> str:
    """One unified diff of every (old, new) replacement, under one ---/+++ header. The texts
    are snippets of the file: a hunk says which replacement it is, not line numbers the
    file does not have there, and a snippet that simply stops mid-file is no "end of file".
    Line endings count (a CRLF -> LF edit is a change, shown as ␍); a replacement that adds
    or drops the newline after its last line says so."""
    out: list[str] = []
    for number, (old, new) in enumerate(pairs, 1):
        if not old.endswith("\n") and not new.endswith("\n"):  # (an empty text stays empty)
            old, new = old and old + "\n", new and new + "\n"
        which = f"replacement {number} of {len(pairs)}" if len(pairs) > 1 else "replacement"
        diff, matched = _unified(_lines_of(old), _lines_of(new))
        if not matched:
            which += UNMATCHED_NOTE
        for line in diff[2:]:  # after its own ---/+++ header (a "--- x" line is a body)
            if line.startswith("@@"):
                line = f"@@ {which} @@"
            out.append(line.rstrip("\n").replace("\r", "␍") + "\n")
            if not line.endswith("\n") and line[:1] in "+- ":
                out.append("\\ no newline after this line\n")
    if out:
        out[:0] = [f"--- {path}\n", f"+++ {path}\n"]
    return "".join(out)


#: difflib matches lines in about (old lines x new lines) steps, worse when lines repeat
#: (32,000 lines of 200 kinds a side: 6 s; 64,000: 15 s): past this product, only the
#: lines both sides start and end with are matched, and the rest shown removed, then added.
MAX_DIFF_LINE_PAIRS = 4_000_000
UNMATCHED_NOTE = " (too long to match line by line: its lines shown removed, then added)"


def _unified(old: list[str], new: list[str]) -> tuple[list[str], bool]:
    """``difflib.unified_diff`` of the lines (2 lines of context), and whether its middle
    was matched line by line (see :data:`MAX_DIFF_LINE_PAIRS`)."""
    if len(old) * len(new) <= MAX_DIFF_LINE_PAIRS or old == new:
        return list(difflib.unified_diff(old, new, n=2)), True
    shorter = min(len(old), len(new))
    start = next((k for k in range(shorter) if old[k] != new[k]), shorter)
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    head, tail = max(0, start - 2), min(end, 2)
    old_middle = old[head : len(old) - end + tail]
    new_middle = new[head : len(new) - end + tail]
    if len(old_middle) * len(new_middle) <= MAX_DIFF_LINE_PAIRS:
        return list(difflib.unified_diff(old_middle, new_middle, n=2)), True
    before, after = old[head:start], old[len(old) - end : len(old) - end + tail]
    removed, added = old[start : len(old) - end], new[start : len(new) - end]
    body = [f" {x}" for x in before] + [f"-{x}" for x in removed] + [f"+{x}" for x in added]
    return ["--- \n", "+++ \n", "@@ @@\n", *body, *(f" {x}" for x in after)], False


def _lines_of(text: str) -> list[str]:
    """Lines ended by ``\n`` only, each with its end: ``splitlines`` also ends one at a lone
    ``\r``, a form feed or U+2028, which made a one-line edit two lines, one of them "with no
    newline after"."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


#: Built-in tools whose views show some arguments: any other is listed as written (the
#: listing tools show every argument themselves).
_OWN_ARGS_VIEWS = frozenset(
    {"bash", "read", "write", "edit", "TodoWrite", "update_plan", "apply_patch", "web_search"}
)


def build_tool_view(
    call: dict[str, Any],
    result: MessageEntry | None,
    display_path: Any = None,
    *,
    result_odd: bool = True,
) -> ToolView:
    """The view of one ``toolCall`` block and its paired result (None = no result found).
    ``result_odd=False`` when the result's entry shows its own odd values (on its own)."""
    show = display_path or (lambda p: p)
    name = as_str(call.get("name")) or UNNAMED_TOOL
    args = call.get("arguments")
    view = ToolView(call_id=as_str(call.get("id")) or "", name=name, kind="generic")
    if result is not None:
        view.status = "error" if result.is_error else "ok"
        view.result_entry_id = result.id
    if not isinstance(args, dict):
        view.args_json = json_fold(args)
        view.output = _output(_result_text(result), GENERIC_HEAD_LINES)
        view.images = _result_images(result)
    elif (builder := _BUILDERS.get(name)) is None:
        _generic(view, args, result)
    else:
        builder(view, args, result, show)
        other = {k: v for k, v in args.items() if k not in view.used_args}
        if other and name in _OWN_ARGS_VIEWS and view.args_json is None:
            view.other_args = json_fold(other)
    if result is not None:
        _result_extras(view, result, result_odd)
    return view


def _result_extras(view: ToolView, result: MessageEntry, with_odd: bool) -> None:
    """What else the result holds: its ``details`` but what the view showed of them, a
    tool name other than the call's, content not of Pi's types, its images (every tool's:
    a view with no place of its own for them, an edit's or a listing's, dropped them)."""
    if not view.images:
        view.images = _result_images(result)
    details = result.message.get("details")
    if isinstance(details, dict):
        details = {k: v for k, v in details.items() if k not in view.read_details}
    view.details = details_fold(details)
    view.documents = _result_documents(result)
    named = result.message.get("toolName")
    if isinstance(named, str) and named and named != view.name:
        view.notes.append(f"The result names another tool: {named}")
    if with_odd and (odd := odd_values(result)):
        view.result_odd = highlight(json_text(odd, 2), "json")


def _generic(view: ToolView, args: dict[str, Any], result: MessageEntry | None) -> None:
    view.args_json = json_fold(args)
    view.output = _output(_result_text(result), GENERIC_HEAD_LINES)
    view.images = _result_images(result)


def _bash(view: ToolView, args: dict[str, Any], result: MessageEntry | None, show: Any) -> None:
    view.kind = "bash"
    command = _arg(args, "command", view) or ""
    view.command, view.command_rest = fold_command(command)
    timeout = args.get("timeout")
    said = [] if command.strip() else ["no command given"]
    if _number(timeout):
        said.append(f"timeout {timeout:g}s")  # anything else is listed as written
        view.used_args.add("timeout")
    workdir = args.get("workdir")  # Codex's shell tools say where they run
    if isinstance(workdir, str) and workdir:
        said.append(f"in {show(workdir)}")
        view.used_args.add("workdir")
    for key, words in _SHELL_LIMITS.items():  # Codex's exec_command: how long, how much
        value = args.get(key)
        if _number(value) and not isinstance(value, float):
            said.append(words(value))
            view.used_args.add(key)
    view.subtitle = " · ".join(said)
    details = result.details if result else {}
    full = as_str(details.get("fullOutputPath"))
    if bash_output_cut(details):
        where = f" (full output: {show(full)})" if full else ""
        view.notes.append(f"output truncated by Pi{where}")
        view.read_details |= {"truncation", "fullOutputPath"} if full else {"truncation"}
    text = terminal_text(_result_text(result))
    # Pi's bash reports a code only when it fails ("Command exited with code N", last, as
    # Codex's imported shell calls too): a command that succeeded and printed "exit code:
    # 7" last reported none
    failed = result is not None and result.is_error
    match = EXIT_CODE.search(text[-200:]) if failed else None
    if match:
        view.exit_code = int(match.group(1))
    view.output = _output(text, BASH_TAIL_LINES, tail=True)
    view.images = _result_images(result)


#: Codex's exec_command limits, said in words in the call's line (a whole number only:
#: anything else is listed as written).
_SHELL_LIMITS = {
    "yield_time_ms": lambda ms: f"waits up to {ms / 1000:g}s",
    "max_output_tokens": lambda n: f"output up to {n:,} tokens",
}


def _line_number(value: Any) -> bool:
    """Shown as it is by the line range (2.5 or 1e400 would be shown otherwise)."""
    return _number(value) and float(value).is_integer()


def _number(value: Any) -> bool:
    """A line number worth showing: ``1e400`` (JSON for infinity) or a 300-digit one is not."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e12


def read_line_range(args: dict[str, Any]) -> str:
    """``:20-59`` from read's offset (1-based) and limit, ``:20-`` with no limit; nothing
    for values no line number has (the tool head and the outline say the same)."""
    offset, limit = args.get("offset"), args.get("limit")
    if not _number(offset) and not _number(limit):
        return ""
    start = int(offset) if _number(offset) and offset > 0 else 1
    if _number(limit) and limit > 0:
        return f":{start}-{start + int(limit) - 1}"
    return f":{start}-"


def _read(view: ToolView, args: dict[str, Any], result: MessageEntry | None, show: Any) -> None:
    view.kind = "read"
    path = _arg(args, "path", view) or _arg(args, "file_path", view) or ""
    view.path = show(path)
    view.subtitle = read_line_range(args)
    offset, limit = args.get("offset"), args.get("limit")
    view.used_args |= {"offset"} if _line_number(offset) else set()
    view.used_args |= {"limit"} if _line_number(limit) and limit > 0 else set()
    text = _result_text(result)
    language = language_for_path(path)
    view.output = fold_code(text.rstrip("\n"), language, READ_HEAD_LINES)
    view.images = _result_images(result)
    if result is not None and read_output_cut(result.details):
        view.notes.append("the read tool truncated this file for the model (see the last line)")
        view.read_details.add("truncation")


def _write(view: ToolView, args: dict[str, Any], result: MessageEntry | None, show: Any) -> None:
    view.kind = "write"
    path = _arg(args, "path", view) or _arg(args, "file_path", view) or ""
    view.path = show(path)
    view.output = _output(_result_text(result), GENERIC_HEAD_LINES)
    content = _arg(args, "content", view)
    if content is None:  # cut off (the output limit, an abort): not an empty file written
        view.notes.append(WRITE_CUT_OFF)
        return
    view.body, crlf = _written_lines(content, language_for_path(path))
    view.body_eol = _copy_ends(content, crlf)
    count = view.body.total_lines
    view.subtitle = f"{count:,} line{'s' if count != 1 else ''}"
    if crlf:
        view.subtitle += " · CRLF line ends" if crlf == count else f" · {crlf:,} CRLF line ends"


def _written_lines(content: str, language: str | None) -> tuple[Folded, int]:
    """A write's content as its lines, folded, and how many of them end in CRLF. Lines end
    at ``\n`` (``\r\n`` too), as an editor and ``wc -l`` count them: blank lines at the
    end are lines, and show. A ``\r`` cannot show in the page (HTML reads it as a line
    break: a phantom line), so a CRLF end is counted and another ``\r`` shows as ␍."""
    ends = content.count("\n")
    lines = content.split("\n")
    if not lines[-1]:  # after the last line's end (or no content at all)
        lines.pop()
    crlf = sum(1 for line in lines[:ends] if line.endswith("\r"))
    shown = [
        (line[:-1] if at < ends and line.endswith("\r") else line).replace("\r", "␍")
        for at, line in enumerate(lines)
    ]
    folded = fold_chars(shown, READ_HEAD_LINES, False)
    if folded is None:  # the highlighter ends its lines where the code ends: blanks after
        code = "\n".join(shown).rstrip("\n")
        html = highlight_lines(code, language, READ_HEAD_LINES) if code else []
        folded = fold(html + [""] * (len(shown) - len(html)), READ_HEAD_LINES)
    if shown and not shown[-1]:  # a <pre> draws no line after its last line break
        if folded.hidden is not None and not folded.hidden_first:
            folded.hidden = Markup(folded.hidden + "\n")
        else:
            folded.visible = Markup(folded.visible + "\n")
    return folded, crlf


def _copy_ends(content: str, crlf: int) -> str:
    """What "Copy file" needs besides the shown text to give the file as written, as
    page.js reads it: ``n`` no line break at the end (the shown text cannot say: a ``<pre>``
    draws none after its last line), ``r`` every line break is CRLF (shown without the
    ``\r``), ``c`` every ␍ shown is a lone ``\r`` (no ␍ of the file's own), ``b`` a
    byte-order mark first (the highlighter drops it: a Windows script's, say). Mixed ends
    stay LF: which lines had a CRLF would cost a list per write."""
    ends = content.count("\n")
    flags = "" if content.endswith("\n") else "n"
    if ends and crlf == ends:
        flags += "r"
    if content.count("\r") > crlf and "\u240d" not in content:
        flags += "c"
    if content.startswith("\ufeff"):
        flags += "b"
    return flags


#: A write call without its ``content``: it read as "0 lines", an empty file written.
WRITE_CUT_OFF = "the call is incomplete: it was cut off before the content to write"


def _edit(view: ToolView, args: dict[str, Any], result: MessageEntry | None, show: Any) -> None:
    view.kind = "edit"
    path = _arg(args, "path", view) or _arg(args, "file_path", view) or ""
    view.path = show(path)
    diff = as_str(result.details.get("diff")) if result else None
    if diff:  # the edit as the tool made it: it shows the call's well-formed replacements
        view.read_details.add("diff")
        view.diff_gutter = diff_gutter(diff)  # a computed diff's or a patch's is its marker
        probe = ToolView(call_id="", name="edit", kind="edit")
        edit_pairs(args, probe)
        view.used_args |= probe.used_args
    computed_from: int | None = None  # the call's replacements a diff was computed from
    if not diff:
        given = edit_pairs(args, view)
        pairs = [(old, new) for old, new in given if old is not None and new is not None]
        if len(pairs) < len(given):  # cut off (an aborted turn): a diff would invent a deletion
            _show_cut_off_edit(view, given, args)
        diff = computed_diff(pairs, view.path or path) if pairs else ""
        if diff:
            computed_from = len(pairs)
        elif pairs:
            view.notes.append("the call's new text is the same as the text it replaces")
    if diff:
        view.diff = True
        lines = _diff_lines(diff)
        view.body = fold(lines, DIFF_FOLD_LINES)
        added, removed = diff_line_counts(diff)
        view.subtitle = f"+{added} −{removed}"
        failed = result is not None and result.is_error
        view.body_label = edit_diff_label(computed_from, failed)
        if failed:
            view.subtitle += " (not applied)"
    view.output = _output(_result_text(result), GENERIC_HEAD_LINES)


def edit_diff_label(computed_from: int | None, failed: bool) -> str:
    """What an edit's diff is when it is not the tool's own of a change it made (the page's
    label over it, the Markdown's note): computed from the call's ``computed_from``
    replacements (None: the tool's diff), and the edit the model asked for, not made, when
    the call ``failed``. Empty for the tool's diff of an edit made."""
    label = ""
    if computed_from is not None:
        what = f"{computed_from} replacements" if computed_from > 1 else "oldText/newText"
        label = f"diff computed from the call's {what}"
    if failed:
        label = f"{label or 'diff'}: not applied, the edit failed"
    return label


def _show_cut_off_edit(
    view: ToolView, given: list[tuple[str | None, str | None]], args: dict[str, Any]
) -> None:
    """An edit call cut off (an aborted turn) before a replacement's other text: no diff,
    which would invent a deletion. Its one text is shown as sent, in lines (as JSON it was
    one long string of ``\\n\\t\\"`` escapes), plain: highlighted, a text the reader
    does not need to study cost more page than its whole call had; several cut
    replacements stay JSON."""
    cut = [
        (index, old, new) for index, (old, new) in enumerate(given) if old is None or new is None
    ]
    if len(cut) != 1:
        view.notes.append(
            "the call is incomplete (a replacement without its oldText or newText): "
            "no diff, its arguments are shown as sent"
        )
        view.args_json = json_fold(args)
        return
    index, old, new = cut[0]
    sent, missing = ("oldText", "newText") if old is not None else ("newText", "oldText")
    which = f" of replacement {index + 1}" if len(given) > 1 else ""
    view.notes.append(
        f"the call is incomplete: it was cut off before the {missing}{which}, so there is no "
        f"diff; the {sent} it sent:"
    )
    view.args_json = fold_code(
        (old if old is not None else new or "").rstrip("\n"), None, READ_HEAD_LINES
    )


@dataclass(slots=True)
class PatchedFile:
    """One file a Codex patch touches: ``op`` is M (update), A (add) or D (delete)."""

    op: str
    path: str
    moved_to: str | None = None
    added: int = 0
    removed: int = 0

    def label(self, show: Any = None) -> str:
        """``M src/a.py``, ``M a.py -> b.py``, ``A new.py``, paths as the page shows them."""
        show = show or (lambda p: p)
        moved = f" -> {show(self.moved_to)}" if self.moved_to is not None else ""
        return f"{self.op} {show(self.path)}{moved}"


@dataclass(slots=True)
class Patch:
    """A Codex patch read: one unified diff and the files it touches."""

    diff: str
    files: list[PatchedFile]

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed for f in self.files)


def patch_diff(patch: str) -> Patch | None:
    """Codex's ``apply_patch`` text (``*** Begin Patch``, ``*** Update File: p``, hunks of
    +/-/space lines) as a :class:`Patch`; None when the text is not such a patch."""
    lines = patch.strip().replace("\r\n", "\n").split("\n")  # Codex trims it too
    if not lines or lines[0].strip() != "*** Begin Patch":
        return None
    out: list[str] = []
    files: list[PatchedFile] = []
    for line in lines[1:]:
        if line.startswith("*** Update File: "):
            files.append(PatchedFile("M", line[17:]))
            out += [f"--- {line[17:]}", f"+++ {line[17:]}"]
        elif line.startswith("*** Move to: ") and files and out:
            files[-1].moved_to = line[13:]
            out[-1] = f"+++ {line[13:]}"
        elif line.startswith("*** Add File: "):
            files.append(PatchedFile("A", line[14:]))
            out += ["--- /dev/null", f"+++ {line[14:]}", "@@ new file @@"]
        elif line.startswith("*** Delete File: "):
            files.append(PatchedFile("D", line[17:]))
            out += [f"--- {line[17:]}", "+++ /dev/null", "@@ file deleted @@"]
        elif line.strip() == "*** End of File":
            out.append("\\ end of file")
        elif line.strip() == "*** End Patch":
            break
        elif line.startswith("@@"):
            out.append(line if line.rstrip().endswith("@@") and len(line) > 2 else f"{line} @@")
        else:
            if files:
                files[-1].added += line.startswith("+")
                files[-1].removed += line.startswith("-")
            out.append(line)
    return Patch("\n".join(out) + "\n", files) if files else None


def _apply_patch(
    view: ToolView, args: dict[str, Any], result: MessageEntry | None, show: Any
) -> None:
    """Codex's patch tool: the patch as a coloured diff, the files it touches named."""
    patch = _arg(args, "input", view)
    parsed = patch_diff(patch) if patch is not None else None
    if parsed is None:
        view.used_args.discard("input")
        _generic(view, args, result)
        return
    files = parsed.files
    view.kind = "edit"
    view.diff = True
    view.path = show(files[0].path) if len(files) == 1 else None
    if len(files) > 1:
        view.body_label = "files: " + ", ".join(f.label(show) for f in files)
    view.body = fold(_diff_lines(parsed.diff), DIFF_FOLD_LINES)
    view.subtitle = f"+{parsed.added} −{parsed.removed}"
    if len(files) > 1:
        view.subtitle += f" · {len(files)} files"
    if result is not None and result.is_error:
        view.subtitle += " (not applied)"
    view.output = _output(_result_text(result), GENERIC_HEAD_LINES)
    view.images = _result_images(result)


# Pi's grep prints a match as "path:12: text" and a context line as "path-11- text"; the
# earliest separator on the line says which (the text itself may contain either).
_GREP_LINE = re.compile(r"(.*?)(?::\d+: |-\d+- |:\d+:$|-\d+-$)")
# What Pi's listing tools print instead of results, and the notice paragraph they append.
_NOTHING_FOUND = {
    "grep": "No matches found",
    "find": "No files found matching pattern",
    "ls": "(empty directory)",
}
_UNITS = {"grep": ("match", "matches"), "find": ("file", "files"), "ls": ("entry", "entries")}


def _as_text(value: Any, name: str, view: ToolView) -> str | None:
    """A replacement text (None: not given); anything else shown as its JSON (and flagged),
    never as ''."""
    if value is None or isinstance(value, str):
        return value
    view.invalid_args.append(f"edits[].{name}")
    return json_text(value)


_EDIT_KEYS = frozenset({"oldText", "newText"})


def diff_line_counts(diff: str) -> tuple[int, int]:
    """Lines a diff adds and removes (an edit's badge, the Files table's lines)."""
    lines = diff.split("\n")
    if lines[0].startswith("--- ") and len(lines) > 1 and lines[1].startswith("+++ "):
        lines = lines[2:]  # the file header, not a removed and an added line
    added = sum(1 for line in lines if line.startswith("+"))
    return added, sum(1 for line in lines if line.startswith("-"))


def edit_pairs(args: dict[str, Any], view: ToolView) -> list[tuple[str | None, str | None]]:
    """The (old, new) texts an edit call asked for: Pi's ``edits: [{oldText, newText}]``
    (sometimes sent as a JSON string) and the older single ``oldText``/``newText``; None
    where the call has no such text (it was cut off)."""
    pairs = []
    edits = args.get("edits")
    if isinstance(edits, str):
        try:
            edits = json.loads(edits)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than Python parses
            edits = None
    items = edits if isinstance(edits, list) else []
    for item in items:
        item = as_dict(item)
        old, new = item.get("oldText"), item.get("newText")
        if isinstance(old, str) or isinstance(new, str):
            pairs.append((_as_text(old, "oldText", view), _as_text(new, "newText", view)))
    if items and len(pairs) == len(items) and all(set(i) <= _EDIT_KEYS for i in items):
        view.used_args.add("edits")  # otherwise listed as written (a dict, odd keys, text)
    old = _arg(args, "oldText", view)
    old = _arg(args, "old_string", view) if old is None else old
    new = _arg(args, "newText", view)
    new = _arg(args, "new_string", view) if new is None else new
    if old is not None or new is not None:
        pairs.append((old, new))
    return pairs


def listing_count(name: str, text: str) -> str:
    """ "3 matches", "1 file", "40 entries (limit reached)": what the output lists, without
    context lines, the notice paragraph or the tool's "nothing found" line. For the note
    ``--no-tool-output`` left instead, what it says was listed (nothing if it says not)."""
    if left_out := LEFT_OUT_NOTE.fullmatch(text.strip()):
        return left_out.group("listed") or ""
    body, notice = text, ""
    cut = text.rfind("\n\n[")
    if cut >= 0 and text.endswith("]"):
        body, notice = text[:cut], text[cut + 2 :]
    lines = [line for line in body.split("\n") if line.strip()]
    if body.strip() == _NOTHING_FOUND[name]:
        lines = []
    if name == "grep":
        lines = [line for line in lines if _grep_is_match(line)]
    one, many = _UNITS[name]
    shown = f"{len(lines):,} {one if len(lines) == 1 else many}"
    return shown + (" (limit reached)" if "limit reached" in notice else "")


def _grep_is_match(line: str) -> bool:
    found = _GREP_LINE.match(line)
    return found is None or line[found.end(1)] == ":"  # unknown shapes count as matches


def _listing(view: ToolView, args: dict[str, Any], result: MessageEntry | None, show: Any) -> None:
    view.kind = view.name
    path = _arg(args, "path", view) or "."
    view.path = show(path)
    pattern = _arg(args, "pattern", view)
    parts = []
    if pattern:
        parts.append(f"/{pattern}/" if view.name == "grep" else pattern)
    for key, value in args.items():  # every other argument (glob, limit, literal, ...)
        if key not in ("path", "pattern"):
            parts.append(f"{key}={json_text(value)}")
    text = _result_text(result).rstrip("\n")
    view.title = " ".join(parts)
    if result is not None and not result.is_error:  # a failure lists nothing: no count
        view.subtitle = listing_count(view.name, text)
    view.output = _output(text, 20)


def todo_items(args: dict[str, Any]) -> list[dict[str, Any]] | None:
    """A to-do tool's items (Claude Code's TodoWrite: ``todos: [{content, status}]``; Codex's
    update_plan: ``plan: [{step, status}]``, read as the same), or
    None when the arguments are not of that shape."""
    todos = args.get("todos")
    if todos is None and isinstance(args.get("plan"), list):  # Codex's update_plan
        todos = [
            {"content": item["step"], **{k: v for k, v in item.items() if k != "step"}}
            if isinstance(item, dict) and "step" in item
            else item
            for item in args["plan"]
        ]
    if not isinstance(todos, list) or not todos:
        return None
    for item in todos:  # a field the list does not show: the JSON, as the model sent it
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            return None
        if not set(item) <= _TODO_FIELDS:
            return None
    return todos


#: Tools whose arguments are a to-do list: Claude Code's and Codex's.
TODO_TOOLS = frozenset({"TodoWrite", "update_plan"})

#: A to-do item's fields: the list shows all but the present-tense wording of the task.
_TODO_FIELDS = frozenset({"content", "status", "priority", "activeForm", "id"})


_TODO_MARKS = {"completed": "✓", "in_progress": "▸", "pending": "○"}


def todo_done(todos: list[dict[str, Any]]) -> str:
    done = sum(t.get("status") == "completed" for t in todos)
    return f"{done} of {len(todos)} done"


def _todos(view: ToolView, args: dict[str, Any], result: MessageEntry | None, show: Any) -> None:
    """The list as a list: one line per item with its state (✓ done, ▸ under way, ○ to
    do; another state or a priority in words), not the JSON the model sent."""
    todos = todo_items(args)
    if todos is None:
        _generic(view, args, result)
        return
    view.kind = "todo"
    view.used_args.add("todos" if "todos" in args else "plan")
    explanation = args.get("explanation")
    if view.name == "update_plan" and isinstance(explanation, str) and explanation.strip():
        view.notes.append(explanation)
        view.used_args.add("explanation")
    lines = []
    for item in todos:
        status = item.get("status")
        mark = _TODO_MARKS.get(status) if isinstance(status, str) else None
        said = [] if mark else [f"state: {json_text(status)}"]
        if item.get("priority") is not None:
            said.append(f"priority: {json_text(item['priority'])}")
        extra = f"  ({', '.join(said)})" if said else ""
        lines.append(f"{mark or '?'} {item['content']}{extra}")
    view.subtitle = todo_done(todos)
    view.body = fold_code("\n".join(lines), None, READ_HEAD_LINES)
    view.output = _output(_result_text(result), GENERIC_HEAD_LINES)
    view.images = _result_images(result)


def _web_search(
    view: ToolView, args: dict[str, Any], result: MessageEntry | None, show: Any
) -> None:
    """A search the provider ran on its own servers (Codex's ``web_search``): the query,
    and no result to wait for, as none is ever recorded."""
    query = args.get("query")
    queries = args.get("queries")
    if isinstance(query, str):
        view.title = query
        view.used_args |= {"query", "type"}
    elif isinstance(queries, list) and all(isinstance(q, str) for q in queries) and queries:
        view.title = " · ".join(queries)
        view.used_args |= {"queries", "type"}
    else:
        _generic(view, args, result)
    if result is None:
        view.status = "remote"
        view.notes.append(
            "the search ran on the model provider's servers; its results are not in the session"
        )
    else:
        view.output = _output(_result_text(result), GENERIC_HEAD_LINES)


_BUILDERS = {
    "TodoWrite": _todos,
    "update_plan": _todos,
    "apply_patch": _apply_patch,
    "web_search": _web_search,
    "bash": _bash,
    "read": _read,
    "write": _write,
    "edit": _edit,
    "ls": _listing,
    "find": _listing,
    "grep": _listing,
}


def standalone_result_view(
    result: MessageEntry, call: dict[str, Any] | None, show: Any
) -> ToolView:
    """A result whose call is not in the same block (another branch, or no call found)."""
    if call is not None:
        return build_tool_view(call, result, show, result_odd=False)
    view = ToolView(
        call_id=result.tool_call_id or "", name=result.tool_name or "(unknown tool)", kind="generic"
    )
    view.status = "error" if result.is_error else "ok"
    view.result_entry_id = result.id
    view.notes.append("no matching tool call was found above this result")
    view.output = _output(result.text, GENERIC_HEAD_LINES)
    view.images = _result_images(result)
    _result_extras(view, result, with_odd=False)
    return view
