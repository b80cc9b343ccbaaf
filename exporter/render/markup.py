"""Markdown (markdown-it-py, raw HTML off, safe links) and syntax highlighting (Pygments).

Everything returned here is safe HTML built from untrusted text: markdown-it escapes text,
raw HTML is disabled, links are limited to http(s)/mailto/fragments, remote images become
links (never loaded), and highlighted code is escaped token by token.
"""

from __future__ import annotations

import base64
import contextlib
import gc
import itertools
import re
import signal
import struct
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from functools import lru_cache
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markupsafe import Markup
from mdit_py_plugins.tasklists import tasklists_plugin
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.token import STANDARD_TYPES, Token
from pygments.util import ClassNotFound

from exporter.render.autolink import use_bare_links

# Highlighting is the slowest part of a render; beyond these sizes code is shown plain
# (still complete), which keeps big sessions fast to export and small to ship.
MAX_HIGHLIGHT_CHARS = 60_000
MAX_HIGHLIGHT_LINES = 1_500

# Sizes do not bound the time: some Pygments lexers backtrack on some input (C#'s on lines
# of one letter: ~1 s for a 3 KB fence; easytrieve's on 2,000 tabs: 12 s, as the cube of
# the size), and a pasted fence names any lexer. A text gets this much CPU time (machine
# load does not count; a lexer does ~2 us a character), else it is shown plain: see
# _cpu_deadline. Each text is judged alone (a page never depends on what else its process
# rendered, or on -j); identical texts are highlighted once (the caches below).
HIGHLIGHT_CPU_SECONDS = 0.3
HIGHLIGHT_CPU_SECONDS_PER_CHAR = 5e-6
_TIME_CHECK_TOKENS = 16  # (the clock is a system call: read every 16 tokens)

_SAFE_LINK = re.compile(r"^(?:https?:|mailto:|#)", re.IGNORECASE)
_DATA_IMAGE = re.compile(r"^data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*$", re.I)

# file extension / name -> Pygments alias (a superset of Pi's map, dockerfile included)
_EXTENSIONS = {
    "ts": "typescript",
    "tsx": "tsx",
    "mts": "typescript",
    "cts": "typescript",
    "js": "javascript",
    "jsx": "jsx",
    "mjs": "javascript",
    "cjs": "javascript",
    "py": "python",
    "pyi": "python",
    "rb": "ruby",
    "rs": "rust",
    "go": "go",
    "java": "java",
    "kt": "kotlin",
    "kts": "kotlin",
    "swift": "swift",
    "scala": "scala",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "hpp": "cpp",
    "hh": "cpp",
    "cs": "csharp",
    "php": "php",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "fish": "fish",
    "ps1": "powershell",
    "sql": "sql",
    "html": "html",
    "htm": "html",
    "vue": "html",
    "svelte": "html",
    "css": "css",
    "scss": "scss",
    "less": "less",
    "json": "json",
    "jsonl": "json",
    "yaml": "yaml",
    "yml": "yaml",
    "toml": "toml",
    "ini": "ini",
    "cfg": "ini",
    "xml": "xml",
    "svg": "xml",
    "md": "markdown",
    "markdown": "markdown",
    "lua": "lua",
    "r": "r",
    "pl": "perl",
    "ex": "elixir",
    "exs": "elixir",
    "erl": "erlang",
    "hs": "haskell",
    "ml": "ocaml",
    "clj": "clojure",
    "dart": "dart",
    "zig": "zig",
    "nix": "nix",
    "tf": "terraform",
    "proto": "protobuf",
    "graphql": "graphql",
    "diff": "diff",
    "patch": "diff",
    "dockerfile": "docker",
    "mk": "make",
    "cmake": "cmake",
    "gradle": "groovy",
}
_FILE_NAMES = {
    "dockerfile": "docker", "containerfile": "docker", "makefile": "make",
    "gnumakefile": "make", "cmakelists.txt": "cmake", "gemfile": "ruby", "rakefile": "ruby",
    ".bashrc": "bash", ".zshrc": "bash", ".profile": "bash",
}  # fmt: skip


def _validate_link(url: str) -> bool:
    """A web, mail or fragment address; or a data: image that is whole (a cut one would be
    a broken image: its text stays, as an SVG's does)."""
    url = url.strip()
    if _SAFE_LINK.match(url):
        return True
    return bool(_DATA_IMAGE.match(url)) and safe_image_src(url.partition(",")[2]) is not None


