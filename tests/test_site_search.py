"""The site index's text search: what each session's records hold and how they are cut,
how a rebuild keeps them right (sessions added, changed, removed; a shard lost or damaged)
without reading unchanged sessions, the search itself in Chromium on file:// (a word deep in
one fixture session, links to entries that exist, untrusted text shown as text, the page
without JavaScript), and a published site's index made from the redacted sessions only.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import exporter.site as site_module
import exporter.site_search as site_search
from exporter.discover import session_files
from exporter.loader import load_session, parse_session_bytes
from exporter.site import SiteError, build_site, source_id
from exporter.site_manifest import SEARCH_DIR
from tests.conftest import FIXTURE_FILES
from tests.fakes.hub import fake_hub_fixture, isolate_hub
from tests.page_anchors import anchor_for
from tests.test_site_browser import Tab, tab_fixture

pytest_plugins = ["tests.browser_util"]
__all__ = ["fake_hub_fixture", "tab_fixture"]

SEARCH_INDEX = re.compile(r'<script [^>]*id="search-index"[^>]*>(.*?)</script>', re.S)
NOTE = re.compile(r'<p id="text-search-note"[^>]*>(.*?)</p>', re.S)
TOKEN = "ghp_Q8vWm3nZr7TkLp2XbYc4Hd6Jf9Gs1Ae5Ru0i"


def search_index_of(html: str) -> dict[str, Any]:
    """The index page's text-search index (JSON, gzip, base64, as its script unpacks it)."""
    found = SEARCH_INDEX.search(html)
    assert found is not None, "no search index in the page"
    return json.loads(gzip.decompress(base64.b64decode(found.group(1))))


def index_of(site: Path) -> dict[str, Any]:
    return search_index_of((site / "index.html").read_text(encoding="utf-8"))


def note_of(site: Path) -> str:
    found = NOTE.search((site / "index.html").read_text(encoding="utf-8"))
    assert found is not None
    return found.group(1)


def found_in(site: Path, word: str) -> list[tuple[str, str, str]]:
    """(page, anchor, kind) of every record that holds ``word``."""
    return [
        (page, anchor, kind)
        for page, _, records in index_of(site)["sessions"]
        for anchor, kind, text in records
        if word in text.lower()
    ]


# --- sessions --------------------------------------------------------------------------------


def message(entry_id: str, parent: str | None, role: str, content: Any, **extra: Any) -> dict:
    body = {"role": role, "content": content, "timestamp": 0, **extra}
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2025-06-01T10:01:00.000Z",
        "message": body,
    }


def session_lines(sid: str, prompt: str, output: str = "ok", cwd: str = "/home/dev/app") -> str:
    """A Pi v3 session: a prompt, a reply calling bash, the call's output, a last reply."""
    header = {"type": "session", "version": 3, "id": sid, "cwd": cwd}
    header["timestamp"] = "2025-06-01T10:00:00.000Z"
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "make all"}}
    entries = [
        header,
        message("u1", None, "user", prompt),
        message("a1", "u1", "assistant", [{"type": "text", "text": "Running it."}, call]),
        message("r1", "a1", "toolResult", [{"type": "text", "text": output}], toolCallId="c1"),
        message("a2", "r1", "assistant", [{"type": "text", "text": "Done."}]),
    ]
    return "".join(json.dumps(e) + "\n" for e in entries)


def write_session(root: Path, name: str, text: str) -> Path:
    folder = root / "--home-dev-app--"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2025-06-01T10-00-00-000Z_{name}.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def build(root: Path, site: Path, **kwargs: Any) -> Any:
    return build_site(session_files(root), site, jobs=1, progress=False, **kwargs)


# --- records and caps ------------------------------------------------------------------------


