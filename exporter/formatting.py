"""Human formatting shared by the CLI and the HTML page (numbers, money, dates, durations)."""

from __future__ import annotations

import codecs
import contextlib
import contextvars
import html
import math
import os
import re
import sys
import unicodedata
from collections.abc import Iterator
from datetime import datetime
from operator import methodcaller
from typing import Any

import markupsafe
from markupsafe import Markup

from exporter.times import clock_text, utc_moment

#: A user's home folder at the start of a path: ``/home/alice``, ``/Users/bob`` or root's
#: ``/root`` (``user``: its owner's name, as ``~alice`` says it).
HOME_FOLDER = re.compile(r"^(?:/home/|/Users/|/(?=root(?:/|$)))(?P<user>[^/]+)(?=/|$)")

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def fmt_int(value: int | float) -> str:
    """``1,234``; a float past the range of numbers (an overflowed sum) as itself."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return f"{int(value):,}"


def fmt_cost(value: float) -> str:
    """Dollars with the "$" that Pi's page loses. Under a dollar, three decimals (as Pi
    shows them), so a table's rows still add up to its total ($0.102 + $0.034 = $0.136,
    where cents would read $0.10 + $0.03 = $0.14); sub-cent amounts keep four. A negative
    amount (a damaged or hand-edited usage) reads "-$9.00", not "$-9.00"; one too small
    for four decimals "<$0.0001", not "$0.0000", which reads as free. Costs summed past the
    float range read "overflow" (the JSON's null), not "$inf"."""
    if not math.isfinite(value):  # inf, -inf, and their sum (nan)
        return "overflow"
    if value < 0:
        shown = fmt_cost(-value)
        if shown.startswith("<"):
            return ">-$0.0001"
        return shown if shown.strip("$0.") == "" else "-" + shown  # no "-$0.0000"
    value = abs(value)  # -0.0 too
    if not abs(value) < 1e12:  # an overflowed sum (1e308) was a 309-digit amount
        return f"${value:.3g}"
    if value and round(value, 4) == 0:  # "$0.0000" read as free
        return "<$0.0001"
    if value and abs(round(value, 4)) < 0.01:
        return f"${value:,.4f}"
    if value and abs(round(value, 3)) < 1:  # $0.9996 rounds to a dollar: "$1.00"
        return f"${value:,.3f}"
    return f"${value:,.2f}"


_DECIMALS = re.compile(r"\d\.(\d+)$")


def decimal_pads(cells: list[str]) -> list[int]:
    """How many digits each right-aligned number lacks to line its decimal point up with
    the column's: "$16.15" over "$0.600" takes one, or the points stagger."""
    decimals = [len(m.group(1)) if (m := _DECIMALS.search(c)) else 0 for c in cells]
    most = max(decimals, default=0)
    return [most - d if d else 0 for d in decimals]


def fmt_tokens_short(value: int | float) -> str:
    value = int(value)
    if value < 1000:
        return str(value)
    if value < 10_000:
        return f"{value / 1000:.1f}k"
    if value < 1_000_000:
        return f"{value // 1000}k"
    for unit, size in (("M", 10**6), ("G", 10**9), ("T", 10**12)):
        if round(value / size, 1) < 1000:  # the unit after rounding: never "1000.0G"
            return f"{value / size:.1f}{unit}"
    return f"{value:.2g}"  # an axis of absurd (damaged) usage: "1e+16", not 16 digits


def plural(count: int, one: str, many: str | None = None) -> str:
    """``1 secret``, ``3 secrets``, ``2 entries``: a count with its noun."""
    return f"{count:,} {one if count == 1 else many or one + 's'}"


#: Scripts written without spaces between words: each character counts as a word, as
#: reading-time estimates do (a Chinese paragraph would otherwise be "1 word").
_UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(f"[{_UNSPACED}]|[^\\s{_UNSPACED}]+")


def word_count(text: str) -> str:
    """How long a folded text is (``1,234 words``), so a reader knows before opening it
    whether it is a line or an essay."""
    return plural(sum(1 for _ in _WORD.finditer(text)), "word")


def label_badges(labels: list[str], limit: int = 4) -> tuple[list[str], int]:
    """Each label once, with how often it was set (``bug-found ×9``), the most frequent
    first and at most ``limit`` of them, plus how many distinct labels were left out: a
    branch labelled 25 times was a row of 25 badges."""
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: -item[1])  # stable: first seen first
    shown = [label if n == 1 else f"{label} ×{n}" for label, n in ranked[:limit]]
    return shown, max(0, len(ranked) - limit)


