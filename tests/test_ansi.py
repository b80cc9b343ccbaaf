"""Terminal colours in tool output: SGR codes shown as coloured spans (classes only), not
dropped. The converter (exporter/render/ansi.py), folding with colours, the page (its
policy, its style only where used, escaping, search text, Markdown left plain) and real
Chromium in both themes."""

from __future__ import annotations

import base64
import hashlib
import html as html_module
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.loader import load_session
from exporter.render import RenderOptions, render_session
from exporter.render.ansi import AnsiText, has_colour, nearest16
from exporter.render.assets import ansi_css, page_css_and_script
from exporter.render.folding import VISIBLE_CHARS, fold_text
from tests.browser_util import Viewer, parse_html, render_fixture

pytest_plugins = ["tests.browser_util"]

ESC = "\x1b"


def html_of(text: str) -> str:
    """The whole text as the converter writes it."""
    read = AnsiText.read(text)
    assert read is not None, "expected an SGR sequence"
    return read.html()


def spans(text: str) -> list[tuple[str, str]]:
    """(classes, text) of each span the converter writes."""
    return re.findall(r'<span class="([^"]*)">([^<]*)</span>', html_of(text))


def plain(markup: str) -> str:
    """The text a reader sees in some markup (tags out, references decoded)."""
    return html_module.unescape(re.sub(r"<[^>]+>", "", markup))


# --- the converter --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("codes", "classes"),
    [("1", "a1"), ("2", "a2"), ("3", "a3"), ("4", "a4"), ("21", "a4"), ("9", "a9"),
     ("7", "ai"), ("30", "af0"), ("31", "af1"), ("37", "af7"), ("90", "af8"), ("91", "af9"),
     ("97", "af15"), ("40", "ab0"), ("42", "ab2"), ("47", "ab7"), ("100", "ab8"),
     ("107", "ab15"),
     # 256 colours: 0-15 are the 16; the cube and the greys take the nearest of them
     ("38;5;1", "af1"), ("38;5;12", "af12"), ("38;5;196", "af9"), ("38;5;124", "af1"),
     ("38;5;208", "af11"), ("38;5;21", "af12"), ("38;5;242", "af8"), ("38;5;255", "af15"),
     ("48;5;22", "ab2"), ("48;5;232", "ab0"),
     # truecolour
     ("38;2;255;0;0", "af9"), ("38;2;175;0;0", "af1"), ("38;2;0;160;0", "af2"),
     ("38;2;95;135;175", "af4"), ("48;2;250;250;250", "ab15"), ("48;2;0;0;0", "ab0"),
     # the colon forms (ITU T.416): with and without the colour space
     ("38:5:2", "af2"), ("38:2::0:0:255", "af12"), ("38:2:0:0:255", "af12"), ("4:3", "a4")],
)  # fmt: skip
def test_each_kind_of_code_has_its_class(codes: str, classes: str) -> None:
    assert spans(f"{ESC}[{codes}mX{ESC}[0m.") == [(classes, "X")]
    assert html_of(f"{ESC}[{codes}mX{ESC}[0m.").endswith("</span>.")


def test_reset_and_the_codes_that_turn_one_thing_off() -> None:
    assert html_of(f"{ESC}[31mred{ESC}[0m plain") == '<span class="af1">red</span> plain'
    assert html_of(f"{ESC}[31mred{ESC}[m plain") == '<span class="af1">red</span> plain'
    assert spans(f"{ESC}[1;2;3;4;7;9;31;42mX{ESC}[22mY{ESC}[23;24mZ{ESC}[27;29mW") == [
        ("ai1 af2 a1 a2 a3 a4 a9", "X"),
        ("ai1 af2 a3 a4 a9", "Y"),
        ("ai1 af2 a9", "Z"),
        ("af1 ab2", "W"),
    ]
    assert spans(f"{ESC}[31;42mX{ESC}[39mY{ESC}[49mZ") == [("af1 ab2", "X"), ("ab2", "Y")]
    assert html_of(f"{ESC}[31;42mX{ESC}[39;49mY").endswith("Y")


