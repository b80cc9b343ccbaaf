"""Stop 73: a page the site folder could not take (a full disk) deleted the session's last
good page and the run exited 0.

``export --all``: the session's manifest entry was replaced by a failed row, its search
text deleted, and the sweep removed its page of before; exit 0. Now a page that cannot
be written (an OSError of the output, not a session that cannot be read) leaves the
session's page, row and search text as they were, the run says how many pages could not be
written and why, and exits 2 once the index is written; the next build with room makes it.
``publish --html`` then deleted the page from the dataset (exit 0): it now stops before any
commit (exit 2), and the next run with room publishes it.

A full disk without root: RLIMIT_FSIZE in the child (Python ignores SIGXFSZ, so a write
past it fails with EFBIG, "File too large"), through the real CLI on real fixtures, against
the loopback fake of the Hub (tests/fakes/hub.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.hub import TOKEN, FakeHub
from tests.test_write_errors_s73 import _cli

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PI_SHARED_DIR") or REPO.parent / "shared")
FIXTURES = SHARED / "fixtures"
PROJECT = "--home-alice-proj--"
DATASET = "alice/s73-diskfull"
SEARCH_DIR = ".pi-session-search"  # exporter.site_manifest.SEARCH_DIR
#: The largest file a limited run may write: above the index (~105 kB), the manifest, the
#: search text and the session copies (pi-branched-2.jsonl is ~280 kB), below the page of
#: pi-branched-2 (~460 kB); pi-branched-1's page (~315 kB) fits.
LIMIT = 400_000
GROWN = "one more question about the deploy"
UNWRITTEN = re.compile(
    r"error: File too large: 1 page could not be written in the site in \S+ \(a session "
    r"whose page of before was made with these options keeps it; any other is listed as "
    r"failed\); make room \(or raise the file size limit: ulimit -f\) and run again"
)


def _said(run: subprocess.CompletedProcess[str]) -> str:
    return " ".join(run.stderr.split())


def _export(tmp_path: Path, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    root, site = tmp_path / "sessions", tmp_path / "site"
    args = ("export", "--all", "--sessions-dir", str(root), "-o", str(site), "-j", "1")
    return _cli(tmp_path, *args, limit=limit)


def _grow(path: Path) -> None:
    """The session goes on: a user message appended on its last entry, as Pi appends."""
    last = json.loads(path.read_bytes().splitlines()[-1])
    entry = {
        "type": "message",
        "id": "s73grown",
        "parentId": last["id"],
        "timestamp": "2026-11-30T01:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": GROWN}]},
    }
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones too) but the site's lock, by path."""
    found = (p for p in folder.rglob("*") if p.is_file() and p.name != ".pi-session-site.lock")
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in found}


def _page(site: Path, stem: str) -> Path:
    (page,) = (site / "sessions").glob(f"*/{stem}.html")
    return page


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    """A sessions folder of one project: two real fixtures."""
    folder = tmp_path / "sessions" / PROJECT
    folder.mkdir(parents=True)
    for name in ("pi-branched-1.jsonl", "pi-branched-2.jsonl"):
        shutil.copy(FIXTURES / name, folder / name)
    return folder


# --- export --all ---------------------------------------------------------------------------