def fmt_duration(seconds: float | None) -> str:
    """A session's length for people: "2h 5m"; "under 1s" rather than a bare "0s" that
    reads like a missing value (generated sessions span milliseconds)."""
    if seconds is None:
        return "unknown"
    if 0 <= seconds < 1:
        return "under 1s"
    seconds = round(seconds)
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h {minutes}m"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {secs}s"
    return f"{secs}s"


def fmt_datetime(moment: datetime | None) -> str:
    """ISO-like date and time in UTC, e.g. ``2025-06-01 10:01:00 +00:00``: one zone
    throughout, as the page writes them (a start written at +05:30 above an end at +00:00
    read as ending before it began), the year in four digits (``0999``)."""
    if moment is None:
        return "unknown"
    try:
        return clock_text(utc_moment(moment)) + " +00:00"
    except OverflowError:  # a moment made elsewhere than parse_time: 9999-12-31T23:00-05:00
        offset = moment.strftime("%z")
        return f"{clock_text(moment)} {offset[:3]}:{offset[3:5]}".rstrip(" :")


def local_minute(moment: datetime | None) -> str:
    """A session's last activity in the reader's own time zone, as the page shows it and as
    ``--since YYYY-MM-DD`` reads a date (in UTC a New York evening was the next day)."""
    if moment is None:
        return "unknown"
    try:
        return clock_text(moment.astimezone(), "minutes")
    except (OverflowError, ValueError, OSError):  # year 9999 east of UTC: no local date
        return fmt_datetime(moment)[:16] + " UTC"


#: The whitespace a line collapses, as the page does: spaces, tabs, line breaks and the
#: Unicode spaces and line separators, which draw as space. Not the controls Python's
#: ``str.split()`` also splits at (VT, FF, U+001C-U+001F, NEL): the page and
#: :func:`terminal_text` show them as signs, and a session named "de\x1fploy" printed as
#: "de ploy" in `list`. (A regular expression character class.)
SPACE_CLASS = "[ \t\n\r\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
_SPACE_RUN = re.compile(SPACE_CLASS + "+")
#: What ``str.split()`` splits at that is no space: text without them takes the faster split.
_SPLIT_BUT_SHOWN = re.compile("[\x0b\x0c\x1c-\x1f\x85]")


def collapse_spaces(text: str) -> str:
    """Each run of whitespace (:data:`SPACE_CLASS`) one space, none at the ends; a control
    that is no space stays, for a sign to show it."""
    if not _SPLIT_BUT_SHOWN.search(text):
        return " ".join(text.split())
    return _SPACE_RUN.sub(" ", text).strip(" ")


#: Characters a cut before never falls (:func:`cluster_cut`): the zero width joiner, the
#: emoji skin tone modifiers, Hangul vowel and final jamo, tag characters (a subdivision
#: flag's letters) and, by category, marks (combining accents, variation selectors, the
#: keycap, Indic vowel signs).
_CLUSTER_GLUE = re.compile(
    "[\u200d\U0001f3fb-\U0001f3ff\u1160-\u11ff\ud7b0-\ud7ff\U000e0020-\U000e007f]"
)
_MARKS = frozenset({"Mn", "Mc", "Me"})
_REGIONAL_INDICATORS = range(0x1F1E6, 0x1F200)


def _joined(text: str, at: int) -> bool:
    """Whether ``text[at - 1]`` and ``text[at]`` are in one grapheme cluster, by a small
    conservative rule: a mark or joiner stays with what it follows, what follows a zero
    width joiner with it, and regional indicators (flags) in pairs."""
    char = text[at]
    if _CLUSTER_GLUE.match(char) or unicodedata.category(char) in _MARKS:
        return True
    if text[at - 1] == "\u200d":
        return True
    if ord(char) in _REGIONAL_INDICATORS:
        before = at  # (linear in a run of flags: a cap cut a capped prompt's flags in half)
        while before > 0 and ord(text[before - 1]) in _REGIONAL_INDICATORS:
            before -= 1
        return (at - before) % 2 == 1  # the second of a pair
    return False


def cluster_cut(text: str, at: int) -> int:
    """Where to cut ``text`` to keep at most ``text[:at]``: ``at``, or back at the start of
    the grapheme cluster (what a reader sees as one character) it falls in, so no emoji
    sequence (a skin tone, a zero width joiner's family, a flag) or accented letter is
    broken before an ellipsis. ``at`` itself when the cluster starts the text (one
    cluster longer than any room: the cut cannot do better)."""
    at = max(0, min(at, len(text)))
    cut = at
    while 0 < cut < len(text) and _joined(text, cut):
        cut -= 1
    return cut or at


