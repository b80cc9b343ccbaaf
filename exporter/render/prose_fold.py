"""A long pasted prompt folded after its first screen, never cut.

A user who pastes a 500-line log or file into a prompt made a card many screens tall that
the reader had to scroll past. The prompt is parsed once and its blocks are split, not its
source: the cut falls between two top-level blocks, or inside a long top-level code block,
paragraph, list or table at a line, item or row, so both parts render as they would in the
whole (a code fence is never broken, a numbered list goes on counting, and link references
work on both sides). A prompt of a few very long lines (pasted minified JSON) is cut
inside a line, at a space where it can.
"""

from __future__ import annotations

import html
import re
from typing import Any

from markupsafe import Markup

from exporter.render.folding import cut_point
from exporter.render.markup import (
    fence_language,
    highlight_lines,
    markdown,
    note_top_heading,
    parse_markdown,
    plain_block,
    render_tokens,
)

LONG_LINES = 150  # fold a prompt longer than this many lines...
LONG_CHARS = 15_000  # ...or characters
HEAD_LINES = 40  # show about this many lines
HEAD_CHARS = 4_000  # or this many characters, whichever comes first
MIN_HIDDEN_LINES = 20  # folding less is not worth a click
MIN_HIDDEN_CHARS = 2_000  # ... nor, for a fold inside a line, less than this
SHOWN_MAX_CHARS = 3 * HEAD_CHARS  # a cut between lines that shows more cuts inside a line

_LEAF_CODE = ("fence", "code_block")
_CONTAINERS = {  # a long top-level block of parts: split between two of them
    "bullet_list_open": "list_item_open",
    "ordered_list_open": "list_item_open",
    "table_open": "tr_open",
}


def fold_prose(text: str) -> tuple[Markup, Markup | None, str]:
    """``(shown, folded or None, what the fold holds)`` of a prompt's Markdown."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if len(lines) <= LONG_LINES and len(text) <= LONG_CHARS:
        return markdown(text), None, ""
    parsed = parse_markdown(text)
    if isinstance(parsed, str):
        return _fold_plain(text, lines, parsed)
    tokens, env = parsed
    note_top_heading(tokens, env)
    by_lines = _fold_by_lines(tokens, lines)
    if by_lines is not None and by_lines[3] <= SHOWN_MAX_CHARS:
        return render_tokens(by_lines[0], env), render_tokens(by_lines[1], env), by_lines[2]
    # a few huge lines: the cut between lines came after one of them (59,000 characters of
    # pasted JSON before 25 short lines showed whole), so cut inside the line instead
    in_line = _split_in_line(tokens, lines) if len(text) > LONG_CHARS else None
    if in_line is not None:
        folded = render_tokens(in_line[1], env)
        count = len(html.unescape(_TAG.sub("", str(folded))).strip())
        if count >= MIN_HIDDEN_CHARS:
            summary = f"{count:,} more characters of this message"
            return render_tokens(in_line[0], env), folded, summary
    if by_lines is not None:
        return render_tokens(by_lines[0], env), render_tokens(by_lines[1], env), by_lines[2]
    return render_tokens(tokens, env), None, ""


def _fold_plain(text: str, lines: list[str], why: str) -> tuple[Markup, Markup | None, str]:
    """A long prompt shown as plain text, folded after about a screen as Markdown is."""
    cut = min(sum(len(line) + 1 for line in lines[: _cut_line(lines)]), SHOWN_MAX_CHARS)
    hidden = len(text) - cut
    if hidden < MIN_HIDDEN_CHARS:
        return plain_block(text, why), None, ""
    summary = f"{hidden:,} more characters of this message"
    return plain_block(text[:cut], why), plain_block(text[cut:]), summary


def _fold_by_lines(tokens: list[Any], lines: list[str]) -> tuple[list, list, str, int] | None:
    """Head and tail tokens cut between lines, what the fold holds, and how many
    characters the head shows; None when no cut hides ``MIN_HIDDEN_LINES`` lines."""
    split = _split(tokens, _cut_line(lines))
    if split is None:
        return None
    head, tail, first_hidden = split
    hidden = lines[first_hidden:]
    while hidden and not hidden[-1].strip():  # trailing blank lines are no more lines
        hidden.pop()
    if sum(1 for line in hidden if line.strip()) < MIN_HIDDEN_LINES:
        return None
    count = len(hidden)
    summary = f"{count:,} more line{'s' if count != 1 else ''} of this message"
    return head, tail, summary, sum(len(line) + 1 for line in lines[:first_hidden])


_TAG = re.compile(r"<[^>]*>")


def _cut_line(lines: list[str]) -> int:
    """The first line past about a screen: ``HEAD_LINES`` lines or ``HEAD_CHARS`` characters."""
    size = 0
    for index, line in enumerate(lines):
        if index >= HEAD_LINES or size >= HEAD_CHARS:
            return max(index, 1)
        size += len(line) + 1
    return len(lines)


def _split(tokens: list[Any], cut: int) -> tuple[list, list, int] | None:
    """Head tokens, tail tokens and the first source line of the tail: at the first top-level
    block that starts at ``cut`` or later, or inside a code block or paragraph over it."""
    for index, token in enumerate(tokens):
        if token.level != 0 or token.nesting == -1 or not token.map:
            continue
        start, end = token.map
        if start >= cut:
            return tokens[:index], tokens[index:], start
        if end <= cut:
            continue
        if token.type in _LEAF_CODE:
            parts = _split_code(token, cut)
            if parts:
                return [*tokens[:index], parts[0]], [parts[1], *tokens[index + 1 :]], cut
        elif token.type in _CONTAINERS:
            parts = _split_container(tokens, index, cut)
            if parts:
                return parts
        elif token.type == "paragraph_open" and index + 2 < len(tokens):
            halves = _split_paragraph(tokens[index : index + 3], cut)
            if halves:
                head, tail, first = halves
                return tokens[:index] + head, tail + tokens[index + 3 :], first
    return None


def _split_code(token: Any, cut: int) -> tuple[Any, Any] | None:
    """A code block in two at source line ``cut``. It is highlighted whole and its lines
    shared out: highlighted apart, a string or comment open at the cut coloured the rest of
    the block wrongly."""
    first = token.map[0] + (1 if token.type == "fence" else 0)  # the fence's own line
    keep = cut - first
    lines = highlight_lines(token.content.rstrip("\n"), fence_language(token))
    if keep < 1 or keep >= len(lines):
        return None
    head = token.copy(
        map=[token.map[0], cut], meta={"highlighted": lines[:keep], "cut_after": True}
    )
    tail = token.copy(
        map=[cut, token.map[1]], meta={"highlighted": lines[keep:], "continued": True}
    )
    return head, tail


def _split_paragraph(triple: list[Any], cut: int) -> tuple[list[Any], list[Any], int] | None:
    """A paragraph (open, inline, close) in two at a line break near source line ``cut``: a
    pasted log with no blank line in it is one paragraph. The break chosen lies outside any
    emphasis or link, and its parsed tokens are shared out as they are, so both halves
    render as the whole did. Also returns the source line the second half starts at."""
    opening, inline, closing = triple
    keep = cut - opening.map[0]
    breaks = 0
    children = inline.children or []
    for index, child in enumerate(children):
        if child.type not in ("softbreak", "hardbreak"):
            continue
        breaks += 1
        if breaks >= keep and child.level == 0 and index + 1 < len(children):
            start = opening.map[0] + breaks
            halves = (children[:index], children[index + 1 :])
            maps = ([opening.map[0], start], [start, opening.map[1]])
            parts = [
                [opening.copy(map=where), inline.copy(children=half, map=where), closing.copy()]
                for half, where in zip(halves, maps, strict=True)
            ]
            return parts[0], parts[1], start
    return None


def _split_container(tokens: list[Any], index: int, cut: int) -> tuple[list, list, int] | None:
    """A top-level list or table in two, before its first item or body row that starts at
    source line ``cut`` or later: a pasted list of 300 files was one block, never folded.
    Each half is closed and opened as the whole was; a numbered list's second half starts
    at the number it had (``<ol start>``), a table's repeats its header row. Also returns
    the second half's first line."""
    opening = tokens[index]
    part = _CONTAINERS[opening.type]
    level = opening.level + (1 if part == "list_item_open" else 2)  # a row is in tbody
    end = next(
        (
            j
            for j in range(index + 1, len(tokens))
            if tokens[j].level == 0 and tokens[j].nesting == -1
        ),
        None,
    )
    if end is None:
        return None
    parts = [
        k for k in range(index + 1, end) if tokens[k].type == part and tokens[k].level == level
    ]
    for number, k in enumerate(parts[1:], start=1):  # never before the first part
        if not tokens[k].map or tokens[k].map[0] < cut:
            continue
        start = tokens[k].map[0]
        head_close = [tokens[end].copy()]
        tail_open = [opening.copy(map=[start, opening.map[1]], attrs=dict(opening.attrs))]
        if opening.type == "ordered_list_open":
            tail_open[0].attrs["start"] = int(opening.attrs.get("start", 1)) + number
        elif opening.type == "table_open":  # its header row again, to name the columns
            body = next(j for j in range(k, index, -1) if tokens[j].type == "tbody_open")
            head_close.insert(0, tokens[end - 1].copy())  # tbody_close
            tail_open += tokens[index + 1 : body]  # thead
            tail_open.append(tokens[body].copy(map=[start, tokens[body].map[1]]))
        return [*tokens[:k], *head_close], [*tail_open, *tokens[k:]], start
    return None


