"""Pieces of Markdown that keep untrusted text as text.

A session's own words are Markdown already and pass through, but raw HTML in them stays
text (as on our page, where markdown-it runs with HTML off) and a code fence they open and
never close is closed, so it cannot swallow the rest of the document. Everything else a
session supplies (tool output, paths, names, ids) goes into code spans, code fences or
escaped text.
"""

from __future__ import annotations

import bisect
import functools
import re

from markdown_it import MarkdownIt

from exporter.formatting import plain_text_shown, replace_surrogates

#: ASCII punctuation that can start markup inline (CommonMark lets any of it be escaped).
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~!&])")
_BACKTICKS = re.compile(r"`+")
#: An opening or closing code fence: up to three spaces, then ``` or ~~~ (or longer).
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
#: What makes a message's Markdown worth parsing: markup to escape or a code fence.
_MAY_NEED_WORK = re.compile(r"<|!\[|```|~~~")
#: A "#" heading, or a line of "=" or "-" under a line of text (a setext heading's underline)
_MAY_BE_HEADING = re.compile(r"#|\n {0,3}(?:=+|-+)[ \t]*(?:\n|$)")
#: A ``<`` that would open a tag, a comment, a declaration or an autolink but a web or mail
#: one (``<https://…>`` escaped was linked by GitHub with a "%3E" tail; its scheme is safe,
#: and the look to its ">" stops at the next "<": linear); a ``![`` that would open an
#: image (a viewer would load it: as on the page, it stays a link).
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])(?!(?i:https?|mailto):[^\x00-\x20<>]*>)|!(?=\[)")


def shown(text: str) -> str:
    """Session text as a reader may see it: lone surrogates as U+FFFD, terminal codes
    dropped, hidden controls as signs, hidden tag text decoded, and every line ending a
    ``\n``. Every helper here starts with it, so what it decodes (``<img …>`` spelled in
    tag characters) is then escaped or fenced like any other text. A lone ``\r`` ends a
    line for a Markdown renderer too: left in, it took a label out of its code span (as
    live HTML) and put the parser's line numbers out of step with ours (a crash)."""
    text = plain_text_shown(replace_surrogates(text))
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def escaped(text: str) -> str:
    """``text`` on one line, every character that could start markup escaped."""
    return _INLINE_SPECIAL.sub(r"\\\1", " ".join(shown(text).split()))


def code_span(text: str) -> str:
    """``text`` on one line as inline code, whatever backticks it holds."""
    flat = " ".join(shown(text).split("\n"))
    if not flat.strip():
        return "`\u2420`" if not flat else f"` {flat} `"  # ␠: nothing visible was given
    longest = max((len(run) for run in _BACKTICKS.findall(flat)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if flat[0] == "`" or flat[-1] == "`" or (flat[0] == flat[-1] == " ") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def fenced(text: str, info: str = "") -> str:
    """``text`` as a code block: a fence longer than any run of backticks inside."""
    text = shown(text)
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    info = info if info and "`" not in info and not any(c.isspace() for c in info) else ""
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{info}\n{body}{fence}"


def quoted(markdown: str) -> str:
    """A block of Markdown inside a block quote (every line prefixed)."""
    return "\n".join(f"> {line}" if line else ">" for line in markdown.split("\n"))


def prose(text: str, below: int = 0) -> str:
    """A message's own Markdown, made safe to embed: raw HTML escaped outside code, a code
    fence left open at its end closed, and its headings moved ``below`` levels down (at
    most to 6), under the document's own. Which lines are code is CommonMark's answer
    (markdown-it's block parse), not a guess: a fence inside a list item ends with it. The
    answer is asked again after escaping (``<script>`` opened an HTML block that held a
    fence; as text, the fence is one) until it holds; escaping never adds a line."""
    text = shown(text).replace("\r\n", "\n")
    if not _MAY_NEED_WORK.search(text) and not (below and _MAY_BE_HEADING.search(text)):
        return text.strip("\n")  # no markup to escape, no fence, no heading: as it is
    lines = text.split("\n")
    parsed = lines
    code, open_fence, headings = _code_lines(parsed)
    for _ in range(_ROUNDS):
        out = _escaped_outside(lines, code)
        if out == parsed:  # the parse was of this very text
            break
        parsed = out
        again, open_fence, headings = _code_lines(parsed)
        if again == code:
            break
        code = again
    else:  # not settled: whatever is not code now is escaped
        out = _escaped_outside(lines, code)
    gone: set[int] = set()  # the lines a setext heading's title took after its first
    for number, (level, underline) in headings.items() if below else ():
        if underline is None:  # "## Title"
            out[number] = "#" * min(6, level + below) + out[number].lstrip(" ")[level:]
            continue
        # "Title" over "===" or "---": the same heading in the "#" form, the underline gone
        # (it stayed a level 1 or 2 heading in the middle of the transcript)
        title = " ".join(line.strip() for line in out[number:underline])
        out[number] = "#" * min(6, level + below) + " " + title
        gone.update(range(number + 1, underline + 1))
    out = [line for number, line in enumerate(out) if number not in gone]
    if open_fence:
        while out and not out[-1].strip():
            out.pop()
        out.append(open_fence)
    return "\n".join(out).strip("\n")


def _escaped_outside(lines: list[str], code: list[bool]) -> list[str]:
    return [
        line if in_code else _inline_safe(line) for line, in_code in zip(lines, code, strict=True)
    ]


_ROUNDS = 6


def _code_lines(
    lines: list[str],
) -> tuple[list[bool], str | None, dict[int, tuple[int, int | None]]]:
    """Which lines are inside a code block, the fence left open at the end (if any), and
    the top-level headings: first line -> (level, the line of a setext heading's underline,
    None for an ATX heading)."""
    code = [False] * len(lines)
    open_fence = None
    headings: dict[int, tuple[int, int | None]] = {}
    for token in _block_parser().parse("\n".join(lines)):
        if token.type == "heading_open" and token.level == 0 and token.map:
            start, end = token.map
            if token.markup[:1] == "#":
                headings[start] = (len(token.markup), None)
            elif token.markup[:1] in "=-" and end - 1 > start:  # setext: text, then underline
                headings[start] = (1 if token.markup[:1] == "=" else 2, end - 1)
        if token.type not in ("fence", "code_block") or not token.map:
            continue
        start, end = token.map
        first = start + 1 if token.type == "fence" else start  # a fence's opening is text
        for number in range(first, min(end, len(lines))):
            code[number] = True
        if token.type == "fence" and token.level == 0:  # only the text's end ends it
            closer = _FENCE.fullmatch(lines[end - 1]) if end - 1 > start else None
            if closer is None or not _closes(closer, token.markup):
                open_fence = token.markup
    return code, open_fence, {line: said for line, said in headings.items() if said[0]}


@functools.cache
def _block_parser() -> MarkdownIt:
    """CommonMark, raw HTML on: this parse only finds the code and the headings, as a
    viewer would; inline parsing (half the time) is not needed for that."""
    return MarkdownIt("commonmark").disable("inline")


def _closes(match: re.Match[str], opening: str) -> bool:
    run = match.group(1)
    return run[0] == opening[0] and len(run) >= len(opening) and not match.group(2).strip()


def _inline_safe(line: str) -> str:
    """A line with every tag-opening ``<`` outside code spans written ``&lt;`` (and every
    image's ``!`` escaped). Spans are taken within the line only: one that a viewer joins
    across lines gets ``&lt;`` shown inside it, never the other way round. Linear in the
    line: each span's closing run is looked up, not searched for (a pasted minified file
    is one line of many backticks and brackets)."""
    if "<" not in line and "![" not in line:
        return line
    runs = [(found.start(), found.end()) for found in _BACKTICKS.finditer(line)]
    starts_by_length: dict[int, list[int]] = {}
    for index, (begin, end) in enumerate(runs):
        starts_by_length.setdefault(end - begin, []).append(index)
    out: list[str] = []
    position = 0
    index = 0
    while index < len(runs):
        begin, end = runs[index]
        if begin < position:
            index += 1
            continue
        if _backslashes_before(line, begin) % 2:  # its first backtick is text
            begin += 1
        closer = _closing_run(starts_by_length.get(end - begin, []), index) if end > begin else None
        if closer is None:  # no span opens here: the backticks are text
            index += 1
            continue
        out.append(_escape_tags(line[position:begin]))
        position = runs[closer][1]
        out.append(line[begin:position])
        index = closer + 1
    out.append(_escape_tags(line[position:]))
    return "".join(out)


def _closing_run(same_length: list[int], opener: int) -> int | None:
    """The first run after ``opener`` of the opener's length (CommonMark's closing run)."""
    at = bisect.bisect_right(same_length, opener)
    return same_length[at] if at < len(same_length) else None


def _backslashes_before(text: str, position: int) -> int:
    count = 0
    while position > count and text[position - count - 1] == "\\":
        count += 1
    return count


def _escape_tags(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        if _backslashes_before(text, match.start()) % 2:  # escaped already: text
            return match.group()
        return "&lt;" if match.group() == "<" else "\\!"

    return _TAG_START.sub(one, text)
