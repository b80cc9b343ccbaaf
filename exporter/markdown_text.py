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
import html
import itertools
import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

from exporter.formatting import plain_text_shown, replace_surrogates

#: ASCII punctuation that can start markup inline (CommonMark lets any of it be escaped);
#: an "&" only where it could start a character reference, and no "!" (an image needs the
#: "[" after it, always escaped): "Done\\!" and "a \\&\\& b" were noise in the source.
#: No "|": this text goes on a line of its own or in a list item, never into a table
#: (``_table`` escapes a cell's pipes): "build 2>&1 \\| head" was noise. No ">" but at the
#: start (a quote): every "<" is "&lt;", so no ">" closes a tag or an autolink.
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<#~]|&(?=#|[A-Za-z0-9]+;))")
_BACKTICKS = re.compile(r"`+")
#: An opening or closing code fence: up to three spaces, then ``` or ~~~ (or longer).
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
#: What makes a message's Markdown worth parsing: markup to escape, a code fence, a link
#: reference definition (``]:``) or an inline link's destination (``](``).
_MAY_NEED_WORK = re.compile(r"<|!\[|```|~~~|\][:(]")
#: A "#" heading, or a line of "=" or "-" under a line of text (a setext heading's underline),
#: also behind a quote's ">" or a list item's indent (they were left unmoved, an h1 mid-transcript)
_MAY_BE_HEADING = re.compile(r"#|\n[ \t>]*(?:=+|-+)[ \t]*(?:\n|$)")
#: Unicode's blanks past ASCII (``str.isspace`` and JavaScript's ``\\s``, U+FEFF too): marked
#: trims them off a link's destination, so ``(\u00a0javascript:…)`` was a live link there.
_WIDE_BLANKS = "\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
#: A ``<`` that would open a tag, a comment, a declaration or an autolink but a web or mail
#: one (``<https://…>`` escaped was linked by GitHub with a "%3E" tail; its scheme is safe,
#: and the look to its ">" stops at the next "<": linear); a ``![`` that would open an
#: image (a viewer would load it: as on the page, it stays a link); a ``](`` whose
#: destination could be unsafe (``unsafe_destination``): its first character past spaces,
#: controls, "<" and ">" is an unsafe scheme's first letter, an entity's "&" or an escape's
#: backslash, or there is none in reach. Every other ``](`` is left alone unread (reading
#: each one made 1 MB of ``](`` take 2.7 s); one with a backtick in reach of its "(" is
#: read too (``_links_near_backticks``). And every ``]:``, written ``]\:``: no link
#: reference definition forms from the text (markdown-it refused ``[1\n]: https://a.b(``,
#: so it was not made text, and GitHub took it: every "[1]" in the document linked there).
_SKIPPED = rf"[\x00-\x20\x7f{_WIDE_BLANKS}<>]"
_TAG_START = re.compile(
    r"(?<!\\)(\\*)(<(?=[A-Za-z/!?])(?!(?i:https?|mailto):[^\x00-\x20<>`]*>)|!(?=\[)"
    rf"|\](?=:|\((?:{_SKIPPED}*(?:[jvdfJVDF&\\]|\Z)|{_SKIPPED}{{150}})))"
)
_LINK = re.compile(r"\](?=\()")
#: Where GitHub's extension links a bare web address (it takes in what follows up to an
#: ASCII space or a "<", a backslash or backtick too), and where such an address ends.
#: Any "www." counts: GitHub reads it at the start of a quote's or a table cell's text too
#: (``>www.a.b`<img>` ``); one too many only escapes more. The end is ASCII whitespace
#: (a no-break space ended it here, not there) or a "<" that stays raw: one written
#: ``&lt;`` does not end it, and the address took in the backticks after it.
_BARE_ADDRESS = re.compile(r"(?<![A-Za-z])(?i:https?|ftp)://(?=[\w-])|(?i:www)\.(?=[\w-])")
_ADDRESS_END = re.compile(r"[ \t\n\v\f\r]|<(?![A-Za-z/!?])")
#: A container's marks at a line's start inside a link destination's look-ahead.
_LINE_START = re.compile(r"\n[ \t>]*")
#: Containers' marks before a line's text: spaces, ``>`` and list markers.
_CONTAINERS = r"(?:[ \t>]|[-*+][ \t]|\d{1,9}[.)][ \t])*"
#: A line that opens a link reference definition (``[docs]: https://…``) or a GitHub
#: footnote (``[^1]: …``), whatever container it is in; ``_OPENING`` for a line the parse
#: found is one (its label may go on over the next lines).
_DEFINITION = re.compile(rf"({_CONTAINERS})\[(?=[^\]]*\]:)")
_OPENING = re.compile(rf"({_CONTAINERS})\[")
#: A line whose text starts with a tag: cmark (GitHub) starts an HTML block there even on
#: a paragraph's lazy continuation line (``- `a\n<img …>\n` ``), where markdown-it saw a
#: code span's text; its "<" is "&lt;" in a code span too.
_LINE_TAG = re.compile(rf"({_CONTAINERS})<(?=[A-Za-z/!?])(?!(?i:https?|mailto):[^\x00-\x20<>`]*>)")
#: A line's container marks, then an ATX heading's ``#`` run.
_ATX = re.compile(rf"({_CONTAINERS}?)(#{{1,6}})(?=[ \t]|$)")
#: The first line of a setext heading: container marks, then the title.
_FIRST_TITLE_LINE = re.compile(rf"({_CONTAINERS})(.*)")
#: Link destinations a viewer without a URL filter would run or open locally: these links
#: become text (the page's markdown-it refuses them; cmark --unsafe does not).
_UNSAFE_SCHEMES = ("javascript", "vbscript", "data", "file")
_SCHEME = re.compile(r"([a-z][a-z0-9+.-]{0,31}):")
_BACKSLASH_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_SPACE_AND_CONTROLS = re.compile(rf"[\x00-\x20\x7f{_WIDE_BLANKS}]+")
#: How much of a destination is read for its scheme: an encoded scheme
#: (``&#0000106;`` per letter) fits in it; a longer run without one is taken as unsafe.
_DESTINATION_WINDOW = 160
#: A web address in escaped text: an autolink ``<https://…>`` (kept as it is: safe, and
#: escaped GitHub linked it with a "%5C%3E" tail) or a bare one (GitHub links it as written,
#: an escape's backslash too: only what could make markup in it is escaped).
#: Not after a letter (GitHub links neither "xhttps://" nor "xwww."; the "**" in them was
#: left live), and to ASCII whitespace only.
_WEB_ADDRESS = re.compile(
    r"(<(?i:https?|mailto):[^\x00-\x20<>]*>)"
    r"|(?:(?<![A-Za-z])(?i:https?://)|(?<![^ *_~(])(?i:www\.))[^ \t\n\v\f\r<]+"
)
_IN_ADDRESS = re.compile(r"([\\`\[\]|!])")
#: What an address written as ``<autolink>`` must not hold (a table cell's ``|`` too, and
#: ``&``: inside ``<…>`` GitHub reads ``&amp;`` as ``&``, where in a bare address it did not).
_NOT_IN_ANGLES = re.compile(r"[\\`\[\]|!<>&]")
#: What a bare address is written ``<…>`` for, as long as it holds none of the rest: an
#: escape's backslash before them was in GitHub's link (``https://a.b/\\[x\\]``).
_BRACKETS_AND_PIPES = re.compile(r"[\[\]|]")
_NOT_IN_BRACKETED = re.compile(r"[\\`!>&]")
#: What GitHub trims from a bare address's end (with ``&name;``, see :func:`_entity_tail`).
_TRIMMED = frozenset("?!.,:*_~'\")")


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
    """``text`` on one line, every character that could start markup escaped (``@name``
    and ``#123`` stay as written: pasted into GitHub they notify and link as in any
    comment, as they do in the messages' own text)."""
    flat = " ".join(shown(text).split())
    if "://" not in flat and "www." not in flat:
        return _escape_inline(flat)
    out: list[str] = []
    position = 0
    for link in _WEB_ADDRESS.finditer(flat):
        out.append(_escape_inline(flat[position : link.start()]))
        if link.group(1):
            out.append(link.group())
            position = link.end()
            continue
        address = link.group()[: _entity_tail(link.group())]
        before_tag = address == link.group() and flat.startswith("<", link.end())
        if before_tag:  # GitHub's end is before the "<" (its "&lt;" it took in)
            address = _untrimmed(address)
        bracketed = address == link.group() and _BRACKETS_AND_PIPES.search(address)
        if bracketed:  # escaped, GitHub showed (and linked) the backslashes too
            address = _untrimmed(address)
        if ((before_tag or address != link.group()) and _angles_take(address)) or (
            bracketed and "://" in address and not _NOT_IN_BRACKETED.search(address)
        ):
            out.append(f"<{address}>")  # ends there: its tail, escaped, stays text
        else:
            address = link.group()
            out.append(_IN_ADDRESS.sub(r"\\\1", address))
        position = link.start() + len(address)
    out.append(_escape_inline(flat[position:]))
    return "".join(out)