def _split_in_line(tokens: list[Any], lines: list[str]) -> tuple[list, list] | None:
    """Head and tail tokens cut inside a top-level paragraph about ``HEAD_CHARS`` characters
    into the prompt (at a space where one is near), for a prompt of a few very long lines:
    outside any emphasis or link, so both halves render as the whole did."""
    line_starts = [0]
    for line in lines:
        line_starts.append(line_starts[-1] + len(line) + 1)
    for index, opening in enumerate(tokens):
        if opening.type != "paragraph_open" or opening.level or not opening.map:
            continue
        if index + 2 >= len(tokens) or line_starts[opening.map[1]] <= HEAD_CHARS:
            continue
        inline, closing = tokens[index + 1], tokens[index + 2]
        children = inline.children or []
        size = line_starts[opening.map[0]]
        for k, child in enumerate(children):
            length = len(child.content) if child.type in ("text", "code_inline") else 1
            if child.type == "text" and child.level == 0 and size + length > HEAD_CHARS:
                at = cut_point(child.content, max(0, HEAD_CHARS - size), False)[0]
                if 0 < at < len(child.content):
                    head_part = [*children[:k], child.copy(content=child.content[:at])]
                    tail_part = [child.copy(content=child.content[at:]), *children[k + 1 :]]
                elif k > 0:  # a cut before this child: between two parts of the line
                    head_part, tail_part = children[:k], children[k:]
                else:
                    break
                head = [opening.copy(), inline.copy(children=head_part), closing.copy()]
                tail = [opening.copy(), inline.copy(children=tail_part), closing.copy()]
                return [*tokens[:index], *head], [*tail, *tokens[index + 3 :]]
            size += length
        return None  # the paragraph over the mark has nowhere to cut: fold nothing
    return None