def test_a_page_that_does_not_fit_keeps_the_page_of_before_and_exits_2(
    tmp_path: Path, sessions: Path
) -> None:
    """The grown session's page is too large for the limit: its page of before, its row
    in the index (its link) and its search text stay byte for byte, the run says how many
    pages could not be written and why, exit 2; with room again the page is made."""
    first = _export(tmp_path)
    assert first.returncode == 0, first.stderr
    site = tmp_path / "site"
    page = _page(site, "pi-branched-2")
    assert os.path.getsize(page) > LIMIT  # (else the limit tests nothing)
    rel = page.relative_to(site).as_posix()
    before = _files(site)
    _grow(sessions / "pi-branched-2.jsonl")
    full = _export(tmp_path, limit=LIMIT)
    assert full.returncode == 2, full.stderr
    said = _said(full)
    assert UNWRITTEN.search(said), said
    assert (
        f"warning: {sessions / 'pi-branched-2.jsonl'}: cannot write {rel}: File too large" in said
    )
    assert "0 rendered, 1 unchanged, 0 removed, 1 failed" in said
    assert "Traceback" not in full.stderr
    assert full.stdout.strip() == str(site / "index.html")  # the index was written
    after = _files(site)
    assert after[rel] == before[rel]  # the page of before, as it was
    shards = sorted(k for k in before if k.startswith(f"{SEARCH_DIR}/"))
    assert len(shards) == 2 and all(after.get(k) == before[k] for k in shards)
    assert f'href="{rel}"' in after["index.html"].decode("utf-8")
    assert not [k for k in after if k.endswith(".tmp")]  # no temp file left
    # again without room: still kept (rendered again: its source changed)
    again = _export(tmp_path, limit=LIMIT)
    assert again.returncode == 2 and UNWRITTEN.search(_said(again)), again.stderr
    assert _files(site)[rel] == before[rel]
    healed = _export(tmp_path)
    assert healed.returncode == 0, healed.stderr
    assert "1 rendered, 1 unchanged, 0 removed, 0 failed" in _said(healed)
    assert GROWN in page.read_text("utf-8")
    quiet = _export(tmp_path)
    assert quiet.returncode == 0 and "0 rendered, 2 unchanged" in _said(quiet), quiet.stderr


def test_a_new_session_whose_page_does_not_fit_is_a_failed_row_and_exits_2(
    tmp_path: Path, sessions: Path
) -> None:
    """A session new to the site whose page cannot be written has no page of before: a
    failed row, and exit 2 (the run said "1 failed" and exited 0)."""
    grown = sessions / "pi-branched-2.jsonl"
    aside = tmp_path / "aside.jsonl"
    grown.rename(aside)
    assert _export(tmp_path).returncode == 0
    aside.rename(grown)
    full = _export(tmp_path, limit=LIMIT)
    assert full.returncode == 2, full.stderr
    said = _said(full)
    assert UNWRITTEN.search(said), said
    assert "0 rendered, 1 unchanged, 0 removed, 1 failed" in said
    site = tmp_path / "site"
    assert not list((site / "sessions").glob("*/pi-branched-2.html"))
    index = (site / "index.html").read_text("utf-8")
    assert "pi-branched-2.jsonl" in index and "File too large" in index  # its failed row
    assert not re.search(r'href="[^"]*pi-branched-2\.html"', index)
    healed = _export(tmp_path)
    assert healed.returncode == 0 and "1 rendered, 1 unchanged" in _said(healed), healed.stderr
    assert _page(site, "pi-branched-2").is_file()


def test_a_session_that_cannot_be_read_is_still_a_warning_and_exits_0(
    tmp_path: Path, sessions: Path
) -> None:
    """Unchanged: a damaged session file is a failed row with its warning, exit 0 (under
    the same limit, which every page of this run fits)."""
    assert _export(tmp_path).returncode == 0
    broken = sessions / "garbage.jsonl"
    broken.write_bytes(b"\x00\x01 not a session\n")
    run = _export(tmp_path, limit=LIMIT)
    assert run.returncode == 0, run.stderr
    said = _said(run)
    assert f"warning: {broken}:" in said
    assert "0 rendered, 2 unchanged, 0 removed, 1 failed" in said
    assert "could not be written" not in said and "error:" not in said


def test_an_unreadable_session_beside_a_page_that_does_not_fit_is_not_counted_as_unwritten(
    tmp_path: Path, sessions: Path
) -> None:
    """A session that cannot be read and a page that cannot be written in one run: the
    first is a failed row, the second keeps its page; exit 2 says one page (the one the
    folder could not take), not two."""
    assert _export(tmp_path).returncode == 0
    site = tmp_path / "site"
    rel = _page(site, "pi-branched-2").relative_to(site).as_posix()
    kept = (site / rel).read_bytes()
    broken = sessions / "garbage.jsonl"
    broken.write_bytes(b"\x00\x01 not a session\n")
    _grow(sessions / "pi-branched-2.jsonl")
    run = _export(tmp_path, limit=LIMIT)
    assert run.returncode == 2, run.stderr
    said = _said(run)
    assert UNWRITTEN.search(said), said  # (1 page)
    assert f"warning: {broken}:" in said
    assert "0 rendered, 1 unchanged, 0 removed, 2 failed" in said
    assert (site / rel).read_bytes() == kept
    assert f'href="{rel}"' in (site / "index.html").read_text("utf-8")


