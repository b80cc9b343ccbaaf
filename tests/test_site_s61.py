"""Site mode, stop 61: a redacted site's path digests are keyed, the prompt index shows hidden
controls as signs, ``--cwd`` keeps a project whose folder name another project shares to
itself, and a site that lost its manifest can be rebuilt in place."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from click.testing import CliRunner

from exporter.cli import cli
from exporter.discover import encode_cwd, session_files
from exporter.loader import load_session
from exporter.render.index import prompt_index
from exporter.site_manifest import MANIFEST_NAME, SEARCH_DIR
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


def test_a_site_copied_without_its_manifest_is_rebuilt_in_place(tmp_path):
    """`cp -r site/* copy/` leaves the dot-files behind; the copy was then "not a
    pi-session site" for good. An index.html this tool wrote marks the folder as a site."""
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
    result = _export_all("-o", str(copy), "--sessions-dir", str(root))
    assert result.exit_code == 0, result.stderr
    assert "1 rendered" in result.stderr and (copy / MANIFEST_NAME).is_file()
    # a folder whose index.html is not ours is still refused, and left as it was
    own = tmp_path / "own"
    own.mkdir()
    (own / "index.html").write_text('<meta name="generator" content="hugo">', encoding="utf-8")
    refused = _export_all("-o", str(own), "--sessions-dir", str(root))
    assert refused.exit_code == 1 and "not a pi-session site" in refused.stderr
    assert sorted(p.name for p in own.iterdir()) == ["index.html"]