def _angles_take(address: str) -> bool:
    """Whether a bare web ``address`` may be written as an autolink ``<…>``: one that ends
    where the page's does, where GitHub took the ``&lt;`` (or ``&gt;``) after it in
    (``http://a.b/users/&lt;id>`` linked ``…/&amp;lt;id%3E``)."""
    return "://" in address and not _NOT_IN_ANGLES.search(address)


def _untrimmed(address: str) -> str:
    """A bare address without the punctuation GitHub and the page leave out of its end (a
    ")" only when unbalanced)."""
    end = len(address)
    unbalanced = address.count(")") - address.count("(")  # counted once: linear
    while end and address[end - 1] in _TRIMMED:
        if address[end - 1] == ")":
            if unbalanced <= 0:
                break
            unbalanced -= 1
        end -= 1
    return address[:end]


def _entity_tail(address: str) -> int:
    """Where a bare address's tail of character references (``&gt;``, with any trimmed
    punctuation after it) starts, else its length: GitHub leaves such a tail out of the
    link and then reads it as a reference (``https://a.b/x&gt;`` showed ``x>``), so it is
    written as escaped text. Read from the end, so a long address costs one pass."""
    end = cut = len(address)
    while end:
        if address[end - 1] in _TRIMMED:
            end -= 1
            continue
        if address[end - 1] != ";":
            break
        start = end - 1
        while start and address[start - 1].isascii() and address[start - 1].isalnum():
            start -= 1
        if start == end - 1 or not start or address[start - 1] != "&":
            break
        end = cut = start - 1
    return cut


def _escape_inline(text: str) -> str:
    """Every character that could start markup escaped; ``<`` as ``&lt;``: GitHub takes a
    backslash into a bare web address before it (``https://a.b/x\\<img …>``), which left
    the ``<`` open, raw HTML to a viewer that allows it."""
    said = _INLINE_SPECIAL.sub(r"\\\1", text)
    said = "\\" + said if said.startswith(">") else said  # a line's first ">" quotes it
    return said.replace("\\<", "&lt;") if "<" in said else said


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
    """A block of Markdown inside a block quote (every line prefixed). Tabs in a line's
    leading part (blanks, quote marks, list markers) become the spaces they stood for:
    after "> " a tab reaches the next tab stop two columns on, not four, so a line
    :func:`prose` left as indented code became a paragraph (a thinking block's
    ``\t<img onerror=…>`` or ``>>  \t<img …>`` went out as live HTML) and a paragraph
    became code. A line of blanks (and quote marks) loses its blanks (``_evened``)."""
    lines = _evened(markdown.split("\n"), marked_only=False)
    return "\n".join(f"> {line}" if line else ">" for line in lines)


#: A line of nothing but blanks and quote marks, ending in a blank.
_BLANK_LINE = re.compile(r"[ \t>]*[ \t]")


def _evened(lines: list[str], marked_only: bool) -> list[str]:
    """``lines`` read alike by every CommonMark parser, and by them after quoting: a line of
    blanks (after any quote marks) without its blanks, and the tabs in a line's leading
    part (its containers' marks, ``_CONTAINERS``) as spaces to the same column (tab stops
    of 4, as CommonMark counts). ``marked_only``: only in a part with a quote mark or a
    list marker (a leading tab alone reads the same everywhere). Lines inside a fence at
    the top level are kept as written (a diff's ``-\t`` and Go's tabs): there no
    container is continued, so no tab and no blank can change what they are; but for
    quoting (not ``marked_only``) one whose text starts with a fence's run (`` \t~~~``,
    four columns in: code; two after "> ": the fence's end).

    cmark (GitHub) kept a list item that opened empty ("1.") across a line of spaces as
    wide as its marker, where CommonMark (markdown-it) ended it: the next line's fence or
    ``<img …>`` was the item's on GitHub and after it here (the fence this module closes
    landed outside the item; the rest of the document was code). markdown-it counted a
    tab after a quote mark short (``>> * \t<img …>`` was code to it, an image to cmark)."""
    uneven = [
        number
        for number, line in enumerate(lines)
        if (line[-1:] in (" ", "\t") and _BLANK_LINE.fullmatch(line))
        or ("\t" in line and _uneven_lead(line, marked_only))
    ]
    if not uneven:
        return lines
    kept = _top_fence_lines(lines).intersection(uneven)
    if not marked_only:  # quoting moves tab stops: a fence's run after blanks could close it
        kept = {n for n in kept if lines[n].lstrip(" \t")[:1] not in ("`", "~")}
    out = list(lines)
    for number in uneven:
        out[number] = out[number] if number in kept else _even(lines[number])
    if kept and not kept <= _top_fence_lines(out):  # evening moved a fence: even all
        out = [_even(line) if number in uneven else line for number, line in enumerate(lines)]
    return out


def _uneven_lead(line: str, marked_only: bool) -> bool:
    lead = _prefix(line)
    return "\t" in lead and (not marked_only or bool(lead.strip(" \t")))


def _even(line: str) -> str:
    if _BLANK_LINE.fullmatch(line):
        return line.rstrip(" \t")
    lead = _prefix(line)
    return lead.expandtabs(4) + line[len(lead) :]


