"""Site, stop 68: a copied session's messages (and branches) are counted once in the index's
totals, as its tokens and cost are; a site folder another build holds is said by a type of
its own (``SiteBusy``), which ``publish --html`` catches instead of reading the message.

The fork is made by Pi itself (``SessionManager.forkFrom``, through node), then continued by
it; the sites are built by ``pi-session export --all`` into tmp_path.
"""

from __future__ import annotations

import fcntl
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.discover import encode_cwd
from tests.conftest import Build

ALPHA, BETA = "/home/dev/alpha", "/home/dev/beta"
SITE_LOCK = ".pi-session-site.lock"  # exporter.site.LOCK_NAME
MANIFEST = ".pi-session-site.json"  # exporter.site.MANIFEST_NAME


def _write(root: Path, cwd: str, name: str, lines: list[dict[str, Any]]) -> Path:
    """Session lines as Pi writes them, in ``cwd``'s folder under ``root``."""
    folder = root / encode_cwd(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _branched(build: type[Build], session_id: str, cwd: str) -> list[dict[str, Any]]:
    """8 messages on 2 branches: a prompt, a tool call and its result, an answer, a second
    prompt and its answer, then that prompt asked again from the answer before it."""
    return [
        build.header(session_id, cwd=cwd),
        build.user("a0000001", None, "list the files", second=1),
        build.assistant("a0000002", "a0000001", "looking", second=2, calls=[("call1", "bash")]),
        build.tool_result("a0000003", "a0000002", "call1", second=3),
        build.assistant("a0000004", "a0000003", "two files", second=4),
        build.user("a0000005", "a0000004", "open the first", second=5),
        build.assistant("a0000006", "a0000005", "opened", second=6),
        build.user("a0000007", "a0000004", "open the second", second=7),
        build.assistant("a0000008", "a0000007", "opened it", second=8),
    ]


def _unrelated(build: type[Build]) -> list[dict[str, Any]]:
    """2 messages on 1 branch, of another session."""
    return [
        build.header("u0000000-0000-4000-8000-000000000009", cwd=ALPHA),
        build.user("b0000001", None, "hello", second=20),
        build.assistant("b0000002", "b0000001", "hi", second=21),
    ]


#: Pi's /fork of a session into another project (``SessionManager.forkFrom``: a new header
#: naming the source, every entry copied as it is), then one more prompt and answer in it.
_FORK_AND_CONTINUE = """
import { pathToFileURL } from "node:url";
const [pkg, source, cwd, dir] = process.argv.slice(2);
const { SessionManager } = await import(pathToFileURL(pkg).href);
const sm = SessionManager.forkFrom(source, cwd, dir);
sm.appendMessage({ role: "user", content: "and now the third", timestamp: 1735689630000 });
sm.appendMessage({
  role: "assistant", content: [{ type: "text", text: "third opened" }],
  api: "anthropic-messages", provider: "anthropic", model: "claude-x",
  usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15,
           cost: { input: 0.005, output: 0.005, cacheRead: 0, cacheWrite: 0, total: 0.01 } },
  stopReason: "stop", timestamp: 1735689631000,
});
console.log(sm.getSessionFile());
"""


def _site(root: Path, out: Path) -> Result:
    args = ["export", "--all", "--sessions-dir", str(root), "-o", str(out), "-j", "1"]
    result = CliRunner().invoke(cli, args)
    assert "Traceback" not in result.output, result.output
    return result


def _built(root: Path, out: Path) -> str:
    result = _site(root, out)
    assert result.exit_code == 0, result.output
    return (out / "index.html").read_text(encoding="utf-8")


def _fact(html: str, name: str) -> str:
    found = re.search(rf"<dt>{name}</dt><dd>(.*?)</dd>", html)
    assert found is not None, name
    return re.sub(r"<[^>]+>", "", found.group(1))


def _project_messages(html: str, name: str) -> str:
    """The Messages cell of a project's row in the index's Projects table."""
    found = re.search(rf">{re.escape(name)}</a></th><td>[^<]*</td><td>([^<]*)</td>", html)
    assert found is not None, name
    return found.group(1)


def _row_counts(html: str, session_id: str) -> list[str]:
    """The Messages and Branches cells of the session's row."""
    code = f"<code>{re.escape(session_id)}</code>"
    row = re.search(rf"<tr data-i=(?:(?!</tr>).)*{code}.*?</tr>", html)
    assert row is not None, session_id
    return re.findall(r'data-unit="(?:messages?|branch(?:es)?)">([^<]*)<', row.group(0))


@pytest.fixture
def forked(
    tmp_path: Path, build: type[Build], pi_pkg: Path, node_runner: Callable[..., str]
) -> tuple[Path, Path, Path]:
    """A sessions folder: a branched session of alpha, Pi's fork of it into beta continued
    there, and an unrelated session of alpha: (the folder, the source, the fork)."""
    root = tmp_path / "sessions"
    source = _write(root, ALPHA, "2025-01-01T00-00-00-000Z_s1.jsonl", _branched(build, "s1", ALPHA))
    _write(root, ALPHA, "2025-01-01T00-00-20-000Z_u.jsonl", _unrelated(build))
    script = tmp_path / "fork.mjs"
    script.write_text(_FORK_AND_CONTINUE, encoding="utf-8")
    folder = root / encode_cwd(BETA)
    said = node_runner([str(script), str(pi_pkg), str(source), BETA, str(folder)])
    fork = Path(said.strip().splitlines()[-1])
    lines = [json.loads(line) for line in fork.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["parentSession"] == str(source) and len(lines) == 1 + 8 + 2, lines
    return root, source, fork


# --- 1. a copied session's messages counted once ------------------------------------------------


def test_a_forked_sessions_messages_and_branches_are_counted_once(
    tmp_path: Path, forked: tuple[Path, Path, Path]
) -> None:
    """Pi's fork holds the 8 messages of its source and 2 of its own: the index said
    "20 in 5 branches" (and beta 10 messages in the Projects table), where its tokens and
    cost counted each turn once, as its footer promises. The fork's own row still says what
    its file holds."""
    root, _source, fork = forked
    html = _built(root, tmp_path / "site")
    # 8 (the source) + 2 (the unrelated session) + 2 (the fork's own); the source's 2
    # branches, the unrelated one, and the fork's line that goes on (its other, copied, not)
    assert _fact(html, "Messages") == "12 in 4 branches", _fact(html, "Messages")
    assert _project_messages(html, "~/alpha") == "10"
    assert _project_messages(html, "~/beta") == "2"
    assert re.search(r'<tr class="total"><th scope="row">Total</th><td>3</td><td>12</td>', html)
    fork_id = json.loads(fork.read_text(encoding="utf-8").splitlines()[0])["id"]
    assert _row_counts(html, fork_id) == ["10", "2"]  # what the file holds
    # tokens, as before: each turn once (15 tokens a turn: 4 + 1 + 1)
    assert _fact(html, "Tokens") == "90"


def test_a_whole_copy_adds_no_messages_nor_branches(tmp_path: Path, build: type[Build]) -> None:
    """The same file in a second project folder (a moved project's copy): "16 in 4
    branches" for one session of 8 messages on 2 branches."""
    root = tmp_path / "sessions"
    source = _write(root, ALPHA, "2025-01-01T00-00-00-000Z_s1.jsonl", _branched(build, "s1", ALPHA))
    moved = root / "--home-dev-alpha-moved--"
    moved.mkdir()
    shutil.copy2(source, moved / source.name)
    html = _built(root, tmp_path / "site")
    assert _fact(html, "Messages") == "8 in 2 branches", _fact(html, "Messages")
    assert "1 a copy of another" in _fact(html, "Sessions")


def test_the_counts_hold_when_nothing_is_rendered_and_after_an_older_manifest(
    tmp_path: Path, forked: tuple[Path, Path, Path]
) -> None:
    """The totals of a rebuild come from the manifest: the same without rendering, and a
    manifest of before (no message keys) renders its pages again to count them once."""
    root, _source, _fork = forked
    site = tmp_path / "site"
    _built(root, site)
    again = _site(root, site)
    assert "0 rendered, 3 unchanged" in again.output, again.output
    html = (site / "index.html").read_text(encoding="utf-8")
    assert _fact(html, "Messages") == "12 in 4 branches"
    manifest = json.loads((site / MANIFEST).read_text(encoding="utf-8"))
    for entry in manifest["sessions"].values():
        del entry["turns"]["messages"]
    (site / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    older = _site(root, site)
    assert "3 rendered, 0 unchanged" in older.output, older.output
    html = (site / "index.html").read_text(encoding="utf-8")
    assert _fact(html, "Messages") == "12 in 4 branches"


# --- 2. a busy site folder -----------------------------------------------------------------------


def test_a_site_folder_another_build_holds_is_said_by_its_type(
    tmp_path: Path, build: type[Build]
) -> None:
    """``publish --html`` told a busy site from the other refusals by the first words of
    its message; the build raises ``SiteBusy`` (a ``SiteError``, as before) and says that
    nothing was changed and what to do."""
    from exporter.site import SiteBusy, SiteError, build_site

    root = tmp_path / "sessions"
    source = _write(root, ALPHA, "s.jsonl", _unrelated(build))
    out = tmp_path / "site"
    out.mkdir()
    with open(out / SITE_LOCK, "a+b") as held:  # another build at work
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(SiteBusy) as raised:
            build_site([source], out, jobs=1)
        assert isinstance(raised.value, SiteError)
        said = f"another pi-session build is writing {out}; nothing was changed; run again"
        assert str(raised.value).startswith(said), raised.value
        result = _site(root, out)
        assert result.exit_code != 0 and said in result.output, result.output
    assert sorted(p.name for p in out.iterdir()) == [SITE_LOCK]  # nothing else written
    assert build_site([source], out, jobs=1).rendered == 1  # released: builds


def test_export_all_meeting_another_build_exits_2_not_1(tmp_path: Path, build: type[Build]) -> None:
    """`export --all` whose site folder another build holds exited 1, a usage error: the
    command was right, the folder cannot be written now (exit 2, as a full disk's; a
    publish meeting another's build is exit 3, a remote clash); nothing was changed."""
    root = tmp_path / "sessions"
    _write(root, ALPHA, "s.jsonl", _unrelated(build))
    out = tmp_path / "site"
    out.mkdir()
    with open(out / SITE_LOCK, "a+b") as held:  # another build at work
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        result = _site(root, out)
    assert result.exit_code == 2, result.output
    said = f"pi-session: error: another pi-session build is writing {out}; nothing was changed"
    assert said in result.stderr, result.stderr
    assert sorted(p.name for p in out.iterdir()) == [SITE_LOCK]


# --- 3. messages without a time of their own are counted in full ------------------------------


def _legacy_rollout(root: Path, session_id: str, stamp: str, prompts: list[str]) -> Path:
    """A Codex rollout of before September 2025: a bare header, then bare items the loader
    dates by the header's time (each line has no time of its own)."""
    folder = root / "2025" / "08" / "20"
    folder.mkdir(parents=True, exist_ok=True)
    lines: list[dict[str, Any]] = [{"id": session_id, "timestamp": stamp, "instructions": None}]
    for prompt in prompts:
        said = [{"type": "input_text", "text": prompt}]
        lines.append({"type": "message", "role": "user", "content": said})
        done = [{"type": "output_text", "text": "Done."}]
        lines.append({"type": "message", "role": "assistant", "content": done})
    path = folder / f"rollout-2025-08-20T13-20-47-{session_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_prompt_typed_again_in_one_legacy_codex_rollout_is_counted_each_time(
    tmp_path: Path,
) -> None:
    """Every line of a legacy rollout has its header's time, so "continue" typed three times
    (and its three alike answers) were one message: the index said "2 in 1 branch" over a
    row of 6."""
    root = tmp_path / "codex"
    stamp = "2025-08-20T13:20:47.060Z"
    _legacy_rollout(root, "c27a914d-0000-4000-8000-000000000001", stamp, ["continue"] * 3)
    html = _built(root, tmp_path / "site")
    assert _fact(html, "Messages") == "6 in 1 branch", _fact(html, "Messages")
    # another rollout begun at the same moment is no copy of it: its "continue" counts too
    _legacy_rollout(root, "c27a914d-0000-4000-8000-000000000002", stamp, ["continue"])
    html = _built(root, tmp_path / "site")
    assert _fact(html, "Messages") == "8 in 2 branches", _fact(html, "Messages")


def _undated(session_id: str, answer: str) -> list[dict[str, Any]]:
    """A session without ids or times: the loader's ids are the lines' positions."""
    said = [{"type": "text", "text": answer}]
    return [
        {"type": "session", "id": session_id, "cwd": ALPHA},
        {"type": "message", "message": {"role": "user", "content": "hi"}},
        {"type": "message", "message": {"role": "assistant", "content": said}},
        {"type": "message", "message": {"role": "user", "content": "thanks"}},
    ]


def test_two_undated_sessions_saying_the_same_at_the_same_place_are_both_counted(
    tmp_path: Path,
) -> None:
    """Two different undated sessions opening with "hi" and ending with "thanks": those
    were one message each (same words, same made-up id), "4 in 2 branches" for 6; and a
    site built so before is counted again, not read from its manifest."""
    root = tmp_path / "sessions"
    _write(root, ALPHA, "a.jsonl", _undated("sess-a", "Answer A about topic one"))
    _write(root, ALPHA, "b.jsonl", _undated("sess-b", "Totally different answer B"))
    site = tmp_path / "site"
    html = _built(root, site)
    assert _fact(html, "Messages") == "6 in 2 branches", _fact(html, "Messages")
    # a manifest whose message keys were made otherwise (no length stored with them) is
    # not trusted: its sessions are rendered again and counted as they are now
    manifest = json.loads((site / MANIFEST).read_text(encoding="utf-8"))
    for entry in manifest["sessions"].values():
        entry["turns"].pop("message_key_chars", None)
        entry["turns"]["messages"] = ["A" * 24 + " " + "B" * 24 + " " + "C" * 24]
    (site / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    again = _site(root, site)
    assert "2 rendered, 0 unchanged" in again.output, again.output
    html = (site / "index.html").read_text(encoding="utf-8")
    assert _fact(html, "Messages") == "6 in 2 branches", _fact(html, "Messages")
