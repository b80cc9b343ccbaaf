"""Site index, stop 62: the filter finds words spread over a row and its prompts, and words
past the shown start of a long prompt; a copied session's turns are counted once, as
`stats --all` counts them; the projects table reads on a phone; every text match of a
session can be listed; Turkish "İ" is found and marked; a site whose sessions were all
deleted can be told from a wrong sessions folder.

The browser tests open the site over HTTP on 127.0.0.1 in Chromium (skipped without it
unless CI is set; see tests/browser_util.py).
"""

from __future__ import annotations

import base64
import functools
import gzip
import http.server
import json
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from exporter.discover import encode_cwd, session_files
from exporter.render.index import PROMPT_CHARS, PROMPTS_PER_SESSION, SESSION_WORDS_CHARS
from exporter.site import build_site
from exporter.usage_report import build_report

pytest_plugins = ["tests.browser_util"]

Turn = tuple[str, str, float]  # role, text, cost (of an answer)


def write_session(
    root: Path, cwd: str, sid: str, turns: list[Turn], *, folder: str | None = None
) -> Path:
    """A Pi session of project ``cwd`` in Pi's layout under ``root`` (``folder``: another
    project folder than its own, as a moved project's copied sessions are)."""
    where = root / (folder or encode_cwd(cwd))
    where.mkdir(parents=True, exist_ok=True)
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": sid, "timestamp": "2026-11-10T00:00:00.000Z"}
        | {"cwd": cwd}
    ]
    parent = None
    for n, (role, text, cost) in enumerate(turns):
        stamp = f"2026-11-10T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
        entry: dict[str, Any] = {"type": "message", "id": f"{sid[:4]}{n:04x}", "parentId": parent}
        entry["timestamp"] = stamp
        content = [{"type": "text", "text": text}]
        if role == "user":
            entry["message"] = {"role": "user", "content": content, "timestamp": 0}
        else:
            usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0}
            usage |= {"totalTokens": 15, "cost": {"input": cost, "output": 0, "total": cost}}
            entry["message"] = {"role": "assistant", "content": content, "usage": usage}
            entry["message"] |= {"provider": "anthropic", "model": "claude-sonnet-4-5"}
        lines.append(entry)
        parent = entry["id"]
    path = where / f"2026-11-10T00-00-00-000Z_{sid}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def ask(prompt: str, answer: str = "ok", cost: float = 0.01) -> list[Turn]:
    """A prompt and its answer (which cost ``cost``)."""
    return [("user", prompt, 0), ("assistant", answer, cost)]


def build(root: Path, site: Path) -> Path:
    report = build_site(session_files(root), site, jobs=1, progress=False)
    assert not report.failed, report.failed
    return site / "index.html"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A site folder in tmp_path served over HTTP on 127.0.0.1: (folder, its base URL)."""
    site = tmp_path / "site"
    site.mkdir()
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


@pytest.fixture
def page(pw_browser: Any) -> Iterator[Any]:
    context = pw_browser.new_context(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    tab = context.new_page()
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        yield tab
        assert errors == []
    finally:
        context.close()


SHOWN = "#session-table tbody tr:not(.filtered-out)"


def filter_for(page: Any, text: str) -> None:
    page.fill("#filter", text)


# --- 1. words spread over the row and its prompts -------------------------------------------


@pytest.mark.browser
def test_the_filter_finds_words_spread_over_the_row_and_its_prompts(
    tmp_path: Path, served: tuple[Path, str], page: Any
) -> None:
    """`alpha tango` showed 0 of 8: a row counted only when all the words were in its text
    or all in one prompt, never the project in one and a prompt's word in the other."""
    root = tmp_path / "sessions"
    write_session(
        root,
        "/home/dev/alpha",
        "a0000000-0000-4000-8000-000000000001",
        [*ask("hello there"), *ask("now fix the tango bug")],
    )
    write_session(
        root,
        "/home/dev/beta",
        "b0000000-0000-4000-8000-000000000002",
        ask("tango in beta"),
    )
    site, base = served
    build(root, site)
    page.goto(f"{base}/index.html")
    filter_for(page, "alpha tango")
    expect(page.locator(SHOWN)).to_have_count(1)
    row = page.locator(SHOWN)
    expect(row.locator("td.project")).to_have_text("~/alpha")
    expect(row.locator(".prompt-hits li")).to_have_count(1)
    expect(row.locator(".prompt-hits mark")).to_have_text(["tango"])
    expect(page.locator("#filter-status")).to_contain_text("1 of 2 sessions")
    filter_for(page, "beta tango")  # both words in one place still work
    expect(page.locator(SHOWN)).to_have_count(1)
    filter_for(page, "alpha gamma")  # a word nowhere: nothing
    expect(page.locator(SHOWN)).to_have_count(0)