# --- publish --html -------------------------------------------------------------------------


def test_a_folder_in_a_pages_place_is_named_to_be_moved(tmp_path: Path, sessions: Path) -> None:
    """Not a full disk: a folder of the user's stands where a page goes. "Run again" could
    never cure it (review): the run names what to move; its page of before is gone, so the
    session is a failed row until then, exit 2."""
    assert _export(tmp_path).returncode == 0
    site = tmp_path / "site"
    page = _page(site, "pi-branched-2")
    rel = page.relative_to(site).as_posix()
    page.unlink()
    (page / "keep.txt").parent.mkdir()
    (page / "keep.txt").write_text("mine\n", encoding="utf-8")
    _grow(sessions / "pi-branched-2.jsonl")
    run = _export(tmp_path)
    assert run.returncode == 2, run.stderr
    assert _said(run).endswith(f"move away what is in the place of {rel} and run again"), run.stderr
    assert (page / "keep.txt").read_text(encoding="utf-8") == "mine\n"


@pytest.fixture
def fake_hub() -> Iterator[FakeHub]:
    with FakeHub() as fake:
        yield fake


def _publish(
    fake: FakeHub, tmp_path: Path, limit: int | None = None
) -> subprocess.CompletedProcess[str]:
    root = tmp_path / "sessions"
    args = ("publish", DATASET, "--all", "--sessions-dir", str(root), "--html", "-j", "1")
    return _cli(tmp_path, *args, "--endpoint", fake.url, "--token", TOKEN, limit=limit)


def test_publish_html_stops_before_any_commit_when_a_page_does_not_fit(
    tmp_path: Path, sessions: Path, fake_hub: FakeHub
) -> None:
    """The grown session's page could not be written in the local cache: the site there
    lacked it, and the diff deleted html/<its page> from the dataset (exit 0). The run
    stops before any commit (exit 2), the dataset as it was; with room the next run
    publishes the grown session and its page."""
    first = _publish(fake_hub, tmp_path)
    assert first.returncode == 0, first.stderr
    published = fake_hub.files(DATASET)
    pages = sorted(p for p in published if p.startswith("html/sessions/"))
    assert len(pages) == 2, sorted(published)
    commits = len(fake_hub.commits)
    _grow(sessions / "pi-branched-2.jsonl")
    full = _publish(fake_hub, tmp_path, limit=LIMIT)
    assert full.returncode == 2, full.stderr
    said = _said(full)
    assert re.search(
        r"error: File too large: 1 html/ page could not be written in the local publish "
        r"cache /\S+; nothing was sent \(the dataset is as it was\); make room \(or raise "
        r"the file size limit: ulimit -f\) and run again",
        said,
    ), said
    assert "Traceback" not in full.stderr
    assert len(fake_hub.commits) == commits
    assert fake_hub.files(DATASET) == published
    healed = _publish(fake_hub, tmp_path)
    assert healed.returncode == 0, healed.stderr
    after = fake_hub.files(DATASET)
    assert sorted(p for p in after if p.startswith("html/sessions/")) == pages
    (grown_page,) = (p for p in pages if p.endswith("/pi-branched-2.html"))
    assert after[grown_page] != published[grown_page]
    assert GROWN.encode() in after[grown_page]


def test_a_dry_run_names_the_temporary_folder_it_renders_in(
    tmp_path: Path, sessions: Path, fake_hub: FakeHub
) -> None:
    """A dry run renders into a copy of the cache in the temporary folder: a full one was
    said to be "the local publish cache" (review), and clearing the cache cured nothing."""
    assert _publish(fake_hub, tmp_path).returncode == 0
    commits = len(fake_hub.commits)
    _grow(sessions / "pi-branched-2.jsonl")
    root = tmp_path / "sessions"
    args = ("publish", DATASET, "--all", "--sessions-dir", str(root), "--html", "-j", "1")
    dry = _cli(
        tmp_path, *args, "--dry-run", "--endpoint", fake_hub.url, "--token", TOKEN, limit=LIMIT
    )
    assert dry.returncode == 2, dry.stderr
    said = _said(dry)
    assert (
        f"1 html/ page could not be written in the temporary folder {tmp_path / 'tmp'} (a dry "
        "run renders into a copy there); nothing would be sent"
    ) in said, said
    assert len(fake_hub.commits) == commits