def _top_fence_lines(lines: list[str]) -> set[int]:
    """The lines inside fenced code at the top level, or in block quotes only (a `>` goes on
    with a quote whatever follows it, so a tab after it is the code's own: Go's indent, a
    diff's ``-\t``), but not one whose code starts with a fence's run there (after a tab,
    whether it closes the fence is where the parsers differ). None when the parse fails."""
    try:
        tokens = _tokens("\n".join(lines))
    except _Unreadable:
        return set()
    found: set[int] = set()
    open_containers: list[str] = []
    for token in tokens:
        if token.nesting == 1:
            open_containers.append(token.type)
        elif token.nesting == -1 and open_containers:
            open_containers.pop()
        if token.type != "fence" or not token.map:
            continue
        inside = range(token.map[0] + 1, min(token.map[1], len(lines)))
        if token.level == 0:
            found.update(inside)
        elif all(kind == "blockquote_open" for kind in open_containers):
            found.update(n for n in inside if _code_start(lines[n]) not in ("`", "~"))
    return found


def _code_start(line: str) -> str:
    """The first character after a line's container marks."""
    return line[len(_prefix(line)) :][:1]


def prose(text: str, below: int = 0) -> str:
    """A message's own Markdown, made safe to embed: raw HTML escaped outside code, a code
    fence left open at its end closed, links to ``javascript:`` (and the like) made text,
    link reference definitions made text (in one document they are global: a definition
    in one message linked ``[docs]`` in another), and its headings moved below a heading of
    level ``below``: the message's top heading one level under it, the rest kept apart (at
    most to 6). Which lines are code is CommonMark's answer (markdown-it's block parse),
    not a guess: a fence inside a list item ends with it. The answer is asked again after
    escaping (``<script>`` opened an HTML block that held a fence; as text, the fence is
    one) until it holds; escaping never adds a line. Lines are evened first (``_evened``:
    tabs in a line's containers as spaces, blank lines empty), so that GitHub reads them
    as this parse does. A text the parser fails on is shown as plain text, in a code block:
    never a traceback."""
    text = shown(text)
    try:
        parse = _deep_parse(text)
        if parse and any(t.level > MAX_DEPTH for t in parse[0] if t.type != "inline"):
            return f"{_TOO_DEEP}\n\n{fenced(text)}"
        return _prose(text, below, parse)
    except _Unreadable:
        return fenced(text)


#: How deep a message's blocks may nest (markdown-it's token levels: a quote is one, a list
#: two, the list and its item): markdown-it's CommonMark preset (VS Code's preview) stops at 20
#: and leaves out the rest of the document, every entry after the message; the quote a
#: thinking block is shown in adds one. 18 keeps nine lists in each other Markdown (every
#: viewer shows them, in a thinking quote too) and makes ten plain text, as the page does
#: past 50.
MAX_DEPTH = 18
_TOO_DEEP = "*Nested too deeply for Markdown viewers: shown as plain text.*"
#: A line that could be that deep: eight characters of container marks, a mark among them
#: (a list marker with a tab is two levels in two characters; indent alone is no level).
_DEEP_LINE = re.compile(r"^(?=[ \t>*+0-9.)-]{8})[ \t]*(?:[>*+-]|\d{1,9}[.)])", re.MULTILINE)


#: A parse of a text: its block tokens and the environment (link references) they left.
_Parse = tuple[list[Token], dict]


def _deep_parse(text: str) -> _Parse | None:
    """``text``'s parse when a line could nest past ``MAX_DEPTH`` (else None: not read), for
    the depth and then again for ``_code_lines`` (a date or a ``-----`` line could)."""
    return _parse(text) if _DEEP_LINE.search(text) else None


def _prose(text: str, below: int, parse: _Parse | None = None) -> str:
    if "\t" in text or " \n" in text or text.endswith(" "):
        evened = "\n".join(_evened(text.split("\n"), marked_only=True))
        parse, text = (parse if evened == text else None), evened
    if not _MAY_NEED_WORK.search(text) and not (below and _MAY_BE_HEADING.search(text)):
        return _hard_breaks(text.strip("\n"))  # no markup to escape, no fence, no heading
    lines = text.split("\n")
    parsed = lines
    code, open_fence, headings, definitions, paragraphs = _code_lines(parsed, parse)
    always = code  # the lines code in every parse
    for _ in range(_ROUNDS):
        out = _escaped_outside(lines, code, definitions, paragraphs)
        if out == parsed:  # the parse was of this very text
            break
        parsed = out
        again, open_fence, headings, more, joined = _code_lines(parsed)
        if again == code and more <= definitions and joined == paragraphs:
            break
        code, definitions, paragraphs = again, definitions | more, joined
        always = [one and other for one, other in zip(always, again, strict=True)]
    else:  # not settled (escaping moved a code span, and back): every line not code in
        # every parse escaped whole, code spans too, and the fence and headings of that text
        out = _escaped_whole(lines, always)
        final, open_fence, headings, _, _ = _code_lines(out)
        if any(one and not other for one, other in zip(always, final, strict=True)):
            out = _escaped_whole(lines, [False] * len(lines))  # still moving: all of it
            _, open_fence, headings, _, _ = _code_lines(out)
    if _MAY_BE_MARKED_CLOSER.search("\n".join(out)):
        out, open_fence = _fences_lengthened(out, open_fence)
    if below and headings:
        out = _headings_moved(out, headings, below)
    if open_fence:
        while out and not out[-1].strip():
            out.pop()
        out.append(open_fence)
    return _hard_breaks("\n".join(out).strip("\n"))


#: A line in a fence that marked reads as its end (the opening run, then any backticks and
#: tildes: ``` ```~~~ ```), where CommonMark reads text: a closing fence has nothing after
#: its run. Only a run of both signs can be one and not the other.
_MARKED_CLOSER = re.compile(r"^ {0,3}(?:`{3,}~|~{3,}`)[`~]* *$", re.MULTILINE)
#: Such a line in a quote or a list item too (behind its container's marks).
_MAY_BE_MARKED_CLOSER = re.compile(r"^[ \t>]*(?:`{3,}~|~{3,}`)[`~]* *$", re.MULTILINE)


def _fences_lengthened(out: list[str], open_fence: str | None) -> tuple[list[str], str | None]:
    """``out`` with each fence that holds a line marked would end it on
    (``_MARKED_CLOSER``) opened and closed by a run longer than any its lines start with:
    marked ended it early, and the rest of the fence, then the document after the closing
    fence this module adds to an open one, was read the other way round (in a quote or a
    list item, a ``<img onerror=…>`` line after it was raw HTML). Also the fence left
    open, now its longer run. A fence in a container keeps the container's marks."""
    try:
        tokens = _tokens("\n".join(out))
    except _Unreadable:
        return out, open_fence
    out = list(out)
    for token in tokens:
        if token.type != "fence" or not token.map:
            continue
        start, end = token.map[0], min(token.map[1], len(out))
        sign = token.markup[0]
        body = [_fence_text(line, token.level) for line in out[start + 1 : end]]
        if not any(_MARKED_CLOSER.fullmatch(line) for line in body):
            continue
        runs = (len(line.lstrip(" ")) - len(line.lstrip(" ").lstrip(sign)) for line in body)
        longer = sign * max(len(token.markup) + 1, max(runs, default=0) + 1)
        marks = out[start][: out[start].index(token.markup)]
        out[start] = marks + out[start][len(marks) :].replace(token.markup, longer, 1)
        last = out[end - 1]
        closer = _FENCE.fullmatch(last.lstrip(" \t>")) if end - 1 > start else None
        if (
            closer is not None
            and _closes(closer, token.markup)
            and last[: len(last) - len(last.lstrip(" \t>"))].count(">") == marks.count(">")
        ):
            out[end - 1] = last.replace(closer.group(1), longer, 1)
        elif open_fence == token.markup and not token.level:
            open_fence = longer
    return out, open_fence


