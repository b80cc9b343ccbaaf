"""Site mode, stop 61: a redacted site's path digests are keyed, the prompt index shows hidden
controls as signs, ``--cwd`` keeps a project whose folder name another project shares to
itself, and a site that lost its manifest can be rebuilt in place."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.discover import encode_cwd, session_files
from exporter.loader import load_session
from exporter.render.index import prompt_index
from exporter.site_manifest import MANIFEST_NAME, SEARCH_DIR, marked_digest, source_id
from tests.browser_util import shared_dir
from tests.conftest import Build, dump_lines


def _pi_folder(root: Path, cwd: str, sid: str, text: str = "hi") -> Path:
    """One small Pi session of project ``cwd`` in Pi's layout under ``root``."""
    folder = root / encode_cwd(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2025-01-01T00-00-00-000Z_{sid}.jsonl"
    path.write_bytes(
        dump_lines([Build.header(session_id=sid, cwd=cwd), Build.user("u", None, text)])
    )
    return path


def _export_all(*extra: str) -> object:
    return CliRunner().invoke(cli, ["export", "--all", "-j", "1", *extra])


def test_a_redacted_site_keys_the_digest_of_each_sessions_path(tmp_path, monkeypatch):
    """The manifest's keys and the search shards' names were sha256(real path)[:32]: a
    reader of a `--redact` site could confirm a guessed user name or `--secret` (both in
    Pi's path of the session, both redacted on the pages) by hashing guesses."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("PI_SESSION_PUBLISH_KEY", raising=False)
    root = tmp_path / "sessions"
    source = _pi_folder(root, "/home/alice/secretclient", "s1")
    site = tmp_path / "site"
    args = ["--redact", "--secret", "secretclient", "-o", str(site), "--sessions-dir", str(root)]
    result = _export_all(*args)
    assert result.exit_code == 0, result.output
    plain = hashlib.sha256(os.path.realpath(source).encode()).hexdigest()[:32]
    manifest = json.loads((site / MANIFEST_NAME).read_text(encoding="utf-8"))
    (key,) = manifest["sessions"]
    assert key != plain and len(key) == 32
    shards = [p.name for p in (site / SEARCH_DIR).iterdir()]
    assert shards == [f"{key}.json"], shards
    again = _export_all(*args)  # the keyed id is stable: nothing rendered again
    assert again.exit_code == 0 and "0 rendered, 1 unchanged" in again.stderr, again.stderr
    # a site without --redact keeps the plain digest (nothing on its pages is hidden)
    open_site = tmp_path / "open"
    assert _export_all("-o", str(open_site), "--sessions-dir", str(root)).exit_code == 0
    manifest = json.loads((open_site / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert list(manifest["sessions"]) == [plain]


def test_the_prompt_index_shows_hidden_controls_as_signs(tmp_path):
    """The index's filter listed matching prompts with a bidi override raw, so the reader
    saw "invoice…exe.png" for "invoice\u202egnp.exe"; the table, the pages and the text
    search show it as a sign."""
    path = _pi_folder(
        tmp_path, "/home/dev/bidi", "b1", "open invoice\u202egnp.exe \x1b[31mred\x1b[0m"
    )
    ((_, text),) = prompt_index(load_session(path))
    assert "\u202e" not in text and "\x1b" not in text, repr(text)
    assert "gnp.exe" in text and "red" in text


def test_cwd_leaves_out_another_project_that_pi_filed_in_the_same_folder(tmp_path):
    """Pi files /home/dev/a-b and /home/dev/a/b both under --home-dev-a-b--: `--cwd
    /home/dev/a-b` listed and built both projects. A session whose header names this
    project, or a folder encoding elsewhere (a project moved), stays."""
    root = tmp_path / "sessions"
    mine = _pi_folder(root, "/home/dev/a-b", "mine")
    theirs = _pi_folder(root, "/home/dev/a/b", "theirs")
    moved = _pi_folder(root, "/home/dev/a-b", "moved")
    lines = moved.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0]) | {"cwd": "/old/place"}
    moved.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    assert theirs.parent == mine.parent
    assert sorted(session_files(root, "/home/dev/a-b")) == sorted([mine, moved])
    # (a moved session could be either project's: both keep it)
    assert sorted(session_files(root, "/home/dev/a/b")) == sorted([theirs, moved])
    assert len(session_files(root)) == 3
    site = tmp_path / "site"
    result = _export_all("--cwd", "/home/dev/a-b", "-o", str(site), "--sessions-dir", str(root))
    assert result.exit_code == 0, result.output
    assert "2 sessions" in result.stderr, result.stderr


def test_a_site_copied_without_its_manifest_is_refused_with_a_way_on(tmp_path):
    """`cp -r site/* copy/` leaves the dot-files behind; the copy was then "not a
    pi-session site; choose an empty or new folder", with no word of how to rebuild it.
    Without its manifest nothing says which pages are ours (rebuilding in place swept the
    user's pages, two reviews found): it is refused, saying what it is and how to go on."""
    root = tmp_path / "sessions"
    folder = root / encode_cwd("/home/alice/proj")
    folder.mkdir(parents=True)
    shutil.copy(shared_dir() / "fixtures" / "pi-branched-1.jsonl", folder)
    site, copy = tmp_path / "site", tmp_path / "copy"
    assert _export_all("-o", str(site), "--sessions-dir", str(root)).exit_code == 0
    copy.mkdir()
    for item in site.iterdir():
        if not item.name.startswith("."):
            (shutil.copytree if item.is_dir() else shutil.copy)(item, copy / item.name)
    own_page = copy / "sessions" / "notes" / "my-talk.html"  # named like ours, not ours
    own_page.parent.mkdir(parents=True)
    own_page.write_text("mine", encoding="utf-8")
    before = sorted(p.relative_to(copy) for p in copy.rglob("*"))
    for _ in range(2):
        refused = _export_all("-o", str(copy), "--sessions-dir", str(root))
        assert refused.exit_code == 1, refused.stderr
        assert f"holds a pi-session site without its {MANIFEST_NAME}" in refused.stderr
        assert "remove its index.html, sessions/ and projects/ first" in refused.stderr
        assert sorted(p.relative_to(copy) for p in copy.rglob("*")) == before
    assert own_page.read_text(encoding="utf-8") == "mine"
    # a folder whose index.html is not ours says the same way on, as the other case
    own = tmp_path / "own"
    own.mkdir()
    (own / "index.html").write_text('<meta name="generator" content="hugo">', encoding="utf-8")
    refused = _export_all("-o", str(own), "--sessions-dir", str(root))
    assert refused.exit_code == 1 and "not a pi-session site" in refused.stderr
    assert "that lost its" in refused.stderr
    assert sorted(p.name for p in own.iterdir()) == ["index.html"]


def test_a_folder_whose_index_is_a_session_page_is_no_site(tmp_path):
    """`export S -o docs/index.html` writes the generator's name too: the folder was taken
    for a site that lost its manifest, and a build deleted the user's pages in it."""
    root = tmp_path / "sessions"
    folder = root / encode_cwd("/home/alice/proj")
    folder.mkdir(parents=True)
    source = shutil.copy(shared_dir() / "fixtures" / "pi-branched-1.jsonl", folder)
    docs = tmp_path / "docs"
    docs.mkdir()
    single = CliRunner().invoke(cli, ["export", str(source), "-o", str(docs / "index.html")])
    assert single.exit_code == 0, single.stderr
    talk = docs / "sessions" / "notes" / "my-talk.html"
    talk.parent.mkdir(parents=True)
    talk.write_text("mine", encoding="utf-8")
    page = (docs / "index.html").read_bytes()
    refused = _export_all("-o", str(docs), "--sessions-dir", str(root))
    assert refused.exit_code == 1 and "not a pi-session site" in refused.stderr
    assert talk.read_text(encoding="utf-8") == "mine"
    assert (docs / "index.html").read_bytes() == page


def test_a_redacted_site_made_before_its_ids_were_keyed_keeps_its_pages(tmp_path, monkeypatch):
    """A `--redact` site of 0.2.43 keyed its manifest by each path's plain digest: the next
    build took every session for one that left and came (its page deleted, then made again,
    "3 removed"), and a page named `name-2.html` could change its name."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("PI_SESSION_PUBLISH_KEY", raising=False)
    root = tmp_path / "sessions"
    source = _pi_folder(root, "/home/alice/client", "s1")
    site = tmp_path / "site"
    args = ["--redact", "-o", str(site), "--sessions-dir", str(root)]
    assert _export_all(*args).exit_code == 0
    # the folder as 0.2.43 left it: the entry and its shard under the plain digest
    manifest_path = site / MANIFEST_NAME
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    ((keyed, entry),) = manifest["sessions"].items()
    plain = hashlib.sha256(os.path.realpath(source).encode()).hexdigest()[:32]
    manifest["sessions"] = {plain: entry}
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    (site / SEARCH_DIR / f"{keyed}.json").rename(site / SEARCH_DIR / f"{plain}.json")
    page = site / entry["page"]
    made = page.stat().st_mtime_ns
    again = _export_all(*args)
    assert again.exit_code == 0, again.stderr
    assert "0 rendered, 1 unchanged, 0 removed" in again.stderr, again.stderr
    assert page.stat().st_mtime_ns == made
    assert list(json.loads(manifest_path.read_text(encoding="utf-8"))["sessions"]) == [keyed]
    assert [p.name for p in (site / SEARCH_DIR).iterdir()] == [f"{keyed}.json"]


@pytest.mark.parametrize("spelled", ["/home/dev/a-b/", "/home/dev/./a-b", "\\home\\dev\\a-b"])
def test_cwd_keeps_its_own_session_however_its_header_spells_the_folder(tmp_path, spelled):
    """The review: a header naming this project spelled otherwise (a trailing slash, another
    separator) was taken for another project that Pi filed in the same folder."""
    root = tmp_path / "sessions"
    mine = _pi_folder(root, "/home/dev/a-b", "mine")
    lines = mine.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0]) | {"cwd": spelled}
    mine.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    assert session_files(root, "/home/dev/a-b") == [mine]


def test_an_unredacted_sites_entries_are_not_taken_for_a_redacted_ones(tmp_path):
    """The second review: a plain site built again with --redact had its entries moved to
    the keyed ids too, so a build stopped before it rendered left the unredacted page and
    search text listed as the redacted site's. Only a redacted build's entries move."""
    import hmac

    from exporter.site import _BuildState, _rekey_plain_ids, build_site

    root = tmp_path / "sessions"
    source = str(_pi_folder(root, "/home/alice/client", "s1"))
    site = tmp_path / "site"
    build_site([Path(source)], site, jobs=1, progress=False)  # unredacted: plain digests

    def mark(value: str) -> str:
        return hmac.new(b"k" * 32, value.encode(), hashlib.sha256).hexdigest()

    state = _BuildState.load(site, "key")
    keyed, plain = source_id(source, mark), source_id(source)
    _rekey_plain_ids(state, {keyed: source}, mark)
    assert list(state.sessions) == [plain]  # left to be forgotten (page and shard deleted)
    # the same folder as a redacted build of 0.2.43 left it: its entry moves
    state.sessions[plain]["sha256"] = marked_digest(source, mark)
    _rekey_plain_ids(state, {keyed: source}, mark)
    assert list(state.sessions) == [keyed]