def test_records_hold_prompts_replies_calls_and_the_ends_of_outputs() -> None:
    """One record per thing said, each with the DOM id its entry has on the page; a call
    links to its output's box (the call and its output share it); a long prompt is cut to
    its start, a long output to its start and end; thinking is not searched."""
    prompt = "alphaprompt " + "word " * 1000 + "omegaprompt"
    output = "headword " + "x " * 2000 + "middleword " + "y " * 2000 + "tailword"
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "make  all"}}
    read = {"type": "toolCall", "id": "c2", "name": "read", "arguments": {"path": "/src/app.py"}}
    thought = {"type": "thinking", "thinking": "privatethought"}
    shown = "\x1b[31mred\x1b[0m invoice_\u202egnp.exe"  # colour codes, a bidi override
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-06-01T10:00:00Z"},
        message("u1", None, "user", prompt),
        message("a1", "u1", "assistant", [thought, {"type": "text", "text": "On it"}, call, read]),
        message("r1", "a1", "toolResult", [{"type": "text", "text": output}], toolCallId="c1"),
        message("r2", "r1", "toolResult", [{"type": "text", "text": shown}], toolCallId="c2"),
        message("a2", "r2", "assistant", [], errorMessage="429 rate limit exceeded"),
    ]
    session = parse_session_bytes("".join(json.dumps(e) + "\n" for e in lines).encode())
    records, cut = site_search.session_records(session)
    assert not cut
    by_kind: dict[str, list[list[str]]] = {}
    for record in records:
        by_kind.setdefault(record[1], []).append(record)
    (p,) = by_kind["p"]
    assert p[0] == anchor_for(session, "u1") and p[2].startswith("alphaprompt word word")
    assert len(p[2]) == site_search.TEXT_CHARS and "omegaprompt" not in p[2]
    assert [r[2] for r in by_kind["r"]] == ["On it"]
    assert [(r[0], r[2]) for r in by_kind["c"]] == [
        (anchor_for(session, "r1"), "bash make all"),
        (anchor_for(session, "r2"), "read /src/app.py"),
    ]
    out = by_kind["o"][0][2]
    assert out.startswith("headword x x") and out.endswith("y y tailword")
    assert "middleword" not in out
    assert len(out) <= site_search.OUTPUT_HEAD + site_search.OUTPUT_TAIL + 3
    assert by_kind["e"] == [[anchor_for(session, "a2"), "e", "429 rate limit exceeded"]]
    assert by_kind["o"][1][2] == "red invoice_⟨U+202E⟩gnp.exe"  # as the page shows them
    assert "privatethought" not in json.dumps(records)


