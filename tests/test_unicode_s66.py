"""Unicode fixes of session 66: a right-to-left project or session name kept its columns in
a bidi terminal (`list`, `stats --all`, every table, `search`'s match lines); a text stored
decomposed (NFD: macOS paths, Hangul from HFS+) is found by the same words typed composed
(NFC) and the other way round, in `search`, on a session's page and in a site's index;
the controls Python's ``str.split()`` splits at (U+001C-U+001F, NEL) are shown as signs in
`list`, `stats` and `search`, not as spaces.

How a bidi terminal draws a line is read from Chromium's Unicode bidi algorithm: each line
in a left-to-right ``<pre>``, and where each cell of it is drawn (``visual_extents``). The
browser tests run in Chromium (skipped without it unless CI is set: tests/browser_util.py),
the site over HTTP on 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.discover import encode_cwd
from exporter.formatting import display_width, one_line, render_table, terminal_text
from tests.test_site_s62 import ask, build, expect, write_session

pytest_plugins = ["tests.browser_util", "tests.test_site_s62"]  # (its `served` site, `page` tab)

PROJECT = "/home/dev/\u0645\u0634\u0631\u0648\u0639"  # /home/dev/مشروع
FIX_THE_BUG = "\u0625\u0635\u0644\u0627\u062d \u0627\u0644\u062e\u0637\u0623"  # إصلاح الخطأ
REPORT = "\u062a\u0642\u0631\u064a\u0631"  # تقرير
HEBREW_WITH_POINTS = "\u05e9\u05c1\u05b8\u05dc\u05d5\u05b9\u05dd"  # שָׁלוֹם (ends on a point)
ARABIC_DIGITS = "\u0661\u0662\u0663"  # ١٢٣ (Arabic numbers: bidi class AN)

CAFE_NFC = "caf\u00e9"
RESUME_NFD = "re\u0301sume\u0301"  # résumé, decomposed
HANGUL_NFC = "\ud55c\uae00"  # 한글
HANGUL_NFD = unicodedata.normalize("NFD", HANGUL_NFC)  # its jamo, as HFS+ stores it


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def pi_session(
    root: Path, cwd: str, sid: str, name: str, turns: int, *, day: str = "2025-06-01"
) -> Path:
    """A Pi session of project ``cwd`` named ``name`` in Pi's layout: ``turns`` prompts,
    each answered at a cost of $3.25."""
    folder = root / encode_cwd(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": sid, "timestamp": f"{day}T10:00:00.000Z"}
        | {"cwd": cwd}
    ]
    parent = None
    for n in range(turns):
        prompt = {"role": "user", "content": "\u0645\u0631\u062d\u0628\u0627", "timestamp": 0}
        usage = {"input": 100, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150}
        usage["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 3.25}
        answer = {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "api": "x"}
        answer |= {"provider": "p", "model": "m", "usage": usage, "stopReason": "stop"}
        for kind, message in (("u", prompt), ("a", answer)):
            entry = {"type": "message", "id": f"{kind}{n}", "parentId": parent}
            entry |= {"timestamp": f"{day}T10:{n:02d}:{10 if kind == 'u' else 30}.000Z"}
            lines.append(entry | {"message": message | {"timestamp": 0}})
            parent = entry["id"]
    lines.append(
        {"type": "session_info", "name": name, "id": "n", "parentId": parent}
        | {"timestamp": f"{day}T10:59:00.000Z"}
    )
    path = folder / f"{day}T10-00-00-000Z_{sid}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def arabic_sessions(tmp_path: Path) -> Path:
    """Two sessions of an Arabic project, with Arabic names (the hunter's agent2/)."""
    root = tmp_path / "sessions"
    pi_session(root, PROJECT, "11111111-aaaa-7000-8000-000000000001", REPORT, 1)
    pi_session(
        root, PROJECT, "22222222-bbbb-7000-8000-000000000002", FIX_THE_BUG, 7, day="2025-06-02"
    )
    return root


# --- how a bidi terminal draws a line ------------------------------------------------------------


@pytest.fixture
def bidi(pw_browser: Any) -> Iterator[Any]:
    """A tab that draws lines of terminal text as a bidi terminal would (left to right)."""
    context = pw_browser.new_context(viewport={"width": 1600, "height": 900})
    tab = context.new_page()
    tab.set_content("<meta charset=utf-8><body><pre dir=ltr style='font: 14px monospace'></pre>")
    try:
        yield tab
    finally:
        context.close()


_DRAWN = """([line, spans]) => {
  const row = document.createElement("div");
  row.textContent = line;
  document.querySelector("pre").append(row);
  return spans.map(([start, end]) => {
    const range = new Range();
    range.setStart(row.firstChild, start);
    range.setEnd(row.firstChild, end);
    const boxes = [...range.getClientRects()].filter(box => box.width > 0);
    return [Math.min(...boxes.map(b => b.left)), Math.max(...boxes.map(b => b.right))];
  });
}"""


def _utf16(text: str, index: int) -> int:
    """A Python string index as JavaScript counts it (UTF-16 code units)."""
    return len(text[:index].encode("utf-16-le")) // 2


def visual_extents(tab: Any, line: str, pieces: list[tuple[int, int]]) -> list[tuple[float, float]]:
    """Where each piece (``[start, end)`` of ``line``) is drawn: its leftmost and rightmost
    pixel, over every part the bidi algorithm split it into."""
    spans = [[_utf16(line, start), _utf16(line, end)] for start, end in pieces]
    return [tuple(box) for box in tab.evaluate(_DRAWN, [line, spans])]


_CELL = re.compile(r"[^ ]+(?: [^ ]+)*")  # a table's cell: its columns are two spaces apart


def assert_drawn_in_order(tab: Any, line: str, pieces: list[tuple[int, int]] | None = None) -> None:
    """Each piece of ``line`` (by default its cells) drawn wholly right of the one before it,
    as it is written: no part of a cell under another's column."""
    pieces = pieces or [m.span() for m in _CELL.finditer(line)]
    drawn = visual_extents(tab, line, pieces)
    for n in range(1, len(pieces)):
        before, after = drawn[n - 1], drawn[n]
        assert before[1] <= after[0] + 0.5, (
            f"{line[slice(*pieces[n - 1])]!r} drawn at {before}, "
            f"{line[slice(*pieces[n])]!r} at {after}",
            line,
        )


def table_lines(text: str) -> list[str]:
    """The rows of every table in ``text`` (the lines after a line of dashes, up to a blank)."""
    rows: list[str] = []
    inside = False
    for line in text.splitlines():
        if set(line.replace(" ", "")) == {"-"}:
            inside = True
        elif not line.strip():
            inside = False
        elif inside:
            rows.append(line)
    return rows


# --- 1. right-to-left names keep their columns ---------------------------------------------------


@pytest.mark.browser
def test_list_and_stats_all_keep_an_arabic_project_in_its_column(
    arabic_sessions: Path, bidi: Any
) -> None:
    """`list --all` drew the project column as /home/dev/22222222, "messages" as 22.75$ and
    the id column as مشروع; `stats --all`'s project row as `/home/dev/23.25$ 0 0 400 800 8 2
    مشروع`: the digits after Arabic text counted as Arabic numbers and the run drew right
    to left, past the cells that followed."""
    listed = run("list", "--all", "--sessions-dir", str(arabic_sessions))
    assert listed.exit_code == 0, listed.output
    stats = run("stats", "--all", "--sessions-dir", str(arabic_sessions))
    assert stats.exit_code == 0, stats.output
    rows = table_lines(listed.stdout) + table_lines(stats.stdout)
    said = [row.replace("\u200e", "") for row in rows]  # (the marks, which draw nothing)
    assert sum(PROJECT in row for row in said) == 3 and any(FIX_THE_BUG in row for row in said)
    for row in rows:
        assert_drawn_in_order(bidi, row)
    assert "\u27e8U+200E\u27e9" not in listed.stdout + stats.stdout  # the marks are no signs
    assert_in_columns(listed.stdout)  # the marks take no column


def columns_of(line: str) -> list[tuple[int, int]]:
    """The terminal columns each cell of ``line`` takes."""
    return [
        (display_width(line[: m.start()]), display_width(line[: m.end()]))
        for m in _CELL.finditer(line)
    ]


def assert_in_columns(table: str) -> None:
    """Each row's cells within their columns' dashes, counted in terminal columns."""
    lines = table.splitlines()
    dashes = columns_of(lines[1])
    for row in lines[2:]:
        for (start, end), (left, right) in zip(columns_of(row), dashes, strict=True):
            assert left <= start and end <= right, row


@pytest.mark.browser
def test_every_table_keeps_right_to_left_cells_in_their_columns(bidi: Any) -> None:
    """`render_table` (list, stats, the picker, the publish plan): Hebrew ending on a point,
    two right-to-left cells side by side, Arabic digits beside Arabic digits, a number after
    Arabic text in one cell; printed through ``terminal_text`` again, as the commands print
    it, the marks stay marks."""
    rows = [
        [REPORT, FIX_THE_BUG, "14", "$22.75"],
        [HEBREW_WITH_POINTS, ARABIC_DIGITS, ARABIC_DIGITS, "$0.500"],
        [f"{REPORT} 2", PROJECT, "1,050", "$1.00"],
        ["plain", "/srv/app", "2", "$3.00"],
    ]
    table = render_table(["name", "project", "turns", "cost"], rows, {2, 3})
    assert terminal_text(table) == table
    assert_in_columns(table)
    for row in table.splitlines()[2:]:
        assert_drawn_in_order(bidi, row)
    assert "\u200e" not in table.splitlines()[-1]  # a left-to-right row is as it was


def test_a_direction_mark_in_session_text_is_still_a_sign() -> None:
    """Only a mark beside right-to-left text stays (where a table puts its own): a name
    "de\u200eploy" still prints told apart from "deploy"."""
    assert terminal_text("de\u200eploy") == "de\u27e8U+200E\u27e9ploy"
    assert terminal_text("\u200eplain\u200e") == "\u27e8U+200E\u27e9plain\u27e8U+200E\u27e9"


@pytest.mark.browser
def test_search_lines_keep_an_arabic_kind_before_its_snippet(tmp_path: Path, bidi: Any) -> None:
    """An entry of an Arabic role (or id) drew its snippet's "2025" left of the role: the
    digits after it counted as Arabic numbers, in its run. (The heading's "(id, 1 entry)"
    after an Arabic title keeps its place: its brackets hold Latin letters.)"""
    root = tmp_path / "sessions"
    path = pi_session(root, PROJECT, "22222222-bbbb-7000-8000-000000000002", FIX_THE_BUG, 1)
    role = "\u0645\u0631\u0627\u062c\u0639\u0629"  # مراجعة: no role of Pi's, searched as JSON
    odd = {"type": "message", "id": "r1", "parentId": "a0", "timestamp": "2025-06-01T10:50:00.000Z"}
    odd["message"] = {"role": role, "content": "2025 budget"}
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(odd) + "\n")
    found = run("search", "budget", str(path))
    assert found.exit_code == 0, found.output
    head, _, line = found.stdout.splitlines()[:3]
    assert head == f"{FIX_THE_BUG}  (22222222-bbbb-7000-8000-000000000002, 1 entry)"
    assert_drawn_in_order(bidi, head)
    assert line.replace("\u200e", "").endswith(f"{role}: 2025 [budget]")
    kind_at, snippet_at = line.index(role), line.index("2025 [budget]")
    assert_drawn_in_order(bidi, line, [(kind_at, kind_at + len(role)), (snippet_at, len(line))])