def test_codes_combine_and_nest() -> None:
    """Codes in one sequence or in several add up; a code that changes nothing visible
    (blink) or repeats the style makes no new span."""
    assert spans(f"{ESC}[1m{ESC}[4m{ESC}[31mX") == [("af1 a1 a4", "X")]
    assert spans(f"{ESC}[1;4;31mX") == [("af1 a1 a4", "X")]
    assert spans(f"{ESC}[1mbold {ESC}[32mgreen{ESC}[22m green") == [
        ("a1", "bold "), ("af2 a1", "green"), ("af2", " green")]  # fmt: skip
    assert spans(f"{ESC}[31mA{ESC}[31mB{ESC}[5mC") == [("af1", "ABC")]
    assert spans(f"{ESC}[7mX{ESC}[7;32mY") == [("ai", "X"), ("ai2", "Y")]  # inverse
    assert spans(f"{ESC}[31;;1mX") == [("a1", "X")]  # an empty code is 0: reset, then bold
    assert html_of(f"{ESC}[31m{ESC}[0mX") == "X"  # a style over nothing leaves nothing


@pytest.mark.parametrize(
    ("text", "expected"),
    [(f"{ESC}[38;5mX", "X"), (f"{ESC}[38;5;300mX", "X"), (f"{ESC}[38;2;1;2mX", "X"),
     (f"{ESC}[38;2;256;0;0mX", "X"), (f"{ESC}[999mX", "X"), (f"{ESC}[48;7mX", "X"),
     (f"{ESC}[{'9' * 6000}mX", "X"),  # int() of 6,000 digits raises: no code
     (f"{ESC}[31;38;5mX", '<span class="af1">X</span>'),  # the codes before it hold
     (f"{ESC}[38;5;{'1' * 40}mX", "X"), (f"{ESC}[38:5mX", "X"), (f"{ESC}[:::mX", "X")],
)  # fmt: skip
def test_malformed_codes_are_dropped_without_a_trace(text: str, expected: str) -> None:
    assert html_of(text) == expected


def test_what_is_no_sgr_sequence_stays_in_the_text() -> None:
    """An unterminated code, a cursor move or a title is left for the page-wide treatment
    of escape sequences (dropped, or shown as signs)."""
    read = AnsiText.read(f"{ESC}[32mok{ESC}[0m {ESC}[K{ESC}]0;title\x07 {ESC}[31")
    assert read is not None
    assert read.text == f"ok {ESC}[K{ESC}]0;title\x07 {ESC}[31"
    assert read.html() == f'<span class="af2">ok</span> {ESC}[K{ESC}]0;title\x07 {ESC}[31'
    assert AnsiText.read(f"{ESC}[31 no final byte") is None
    assert AnsiText.read("no codes at all") is None


def test_text_is_escaped_inside_and_outside_the_spans() -> None:
    out = html_of(f"{ESC}[31m<script>alert('x')</script>{ESC}[0m & <b>\"q\"</b>")
    assert out == (
        "<span class=\"af1\">&lt;script&gt;alert('x')&lt;/script&gt;</span>"
        ' &amp; &lt;b&gt;"q"&lt;/b&gt;'
    )
    assert "<script" not in out and "<b>" not in out


def test_spans_end_at_each_line_break() -> None:
    assert html_of(f"{ESC}[31mone\ntwo\n\nfour{ESC}[0m") == (
        '<span class="af1">one</span>\n<span class="af1">two</span>\n\n'
        '<span class="af1">four</span>'
    )
    # a lone \r ends a line as the page shows it; \r\n is one break, even split by a code
    read = AnsiText.read(f"{ESC}[32ma\r\nb\rc\r{ESC}[1m\nd")
    assert read is not None and read.text == "a\nb\nc\nd"
    assert read.html() == (
        '<span class="af2">a</span>\n<span class="af2">b</span>\n'
        '<span class="af2">c</span>\n<span class="af2 a1">d</span>'
    )