def _fence_text(line: str, level: int) -> str:
    """A line of a fence at ``level`` without its containers' marks (at the top level a
    ``>`` is the code's own)."""
    return line[len(_prefix(line)) :] if level else line


#: A GFM table's delimiter row (``|---|:-:|``, ``:-:`` alone too), its containers' marks
#: and its blanks at either end taken off first (no two runs of blanks meet: linear).
_DELIMITER_ROW = re.compile(r"\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?")
#: A line's end that a backslash would change: a run that could open or close emphasis or
#: a strikethrough (a backslash after it let ``**`` open one: ``foo **`` then ``bar**``).
_DELIMITER_END = ("*", "_", "~")


def _hard_breaks(markdown: str) -> str:
    """Each line break inside a paragraph (or an underlined heading's title) written as a
    hard break: the page shows every line of a message as a line (its markdown-it runs with
    ``breaks``), where GitHub joined them (a prompt's "npm test" and "npm run build" on one
    line, a pasted stack trace run together). Only the paragraph's own breaks: none after
    its last line (a backslash
    there is text), in a code span (in any reading of it, ``_line_ends_in_code``), in a
    link's destination or title, in a table or before one (cmark's too: a paragraph ends
    above a table's header row), or on a line that ends in one already (a backslash, an
    escaped one needs another; two spaces). A backslash (visible, and kept by editors
    that trim spaces), but two spaces after a bare web address (GitHub takes the
    backslash into the link) or a run of ``*``, ``_`` or ``~`` (``_DELIMITER_END``)."""
    if "\n" not in markdown:
        return markdown
    try:
        tokens = _table_parser().parse(markdown + "\n")
    except Exception:  # a bug in the parser, not in the text: the breaks stay soft
        return markdown
    lines = markdown.split("\n")
    for token in tokens:
        if not token.map or not (token.type == "paragraph_open" or _setext_heading(token)):
            continue
        start, end = token.map[0], min(token.map[1], len(lines))
        if token.type == "heading_open":  # its title's lines: the underline is no text
            end -= 1
        last = end - 1  # the paragraph's (or title's) last line: no break after it
        for number in range(start + 1, end):
            if _table_starts(lines[number - 1], lines[number]):  # cmark: the paragraph ends
                last = min(last, number - 2)  # above the header row
                break
        in_code = _line_ends_in_code(lines[start:end]) if last > start else set()
        for number in range(start, last):
            line = lines[number]
            if number - start in in_code or _ends_in_break(line) or _destination_open(line):
                continue
            lines[number] = _with_break(line)
    return "\n".join(lines)


def _setext_heading(token: Token) -> bool:
    """A heading underlined by ``===`` or ``---`` (a title of several lines can be one): its
    title's lines are kept as a paragraph's are. Left soft, GitHub joined them, where the
    page shows each line; moved below an entry's heading, such a heading is a ``#`` line
    already (``_headings_moved``)."""
    return token.type == "heading_open" and token.markup[:1] in ("=", "-")


def _with_break(line: str) -> str:
    """``line`` ending in a hard break, the blanks before it dropped (as GitHub drops
    them). A backslash the blanks followed was text: it is escaped, not made the break."""
    body = line.rstrip(" \t")
    words = body.rsplit(None, 1)
    if (words and _BARE_ADDRESS.search(words[-1])) or body.endswith(_DELIMITER_END):
        return body + "  "
    text_backslash = (len(body) - len(body.rstrip("\\"))) % 2  # (an odd run ends in a break)
    return body + ("\\\\" if text_backslash else "\\")


def _table_starts(header: str, delimiter: str) -> bool:
    """GitHub reads a table from these lines: a delimiter row with as many cells as the
    row above it (a pipe in a code span parts cells too; an escaped one does not)."""
    row = delimiter.lstrip(" \t>").rstrip(" \t")
    if not _DELIMITER_ROW.fullmatch(row):
        return False
    return _cell_count(header[len(_prefix(header)) :]) == _cell_count(row)


_CELL_EDGE = re.compile(r"(?<!\\)\|")


def _cell_count(row: str) -> int:
    """A table row's cells as GFM counts them: a pipe at either end opens or closes it."""
    row = row.strip(" \t")
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row and _CELL_EDGE.match(row, len(row) - 1) else row
    return len(_CELL_EDGE.findall(row)) + 1


def _ends_in_break(line: str) -> bool:
    """The line ends in a hard break already: an odd run of backslashes, or two spaces."""
    backslashes = len(line) - len(line.rstrip("\\"))
    return backslashes % 2 == 1 or line.endswith("  ")


def _destination_open(line: str) -> bool:
    """A link's destination (or its title) goes on past the line's end: a backslash there
    would be part of it."""
    opened = line.rfind("](")
    return opened >= 0 and ")" not in line[opened + 2 :]


def _line_ends_in_code(lines: list[str]) -> set[int]:
    """The lines of a paragraph whose end is inside a code span, as CommonMark, cmark and
    GitHub's web addresses read the spans (``_inline_safe``): a backslash there is code."""
    text = "\n".join(lines)
    if "`" not in text:
        return set()
    whole = [(0, len(text))]
    readings = [_spans(text, whole), _cmark_spans(text)]
    if _BARE_ADDRESS.search(text):
        readings.append(_spans(text, whole, addresses=True))
    inside: set[int] = set()
    position = -1
    for number, line in enumerate(lines[:-1]):
        position += len(line) + 1  # the line break after it
        for spans in readings:
            at = bisect.bisect_right(spans, (position, len(text) + 1)) - 1
            if at >= 0 and spans[at][0] < position < spans[at][1]:
                inside.add(number)
                break
    return inside


@functools.cache
def _table_parser() -> MarkdownIt:
    """CommonMark with GFM tables, blocks only: which lines are a paragraph's, as the page
    and GitHub read them (a table's rows are none)."""
    return MarkdownIt("commonmark").enable("table").disable("inline")