# --- 2. composed and decomposed text find each other ---------------------------------------------


def nfd_session(tmp_path: Path) -> Path:
    """A session whose prompt names a macOS path stored decomposed, and Hangul as jamo."""
    text = f"open /Users/me/Cafe\u0301/{RESUME_NFD}.md and {HANGUL_NFD} please"
    lines = [
        {"type": "session", "version": 3, "id": "nfd-1", "timestamp": "2025-06-01T10:00:00.000Z"}
        | {"cwd": "/srv/app"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2025-06-01T10:01:00.000Z"}
        | {"message": {"role": "user", "content": text, "timestamp": 0}},
        {"type": "message", "id": "u2", "parentId": "u1", "timestamp": "2025-06-01T10:02:00.000Z"}
        | {"message": {"role": "user", "content": f"a {CAFE_NFC} composed", "timestamp": 0}},
    ]  # fmt: skip
    path = tmp_path / "nfd.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("pattern", "entries", "marked"),
    [
        ("r\u00e9sum\u00e9", {"u1"}, "r\u00e9sum\u00e9"),  # typed composed, stored decomposed
        ("Caf\u00e9", {"u1", "u2"}, "Caf\u00e9"),
        (HANGUL_NFC, {"u1"}, HANGUL_NFC),
        (RESUME_NFD, {"u1"}, "r\u00e9sum\u00e9"),  # typed decomposed
        ("cafe\u0301 composed", {"u2"}, "caf\u00e9 composed"),  # typed decomposed, stored composed
    ],
)
def test_search_finds_canonically_equivalent_text(
    tmp_path: Path, pattern: str, entries: set[str], marked: str
) -> None:
    """`search "résumé"`, `"Café"` and `"한글"` said "no matches" for a file holding them
    decomposed, and the decomposed forms missed the composed text."""
    path = nfd_session(tmp_path)
    found = run("search", "--json", pattern, str(path))
    assert found.exit_code == 0, found.output
    matches = [json.loads(line) for line in found.stdout.splitlines()]
    assert {m["entry_id"] for m in matches} == entries, found.output
    for match in matches:  # the match marks the words found, in the composed snippet
        assert match["snippet"][match["start"] : match["end"]].lower() == marked.lower()
    shown = run("search", pattern, str(path))
    assert f"[{marked}" in shown.stdout or f"[{marked.lower()}" in shown.stdout.lower()