def test_cjk_and_lone_surrogates() -> None:
    assert spans(f"{ESC}[32m中文{ESC}[0m字 {ESC}[1m😀") == [("af2", "中文"), ("a1", "😀")]
    read = AnsiText.read(f"{ESC}[31m\ud800x{ESC}[0m")  # Pi's JSON can hold one
    assert read is not None and read.html() == '<span class="af1">\ud800x</span>'


def test_html_of_a_part_opens_the_style_it_starts_in() -> None:
    read = AnsiText.read(f"ab{ESC}[31mcdef{ESC}[0mgh")
    assert read is not None and read.text == "abcdefgh"
    assert read.html(3, 7) == '<span class="af1">def</span>g'
    assert read.html(0, 2) == "ab"
    assert read.html(4, 4) == ""


def test_nearest_of_the_sixteen() -> None:
    assert [nearest16(g, g, g) for g in (0, 47, 48, 143, 144, 223, 224, 255)] == [
        0, 0, 8, 8, 7, 7, 15, 15]  # fmt: skip
    assert nearest16(255, 135, 0) == 11  # orange: nearer yellow than red
    assert nearest16(135, 0, 255) == 13  # violet: nearer magenta than blue
    assert nearest16(40, 0, 0) == 0  # too dark for any hue


def test_has_colour_finds_only_the_converters_spans() -> None:
    assert has_colour(html_of(f"{ESC}[1mX")) and has_colour(html_of(f"{ESC}[7mX"))
    assert has_colour(html_of(f"{ESC}[44mX")) and has_colour(html_of(f"{ESC}[3;9mX"))
    assert not has_colour('<span class="ac-more">x</span><span class="muted">y</span>')
    assert not has_colour(html_of(f"{ESC}[0mplain{ESC}[m"))


# --- folding with colours -------------------------------------------------------------------


def balanced(markup: str) -> bool:
    """Every line opens and closes its own spans."""
    return all(line.count("<span") == line.count("</span>") for line in markup.split("\n"))


def test_a_colour_set_many_lines_above_the_tail_survives_the_fold() -> None:
    """Bash output shows its last 12 lines and folds the earlier ones: a colour set once at
    the top still colours the tail, and each part's lines close their own spans."""
    text = f"{ESC}[31m" + "".join(f"failure {n}\n" for n in range(40)) + f"{ESC}[0mdone\n"
    folded = fold_text(text, 12, tail=True, ansi=True)
    assert folded.hidden is not None and folded.hidden_first
    assert folded.summary == "29 earlier lines" and folded.total_lines == 41
    visible, hidden = str(folded.visible), str(folded.hidden)
    assert balanced(visible) and balanced(hidden)
    assert visible.split("\n")[0] == '<span class="af1">failure 29</span>'
    assert visible.split("\n")[-1] == "done"
    assert hidden.split("\n")[0] == '<span class="af1">failure 0</span>'
    assert ESC not in visible + hidden


def test_a_long_coloured_line_folds_inside_it_with_plain_counts() -> None:
    """A fold inside a line counts the characters the reader sees, not the codes; each
    part keeps its colour, and together they are the text."""
    words = "".join(f"{ESC}[3{n % 8}mword{n}{ESC}[0m " for n in range(2_000))
    seen = re.sub(f"{ESC}\\[[0-9;]*m", "", words).rstrip("\n")
    folded = fold_text(words, 12, ansi=True)
    assert folded.hidden is not None and folded.hidden_chars > 0
    visible, hidden = str(folded.visible), str(folded.hidden)
    assert balanced(visible) and balanced(hidden)
    assert plain(visible) + plain(hidden) == seen
    assert folded.hidden_chars == len(plain(hidden)) and len(plain(visible)) <= VISIBLE_CHARS
    assert visible.startswith('<span class="af0">word0</span> <span class="af1">word1</span>')
    first_hidden = plain(hidden).split(" ")[0] or plain(hidden).split(" ")[1]
    number = int(first_hidden.removeprefix("word"))
    assert f'<span class="af{number % 8}">word{number}</span>' in hidden