def _headings_moved(
    out: list[str], headings: dict[int, tuple[int, int | None]], below: int
) -> list[str]:
    """Every heading, in a quote or a list item too (``> # H1`` was a level 1 heading in
    the middle of the transcript), in the ``#`` form at its level counted from the
    message's top one, under ``below``: a message of ``##`` and ``###`` headings keeps
    them apart under an entry at level 4 (counted from ``#``, both were level 6). A
    heading GitHub would give a branch heading's anchor (``# Branch 2 of 2`` took
    ``#branch-2-of-2`` from the document's own heading further down, and the fork's link
    with it) is a bold line, as one past level 6 is."""
    top = min(level for level, _ in headings.values())
    gone: set[int] = set()  # the lines a setext heading's title took after its first
    bold: set[int] = set()  # headings past level 6, now bold lines
    for number, (level, underline) in headings.items():
        depth = level - top + below + 1
        hashes = "#" * min(6, depth)
        if underline is None:  # "## Title"
            atx = _ATX.match(out[number])
            title = _CLOSING_HASHES.sub("", out[number][atx.end() :]).strip() if atx else ""
            if atx and (depth > 6 or may_take_branch_anchor(title)):
                out[number] = atx.group(1) + (f"**{title}**" if title else "")
                bold.add(number)
            elif atx:
                out[number] = atx.group(1) + hashes + out[number][atx.end() :]
            continue
        # "Title" over "===" or "---": the same heading in the "#" form, the underline gone
        # (it stayed a level 1 or 2 heading in the middle of the transcript)
        first = _FIRST_TITLE_LINE.match(out[number])
        assert first is not None  # (it matches any line)
        rest = (line.lstrip(" \t>") for line in out[number + 1 : underline])
        title = " ".join(part.strip() for part in (first.group(2), *rest))
        if depth > 6 or may_take_branch_anchor(title):
            out[number] = f"{first.group(1)}**{title}**"
            bold.add(number)
        else:
            out[number] = f"{first.group(1)}{hashes} {title}"
        gone.update(range(number + 1, underline + 1))
    kept: list[str] = []
    for number, line in enumerate(out):
        if number in gone:
            continue
        if number not in bold:
            kept.append(line)
            continue
        # a bold line is no block of its own: blank lines keep it out of the paragraphs
        # around it (a heading ended them), in its quote or list item
        blank = _LIST_MARK.sub(lambda m: " " * len(m.group()), _prefix(line)).rstrip()
        if kept and kept[-1].strip(" \t>") and not _EMPTY_ITEM.fullmatch(kept[-1]):
            kept.append(blank)  # (after an item that opened empty, it ended the item)
        kept.append(line)
        after = next((out[n] for n in range(number + 1, len(out)) if n not in gone), "")
        if after.strip(" \t>"):
            kept.append(blank)
    return kept


#: A branch heading's anchor (``Branch 2 of 7``: ``#branch-2-of-7``) in a heading's
#: letters and digits.
_BRANCH_ANCHOR = re.compile(r"branch\d+of\d+")
#: A GitHub emoji's name (``:tada:``): GitHub shows the emoji, which its anchors leave out.
_EMOJI_NAME = re.compile(r":[a-z0-9_+-]+:")
_TAG = re.compile(r"<[^>]*>")
_BRANCH_LETTERS = frozenset("branchof")


def may_take_branch_anchor(title: str) -> bool:
    """Whether a heading of ``title`` (Markdown) could have the anchor GitHub gives a
    branch heading of this document (``#branch-2-of-7``): GitHub gives a heading its text
    in lower case, without punctuation, spaces as "-", and the first of two the same
    anchor gets it. Read generously: the title's text as rendered (``Bran&#99;h``,
    ``[Bran](x)ch``), emoji names out, its letters and digits only, which must be all
    of a branch heading's (``Merging feature-branch 1 of 3 into main`` takes no anchor of
    ours)."""
    if not any(c.isdigit() for c in title) or (
        "&" not in title and not set(title.lower()) >= _BRANCH_LETTERS
    ):
        return False
    text = html.unescape(_TAG.sub("", _inline_parser().renderInline(title))).lower()
    letters = "".join(c for c in _EMOJI_NAME.sub("", text) if c.isalnum())
    return bool(_BRANCH_ANCHOR.fullmatch(letters))  # the whole heading, not a part of it


@functools.cache
def _inline_parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False})


#: An ATX heading's closing run of "#" (after a space, or the whole title).
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_LIST_MARK = re.compile(r"[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t])")
#: A line that opens a list item and says nothing (in a quote or an item too).
_EMPTY_ITEM = re.compile(r"(?:[ \t>]|[-*+](?![^ \t])|\d{1,9}[.)](?![^ \t]))*")


def _prefix(line: str) -> str:
    """A line's container marks (quotes, list markers, indent)."""
    found = re.match(_CONTAINERS, line)
    return found.group() if found else ""


def _escaped_outside(
    lines: list[str], code: list[bool], definitions: set[int], paragraphs: dict[int, int]
) -> list[str]:
    """Every line that is not code made safe, a paragraph's lines together: a code span
    goes on over the lines of its paragraph (CommonMark), so a backtick on one line can
    close a span opened on the one before. A tag at the start of a line's text is
    ``&lt;`` even in a code span (``_LINE_TAG``)."""
    out = [
        line if code[number] else _definition_as_text(line, number in definitions)
        for number, line in enumerate(lines)
    ]
    number = 0
    while number < len(lines):
        if code[number]:
            number += 1
            continue
        end = number + 1
        last = min(paragraphs.get(number, end), len(lines))
        while end < last and not code[end]:
            end += 1
        following = lines[end] if end < len(lines) else ""
        out[number:end] = _inline_safe("\n".join(out[number:end]), following).split("\n")
        number = end
    for number, line in enumerate(out):
        opened = None if code[number] or "<" not in line else _LINE_TAG.match(line)
        if opened:
            out[number] = f"{opened.group(1)}&lt;{line[opened.end() :]}"
    return out


def _escaped_whole(lines: list[str], code: list[bool]) -> list[str]:
    """Every line that is not ``code`` made safe whole, as if it held no code span."""
    return [
        line
        if code[number]
        else _escape_tags(line, 0, len(line), "".join(lines[number + 1 : number + 2]), None)
        for number, line in enumerate(lines)
    ]


_ROUNDS = 6

#: Block tokens that hold a line's text (a line in none of them, not blank, is part of a
#: link reference definition: markdown-it keeps those out of its tokens).
_LEAF_BLOCKS = frozenset(
    {"paragraph_open", "heading_open", "fence", "code_block", "html_block", "hr", "table_open"}
)