def clipped(text: str, limit: int) -> str:
    """``text`` as it is when it has at most ``limit`` characters, else cut with an ellipsis
    to ``limit`` at most, at a grapheme cluster's start (:func:`cluster_cut`): no emoji or
    accented letter broken before the "…"."""
    return text if len(text) <= limit else text[: cluster_cut(text, limit - 1)] + "…"


def cluster_start_after(text: str, at: int) -> int:
    """Where to start a tail of ``text`` that keeps at most ``text[at:]``: ``at``, or on at
    the start of the next grapheme cluster (see :func:`cluster_cut`)."""
    at = max(0, min(at, len(text)))
    start = at
    while 0 < start < len(text) and _joined(text, start):
        start += 1
    return start if start < len(text) else at


def one_line(text: str | None, limit: int | None = 80) -> str:
    """Collapse whitespace and cut to ``limit`` characters with an ellipsis (``None``: no
    cut, for an id or a path that must be shown whole), at a grapheme cluster's start
    (:func:`cluster_cut`). A cut drops the space or punctuation before the ellipsis
    ("selectors.…" read as two endings) and adds none after one already there."""
    if not text:
        return ""
    flat = collapse_spaces(text)
    if limit is None or len(flat) <= limit:
        return flat
    whole = flat[: cluster_cut(flat, limit - 1)]
    kept = whole.rstrip(" .,;:") or whole
    return kept if kept.endswith("…") else kept + "…"


def fit_columns(text: str | None, columns: int, stream: Any = None) -> str:
    """:func:`one_line` cut to ``columns`` terminal columns, not characters: a CJK title
    cut at 48 characters took 96 columns of `list`'s row (and `stats`' one-line title
    wrapped). Measured as :func:`terminal_text` shows it: a zero width space is printed as
    an 8-column sign, and a title of them filled 500 columns. And as ``stream`` (default
    stdout) writes it: on a Latin-1 terminal an emoji is the 10 characters ``\\U0001f600``,
    and a title cut to 50 columns before that took 300 (see :func:`as_printed`). Cut at a
    grapheme cluster's start (:func:`cluster_cut`): no broken emoji before the ellipsis."""
    flat = as_printed(terminal_text(one_line(text, None)), stream)
    if display_width(flat) <= columns:
        return flat
    ellipsis = "…" if prints_as_is("…", stream) else "..."  # not "\\u2026" or "?"
    room = columns - display_width(ellipsis)
    width = 0
    for index, char in enumerate(flat):
        width += char_width(char)
        if width > room:  # flat[:index] and the ellipsis fill the columns
            whole = flat[: cluster_cut(flat, index)]
            kept = whole.rstrip(" .,;:") or whole
            return kept if kept.endswith(("…", ellipsis)) else kept + ellipsis
    return flat


def as_printed(text: str, stream: Any = None) -> str:
    """``text`` as pi-session's output writes it to ``stream`` (default stdout): where the
    stream's encoding has no character for one, its escape (``\\u05e9``, ``\\U0001f600``:
    the "backslashreplace" :func:`exporter.cli.main` gives a strict stream) or what the
    stream's own error handler puts there. A table measured before the stream escaped its
    cells lost its columns (rows of 114 to 309 characters on a Latin-1 terminal); escaped
    first, each cell is measured as it will be seen."""
    encoding, errors = printed_encoding(stream)
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode(encoding, errors).decode(encoding, "replace")
    return text


def printed_encoding(stream: Any = None) -> tuple[str, str]:
    """The encoding and error handler ``click.echo`` writes ``stream`` (default stdout)
    with: an ASCII stream (the C locale) it writes as UTF-8, replacing what cannot be;
    a strict one pi-session made "backslashreplace"; a surrogate escape, which only
    bytes read from the system can pass, escapes the rest the same way."""
    stream = sys.stdout if stream is None else stream
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return "utf-8", "replace"
    if name == "ascii":  # click's own choice for a stream it finds misconfigured
        return "utf-8", "replace"
    errors = getattr(stream, "errors", None) or "strict"
    if errors in ("strict", "surrogateescape", "surrogatepass"):
        errors = "backslashreplace"
    return name, errors


def prints_as_is(text: str, stream: Any = None) -> bool:
    """Whether ``stream`` (default stdout) writes ``text`` as itself, not escaped."""
    return as_printed(text, stream) == text