def test_output_without_colour_folds_as_before() -> None:
    text = "".join(f"line {n} <b>\r\n" for n in range(40))
    assert fold_text(text, 12, tail=True, ansi=True) == fold_text(text, 12, tail=True)
    only_resets = f"{ESC}[0m" + text
    folded = fold_text(only_resets, 12, tail=True, ansi=True)
    assert "<span" not in str(folded.visible) + str(folded.hidden)


# --- the page -------------------------------------------------------------------------------

PYTEST_OUTPUT = (
    f"{ESC}[1m============ test session starts ============{ESC}[0m\n"
    f"tests/test_x.py {ESC}[32m.{ESC}[0m{ESC}[31mF{ESC}[0m\n"
    + "".join(f"  frame {n} {ESC}[38;5;244mat x.py:{n}{ESC}[0m\n" for n in range(30))
    + f"{ESC}[31m{ESC}[1mFAIL{ESC}[0m tests/test_x.py::test_a <script>alert(1)</script>\n"
    f"{ESC}[7m inverse {ESC}[0m {ESC}[42m bg {ESC}[0m{ESC}[K {ESC}]0;title\x07 "
    f"{ESC}[1;31m=== 1 failed in 0.1s ===\n"
)


def coloured_session(tmp_path: Path, output: str = PYTEST_OUTPUT) -> Path:
    """A session whose one bash call printed ``output`` (written as Pi writes it)."""

    def entry(entry_id: str, parent: str | None, second: int, **message: Any) -> dict:
        return {"type": "message", "id": entry_id, "parentId": parent,
                "timestamp": f"2025-01-01T00:00:0{second}Z", "message": message}  # fmt: skip

    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "pytest"}}
    records = [
        {"type": "session", "version": 3, "id": "ansi", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/p"},
        entry("u1", None, 1, role="user", content="run the tests"),
        entry("a1", "u1", 2, role="assistant", content=[call], stopReason="toolUse",
              provider="p", model="m"),
        entry("r1", "a1", 3, role="toolResult", toolCallId="c1", toolName="bash",
              content=[{"type": "text", "text": output}], isError=True),
    ]  # fmt: skip
    path = tmp_path / "coloured.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def csp_style_hashes(page: str) -> set[str]:
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert policy is not None
    style_src = re.search(r"style-src ([^;]*);", html_module.unescape(policy.group(1)))
    assert style_src is not None
    return set(re.findall(r"'sha256-([^']+)'", style_src.group(1)))


def sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def test_a_page_shows_coloured_bash_output(tmp_path: Path) -> None:
    page = render_session(load_session(coloured_session(tmp_path)))
    parsed = parse_html(page)
    output = parsed.entry("r1")
    assert '<span class="af1 a1">FAIL</span> tests/test_x.py::test_a' in page
    assert '<span class="af8">at x.py:29</span>' in page  # the tail, after the fold
    assert '<span class="af8">at x.py:0</span>' in page  # inside the fold
    assert '<span class="ai"> inverse </span> <span class="ab2"> bg </span>' in page
    assert '<span class="af1 a1">=== 1 failed in 0.1s ===</span>' in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page
    # other escape sequences as before: a cursor code dropped, a title shown as signs
    assert "\u241b]0;title\u2407" in output.text and "\u241b[K" not in output.text
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", page)
    # what a reader (and the page's search, over textContent) reads is the plain text
    assert "FAIL tests/test_x.py::test_a <script>alert(1)</script>" in output.text
    assert " inverse   bg  " in output.text
    row = parsed.one(lambda e: e.tag == "a" and e.get("href") == "#r1" and e.parent.tag == "li")
    assert row.text == "[bash: pytest] result \u2192 error"


def test_a_users_shell_command_shows_its_colours_too(tmp_path: Path) -> None:
    """A `!` command (bashExecution) is folded as a bash call's output is, colours and all
    (review h174: they were dropped there, kept for the agent's calls)."""
    header = {"type": "session", "version": 3, "id": "ansi-bang", "cwd": "/p",
              "timestamp": "2025-01-01T00:00:00Z"}  # fmt: skip
    bang = {
        "type": "message", "id": "b1", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
        "message": {"role": "bashExecution", "command": "pytest", "output": PYTEST_OUTPUT,
                    "exitCode": 1, "cancelled": False, "truncated": False, "timestamp": 1},
    }  # fmt: skip
    path = tmp_path / "bang.jsonl"
    path.write_text(json.dumps(header) + "\n" + json.dumps(bang) + "\n", encoding="utf-8")
    page = render_session(load_session(path))
    assert '<span class="af1 a1">FAIL</span> tests/test_x.py::test_a' in page
    assert '<span class="af1 a1">=== 1 failed in 0.1s ===</span>' in page
    assert "<script>alert" not in page and "\u241b[31m" not in page
    assert ansi_css() in page


def test_the_colour_style_is_inlined_and_allowed_only_where_used(tmp_path: Path) -> None:
    """static/ansi.css rides in the page's <style> (its hash covers it) on a page with
    colour, and nowhere else; no element of either page has a style attribute."""
    coloured = render_session(load_session(coloured_session(tmp_path)))
    first_style = re.search(r"<style>(.*?)</style>", coloured, re.S)
    assert first_style is not None
    css = page_css_and_script()[0]
    assert first_style.group(1) == css + ansi_css()
    assert sha256(css + ansi_css()) in csp_style_hashes(coloured)
    assert sha256(css) not in csp_style_hashes(coloured)
    assert ".af1{color:var(--a1);--fg:var(--a1)}" in ansi_css() and ".ab1{" in ansi_css()

    plain_page = render_fixture("every-entry-type.jsonl")
    assert ansi_css() not in plain_page and "--a1:" not in plain_page
    assert sha256(css) in csp_style_hashes(plain_page)
    assert sha256(css + ansi_css()) not in csp_style_hashes(plain_page)
    for page in (coloured, plain_page):
        assert not re.search(r"<[a-zA-Z][^>]*\sstyle\s*=", page), "inline style attribute"

    # codes that only reset colour nothing: no style added
    resets = render_session(load_session(coloured_session(tmp_path, f"{ESC}[0mok{ESC}[m\n")))
    assert ansi_css() not in resets and sha256(css) in csp_style_hashes(resets)


def test_other_tools_outputs_show_colour_but_a_read_file_does_not(tmp_path: Path) -> None:
    from exporter.entries import MessageEntry, make_entry
    from exporter.render.tools import build_tool_view

    def result(text: str) -> MessageEntry:
        content = [{"type": "text", "text": text}]
        message = {"role": "toolResult", "toolCallId": "c", "content": content}
        raw = {"type": "message", "id": "r", "message": message}
        entry = make_entry(raw, 1, "r", None)
        assert isinstance(entry, MessageEntry)
        return entry

    red = f"{ESC}[31mred{ESC}[0m"
    custom = build_tool_view({"id": "c", "name": "mcp_run", "arguments": {}}, result(red))
    assert custom.output is not None and '<span class="af1">red</span>' in custom.output.visible
    read = build_tool_view({"id": "c", "name": "read", "arguments": {"path": "a.txt"}}, result(red))
    assert read.output is not None and '<span class="af' not in read.output.visible


def test_the_markdown_export_keeps_plain_text(tmp_path: Path) -> None:
    out = tmp_path / "coloured.md"
    done = CliRunner().invoke(cli, ["export", str(coloured_session(tmp_path)), "-o", str(out)])
    assert done.exit_code == 0, done.output
    text = out.read_text(encoding="utf-8")
    assert "FAIL tests/test_x.py::test_a <script>alert(1)</script>" in text
    assert "<span" not in text and ESC not in text and "af1" not in text


# --- real Chromium --------------------------------------------------------------------------

FAIL_COLOUR = """() => {
  const span = [...document.querySelectorAll('pre.out span')].find(s => s.textContent === 'FAIL');
  return span ? getComputedStyle(span).color : null;
}"""


def rgb(colour: str) -> tuple[int, ...]:
    found = re.fullmatch(r"rgba?\((\d+), (\d+), (\d+)(?:, [\d.]+)?\)", colour)
    assert found is not None, colour
    return tuple(int(c) for c in found.groups())


@pytest.mark.browser
@pytest.mark.parametrize("theme", ["light", "dark", "auto-dark"])
def test_fail_is_red_in_chromium_in_each_theme(viewer: Viewer, tmp_path: Path, theme: str) -> None:
    chosen = "auto" if theme == "auto-dark" else theme
    page_html = render_session(
        load_session(coloured_session(tmp_path)), RenderOptions(theme=chosen)
    )
    url = viewer.server.publish(f"ansi-{theme}.html", page_html)
    scheme = "dark" if theme != "light" else "light"
    page = viewer.open(url, color_scheme=scheme)
    red, green, blue = rgb(page.evaluate(FAIL_COLOUR))
    assert red >= 150 and red - green >= 60 and red - blue >= 60, (theme, red, green, blue)
    background = rgb(
        page.evaluate("getComputedStyle(document.querySelector('pre.out')).backgroundColor")
    )
    assert (sum(background) < 3 * 128) == (scheme == "dark")  # the theme really applied
    assert page.evaluate("window.__cspViolations") == []
    # the outline's search finds a word of the coloured output
    page.fill("#tree-search", "FAIL")
    page.wait_for_selector("#tree li.search-miss", state="attached")
    hit = page.locator('#tree li:not(.search-miss) a[href="#r1"]')
    assert hit.count() == 1
    viewer.assert_clean()


def test_a_result_without_its_call_has_an_outline_row_of_sixty_shown_characters() -> None:
    """A result whose call is not in the file is named in the outline by its first 60
    characters: its colour codes counted towards them, and the row came out shorter."""
    from exporter.loader import parse_session_bytes
    from exporter.render.entry_lines import outline_text

    words = "word " * 30
    text = "".join(f"\x1b[32m{w}\x1b[0m " for w in words.split())
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/"},
        {"type": "message", "id": "r1", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "toolResult", "toolCallId": "gone", "toolName": "bash",
                     "content": [{"type": "text", "text": text}]}},
    ]  # fmt: skip
    session = parse_session_bytes("\n".join(json.dumps(x) for x in lines).encode("utf-8"))
    row, _, _ = outline_text(session.by_id["r1"])
    assert "\x1b" not in row
    assert row == f"[bash result] {words.strip()[:59]}…"