def _code_lines(
    lines: list[str], parse: _Parse | None = None
) -> tuple[list[bool], str | None, dict[int, tuple[int, int | None]], set[int], dict[int, int]]:
    """Which lines are inside a code block, the fence left open at the end (if any), the
    headings (first line -> level and the line of a setext heading's underline, None for
    an ATX heading), the lines of link reference definitions, and the paragraphs (and
    headings) of more than one line (first line -> the line after). ``parse``: that of
    these very lines, if read already."""
    code = [False] * len(lines)
    open_fence = None
    headings: dict[int, tuple[int, int | None]] = {}
    paragraphs: dict[int, int] = {}
    paragraph_lines: set[int] = set()
    tokens, env = parse if parse is not None else _parse("\n".join(lines))
    held = [False] * len(lines) if env.get("references") else None
    for token in tokens:
        if held is not None and token.type in _LEAF_BLOCKS and token.map:
            for number in range(token.map[0], min(token.map[1], len(lines))):
                held[number] = True
        multiline = token.map and token.map[1] - token.map[0] > 1
        if token.type in ("paragraph_open", "heading_open") and token.map and multiline:
            paragraphs[token.map[0]] = token.map[1]
        if token.type == "paragraph_open" and token.map:
            paragraph_lines.update(range(*token.map))
        if token.type == "table_open" and token.map and _one_column_over_dashes(token, lines):
            headings[token.map[0]] = (2, token.map[0] + 1)  # as cmark and marked read it
            paragraphs[token.map[0]] = token.map[0] + 2
        if token.type == "heading_open" and token.map:
            start, end = token.map
            if token.markup[:1] == "#":
                headings[start] = (len(token.markup), None)
            elif token.markup[:1] in "=-" and end - 1 > start:  # setext: text, then underline
                headings[start] = (1 if token.markup[:1] == "=" else 2, end - 1)
        if token.type not in ("fence", "code_block") or not token.map:
            continue
        start, end = token.map
        if token.type == "code_block" and start - 1 in paragraph_lines:
            continue  # no indented code after a paragraph's line: cmark's lazy continuation
        first = start + 1 if token.type == "fence" else start  # a fence's opening is text
        for number in range(first, min(end, len(lines))):
            code[number] = True
        if token.type == "fence" and token.level == 0:  # only the text's end ends it
            closer = _FENCE.fullmatch(lines[end - 1]) if end - 1 > start else None
            if closer is None or not _closes(closer, token.markup):
                open_fence = token.markup
    definitions = (
        {n for n, line in enumerate(lines) if not held[n] and line.strip()} if held else set()
    )
    headings = {n: said for n, said in headings.items() if said[0]}
    return code, open_fence, headings, definitions, paragraphs


#: What ends a list with nothing shown: CommonMark's own way to keep an indented block
#: after a list out of its last item (spec, "List items": a blank HTML comment).
LIST_END = "<!-- -->"


def ends_in_a_list(markdown: str) -> bool:
    """The text's last block is a list: an indented block written after it would be read
    as part of its last item."""
    try:
        tokens = _tokens(markdown)
    except _Unreadable:
        return True  # not known: the blank comment ends a list if there is one, else nothing
    last = next((t for t in reversed(tokens) if t.level == 0), None)
    return last is not None and last.type in ("bullet_list_close", "ordered_list_close")


class _Unreadable(Exception):
    """The parser failed on a text (a bug of its own)."""


def _tokens(source: str, env: dict | None = None) -> list[Token]:
    """The block tokens of ``source``, read with a line break at its end: without one,
    markdown-it (4.x) read past the text's end (an IndexError in its ``getLines``) when the
    last line was a bare ">" after a quoted list item that opens an HTML block it leaves
    open (``> - <pre>\n>``): the line's start was past the text's last character. Any
    failure of the parser is ``_Unreadable``: the caller says the text another way."""
    try:
        return _block_parser().parse(source + "\n", {} if env is None else env)
    except Exception as error:  # a bug in the parser, not in the text
        raise _Unreadable(str(error)) from error


@functools.cache
def _block_parser() -> MarkdownIt:
    """CommonMark with GFM tables, raw HTML on: this parse only finds the code, the
    headings and the link reference definitions, as a viewer would (a table's rows over a
    ``---`` are no setext heading there); inline parsing (half the time) is not needed for
    that."""
    return MarkdownIt("commonmark").enable("table").disable("inline")


def _one_column_over_dashes(table: Token, lines: list[str]) -> bool:
    """Whether a table's delimiter row is a bare run of ``-`` (``Status |`` over ``---``):
    markdown-it reads a table of one column, but cmark (GitHub) and marked read a setext
    heading first, as the page's parser did before it read tables. Only such a row can be
    both (a pipe or a colon is no underline, and a wider table's row has a pipe)."""
    assert table.map is not None
    number = table.map[0] + 1
    row = lines[number].lstrip(" \t>").rstrip(" \t") if number < len(lines) else ""
    return bool(row) and not row.strip("-")


def _parse(source: str) -> _Parse:
    """``source``'s block tokens and the link references they left."""
    env: dict = {}
    return _tokens(source, env), env


def _closes(match: re.Match[str], opening: str) -> bool:
    """Whether a fence line closes the fence ``opening`` opened: only spaces and tabs may
    follow its run (a no-break space after it left the fence open on GitHub, and the
    rest of the document in it, where Python's ``strip`` saw a closed one)."""
    run = match.group(1)
    return run[0] == opening[0] and len(run) >= len(opening) and not match.group(2).strip(" \t")


def _definition_as_text(line: str, definition: bool) -> str:
    """A link reference ``definition`` (or a line that looks like one) made text, on a
    line of its own."""
    if definition or "]:" in line:
        opened = (_OPENING if definition else _DEFINITION).match(line)
        if opened:  # the "[" as text: no definition, and a line of its own (a hard break)
            line = f"{opened.group(1)}\\{line[opened.end(1) :]}"
            line += "  " if "]:" in line and not line.endswith((" ", "\t")) else ""
    return line


def _inline_safe(text: str, following: str = "") -> str:
    """A paragraph (or a line) with every tag-opening ``<`` outside code spans written
    ``&lt;`` (one escaped with a backslash too: GitHub takes the backslash into a bare web
    address before it), every image's ``!`` escaped, and a link to an unsafe scheme, or
    with a backtick in its destination (the link would take it from a code span), made
    text (its ``(`` escaped; the ``following`` line is where a destination after a
    ``](`` at the end is). Code spans are CommonMark's, over the paragraph's lines; text
    is left as code only where every reading agrees it is: the paragraph's, its lines'
    and table cells' when it has a "|" (GitHub's table rows), cmark's (its search for a
    closing run stops early after one failed) and GitHub's, whose bare web addresses
    take in the backticks after them (in the paragraph and in each cell: a table's first
    row ``https://a.b/`<img …>``` was a span to the paragraph's reading, whose span
    opened before the address, and the address took the cell's opening backtick). Where
    they differ, a span shows ``&lt;`` inside it, never the other way round. Linear: each
    span's closing run is looked up, not searched for (a pasted minified file is one line
    of many backticks and brackets)."""
    if "<" not in text and "![" not in text and "](" not in text and "]:" not in text:
        return text
    addresses = _Addresses(text)
    if "`" not in text:
        return _escape_tags(text, 0, len(text), following, addresses)
    whole = [(0, len(text))]
    code = _spans(text, whole)
    cells = _pieces(text, _CELL_OR_LINE) if "|" in text else None
    if cells:  # GitHub: a table's row is cells, and it ends the paragraph above it
        code = _common(code, _spans(text, cells))
    code = _common(code, _cmark_spans(text))
    if _BARE_ADDRESS.search(text):
        code = _common(code, _spans(text, whole, addresses=True))
        if cells:  # an address in a cell takes in a backtick that opened a span there
            code = _common(code, _spans(text, cells, addresses=True))
    out: list[str] = []
    position = 0
    tildes: dict[int, list[int]] | None = None
    for begin, end in code:
        out.append(_escape_tags(text, position, begin, "", addresses))
        if text[begin - 1 : begin] == "~":
            tildes = _tilde_runs(text) if tildes is None else tildes
            if not _struck(tildes, text, (begin, end), code):
                out[-1] = _tildes_escaped(out[-1])
        out.append(text[begin:end])
        position = end
    out.append(_escape_tags(text, position, len(text), following, addresses))
    return "".join(out)