def test_regex_search_reads_pattern_and_text_composed(tmp_path: Path) -> None:
    path = nfd_session(tmp_path)
    for pattern in ("r\u00e9sum\u00e9\\.md", f"{RESUME_NFD}\\.md", f"{HANGUL_NFC}\\s+please"):
        found = run("search", "-E", "--json", pattern, str(path))
        assert found.exit_code == 0, found.output
        assert [json.loads(line)["entry_id"] for line in found.stdout.splitlines()] == ["u1"]


def test_a_kelvin_sign_is_found_as_the_k_it_composes_to(tmp_path: Path) -> None:
    """NFC makes the Kelvin sign an ASCII "K": a folder's bytes without a "K" may still hold
    one (the search reads the file rather than ruling it out)."""
    root = tmp_path / "sessions"
    write_session(root, "/srv/app", "k0000000-0000-4000-8000-000000000001", ask("300 \u212a hot"))
    found = run("search", "--all", "-s", "--json", "300 K", "--sessions-dir", str(root))
    assert found.exit_code == 0, found.output
    assert len(found.stdout.splitlines()) == 1, found.output


def decomposed_site(root: Path, site: Path) -> Path:
    """A site of two sessions: one whose prompt names a macOS path stored decomposed (and
    whose reply has Hangul as jamo), one that says "naïve café" composed; the page of the
    first (its path inside the site)."""
    write_session(
        root, "/srv/app", "a0000000-0000-4000-8000-000000000001",
        ask(f"open Cafe\u0301/{RESUME_NFD}.md", f"the {HANGUL_NFD} notes"),
    )  # fmt: skip
    write_session(
        root, "/srv/web", "b0000000-0000-4000-8000-000000000002",
        ask(f"a na\u00efve {CAFE_NFC} answer", "plain"),
    )  # fmt: skip
    build(root, site)
    (page,) = [
        found.relative_to(site)
        for found in (site / "sessions").rglob("*.html")
        if "Cafe\u0301" in found.read_text(encoding="utf-8")
    ]
    return page