def _srgb(colour: str) -> tuple[float, float, float, float]:
    """A computed colour (``rgb()``, ``rgba()`` or ``color(srgb …)``) as 0-1 channels."""
    found = re.fullmatch(r"rgba?\(([\d.]+), ([\d.]+), ([\d.]+)(?:, ([\d.]+))?\)", colour)
    if found:
        r, g, b = (float(c) / 255 for c in found.groups()[:3])
        return r, g, b, float(found.group(4) or 1)
    found = re.fullmatch(r"color\(srgb ([\d.e-]+) ([\d.e-]+) ([\d.e-]+)(?: / ([\d.]+))?\)", colour)
    assert found is not None, colour
    r, g, b = (float(c) for c in found.groups()[:3])
    return r, g, b, float(found.group(4) or 1)


def _under_4_5(found: list[list[str]]) -> list[tuple[str, float]]:
    """The (text, colour, its background tint, the output's background) spans whose text
    reads under 4.5:1 on the tint laid over the background."""
    low = []
    for text, colour, tint, base in found:
        back, under = _srgb(tint), _srgb(base)
        blended = tuple(back[i] * back[3] + under[i] * (1 - back[3]) for i in range(3))
        ratio = _contrast(_srgb(colour), blended)
        if ratio < 4.5:
            low.append((text.strip(), round(ratio, 2)))
    return low


