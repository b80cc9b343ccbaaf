"""`build_site`: index and page structure, links, incremental rebuilds, failures, parallelism.

Sessions are built from the shared fixtures in Pi's sessions-dir layout
(``--<encoded cwd>--/<timestamp>_<id>.jsonl``) with rewritten headers, so no Node is needed;
one test also builds a site from sessions written by Pi's own SessionManager.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from exporter.discover import encode_cwd, files_active_since, session_files
from exporter.render import RenderOptions
from exporter.session import Session
from exporter.site import (
    MANIFEST_NAME,
    SiteError,
    build_site,
    make_options_key,
    parse_since,
    source_id,
)
from tests.browser_util import Element, parse_html, shared_dir
from tests.conftest import FIXTURE_FILES

REPO = Path(__file__).resolve().parents[1]
ALPHA, BETA = "/home/alice/alpha", "/home/alice/beta"


def _variant(lines: list[str], sid: str, cwd: str, day: int, cost: float, name: str) -> str:
    """every-entry-type.jsonl as another session: id, project, date, name and one more turn."""
    header = json.loads(lines[0]) | {"id": sid, "cwd": cwd}
    date = f"2025-06-{day:02d}T"
    body = [
        line.replace("2025-06-01T", date).replace("Sampler session", name) for line in lines[1:]
    ]
    extra = {
        "type": "message",
        "id": "x1",
        "parentId": "e25",
        "timestamp": f"{date}11:00:00.000Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": f"Answer for {name}"}],
            "provider": "anthropic",
            "model": "claude-x",
            "usage": {"input": 10, "output": 5, "totalTokens": 15, "cost": {"total": cost}},
            "stopReason": "stop",
            "timestamp": 0,
        },
    }
    header["timestamp"] = f"{date}10:00:00.000Z"
    return "\n".join([json.dumps(header), *body, json.dumps(extra)]) + "\n"


def make_sessions(root: Path) -> dict[str, Path]:
    """12 sessions in 2 projects plus one broken file; returns {label: path}."""
    fixtures = shared_dir() / "fixtures"
    lines = (fixtures / "every-entry-type.jsonl").read_text(encoding="utf-8").splitlines()
    made: dict[str, Path] = {}
    for index in range(10):
        cwd = ALPHA if index % 2 == 0 else BETA
        folder = root / encode_cwd(cwd)
        folder.mkdir(parents=True, exist_ok=True)
        sid = f"0000000{index}-aaaa-7bbb-8ccc-dddddddddddd"
        day = index + 1
        path = folder / f"2025-06-{day:02d}T10-00-00-000Z_{sid}.jsonl"
        text = _variant(lines, sid, cwd, day, cost=0.25 * (index + 1), name=f"Session {index}")
        path.write_text(text, encoding="utf-8")
        made[f"s{index}"] = path
    for label, name, cwd in (("b1", "pi-branched-1", ALPHA), ("b2", "pi-branched-2", BETA)):
        raw = (fixtures / f"{name}.jsonl").read_text(encoding="utf-8").split("\n", 1)
        header = json.loads(raw[0]) | {"cwd": cwd}
        path = root / encode_cwd(cwd) / f"2026-11-30T00-57-07-315Z_{header['id']}.jsonl"
        path.write_text(json.dumps(header) + "\n" + raw[1], encoding="utf-8")
        made[label] = path
    broken = root / encode_cwd(BETA) / "2025-07-01T00-00-00-000Z_broken.jsonl"
    broken.write_bytes(b"\x00\x01 this is not JSON\n")
    made["broken"] = broken
    return made


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    root = tmp_path / "sessions"
    return root, make_sessions(root)


def files_of(root: Path) -> list[Path]:
    return session_files(root)


def links(path: Path) -> list[str]:
    page = parse_html(path.read_text(encoding="utf-8"))
    found = [e.get("href") or e.get("src") for e in page.elements if e.get("href") or e.get("src")]
    return [u for u in found if u and not u.startswith(("#", "data:"))]


def session_rows(index: Path) -> list[Element]:
    page = parse_html(index.read_text(encoding="utf-8"))
    table = page.one(lambda e: e.get("id") == "session-table")
    return [e for e in table.iter() if e.tag == "tr" and e.parent and e.parent.tag == "tbody"]


def row_pages(index: Path) -> list[str]:
    hrefs = []
    for row in session_rows(index):
        title = next(e for e in row.iter() if e.tag == "td" and e.has_class("title"))
        hrefs += [a.get("href") or "" for a in title.iter() if a.tag == "a"]
    return hrefs


def manifest(site: Path) -> dict:
    return json.loads((site / MANIFEST_NAME).read_text(encoding="utf-8"))


def build(root: Path, site: Path, **kwargs) -> object:
    kwargs.setdefault("jobs", 1)
    return build_site(files_of(root), site, progress=False, **kwargs)


# --- structure ---------------------------------------------------------------------------------


def test_the_cost_columns_line_up_their_decimal_points(corpus, tmp_path):
    """Sessions costing "$0.750" and "$1.00" stood with their points a digit apart in the
    right-aligned Cost column; a shorter amount now ends in hidden digits (class p1/p2)."""
    root, _ = corpus
    site = tmp_path / "site"
    build(root, site)
    page = parse_html((site / "index.html").read_text(encoding="utf-8"))
    for table in ("session-table", None):
        found = page.one(
            (lambda e: e.get("id") == "session-table")
            if table
            else (lambda e: e.tag == "table" and e.has_class("projects"))
        )
        rows = [e for e in found.iter() if e.tag == "tr" and e.parent and e.parent.tag == "tbody"]
        cells = [[c for c in row.children if c.tag == "td"] for row in rows]
        costs = [r[3 if table is None else -1] for r in cells if len(r) >= 5]
        pads = {c.text: (c.get("class") or "") for c in costs if c.text.startswith("$")}
        decimals = {amount: len(amount.rsplit(".", 1)[1]) for amount in pads}
        most = max(decimals.values())
        if table:  # $0.25 steps: "$0.750" and "$1.00"; the projects' sums are all cents
            assert set(decimals.values()) == {2, 3}, pads
        for amount, cls in pads.items():
            assert cls == ("p1" if decimals[amount] < most else ""), (table, amount, cls)


def test_index_lists_every_session_once_and_every_link_resolves(corpus, tmp_path):
    root, made = corpus
    site = tmp_path / "site"
    report = build(root, site)
    assert (report.rendered, report.unchanged, report.removed) == (12, 0, 0)
    assert [p.name for p, _ in report.failed] == [made["broken"].name]
    assert report.index_path == site / "index.html"
    rows = session_rows(site / "index.html")
    assert len(rows) == 13
    pages = row_pages(site / "index.html")
    assert len(pages) == 12 == len(set(pages))
    assert all(p.startswith("sessions/") and p.endswith(".html") for p in pages)
    on_disk = sorted(str(p.relative_to(site)) for p in (site / "sessions").rglob("*.html"))
    assert sorted(pages) == on_disk
    project_pages = sorted((site / "projects").glob("*.html"))
    assert len(project_pages) == 2
    for listing in [site / "index.html", *project_pages, *(site / p for p in pages)]:
        for url in links(listing):
            parts = urlsplit(url)
            if parts.scheme or parts.netloc:  # links inside a transcript are the session's own
                assert listing.parent.parent.name == "sessions", url
                continue
            assert not url.startswith("/"), url
            assert (listing.parent / unquote(parts.path)).resolve().is_file(), (listing, url)
    # each project page lists its own sessions once (one also the file that failed in its
    # folder, whose index row links there), and the index links to both projects
    listed = sorted(len(session_rows(p)) for p in project_pages)
    assert listed == [6, 7]
    index_links = links(site / "index.html")
    assert sorted({u for u in index_links if u.startswith("projects/")}) == sorted(
        f"projects/{p.name}" for p in project_pages
    )


def test_session_pages_are_full_pages_with_the_csp(corpus, tmp_path):
    root, made = corpus
    site = tmp_path / "site"
    build(root, site)
    entry = manifest(site)["sessions"][source_id(made["s3"])]
    html = (site / entry["page"]).read_text(encoding="utf-8")
    page = parse_html(html)
    assert page.one(lambda e: e.get("id") == "transcript")
    assert page.one(lambda e: e.get("id") == "session-jsonl")  # the JSONL download
    csp = page.one(lambda e: e.get("http-equiv") == "Content-Security-Policy").get("content")
    assert "default-src 'none'" in (csp or "")
    assert "Session 3" in page.all(lambda e: e.tag == "h1")[0].text
    assert entry["page"].startswith("sessions/beta-")
    index_csp = parse_html((site / "index.html").read_text(encoding="utf-8")).one(
        lambda e: e.get("http-equiv") == "Content-Security-Policy"
    )
    assert "default-src 'none'" in (index_csp.get("content") or "")
    assert "connect-src" not in (index_csp.get("content") or "")


def test_index_rows_hold_the_numbers_in_a_sensible_order(corpus, tmp_path):
    root, made = corpus
    site = tmp_path / "site"
    build(root, site)
    rows = session_rows(site / "index.html")
    times = [float(r.children[0].get("data-sort") or 0) for r in rows if isinstance(r, Element)]
    assert times == sorted(times, reverse=True)  # last activity, newest first, without JS
    text = (site / "index.html").read_text(encoding="utf-8")
    assert re.search("Cost per (day|week)", text) and "<svg" in text and 'class="bar"' in text
    assert "Projects" in text and "~/alpha" in text and "~/beta" in text
    entry = manifest(site)["sessions"][source_id(made["s0"])]
    row = entry["row"]
    assert row["title"] == "Session 0" and row["cwd"] == ALPHA
    assert row["messages"] > 0 and row["branches"] == 2 and row["tokens"] > 0
    assert row["models"] and row["cost_by_day"] == {"2025-06-01": pytest.approx(row["cost"])}
    for key in ("file", "size", "mtime_ns", "sha256", "page", "tool_version", "options_key"):
        assert entry[key], key
    text = (site / MANIFEST_NAME).read_text(encoding="utf-8")
    assert str(root) not in text and "/home/alice/alpha" in text  # no local paths, only cwds


def test_the_models_column_names_the_models_that_answered() -> None:
    """pi-branched-1 switched to gpt-5 and gemini but only Claude answered; the index listed
    all three as its models, where the page's header tells them apart (review 2026-12-02)."""
    from exporter.loader import load_session
    from exporter.render.index import session_row

    fixtures = shared_dir() / "fixtures"
    row = session_row(load_session(fixtures / "pi-branched-1.jsonl"))
    assert row["models"] == ["anthropic/claude-sonnet-4-5"]
    # pi-large-session's gpt-5.1-codex turn was aborted before a word
    row = session_row(load_session(fixtures / "pi-large-session.jsonl"))
    assert row["models"] == ["anthropic/claude-sonnet-4-5"]