# --- 2. copies counted once --------------------------------------------------------------------


def _fact(html: str, name: str) -> str:
    found = re.search(rf"<dt>{name}</dt><dd>(.*?)</dd>", html)
    assert found is not None, name
    return re.sub(r"<[^>]+>", "", found.group(1))


def _project_cost(html: str, name: str) -> str:
    found = re.search(
        rf">{re.escape(name)}</a></th>(?:<td[^>]*>[^<]*</td>){{3}}<td[^>]*>([^<]*)", html
    )
    assert found is not None, name
    return found.group(1)


@pytest.mark.browser
def test_a_copied_session_is_counted_once_and_marked_a_copy(
    tmp_path: Path, served: tuple[Path, str], page: Any
) -> None:
    """The same file in --home-dev-gamma-- and --home-dev-gamma-moved--: the index said
    $2.09 where `stats --all` says $1.09 ("1 copy of another file not counted again"),
    its footer claiming each branch was counted once. A copy continued in another folder
    has its new turns counted, the copied ones not."""
    root = tmp_path / "sessions"
    write_session(
        root,
        "/home/dev/alpha",
        "a0000000-0000-4000-8000-000000000001",
        ask("hello", cost=0.09),
    )
    gamma = ask("copied session", "costly", 1.0)
    original = write_session(root, "/home/dev/gamma", "c0000000-0000-4000-8000-000000000003", gamma)
    copy = write_session(
        root,
        "/home/dev/gamma",
        "c0000000-0000-4000-8000-000000000003",
        gamma,
        folder="--home-dev-gamma-moved--",
    )
    grown = [*gamma, *ask("and more", "sure", 0.25)]
    continued = write_session(
        root,
        "/home/dev/delta",
        "d0000000-0000-4000-8000-000000000004",
        gamma,
        folder="--home-dev-delta--",
    )
    # the same turns as the original (ids, times, usage), then two of its own
    lines = continued.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    text = original.read_text(encoding="utf-8").splitlines()[1:]
    more = write_session(tmp_path / "scratch", "/x", "c0000000-0000-4000-8000-000000000003", grown)
    continued.write_text(
        "\n".join([json.dumps(head), *text, *more.read_text(encoding="utf-8").splitlines()[3:]])
        + "\n",
        encoding="utf-8",
    )
    for n, path in enumerate([original, copy, continued]):  # newest first: the original
        os.utime(path, (1_800_000_000 - n, 1_800_000_000 - n))
    files = session_files(root)
    stats = build_report(files)
    assert stats.copies == 1 and round(stats.total.usage.cost, 2) == 1.34  # 0.09 + 1 + 0.25
    site, base = served
    html = build(root, site).read_text(encoding="utf-8")
    assert _fact(html, "Cost").startswith("$1.34"), _fact(html, "Cost")
    assert _fact(html, "Tokens") == f"{stats.total.usage.total_tokens:,}"
    assert _project_cost(html, "~/gamma") == "$1.00"
    assert _project_cost(html, "~/delta") == "$0.250"
    assert "1 a copy of another" in _fact(html, "Sessions")
    assert "$1.34 in total" in html  # the chart's, too
    page.goto(f"{base}/index.html")
    rows = page.locator("#session-table tbody tr")
    expect(rows).to_have_count(4)  # every file is still listed
    copy_row = rows.filter(has=page.locator(".copy .badge", has_text="copy"))
    expect(copy_row).to_have_count(1)
    expect(copy_row.locator(".copy")).to_contain_text("copy of copied session, counted there")
    link = copy_row.locator(".copy a")
    href = link.get_attribute("href")
    assert href is not None and href.endswith(".html") and "-2.html" not in href
    partial = rows.filter(has=page.locator(".copy", has_text="1 of its 2 turns also in"))
    expect(partial).to_have_count(1)
    filter_for(page, "gamma")  # the filter's sum counts a copy once too
    expect(page.locator("#filter-status")).to_contain_text("2 of 4 sessions · $1.00")