def _contrast(text: tuple[float, ...], back: tuple[float, ...]) -> float:
    def luminance(c: tuple[float, ...]) -> float:
        lin = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c[:3]]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    high, low = sorted((luminance(text), luminance(back)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.browser
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_colour_on_every_background_reads_at_4_5_to_1(
    viewer: Viewer, tmp_path: Path, theme: str
) -> None:
    """A terminal's `npm ERR!` (white on black) or vitest's ` PASS ` (black on green) sat
    on a 25% tint of the background colour: grey on black's tint read at 3.0:1 (light),
    black on green's at 3.2:1 (dark)."""
    pairs = [
        (fg, bg)
        for fg in [*range(30, 38), *range(90, 98), 39]
        for bg in (40, 41, 42, 43, 47, 100, 107)
    ]
    output = "\n".join(f"\x1b[{fg};{bg}m {fg}/{bg} \x1b[0m" for fg, bg in pairs)
    page_html = render_session(
        load_session(coloured_session(tmp_path, output)), RenderOptions(theme=theme)
    )
    page = viewer.open(viewer.server.publish(f"ansi-pairs-{theme}.html", page_html))
    found = page.evaluate(
        """[...document.querySelectorAll('pre.out span[class*=ab]')].map(s =>
             [s.textContent, getComputedStyle(s).color, getComputedStyle(s).backgroundColor,
              getComputedStyle(s.closest('pre')).backgroundColor])"""
    )
    assert len(found) == len(pairs)
    low = _under_4_5(found)
    assert low == [], low
    viewer.assert_clean()


@pytest.mark.browser
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_dim_text_reads_at_4_5_to_1_in_every_colour(
    viewer: Viewer, tmp_path: Path, theme: str
) -> None:
    """Dim (SGR 2) was the colour at 70% opacity: grey fell to 3.2:1 and most colours under
    4.5:1. It is now the colour mixed with the muted text colour, on its own or on a tint."""
    codes = [
        f"2;{fg}" + (f";{bg}" if bg else "")
        for fg in [*range(30, 38), *range(90, 98), 39]
        for bg in (None, 40, 41, 42, 43, 47, 100, 107)
    ]
    output = "\n".join(f"\x1b[{code}m {code} \x1b[0m" for code in codes)
    page_html = render_session(
        load_session(coloured_session(tmp_path, output)), RenderOptions(theme=theme)
    )
    page = viewer.open(viewer.server.publish(f"ansi-dim-{theme}.html", page_html))
    found = page.evaluate(
        """[...document.querySelectorAll('pre.out span.a2')].map(s =>
             [s.textContent, getComputedStyle(s).color, getComputedStyle(s).opacity,
              getComputedStyle(s).backgroundColor,
              getComputedStyle(s.closest('pre')).backgroundColor])"""
    )
    assert len(found) == len(codes)
    assert all(float(opacity) == 1 for _, _, opacity, _, _ in found)
    low = _under_4_5([(text, colour, tint, base) for text, colour, _, tint, base in found])
    assert low == [], low
    # and dim still differs from the same colour at full strength
    plain = page.evaluate("getComputedStyle(document.querySelector('pre.out')).color")
    assert found[-8][1] != plain  # 2;39: the output's own colour, dimmed
    viewer.assert_clean()