def test_a_broken_session_is_listed_with_its_error(corpus, tmp_path):
    root, made = corpus
    site = tmp_path / "site"
    report = build(root, site, jobs=2)
    assert report.rendered == 12 and len(report.failed) == 1
    failed = [r for r in session_rows(site / "index.html") if r.has_class("failed")]
    assert len(failed) == 1
    assert made["broken"].name in failed[0].text and "not a Pi session" in failed[0].text
    assert str(made["broken"].parent) not in failed[0].text  # no absolute paths published
    assert report.summary().endswith(f"1 failed in {report.seconds:.1f} s")
    # its project is its folder's (the sessions beside it): the cell was empty
    project = {r.has_class("failed"): _project_cell(r) for r in session_rows(site / "index.html")}
    beta = [_project_cell(r) for r in session_rows(site / "index.html") if "Session 1" in r.text]
    assert project[True] == beta[0] != "" and project[True] != _project_cell(
        next(r for r in session_rows(site / "index.html") if "Session 0" in r.text)
    )
    # alone in its folder, a broken file names no project (there is nothing to go by)
    lone = root / "--home-alice-gamma--" / "2025-07-02T00-00-00-000Z_lone.jsonl"
    lone.parent.mkdir()
    lone.write_bytes(b"not json\n")
    build(root, site)
    cells = [_project_cell(r) for r in session_rows(site / "index.html") if "lone" in r.text]
    assert cells == [""]


def _project_cell(row: Element) -> str:
    return next(e for e in row.iter() if e.tag == "td" and e.has_class("project")).text


# --- incremental -------------------------------------------------------------------------------


def page_mtimes(site: Path) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in (site / "sessions").rglob("*.html")}


def test_rebuild_with_nothing_changed_renders_nothing(corpus, tmp_path):
    root, _ = corpus
    site = tmp_path / "site"
    build(root, site)
    before = page_mtimes(site)
    index_before = (site / "index.html").stat().st_mtime_ns
    report = build(root, site)
    assert (report.rendered, report.unchanged, report.removed) == (0, 12, 0)
    assert len(report.failed) == 1  # broken files are retried, and still reported
    assert page_mtimes(site) == before
    assert (site / "index.html").stat().st_mtime_ns == index_before  # not even rewritten


def test_touch_without_change_is_caught_by_the_hash(corpus, tmp_path):
    root, made = corpus
    site = tmp_path / "site"
    build(root, site)
    os.utime(made["s1"], ns=(1, 10**18))
    assert build(root, site).rendered == 0
    assert manifest(site)["sessions"][source_id(made["s1"])]["mtime_ns"] == 10**18


