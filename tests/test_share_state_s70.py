"""`pi-session share` and a share state written by an older version, damaged or read-only:
real HTTP to the loopback fake GitHub, real session files, a real gists.json.

A record from before 0.2.25 does not say what its share left out: what the gist holds says
it (a share without the --secret or --no-thinking of then is refused, as for a newer
record). A damaged gists.json (cut short, a trailing comma, a byte order mark) keeps
updating the gists it still names, a copy set aside is looked in too, and a session not
found while one could not be read whole is warned of at each share. A state that cannot be
written is not warned of for a share that changed nothing, and the warning says what the
next share will do.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fakes.github import FakeGitHub
from tests.share_env import isolated_share_env, share

FIXTURES = Path(os.environ.get("PI_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
FIXTURE = FIXTURES / "fixtures" / "pi-branched-1.jsonl"
OTHER = FIXTURES / "fixtures" / "pi-branched-2.jsonl"
SECRET = "correct-horse-battery-staple-42"
FIRST_USER_TEXT = '"role":"user","content":[{"type":"text","text":"'
#: Found before a test empties PATH (``isolated_share_env``).
CHATTR = shutil.which("chattr")


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


@pytest.fixture
def env(tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An isolated environment: state dir, token, no gh, loopback without proxies."""
    return isolated_share_env(tmp_path, fake.token, monkeypatch)


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """A copy of a real session with ``SECRET`` in its first prompt."""
    text = FIXTURE.read_text(encoding="utf-8")
    assert FIRST_USER_TEXT in text
    path = tmp_path / "planted.jsonl"
    path.write_text(text.replace(FIRST_USER_TEXT, f"{FIRST_USER_TEXT}pass {SECRET} ", 1), "utf-8")
    return path


def state_file(env: dict[str, str]) -> Path:
    return Path(env["XDG_STATE_HOME"]) / "pi-session-export" / "gists.json"


def as_written_by_0_2_0(env: dict[str, str]) -> None:
    """Each record as 0.2.0 to 0.2.9 wrote it: the gist, its visibility and when."""
    path = state_file(env)
    data = json.loads(path.read_text(encoding="utf-8"))
    for sessions in data["gists"].values():
        for sid, record in sessions.items():
            sessions[sid] = {k: record[k] for k in ("gist_id", "public", "updated_at")}
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def writes(fake: FakeGitHub) -> list[str]:
    """The requests that made or changed a gist."""
    return [f"{r.method} {r.route}" for r in fake.requests if r.method in ("POST", "PATCH")]


#: The footer link a page carries its session copy in (0.2.1 on).
FOOTER_COPY = re.compile(
    r'<a id="session-jsonl" href="data:application/gzip;base64,([A-Za-z0-9+/=]+)"[^>]*>[^<]*</a>'
)


def as_0_2_0_page(html: str) -> str:
    """The page with its session copy where 0.2.0's template put it: a JSON string in a
    script element (templates/page.html.j2 of d500fbe), not the footer's data: URL."""
    blob = FOOTER_COPY.search(html)
    assert blob is not None
    script = (
        '<script type="application/json" id="session-jsonl" data-file="s.jsonl">'
        f'"{blob.group(1)}"</script>'
    )
    return html[: blob.start()] + html[blob.end() :] + script


# --- F1: a record from before 0.2.25 ------------------------------------------------------------


def test_a_record_without_given_secrets_is_judged_by_its_gist(
    fake: FakeGitHub, env: dict, planted: Path
) -> None:
    """0.2.0 shared with --secret X and recorded only the gist: sharing again without X
    updated the same gist with X in clear. The gist holds X's placeholder where this
    share would put X: refused as for a newer record; with X again the share goes on."""
    assert share(fake, str(planted), "--secret", SECRET).exit_code == 0
    (gist_id,) = fake.gists
    as_written_by_0_2_0(env)
    before = fake.content(gist_id)
    assert "[REDACTED:literal-secret:1]" in before and SECRET not in before

    refused = share(fake, str(planted))
    assert refused.exit_code == 1, refused.output
    assert (
        f"error: the share to gist {gist_id} of this session replaced 1 secret this share is "
        "not given" in refused.stderr
    )
    assert f"--allow-weaker-policy (share --delete {gist_id} forgets that gist)" in (refused.stderr)
    assert "Traceback" not in refused.output
    assert fake.content(gist_id) == before
    assert writes(fake) == ["POST /gists"]

    again = share(fake, str(planted), "--secret", SECRET)  # what it was shared with then
    assert again.exit_code == 0, again.output
    assert list(fake.gists) == [gist_id] and SECRET not in fake.content(gist_id)