# --- 3. the projects table on a phone ----------------------------------------------------------

_COVERED = """() => {
  const table = document.querySelector('table.projects'), wrap = table.parentElement;
  const out = [];
  for (const end of [false, true]) {
    wrap.scrollLeft = end ? wrap.scrollWidth : 0;
    for (const cell of table.querySelectorAll('tbody tr td:nth-child(5)')) {
      cell.scrollIntoView({block: 'center', inline: 'nearest'});
      const box = cell.getBoundingClientRect();
      const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
      if (!(hit === cell || cell.contains(hit)))
        out.push((end ? 'scrolled: ' : 'start: ') + cell.textContent + ' under ' +
          (hit ? hit.tagName : 'nothing'));
    }
  }
  return out;
}"""


@pytest.mark.browser
def test_a_long_project_name_leaves_the_costs_in_view_on_a_phone(
    tmp_path: Path, served: tuple[Path, str], pw_browser: Any
) -> None:
    """On a 360 px phone the Projects table's pinned first column took the folder name on
    one line: wider than the screen, so every number sat under it."""
    root = tmp_path / "sessions"
    long = "/home/dev/go/src/github.com/acme-corporation/platform-infrastructure-terraform"
    for n, cwd in enumerate(["/home/dev/alpha", "/home/dev/beta", long]):
        write_session(
            root,
            cwd,
            f"{n}0000000-0000-4000-8000-00000000000{n}",
            ask("plan", cost=0.02 + n),
        )
    site, base = served
    build(root, site)
    context = pw_browser.new_context(
        viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True
    )
    try:
        phone = context.new_page()
        phone.goto(f"{base}/index.html")
        assert phone.locator("table.projects tbody td:nth-child(5)").count() == 4
        assert phone.evaluate(_COVERED) == []
    finally:
        context.close()


# --- 4. every text match reachable -------------------------------------------------------------


@pytest.mark.browser
def test_every_text_match_of_a_session_can_be_listed(
    tmp_path: Path, served: tuple[Path, str], page: Any
) -> None:
    """ "Show 300 of the 400 matches" stayed after its press with the same words, a second
    press did nothing: matches 301-400 could not be reached, and the focus was lost."""
    root = tmp_path / "sessions"
    turns = [turn for i in range(200) for turn in ask(f"needle {i}", f"needle answer {i}")]
    write_session(root, "/home/dev/alpha", "f0000000-0000-4000-8000-000000000006", turns)
    site, base = served
    build(root, site)
    page.goto(f"{base}/index.html")
    page.fill("#text-query", "needle")
    page.press("#text-query", "Enter")
    block = page.locator("section.text-hits")
    items = block.locator("ul > li:not(.more)")
    button = block.locator("li.more button")
    expect(items).to_have_count(5)
    expect(button).to_have_text("Show 300 of the 400 matches in this session")
    button.click()
    expect(items).to_have_count(300)
    expect(button).to_have_text("Show all 400 matches in this session")
    sixth = "document.querySelectorAll('section.text-hits ul > li')[5].querySelector('a')"
    assert page.evaluate(f"document.activeElement === {sixth}")
    button.click()
    expect(items).to_have_count(400)
    expect(button).to_have_count(0)
    focused = page.evaluate("document.activeElement.textContent")
    assert focused == page.locator("section.text-hits ul > li").nth(300).text_content()
    listed = page.eval_on_selector_all("section.text-hits ul > li a", "as => as.map(a => a.href)")
    assert len(set(listed)) == 400  # each match once