def test_a_changed_session_is_rendered_again(corpus, tmp_path):
    root, made = corpus
    site = tmp_path / "site"
    build(root, site)
    with open(made["s2"], "a", encoding="utf-8") as handle:
        info = {"type": "session_info", "id": "n1", "parentId": "x1", "name": "Renamed session"}
        handle.write(json.dumps(info | {"timestamp": "2025-06-20T09:00:00.000Z"}) + "\n")
    report = build(root, site)
    assert (report.rendered, report.unchanged) == (1, 11)
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "Renamed session" in index and ">Session 2<" not in index
    page = site / manifest(site)["sessions"][source_id(made["s2"])]["page"]
    assert "Renamed session" in page.read_text(encoding="utf-8")


def test_a_removed_session_leaves_the_index_and_its_page_is_deleted(corpus, tmp_path):
    root, made = corpus
    site = tmp_path / "site"
    build(root, site)
    page = site / manifest(site)["sessions"][source_id(made["s4"])]["page"]
    assert page.is_file()
    made["s4"].unlink()
    report = build(root, site)
    assert (report.rendered, report.unchanged, report.removed) == (0, 11, 1)
    assert not page.exists()
    assert source_id(made["s4"]) not in manifest(site)["sessions"]
    assert len(session_rows(site / "index.html")) == 12
    assert "Session 4" not in (site / "index.html").read_text(encoding="utf-8")


def test_option_changes_and_force_rebuild_everything(corpus, tmp_path):
    root, _ = corpus
    site = tmp_path / "site"
    build(root, site, options_key="policy-a")
    assert build(root, site, options_key="policy-b").rendered == 12
    assert build(root, site, options_key="policy-b").rendered == 0
    dark = RenderOptions(theme="dark")
    assert build(root, site, options_key="policy-b", render_options=dark).rendered == 12
    report = build(root, site, options_key="policy-b", render_options=dark, force=True)
    assert (report.rendered, report.unchanged) == (12, 0)
    assert 'data-theme="dark"' in (site / "index.html").read_text(encoding="utf-8")


def test_a_deleted_page_is_rendered_again(corpus, tmp_path):
    root, made = corpus
    site = tmp_path / "site"
    build(root, site)
    page = site / manifest(site)["sessions"][source_id(made["b1"])]["page"]
    page.unlink()
    assert build(root, site).rendered == 1 and page.is_file()


def test_a_session_moving_to_another_project_moves_its_page(corpus, tmp_path):
    root, made = corpus
    site = tmp_path / "site"
    build(root, site)
    old = site / manifest(site)["sessions"][source_id(made["s0"])]["page"]
    lines = made["s0"].read_text(encoding="utf-8").split("\n", 1)
    header = json.loads(lines[0]) | {"cwd": "/home/alice/gamma"}
    made["s0"].write_text(json.dumps(header) + "\n" + lines[1], encoding="utf-8")
    assert build(root, site).rendered == 1
    new = site / manifest(site)["sessions"][source_id(made["s0"])]["page"]
    assert not old.exists() and new.is_file() and "/gamma-" in str(new)
    assert len(list((site / "projects").glob("*.html"))) == 3


def test_one_project_has_no_project_pages(corpus, tmp_path):
    root, _ = corpus
    site = tmp_path / "site"
    build(root, site)
    assert len(list((site / "projects").glob("*.html"))) == 2
    alpha = session_files(root, ALPHA)
    build_site(alpha, site, jobs=1, progress=False)
    assert list((site / "projects").glob("*.html")) == []
    assert "Projects</h2>" not in (site / "index.html").read_text(encoding="utf-8")


# --- parallel, transforms, failures ------------------------------------------------------------


def rename(session: Session, prefix: str) -> Session:
    session.name = f"{prefix} {session.title}"
    return session


def crash_on_session_5(session: Session) -> Session:
    if session.id.startswith("00000005"):
        os._exit(3)  # a worker dying (segfault, OOM kill) must not stop the batch
    return session


def test_jobs_2_builds_the_same_site_as_jobs_1(corpus, tmp_path):
    root, _ = corpus
    build(root, tmp_path / "one", jobs=1)
    report = build(root, tmp_path / "two", jobs=2)
    assert report.rendered == 12
    one = (tmp_path / "one" / "index.html").read_text(encoding="utf-8")
    assert (tmp_path / "two" / "index.html").read_text(encoding="utf-8") == one
    before = (tmp_path / "two" / "index.html").stat().st_mtime_ns
    assert build(root, tmp_path / "two", jobs=2).unchanged == 12
    assert (tmp_path / "two" / "index.html").stat().st_mtime_ns == before  # same bytes


@pytest.mark.parametrize("jobs", [1, 2])
def test_transform_runs_before_rendering(corpus, tmp_path, jobs):
    root, _ = corpus
    site = tmp_path / "site"
    build(root, site, jobs=jobs, transform=functools.partial(rename, prefix="[redacted]"))
    assert "[redacted] Session 7" in (site / "index.html").read_text(encoding="utf-8")


def test_an_unpicklable_transform_is_refused_up_front(corpus, tmp_path):
    root, _ = corpus
    with pytest.raises(TypeError, match="picklable"):
        build(root, tmp_path / "site", jobs=2, transform=lambda s: s)


def test_a_dying_worker_fails_only_its_session(corpus, tmp_path):
    root, made = corpus
    site = tmp_path / "site"
    report = build(root, site, jobs=2, transform=crash_on_session_5)
    failed = {p.name: error for p, error in report.failed}
    assert set(failed) == {made["s5"].name, made["broken"].name}
    assert "worker process died" in failed[made["s5"].name]
    assert report.rendered == 11
    assert len(row_pages(site / "index.html")) == 11


def test_a_folder_with_foreign_files_is_refused(corpus, tmp_path):
    root, _ = corpus
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("my own page", encoding="utf-8")
    with pytest.raises(SiteError, match="not a pi-session site"):
        build(root, site)
    assert (site / "index.html").read_text(encoding="utf-8") == "my own page"


def test_manifest_paths_are_not_trusted_for_deletion(corpus, tmp_path):
    root, _ = corpus
    site = tmp_path / "site"
    build(root, site)
    victim = tmp_path / "victim.html"
    victim.write_text("keep", encoding="utf-8")
    data = manifest(site)
    data["sessions"]["/nowhere/gone.jsonl"] = {"page": "../victim.html", "stem": "gone"}
    (site / MANIFEST_NAME).write_text(json.dumps(data), encoding="utf-8")
    build(root, site)  # an entry with a page this tool never writes is dropped on load
    assert victim.read_text(encoding="utf-8") == "keep"
    assert "/nowhere/gone.jsonl" not in manifest(site)["sessions"]