def test_a_0_2_0_page_made_with_no_thinking_refuses_a_share_with_the_thinking(
    fake: FakeGitHub, env: dict
) -> None:
    """A record without ``cuts`` counted as "no cuts": the thinking an earlier
    --no-thinking share left out went up into the same gist. Read from the copy 0.2.0's
    page carries (in its script element), the cut is named as for a newer record."""
    assert share(fake, str(FIXTURE), "--no-thinking").exit_code == 0
    (gist_id,) = fake.gists
    files = fake.gists[gist_id]["files"]
    files["session.html"] = as_0_2_0_page(files["session.html"])
    as_written_by_0_2_0(env)

    refused = share(fake, str(FIXTURE))
    assert refused.exit_code == 1, refused.output
    assert (
        f"error: the share to gist {gist_id} of this session was made with --no-thinking: "
        "this share would put back what it left out; pass --no-thinking again, or "
        "--allow-weaker-policy" in refused.stderr
    )
    assert writes(fake) == ["POST /gists"]

    same = share(fake, str(FIXTURE), "--no-thinking")
    assert same.exit_code == 0, same.output
    assert "gist updated (secret)" in same.stderr
    assert writes(fake) == ["POST /gists", f"PATCH /gists/{gist_id}"]


def test_an_old_record_whose_gist_cannot_tell_is_refused_naming_the_way_on(
    fake: FakeGitHub, env: dict
) -> None:
    """An old record whose gist holds no copy of the session (its page edited on GitHub):
    what its share left out cannot be known, so the share is refused, not taken as
    leaving out nothing; --allow-weaker-policy goes on."""
    assert share(fake, str(FIXTURE), "--no-thinking").exit_code == 0
    (gist_id,) = fake.gists
    files = fake.gists[gist_id]["files"]
    files["session.html"] = FOOTER_COPY.sub("", files["session.html"])
    as_written_by_0_2_0(env)

    refused = share(fake, str(FIXTURE))
    assert refused.exit_code == 1, refused.output
    assert (
        f"error: the share to gist {gist_id} of this session was made by a pi-session before "
        "0.2.25, which did not record what it left out, and the gist could not be read to "
        "tell (its page carries no copy of the session)" in refused.stderr
    )
    assert writes(fake) == ["POST /gists"]
    allowed = share(fake, str(FIXTURE), "--allow-weaker-policy")
    assert allowed.exit_code == 0, allowed.output
    assert writes(fake) == ["POST /gists", f"PATCH /gists/{gist_id}"]


@pytest.mark.parametrize(
    "blob",
    [
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"\xff" * 40,  # a gzip, damaged inside
        gzip.compress(b"x" * 10, mtime=0)[:-3],  # cut short; mtime=0 keeps xdist workers agreeing
        b"not gzip at all",
    ],
    ids=["damaged-inside", "cut-short", "not-gzip"],
)
def test_an_old_gist_whose_copy_is_damaged_is_refused_without_a_traceback(
    fake: FakeGitHub, env: dict, blob: bytes
) -> None:
    """A copy that starts as gzip but is damaged inside raised zlib.error, a traceback
    (review of session 70); each damage is a refusal that says why."""
    assert share(fake, str(FIXTURE)).exit_code == 0
    (gist_id,) = fake.gists
    files = fake.gists[gist_id]["files"]
    encoded = base64.b64encode(blob).decode()
    files["session.html"] = FOOTER_COPY.sub(
        lambda m: m.group(0).replace(m.group(1), encoded), files["session.html"]
    )
    as_written_by_0_2_0(env)
    refused = share(fake, str(FIXTURE))
    assert refused.exception is None or isinstance(refused.exception, SystemExit)
    assert refused.exit_code == 1, refused.output
    assert "tell (its page carries no copy of the session)" in refused.stderr