_TILDES = re.compile(r"~+")


def _tilde_runs(text: str) -> dict[int, list[int]]:
    """Where each run of ``~`` starts, by its length, in order (found once: linear)."""
    runs: dict[int, list[int]] = {}
    for found in _TILDES.finditer(text):
        runs.setdefault(len(found.group()), []).append(found.start())
    return runs


def _struck(
    runs: dict[int, list[int]], text: str, at: tuple[int, int], code: list[tuple[int, int]]
) -> bool:
    """Whether the run of ``~`` just before the code span ``at`` opens a strikethrough
    that marked reads as one (``~~`old_api()`~~``), so its tildes stay as written: one or
    two of them, and the first run of that length after them is past the span, outside
    every code span and after a character that is no blank (marked's closing run). Else
    marked read the tildes and the span's backticks as text, ``<img …>`` in it as HTML,
    and a closing run inside a later span cut that span open the same way."""
    begin, end = at
    start = begin - 1
    while start and text[start - 1] == "~":
        start -= 1
    same = runs.get(begin - start, [])
    after = bisect.bisect_left(same, begin)
    if begin - start > 2 or after == len(same):
        return False
    closer = same[after]
    span = bisect.bisect_right(code, (closer, len(text) + 1)) - 1
    inside = span >= 0 and code[span][0] <= closer < code[span][1]
    return closer >= end and not inside and not text[closer - 1].isspace()


def _tildes_escaped(before: str) -> str:
    """``before`` (the text up to a code span) with its closing run of ``~`` escaped: marked
    read ``~~`` and the span's opening backticks as one run of text, the span's
    ``<img onerror=…>`` as raw HTML. An escaped ``~`` shows the same everywhere."""
    run = len(before) - len(before.rstrip("~"))
    start = len(before) - run
    if _backslashes_before(before, start) % 2:  # its first "~" is escaped already
        start += 1
    return before[:start] + "\\~" * (len(before) - start)


_CELL_OR_LINE = re.compile(r"\n|(?<!\\)\|")
#: cmark reads no closing run longer than this (its opening run stays text).
_CMARK_LONGEST_RUN = 1000


def _pieces(text: str, edge: re.Pattern[str]) -> list[tuple[int, int]]:
    pieces = []
    start = 0
    for found in edge.finditer(text):
        pieces.append((start, found.start()))
        start = found.end()
    pieces.append((start, len(text)))
    return pieces


def _spans(
    text: str, pieces: list[tuple[int, int]], addresses: bool = False
) -> list[tuple[int, int]]:
    """CommonMark's code spans (from the opening run to the end of the closing one) in
    each piece of ``text``; with ``addresses``, a run inside a bare web address that
    starts outside a span is text (GitHub links the address, the run in it)."""
    spans: list[tuple[int, int]] = []
    starts: list[int] = []
    ends: list[int] = []
    if addresses:
        starts = [found.start() for found in _BARE_ADDRESS.finditer(text)]
        ends = [found.start() for found in _ADDRESS_END.finditer(text)]

    def in_address(begin: int, outside_from: int) -> bool:
        at = bisect.bisect_right(starts, begin) - 1
        if at < 0 or starts[at] < outside_from:
            return False
        end = bisect.bisect_right(ends, starts[at])
        return end == len(ends) or ends[end] > begin

    for low, high in pieces:
        runs = [(found.start(), found.end()) for found in _BACKTICKS.finditer(text, low, high)]
        starts_by_length: dict[int, list[int]] = {}
        for index, (begin, end) in enumerate(runs):
            starts_by_length.setdefault(end - begin, []).append(index)
        position = low
        index = 0
        while index < len(runs):
            begin, end = runs[index]
            if begin < position or (starts and in_address(begin, position)):
                index += 1
                continue
            if _backslashes_before(text, begin) % 2:  # its first backtick is text
                begin += 1
            same = starts_by_length.get(end - begin, []) if end > begin else []
            closer = _closing_run(same, index)
            if closer is None:  # no span opens here: the backticks are text
                index += 1
                continue
            position = runs[closer][1]
            spans.append((begin, position))
            index = closer + 1
    return spans


def _cmark_spans(text: str) -> list[tuple[int, int]]:
    """Code spans as cmark (GitHub's renderer) finds them: once a search for a closing
    run has failed, it keeps the start of the last run of each length it has passed and
    searches no more when that is before the opening run's end, though later searches
    moved it back (``` ``(` `(`<o>` ``` left its last span out, ``<o>`` live). Linear:
    one search goes to the end, every other one stops at its closing run."""
    runs = [(found.start(), found.end()) for found in _BACKTICKS.finditer(text)]
    spans: list[tuple[int, int]] = []
    last: dict[int, int] = {}
    failed = False
    index = 0
    while index < len(runs):
        begin, end = runs[index]
        if _backslashes_before(text, begin) % 2:
            begin += 1
        length = end - begin
        if not length or length > _CMARK_LONGEST_RUN or (failed and last.get(length, 0) <= end):
            index += 1
            continue
        closer = None
        for later in range(index + 1, len(runs)):
            start, stop = runs[later]
            if stop - start <= _CMARK_LONGEST_RUN:
                last[stop - start] = start
            if stop - start == length:
                closer = later
                break
        if closer is None:
            failed = True
            index += 1
            continue
        spans.append((begin, runs[closer][1]))
        index = closer + 1
    return spans