# --- 5. words past the start of a long prompt and past the 400th prompt -----------------------


@pytest.mark.browser
def test_the_filter_finds_words_past_the_start_of_a_long_prompt_and_the_400th(
    tmp_path: Path, served: tuple[Path, str], page: Any
) -> None:
    """The filter read only the first 240 characters of a prompt and the first 400 prompts
    of a session: "flakytest" after a pasted log, or in the 401st prompt, found nothing."""
    root = tmp_path / "sessions"
    log = "here is the log: " + "x" * 250 + " why does flakytest fail?"
    write_session(
        root,
        "/home/dev/alpha",
        "e0000000-0000-4000-8000-000000000005",
        ask(log, "because"),
    )
    loop = [turn for i in range(PROMPTS_PER_SESSION) for turn in ask(f"step {i}")]
    loop += ask("and now the latecomer")
    write_session(root, "/home/dev/beta", "b0000000-0000-4000-8000-000000000002", loop)
    # a session of long prompts, each of other words: the index grows within its budget
    lots = [turn for i in range(60) for turn in ask(" ".join(f"w{i}x{k}" for k in range(400)))]
    write_session(root, "/home/dev/gamma", "c0000000-0000-4000-8000-000000000003", lots)
    site, base = served
    html = build(root, site).read_text(encoding="utf-8")
    page.goto(f"{base}/index.html")
    filter_for(page, "flakytest")
    expect(page.locator(SHOWN)).to_have_count(1)
    expect(page.locator(f"{SHOWN} .prompt-hits mark")).to_have_text(["flakytest"])
    assert len(log) > PROMPT_CHARS + 20
    filter_for(page, "latecomer")
    expect(page.locator(SHOWN)).to_have_count(1)
    expect(page.locator(f"{SHOWN} td.project")).to_have_text("~/beta")
    filter_for(page, "w1x100")  # a word of a long prompt within the budget
    expect(page.locator(SHOWN)).to_have_count(1)
    # what the filter reads besides the shown starts: about 2,000 characters of the
    # long prompts' 170,000 (a site of 2,000 such sessions: under 3 MB more, compressed)
    words = re.search(r'id="prompt-words"[^>]*>([^<]*)<', html)
    assert words is not None
    extra = json.loads(gzip.decompress(base64.b64decode(words.group(1))))
    assert SESSION_WORDS_CHARS < len(json.dumps(extra)) < SESSION_WORDS_CHARS + 1_000


# --- 6. Turkish İ --------------------------------------------------------------------------------


@pytest.mark.browser
def test_a_dotted_capital_i_is_found_and_marked_by_both_searches(
    tmp_path: Path, served: tuple[Path, str], page: Any
) -> None:
    """ "İ".toLowerCase() is "i̇" (two characters): `istanbul` found nothing in "İstanbul",
    and `İstanbul` was found but nothing marked, in the filter and the text search."""
    root = tmp_path / "sessions"
    write_session(
        root,
        "/home/dev/alpha",
        "a1000000-0000-4000-8000-000000000007",
        ask("trip to İstanbul and İZMİR"),
    )
    write_session(
        root,
        "/home/dev/beta",
        "b0000000-0000-4000-8000-000000000002",
        ask("stay home"),
    )
    site, base = served
    build(root, site)
    page.goto(f"{base}/index.html")
    for query, marked in (("istanbul", "İstanbul"), ("İstanbul", "İstanbul"), ("izmir", "İZMİR")):
        filter_for(page, query)
        expect(page.locator(SHOWN)).to_have_count(1)
        expect(page.locator(f"{SHOWN} .prompt-hits mark")).to_have_text([marked])
        page.fill("#text-query", query)
        page.press("#text-query", "Enter")
        expect(page.locator("#text-status")).to_have_text("1 match in 1 session")
        expect(page.locator("#text-results mark")).to_have_text([marked])