#: Typed, and how many of the two sessions say it (typed decomposed: "naïve").
TYPED = [(CAFE_NFC, 2), ("r\u00e9sum\u00e9", 1), (HANGUL_NFC, 1), ("nai\u0308ve", 1)]


@pytest.mark.browser
def test_the_site_text_search_finds_canonically_equivalent_text(
    tmp_path: Path, served: tuple[Path, str], page: Any
) -> None:
    """The site index's text search found no "café" or "naïve" typed where the sessions
    said them decomposed, and none typed decomposed where they said them composed."""
    site, base = served
    decomposed_site(tmp_path / "sessions", site)
    page.goto(f"{base}/index.html")
    for typed, sessions in TYPED:
        page.fill("#text-query", typed)
        page.press("#text-query", "Enter")
        expect(page.locator("#text-status")).to_have_text(re.compile(f"in {sessions} session"))
        expect(page.locator("section.text-hits mark").first).to_be_visible()


@pytest.mark.browser
def test_the_site_filter_finds_canonically_equivalent_prompts(
    tmp_path: Path, served: tuple[Path, str], page: Any
) -> None:
    """The index's filter, which also looks through the sessions' prompts, the same."""
    site, base = served
    decomposed_site(tmp_path / "sessions", site)
    page.goto(f"{base}/index.html")
    for typed, sessions in TYPED:
        if typed == HANGUL_NFC:
            continue  # a reply's words: the filter reads the prompts
        page.fill("#filter", typed)
        expect(page.locator("#session-table tbody tr:not(.filtered-out)")).to_have_count(sessions)
        # the marks of this query, not the last one's (the filter runs after the input)
        composed = unicodedata.normalize("NFC", typed)
        page.wait_for_function(
            """([word, count]) => {
              const marks = [...document.querySelectorAll("ul.prompt-hits mark")];
              return marks.length === count
                && marks.every((m) => m.textContent.toLowerCase() === word);
            }""",
            arg=[composed, sessions],
        )  # composed, and marked whole