def _common(one: list[tuple[int, int]], other: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """What two sorted lists of disjoint ranges have in common."""
    common = []
    first = second = 0
    while first < len(one) and second < len(other):
        low = max(one[first][0], other[second][0])
        high = min(one[first][1], other[second][1])
        if low < high:
            common.append((low, high))
        if one[first][1] < other[second][1]:
            first += 1
        else:
            second += 1
    return common


def _closing_run(same_length: list[int], opener: int) -> int | None:
    """The first run after ``opener`` of the opener's length (CommonMark's closing run)."""
    at = bisect.bisect_right(same_length, opener)
    return same_length[at] if at < len(same_length) else None


def _backslashes_before(text: str, position: int) -> int:
    count = 0
    while position > count and text[position - count - 1] == "\\":
        count += 1
    return count


def _escape_tags(
    text: str, low: int, high: int, following: str, addresses: _Addresses | None
) -> str:
    """``text[low:high]``, outside code, made safe (see ``_inline_safe``); ``addresses``
    says where a bare web address before a "<" may be closed (None: nowhere)."""
    out: list[str] = []
    position = low
    near = _links_near_backticks(text, low, high, following)
    at = 0
    for found in _TAG_START.finditer(text, low, high):
        while at < len(near) and near[at] < found.start():
            position = _link_checked(text, near[at], position, following, out)
            at += 1
        while at < len(near) and near[at] < found.end():  # this match is that link
            at += 1
        backslashes, sign = found.group(1), found.group(2)
        out.append(text[position : found.start()])
        position = found.end()
        if len(backslashes) % 2:  # escaped already: text ("\<" as "&lt;", the same text)
            out.append(backslashes[:-1] + "&lt;" if sign == "<" else found.group())
        elif sign == "<":
            if addresses is not None and addresses.closable:
                _address_closed(text, found.start(), out, addresses)
            out.append(backslashes + "&lt;")
        elif sign == "!":
            out.append(backslashes + "\\!")
        elif text.startswith(":", found.end()):  # "]:" as "]\:"
            out.append(backslashes + "]\\")
        else:  # "](": an inline link's destination follows
            out.append(backslashes + ("]\\" if _unsafe_link(text, found.end(), following) else "]"))
    for bracket in near[at:]:
        position = _link_checked(text, bracket, position, following, out)
    out.append(text[position:high])
    return "".join(out)


class _Addresses:
    """What ``_address_closed`` reads of a paragraph, found once (a lookup per "<", not a
    scan to the line's or the address's end: 1 MB of ``http://a.b/<x `` took 35 s).
    Nothing is closed in a paragraph with a ``](``: the address could be in a link's text,
    destination or title (over lines, after spaces, after ``?to=``), where an autolink
    breaks the link; there it stays as the text was before."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.closable = "](" not in text
        self._ticks: list[int] | None = None
        self._ends: list[int] = []

    def backtick_in_reach(self, at: int) -> bool:
        """Whether a backtick lies between the "<" at ``at`` and where GitHub's address
        would end after it (it took the backtick in, see ``_inline_safe``)."""
        if "`" not in self.text:
            return False
        if self._ticks is None:
            self._ticks = [found.start() for found in _BACKTICKS.finditer(self.text)]
            self._ends = [found.start() for found in _ADDRESS_END.finditer(self.text)]
        after = bisect.bisect_right(self._ends, at)
        end = self._ends[after] if after < len(self._ends) else len(self.text)
        tick = bisect.bisect_left(self._ticks, at)
        return tick < len(self._ticks) and self._ticks[tick] < end


def _address_closed(text: str, at: int, out: list[str], addresses: _Addresses) -> None:
    """The bare web address that ends at the ``<`` at ``at`` (the end of ``out``) written as
    an autolink ``<…>``: GitHub took the ``&lt;`` written for that ``<`` into the address,
    where the page ends it there. Only where no link can hold it (``_Addresses``)."""
    if at == 0 or text[at - 1] in " \t\n\\" or not out:
        return
    said = out[-1]
    word = re.split(r"[ \t\n\v\f\r]", said)[-1]
    found = next(reversed(list(_BARE_ADDRESS.finditer(word))), None)
    if found is None or not word[found.start() :].lower().startswith(("http", "ftp")):
        return
    start = len(said) - len(word) + found.start()
    address = _untrimmed(said[start:])
    if (
        not _angles_take(address)
        or said[start - 1 : start] in ("(", "[", "<")
        or addresses.backtick_in_reach(at)
    ):
        return
    out[-1] = f"{said[:start]}<{address}>{said[start + len(address) :]}"


def _links_near_backticks(text: str, low: int, high: int, following: str) -> list[int]:
    """Where the "]" of each ``](`` in ``text[low:high]`` is that has a backtick in reach
    of its "(" (``_unsafe_link`` reads those whatever their destination starts with), in
    order; the ``following`` line is in reach of the text's last ones."""
    if text.find("](", low, high) < 0:
        return []
    reach = _DESTINATION_WINDOW + 2
    marks = (found.start() for found in _BACKTICKS.finditer(text, low, high + reach))
    if "`" in following[:_DESTINATION_WINDOW]:
        marks = itertools.chain(marks, [len(text)])
    brackets: list[int] = []
    searched = low
    for mark in marks:  # the marks up to the first past the text's end (linear)
        start = max(searched, mark - reach - 1)
        end = min(mark + 1, high)
        if start < end:
            brackets += [found.start() for found in _LINK.finditer(text, start, end)]
            searched = end
        if end >= high:
            break
    return brackets


def _link_checked(text: str, bracket: int, position: int, following: str, out: list[str]) -> int:
    """The text up to the ``](`` at ``bracket`` and past its "]", that "]" escaped when the
    link is unsafe (as ``_escape_tags`` does for each it finds); where the text goes on."""
    out.append(text[position : bracket + 1])
    if not _backslashes_before(text, bracket) % 2 and _unsafe_link(text, bracket + 1, following):
        out.append("\\")
    return bracket + 1


def _unsafe_link(text: str, parenthesis: int, following: str) -> bool:
    """Whether the link whose destination follows the ``(`` at ``parenthesis`` opens an
    unsafe scheme or takes in a backtick (which a code span would otherwise have)."""
    start = parenthesis + 1
    after = text[start : start + _DESTINATION_WINDOW]
    if not after.strip() and start + _DESTINATION_WINDOW >= len(text):
        after += "\n" + following[:_DESTINATION_WINDOW]
    if "\n" in after:  # a quote's ">" or a list item's indent starts each line
        after = _LINE_START.sub("\n", after)
    if "`" in after:
        destination = after.partition(")")[0]
        if "`" in destination or any(sign in destination for sign in "\"'(<"):
            return True
    return unsafe_destination(after)


def unsafe_destination(start: str) -> bool:
    """Whether a link destination that starts with ``start`` is one a viewer could run or
    open locally (``javascript:``, ``vbscript:``, ``data:``, ``file:``): read as a browser
    reads it, after CommonMark's escapes and entities (``&#106;avascript:``) and without
    the tabs and line breaks a browser drops (``java&Tab;script:``). A start too long to
    say is taken as unsafe when what it says so far begins an unsafe scheme."""
    said = start[:_DESTINATION_WINDOW]
    if "&" in said or "\\" in said:
        said = _decoded_start(_BACKSLASH_ESCAPE.sub(r"\1", said))
    said = _SPACE_AND_CONTROLS.sub("", said).lstrip("<").lower()
    scheme = _SCHEME.match(said)
    if scheme:
        return scheme.group(1) in _UNSAFE_SCHEMES
    return len(start) >= _DESTINATION_WINDOW and any(s.startswith(said) for s in _UNSAFE_SCHEMES)


def _decoded_start(said: str) -> str:
    """``said`` with its character references decoded as far as a scheme is read: 40
    characters past the spaces, controls and "<" a browser drops, the rest as it is
    (decoding all 160 made 300 KB of ``](&`` take 5 s). A reference ends before the next
    "&", so the text is cut there."""
    cut = 48
    while True:
        at = said.find("&", cut)
        if at < 0:
            return html.unescape(said)
        head = html.unescape(said[:at])
        if len(_SPACE_AND_CONTROLS.sub("", head).lstrip("<")) > 40:
            return head + said[at:]
        cut = at * 2