# --- 7. all sessions deleted --------------------------------------------------------------------


def test_a_site_whose_sessions_were_all_deleted_is_told_from_a_wrong_folder(
    tmp_path: Path,
) -> None:
    """Deleting the last session and running `export --all` again exited 2 ("no Pi sessions
    for any project") and the site kept listing it. `sessions_were_deleted` tells that from
    a wrong --sessions-dir (which must leave a site as it is); a build of no files then
    removes the page."""
    from exporter.site import sessions_were_deleted

    root = tmp_path / "sessions"
    kept = write_session(
        root,
        "/home/dev/alpha",
        "a0000000-0000-4000-8000-000000000001",
        [("user", "hello", 0), ("assistant", "hi", 0.01)],
    )
    gone = write_session(
        root,
        "/home/dev/beta",
        "b0000000-0000-4000-8000-000000000002",
        ask("bye"),
    )
    site = tmp_path / "site"
    build(root, site)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / encode_cwd("/home/dev/beta")).mkdir(parents=True)
    assert not sessions_were_deleted(site, root)  # all still there
    gone.unlink()
    kept.unlink()
    assert session_files(root) == []
    assert sessions_were_deleted(site, root)
    assert not sessions_were_deleted(site, elsewhere)  # a wrong folder: the site stays
    assert not sessions_were_deleted(site, tmp_path / "missing")
    assert not sessions_were_deleted(tmp_path / "no-site", root)
    pages = list((site / "sessions").rglob("*.html"))
    assert len(pages) == 2
    report = build_site([], site, jobs=1, progress=False)
    assert report.removed == 2 and not any(p.exists() for p in pages)
    assert "No sessions." in (site / "index.html").read_text(encoding="utf-8")


def test_export_all_empties_a_site_whose_sessions_were_all_deleted(tmp_path: Path) -> None:
    """The CLI end: the same deletion through `export --all` now empties the site (exit 0),
    while a wrong --sessions-dir or a --cwd that finds nothing still leave it as it is."""
    from click.testing import CliRunner

    from exporter.cli import cli

    root = tmp_path / "sessions"
    only = write_session(
        root, "/home/dev/alpha", "a0000000-0000-4000-8000-000000000001", ask("hello")
    )
    site = tmp_path / "site"

    def export_all(*extra: str) -> Any:
        args = ["export", "--all", "--sessions-dir", str(root), "-o", str(site), *extra]
        return CliRunner().invoke(cli, args)

    assert export_all().exit_code == 0
    pages = list((site / "sessions").rglob("*.html"))
    assert len(pages) == 1
    only.unlink()
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / encode_cwd("/home/dev/alpha")).mkdir(parents=True)
    wrong = CliRunner().invoke(
        cli, ["export", "--all", "--sessions-dir", str(elsewhere), "-o", str(site)]
    )
    scoped = export_all("--cwd", "/home/dev/alpha")
    assert wrong.exit_code == 2 and scoped.exit_code == 2, (wrong.output, scoped.output)
    assert all(page.exists() for page in pages)  # neither emptied the site
    result = export_all()
    assert result.exit_code == 0, result.output
    assert not any(page.exists() for page in pages)
    assert "No sessions." in (site / "index.html").read_text(encoding="utf-8")