# --- F3: a damaged gists.json -------------------------------------------------------------------


def share_both(fake: FakeGitHub) -> dict[str, str]:
    """Share the two sessions; their gists by file."""
    for path in (FIXTURE, OTHER):
        assert share(fake, str(path)).exit_code == 0
    return dict(zip(("one", "two"), fake.gists, strict=True))


def test_a_state_file_cut_short_keeps_updating_the_gists_it_still_names(
    fake: FakeGitHub, env: dict
) -> None:
    """gists.json cut short (a full disk, a crash): it was set aside whole, and every
    session shared before got a second gist, with a warning only the first time."""
    gists = share_both(fake)
    path = state_file(env)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) - 40], encoding="utf-8")  # the end is lost

    first = share(fake, str(FIXTURE))
    assert first.exit_code == 0, first.output
    assert (
        f"warning: {path} is damaged: the records it still holds whole are used, this "
        "session's among them, and the damaged file is kept beside it as gists.json.corrupt"
    ) in first.stderr
    second = share(fake, str(OTHER))
    assert second.exit_code == 0, second.output
    assert "warning:" not in second.stderr
    assert list(fake.gists) == list(gists.values())  # no second gist
    assert writes(fake) == ["POST /gists", "POST /gists"]  # (unchanged: nothing sent)
    assert path.with_name("gists.json.corrupt").read_text(encoding="utf-8") == text[:-40]
    kept = json.loads(path.read_text(encoding="utf-8"))["gists"]
    assert {r["gist_id"] for h in kept.values() for r in h.values()} == set(gists.values())


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda text: text.replace('"version": 1', '"version": 1,'), id="comma"),
        pytest.param(lambda text: "\ufeff" + text, id="utf8-bom"),
    ],
)
def test_a_hand_edited_state_file_is_read_whole(fake: FakeGitHub, env: dict, damage) -> None:
    """A trailing comma left by a hand edit, a byte order mark from a Windows editor: the
    file was taken as unreadable, and each session got a second gist."""
    gists = share_both(fake)
    path = state_file(env)
    path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
    for source in (FIXTURE, OTHER):
        again = share(fake, str(source))
        assert again.exit_code == 0, again.output
        assert "gist unchanged (secret)" in again.stderr
        assert "warning:" not in again.stderr
    assert list(fake.gists) == list(gists.values())
    assert not path.with_name("gists.json.corrupt").exists()


def test_a_record_only_the_copy_set_aside_holds_is_used_until_its_gist_is_deleted(
    fake: FakeGitHub, env: dict
) -> None:
    """An earlier version set a damaged gists.json aside and started a new one: the
    session's record is looked for in the copy set aside, so its gist is updated, not a
    second one made; once that gist is deleted, it is not taken from there again."""
    assert share(fake, str(FIXTURE)).exit_code == 0
    (gist_id,) = fake.gists
    path = state_file(env)
    path.replace(path.with_name("gists.json.corrupt"))
    path.write_text('{"gists": {}, "version": 1}\n', encoding="utf-8")

    again = share(fake, str(FIXTURE), "--no-thinking")
    assert again.exit_code == 0, again.output
    assert "gist updated (secret)" in again.stderr
    assert list(fake.gists) == [gist_id]
    assert gist_id in path.read_text(encoding="utf-8")

    assert share(fake, "--delete", gist_id).exit_code == 0
    fake.clear_requests()
    fresh = share(fake, str(FIXTURE))
    assert fresh.exit_code == 0, fresh.output
    assert "gist created (secret)" in fresh.stderr and "is gone" not in fresh.stderr
    assert f"GET /gists/{gist_id}" not in [f"{r.method} {r.route}" for r in fake.requests]