#: A run of the surrogates that stand for bytes the file system encoding could not decode
#: (Python's "surrogateescape": U+DC80 to U+DCFF for the bytes 0x80 to 0xFF).
_ESCAPED_BYTES = re.compile("[\udc80-\udcff]+")


def decode_escaped_utf8(text: str) -> str:
    """``text`` with each run of escaped bytes that is UTF-8 decoded as UTF-8: what a
    command line argument or a file name says, when Python's UTF-8 mode is off in the C
    locale (``PYTHONUTF8=0 LC_ALL=C``) and it decoded them as ASCII (``登录`` arrived as
    ``\\udce7\\udc99\\udcbb…``). As ``os.fsencode(text).decode("utf-8",
    "surrogateescape")`` for such a string, and for one that mixes them with characters
    too. Bytes that are not UTF-8 stay escaped: lossless, for a file named by them."""
    if not _ESCAPED_BYTES.search(text):
        return text
    return _ESCAPED_BYTES.sub(_decoded_run, text)


def _decoded_run(match: re.Match[str]) -> str:
    data = bytes(ord(char) - 0xDC00 for char in match.group())
    return data.decode("utf-8", "surrogateescape")


def short_path(text: str | None, limit: int = 50) -> str:
    """A path on one line, cut in the middle when too long: its file name is what a reader
    looks for, and cutting the end (``~/work/pi-mono/packages/coding-agen…``) lost it.
    Both cuts at a grapheme cluster's start (:func:`cluster_cut`)."""
    flat = collapse_spaces(text) if text else ""
    if len(flat) <= limit:
        return flat
    head = flat[: cluster_cut(flat, max(1, limit // 3))]
    folder = head.rfind("/")
    if folder > 1:  # end the head at a folder: "~/workspaces/…", not "~/workspaces/p…"
        head = head[: folder + 1]
    name = flat.rsplit("/", 1)[-1]
    if len(name) + len(head) + 2 > limit and len(name) + 4 <= limit:
        head = flat[: flat.find("/", 1) + 1] or flat[:1]  # the whole file name before the head
    room = limit - len(head) - 1
    tail = flat[-room:]
    tail = flat[cluster_start_after(flat, len(flat) - len(tail)) :]
    folder = tail.find("/")
    if 0 < folder < room // 2:  # and start the tail at one: "…/docs/refactor.md"
        tail = tail[folder:]
    return f"{head}…{tail}"


# Markdown syntax a one-line preview shows as noise: emphasis, code spans, links, images,
# heading / quote / list markers and code fences. Each pattern is anchored on its literal
# delimiters and never spans lines, so a hostile text costs linear time.
_MD_LINE_MARKS = re.compile(
    r"^[ \t]{0,3}(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+|```+[^\n`]*$|~~~+.*$)", re.M
)
# a destination may hold balanced parentheses (Rust_(programming_language)), one level deep
_MD_DEST = r"(?:[^()\s]|\([^()\s]{0,200}\)){0,500}"
_MD_IMAGE = re.compile(r"!\[([^\]\n]{0,200})\]\(" + _MD_DEST + r"(?:[ \t]+\"[^\"\n]{0,200}\")?\)")
_MD_LINK = re.compile(r"\[([^\]\n]{1,200})\]\(" + _MD_DEST + r"(?:[ \t]+\"[^\"\n]{0,200}\")?\)")
_MD_CODE = re.compile(r"`([^`\n]{1,200})`")
_HELD = re.compile("\ue000(\\d+)\ue001")  # a code span's place while the prose is cleaned
_MD_STRONG = re.compile(r"\*\*(?=\S)([^*\n]{1,200}?)(?<=\S)\*\*")  # not __: __init__
_MD_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]{1,200}?)(?<=[^\s*])\*(?![\w*])")
_FIRST_GROUP = methodcaller("group", 1)  # a C-level callable: cheaper than r"\1" per match
_MD_ANY = re.compile(r"[#>*+`~\[-]")


def _plain_prose(text: str) -> str:
    """Links, images and emphasis as their words (text outside code spans)."""
    if "[" in text:
        text = _MD_IMAGE.sub(lambda m: m.group(1) or "image", text)
        text = _MD_LINK.sub(_FIRST_GROUP, text)
    if "*" in text:
        text = _MD_STRONG.sub(_FIRST_GROUP, text)
        text = _MD_EMPHASIS.sub(_FIRST_GROUP, text)
    return text


def plain_line(text: str | None, limit: int = 80) -> str:
    """A Markdown text as one plain line (``**Fix** the `auth` [bug](u)`` → ``Fix the auth
    bug``), cut to ``limit``: for titles and previews, where markup would show as noise."""
    if not text:
        return ""
    head = text[: cluster_cut(text, limit * 4 + 200)]  # only what can be shown: cheap
    cut = len(head) < len(text)
    if _MD_ANY.search(head):
        head = _MD_LINE_MARKS.sub("", head)
        if "`" in head:  # code is shown as written: `[text](url)` is not a link there, but
            # markup around it is (**`auth.py`**, [`load`](url)): code waits in placeholders
            codes: list[str] = []

            def hold(match: re.Match[str]) -> str:
                codes.append(match.group(1))
                return f"\ue000{len(codes) - 1}\ue001"

            head = _plain_prose(_MD_CODE.sub(hold, head.replace("\ue000", "\ufffd")))
            head = _HELD.sub(lambda m: codes[int(m.group(1))], head)
        else:
            head = _plain_prose(head)
    line = one_line(head, limit)
    return one_line(line + " …", limit) if cut and not line.endswith("…") else line


_SKILL = re.compile(r'^<skill name="([^"]*)"(?: location="([^"]*)")?>\n?(.*?)\n?</skill>\n*', re.S)


def split_skill(text: str) -> tuple[tuple[str, str] | None, str]:
    """Pi wraps a skill invocation as ``<skill name=…>body</skill>`` before the prompt."""
    match = _SKILL.match(text)
    if not match:
        return None, text
    return (match.group(1), match.group(3)), text[match.end() :]


def skill_and_line(text: str, limit: int) -> tuple[str | None, str]:
    """A prompt's skill (its name on one line; None for none) and its words as one plain
    line ("" for none), for titles and outline rows alike."""
    skill, rest = split_skill(text)
    line = plain_line(rest, limit) or one_line(rest, limit)  # a prompt that is all markup
    return (one_line(skill[0], 40) if skill else None), line


def prompt_line(text: str, limit: int) -> str:
    """A prompt as one plain line (``skill: pdf · convert it``; ``**Fix** `auth` `` →
    ``Fix auth``): a title in `list`, `stats` and the page alike."""
    skill, line = skill_and_line(text, limit)
    if skill is None:
        return line or "(image)"  # a prompt with no words: its image
    return f"skill: {skill} · {line}" if line else f"skill: {skill}"


def escape_surrogates(text: str) -> str:
    """Lone surrogates (valid in Pi's JSON, not in UTF-8) as ``\\uXXXX`` escapes, so JSON
    text stays valid UTF-8 and parses back to the same string."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def replace_surrogates(text: str) -> str:
    """Lone surrogates as U+FFFD, for text shown to people."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def surrogates_as_replacement_escapes(json_text: str) -> tuple[str, int]:
    """JSON text written with its lone surrogates as they are, each now a ``\\ufffd``
    escape (two halves of a pair joined into their character), and how many: for readers
    that take no escaped half either (Arrow). A surrogate is only ever inside a string."""
    if not _LONE_SURROGATE.search(json_text):
        return json_text, 0
    joined = json_text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    halves = len(_LONE_SURROGATE.findall(joined))
    return _LONE_SURROGATE.sub(lambda _: "\\ufffd", joined), halves


#: Characters no reader should get unseen: C0/C1 controls (not tab, newline, carriage
#: return) and the bidi overrides and isolates that reorder text on screen ("Trojan Source":
#: ``invoice_\u202egnp.exe`` displays as ``invoice_exe.png``).
_HIDDEN_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: Terminal colour and cursor codes (CSI: ``␛[1;32m``, ``␛[K`` after every ``grep --color``
#: match) carry no text and are dropped (a tool output's colour codes were made coloured
#: spans before, by ``render/ansi.py``: any left are other text's). Nothing else is: OSC
#: strings (titles, hyperlinks) hold text the model read, so they stay, their ESC/BEL shown
#: as signs. The pattern runs over the finished page, so it cannot take a character that
#: markup needs (< > & " ' =).
_TERMINAL = re.compile("\x1b\\[[0-9;:?]*[ !#$%()*+,\\-./]*[@-~]")


def _visible_control(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ␀ ␛ ...
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\u27e8U+{code:04X}\u27e9"  # ⟨U+202E⟩


#: Unicode tag characters (U+E0000-E007F) draw nothing, yet a model reads them as the ASCII
#: they shadow: "ASCII smuggling" hides instructions in a prompt or a tool's output. A run of
#: them is shown decoded; the one real use is kept: the three subdivision flags systems draw
#: (🏴 + "gbeng"/"gbsct"/"gbwls" in tags + cancel tag). Any other "flag" could spell a
#: message five letters at a time.
_TAG_RUN = re.compile(
    "\U0001f3f4\U000e0067\U000e0062(?:\U000e0065\U000e006e\U000e0067|\U000e0073\U000e0063"
    "\U000e0074|\U000e0077\U000e006c\U000e0073)\U000e007f|[\U000e0000-\U000e007f]+"
)
#: On a page, an entry's ``data-entry-id`` is its exact id (what ``?targetId=`` and the
#: outline look up), so tag text inside one is left as it is. The templates write it first
#: in its tag, so the match starts with ``<``, which session text never puts on a page raw
#: (tool output keeps its quotes raw, so ``data-entry-id="`` alone could come from text).
_PAGE_TAG_RUN = re.compile(f'<(?:article|div) data-entry-id="[^"]*"|{_TAG_RUN.pattern}')


def exact_attribute(value: object) -> Markup:
    """An attribute value that keeps hidden controls as they are: written as character
    references, which :func:`show_controls` (run over the finished page) leaves alone, so
    ``data-entry-id`` stays the exact id ``?targetId=`` looks up (``⟨U+202E⟩evil`` did not
    match ``\u202eevil``)."""
    escaped = str(markupsafe.escape(value))
    return Markup(_HIDDEN_CONTROLS.sub(lambda m: f"&#x{ord(m.group()):X};", escaped))


def _shadowed(run: str) -> str:
    return "".join(chr(ord(c) - 0xE0000) for c in run if 0x20 <= ord(c) - 0xE0000 < 0x7F)


def _visible_tags(match: re.Match[str]) -> str:
    run = match.group()
    if run.startswith(("\U0001f3f4", "<")):
        return run
    # this runs over finished markup (attributes and the JSON block too): escape all of it
    shown = html.escape(_shadowed(run), quote=True).replace("\\", "&#92;")
    return f"\u27e8hidden tag text: {shown}\u27e9"


def _terminal_tags(match: re.Match[str]) -> str:
    run = match.group()
    return run if run.startswith("\U0001f3f4") else f"\u27e8hidden tag text: {_shadowed(run)}\u27e9"


def show_controls(text: str) -> str:
    """``text`` with terminal sequences dropped and every hidden control shown as a sign,
    and hidden tag text shown decoded."""
    if _HIDDEN_CONTROLS.search(text):
        text = _HIDDEN_CONTROLS.sub(_visible_control, _TERMINAL.sub("", text))
    return _PAGE_TAG_RUN.sub(_visible_tags, text)


def plain_text_shown(text: str, *, decode_tags: bool = True) -> str:
    """:func:`show_controls` for a document that is not HTML (the Markdown export):
    terminal sequences dropped, hidden controls as signs, hidden tag text decoded (unless
    the caller cannot escape what that decodes to)."""
    if _HIDDEN_CONTROLS.search(text):
        text = _HIDDEN_CONTROLS.sub(_visible_control, _TERMINAL.sub("", text))
    return _TAG_RUN.sub(_terminal_tags, text) if decode_tags else text


#: In a terminal also the characters that draw nothing and join no script or emoji (a zero
#: width space, word joiner, direction marks, a byte order mark, the grapheme joiner, the
#: old format controls, the Hangul fillers, which draw a blank): a session named
#: "de\u200bploy" printed exactly as "deploy" beside the real one, and no search found it.
#: The zero width (non-)joiners, variation selectors and soft hyphen stay: emoji, CJK
#: variants and Persian, Indic or hyphenated words need them.
_TERMINAL_CONTROLS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u034f\u061c\u115f\u1160\u180e\u200b\u200e\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb]"
)


#: Bidi classes that make a run right-to-left: Hebrew and Arabic letters, Arabic digits.
_RIGHT_TO_LEFT = frozenset({"R", "AL", "AN"})
#: LEFT-TO-RIGHT MARK: a strong left-to-right character that draws nothing.
LRM = "\u200e"


def _beside_right_to_left(text: str, at: int) -> bool:
    """Whether the character at ``at`` has right-to-left text just after it, or just before
    it (past the combining marks of its last letter)."""
    if at + 1 < len(text) and unicodedata.bidirectional(text[at + 1]) in _RIGHT_TO_LEFT:
        return True
    before = at - 1
    while before >= 0 and unicodedata.bidirectional(text[before]) == "NSM":
        before -= 1
    return before >= 0 and unicodedata.bidirectional(text[before]) in _RIGHT_TO_LEFT


def _visible_terminal_control(match: re.Match[str]) -> str:
    """:func:`_visible_control`, but a LEFT-TO-RIGHT MARK beside right-to-left text stays a
    mark: :func:`left_to_right` puts one there so a table's columns keep their order, and
    the table is made terminal text again as it is printed. (A name that differs from
    another only by such a mark prints as it: the one look-alike left, and only where the
    table would put the mark anyway.)"""
    if match.group() == LRM and _beside_right_to_left(match.string, match.start()):
        return LRM
    return _visible_control(match)


def terminal_text(text: str) -> str:
    """Text for a terminal: a session's name, project or model can carry escape sequences
    (retitle the window, clear the screen, write the clipboard), so every control but tab
    and newline is shown as a sign, escape codes included, and lone surrogates as U+FFFD
    (not a left-to-right mark beside right-to-left text: :func:`left_to_right`)."""
    text = _TAG_RUN.sub(_terminal_tags, replace_surrogates(text))
    if not _TERMINAL_CONTROLS.search(text):
        return text
    return _TERMINAL_CONTROLS.sub(_visible_terminal_control, text)


_LINE_CONTROLS = str.maketrans({"\t": "\u2409", "\n": "\u240a"})


def path_for_terminal(path: str | os.PathLike[str]) -> str:
    """A file's path on one line for a terminal: every control in it shown as a sign, a tab
    and a line break too (which :func:`terminal_text` keeps, as text may hold them). Its
    UTF-8 bytes as their characters (:func:`path_said`), not U+FFFD each, where Python
    decoded the file name as ASCII (the C locale without UTF-8 mode)."""
    return terminal_text(path_said(path).translate(_LINE_CONTROLS))


def path_said(path: str | os.PathLike[str]) -> str:
    """A file's path as text to show or to put in JSON: what its bytes say in UTF-8
    (:func:`decode_escaped_utf8`). A name whose bytes are not UTF-8 keeps its escapes, so
    ``os.fsencode`` of what JSON gives back is the file's name again."""
    return decode_escaped_utf8(os.fspath(path))


def json_safe_for_terminal(text: str) -> str:
    """JSON text whose C1 controls, bidi overrides and line and paragraph separators (which
    ``json.dumps`` leaves raw) are ``\\uXXXX`` escapes: the same JSON value, nothing a
    terminal acts on, and one line for a reader that splits at U+2028 (Python's
    ``splitlines``: `list --json` promises one object per line)."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_JSON_RAW = re.compile(_TERMINAL_CONTROLS.pattern[:-1] + "\u2028\u2029]")


def writable_page(html: str) -> str:
    """A whole page that encodes as UTF-8 and hides nothing: lone surrogates from session
    text become U+FFFD, controls a visible sign (:func:`show_controls`). Our own markup,
    styles and scripts contain neither, and the embedded JSONL is base64, so only session
    text changes (the download keeps the original bytes).

    One encode is the common case, and 5x faster than searching a big page for surrogates.
    Within :func:`page_bytes_kept` that encoding is kept for the page's writer.
    """
    try:
        data = html.encode("utf-8")
    except UnicodeEncodeError:
        html = replace_surrogates(html)
        data = html.encode("utf-8")
    if _has_hidden_controls(data):
        return show_controls(html)
    kept = _KEPT_PAGE.get()
    if kept is not None:
        kept[:] = [(html, data)]  # the last page only: one page's bytes held at most
    return html


#: The last page :func:`writable_page` returned and its UTF-8, within :func:`page_bytes_kept`.
_KEPT_PAGE: contextvars.ContextVar[list[tuple[str, bytes]] | None] = contextvars.ContextVar(
    "kept_page", default=None
)


@contextlib.contextmanager
def page_bytes_kept() -> Iterator[None]:
    """Keep the UTF-8 :func:`writable_page` makes of a page for :func:`kept_page_bytes`:
    encoding a 25 MB page again to write it took ~28 ms."""
    token = _KEPT_PAGE.set([])
    try:
        yield
    finally:
        _KEPT_PAGE.reset(token)


def kept_page_bytes(page: str) -> bytes | None:
    """The UTF-8 of ``page`` when it is the page :func:`writable_page` last returned within
    :func:`page_bytes_kept` (handed over once), else None: the caller encodes it."""
    kept = _KEPT_PAGE.get()
    if kept and kept[0][0] is page:
        return kept.pop()[1]
    return None


_C0_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_C1_UTF8 = re.compile(b"\xc2[\x80-\x9f]")
_TAG_UTF8 = re.compile(b"\xf3\xa0[\x80\x81]")
_BIDI_UTF8 = re.compile(b"\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")


def _has_hidden_controls(data: bytes) -> bool:
    """The check of :func:`show_controls` on UTF-8 bytes: 3x faster on a big page (byte
    patterns with a literal first byte, and a C-level delete for the ASCII controls)."""
    step = 1 << 20  # a slice at a time: a whole-page copy was 26 MB more peak memory
    return (
        any(
            len(part.translate(None, _C0_BYTES)) != len(part)
            for part in (data[i : i + step] for i in range(0, len(data), step))
        )
        or _C1_UTF8.search(data) is not None
        or _BIDI_UTF8.search(data) is not None
        or _TAG_UTF8.search(data) is not None
    )


def display_width(text: str) -> int:
    """Terminal columns: wide (CJK, emoji) characters take two; combining marks, variation
    selectors and format characters (a zero-width space or joiner) none."""
    return sum(map(char_width, text))


def char_width(char: str) -> int:
    """One character's terminal columns (see :func:`display_width`). VS16 asks for a
    symbol's emoji form, two columns wide (❤️): the one it adds to the narrow symbol."""
    if char == "\ufe0f":
        return 1
    if unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def left_to_right(cell: str, stream: Any = None) -> str:
    """Terminal text of one cell of a line with its right-to-left stretch (its first to its
    last Hebrew or Arabic letter or Arabic digit, with their combining marks) between two
    LEFT-TO-RIGHT MARKs: in a bidi terminal, the numbers after an Arabic project name
    counted as Arabic numbers and the whole run drew right to left, so the columns reversed
    and slid under the wrong headings (the page isolates with <bdi>). The marks take no
    column (:func:`display_width`), and :func:`terminal_text` keeps them, as it keeps any
    such mark beside right-to-left text, so the cell may be made terminal text again. Not
    on a ``stream`` (default stdout) that cannot write the mark: it printed as ``\\u200e``
    beside every Hebrew or Arabic name of a Latin-1 terminal."""
    if cell.isascii() or not prints_as_is(LRM, stream):
        return cell
    classes = [unicodedata.bidirectional(c) for c in cell]
    rtl = [i for i, kind in enumerate(classes) if kind in _RIGHT_TO_LEFT]
    if not rtl:
        return cell
    first, end = rtl[0], rtl[-1] + 1
    while end < len(cell) and classes[end] == "NSM":  # an Arabic vowel sign stays on its letter
        end += 1
    return f"{cell[:first]}{LRM}{cell[first:end]}{LRM}{cell[end:]}"


def render_table(
    headers: list[str],
    rows: list[list[str]],
    right: set[int] | None = None,
    stream: Any = None,
) -> str:
    """Aligned columns, measured as the terminal shows them (controls made visible first)
    and as ``stream`` (default stdout) writes them (:func:`as_printed`: escaped where its
    encoding has no character). Each cell on one line: a model, tool or project name with a
    newline in it (the session's text) added lines to the table, a fake ``total`` row among
    them. A cell of right-to-left text keeps to its column in a bidi terminal
    (:func:`left_to_right`)."""
    right = right or set()
    rows = [
        [as_printed(terminal_text(one_line(str(cell), None)), stream) for cell in row]
        for row in rows
    ]
    headers = [as_printed(header, stream) for header in headers]
    for col in right:  # decimal points in a column of amounts line up
        pads = decimal_pads([row[col] for row in rows])
        for row, pad in zip(rows, pads, strict=True):
            row[col] += " " * pad
    widths = [max(display_width(str(c)) for c in col) for col in zip(headers, *rows, strict=True)]

    def fmt(row: list[str]) -> str:
        cells = []
        for i, (cell, width) in enumerate(zip(row, widths, strict=True)):
            pad = " " * (width - display_width(str(cell)))
            cell = left_to_right(str(cell), stream)  # after it is measured: marks take no column
            cells.append(f"{pad}{cell}" if i in right else f"{cell}{pad}")
        return "  ".join(cells).rstrip()

    lines = [fmt(headers), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines)


ROLE_LABELS = {  # role -> (one, several)
    "user": ("user", "user"),
    "assistant": ("assistant", "assistant"),
    "toolResult": ("tool result", "tool results"),
    "bashExecution": ("shell command", "shell commands"),
    "custom": ("extension message", "extension messages"),
}


def role_label(role: str, count: int) -> str:
    """A message role as the page and `stats` say it: "toolResult" is "tool results"."""
    one, several = ROLE_LABELS.get(role, (role, role))
    return one if count == 1 else several