def test_a_session_over_its_cap_is_cut_evenly_then_by_what_matters_most(monkeypatch) -> None:
    """Over the session's cap every record is kept with the longest cut to one length; when
    that would leave too little of each, prompts and replies are kept before tools' output."""
    session = load_session(FIXTURE_FILES[0].parent / "pi-branched-4.jsonl")
    whole, cut = site_search.session_records(session)
    assert not cut
    total = sum(len(r[2]) for r in whole)
    monkeypatch.setattr(site_search, "SESSION_CHARS", total // 2)
    halved, cut = site_search.session_records(session)
    assert cut and len(halved) == len(whole)
    assert sum(len(r[2]) for r in halved) <= total // 2
    assert [r[:2] for r in halved] == [r[:2] for r in whole]  # every entry still searchable
    longest = max(len(r[2]) for r in halved)
    assert sum(len(r[2]) == longest for r in halved) > 10  # the long ones, cut to one length
    tiny = len(whole) * 20
    monkeypatch.setattr(site_search, "SESSION_CHARS", tiny)
    kept, cut = site_search.session_records(session)
    assert cut and sum(len(r[2]) for r in kept) <= tiny
    kinds = {r[1] for r in kept}
    prompts = [r for r in whole if r[1] == "p"]
    assert len([r for r in kept if r[1] == "p"]) == len(prompts)  # every prompt kept
    assert "o" not in kinds  # the tools' output went first


# --- the site --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fixtures_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site of the seven real fixtures, as `export --all` makes it."""
    base = tmp_path_factory.mktemp("search-site")
    folder = base / "sessions" / "--fixtures--"
    folder.mkdir(parents=True)
    for path in FIXTURE_FILES:
        (folder / path.name).write_bytes(path.read_bytes())
    report = build(base / "sessions", base / "site")
    assert report.rendered == len(FIXTURE_FILES) and not report.failed
    return base / "site"


def page_ids(page: Path) -> set[str]:
    return set(re.findall(r' id="([^"]+)"', page.read_text(encoding="utf-8")))


def test_the_index_embeds_every_session_in_table_order_linking_to_entries_that_exist(
    fixtures_site: Path,
) -> None:
    html = (fixtures_site / "index.html").read_text(encoding="utf-8")
    index = search_index_of(html)
    table = re.findall(r'<td class="title"><a href="([^"]+)"', html)
    assert [s[0] for s in index["sessions"]] == table and len(table) == len(FIXTURE_FILES)
    kinds = {kind for _, _, records in index["sessions"] for _, kind, _ in records}
    assert kinds == {"p", "r", "c", "o", "e", "s"}
    for page, _, records in index["sessions"]:
        ids = page_ids(fixtures_site / page)
        missing = {anchor for anchor, _, _ in records} - ids
        assert not missing, (page, sorted(missing)[:5])
    note = note_of(fixtures_site)
    assert "Searches the prompts, replies, tool calls" in note and "incomplete" not in note
    # off-line: an inert block of text, never a script that runs
    assert 'type="application/octet-stream" id="search-index"' in html


def test_the_whole_site_is_cut_to_its_cap_and_the_page_says_so(
    fixtures_site: Path, tmp_path: Path, monkeypatch
) -> None:
    """Past the site's cap each session keeps the same share (the small ones all of theirs)
    and the page says results may be incomplete; nothing is rendered again for it."""
    site = tmp_path / "site"
    shutil.copytree(fixtures_site, site)  # of the same session files: all unchanged
    before = index_of(site)["sessions"]
    sizes = sorted(sum(len(r[2]) for r in records) for _, _, records in before)
    monkeypatch.setattr(site_search, "SITE_CHARS", sum(sizes) // 3)
    report = build(fixtures_site.parent / "sessions", site)
    assert report.rendered == 0 and report.unchanged == len(FIXTURE_FILES)
    after = index_of(site)["sessions"]
    chars = [sum(len(r[2]) for r in records) for _, _, records in after]
    assert sum(chars) <= sum(sizes) // 3
    assert sorted(chars)[0] == sizes[0]  # the smallest session keeps all it said
    assert "Results may be incomplete" in note_of(site) and "too long to search in full" in (
        note_of(site)
    )


# --- incremental builds ----------------------------------------------------------------------


@pytest.fixture
def parsed(monkeypatch) -> list[str]:
    """The session files a build reads (jobs=1: in this process)."""
    seen: list[str] = []
    real = site_module.parse_session_bytes

    def counting(data: bytes, path: Any = None, **kwargs: Any) -> Any:
        seen.append(Path(str(path)).name)
        return real(data, path=path, **kwargs)

    monkeypatch.setattr(site_module, "parse_session_bytes", counting)
    return seen


def shard_times(site: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (site / SEARCH_DIR).iterdir()}


def test_adding_changing_and_removing_sessions_keeps_the_search_right(
    tmp_path: Path, parsed: list[str]
) -> None:
    root, site = tmp_path / "sessions", tmp_path / "site"
    one = write_session(root, "one", session_lines("s1", "tell me about quokkaone"))
    write_session(root, "two", session_lines("s2", "and numbattwo", output="err: wombatout"))
    build(root, site)
    assert {w: len(found_in(site, w)) for w in ("quokkaone", "numbattwo", "wombatout")} == {
        "quokkaone": 1,
        "numbattwo": 1,
        "wombatout": 1,
    }
    assert len(shard_times(site)) == 2
    # added: only the new session is read; the others' shards are left as they were
    parsed.clear()
    times = shard_times(site)
    three = write_session(root, "three", session_lines("s3", "what of bilbythree"))
    report = build(root, site)
    assert (report.rendered, report.unchanged) == (1, 2) and parsed == [three.name]
    assert [kind for _, _, kind in found_in(site, "bilbythree")] == ["p"]
    assert {k: v for k, v in shard_times(site).items() if k in times} == times
    # changed: its old words go, its new ones come
    parsed.clear()
    one.write_text(session_lines("s1", "tell me about echidnaone"), encoding="utf-8")
    report = build(root, site)
    assert report.rendered == 1 and parsed == [one.name]
    assert found_in(site, "quokkaone") == [] and len(found_in(site, "echidnaone")) == 1
    # removed: its words and its shard go
    parsed.clear()
    three.unlink()
    report = build(root, site)
    assert (report.rendered, report.removed) == (0, 1) and parsed == []
    assert found_in(site, "bilbythree") == []
    assert sorted(shard_times(site)) == sorted(f"{source_id(p)}.json" for p in session_files(root))
    assert len(index_of(site)["sessions"]) == 2


def test_a_lost_or_damaged_shard_is_made_again_by_the_next_build(
    tmp_path: Path, parsed: list[str]
) -> None:
    """A shard deleted by hand: its session is rendered again. A damaged one: the build
    does not fail, the page says a session could not be indexed, and the next build makes
    it again (a site made before the text search had none: each is rendered once)."""
    root, site = tmp_path / "sessions", tmp_path / "site"
    one = write_session(root, "one", session_lines("s1", "tell me about quokkaone"))
    write_session(root, "two", session_lines("s2", "and numbattwo"))
    build(root, site)
    shard = site / SEARCH_DIR / f"{source_id(one)}.json"
    shard.unlink()
    parsed.clear()
    assert build(root, site).rendered == 1 and parsed == [one.name]
    assert len(found_in(site, "quokkaone")) == 1
    head = '{"format":1,"cut":false,"records":1,"chars":2}\n'
    shard.write_text(head + '["x\\" onclick=1","p","hi"]\n', encoding="utf-8")
    report = build(root, site)
    assert report.rendered == 0 and not report.failed
    assert found_in(site, "quokkaone") == [] and len(found_in(site, "numbattwo")) == 1
    assert "1 session could not be indexed" in note_of(site)
    assert "onclick" not in json.dumps(index_of(site))  # none of the damaged shard
    assert build(root, site).rendered == 1
    assert len(found_in(site, "quokkaone")) == 1 and "incomplete" not in note_of(site)


def test_a_search_folder_linked_out_of_the_site_is_refused(tmp_path: Path) -> None:
    root, site = tmp_path / "sessions", tmp_path / "site"
    write_session(root, "one", session_lines("s1", "hello"))
    build(root, site)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for path in (site / SEARCH_DIR).iterdir():
        path.unlink()
    (site / SEARCH_DIR).rmdir()
    (site / SEARCH_DIR).symlink_to(outside)
    with pytest.raises(SiteError, match="symbolic link out of the site folder"):
        build(root, site)
    assert list(outside.iterdir()) == []


FILE_IN_PLACE = "a file is in the place of this folder"
FOLDER_IN_PLACE = "a folder is in the place of this file"


def test_a_search_folder_that_cannot_be_written_is_said_with_its_reason(tmp_path: Path) -> None:
    """A file where the search's folder belongs (a sync tool's conflict copy): the pages
    are made, the report says why their text cannot be searched (review h174/h175: it was
    silent, and every build rendered every session again with no hint)."""
    root, site = tmp_path / "sessions", tmp_path / "site"
    write_session(root, "one", session_lines("s1", "hello"))
    write_session(root, "two", session_lines("s2", "there"))
    build(root, site)
    shutil.rmtree(site / SEARCH_DIR)
    (site / SEARCH_DIR).write_text("not a folder", encoding="utf-8")
    report = build(root, site)
    assert report.rendered == 2 and not report.failed
    assert sorted(path for path, _ in report.unindexed) == sorted(session_files(root))
    reasons = {reason for _, reason in report.unindexed}
    # (named inside the site folder: the manifest keeps it, and a site may be published)
    assert reasons == {f"cannot write {SEARCH_DIR} in the site folder: {FILE_IN_PLACE}"}
    assert str(tmp_path) not in (site / ".pi-session-site.json").read_text(encoding="utf-8")
    (site / SEARCH_DIR).unlink()
    shard = site / SEARCH_DIR / f"{source_id(session_files(root)[0])}.json"
    shard.mkdir(parents=True)  # one shard's name taken by a folder: that one is said
    report = build(root, site)
    first = session_files(root)[0]
    said = f"cannot write {SEARCH_DIR}/{shard.name} in the site folder: {FOLDER_IN_PLACE}"
    assert report.unindexed == [(first, said)]
    shard.rmdir()
    again = build(root, site)
    assert again.rendered == 1 and again.unindexed == []
    assert build(root, site).rendered == 0


def test_a_shard_that_cannot_be_written_leaves_no_stale_text_and_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search folder that cannot be written, with a shard in it from before (read-only,
    so the old one cannot go either): the index must not search the session's old text,
    and the next build must render it again even though its file is unchanged (review h177
    F1: it kept the old text for good, the session counted unchanged)."""
    root, site = tmp_path / "sessions", tmp_path / "site"
    path = write_session(root, "one", session_lines("s1", "hello"))
    build(root, site)
    assert found_in(site, "hello")
    path.write_text(session_lines("s1", "goodbye"), encoding="utf-8")

    def refused(out_dir: Path, sid: str, data: bytes) -> None:
        raise PermissionError(13, "Permission denied", str(out_dir / SEARCH_DIR / f"{sid}.x"))

    with monkeypatch.context() as patch:
        patch.setattr(site_module, "write_shard", refused)
        patch.setattr(site_module, "delete_shard", lambda out_dir, sid: None)
        report = build(root, site)
    assert report.rendered == 1 and len(report.unindexed) == 1
    assert found_in(site, "hello") == [] and found_in(site, "goodbye") == []
    again = build(root, site)  # the folder writable again: made again, searchable
    assert again.rendered == 1 and again.unindexed == []
    assert found_in(site, "goodbye") and found_in(site, "hello") == []
    assert build(root, site).rendered == 0


def test_the_cli_says_once_why_the_text_search_misses_sessions(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from exporter.cli import cli

    root, site = tmp_path / "sessions", tmp_path / "site"
    write_session(root, "one", session_lines("s1", "hello"))
    write_session(root, "two", session_lines("s2", "there"))
    site.mkdir()
    (site / SEARCH_DIR).write_text("not a folder", encoding="utf-8")
    args = ["export", "--all", "--sessions-dir", str(root), "-o", str(site)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if "text search" in line]
    assert said == [
        f"pi-session: warning: the text search cannot find 2 sessions (cannot write "
        f"{SEARCH_DIR} in the site folder: {FILE_IN_PLACE}); they are rendered again at the "
        "next build"
    ]


def test_a_title_with_a_bidi_override_is_shown_as_signs_in_search_results(
    tmp_path: Path,
) -> None:
    """Every other place on the site shows hidden controls as signs; the search's result
    headings did not (review h174 F4): a title must not reorder itself there."""
    root, site = tmp_path / "sessions", tmp_path / "site"
    write_session(root, "one", session_lines("s1", "rate limit \u202eexe.gnp"))
    build(root, site)
    ((_page, title, _records),) = index_of(site)["sessions"]
    assert "\u202e" not in title and "⟨U+202E⟩" in title, title


def test_a_tampered_page_link_in_the_manifest_never_reaches_the_index(tmp_path: Path) -> None:
    """The manifest comes with the folder, from anywhere: a row whose page is not the
    entry's own (a protocol-relative link elsewhere) is dropped and its session rendered
    again, so neither the listing nor the search links there (review h174 F5)."""
    root, site = tmp_path / "sessions", tmp_path / "site"
    write_session(root, "one", session_lines("s1", "hello"))
    build(root, site)
    path = site / ".pi-session-site.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    for entry in manifest["sessions"].values():
        entry["row"]["page"] = "//evil.example/x"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    report = build(root, site)
    assert report.rendered == 1
    html = (site / "index.html").read_text(encoding="utf-8")
    assert "evil.example" not in html
    ((page, _title, _records),) = index_of(site)["sessions"]
    assert page.startswith("sessions/") and (site / page).is_file()


# --- in Chromium -----------------------------------------------------------------------------


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def deep_word(site: Path) -> tuple[str, str, str]:
    """A word said once in all the sessions (in one record), in the second half of one
    session's records, in a reply, a call or an output, and nowhere in the index's table:
    (word, page, anchor)."""
    sessions = index_of(site)["sessions"]
    html = (site / "index.html").read_text(encoding="utf-8")
    table = html[html.index('<table class="sessions"') :].lower()
    texts = [r[2].lower() for _, _, records in sessions for r in records]
    everything = "\n".join(texts)
    for page, _, records in sessions:
        for anchor, kind, text in records[len(records) // 2 :]:
            if kind not in "rco":
                continue
            for word in sorted(set(re.findall(r"[a-z]{10,}", text.lower()))):
                if everything.count(word) == 1 and word not in table:
                    return word, page, anchor
    raise AssertionError("no word said once in the fixtures")


@pytest.mark.browser
def test_search_on_file_finds_a_word_deep_in_one_session_and_opens_its_entry(
    fixtures_site: Path, tab: Tab
) -> None:
    word, page_path, anchor = deep_word(fixtures_site)
    url = (fixtures_site / "index.html").as_uri()
    page = tab.page
    page.goto(url)
    box = page.get_by_role("searchbox", name="Search text")
    expect(box).to_be_visible()
    box.fill(word.upper())  # any case
    status = page.get_by_role("status").filter(has_text="match")
    expect(status).to_have_text("1 match in 1 session")
    hit = page.locator("#text-results li a")
    expect(hit).to_have_count(1)
    assert hit.locator("mark").text_content().lower() == word
    assert hit.get_attribute("href") == f"{page_path}#{anchor}"
    assert page.locator("#text-results h3 a").get_attribute("href") == page_path
    assert anchor in page_ids(fixtures_site / page_path)
    # the keyboard: from the box, the next Tab stop is the first result
    box.press("Tab")
    assert page.evaluate("document.activeElement.closest('#text-results') !== null")
    target = (fixtures_site / page_path).as_uri()
    hit.click()
    page.wait_for_url(f"{target}#{anchor}")
    expect(page.locator(f'[id="{anchor}"]')).to_be_visible()
    page.go_back()
    box.fill("")
    box.press("Escape")
    expect(page.locator("#text-results li")).to_have_count(0)
    tab.assert_clean({url, target})


@pytest.mark.browser
def test_every_word_must_start_a_word_in_one_entry_and_matches_are_grouped_by_session(
    tmp_path: Path, tab: Tab
) -> None:
    root, site = tmp_path / "sessions", tmp_path / "site"
    write_session(root, "one", session_lines("s1", "hit the Rate Limit again", output="ok"))
    write_session(root, "two", session_lines("s2", "a rate of change", output="no limit here"))
    write_session(root, "three", session_lines("s3", "x", output="HTTP 429: rate limit"))
    write_session(root, "four", session_lines("s4", "generate unlimited output"))
    write_session(root, "five", session_lines("s5", "why", output="api.rateLimit(5) hit"))
    write_session(root, "six", session_lines("s6", "東京の速度制限について"))
    build(root, site)
    url = (site / "index.html").as_uri()
    page = tab.page
    page.goto(url)
    page.get_by_label("Search text").fill("rate limit")
    expect(page.get_by_role("status").filter(has_text="match")).to_have_text(
        "3 matches in 3 sessions"
    )
    groups = page.locator("#text-results .text-hits")
    expect(groups).to_have_count(3)
    marks = page.locator("#text-results mark").all_text_contents()
    assert sorted(marks) == ["Limit", "Limit", "Rate", "limit", "rate", "rate"]
    kinds = page.locator("#text-results .kind").all_text_contents()
    assert sorted(kinds) == ["Prompt", "Tool output", "Tool output"]
    page.get_by_label("Search text").fill("速度制限")  # no spaces between words: found inside
    expect(page.get_by_role("status").filter(has_text="match")).to_have_text("1 match in 1 session")
    assert page.locator("#text-results mark").all_text_contents() == ["速度制限"]
    page.get_by_label("Search text").fill("rate limit zzznothing")
    expect(page.get_by_role("status").filter(has_text="No matches")).to_be_visible()
    tab.assert_clean({url})


XSS_PROMPT = '<img src=x onerror="window.__xss=1"> onerrorword <b>bold</b>'
XSS_OUTPUT = (
    '</script><script>window.__xss=2</script> onerrorword <a href="javascript:window.__xss=3">'
    "go</a>"
)


@pytest.mark.browser
def test_session_text_in_results_is_text_never_markup(tmp_path: Path, tab: Tab) -> None:
    root, site = tmp_path / "sessions", tmp_path / "site"
    write_session(root, "x", session_lines("s1", XSS_PROMPT, output=XSS_OUTPUT))
    build(root, site)
    html = (site / "index.html").read_text(encoding="utf-8")
    assert "window.__xss=2</script>" not in html  # packed, not in the page as markup
    url = (site / "index.html").as_uri()
    page = tab.page
    page.goto(url)
    page.get_by_label("Search text").fill("onerrorword")
    expect(page.get_by_role("status").filter(has_text="match")).to_have_text(
        "2 matches in 1 session"
    )
    results = page.locator("#text-results")
    assert results.locator("img, script, b, a[href^='javascript']").count() == 0
    shown = results.locator("li a").all_text_contents()
    assert any('<img src=x onerror="window.__xss=1">' in t for t in shown)
    assert any("</script><script>window.__xss=2</script>" in t for t in shown)
    assert page.evaluate("window.__xss") is None
    results.locator("li a").first.hover()
    assert page.evaluate("window.__xss") is None
    tab.assert_clean({url})


@pytest.mark.browser
def test_without_javascript_the_index_is_as_before(fixtures_site: Path, pw_browser: Any) -> None:
    """The search needs the script: without it the section is hidden and the table is
    the same complete listing."""
    context = pw_browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto((fixtures_site / "index.html").as_uri())
        assert page.locator("#text-search").count() == 1  # there, and hidden
        assert not page.locator("#text-search").is_visible()
        assert page.get_by_role("searchbox").count() == 0
        rows = page.locator("#session-table tbody tr")
        assert rows.count() == len(FIXTURE_FILES)
        assert page.locator("#session-table tbody tr td.title a").count() == len(FIXTURE_FILES)
    finally:
        context.close()


# --- publish --html --------------------------------------------------------------------------


@pytest.fixture
def hub_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_hub(monkeypatch, tmp_path)


def test_a_published_site_searches_the_redacted_text_only(
    hub_env: None, fake_hub: Any, tmp_path: Path
) -> None:
    """A token in a prompt and in a tool's output: the published html/ site (and the site
    kept locally to build it, search records included) holds it nowhere, while the words
    around it are searchable."""
    from click.testing import CliRunner

    from exporter.cli import cli
    from tests.fakes.hub import TOKEN as HUB_TOKEN

    root = tmp_path / "sessions"
    write_session(
        root,
        "s1",
        session_lines(
            "s1",
            f"deploy with {TOKEN} capybaraprompt",
            output=f"export GITHUB_TOKEN={TOKEN}\ncapybaraoutput done",
        ),
    )
    write_session(root, "s2", session_lines("s2", "nothing secret here"))
    args = ["publish", "alice/sessions", "--all", "--sessions-dir", str(root), "--html"]
    args += ["--endpoint", fake_hub.url, "-j", "1", "--token", HUB_TOKEN]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    files = fake_hub.files("alice/sessions")
    assert "html/index.html" in files
    for path, data in files.items():
        assert TOKEN.encode() not in data, path
        if path.endswith(".html"):
            assert TOKEN not in data.decode("utf-8"), path
    assert TOKEN.encode() not in fake_hub.received_bytes()
    index = search_index_of(files["html/index.html"].decode("utf-8"))
    records = [r for _, _, rs in index["sessions"] for r in rs]
    prompt = next(text for _, _, text in records if "capybaraprompt" in text)
    output = next(text for _, _, text in records if "capybaraoutput" in text)
    assert "REDACTED" in prompt.upper() and "REDACTED" in output.upper()
    kept = list((tmp_path / "cache").rglob("*"))
    shards = [p for p in kept if p.parent.name == SEARCH_DIR]
    assert len(shards) == 2
    for path in kept:
        if path.is_file():
            data = path.read_bytes()
            if "publish-copies" in path.parts or "publish-html" in path.parts:
                assert TOKEN.encode() not in data, path
    assert not any(p.startswith(("html/.", f"html/{SEARCH_DIR}")) for p in files)


def test_a_manifest_that_points_a_session_at_another_s_page_is_not_believed(
    tmp_path: Path,
) -> None:
    """A tampered manifest gives session one the page (and name) of session two: neither
    is believed, both are rendered again to their own pages, and no page is lost (review
    h177 F6: one's row linked to two's page, and its next render deleted that page)."""
    root, site = tmp_path / "sessions", tmp_path / "site"
    first = write_session(root, "one", session_lines("s1", "hello"))
    second = write_session(root, "two", session_lines("s2", "there"))
    build(root, site)
    path = site / ".pi-session-site.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    one, two = (manifest["sessions"][source_id(f)] for f in (first, second))
    pages = {one["page"]: "hello", two["page"]: "there"}
    one.update(stem=two["stem"], page=two["page"])
    one["row"]["page"] = two["page"]
    path.write_text(json.dumps(manifest), encoding="utf-8")
    assert build(root, site).rendered == 2
    for page, said in pages.items():
        assert said in (site / page).read_text(encoding="utf-8"), page
    assert sorted(found_in(site, "hello") + found_in(site, "there")) == sorted(
        (page, anchor, kind) for page in pages for anchor, kind in [("u1", "p")]
    )
    assert build(root, site).rendered == 0