def test_sessions_not_found_beside_a_copy_not_read_whole_are_warned_each_time(
    fake: FakeGitHub, env: dict
) -> None:
    """A copy set aside that could not be read whole may have held any session's record:
    only the first share after the damage said so; now each session found nowhere is."""
    path = state_file(env)
    path.parent.mkdir(parents=True)
    aside = path.with_name("gists.json.corrupt")
    aside.write_text('{"gists": {"127.0.0.1": {"s": {"gist_id": "ab', encoding="utf-8")
    for source in (FIXTURE, OTHER):
        result = share(fake, str(source))
        assert result.exit_code == 0, result.output
        assert (
            f"warning: {path} has no record of this session, and gists.json.corrupt beside "
            "it (set aside when it was damaged) could not be read whole: a new gist is "
            "created; if this session was shared before, that gist is still up"
        ) in result.stderr
    assert len(fake.gists) == 2


def test_a_record_cut_before_what_its_share_left_out_is_not_trusted(tmp_path: Path) -> None:
    """A record cut short may lack its ``given`` or ``cuts``: kept, a later share would not
    be refused what would undo them. The whole records before it are kept."""
    from exporter.publish.share_state import ShareState

    api = "https://api.github.com"
    path = tmp_path / "gists.json"
    state = ShareState(path)
    state.remember(api, "a", "1" * 32, given={"given_salt": "s", "given": ["d"], "cuts": []})
    state.remember(api, "b", "2" * 32, given={"given_salt": "s", "given": ["d"], "cuts": []})
    text = path.read_text(encoding="utf-8")
    cut = text.index('"given"', text.index('"b"'))  # b's record up to its "cuts"
    path.write_text(text[:cut], encoding="utf-8")
    damaged = ShareState(path)
    assert damaged.get(api, "a") == "1" * 32
    assert damaged.corrupt is True
    assert damaged.get(api, "b") is None


# --- F6: a state that cannot be written -----------------------------------------------------------


@pytest.fixture
def freeze_state(env: dict) -> Iterator[Callable[[], None]]:
    """Makes the state folder read-only once it exists (for root, whom permissions do not
    stop, immutable with chattr); undone after the test."""
    frozen: list[Path] = []

    def freeze() -> None:
        folder = state_file(env).parent
        if os.geteuid() != 0:
            folder.chmod(0o555)
        elif CHATTR is None or subprocess.run([CHATTR, "+i", str(folder)], check=False).returncode:
            pytest.skip("running as root where chattr +i is not available")
        frozen.append(folder)

    try:
        yield freeze
    finally:
        for folder in frozen:
            if os.geteuid() == 0:
                subprocess.run([str(CHATTR), "-i", str(folder)], check=False)
            else:
                folder.chmod(0o755)


def test_a_state_that_cannot_be_written_is_refused_before_sending(
    fake: FakeGitHub, env: dict, freeze_state: Callable[[], None]
) -> None:
    """gists.json that cannot be replaced: every share warned "sharing this session again
    will make a new gist", a share that changed nothing too, while the record still there
    made the next share update the same gist. Since stop 74 such a share is refused before
    anything is sent (what it leaves out could not be recorded), naming the folder."""
    assert share(fake, str(FIXTURE)).exit_code == 0
    (gist_id,) = fake.gists
    path = state_file(env)
    freeze_state()
    before = path.read_text(encoding="utf-8")
    gist_before = json.dumps(fake.gists[gist_id], sort_keys=True, default=str)

    changed = share(fake, str(FIXTURE), "--no-thinking")
    assert changed.exit_code == 2, changed.output
    assert f"the share state cannot be written in {path.parent}" in changed.stderr
    assert "nothing was uploaded" in changed.stderr
    assert "will make a new gist" not in changed.stderr
    assert list(fake.gists) == [gist_id]
    assert json.dumps(fake.gists[gist_id], sort_keys=True, default=str) == gist_before
    assert path.read_text(encoding="utf-8") == before