def test_a_tampered_manifest_never_writes_outside_the_site(corpus, tmp_path):
    """A stem read from the manifest names the page file: it must never be a path."""
    root, _ = corpus
    site = tmp_path / "site"
    build(root, site)
    data = manifest(site)
    for entry in data["sessions"].values():
        entry.update(stem="../../../x/../../ESCAPED", size=0)
    (site / MANIFEST_NAME).write_text(json.dumps(data), encoding="utf-8")
    report = build_site(files_of(root), site, jobs=1, force=True)
    assert len(report.failed) == 1 and report.rendered == 12  # the corpus's one broken file
    assert not list(tmp_path.glob("ESCAPED*")) and not (tmp_path / "x").exists()
    assert not any("ESCAPED" in page.name for page in site.rglob("*.html"))


TAMPERS = {  # name -> (change to a good manifest, whether sessions must be rendered again)
    "entry-not-object": (lambda d: d["sessions"].update({k: "x" for k in list(d["sessions"])[:2]}),
                         True),
    "pages-list": (lambda d: d.update(project_pages=["a"]), False),
    "cost-text": (lambda d: [e["row"].update(cost="abc") for e in d["sessions"].values()], True),
    "messages-null": (lambda d: [e["row"].update(messages=None) for e in d["sessions"].values()],
                      True),
    "bad-day": (lambda d: [e["row"].update(cost_by_day={"notaday": 1})
                           for e in d["sessions"].values()], True),
    "models-int": (lambda d: [e["row"].update(models=5) for e in d["sessions"].values()], True),
    "row-list": (lambda d: [e.update(row=[1]) for e in d["sessions"].values()], True),
    "huge-int": (lambda d: [e["row"].update(tokens=10**400) for e in d["sessions"].values()],
                 False),
}  # fmt: skip


@pytest.mark.parametrize("name", TAMPERS)
def test_a_manifest_with_wrong_types_is_rebuilt_not_a_crash(corpus, tmp_path, name):
    root, _ = corpus
    site = tmp_path / "site"
    build(root, site)
    data = manifest(site)
    tamper, rerender = TAMPERS[name]
    tamper(data)
    (site / MANIFEST_NAME).write_text(json.dumps(data), encoding="utf-8")
    report = build_site(files_of(root), site, jobs=1)
    assert len(report.failed) == 1 and report.sessions == 13  # the corpus's one broken file
    assert (report.rendered >= 1) == rerender  # dropped entries are rendered again
    assert (site / "index.html").is_file()
    assert build_site(files_of(root), site, jobs=1).unchanged == 12


def test_progress_bar_only_when_asked_or_on_a_terminal(corpus, tmp_path, capsys):
    root, _ = corpus
    build_site(files_of(root), tmp_path / "a", jobs=1)  # stderr is not a TTY here
    assert capsys.readouterr().err == ""
    build_site(files_of(root), tmp_path / "b", jobs=1, progress=True)
    assert "rendering [" in (err := capsys.readouterr().err) and "13/13" in err  # labelled


def test_since_means_the_newest_entry_not_the_files_time(corpus, tmp_path, capsys):
    """`export --all --since` went by the files' modification time and `publish --since` by
    the newest entry: a folder of sessions copied from another machine (all files "changed"
    today) was rendered whole by one and skipped by the other. Both go by the entries."""
    root, made = corpus  # every file written just now; s0..s9's entries are 2025-06-01..10
    june_5 = datetime(2025, 6, 5, tzinfo=timezone.utc)
    recent = set(files_active_since(files_of(root), june_5))
    assert {made[f"s{i}"] for i in range(4)}.isdisjoint(recent)
    assert {made[f"s{i}"] for i in range(4, 10)} <= recent
    assert {made["b1"], made["b2"]} <= recent  # their entries are from 2026
    assert made["broken"] in recent  # no entry to go by: its file's time, and export warns
    made["s9"].unlink()
    assert made["s9"] not in files_active_since([made["s9"], made["s8"]], june_5)

    from click.testing import CliRunner

    from exporter.cli import cli

    out = tmp_path / "site"
    args = ["export", "--all", "--sessions-dir", str(root), "-o", str(out), "-j", "1"]
    result = CliRunner().invoke(cli, [*args, "--since", "2025-06-05T00:00:00Z"])
    assert result.exit_code == 0, result.output
    pages = {p.name.split("_", 1)[-1][:9] for p in (out / "sessions").rglob("*.html")}
    assert pages == {f"0000000{i}-" for i in range(4, 9)} | {"01a229f4-"}, pages


def test_skip_keeps_sessions_out_of_the_site_and_takes_their_pages_away(corpus, tmp_path):
    """`export --all --skip` (an id, a path, or a file listing them) keeps a session out of
    the site for good, as `publish --skip` keeps it out of a dataset: a page already built
    leaves. A name that finds no session, or a skip of everything, leaves the site as it is;
    --skip without --all is refused (it would be silently ignored)."""
    from click.testing import CliRunner

    from exporter.cli import cli

    root, made = corpus
    out = tmp_path / "site"
    args = ["export", "--all", "--sessions-dir", str(root), "-o", str(out), "-j", "1"]

    def pages() -> set[str]:
        return {p.name.split("_", 1)[-1][:8] for p in (out / "sessions").rglob("*.html")}

    def run(*extra: str):
        return CliRunner().invoke(cli, [*args, *extra])

    assert run().exit_code == 0
    before = pages()
    assert {"00000003", "00000004", "00000005"} <= before
    listed = tmp_path / "keep-out.txt"
    listed.write_text(f"\ufeff# rejected\r\n{made['s4']}  # a client's\r\n00000005\r\n", "utf-8")
    skipped = run("--skip", "00000003-aaaa", "--skip", str(listed))
    assert skipped.exit_code == 0, skipped.output
    assert "--skip leaves out 3 of the 13 sessions selected" in skipped.stderr
    assert pages() == before - {"00000003", "00000004", "00000005"}
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "Session 3<" not in index and "Session 6<" in index

    site_files = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    typo = run("--skip", "no-such-session")
    assert typo.exit_code == 1
    assert "--skip no-such-session:" in typo.stderr
    assert "the site was left as it is" in typo.stderr
    every = [arg for path in made.values() for arg in ("--skip", str(path))]
    everything = run(*every)
    assert everything.exit_code == 2, everything.stderr
    assert "--skip leaves out every selected session; the site was left as it is" in (
        everything.stderr
    )
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == site_files

    one_page = CliRunner().invoke(cli, ["export", str(made["s1"]), "--skip", str(made["s2"])])
    assert one_page.exit_code == 1
    assert "--skip only go with --all" in one_page.stderr