# Lexers that never finish on some short inputs (Pygments 2.19-2.21): a code fence tagged
# ```tnt holding "b", or ```mcschema holding "<!--", would hang the export. Plain text instead.
_HANGING_LEXERS = frozenset({"TNTLexer", "MCSchemaLexer"})


@lru_cache(maxsize=1)
def _builtin_aliases() -> frozenset[str]:
    """Aliases of the lexers Pygments ships. Asking Pygments about any other name makes it
    scan every installed package's entry points for plugins (0.1 to 0.7 s on a cold start)
    and would make pages depend on whatever plugins happen to be installed."""
    from pygments.lexers._mapping import LEXERS

    return frozenset(
        alias
        for name, (_, _, aliases, _, _) in LEXERS.items()
        if name not in _HANGING_LEXERS
        for alias in aliases
    )


@lru_cache(maxsize=128)
def lexer_for(language: str | None) -> Lexer | None:
    """A cached Pygments lexer for an alias (None when unknown: plain text, never a guess)."""
    if not language or language.lower() not in _builtin_aliases():
        return None
    try:
        return get_lexer_by_name(language.lower(), stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def language_for_path(path: str | None) -> str | None:
    """Language alias from a file name: its extension, or well-known names like Dockerfile."""
    if not path:
        return None
    name = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if name in _FILE_NAMES:
        return _FILE_NAMES[name]
    if name.startswith("dockerfile"):
        return "docker"
    if "." not in name:
        return None
    return _EXTENSIONS.get(name.rsplit(".", 1)[-1])


# Symbol operators (= + . =>) join them: the light style greys them barely off the text
# colour, and their spans were ~4% of a code-heavy page. Word operators (and, in) stay.
_PLAIN = frozenset(
    {Token.Text, Token.Text.Whitespace, Token.Punctuation, Token.Name, Token.Name.Other,
     Token.Generic, Token.Other, Token.Operator}
)  # fmt: skip


def _css_class(token_type: Any) -> str:
    while token_type not in STANDARD_TYPES:
        token_type = token_type.parent
    return STANDARD_TYPES[token_type]


FULL_HIGHLIGHT_LINES = 40  # a file this short is highlighted whole, even the folded part
FULL_HIGHLIGHT_CHARS = 3_000


def highlight_lines(text: str, language: str | None, first: int | None = None) -> list[str]:
    """Escaped HTML per line, with token spans that never cross a line break.

    Splitting per line lets callers show the first or last lines and fold the rest. With
    ``first`` only that many leading lines are highlighted (what a reader sees before
    expanding; the rest stays plain), which keeps big pages small and fast to build.
    Oversized input is returned escaped but not highlighted.
    """
    lexer = lexer_for(language)
    if lexer is None:
        return [escape(line, quote=False) for line in text.split("\n")]
    if first is not None and (
        len(text) > FULL_HIGHLIGHT_CHARS or text.count("\n") >= FULL_HIGHLIGHT_LINES
    ):
        cut = -1
        for _ in range(first):
            cut = text.find("\n", cut + 1)
            if cut < 0:
                break
        if 0 <= cut <= MAX_HIGHLIGHT_CHARS:
            head = _highlighted_head(text[:MAX_HIGHLIGHT_CHARS], language, first)
            rest = text[cut + 1 :].split("\n")
            return [*head, *(escape(line, quote=False) for line in rest)]
    if len(text) > MAX_HIGHLIGHT_CHARS or text.count("\n") > MAX_HIGHLIGHT_LINES:
        return [escape(line, quote=False) for line in text.split("\n")]
    return list(_highlighted(text, language))


@lru_cache(maxsize=512)
def _highlighted(text: str, language: str) -> tuple[str, ...]:
    """Lexing is the costly part; sessions re-read the same files, so identical code is
    highlighted once per process."""
    lexer = lexer_for(language)
    if lexer is None:
        return tuple(escape(line, quote=False) for line in text.split("\n"))

    def lexed() -> tuple[str, ...]:
        lines = list(_html_lines(lexer, text))
        if text.endswith("\n") and len(lines) > 1 and lines[-1] == "":
            lines.pop()
        return tuple(lines)

    return _within_budget(text, lexed)


@lru_cache(maxsize=512)
def _highlighted_head(text: str, language: str, first: int) -> tuple[str, ...]:
    """The first ``first`` lines of ``text`` as :func:`_highlighted` colours them within the
    whole text. Lexing only those lines cut a comment or string that goes on below them:
    its opening was an error token and the words inside it showed as keywords. Lexing is
    lazy, so this reads only as far as the last token that starts in those lines."""
    lexer = lexer_for(language)
    assert lexer is not None

    def head() -> tuple[str, ...]:
        return tuple(itertools.islice(_html_lines(lexer, text), first))

    return _within_budget(text, head, first)


def _within_budget(
    text: str, lex: Callable[[], tuple[str, ...]], first: int | None = None
) -> tuple[str, ...]:
    """``lex()`` (the lines of ``text`` highlighted) within the text's CPU time, else its
    lines (its first ``first``) escaped but not coloured."""
    try:
        with _cpu_deadline(_budget(text)):
            return lex()
    except Exception as error:
        if not _out_of_time(error):
            raise
        return tuple(escape(line, quote=False) for line in text.split("\n")[:first])


class _TooSlow(Exception):
    """The lexer ran out of its CPU time on a text (:data:`HIGHLIGHT_CPU_SECONDS`)."""


def _out_of_time(error: BaseException) -> bool:
    """``error`` is :class:`_TooSlow`, or was raised because of one: Pygments turns any
    exception while it compiles a lexer's rules (a sub-lexer's, the first time an HTML
    fence holds a script) into a ValueError, which dropped the whole entry."""
    seen: set[int] = set()
    found: BaseException | None = error
    while found is not None and id(found) not in seen:
        if isinstance(found, _TooSlow):
            return True
        seen.add(id(found))
        found = found.__cause__ or found.__context__
    return False


def _budget(text: str) -> float:
    return HIGHLIGHT_CPU_SECONDS + HIGHLIGHT_CPU_SECONDS_PER_CHAR * len(text)


@contextlib.contextmanager
def _cpu_deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`_TooSlow` in this block once the process has used ``seconds`` of CPU
    time: a lexer stuck inside one regular expression match (easytrieve's on a run of tabs)
    never returns to :func:`_merged_tokens`'s clock, and ``re`` gives way to a signal. Only
    in the main thread with ``SIGVTALRM`` and its timer unused (a caller's own are kept);
    elsewhere the clock between tokens is the only limit."""
    collecting = gc.isenabled()
    gc.disable()  # (a full collection of a big heap is not the lexer's time)
    try:
        if (
            not hasattr(signal, "setitimer")  # (Windows: the clock between tokens only)
            or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGVTALRM) != signal.SIG_DFL
            or signal.getitimer(signal.ITIMER_VIRTUAL)[0]
        ):
            yield
            return
        armed = [True]

        def out_of_time(signum: int, frame: object) -> None:
            if armed[0]:  # (not one that was on its way as the block ended)
                raise _TooSlow

        signal.signal(signal.SIGVTALRM, out_of_time)
        signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
        try:
            yield
        finally:
            armed[0] = False
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            signal.signal(signal.SIGVTALRM, signal.SIG_DFL)
    finally:
        if collecting:
            gc.enable()


def _html_lines(lexer: Lexer, text: str) -> Iterator[str]:
    """Each line of ``text`` as highlighted HTML, as soon as the lexer has passed it.

    The lexer is given a last line that ends in a line break (the lexers are created with
    ``ensurenl=False``, to keep a text's lines as they are): line-based ones, as the diff
    lexer, read an unfinished last line as an error, and `+new` showed in red."""
    current: list[str] = []
    closed = text.endswith("\n")
    for css, value in _merged_tokens(lexer, text if closed else text + "\n"):
        for index, piece in enumerate(value.split("\n")):
            if index:
                yield "".join(current)
                current = []
            if piece:
                escaped = escape(piece, quote=False)
                current.append(f"<span class={css}>{escaped}</span>" if css else escaped)
    if closed or current:  # (not the empty line after the break added above)
        yield "".join(current)


def _merged_tokens(lexer: Lexer, text: str) -> Iterator[tuple[str, str]]:
    """Tokens as (css class, text), merging neighbours of the same class; plain names,
    punctuation and whitespace get no class (they are not coloured), so most of a file's
    tokens need no markup at all."""
    css_now, buffer = "", []
    clock = time.thread_time
    deadline = clock() + _budget(text)
    for count, (token_type, value) in enumerate(lexer.get_tokens(text), start=1):
        if (count == 1 or count % _TIME_CHECK_TOKENS == 0) and clock() > deadline:
            raise _TooSlow
        css = "" if token_type in _PLAIN else _css_class(token_type)
        if css != css_now and buffer:
            yield css_now, "".join(buffer)
            buffer = []
        css_now = css
        buffer.append(value)
    if buffer:
        yield css_now, "".join(buffer)


def part_text(lines: list[str]) -> str:
    """The lines of a part a fold cuts off before the rest, joined. A ``<pre>`` shows no line
    after a final line break, so a blank last line gets one more (it was lost: a fold
    said "14 earlier lines" and showed 13, the gap before the rest closed)."""
    text = "\n".join(lines)
    return text + "\n" if lines and not lines[-1] else text


def highlight(text: str, language: str | None) -> Markup:
    return Markup("\n".join(highlight_lines(text, language)))


#: A code block in an answer longer than this many lines shows its first ``FENCE_HEAD_LINES``
#: and folds the rest (a whole file written out in a reply made a card screens tall).
FENCE_FOLD_LINES = 50
FENCE_HEAD_LINES = 30
_FOLD_FENCES = "fold_fences"


def _fence(renderer: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    info = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
    lines = token.meta.get("highlighted")  # half of a block cut in two, highlighted whole
    if lines is None:
        lines = highlight_lines(token.content.rstrip("\n"), fence_language(token))
    continued = token.meta.get("continued")  # the folded rest of a long block: no label again
    label = f'<span class="code-lang">{escape(info)}</span>' if info and not continued else ""
    if env.get(_FOLD_FENCES) and len(lines) > FENCE_FOLD_LINES:
        head, rest = part_text(lines[:FENCE_HEAD_LINES]), "\n".join(lines[FENCE_HEAD_LINES:])
        hidden = len(lines) - FENCE_HEAD_LINES
        return (
            f'<div class="code">{label}<pre><code>{head}</code></pre></div>'
            f'<details class="fold fold-after code-rest"><summary>{hidden:,} more lines of this'
            f' code</summary><div class="code cont"><pre><code>{rest}</code></pre></div>'
            "</details>\n"
        )
    body = part_text(lines) if token.meta.get("cut_after") else "\n".join(lines)
    # "cont": the rest of a block a fold cut, copied with its head (page.js restOf); told
    # by its missing label before, two whole unlabelled blocks at a fold were copied as one
    kind = "code cont" if continued else "code"
    return f'<div class="{kind}">{label}<pre><code>{body}</code></pre></div>\n'


def _image(renderer: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    """Inline data: images render; remote images become plain links (never fetched)."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = escape(renderer.renderInlineAsText(token.children or [], options, env))
    if _DATA_IMAGE.match(src):
        return f'<img class="md-img" src="{escape(src)}" alt="{alt}">'
    label = alt or escape(src)
    return f'<a class="remote-img" href="{escape(src)}" rel="noreferrer noopener">{label}</a>'


def _link_open(renderer: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    """A link without words (``[](https://…)``, ``[ ](…)``) shows its URL, as an image without
    alt text does: it was an empty ``<a>``, nothing to see or click, yet a Tab stop without
    a name."""
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    if not href.startswith("#"):
        token.attrSet("rel", "noreferrer noopener")
    html = renderer.renderToken(tokens, idx, options, env)
    inside = _wordless(tokens, idx + 1)
    if inside is None:
        return html
    for blank in inside:  # (the URL alone, not the URL and a space, underlined)
        if blank.type == "text":
            blank.content = ""
    return html + escape(href)


def _wordless(tokens: list[Any], start: int) -> list[Any] | None:
    """A link's tokens, from ``start`` to its ``link_close``, if they show nothing (blanks,
    emphasis around blanks); None if they show something (an image shows its alt text or
    its URL)."""
    inside = []
    for at in range(start, len(tokens)):  # (islice walked from 0 to start: quadratic over
        token = tokens[at]  # a message of 14,000 bare addresses, 1.4 s of 2.3)
        if token.type == "link_close":
            break
        if token.type == "image" or token.content.strip():
            return None
        inside.append(token)
    return inside


def _definition(renderer: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    """A link reference definition (``[1]: https://… "title"``) where it was written:
    markdown-it drops the line (it only feeds ``[text][1]`` links), so a source list at
    the end of an answer vanished, URL and title with it."""
    meta = tokens[idx].meta
    url = str(meta.get("url", ""))
    shown = escape(url)  # what the link opens (decoded, punycode could pass for another host)
    target = (
        f'<a href="{escape(url)}" rel="noreferrer noopener">{shown}</a>'
        if _SAFE_LINK.match(url.strip())
        else shown
    )
    title = f" &quot;{escape(meta['title'])}&quot;" if meta.get("title") else ""
    return f'<p class="md-ref">[{escape(str(meta.get("label", "")))}]: {target}{title}</p>\n'


_TOP_HEADING = "heading top level"  # env key: the level of a text's biggest heading


def note_top_heading(tokens: list[Any], env: dict[str, Any]) -> None:
    """Remember the biggest heading of a whole text, for a caller that renders its tokens
    in parts (both parts must shift their headings alike)."""
    levels = [int(t.tag[1]) for t in tokens if t.type == "heading_open"]
    env[_TOP_HEADING] = min(levels, default=1)


def _heading(renderer: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    """A message's headings become h4-h6, its biggest one h4: the page's own outline (h1
    title, h2 sections, h3 entries) stays what screen readers navigate by, and a message
    whose headings start at ``##`` does not skip from h3 to h5."""
    if _TOP_HEADING not in env:
        note_top_heading(tokens, env)
    token = tokens[idx]
    written = token.tag  # restored: the same tokens may be rendered again (a fold's parts)
    level = int(written[1]) - env[_TOP_HEADING] + 4
    token.tag = f"h{min(level, 6)}"
    try:
        html = renderer.renderToken(tokens, idx, options, env)
    finally:
        token.tag = written
    if level > 6 and token.nesting == 1:  # past h6: told apart from h6 by its look
        html = html.replace("<h6", '<h6 class="deeper"', 1)
    return html


_ALIGN_CLASS = {f"text-align:{side}": f"al-{side}" for side in ("left", "center", "right")}


def _cell_open(renderer: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    """Column alignment as a class: the page's CSP allows no inline ``style`` attributes."""
    token = tokens[idx]
    style = token.attrGet("style")
    if style is not None:
        del token.attrs["style"]
        if style in _ALIGN_CLASS:
            token.attrSet("class", _ALIGN_CLASS[style])
    return renderer.renderToken(tokens, idx, options, env)


#: What may be a strong character: an ASCII letter, or anything past ASCII (then asked).
_MAYBE_STRONG = re.compile(r"[A-Za-z]|[^\x00-\x7f]")
_ISOLATE_OPEN, _ISOLATE_CLOSE = "\u2066\u2067\u2068", "\u2069"


def text_direction(text: str) -> str | None:
    """Which way a text runs, ``"rtl"`` or ``"ltr"``, as its first strong character says
    (the rule a browser's ``dir="auto"`` and ``unicode-bidi: plaintext`` follow, isolates
    skipped); None when it has none (digits, punctuation): the direction around it stands."""
    isolated = 0
    for match in _MAYBE_STRONG.finditer(text):
        char = match.group()
        if char.isascii():
            if not isolated:
                return "ltr"
        elif char in _ISOLATE_OPEN:
            isolated += 1
        elif char == _ISOLATE_CLOSE:
            isolated = max(isolated - 1, 0)
        elif not isolated:
            kind = unicodedata.bidirectional(char)
            if kind == "L":
                return "ltr"
            if kind in ("R", "AL"):
                return "rtl"
    return None


_DIRECTIONS = "block directions"  # env key: the directions of the lists and quotes open


def _block_direction(tokens: list[Any], idx: int) -> str | None:
    """The direction of the text of the block opened at ``idx`` (a list or a quote): its
    first strong character, in its words and inline code (not a checkbox's markup, not a
    link's address, not a code block)."""
    level = tokens[idx].level
    for at in range(idx + 1, len(tokens)):  # (islice walked the first idx again: quadratic)
        token = tokens[at]
        if token.level <= level:
            break
        if token.type != "inline":
            continue
        for child in token.children or ():
            if child.type in ("text", "code_inline"):
                direction = text_direction(child.content)
                if direction:
                    return direction
    return None


def _directed_open(renderer: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    """A list or quote whose text is right to left says ``dir="rtl"``: its bullets, numbers
    and quote bar go to the right, beside the text (``unicode-bidi: plaintext`` turns each
    item's words, not where the list puts its markers, 720 px from them). Said only where
    it differs from the block around it: a left-to-right text costs no byte."""
    html = renderer.renderToken(tokens, idx, options, env)
    stack = env.setdefault(_DIRECTIONS, [])
    around = stack[-1] if stack else "ltr"
    own = _block_direction(tokens, idx) or around
    stack.append(own)
    if own == around:
        return html
    tag = tokens[idx].tag
    return html.replace(f"<{tag}", f'<{tag} dir="{own}"', 1)


def _directed_close(renderer: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    stack = env.get(_DIRECTIONS)
    if stack:
        stack.pop()
    return renderer.renderToken(tokens, idx, options, env)


#: Lists and quotes nested deeper than this (two levels per list) are not parsed: markdown-it
#: silently drops the rest of the text there, so such a text is shown plain instead.
MAX_NESTING = 50
_NESTING_CUT = "nesting_cut"


def _watch_nesting(md: MarkdownIt) -> None:
    """Flag (in ``env``) a text whose blocks nest past ``MAX_NESTING``: markdown-it's block
    parser skips everything from there to the end of the enclosing block without a word."""
    tokenize = md.block.tokenize

    def watched(state: Any, start: int, end: int) -> None:
        if state.level >= MAX_NESTING:
            line = state.skipEmptyLines(start)
            if line < end and state.sCount[line] >= state.blkIndent:
                state.env[_NESTING_CUT] = True
        tokenize(state, start, end)

    md.block.tokenize = watched  # type: ignore[method-assign]


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt(
        "commonmark",
        {
            "html": False,
            "breaks": True,
            "linkify": False,
            "maxNesting": MAX_NESTING,
            "inline_definitions": True,
        },
    )
    _watch_nesting(md)
    md.enable(["table", "strikethrough"])
    # With "html" off these rules only ever decline (raw HTML stays text), but they are
    # tried at every line and every "<": dropping them renders 20% faster, same output.
    md.disable(["html_block", "html_inline"])
    md.use(tasklists_plugin, label=True)  # the item's words name its checkbox
    use_bare_links(md)
    md.validateLink = _validate_link
    md.add_render_rule("fence", _fence)
    md.add_render_rule("code_block", _fence)
    md.add_render_rule("image", _image)
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("definition", _definition)
    md.add_render_rule("heading_open", _heading)
    md.add_render_rule("heading_close", _heading)
    md.add_render_rule("th_open", _cell_open)
    md.add_render_rule("td_open", _cell_open)
    for block in ("bullet_list", "ordered_list", "blockquote"):
        md.add_render_rule(f"{block}_open", _directed_open)
        md.add_render_rule(f"{block}_close", _directed_close)
    return md


#: More "[" than this outside code blocks and a text is shown plain: markdown-it-py looks
#: for a link label's end at each one, 40-90 µs apiece (a pasted 300 KB JSON array took
#: 4 s, a crafted "![" run a minute); fenced code costs nothing, so it is not counted.
MAX_LINK_OPENERS = 5_000
#: A text of more lines is shown plain: markdown-it took 21 s over a pasted million-line
#: prompt (2 MB), 0.4 s per 20,000 lines; such a text is a log or data, not prose.
MAX_MARKDOWN_LINES = 50_000
_FENCED = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?^ {0,3}\1", re.MULTILINE | re.DOTALL)


def _too_slow(text: str) -> bool:
    return text.count("[") > MAX_LINK_OPENERS and (
        _FENCED.sub("", text).count("[") > MAX_LINK_OPENERS
    )


def plain_block(text: str, why: str | None = None) -> Markup:
    """Text a Markdown parser should not read, as it is, with a note saying why."""
    note = (
        f'<p class="md-note">{escape(why)}: shown as plain text, not Markdown.</p>' if why else ""
    )
    return Markup(f'{note}<pre class="md-plain">{escape(text)}</pre>')


#: What makes a text more than paragraphs of plain words for markdown-it as set up here: a
#: character an inline rule starts at (escape, code, strike, emphasis, link, image, autolink,
#: entity), a bare address, whitespace other than spaces and line breaks (tabs indent,
#: str.strip knows more than markdown-it), a NUL or CR (rewritten before parsing), or a
#: line that may open another block (heading, quote, list, rule, setext underline, table
#: row, indented code). Conservative: any of them sends the text to markdown-it.
_NOT_PLAIN = re.compile(
    r"[\\`~*_\[<&\0\r]|[^\S \n]|://|www\.|^ *(?:[#>+=|:-]|\d+[.)]| {4})", re.MULTILINE
)


_BREAK = "<br />\n"  # (the commonmark preset writes XHTML breaks)


def _plain_paragraphs(text: str) -> str | None:
    """What markdown-it renders for a text of plain paragraphs, without parsing it (most
    short answers and prompts): each run of non-blank lines is a ``<p>``, its lines joined
    by ``<br />`` ("breaks" is on) with their outer spaces dropped; ``>`` and ``"`` escaped as
    markdown-it escapes them (``&`` and ``<`` never get here). None for any other text."""
    if _NOT_PLAIN.search(text) or text.count("\n") >= MAX_MARKDOWN_LINES:
        return None
    html, lines = [], []
    for line in text.replace(">", "&gt;").replace('"', "&quot;").split("\n"):
        if line := line.strip(" "):
            lines.append(line)
        elif lines:
            html.append(f"<p>{_BREAK.join(lines)}</p>\n")
            lines = []
    if lines:
        html.append(f"<p>{_BREAK.join(lines)}</p>\n")
    return "".join(html)


def markdown(text: str, *, fold_long_code: bool = False) -> Markup:
    """Render untrusted Markdown to safe HTML; ``fold_long_code``: a code block longer than
    ``FENCE_FOLD_LINES`` shows its head and folds the rest, nothing cut."""
    if not text:
        return Markup("")
    plain = _plain_paragraphs(text)
    if plain is not None:
        return Markup(plain)
    parsed = parse_markdown(text)
    if isinstance(parsed, str):
        return plain_block(text, parsed)
    tokens, env = parsed
    if fold_long_code:
        env[_FOLD_FENCES] = True
    return render_tokens(tokens, env)


def parse_markdown(text: str) -> tuple[list[Any], dict[str, Any]] | str:
    """Block tokens of untrusted Markdown and their ``env`` (link references), for a caller
    that renders parts of them (:func:`render_tokens`); where it is shown plain instead
    (nested too deep, or too slow to parse), why. A NUL is its sign ␀ before parsing, as
    the page shows every other control: markdown-it made it U+FFFD, which says nothing."""
    if _too_slow(text):
        return f"More than {MAX_LINK_OPENERS:,} “[” outside code blocks"
    if text.count("\n") >= MAX_MARKDOWN_LINES:
        return f"More than {MAX_MARKDOWN_LINES:,} lines"
    env: dict[str, Any] = {}
    tokens = _markdown().parse(text.replace("\0", "\u2400"), env)
    if env.get(_NESTING_CUT):
        return f"Nested more than {MAX_NESTING} levels deep"
    return tokens, env


def fence_language(token: Any) -> str | None:
    """The language a fence or code block is highlighted in (None: plain)."""
    info = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
    return info.lower() if lexer_for(info) else None


def render_tokens(tokens: list[Any], env: dict[str, Any]) -> Markup:
    """Some of :func:`parse_markdown`'s tokens, as :func:`markdown` renders them."""
    md = _markdown()
    env[_DIRECTIONS] = []  # a part may start or end inside a list: each starts afresh
    return Markup(md.renderer.render(tokens, md.options, env))


def safe_image_src(data: Any) -> str | None:
    """A data: URI for an image block's base64 ``data``, or None when it is not a whole PNG,
    JPEG, GIF or WebP. Its type is the one the bytes say, not the block's ``mimeType``: Pi
    shows a JPEG labelled ``image/jpg`` and a PNG with none (it assumes PNG), a browser sniffs
    the format anyway, and only the bytes say whether a page can show it safely (no SVG).
    The data is read whole (one strict decode): a cut or corrupt upload whose first bytes
    were a PNG's drew a broken image, and the Markdown said the page showed it."""
    raw = image_bytes(data)
    kind = whole_image_type(raw) if raw is not None else None
    return f"data:{kind};base64,{data}" if kind else None


#: What a data: URL's base64 may hold besides its digits: ASCII whitespace (a browser's
#: "forgiving base64" drops it; any other blank, as U+00A0, breaks the image there).
_BASE64_BLANKS = b"\t\n\f\r "


def image_bytes(data: Any) -> bytes | None:
    """The bytes base64 ``data`` holds, read strictly as a browser reads a data: URL (blanks
    skipped, padding optional, nothing else but base64 digits); None when it is no base64."""
    if not isinstance(data, str):
        return None
    try:
        digits = data.encode("ascii").translate(None, _BASE64_BLANKS)
    except UnicodeEncodeError:
        return None
    if len(digits) % 4 and not digits.endswith(b"="):  # (padding left out: still read)
        digits += b"=" * (-len(digits) % 4)
    try:
        return base64.b64decode(digits, validate=True)
    except ValueError:  # binascii.Error: a stray character, bad padding, a cut digit
        return None


def image_type(raw: bytes) -> str | None:
    """The MIME type a PNG, JPEG, GIF or WebP file's first bytes say, else None (text, a
    PDF, an SVG: script, instead of a note). :func:`whole_image_type` reads on."""
    if raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if raw.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if raw.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return None


def whole_image_type(raw: bytes) -> str | None:
    """:func:`image_type`, when the file is whole as far as its structure says without
    decoding the picture (a truncated upload, or PNG magic before an SVG's text, drew a
    broken image): a PNG's chunks run from IHDR to IEND; a JPEG's segments are complete up
    to its first scan's header (its end is not asked for: browsers show a JPEG
    without its end marker, as the 1x1 JPEG often passed around, and a photo with a video
    after it); a GIF's blocks are complete (its trailer may be missing); a WebP's RIFF
    size fits the bytes and holds a picture. Bytes after the end are allowed."""
    kind = image_type(raw)
    if kind is None:
        return None
    return kind if _WHOLE[kind](raw) else None


def _png_whole(raw: bytes) -> bool:
    """Chunks from the signature on, IHDR first (a size), an IDAT, up to IEND."""
    at, end, pictured = 8, len(raw), False
    first = True
    while at + 12 <= end:
        length, kind = struct.unpack_from(">I4s", raw, at)
        after = at + 12 + length
        if after > end:
            return False
        if first:
            width, height = struct.unpack_from(">II", raw, at + 8) if length == 13 else (0, 0)
            if kind != b"IHDR" or not width or not height:
                return False
            first = False
        elif kind == b"IDAT":
            pictured = True
        elif kind == b"IEND":
            return pictured
        at = after
    return False


#: JPEG markers that carry no length (TEM, RSTn, SOI), and those that start a frame (SOFn)
_JPEG_BARE = frozenset({0x01, *range(0xD0, 0xD9)})
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_whole(raw: bytes) -> bool:
    """Segments, each whole, up to the first scan's header, with a frame of some size
    before it."""
    at, end, framed = 2, len(raw), False
    while at + 2 <= end:
        if raw[at] != 0xFF:
            return False
        marker = raw[at + 1]
        if marker == 0xFF:  # a fill byte
            at += 1
            continue
        if marker in _JPEG_BARE:
            at += 2
            continue
        if at + 4 > end:
            return False
        length = int.from_bytes(raw[at + 2 : at + 4], "big")
        after = at + 2 + length
        if length < 2 or after > end:
            return False
        if marker in _JPEG_FRAMES:
            if length < 8:
                return False
            height, width = struct.unpack_from(">HH", raw, at + 5)
            framed = framed or bool(width and height)
        elif marker == 0xDA:  # start of scan (a browser shows one with no data yet)
            return framed
        elif marker == 0xD9:  # the end, before any scan
            return False
        at = after
    return False


def _gif_whole(raw: bytes) -> bool:
    """The screen descriptor and colour table, then blocks (images, extensions), each with
    its sub-blocks whole, up to the trailer or the end of the bytes, at least one image."""
    end = len(raw)
    if end < 13:
        return False
    at, images = 13, 0
    if raw[10] & 0x80:
        at += 3 << ((raw[10] & 7) + 1)
    while at < end:
        block = raw[at]
        if block == 0x3B:  # the trailer
            return images > 0
        if block == 0x21:  # an extension: introducer, label, sub-blocks
            at += 2
        elif block == 0x2C:  # an image: descriptor, local colour table, LZW code size
            if at + 10 > end:
                return False
            flags = raw[at + 9]
            at += 10 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0) + 1
            images += 1
        else:
            return False
        while True:  # sub-blocks, up to an empty one
            if at >= end:
                return False
            size = raw[at]
            at += 1 + size
            if not size:
                break
    return images > 0 and at == end


def _webp_whole(raw: bytes) -> bool:
    """The RIFF size within the bytes, its chunks whole, one of them a picture (VP8, VP8L,
    or an animation's frame)."""
    size = int.from_bytes(raw[4:8], "little")
    end = 8 + size
    if size < 12 or end > len(raw):
        return False
    at, pictured = 12, False
    while at + 8 <= end:
        kind, length = raw[at : at + 4], int.from_bytes(raw[at + 4 : at + 8], "little")
        after = at + 8 + length
        if after > end:
            return False
        pictured = pictured or kind in (b"VP8 ", b"VP8L", b"ANMF")
        at = after + (length & 1)
    return pictured


_WHOLE = {
    "image/png": _png_whole,
    "image/jpeg": _jpeg_whole,
    "image/gif": _gif_whole,
    "image/webp": _webp_whole,
}


def files_api_image(block: dict[str, Any]) -> str | None:
    """What an image the Anthropic Files API holds is (``"source": {"type": "file",
    "file_id": …}``, in a Claude Code prompt): not invalid data, only not in the file (the
    page and the Markdown called it "unsupported or invalid data"); None for any other."""
    source = block.get("source")
    if "data" in block or not isinstance(source, dict) or source.get("type") != "file":
        return None
    file_id = source.get("file_id")
    named = f" ({file_id})" if isinstance(file_id, str) and file_id else ""
    return f"an image held by the Files API{named}, not in the transcript"