@pytest.mark.browser
def test_the_session_page_search_finds_canonically_equivalent_text(
    tmp_path: Path, served: tuple[Path, str], page: Any
) -> None:
    """On a session's page "café" typed found "0 of 21 entries match" where the text was
    stored decomposed; typed decomposed, it found it."""
    site, base = served
    session_page = decomposed_site(tmp_path / "sessions", site)
    page.goto(f"{base}/{session_page.as_posix()}")
    for typed in (CAFE_NFC, "r\u00e9sum\u00e9", HANGUL_NFC, RESUME_NFD):
        page.fill("#tree-search", typed)
        expect(page.locator("#tree-status")).to_contain_text(re.compile(r"^1 of \d+ entries match"))
    page.fill("#tree-search", "nai\u0308ve")  # said in the other session only
    expect(page.locator("#tree-status")).to_contain_text(re.compile(r"^0 of \d+ entries match"))


# --- 3. controls that Python splits at are signs, not spaces -------------------------------------


def test_one_line_collapses_whitespace_only() -> None:
    assert one_line("de\x1fploy \x85prod") == "de\x1fploy \x85prod"
    assert one_line("zz\x1e") == "zz\x1e"
    assert one_line(" a \t\r\n b\u2028c\u00a0\u3000d ") == "a b c d"
    assert terminal_text(one_line("de\x1fploy \x85prod")) == "de\u241fploy \u27e8U+0085\u27e9prod"


def test_list_stats_and_search_show_such_controls_as_signs(tmp_path: Path) -> None:
    """A session named "de\\x1fploy \\x85prod" printed as "de ploy prod" in `list`, `stats`
    and `search`, and a model's NEL as a space in `stats`' models line: the README says
    they show control characters as signs, and the page does."""
    root = tmp_path / "sessions"
    path = pi_session(
        root, "/tmp/x", "33333333-cccc-7000-8000-000000000003", "de\x1fploy \x85prod", 1
    )
    text = path.read_text(encoding="utf-8").replace('"model": "m"', '"model": "m\\u0085x\\u001e"')
    path.write_text(text, encoding="utf-8")
    shown = "de\u241fploy \u27e8U+0085\u27e9prod"
    listed = run("list", "--all", "--sessions-dir", str(root))
    assert shown in listed.stdout, listed.stdout
    stats = run("stats", str(path))
    assert stats.stdout.splitlines()[0] == shown, stats.stdout
    assert "m\u27e8U+0085\u27e9x\u241e" in stats.stdout, stats.stdout
    found = run("search", "ploy", str(path))
    assert "de\u241f[ploy] \u27e8U+0085\u27e9prod" in found.stdout, found.stdout
    assert run("search", "de ploy", str(path)).stdout == ""  # the sign is no space