def test_since_and_options_key_helpers(corpus):
    root, made = corpus
    now = datetime(2025, 7, 10, 12, tzinfo=timezone.utc)
    assert parse_since("7d", now) == now - timedelta(days=7)
    assert parse_since("2025-06-03T00:00:00Z") == datetime(2025, 6, 3, tzinfo=timezone.utc)
    assert parse_since("2025-06-03").tzinfo is not None
    with pytest.raises(ValueError, match="since"):
        parse_since("last tuesday")
    os.utime(made["s0"], (1, datetime(2020, 1, 1, tzinfo=timezone.utc).timestamp()))
    recent = files_active_since(files_of(root), datetime(2021, 1, 1, tzinfo=timezone.utc))
    assert made["s0"] in recent and len(recent) == 13  # its entries are newer than its file
    assert make_options_key(RenderOptions()) == make_options_key(RenderOptions(source_name="x"))
    assert make_options_key(RenderOptions()) != make_options_key(RenderOptions(), "policy")


# --- sessions written by Pi itself -------------------------------------------------------------


@pytest.mark.pi
def test_sessions_generated_by_pi(tmp_path):
    if shutil.which("node") is None:
        if os.environ.get("CI"):
            pytest.fail("node is required in CI")
        pytest.skip("node is not installed")
    folder = tmp_path / "sessions" / encode_cwd("/home/dev/projects/webapp")
    env = dict(os.environ, SHARED=str(shared_dir()))
    done = subprocess.run(
        ["bash", str(REPO / "bench" / "gen_corpus.sh"), str(folder), "3", "7"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = build_site(session_files(tmp_path / "sessions"), tmp_path / "site", jobs=2)
    assert (report.rendered, len(report.failed)) == (3, 0)
    assert len(row_pages(tmp_path / "site" / "index.html")) == 3


def test_pages_left_by_an_interrupted_build_are_swept(corpus, tmp_path):
    root, _ = corpus
    site = tmp_path / "site"
    build(root, site)
    orphan = site / "sessions" / "alpha-00000000" / "gone.html"
    orphan.parent.mkdir()
    orphan.write_text("<p>rendered, then the build was interrupted</p>", encoding="utf-8")
    temp = site / "sessions" / ".page.html.abc123.tmp"
    temp.write_text("half", encoding="utf-8")
    mine = site / "sessions" / "notes.txt"  # not a name this tool writes: kept
    mine.write_text("mine", encoding="utf-8")
    assert build(root, site).rendered == 0
    assert not orphan.exists() and not orphan.parent.exists() and not temp.exists()
    assert mine.read_text(encoding="utf-8") == "mine"


def test_day_chart_total_is_what_its_bars_show() -> None:
    """Cost before the 366-day window is named in the caption, not added to the chart's
    "in total" (which then did not match the bars)."""
    from exporter.render.index import day_chart

    rows = [{"cost_by_day": {"2024-01-01": 5.0, "2025-06-01": 1.0}},
            {"cost_by_day": {"2025-06-02": 2.0}}]  # fmt: skip
    chart = day_chart(rows)
    assert chart is not None
    assert chart.total == pytest.approx(3.0) and chart.earlier == pytest.approx(5.0)


@pytest.mark.parametrize("cost", [0.0004, 0.05, 40.0, 4e5])
def test_day_chart_leaves_room_for_its_longest_cost_label(cost: float) -> None:
    """On a phone the chart fits the screen with 19-unit labels: "$0.00025" ran off its
    left edge (review 2026-12-02). Each label ends 6 units left of the plot and needs ~0.6
    of the font size a character."""
    from exporter.render.index import day_chart

    chart = day_chart([{"cost_by_day": {"2025-06-01": cost, "2025-06-02": cost / 3}}])
    assert chart is not None
    room = [chart.plot_left - 6 - 0.6 * 19 * len(label) for _, label in chart.y_ticks]
    assert min(room) >= 0, (chart.y_ticks, chart.plot_left)
    assert min(room) < 16 or chart.plot_left == 56  # no more than it needs (56 at least)


def test_day_chart_uses_weekly_bars_over_long_spans() -> None:
    """Over a year, one bar per day was under 2 px wide; long spans get one bar per week
    (Monday to Sunday), each summing its days and counting each session once."""
    from exporter.render.index import day_chart

    rows = [{"cost_by_day": {"2025-01-01": 1.0, "2025-01-03": 2.0}},  # Wed, Fri: one week
            {"cost_by_day": {"2025-01-05": 4.0, "2025-01-06": 8.0}},  # Sun; Mon = next week
            {"cost_by_day": {"2025-12-31": 0.5}}]  # fmt: skip
    chart = day_chart(rows)
    assert chart is not None and chart.bucket_days == 7 and chart.days == 365
    tips = [bar[4] for bar in chart.bars]
    assert tips == [
        "week of 2024-12-30: $7.00 (2 sessions)",
        "week of 2025-01-06: $8.00 (1 session)",
        "week of 2025-12-29: $0.500 (1 session)",
    ]
    assert min(bar[2] for bar in chart.bars) > 8  # px wide, in a 648 px plot
    assert chart.x_ticks[0][1] == "2025-01-01"  # the axis starts at the first day, not Monday
    assert chart.x_ticks[-1][1] == "2025-12-31"  # ... and ends at the last one
    days = {"2023-01-04": 9.0, "2024-06-03": 1.0, "2024-06-05": 3.0, "2025-06-04": 2.0}
    late = day_chart([{"cost_by_day": days}])  # the window starts on Tuesday 2024-06-04
    assert late is not None and late.first == "2024-06-04" and late.earlier == pytest.approx(10)
    assert late.bars[0][4] == "week of 2024-06-03 (from 2024-06-04): $3.00 (1 session)"
    short = day_chart([{"cost_by_day": {"2025-01-01": 1.0, "2025-03-01": 1.0}}])
    assert short is not None and short.bucket_days == 1 and len(short.bars) == 2


def test_failed_rows_show_no_numbers_and_sort_last() -> None:
    """A file that could not be read has no messages or cost to show (— instead of 0), and
    its time is the file's, so it goes after the sessions instead of first."""
    from exporter.render.index import render_listing

    def row(sid: str, when: str, error: str | None = None) -> dict:
        return {"id": sid, "title": f"Session {sid}", "cwd": "/p", "last_activity": when,
                "messages": 3, "branches": 1, "models": ["m"], "tokens": 10, "cost": 0.5,
                "page": f"sessions/{sid}.html", "file": f"{sid}.jsonl", "error": error}  # fmt: skip

    html = render_listing(
        [row("ok1", "2025-01-01T00:00:00Z"), row("bad", "2026-01-01T00:00:00Z", "not JSON")]
    )
    body = html[html.index('id="session-table"') :]
    assert body.index("Session ok1") < body.index("Session bad")
    failed = body[body.index('class="failed"') :]
    failed = failed[: failed.index("</tr>")]
    assert "$0.500" not in failed and failed.count("—") == 4


def test_a_wrong_clock_does_not_empty_the_cost_chart() -> None:
    """One turn dated 2099 made the chart show that day alone and call a year of real cost
    "not shown"; the window now ends today and says what it leaves out."""
    from datetime import date

    from exporter.render.index import day_chart

    rows = [{"cost_by_day": {"2026-11-01": 1.5, "2026-11-20": 2.0}},
            {"cost_by_day": {"2099-01-01": 0.01}}]  # fmt: skip
    chart = day_chart(rows, today=date(2026, 11, 30))
    assert chart is not None and chart.last == "2026-11-20" and len(chart.bars) == 2
    assert chart.total == 3.5 and chart.earlier == 0 and chart.later == 0.01


def test_projects_that_would_read_the_same_keep_their_paths() -> None:
    from exporter.render.index import project_names

    names = project_names({"/home/alice/proj", "/Users/bob/proj", "/home/alice/other"})
    assert names == {"/home/alice/proj": "/home/alice/proj", "/Users/bob/proj": "/Users/bob/proj",
                     "/home/alice/other": "~/other"}  # fmt: skip


def test_small_site_fixes(corpus, tmp_path):
    """A symlinked sessions folder is the same sessions (it re-rendered every page and
    reported all "removed"); a temp index left by a crash is swept; times carry at most
    milliseconds (HTML's limit); an overflowed cost is a short number."""
    from exporter.formatting import fmt_cost

    root, _ = corpus
    site = tmp_path / "site"
    first = build(root, site)
    linked = tmp_path / "linked"
    linked.symlink_to(root, target_is_directory=True)
    (site / ".index.html.abc123.tmp").write_text("left by a crash", encoding="utf-8")
    again = build(linked, site)
    assert again.rendered == 0 and again.removed == 0 and again.unchanged == first.rendered
    assert not (site / ".index.html.abc123.tmp").exists()
    text = (site / "index.html").read_text(encoding="utf-8")
    assert not re.search(r'datetime="[^"]*\.\d{4,}', text)
    assert fmt_cost(1e308) == "$1e+308" and fmt_cost(float("inf")) == "overflow"


def test_per_session_warnings_show_escape_codes_as_signs(tmp_path):
    from click.testing import CliRunner

    from exporter.cli import cli

    folder = tmp_path / "sessions" / "--p\x1b]0;PWNED\x07--"
    folder.mkdir(parents=True)
    (folder / "2025-01-01T00-00-00-000Z_x.jsonl").write_bytes(b"\x00\x01 not a session\n")
    result = CliRunner().invoke(
        cli, ["export", "--all", "-o", str(tmp_path / "site"), "--sessions-dir",
              str(tmp_path / "sessions")],
    )  # fmt: skip
    assert "warning" in result.stderr and "\x1b" not in result.stderr
    assert "\u241b]0;PWNED\u2407" in result.stderr


def test_absurd_costs_keep_the_chart_finite() -> None:
    """Costs of 1.7e308 summed to inf: the chart said "$nan in total" and drew bars with
    height="inf"."""
    from datetime import date

    from exporter.render.index import day_chart

    rows = [{"cost_by_day": {"2026-11-29": 1.7e308, "2024-01-02": 1.7e308}},
            {"cost_by_day": {"2026-11-29": 1.7e308, "2026-11-28": float("nan")}}]  # fmt: skip
    chart = day_chart(rows, today=date(2026, 11, 30))
    assert chart is not None
    numbers = [chart.total, chart.earlier, *(v for bar in chart.bars for v in bar[:4])]
    assert all(math.isfinite(n) for n in numbers), numbers


def test_a_project_page_names_its_project_as_the_index_does(tmp_path):
    from tests.conftest import Build, dump_lines

    root = tmp_path / "sessions"
    for n, cwd in enumerate(["/home/alice/proj", "/Users/bob/proj"]):
        folder = root / f"--p{n}--"
        folder.mkdir(parents=True)
        lines = [Build.header(session_id=f"s{n}", cwd=cwd), Build.user("u", None, "hi")]
        (folder / f"2025-01-01T00-00-00-000Z_s{n}.jsonl").write_bytes(dump_lines(lines))
    site = tmp_path / "site"
    build(root, site)
    headings = sorted(
        re.search(r"<h1>(.*?)</h1>", p.read_text(encoding="utf-8")).group(1)
        for p in (site / "projects").glob("*.html")
    )
    assert headings == ["/Users/bob/proj", "/home/alice/proj"]


def test_a_redacted_site_holds_no_hash_that_could_confirm_a_guess(corpus, tmp_path, monkeypatch):
    """`export --all --redact` kept each unredacted source's SHA-256 and the policy key in
    the folder's .pi-session-site.json, which is published with the folder: with a redacted
    page, a reader could check a guessed password offline. It keeps HMACs under the local
    publish key instead, and a rebuild still renders nothing."""
    from click.testing import CliRunner

    from exporter.cli import cli
    from exporter.policy import RedactionPolicy

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("PI_SESSION_PUBLISH_KEY", raising=False)
    root, _ = corpus
    site = tmp_path / "site"
    args = ["export", "--all", "--redact", "-o", str(site), "--sessions-dir", str(root), "-j", "1"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    assert "created a publish key" in first.stderr  # says why a new key re-renders everything
    text = (site / ".pi-session-site.json").read_text(encoding="utf-8")
    for path in files_of(root):
        assert hashlib.sha256(path.read_bytes()).hexdigest() not in text
    assert RedactionPolicy(redact=True).key() not in text
    for path in files_of(root):
        os.utime(path)  # touched: the manifest's mark is checked, not only size and time
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and "0 rendered" in again.output + again.stderr, again.output
    monkeypatch.setenv("PI_SESSION_PUBLISH_KEY", "short")
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 1 and "PI_SESSION_PUBLISH_KEY is too short" in refused.stderr


# --- the site folder's edges: symbolic links out of it, pages that cannot be written ----------


def _one_session(tmp_path: Path) -> tuple[Path, Path]:
    """Pi's layout with one real session in it; returns (sessions root, the file)."""
    source = shared_dir() / "fixtures" / "pi-branched-1.jsonl"
    folder = tmp_path / "sessions" / "--p--"
    folder.mkdir(parents=True)
    return tmp_path / "sessions", Path(shutil.copy(source, folder))


def _export_all(root: Path, site: Path) -> object:
    from click.testing import CliRunner

    from exporter.cli import cli

    args = ["export", "--all", "--sessions-dir", str(root), "-o", str(site), "-j", "1"]
    return CliRunner().invoke(cli, args)


@pytest.mark.parametrize("link", ["sessions/evil", "projects", "sessions", "index.html"])
def test_a_symbolic_link_out_of_the_site_folder_is_refused_before_any_work(
    tmp_path: Path, link: str
) -> None:
    """A site from a clone or an archive can hold a link to another folder: a page the
    manifest names under sessions/<x> was deleted there, a project folder that was one got
    its pages written there, and projects/, sessions/ or index.html the same (code review
    and delta review 2026-12-01). Nothing is touched: the build is refused with the name."""
    root, _ = _one_session(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "notes.html").write_text("precious", encoding="utf-8")
    (victim / ".x.html.tmp").write_text("precious", encoding="utf-8")
    site = tmp_path / "site"
    assert _export_all(root, site).exit_code == 0  # a site of ours, then a link put in it
    target = site / link
    if target.is_dir():
        shutil.rmtree(target)
    elif target.exists():
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(victim / "notes.html" if link == "index.html" else victim)
    stale = {"file": "gone.jsonl", "stem": "notes", "page": "sessions/evil/notes.html"}
    manifest = json.loads((site / MANIFEST_NAME).read_text(encoding="utf-8"))
    manifest["sessions"]["0" * 28 + "dead"] = stale
    (site / MANIFEST_NAME).write_text(json.dumps(manifest), encoding="utf-8")
    result = _export_all(root, site)
    assert result.exit_code == 1, result.output
    assert f"{link} in {site} is a symbolic link out of the site folder" in result.stderr
    assert sorted(p.name for p in victim.iterdir()) == [".x.html.tmp", "notes.html"]
    assert (victim / "notes.html").read_text(encoding="utf-8") == "precious"


def test_a_link_that_stays_inside_the_site_folder_is_no_reason_to_refuse(tmp_path: Path) -> None:
    root, _ = _one_session(tmp_path)
    site = tmp_path / "site"
    assert _export_all(root, site).exit_code == 0
    (site / "elsewhere").mkdir()
    (site / "sessions" / "alias").symlink_to(site / "elsewhere")
    again = _export_all(root, site)
    assert again.exit_code == 0 and "symbolic link" not in again.stderr, again.output


def test_a_page_that_cannot_be_written_is_named_and_all_failing_exits_2(tmp_path: Path) -> None:
    """A page the site folder could not take was reported as the *session* being unreadable
    ("<session file>: Permission denied"), and a run where every session failed exited 0
    (code review 2026-12-01)."""
    root, source = _one_session(tmp_path)
    site = tmp_path / "site"
    assert _export_all(root, site).exit_code == 0
    (page,) = (site / "sessions").rglob("*.html")
    shutil.rmtree(page.parent)
    page.parent.write_text("a file where the project folder goes", encoding="utf-8")
    source.write_text(source.read_text("utf-8") + "\n", "utf-8")  # changed: rendered again
    result = _export_all(root, site)
    assert result.exit_code == 2, result.output
    rel = page.relative_to(site).as_posix()
    assert f"pi-session: warning: {source}: cannot write {rel}: " in result.stderr
    assert "Traceback" not in result.output


def test_a_site_folder_that_is_a_link_loop_or_dangles_is_said_or_made(tmp_path: Path) -> None:
    """Both read "File exists" (mkdir's answer for any link); a file written through a
    dangling link makes its target, and a loop is "Too many levels of symbolic links", as
    for `export -o` (code review 2026-12-01)."""
    root, _ = _one_session(tmp_path)
    (tmp_path / "sl1").symlink_to(tmp_path / "sl2")
    (tmp_path / "sl2").symlink_to(tmp_path / "sl1")
    loop = _export_all(root, tmp_path / "sl1")
    assert loop.exit_code == 2 and "sl1: Too many levels of symbolic links" in loop.stderr
    (tmp_path / "dangling").symlink_to(tmp_path / "made")
    made = _export_all(root, tmp_path / "dangling")
    assert made.exit_code == 0, made.output
    assert (tmp_path / "made" / "index.html").is_file() and (tmp_path / "dangling").is_symlink()


def test_a_page_file_that_links_out_of_the_site_is_not_written_through(tmp_path: Path) -> None:
    """sessions/<project>/<page>.html as a link to a file elsewhere: the build replaced that
    file with the page, exit 0 (re-review 2026-12-01)."""
    root, source = _one_session(tmp_path)
    site = tmp_path / "site"
    assert _export_all(root, site).exit_code == 0
    (page,) = (site / "sessions").rglob("*.html")
    outside = tmp_path / "precious.txt"
    outside.write_text("precious", encoding="utf-8")
    page.unlink()
    page.symlink_to(outside)
    source.write_text(source.read_text("utf-8") + "\n", "utf-8")  # changed: rendered again
    result = _export_all(root, site)
    assert result.exit_code == 2, result.output
    rel = page.relative_to(site).as_posix()
    assert f"{rel} not written: it is a symbolic link out of the site folder" in result.stderr
    assert outside.read_text(encoding="utf-8") == "precious"


def test_the_index_gives_each_session_the_last_activity_list_shows() -> None:
    """The index's "Last activity" was the newest entry of any kind (a thinking-level change
    at 01:26) while `list` and --since go by the last user or assistant message (00:42)."""
    from exporter.discover import scan_summary
    from exporter.loader import load_session
    from exporter.render.index import session_row

    path = shared_dir() / "fixtures" / "pi-v1-before-compaction.jsonl"
    modified = scan_summary(path).modified
    assert modified is not None
    row = session_row(load_session(path))
    assert datetime.fromisoformat(row["last_activity"]) == modified
    assert row["last_activity"].startswith("2025-12-09T00:42")


def test_a_redacted_site_names_no_secret_from_a_file_name(tmp_path, monkeypatch):
    """A session copied to ``debug-ghp_….jsonl``: a redacted site's page, its index links,
    the footer and the manifest name it without the token. A secret given later (--secret)
    renames a page that was named with it, and the old page goes."""
    from click.testing import CliRunner

    from exporter.cli import cli

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    token, word = "ghp_DNxril3RavGD5MfvJ7NScUykT8C8UBkkpdhi", "hunter2-acme-vault"
    root, source = _one_session(tmp_path)
    source.rename(source.with_name(f"{word}-debug-{token}.jsonl"))
    site = tmp_path / "site"
    args = ["export", "--all", "--redact", "-o", str(site), "--sessions-dir", str(root), "-j", "1"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output

    def site_files() -> dict[str, str]:
        found = {}
        for path in site.rglob("*"):
            if path.is_file() and path.name != ".pi-session-site.lock":
                found[str(path.relative_to(site))] = path.read_text(encoding="utf-8")
        return found

    pages = [name for name in site_files() if name.startswith("sessions/")]
    assert [Path(p).name for p in pages] == [f"{word}-debug-REDACTED-github-token.html"]
    for name, text in site_files().items():
        assert token not in name and token not in text, name
    assert word in "".join(site_files())  # not a secret yet
    again = CliRunner().invoke(cli, [*args, "--secret", word])
    assert again.exit_code == 0, again.output
    pages = [name for name in site_files() if name.startswith("sessions/")]
    assert [Path(p).name for p in pages] == [
        "REDACTED-literal-secret-debug-REDACTED-github-token.html"
    ]
    for name, text in site_files().items():
        assert word not in name and word not in text and token not in text, name


PROMPT_INDEX = re.compile(r'<script [^>]*id="prompt-index"[^>]*>(.*?)</script>', re.S)


def prompt_index_of(html: str) -> list:
    """The listing's prompt index (JSON, gzip, base64, as its script unpacks it)."""
    import base64
    import gzip

    found = PROMPT_INDEX.search(html)
    assert found is not None
    return json.loads(gzip.decompress(base64.b64decode(found.group(1))))


def test_the_index_carries_every_prompt_for_its_search(corpus, tmp_path: Path) -> None:
    """Each row's prompts (every branch, on one line, cut to 240 characters) with the DOM id
    of their entry on the session's page, in the table's row order (``data-i``)."""
    from exporter.loader import load_session

    root, made = corpus
    site = tmp_path / "site"
    build_site(files_of(root), site, jobs=1, progress=False)
    html = (site / "index.html").read_text(encoding="utf-8")
    index = prompt_index_of(html)
    rows = re.findall(r'<tr data-i="(\d+)"', html)
    assert [int(i) for i in rows] == list(range(len(index))) and len(index) == 13
    session = load_session(made["b1"])
    want = [" ".join(e.text.split())[:240] for e in session.iter_messages() if e.role == "user"]
    want = [text for text in want if text]
    (href, prompts) = next(item for item in index if item[0] and made["b1"].stem in item[0])
    assert [text for _, text in prompts] == want and len(want) > 3
    assert len(session.leaf_ids) > 1  # so prompts of other branches are in there too
    page = (site / href).read_text(encoding="utf-8")
    for anchor, _ in prompts:
        assert f'id="{anchor}"' in page
    failed = [item for item in index if item[0] is None]
    assert failed == [[None, []]]  # the broken file: a row, no page, no prompts


def test_the_prompt_index_is_inert_text_and_redacted_with_the_site(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from exporter.cli import cli

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    token = "ghp_DNxril3RavGD5MfvJ7NScUykT8C8UBkkpdhi"
    prompt = f"</script><script>alert(1)</script> deploy with {token} " + "x" * 400
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2025-06-01T10:00:00Z"}
    header["cwd"] = "/p"
    entry = {"type": "message", "id": "u1", "parentId": None, "timestamp": "2025-06-01T10:00:01Z"}
    entry["message"] = {"role": "user", "content": prompt, "timestamp": 1748772001000}
    folder = tmp_path / "sessions" / "--p--"
    folder.mkdir(parents=True)
    (folder / "2025-06-01T10-00-00-000Z_s1.jsonl").write_text(
        json.dumps(header) + "\n" + json.dumps(entry) + "\n", encoding="utf-8"
    )
    site = tmp_path / "site"
    args = [
        "export",
        "--all",
        "--redact",
        "-o",
        str(site),
        "--sessions-dir",
        str(tmp_path / "sessions"),
    ]
    result = CliRunner().invoke(cli, [*args, "-j", "1"])
    assert result.exit_code == 0, result.output
    html = (site / "index.html").read_text(encoding="utf-8")
    assert token not in html
    assert "<script>alert(1)" not in html and "</script><script>" not in html
    ((_, [(anchor, text)]),) = prompt_index_of(html)
    assert anchor == "u1" and text.startswith("</script><script>alert(1)</script> deploy with [")
    assert len(text) == 240


def test_a_manifest_row_with_a_bad_prompt_is_rendered_again(corpus, tmp_path: Path) -> None:
    root, _ = corpus
    site = tmp_path / "site"
    build_site(files_of(root), site, jobs=1, progress=False)
    manifest = site / MANIFEST_NAME
    data = json.loads(manifest.read_text(encoding="utf-8"))
    entry = next(e for e in data["sessions"].values() if e.get("row", {}).get("prompts"))
    entry["row"]["prompts"][0][0] = 'x" onmouseover="alert(1)'
    manifest.write_text(json.dumps(data), encoding="utf-8")
    report = build_site(files_of(root), site, jobs=1, progress=False)
    assert report.rendered == 1
    assert "onmouseover" not in (site / "index.html").read_text(encoding="utf-8")


def test_all_with_a_page_name_for_output_is_refused_before_anything_is_written(tmp_path):
    """`export --all -o out.html` made a folder named out.html; `-o out.md` said --all
    was "for HTML pages, not --format md". Both now say --all writes a site folder, and
    nothing is written; a folder of such a name made before is still a site."""
    from click.testing import CliRunner

    from exporter.cli import cli

    folder = tmp_path / "sessions" / "--p--"
    folder.mkdir(parents=True)
    shutil.copy(FIXTURE_FILES[0], folder / "2025-01-01T00-00-00-000Z_x.jsonl")
    base = ["export", "--all", "--sessions-dir", str(tmp_path / "sessions"), "-o"]
    for name in ("out.html", "notes.MD", "page.htm"):
        result = CliRunner().invoke(cli, [*base, str(tmp_path / name)])
        assert result.exit_code == 1, result.output
        assert "--all writes a site, a folder with an index and a page per session" in (
            result.stderr
        )
        assert not (tmp_path / name).exists()
    result = CliRunner().invoke(cli, [*base, str(tmp_path / "new.html") + "/"])
    assert result.exit_code == 0, result.output  # a trailing "/" says: a folder
    assert (tmp_path / "new.html" / "index.html").is_file()
    (tmp_path / "old.html").mkdir()  # a site someone already made under that name
    result = CliRunner().invoke(cli, [*base, str(tmp_path / "old.html")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "old.html" / "index.html").is_file()


def test_a_full_disk_says_which_pages_failed_and_that_the_site_is_unfinished(
    corpus, tmp_path, monkeypatch
):
    """The disk filled while `export --all` ran: the only line said the project page could
    not be written, and the pages that had failed before it were never named (CLI review)."""
    import errno

    from click.testing import CliRunner

    import exporter.site as site_module
    from exporter.cli import cli

    root, _ = corpus
    real_write = site_module.atomic_write_text
    written: list[Path] = []

    def full_after_one(path, text, *args, **kwargs):
        if written:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        written.append(Path(path))
        return real_write(path, text, *args, **kwargs)

    def full(path, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(site_module, "atomic_write_text", full_after_one)
    monkeypatch.setattr(site_module, "write_if_changed", full)
    site = tmp_path / "site"
    args = ["export", "--all", "--sessions-dir", str(root), "-o", str(site), "-j", "1"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    failed = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert len(failed) == len(files_of(root)) - 1 and "No space left on device" in failed[0]
    assert "1 page written, but the site in" in result.stderr
    assert "make room and run again" in result.stderr  # (said for a full disk only)
    assert "Traceback" not in result.output and written and written[0].is_file()
