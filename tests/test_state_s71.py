"""State files that did not heal (bug hunt 71), each through the real CLI on real files.

* A folder where ``publish.key`` goes: every run took a throw-away key (a new manifest
  commit each time, every page of a redacted site rendered again). It is moved aside as a
  damaged key is, said once; a dry run leaves it and says what a real run will do.
* A folder where a site's manifest or index.html goes: every ``export --all`` failed, naming
  a temp file. An empty one is removed (the site heals); one that holds anything is refused,
  naming the real path, and left as it is.
* ``gists.json`` damaged in the middle: the whole records after the damage are read too,
  so their sessions' gists are updated, not made a second time.
* A record from before 0.2.25 kept as an earlier gist: its gist was downloaded at every
  share to judge it. What was judged is kept in the record once a share succeeded.

Against the loopback fakes of the Hub (tests/fakes/hub.py) and GitHub (tests/fakes/github.py).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import Result

from tests.fakes.github import FakeGitHub
from tests.fakes.hub import FakeHub, isolate_hub
from tests.share_env import isolated_share_env, share
from tests.test_publish_state_s70 import _export_site, _publish  # the same CLI calls

PROJECT = "--home-alice-proj--"
SITE_MANIFEST = ".pi-session-site.json"  # exporter.site_manifest.MANIFEST_NAME
SESSION_FILES = ("pi-branched-1.jsonl", "pi-branched-2.jsonl", "every-entry-type.jsonl")


@pytest.fixture
def sessions(tmp_path: Path, fixtures_dir: Path) -> Path:
    """A sessions folder of one project: three real fixtures as they are."""
    root = tmp_path / "sessions"
    (root / PROJECT).mkdir(parents=True)
    for name in SESSION_FILES:
        shutil.copy(fixtures_dir / name, root / PROJECT / name)
    return root


# --- 1. a folder where publish.key goes ----------------------------------------------------


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    isolate_hub(monkeypatch, tmp_path)
    with FakeHub() as fake:
        yield fake


def _key_folder(tmp_path: Path) -> Path:
    """A folder where the key file goes, holding a file (the user's, kept)."""
    key = tmp_path / "config" / "pi-session-export" / "publish.key"
    if key.exists():
        key.unlink()
    key.mkdir(parents=True)
    (key / "notes.txt").write_text("mine", "utf-8")
    return key


def _said(result: Result) -> str:
    return " ".join(result.stderr.split())


def test_a_folder_where_the_publish_key_goes_is_moved_aside_once(
    hub: FakeHub, sessions: Path, tmp_path: Path
) -> None:
    """Every run warned "could not keep a publish key ... (Is a directory)", took a
    throw-away key and committed a new manifest, forever. Moved aside (kept, with what it
    holds) and replaced by a key, said once; the next run commits nothing."""
    assert _publish(hub, sessions).exit_code == 0
    key = _key_folder(tmp_path)
    dry = _publish(hub, sessions, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert re.search(
        r"the publish key in \S+publish\.key is damaged \(a folder, not a file\): the next "
        r"run that is not a dry run moves it aside and makes a new key",
        _said(dry),
    ), dry.stderr
    assert key.is_dir() and (key / "notes.txt").read_text("utf-8") == "mine"
    commits = len(hub.commits)
    replaced = _publish(hub, sessions)
    assert replaced.exit_code == 0, replaced.output
    assert re.search(
        r"the publish key in \S+publish\.key was damaged \(a folder, not a file\): moved "
        r"aside as publish\.key\.damaged-\S+ and replaced by a new key",
        _said(replaced),
    ), replaced.stderr
    assert re.fullmatch(rb"[0-9a-f]{64}", key.read_bytes().strip())
    (aside,) = [p for p in key.parent.iterdir() if p.name.startswith("publish.key.damaged-")]
    assert (aside / "notes.txt").read_text("utf-8") == "mine"
    assert len(hub.commits) <= commits + 1  # the manifest's marks, under the new key
    quiet = _publish(hub, sessions)
    assert quiet.exit_code == 0, quiet.output
    assert "publish key" not in quiet.stderr
    assert "no commit" in quiet.stdout and len(hub.commits) <= commits + 1


def test_a_folder_where_the_publish_key_goes_does_not_rerender_a_redacted_site(
    hub: FakeHub, sessions: Path, tmp_path: Path
) -> None:
    """``export --all --redact`` keys its manifest by the publish key: every build rendered
    every page again under a throw-away key."""
    _key_folder(tmp_path)
    site = tmp_path / "site"
    first = _export_site(sessions, site, "--redact")
    assert first.exit_code == 0, first.output
    assert "was damaged (a folder, not a file): moved aside" in _said(first)
    again = _export_site(sessions, site, "--redact")
    assert again.exit_code == 0, again.output
    assert "publish key" not in again.stderr
    assert "0 rendered, 3 unchanged" in again.stderr


# --- 2. a folder where the site's manifest or index goes ------------------------------------


@pytest.fixture
def site(sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A site built once from ``sessions``."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    folder = tmp_path / "site"
    built = _export_site(sessions, folder)
    assert built.exit_code == 0, built.output
    assert "3 rendered" in built.stderr
    return folder


def _pages(site: Path) -> dict[str, bytes]:
    found = (p for p in site.rglob("*.html") if p.is_file())
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in found}


@pytest.mark.parametrize("name", [SITE_MANIFEST, "index.html"], ids=["manifest", "index"])
def test_a_folder_holding_something_where_a_site_file_goes_is_refused_by_its_path(
    sessions: Path, site: Path, name: str
) -> None:
    """The build failed (exit 2) naming a temp file (``..pi-session-site.json.<x>.tmp: Is a
    directory``), or after rendering every page; every build again. Refused before any
    page is written, naming the folder and what to do; the folder is left as it is."""
    pages = {k: v for k, v in _pages(site).items() if k != name}
    (site / name).unlink()
    (site / name / "x").mkdir(parents=True)
    (site / name / "x" / "mine.txt").write_text("mine", "utf-8")
    for _ in range(2):
        refused = _export_site(sessions, site)
        assert refused.exit_code == 1, refused.output
        assert "Traceback" not in refused.output and ".tmp" not in refused.stderr
        said = _said(refused)
        assert f"error: {site / name} is a folder, not a file:" in said, said
        assert "move the folder away (or remove it) and build again" in said
    assert (site / name / "x" / "mine.txt").read_text("utf-8") == "mine"
    assert {k: v for k, v in _pages(site).items() if k != name} == pages


def test_an_empty_folder_where_the_index_goes_heals(sessions: Path, site: Path) -> None:
    """An empty folder holds nothing of anyone's: removed, and the index made in its place."""
    index = (site / "index.html").read_bytes()
    (site / "index.html").unlink()
    (site / "index.html").mkdir()
    healed = _export_site(sessions, site)
    assert healed.exit_code == 0, healed.output
    assert "0 rendered, 3 unchanged" in healed.stderr
    assert (site / "index.html").read_bytes() == index
    assert "0 rendered, 3 unchanged" in _export_site(sessions, site).stderr


def test_an_empty_folder_where_the_manifest_goes_is_a_manifest_lost(
    sessions: Path, site: Path
) -> None:
    """An empty folder where the manifest goes is removed, and the site is then one without
    its manifest, refused as that is (review of stop 71: it was rebuilt, though a site
    whose manifest is simply gone is refused: nothing says which pages are ours)."""
    pages = _pages(site)
    (site / SITE_MANIFEST).unlink()
    (site / SITE_MANIFEST).mkdir()
    refused = _export_site(sessions, site)
    assert refused.exit_code == 1, refused.output
    assert f"holds a pi-session site without its {SITE_MANIFEST}" in _said(refused)
    assert not (site / SITE_MANIFEST).exists()
    assert _pages(site) == pages  # nothing written
    fresh = _export_site(sessions, site.parent / "fresh")  # the way on it names works
    assert fresh.exit_code == 0, fresh.output


def test_an_empty_manifest_folder_in_a_folder_not_ours_is_refused(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder with someone's index.html and an empty folder named as the manifest: the
    empty folder is no manifest of ours, so the index is not written over."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    folder = tmp_path / "docs"
    (folder / SITE_MANIFEST).mkdir(parents=True)
    (folder / "index.html").write_text("<p>my own page</p>", "utf-8")
    refused = _export_site(sessions, folder)
    assert refused.exit_code == 1, refused.output
    assert "index.html" in _said(refused)
    assert (folder / "index.html").read_text("utf-8") == "<p>my own page</p>"


# --- 3. gists.json damaged in the middle --------------------------------------------------


@pytest.fixture
def github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        isolated_share_env(tmp_path, fake.token, monkeypatch)
        yield fake


def _state_file(tmp_path: Path) -> Path:
    return tmp_path / "state" / "pi-session-export" / "gists.json"


def _posts(fake: FakeGitHub) -> int:
    return sum(1 for r in fake.requests if r.method == "POST")


def _records_by_session(path: Path) -> dict[str, dict]:
    (sessions,) = json.loads(path.read_text("utf-8"))["gists"].values()
    return sessions


def test_records_after_damage_in_the_middle_of_gists_json_are_kept(
    github: FakeGitHub, tmp_path: Path, fixtures_dir: Path
) -> None:
    """A block of NULs over the middle record (a crash, a damaged disk): the records before
    it were kept, those after it lost, and each of their sessions got a second gist. The
    whole records after the damage are read too; only the damaged one's session gets a new
    gist, with the warning that says so."""
    files = [fixtures_dir / name for name in SESSION_FILES]
    for path in files:
        assert share(github, str(path)).exit_code == 0
    state = _state_file(tmp_path)
    gists = {sid: r["gist_id"] for sid, r in _records_by_session(state).items()}
    first, middle, last = sorted(gists)  # the file's order
    text = state.read_text("utf-8")
    start = text.index(gists[middle])
    damaged = text[:start] + "\0" * 64 + text[start + 64 :]
    state.write_text(damaged, "utf-8")
    posts = _posts(github)
    by_id = {json.loads(p.read_text("utf-8").splitlines()[0])["id"]: p for p in files}
    for sid in (last, first):
        again = share(github, str(by_id[sid]))
        assert again.exit_code == 0, again.output
        assert "gist unchanged (secret)" in again.stderr, again.stderr
    assert _posts(github) == posts  # no second gist
    lost = share(github, str(by_id[middle]))
    assert lost.exit_code == 0, lost.output
    assert "gist created (secret)" in lost.stderr
    assert _posts(github) == posts + 1
    kept = _records_by_session(state)
    assert kept[first]["gist_id"] == gists[first] and kept[last]["gist_id"] == gists[last]
    assert state.with_name("gists.json.corrupt").read_text("utf-8") == damaged


def _written(records: dict[str, dict]) -> str:
    """A state file as every version writes it."""
    state = {"gists": {"api.github.com": records}, "version": 1}
    return json.dumps(state, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


POLICY = {"given_salt": "s", "given": ["d"], "cuts": ["no_thinking"], "redacted": True}


def test_a_record_after_the_damage_is_kept_only_as_written(tmp_path: Path) -> None:
    """After the damage: a whole record is kept with its earlier gists and policy. One
    damaged too, one whose first line is gone, and one cut so that what is read from its
    first line is its earlier gist's object (it would name that gist as the session's) are
    not."""
    from exporter.publish.share_state import ShareState

    api = "https://api.github.com"
    earlier = [{"gist_id": "9" * 32, "public": True, **POLICY}]
    records = {
        "a": {"gist_id": "1" * 32, "public": False, **POLICY},
        "b": {"gist_id": "2" * 32, "public": False, **POLICY},
        "c": {"gist_id": "3" * 32, "public": False, "earlier": earlier, **POLICY},
        "d": {"gist_id": "4" * 32, "public": False, **POLICY},
        "e": {"gist_id": "5" * 32, "public": False, **POLICY},
        "f": {"gist_id": "6" * 32, "public": False, "earlier": earlier, **POLICY},
    }
    text = _written(records)

    def nuls(at: int, count: int) -> None:
        nonlocal text
        text = text[:at] + "\0" * count + text[at + count :]

    nuls(text.index('"2222'), 40)  # b's gist id, and the line after
    nuls(text.index('"4444'), 10)  # d's
    nuls(text.index('"e": {'), 3)  # e's first line
    head = text.index('"f": {') + len('"f": {')
    item = text.index("{", text.index('"earlier": [', head))
    text = text[:head] + text[item + 1 :]  # f: from its first line into its earlier gist
    path = tmp_path / "gists.json"
    path.write_text(text, "utf-8")
    state = ShareState(path)
    assert state.get(api, "a") == "1" * 32
    assert state.corrupt is True
    assert state.get(api, "b") is None
    found = state.entry(api, "c")
    assert found is not None and found["gist_id"] == "3" * 32
    assert found["earlier"] == earlier and found["given"] == ["d"]
    assert found["cuts"] == ["no_thinking"]
    assert [state.get(api, sid) for sid in "def"] == [None, None, None]


# --- 4. an earlier gist shared before 0.2.25 -----------------------------------------------

SECRET = "correct-horse-battery-staple-42"
FIRST_USER_TEXT = '"role":"user","content":[{"type":"text","text":"'


def _as_written_by_0_2_0(path: Path) -> None:
    """Each record as 0.2.0 to 0.2.9 wrote it: the gist, its visibility and when."""
    data = json.loads(path.read_text("utf-8"))
    for records in data["gists"].values():
        for sid, record in records.items():
            records[sid] = {k: record[k] for k in ("gist_id", "public", "updated_at")}
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", "utf-8")


def _planted(tmp_path: Path, fixtures_dir: Path) -> Path:
    """pi-branched-1 with SECRET in its first prompt."""
    text = (fixtures_dir / "pi-branched-1.jsonl").read_text("utf-8")
    assert FIRST_USER_TEXT in text
    planted = tmp_path / "planted.jsonl"
    planted.write_text(
        text.replace(FIRST_USER_TEXT, f"{FIRST_USER_TEXT}pass {SECRET} ", 1), "utf-8"
    )
    return planted


def _downloads(fake: FakeGitHub, gist_id: str) -> int:
    """The raw downloads of the gist's files (what judging an old record reads)."""
    return sum(1 for r in fake.requests if r.route.startswith(f"/raw/{gist_id}/"))


def test_an_old_earlier_gist_is_judged_once_and_keeps_refusing(
    github: FakeGitHub, tmp_path: Path, fixtures_dir: Path
) -> None:
    """Shared by 0.2.0 with --secret, then shared --public (a new gist; the old one is kept
    as an earlier gist): every later share downloaded the old gist again to judge it. What
    was judged is kept once a share went by it; the old gist still refuses a share without
    the secret once it is the session's only gist again."""
    planted = _planted(tmp_path, fixtures_dir)
    assert share(github, str(planted), "--secret", SECRET).exit_code == 0
    (old,) = github.gists
    _as_written_by_0_2_0(_state_file(tmp_path))

    refused = share(github, str(planted), "--public")  # judged from the gist: refused
    assert refused.exit_code == 1, refused.output
    assert f"the share to gist {old} of this session replaced 1 secret" in refused.stderr
    public = share(github, str(planted), "--public", "--secret", SECRET)
    assert public.exit_code == 0, public.output
    (new,) = [g for g in github.gists if g != old]
    assert _downloads(github, old) == 2
    github.clear_requests()
    for _ in range(2):
        again = share(github, str(planted), "--public", "--secret", SECRET)
        assert again.exit_code == 0, again.output
        assert "gist unchanged (public)" in again.stderr
    assert _downloads(github, old) == 0  # judged once, kept
    (record,) = _records_by_session(_state_file(tmp_path)).values()
    (kept,) = record["earlier"]
    assert kept["gist_id"] == old and kept["redacted"] is True and len(kept["given"]) == 1

    assert share(github, "--delete", new).exit_code == 0  # the old gist is the record again
    github.clear_requests()
    without = share(github, str(planted))
    assert without.exit_code == 1, without.output
    assert f"the share to gist {old} of this session replaced 1 secret" in without.stderr
    assert SECRET not in github.content(old)
    assert _downloads(github, old) == 0
    with_it = share(github, str(planted), "--secret", SECRET)
    assert with_it.exit_code == 0, with_it.output
    assert list(github.gists) == [old] and SECRET not in github.content(old)


def test_an_old_earlier_gist_is_judged_again_after_allow_weaker_policy(
    github: FakeGitHub, tmp_path: Path, fixtures_dir: Path
) -> None:
    """--allow-weaker-policy judges nothing: nothing judged is kept, and the next share
    without it reads the old gist (and refuses) as before."""
    source = fixtures_dir / "pi-branched-1.jsonl"
    assert share(github, str(source), "--no-thinking").exit_code == 0
    (old,) = github.gists
    _as_written_by_0_2_0(_state_file(tmp_path))
    allowed = share(github, str(source), "--public", "--allow-weaker-policy")
    assert allowed.exit_code == 0, allowed.output
    (record,) = _records_by_session(_state_file(tmp_path)).values()
    assert "cuts" not in record["earlier"][0]
    github.clear_requests()
    refused = share(github, str(source), "--public")
    assert refused.exit_code == 1, refused.output
    assert f"the share to gist {old} of this session was made with --no-thinking" in (
        refused.stderr
    )
    assert _downloads(github, old) == 1


@pytest.mark.parametrize(
    "kept_out",
    [["--exclude", "7c756ead"], ["--redact-pattern", "horse=correct-horse-[a-z-]+42"]],
    ids=["exclude", "pattern"],
)
def test_a_judgement_made_with_an_exclusion_keeps_refusing_without_it(
    github: FakeGitHub, tmp_path: Path, fixtures_dir: Path, kept_out: list[str]
) -> None:
    """Review of stop 71: the old gist was judged against a share that left the secret out
    (its entry excluded, or a pattern replaced it), so "none put back"; kept as "replaced
    nothing", a later share (the new gist deleted) put the secret in the old gist in clear.
    The judgement now keeps that share's exclusion too."""
    planted = _planted(tmp_path, fixtures_dir)
    assert share(github, str(planted), "--secret", SECRET).exit_code == 0
    (old,) = github.gists
    _as_written_by_0_2_0(_state_file(tmp_path))
    second = share(github, str(planted), "--public", *kept_out)
    assert second.exit_code == 0, second.output
    (new,) = [g for g in github.gists if g != old]
    assert SECRET not in github.content(new)
    assert share(github, "--delete", new).exit_code == 0
    third = share(github, str(planted))  # neither --secret nor the exclusion
    assert third.exit_code == 1, third.output
    assert f"gist {old}" in third.stderr
    assert SECRET not in github.content(old)


def test_recovering_records_is_linear_in_the_apis_named() -> None:
    """Review of stop 71: each record after the damage looked through every API heading
    before it: a hand-made file of 20,000 of each took a minute. One lookup each now."""
    from exporter.publish.share_state import _records_after
    from tests.conftest import cpu_time_limit

    record = '      "s{0}": {{\n        "gist_id": "g{0}",\n        "public": false\n      }}'
    blocks = [
        f'    "https://h{k}.example/api": {{\n{record.format(k)}\n    }}' for k in range(20_000)
    ]
    text = '{\n  "gists": {\n' + ",\n".join(blocks) + "\n  }\n}\n"
    with cpu_time_limit(10):
        found = _records_after(text, 0)
    assert len(found) == 20_000
    assert found[-1][:2] == ("https://h19999.example/api", "s19999")
    assert found[-1][2]["gist_id"] == "g19999"
