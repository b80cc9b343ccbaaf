"""Publish state damaged, or left by old versions (bug hunt 70).

* A dataset whose manifest.json is missing, unreadable, from another version, or whose
  entries record nothing of the redaction: a run without the ``--secret`` an earlier run was
  given is refused (it published the secret in clear), unless the copy there only grows.
* An empty or short ``publish.key`` (left by versions up to 0.2.50) is moved aside and
  replaced once, not a throw-away key (and a new manifest commit) on every run.
* A site page cut short (a full disk, an interrupted copy) is rendered again, by ``export
  --all`` and by ``publish --html`` (which uploaded it).

Every run is the real CLI against the loopback fake Hub (tests/fakes/hub.py), on real files.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from tests.fakes.hub import TOKEN, FakeHub, isolate_hub

REPO_ID = "alice/s70"
SECRET = "correct-horse-battery-staple-42"
PROJECT = "--home-alice-proj--"
SITE_MANIFEST = ".pi-session-site.json"  # exporter.site_manifest.MANIFEST_NAME


@pytest.fixture(autouse=True)
def hub_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_hub(monkeypatch, tmp_path)


@pytest.fixture
def fake_hub() -> Iterator[FakeHub]:
    with FakeHub() as fake:
        yield fake


@pytest.fixture
def sessions(tmp_path: Path, fixtures_dir: Path) -> Path:
    """A sessions folder of one project: a real fixture holding SECRET in an answer, and
    two more fixtures as they are."""
    root = tmp_path / "sessions"
    folder = root / PROJECT
    folder.mkdir(parents=True)
    text = (fixtures_dir / "every-entry-type.jsonl").read_text("utf-8")
    assert "I'll inspect things." in text
    text = text.replace("I'll inspect things.", f"I'll inspect things. pass {SECRET}.")
    (folder / "s.jsonl").write_text(text, "utf-8")
    for name in ("pi-branched-1.jsonl", "pi-branched-2.jsonl"):
        shutil.copy(fixtures_dir / name, folder / name)
    return root


def _publish(fake: FakeHub, root: Path, *more: str) -> Result:
    args = ["publish", REPO_ID, "--all", "--sessions-dir", str(root)]
    args += ["--endpoint", fake.url, "--token", TOKEN, "-j", "1", *more]
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def _export_site(root: Path, site: Path, *more: str) -> Result:
    args = ["export", "--all", "--sessions-dir", str(root), "-o", str(site), "-j", "1", *more]
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def _hub_edit(fake: FakeHub, change: Callable[[dict[str, bytes]], None]) -> None:
    """A commit made on the Hub itself (its web editor): ``change`` edits the files."""
    repo = fake.repo(REPO_ID)
    files = dict(repo.files)
    change(files)
    repo.sha = secrets.token_hex(20)
    repo.files, repo.history[repo.sha] = files, dict(files)


def _leaked(fake: FakeHub) -> list[str]:
    return sorted(path for path, data in fake.files(REPO_ID).items() if SECRET.encode() in data)


def _grow(path: Path) -> None:
    """The session goes on: a user message appended on its last entry, as Pi appends."""
    last = json.loads(path.read_bytes().splitlines()[-1])
    entry = {
        "type": "message",
        "id": "s70grown",
        "parentId": last["id"],
        "timestamp": "2025-06-01T12:00:00.000Z",
        "message": {"role": "user", "content": "and one more thing", "timestamp": 0},
    }
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")


# --- 1. a manifest that cannot tell how a copy was redacted --------------------------------


def _truncate(files: dict[str, bytes]) -> None:
    files["manifest.json"] = files["manifest.json"][: len(files["manifest.json"]) // 2]


def _delete(files: dict[str, bytes]) -> None:
    del files["manifest.json"]


def _old_schema(files: dict[str, bytes]) -> None:
    doc = json.loads(files["manifest.json"])
    doc["schema_version"] = 0
    files["manifest.json"] = json.dumps(doc).encode("utf-8")


def _entries_without_given(files: dict[str, bytes]) -> None:
    doc = json.loads(files["manifest.json"])
    for entry in doc["sessions"].values():
        entry.pop("given", None)
        entry.pop("redactions", None)
    files["manifest.json"] = json.dumps(doc).encode("utf-8")


DAMAGES = {
    "truncated": (_truncate, "manifest.json, which records how each copy was redacted, is "
                  "unreadable (damaged, or edited by hand)"),
    "deleted": (_delete, "the dataset has no manifest.json (deleted?)"),
    "old-schema": (_old_schema, "manifest.json, which records how each copy was redacted, is "
                   "from another version of pi-session"),
    "entries-without-given": (_entries_without_given, "their manifest.json entries are missing "
                              "or record nothing of how they were redacted"),
}  # fmt: skip


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_secret_given_before_is_not_published_when_the_manifest_cannot_tell(
    fake_hub: FakeHub, sessions: Path, damage: str
) -> None:
    """Published with --secret, manifest.json then damaged on the Hub, published again
    without it: the secret went up in clear (exit 0, one generic warning, none when the
    manifest was deleted). Refused now, saying why and how to go on; nothing is sent."""
    first = _publish(fake_hub, sessions, "--secret", SECRET)
    assert first.exit_code == 0, first.output
    assert _leaked(fake_hub) == []
    intact = _publish(fake_hub, sessions)  # with the manifest intact: refused, as before
    assert intact.exit_code == 1 and "--allow-weaker-policy" in intact.stderr, intact.output
    same = _publish(fake_hub, sessions, "--secret", SECRET)
    assert same.exit_code == 0 and "no commit" in same.stdout, same.output
    change, said = DAMAGES[damage]
    _hub_edit(fake_hub, change)
    commits = len(fake_hub.commits)
    again = _publish(fake_hub, sessions)
    assert again.exit_code == 1, again.output
    assert "Traceback" not in again.output
    error = " ".join(again.stderr.split())
    assert "1 session in the dataset (first: sessions/2025-06/s.jsonl) would be replaced" in error
    assert said in error
    assert "Pass the options they were published with" in error
    assert "--allow-weaker-policy" in error
    assert _leaked(fake_hub) == []
    assert len(fake_hub.commits) == commits


def test_a_manifest_deleted_on_purpose_is_rebuilt_by_a_run_with_the_same_options(
    fake_hub: FakeHub, sessions: Path
) -> None:
    """The user deleted manifest.json: a run with the options the sessions were published
    with goes up (the copies there are unchanged, or only grew), says why every session
    was checked, and writes the manifest again; a run without the secret is refused, and
    --allow-weaker-policy is the way out the refusal names."""
    assert _publish(fake_hub, sessions, "--secret", SECRET).exit_code == 0
    _hub_edit(fake_hub, _delete)
    _grow(sessions / PROJECT / "s.jsonl")
    same = _publish(fake_hub, sessions, "--secret", SECRET)
    assert same.exit_code == 0, same.output
    assert "the dataset holds sessions but no manifest.json (deleted?)" in " ".join(
        same.stderr.split()
    )
    files = fake_hub.files(REPO_ID)
    assert b"and one more thing" in files["sessions/2025-06/s.jsonl"]  # the grown copy
    entry = json.loads(files["manifest.json"])["sessions"]["sessions/2025-06/s.jsonl"]
    assert len(entry["given"]) == 1  # the secret this run replaced, recorded again
    assert _leaked(fake_hub) == []
    # deleted again; the secret forgotten: refused, nothing sent
    _hub_edit(fake_hub, _delete)
    commits = len(fake_hub.commits)
    refused = _publish(fake_hub, sessions)
    assert refused.exit_code == 1, refused.output
    assert "--allow-weaker-policy" in refused.stderr
    assert len(fake_hub.commits) == commits and _leaked(fake_hub) == []
    # the user's choice, as the refusal says: the manifest is back, and records it
    chosen = _publish(fake_hub, sessions, "--allow-weaker-policy")
    assert chosen.exit_code == 0, chosen.output
    assert "manifest.json" in fake_hub.files(REPO_ID)
    assert _publish(fake_hub, sessions).exit_code == 0


# --- 2. a damaged publish.key -------------------------------------------------------------


def _key_path(tmp_path: Path) -> Path:
    return tmp_path / "config" / "pi-session-export" / "publish.key"


def _damage_key(path: Path, data: bytes) -> None:
    """What versions up to 0.2.50 left when stopped between creating and writing the key."""
    path.write_bytes(data)
    an_hour_ago = time.time() - 3600
    os.utime(path, (an_hour_ago, an_hour_ago))


@pytest.mark.parametrize("data", [b"", b"abc\n"], ids=["empty", "short"])
def test_a_damaged_publish_key_is_replaced_once(
    fake_hub: FakeHub, sessions: Path, tmp_path: Path, data: bytes
) -> None:
    """A throw-away key each run: every session re-checked and a new manifest commit on
    every run, forever. The file is moved aside (kept) and a new key made, said once."""
    assert _publish(fake_hub, sessions).exit_code == 0
    key = _key_path(tmp_path)
    _damage_key(key, data)
    commits = len(fake_hub.commits)
    replaced = _publish(fake_hub, sessions)
    assert replaced.exit_code == 0, replaced.output
    said = " ".join(replaced.stderr.split())
    assert re.search(
        r"the publish key in \S+publish\.key was damaged .*moved aside as "
        r"publish\.key\.damaged-\S+ and replaced by a new key",
        said,
    ), said
    new = key.read_bytes().strip()
    assert re.fullmatch(rb"[0-9a-f]{64}", new)
    assert new.decode() not in replaced.output  # the key is never said
    aside = [p for p in key.parent.iterdir() if p.name.startswith("publish.key.damaged-")]
    assert len(aside) == 1 and aside[0].read_bytes() == data
    assert len(fake_hub.commits) <= commits + 1  # the manifest's marks, made under the new key
    quiet = _publish(fake_hub, sessions)
    assert quiet.exit_code == 0, quiet.output
    assert "publish key" not in quiet.stderr
    assert "no commit" in quiet.stdout and len(fake_hub.commits) <= commits + 1


def test_a_damaged_publish_key_does_not_rerender_a_redacted_site_every_time(
    sessions: Path, tmp_path: Path
) -> None:
    """``export --all --redact`` keys its manifest by the publish key too: with an empty
    key file every build rendered every page again."""
    key = _key_path(tmp_path)
    key.parent.mkdir(parents=True)
    _damage_key(key, b"")
    site = tmp_path / "site"
    first = _export_site(sessions, site, "--redact")
    assert first.exit_code == 0, first.output
    assert "moved aside" in first.stderr
    again = _export_site(sessions, site, "--redact")
    assert again.exit_code == 0, again.output
    assert "publish key" not in again.stderr
    assert "0 rendered, 3 unchanged" in again.stderr


# --- 3. a site page cut short -------------------------------------------------------------


def _pages(site: Path) -> list[Path]:
    return sorted((site / "sessions").glob("*/*.html"))


def _cut(page: Path) -> bytes:
    whole = page.read_bytes()
    page.write_bytes(whole[:1000])
    return whole


def test_export_all_renders_a_page_cut_short_again(sessions: Path, tmp_path: Path) -> None:
    """The page was kept because it existed ("0 rendered, 3 unchanged")."""
    site = tmp_path / "site"
    assert _export_site(sessions, site).exit_code == 0
    page = _pages(site)[0]
    whole = _cut(page)
    again = _export_site(sessions, site)
    assert again.exit_code == 0, again.output
    assert "1 rendered, 2 unchanged" in again.stderr
    assert page.read_bytes() == whole
    assert "0 rendered, 3 unchanged" in _export_site(sessions, site).stderr


def test_a_site_manifest_without_page_sizes_is_not_rendered_again(
    sessions: Path, tmp_path: Path
) -> None:
    """A manifest from before the pages' sizes were recorded: the pages are kept (their
    ending is checked) and their sizes recorded, so a page cut short later is found."""
    site = tmp_path / "site"
    assert _export_site(sessions, site).exit_code == 0
    manifest = site / SITE_MANIFEST
    doc = json.loads(manifest.read_text("utf-8"))
    sizes = {sid: entry.pop("page_bytes") for sid, entry in doc["sessions"].items()}
    assert sizes and all(isinstance(n, int) and n > 1000 for n in sizes.values())
    manifest.write_text(json.dumps(doc), "utf-8")
    again = _export_site(sessions, site)
    assert "0 rendered, 3 unchanged" in again.stderr, again.output
    recorded = json.loads(manifest.read_text("utf-8"))["sessions"]
    assert {sid: entry.get("page_bytes") for sid, entry in recorded.items()} == sizes
    page = _pages(site)[-1]
    whole = _cut(page)
    assert "1 rendered, 2 unchanged" in _export_site(sessions, site).stderr
    assert page.read_bytes() == whole


def test_publish_html_never_uploads_a_cached_page_cut_short(
    fake_hub: FakeHub, sessions: Path, tmp_path: Path
) -> None:
    """``publish --html`` keeps its site in the cache and uploads what changed there: a
    page cut short in the cache went up over the good one."""
    first = _publish(fake_hub, sessions, "--html")
    assert first.exit_code == 0, first.output
    published = {p: d for p, d in fake_hub.files(REPO_ID).items() if p.startswith("html/")}
    cached = sorted((tmp_path / "cache" / "pi-session-export" / "publish-html").glob(
        "*/sessions/*/*.html"
    ))  # fmt: skip
    assert len(cached) == 3
    _cut(cached[0])
    commits = len(fake_hub.commits)
    again = _publish(fake_hub, sessions, "--html")
    assert again.exit_code == 0, again.output
    after = {p: d for p, d in fake_hub.files(REPO_ID).items() if p.startswith("html/")}
    cut = sorted(p for p, d in after.items() if not d.rstrip().endswith(b"</html>"))
    assert cut == []
    assert sorted(p for p in after if after[p] != published.get(p)) == []
    assert len(fake_hub.commits) == commits


# --- 4. a damaged publish cache -----------------------------------------------------------


def _index_a_folder(html: Path, copies: Path) -> None:
    (html / "index.html").unlink()
    (html / "index.html" / "x").mkdir(parents=True)


def _html_cache_a_file(html: Path, copies: Path) -> None:
    shutil.rmtree(html)
    html.write_text("x", "utf-8")


def _copies_cache_a_file(html: Path, copies: Path) -> None:
    shutil.rmtree(copies)
    copies.write_text("x", "utf-8")


CACHE_DAMAGES = {
    "index-a-folder": (_index_a_folder, "the local cache of html/ pages"),
    "html-cache-a-file": (_html_cache_a_file, "was a file, not a folder (damaged)"),
    "copies-cache-a-file": (_copies_cache_a_file, "was a file, not a folder (damaged)"),
}


@pytest.mark.parametrize("damage", sorted(CACHE_DAMAGES))
def test_publish_html_drops_and_rebuilds_a_damaged_cache(
    fake_hub: FakeHub, sessions: Path, tmp_path: Path, damage: str
) -> None:
    """Every later ``publish --html`` failed (exit 2, "publish-html/<digest>: File exists",
    "Is a directory"): the cache is dropped and made again, said once; nothing changes
    in the dataset."""
    assert _publish(fake_hub, sessions, "--html").exit_code == 0
    published = fake_hub.files(REPO_ID)
    cache = tmp_path / "cache" / "pi-session-export"
    (html,) = (cache / "publish-html").iterdir()
    (copies,) = (cache / "publish-copies").iterdir()
    change, said = CACHE_DAMAGES[damage]
    change(html, copies)
    commits = len(fake_hub.commits)
    again = _publish(fake_hub, sessions, "--html")
    assert again.exit_code == 0, again.output
    assert said in " ".join(again.stderr.split())
    assert "Traceback" not in again.output
    assert fake_hub.files(REPO_ID) == published and len(fake_hub.commits) == commits
    quiet = _publish(fake_hub, sessions, "--html")
    assert quiet.exit_code == 0 and "damaged" not in quiet.stderr, quiet.output
