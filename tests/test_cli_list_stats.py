"""`pi-session list` and `pi-session stats`: output, exit codes, one-line errors.

Exit codes: 0 loaded (maybe with warnings on stderr), 1 usage error, 2 unusable input.
Most tests use click's CliRunner; ``test_real_subprocess`` runs the installed command.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.discover import encode_cwd
from exporter.loader import load_session

STATS_KEYS = {
    "id",
    "name",
    "title",
    "cwd",
    "parent_session",
    "version",
    "path",
    "entries",
    "leaf_id",
    "active_path",
    "branches",
    "forks",
    "labels",
    "created",
    "started",
    "ended",
    "duration_seconds",
    "models",
    "models_never_answered",
    "messages",
    "compactions",
    "branch_summaries",
    "custom_messages",
    "errors",
    "aborted",
    "length_stops",
    "cost_note",
    "usage",
    "tools",
    "diagnostics",
}
USAGE_KEYS = {
    "turns",
    "input",
    "output",
    "cache_read",
    "cache_write",
    "total_tokens",
    "cost",
    "turns_without_usage",
}


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def assert_one_line_error(result: Result, code: int, *needles: str) -> None:
    assert result.exit_code == code, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pi-session: error: ")
    assert "Traceback" not in result.stderr + result.stdout
    for needle in needles:
        assert needle in lines[0]


# --- stats ------------------------------------------------------------------------------------


def test_stats_json_on_every_fixture(pi_fixture: Path) -> None:
    result = run("stats", str(pi_fixture), "--json")
    assert result.exit_code == 0
    assert result.stderr == ""  # real files load without warnings
    doc = json.loads(result.stdout)
    assert set(doc) == STATS_KEYS
    session = load_session(pi_fixture)
    assert doc["id"] == session.id and doc["path"] == str(pi_fixture)
    assert doc["entries"] == len(session.entries)
    kinds = [e.type for e in session.entries]
    assert doc["compactions"] == kinds.count("compaction")
    assert doc["branch_summaries"] == kinds.count("branch_summary")
    assert doc["custom_messages"] == kinds.count("custom_message")
    assert doc["leaf_id"] == session.leaf_id == doc["active_path"][-1]
    assert doc["active_path"] == session.active_path
    assert doc["branches"] == len(session.leaf_ids) == len(doc["usage"]["by_branch"])
    assert doc["forks"] == len(session.fork_ids)
    assert doc["labels"] == session.labels and doc["name"] == session.name
    assert doc["title"] == session.title
    assert doc["version"] == session.version
    assert sum(doc["messages"].values()) == sum(1 for _ in session.iter_messages())
    assert set(doc["models_never_answered"]) < set(doc["models"])  # someone answered
    assert doc["diagnostics"] == []
    usage = doc["usage"]
    assert set(usage) == {"all", "active_path", "by_model", "by_model_active_path", "by_branch"}
    assert set(usage["all"]) == set(usage["active_path"]) == USAGE_KEYS
    by_branch = usage["by_branch"]
    assert sum(b["entries"] for b in by_branch) == doc["entries"]
    assert math.isclose(sum(b["cost"] for b in by_branch), usage["all"]["cost"], abs_tol=1e-5)
    assert sum(b["turns"] for b in by_branch) == usage["all"]["turns"]
    assert sum(m["turns"] for m in usage["by_model"]) == usage["all"]["turns"]
    assert [b["active"] for b in by_branch] == [True] + [False] * (len(by_branch) - 1)
    assert by_branch[0]["leaf_id"] == doc["leaf_id"]
    assert all(set(t) == {"calls", "errors"} for t in doc["tools"].values())
    assert doc["started"] <= doc["ended"]


def test_stats_text(fixtures_dir: Path) -> None:
    result = run("stats", str(fixtures_dir / "pi-branched-2.jsonl"))
    assert result.exit_code == 0 and result.stderr == ""
    out = result.stdout
    assert out.splitlines()[0] == "Refactor auth module"
    for needle in (
        "01a229f4-a346-7019-99dc-c72325edfccd",
        "(file v3)",
        "/home/dev/projects/webapp",
        "Usage on this path (root → leaf)",
        "Usage on all branches",
        "Branches",
        "Tools",
        "tree      7 branches (5 forks), 1 compaction, 2 branch summaries",
        "$14.38",
    ):
        assert needle in out, needle


def test_the_page_markdown_and_stats_count_entries_and_the_tree_alike(pi_fixture: Path) -> None:
    """The header's entries did not add up (every-entry-type: "25 · 8 tool results, 4
    assistant, 3 user, 1 shell command"), and the three outputs' tree lines had drifted
    apart: "0 labels" in one, forks only in another, custom messages left out of the
    Markdown (review 2026-12-02)."""
    import html

    from exporter.markdown_doc import session_markdown
    from exporter.render import render_session

    session = load_session(pi_fixture)
    stats_out = run("stats", str(pi_fixture)).stdout
    entries = re.search(r"^  entries   (.*)$", stats_out, re.M).group(1)
    tree = re.search(r"^  tree      (.*)$", stats_out, re.M).group(1)
    total, said = entries.split(" · ")
    counts = [int(n.replace(",", "")) for n in re.findall(r"(?:^|, )([\d,]+) ", said)]
    assert sum(counts) == int(total.replace(",", "")) == len(session.entries), entries
    assert not re.search(r"(^|[ (])0 ", tree), tree  # no count of none
    page = render_session(session)
    page_entries = re.search(r"<dt>Entries</dt><dd>(.*?)</dd>", page).group(1)
    page_tree = re.search(r"<dt>Tree</dt><dd>(.*?)</dd>", page).group(1)
    assert (html.unescape(page_entries), html.unescape(page_tree)) == (entries, tree)
    markdown = session_markdown(session)
    assert f"- **Tree:** {tree}\n" in markdown
    assert f"- **Entries:** {total} · " in markdown  # as the page writes it


def test_stats_leaf_option(fixtures_dir: Path) -> None:
    path = str(fixtures_dir / "every-entry-type.jsonl")
    default = json.loads(run("stats", path, "--json").stdout)
    assert default["leaf_id"] == "e25" and default["active_path"] == ["e01", "e24", "e25"]
    chosen = json.loads(run("stats", path, "--json", "--leaf", "e23").stdout)
    assert chosen["leaf_id"] == "e23" and len(chosen["active_path"]) == 23
    assert chosen["usage"]["active_path"]["turns"] == 4
    assert chosen["usage"]["all"] == default["usage"]["all"]
    assert [b["active"] for b in chosen["usage"]["by_branch"]] == [True, False]


def test_stats_unknown_leaf_is_a_usage_error(fixtures_dir: Path) -> None:
    result = run("stats", str(fixtures_dir / "every-entry-type.jsonl"), "--leaf", "nope")
    assert_one_line_error(result, 1, "no entry with id 'nope'")
    assert result.stdout == ""
    ambiguous = run("stats", str(fixtures_dir / "every-entry-type.jsonl"), "--leaf", "e2")
    assert_one_line_error(ambiguous, 1, "ambiguous", "e20", "e25")
    empty = run("stats", str(fixtures_dir / "every-entry-type.jsonl"), "--leaf", "")
    assert_one_line_error(empty, 1, "--leaf needs an entry id")  # was: the default leaf


def test_stats_demo() -> None:
    result = run("stats", "--demo", "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["path"].endswith("demo-session.jsonl") and doc["branches"] > 1


def test_stats_warnings_go_to_stderr_and_exit_0(build, write_session) -> None:
    path = write_session(
        [
            build.header(),
            build.user("u1", None),
            "{broken",
            build.user("u2", "missing-parent"),
            build.assistant("a1", "u2"),
            '{"type":"message","id":"cut',
        ],
        final_newline=False,
    )
    result = run("stats", str(path), "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)  # stdout stays clean JSON
    assert sorted((d["line"], d["kind"]) for d in doc["diagnostics"]) == [
        (3, "invalid-json"),
        (4, "orphan"),
        (6, "truncated"),
    ]
    warnings = result.stderr.splitlines()
    assert len(warnings) == 3
    assert all(w.startswith("pi-session: warning: line ") for w in warnings)
    assert any("[truncated]" in w for w in warnings)
    text = run("stats", str(path))
    assert text.exit_code == 0 and text.stderr == result.stderr


def test_stats_many_warnings_are_capped(build, write_session) -> None:
    path = write_session([build.header(), build.user("u1", None)] + ["{bad"] * 30)
    result = run("stats", str(path))
    assert result.exit_code == 0
    lines = result.stderr.splitlines()
    assert len(lines) == 21 and lines[-1] == "pi-session: warning: … and 10 more"


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"", "empty"),
        (b"\n\n  \n", "empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00binary\xff\xfe", "not a Pi session"),
        (b'{"name": "pkg",\n "version": "1.0"}\n', "not a Pi session"),
        (b'{"type":"user","uuid":"x"}\n', "not a Pi session"),
    ],
    ids=["empty", "blank", "binary", "json-document", "other-jsonl"],
)
def test_stats_unusable_input_is_exit_2_one_line(tmp_path: Path, content: bytes, needle: str):
    path = tmp_path / "input.jsonl"
    path.write_bytes(content)
    for args in (("stats", str(path)), ("stats", str(path), "--json")):
        result = run(*args)
        assert_one_line_error(result, 2, needle, str(path))
        assert result.stdout == ""


def test_stats_missing_session_is_exit_2(tmp_path: Path) -> None:
    result = run("stats", str(tmp_path / "nope.jsonl"), "--sessions-dir", str(tmp_path))
    assert_one_line_error(result, 2, "no session file or session id matches")
    result = run("stats", str(tmp_path), "--sessions-dir", str(tmp_path))
    assert_one_line_error(result, 2, "is not a file")


def test_stats_resolves_ids_and_the_latest_session(
    tmp_path: Path, build, dump, monkeypatch
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    root = tmp_path / "agent" / "sessions"
    folder = root / encode_cwd(str(project))
    folder.mkdir(parents=True)
    for n, session_id in enumerate(["0a1b2c3d-1111", "0a1b9999-2222"]):
        path = folder / f"2025-01-0{n + 1}T00-00-00-000Z_{session_id}.jsonl"
        path.write_bytes(
            dump([build.header(session_id=session_id), build.user("u", None, session_id)])
        )
        os.utime(path, (1_700_000_000 + n, 1_700_000_000 + n))
    monkeypatch.chdir(project)
    env = {"PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    latest = run("stats", "--json", env=env)
    assert latest.exit_code == 0 and json.loads(latest.stdout)["id"] == "0a1b9999-2222"
    by_prefix = run("stats", "0a1b2", "--json", env=env)
    assert json.loads(by_prefix.stdout)["id"] == "0a1b2c3d-1111"
    via_option = run("stats", "0a1b2", "--json", "--sessions-dir", str(root))
    assert json.loads(via_option.stdout)["id"] == "0a1b2c3d-1111"
    ambiguous = run("stats", "0a1b", env=env)
    assert_one_line_error(ambiguous, 2, "ambiguous", "0a1b2c3d-1111", "0a1b9999-2222")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    none = run("stats", env=env)
    assert_one_line_error(none, 2, "no Pi sessions for", str(elsewhere))
    # run from another folder, a first-time user met a bare "no sessions": say where they are
    assert "; 2 sessions of other projects are there: `pi-session list --all` shows them" in (
        none.stderr
    )
    search = run("search", "0a1b", env=env)
    assert_one_line_error(search, 2, "2 sessions of other projects are there: --all searches")
    assert "--all searches" not in run("search", "x", "--sessions-dir", str(elsewhere)).stderr


def test_an_unreadable_latest_session_falls_back_to_the_newest_readable(
    tmp_path: Path, build, dump, monkeypatch
) -> None:
    """With SESSION left out, an empty or broken latest file (one Pi is creating, a damaged
    copy) made every command fail, though the session before it was right there."""
    project = tmp_path / "proj"
    project.mkdir()
    folder = tmp_path / "agent" / "sessions" / encode_cwd(str(project))
    folder.mkdir(parents=True)
    good = folder / "2025-01-01T00-00-00-000Z_good-1111.jsonl"
    good.write_bytes(dump([build.header(session_id="good-1111"), build.user("u", None, "g")]))
    broken = folder / "2025-01-03T00-00-00-000Z_broken-3333.jsonl"
    broken.write_bytes(b"\x00\x01 garbage\n")
    empty = folder / "2025-01-02T00-00-00-000Z_empty-2222.jsonl"
    empty.write_bytes(b"")
    for n, path in enumerate([good, empty, broken]):
        os.utime(path, (1_700_000_000 + n, 1_700_000_000 + n))
    before = {p: p.read_bytes() for p in (good, empty, broken)}
    monkeypatch.chdir(project)
    env = {"PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    result = run("stats", "--json", env=env)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["id"] == "good-1111"
    assert result.stderr.count("\n") == 1, result.stderr  # one warning line
    assert result.stderr.startswith("pi-session: warning: the latest session cannot be read (")
    assert "broken-3333.jsonl" in result.stderr and "not a Pi session" in result.stderr
    assert f"using the newest one that can: {good.name} (pass SESSION to choose)" in result.stderr
    exported = run("export", "-o", str(tmp_path / "page.html"), env=env)
    assert exported.exit_code == 0 and "good-1111" in (tmp_path / "page.html").read_text(
        encoding="utf-8"
    )
    # a SESSION named is never replaced by another one
    named = run("stats", str(broken), env=env)
    assert_one_line_error(named, 2, "not a Pi session")
    # none readable: the latest one's error, as before
    good.write_bytes(b"")
    os.utime(good, (1_700_000_000, 1_700_000_000))
    none = run("stats", env=env)
    assert_one_line_error(none, 2, "broken-3333.jsonl", "not a Pi session")
    assert {p: p.read_bytes() for p in (empty, broken)} == {p: before[p] for p in (empty, broken)}


def test_unknown_option_is_a_usage_error_exit_1(fixtures_dir: Path) -> None:
    """Exit 1 is for usage errors, 2 for unusable input (cli.py's own contract).

    Product bug: click reports usage errors (unknown option, missing value) with its default
    exit code 2, so a script cannot tell a typo from a broken session file.
    """
    result = run("stats", str(fixtures_dir / "every-entry-type.jsonl"), "--no-such-option")
    assert result.exit_code == 1
    result = run("stats", str(fixtures_dir / "every-entry-type.jsonl"), "--leaf")
    assert result.exit_code == 1


def test_stats_json_with_lone_surrogates(build, write_session) -> None:
    """Pi writes lone surrogates as ``\\udXXX`` escapes; they must survive ``stats --json``.

    Product bug: the JSON is printed with ensure_ascii=False, so the surrogate reaches the
    UTF-8 stream and the command dies with "text encoding problem" (exit 2); `list` too.
    """
    path = write_session(
        [
            build.header(),
            build.user("u1", None, "prompt \ud83d alone"),
            build.name("n1", "u1", "name \udc00 here"),
            build.label("l1", "n1", "u1", "lab\ud800el"),
        ]
    )
    result = run("stats", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["name"] == "name \udc00 here"
    assert doc["labels"] == {"u1": "lab\ud800el"}
    text = run("stats", str(path))
    assert text.exit_code == 0, text.stderr
    listed = run("list", "--all", "--json", "--sessions-dir", str(path.parent))
    assert listed.exit_code == 0, listed.stderr
    assert json.loads(listed.stdout)["name"] == "name \udc00 here"
    table = run("list", "--all", "--sessions-dir", str(path.parent))
    assert table.exit_code == 0, table.stderr


def test_stats_counts_answers_cut_off_at_the_length_limit(build, write_session) -> None:
    """The count was computed and shown nowhere (code review 2026-12-01)."""
    path = write_session(
        [
            build.header(),
            build.user("u1", None, "write a long essay"),
            build.assistant("a1", "u1", "It begins", stopReason="length"),
            build.user("u2", "a1", "go on"),
            build.assistant("a2", "u2", "and ends", stopReason="length"),
        ]
    )
    assert json.loads(run("stats", str(path), "--json").stdout)["length_stops"] == 2
    assert "; 2 cut off at the length limit\n" in run("stats", str(path)).stdout


# --- list -------------------------------------------------------------------------------------


@pytest.fixture
def sessions(tmp_path: Path, fixtures_dir: Path) -> dict:
    """Fixture copies laid out like ~/.pi/agent/sessions for two projects."""
    project = tmp_path / "home" / "dev" / "projects" / "webapp"
    other = tmp_path / "work" / "other"
    project.mkdir(parents=True)
    other.mkdir(parents=True)
    root = tmp_path / "agent" / "sessions"
    layout = {
        project: ["pi-branched-1.jsonl", "pi-branched-2.jsonl", "every-entry-type.jsonl"],
        other: ["pi-large-session.jsonl"],
    }
    copies = {}
    mtime = 1_700_000_000
    for cwd, names in layout.items():
        folder = root / encode_cwd(str(cwd))
        folder.mkdir(parents=True)
        for name in names:
            copy = folder / f"2025-01-01T00-00-00-000Z_{name.removesuffix('.jsonl')}.jsonl"
            copy.write_bytes((fixtures_dir / name).read_bytes())
            mtime += 100
            os.utime(copy, (mtime, mtime))
            copies[name] = copy
    return {"root": root, "project": project, "other": other, "copies": copies}


def test_list_json_for_a_project(sessions: dict) -> None:
    result = run("list", "--cwd", str(sessions["project"]), "--sessions-dir", str(sessions["root"]))
    assert result.exit_code == 0
    result = run(
        "list", "--cwd", str(sessions["project"]), "--sessions-dir", str(sessions["root"]), "--json"
    )
    assert result.exit_code == 0 and result.stderr == ""
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 3
    by_path = {row["path"]: row for row in rows}
    names = ("pi-branched-1.jsonl", "pi-branched-2.jsonl", "every-entry-type.jsonl")
    assert set(by_path) == {str(sessions["copies"][n]) for n in names}
    modified = [row["modified"] for row in rows]
    assert modified == sorted(modified, reverse=True)  # newest activity first
    for path, row in by_path.items():
        stats = json.loads(run("stats", path, "--json").stdout)
        assert row["id"] == stats["id"]
        assert row["name"] == stats["name"]
        assert row["messages"] == sum(stats["messages"].values())
        assert row["branches"] == stats["branches"]
        assert row["entries"] == stats["entries"]
        assert math.isclose(row["cost"], stats["usage"]["all"]["cost"], abs_tol=1e-5)
        all_usage = stats["usage"]["all"]
        assert row["tokens"] == {k: all_usage[k] for k in row["tokens"]}
        assert row["error"] is None


def test_list_since_keeps_the_sessions_active_since_then(sessions: dict) -> None:
    every = ["list", "--all", "--sessions-dir", str(sessions["root"]), "--json"]
    rows = [json.loads(line) for line in run(*every).stdout.splitlines()]
    moments = sorted(row["modified"] for row in rows)
    assert len(set(moments)) >= 3  # the cut below falls between sessions
    cut = moments[len(moments) // 2]
    kept = [json.loads(line) for line in run(*every, "--since", cut).stdout.splitlines()]
    assert [row["path"] for row in kept] == [row["path"] for row in rows if row["modified"] >= cut]
    assert 0 < len(kept) < len(rows)
    none = run(*every, "--since", "2999-01-01")
    assert none.stdout == "" and "active since 2999-01-01" in none.stderr
    bad = run(*every, "--since", "soon")
    assert bad.exit_code == 1 and "--since" in bad.stderr


def _pick(*args: str, answer: str) -> Result:
    return CliRunner().invoke(cli, list(args), input=answer, catch_exceptions=False)


def test_pick_offers_this_folder_s_sessions_newest_first(sessions: dict, monkeypatch) -> None:
    root = str(sessions["root"])
    monkeypatch.chdir(sessions["project"])
    newest = [json.loads(line)["id"] for line in run("list", "--sessions-dir", root, "--json")
              .stdout.splitlines()]  # fmt: skip
    assert len(newest) == 3
    for number in (1, 2, 3):
        result = _pick("stats", "--pick", "--sessions-dir", root, "--json", answer=f"{number}\n")
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["id"] == newest[number - 1]
        assert "Sessions of this folder" in result.stderr and "Session number [1]" in result.stderr
    # a piped answer is not echoed: the prompt's line ends, or what follows was on it
    piped = subprocess.run(
        [sys.executable, "-m", "exporter", "stats", "--pick", "--sessions-dir", root, "--json"],
        input="2\n", capture_output=True, text=True, encoding="utf-8", timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )  # fmt: skip
    assert piped.returncode == 0 and piped.stderr.endswith("Session number [1]: \n"), piped
    page = _pick("export", "--pick", "--sessions-dir", root, "-o", "-", answer="\n")
    assert page.exit_code == 0 and page.stdout.startswith("<!DOCTYPE html>")  # list on stderr
    assert newest[0] in page.stdout


def test_pick_falls_back_to_every_project_and_needs_an_answer(
    sessions: dict, tmp_path: Path, monkeypatch
) -> None:
    root = str(sessions["root"])
    elsewhere = tmp_path / "no-sessions-here"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = _pick("stats", "--pick", "--sessions-dir", root, "--json", answer="4\n")
    assert result.exit_code == 0 and "Sessions of any project" in result.stderr
    assert json.loads(result.stdout)["id"]
    unanswered = _pick("stats", "--pick", "--sessions-dir", root, answer="")
    assert unanswered.exit_code == 1 and unanswered.stdout == ""
    assert unanswered.stderr.splitlines()[-1].endswith(
        "pi-session: error: --pick needs the session's number (nothing was read)"
    )
    assert_one_line_error(_pick("stats", "--pick", "--demo", answer="1\n"), 1, "not two")
    # a wrong piped answer is one error: click's prompt said it, asked again, met the end of
    # the input and said "nothing was read" too
    for answer, said in (("abc\n", "'abc'"), ("99\n", "'99'"), ("0", "'0'"), ("-1\n", "'-1'")):
        wrong = _pick("stats", "--pick", "--sessions-dir", root, answer=answer)
        assert wrong.exit_code == 1 and wrong.stdout == "", wrong.output
        errors = [line for line in wrong.stderr.splitlines() if "rror" in line]
        assert errors == [
            f"pi-session: error: --pick: {said} is not a session number from 1 to 4"
        ], wrong.stderr


def test_list_all_projects_and_default_cwd(sessions: dict, monkeypatch) -> None:
    env = {"PI_CODING_AGENT_DIR": str(sessions["root"].parent)}
    everything = run("list", "--all", "--json", env=env)
    assert everything.exit_code == 0
    rows = [json.loads(line) for line in everything.stdout.splitlines()]
    assert len(rows) == 4
    assert {r["cwd"] for r in rows} == {  # the header's cwd, not the folder's
        "/home/dev/projects/webapp",
        "/home/alice/proj",
        "/Users/badlogic/workspaces/pi-mono",
    }
    monkeypatch.chdir(sessions["other"])
    here = run("list", "--json", env=env)
    assert [json.loads(line)["id"] for line in here.stdout.splitlines()] == [
        "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
    ]
    table = run("list", "--all", env=env)
    assert table.exit_code == 0
    lines = table.stdout.splitlines()
    assert lines[0].split()[:2] == ["last", "activity"] and "project" in lines[0]
    assert len(lines) == 2 + 4
    assert any("Refactor auth module" in line for line in lines)
    assert any("Sampler session" in line and "$0.136" in line for line in lines)


def test_an_unreadable_project_folder_is_named_not_left_out_unsaid(
    sessions: dict, monkeypatch
) -> None:
    """Another user's project folder: its sessions cannot be listed, exported or published,
    and the listing says so instead of looking complete."""
    locked = sessions["root"] / encode_cwd(str(sessions["other"]))
    if os.geteuid() != 0:
        locked.chmod(0)
    else:  # root reads every folder: refuse this one as the kernel would refuse a user
        real_scandir = os.scandir

        def scandir(path: Any = ".") -> Any:
            if Path(path) == locked:
                raise PermissionError(13, "Permission denied", str(path))
            return real_scandir(path)

        monkeypatch.setattr(os, "scandir", scandir)
    try:
        listed = run("list", "--all", "--json", "--sessions-dir", str(sessions["root"]))
    finally:
        locked.chmod(0o755)
    assert listed.exit_code == 0
    assert len(listed.stdout.splitlines()) == 3  # the readable project's sessions
    assert f"warning: cannot read {locked} (Permission denied)" in listed.stderr
    assert "its sessions are left out" in listed.stderr


def test_list_empty_and_conflicting_options(tmp_path: Path) -> None:
    empty = run("list", "--sessions-dir", str(tmp_path), "--cwd", str(tmp_path))
    assert empty.exit_code == 0 and empty.stdout == ""
    # said as the other commands say it, without "error:" (tests/test_cli_consistency.py:
    # with other projects' sessions there, how many, and "--all lists them")
    assert empty.stderr == f"pi-session: no Pi sessions for {tmp_path} under {tmp_path}\n"
    as_json = run("list", "--sessions-dir", str(tmp_path), "--all", "--json")
    assert as_json.exit_code == 0 and as_json.stdout == ""
    assert "no Pi sessions for any project" in as_json.stderr  # a script's stdout stays empty
    # --all --cwd X is X's sessions, as in every command (review 150, item 1)
    both = run("list", "--sessions-dir", str(tmp_path), "--cwd", str(tmp_path), "--all")
    assert both.exit_code == 0 and both.stdout == "" and both.stderr == empty.stderr


def test_list_with_a_missing_agent_dir_is_an_error_as_with_sessions_dir(tmp_path: Path) -> None:
    """A mistyped PI_CODING_AGENT_DIR made `list --json` print nothing and exit 0: a script
    could not tell it from no sessions. An agent folder without sessions yet is no error."""
    typo = run("list", "--all", "--json", env={"PI_CODING_AGENT_DIR": str(tmp_path / "agnet")})
    assert_one_line_error(typo, 2, "PI_CODING_AGENT_DIR", "does not exist")
    fresh = run("list", "--all", "--json", env={"PI_CODING_AGENT_DIR": str(tmp_path)})
    assert fresh.exit_code == 0 and fresh.stdout == "" and "no Pi sessions" in fresh.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["list"], ["stats"], ["stats", "--all"], ["export"], ["export", "--all", "-o", "site"],
        ["search", "x"], ["redact"], ["share", "--dry-run"], ["watch"],
        ["publish", "me/ds", "--dry-run"], ["export", "--pick"],
    ],
    ids=lambda c: " ".join(c),
)  # fmt: skip
def test_a_missing_sessions_dir_is_named_by_every_command(
    command: list[str], tmp_path: Path, monkeypatch
) -> None:
    """Only `list` said "--sessions-dir: /typo does not exist"; the others said "no Pi
    sessions for <cwd> under /typo", which reads as an empty folder."""
    monkeypatch.chdir(tmp_path)
    result = run(*command, "--sessions-dir", str(tmp_path / "sesions"))
    assert_one_line_error(result, 2, f"--sessions-dir: {tmp_path / 'sesions'} does not exist")
    assert not (tmp_path / "site").exists()


# --- a real process -----------------------------------------------------------------------------


def test_real_subprocess(sessions: dict, tmp_path: Path, build, dump) -> None:
    """The installed entry point: clean stdout, warnings on stderr, exit codes, no traceback."""
    command = [sys.executable, "-m", "exporter"]
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(sessions["root"].parent), "PYTHONUTF8": "1"}
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(dump([build.header(), build.user("u1", None), "{bad"]) + b'{"type":')
    done = subprocess.run(
        [*command, "stats", str(damaged), "--json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["entries"] == 1
    warnings = done.stderr.splitlines()
    assert len(warnings) == 2
    assert warnings[0].startswith("pi-session: warning: line 3: not valid JSON (")
    assert warnings[0].endswith("[invalid-json]")
    assert warnings[1] == (
        "pi-session: warning: line 4: last line is cut off "
        "(the session was still being written?) [truncated]"
    )
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    done = subprocess.run(
        [*command, "stats", str(empty)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"pi-session: error: {empty}: file is empty, not a Pi session\n"
    done = subprocess.run(
        [*command, "list", "--all", "--json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == ""
    assert len(done.stdout.splitlines()) == 4


def test_cli_never_touches_the_input(sessions: dict) -> None:
    """`stats` and `list` read the files only: same bytes, same mtime (v1 files included)."""
    copies = list(sessions["copies"].values())

    def fingerprint() -> dict:
        return {p: (p.read_bytes(), p.stat().st_mtime_ns, p.stat().st_size) for p in copies}

    before = fingerprint()
    for path in copies:
        assert run("stats", str(path), "--json").exit_code == 0
        assert run("stats", str(path)).exit_code == 0
    assert run("list", "--all", "--json", "--sessions-dir", str(sessions["root"])).exit_code == 0
    assert run("list", "--all", "--sessions-dir", str(sessions["root"])).exit_code == 0
    assert fingerprint() == before


# --- terminal output from untrusted session text -------------------------------------------

HOSTILE = "\x1b]0;TITLE\x07\x1b[2J\u202eevil\x9b31m"
SHOWN = "\u241b]0;TITLE\u2407\u241b[2J\u27e8U+202E\u27e9evil\u27e8U+009B\u27e931m"


def test_list_and_stats_show_escape_sequences_as_signs(tmp_path: Path, build, dump) -> None:
    """A session's name, project, model and tool names reached the terminal raw: an OSC
    retitled the window, ``ESC[2J`` cleared the screen. They are shown as signs, and JSON
    output escapes the C1 and bidi controls ``json.dumps`` leaves raw."""
    root = tmp_path / "sessions"
    folder = root / "--p--"
    folder.mkdir(parents=True)
    lines = [
        build.header(session_id="h1", cwd=f"/p/{HOSTILE}"),
        build.entry("session_info", "n", None, 1, name=f"name {HOSTILE}"),
        build.user("u", "n", "hi"),
        build.assistant("a", "u", model=f"m{HOSTILE}", calls=[("c1", f"tool{HOSTILE}")]),
    ]
    path = folder / "2025-01-01T00-00-00-000Z_h1.jsonl"
    path.write_bytes(dump(lines))
    listed = run("list", "--all", "--sessions-dir", str(root))
    stats = run("stats", str(path))
    for result in (listed, stats):
        assert result.exit_code == 0, result.output
        assert not any(c in result.stdout for c in "\x1b\x07\x9b\u202e"), repr(result.stdout)
    assert f"name {SHOWN}"[:40] in listed.stdout
    assert f"name {SHOWN}" in stats.stdout and f"tool{SHOWN}" in stats.stdout
    for args in (
        ["list", "--all", "--json", "--sessions-dir", str(root)],
        ["stats", "--json", str(path)],
    ):
        document = run(*args)
        assert not any(c in document.stdout for c in "\x1b\x07\x9b\u202e")
        parsed = json.loads(
            document.stdout.splitlines()[0] if args[0] == "list" else document.stdout
        )
        assert parsed["name"] == f"name {HOSTILE}"  # the same value, escaped
    ambiguous = [
        build.header(session_id="h2"),
        build.user(f"x{HOSTILE}1", None),
        build.user(f"x{HOSTILE}2", None),
    ]
    twice = tmp_path / "twice.jsonl"
    twice.write_bytes(dump(ambiguous))
    error = run("stats", str(twice), "--leaf", "x")
    assert error.exit_code == 1 and "\x1b" not in error.stderr and "\u241b" in error.stderr


def test_newlines_in_titles_ids_and_file_names_stay_on_one_line(
    tmp_path: Path, build, dump
) -> None:
    """A review: `stats` printed the title raw, so a name holding newlines could fake its
    header lines (and a pasted first prompt flooded it), and `list` printed the id from a
    file name with a newline, splitting the table row."""
    root = tmp_path / "sessions"
    folder = root / "--p--"
    folder.mkdir(parents=True)
    faked = "Real\n  id        fake-id\n  project   /fake"
    named = folder / "2025-01-01T00-00-00-000Z_named.jsonl"
    named.write_bytes(
        dump([build.header(session_id="h\n1"), build.name("n", None, faked), build.user("u", "n")])
    )
    stats = run("stats", str(named))
    assert stats.exit_code == 0, stats.output
    head = stats.stdout.splitlines()
    assert head[0] == "Real id fake-id project /fake"
    assert [line.split()[0] for line in head[1:3]] == ["id", "project"]
    assert head[1].startswith("  id        h 1  ")
    prompt = folder / "2025-01-01T00-00-00-000Z_prompt.jsonl"
    prompt.write_bytes(dump([build.header(), build.user("u", None, "line one\nline two\n" * 50)]))
    first = run("stats", str(prompt)).stdout.splitlines()
    assert first[0].startswith("line one line two line one") and first[0].endswith("…")
    assert first[1].startswith("  id        ")
    newline_name = folder / "2025-01-01T00-00-00-000Z_new\nline.jsonl"
    newline_name.write_bytes(dump([build.header(session_id="x"), build.user("u", None)]))
    table = run("list", "--all", "--sessions-dir", str(root))
    assert table.exit_code == 0, table.output
    rows = table.stdout.splitlines()[2:]
    assert len(rows) == 3, table.stdout
    assert any(row.endswith("new line") for row in rows), table.stdout


def test_list_ids_are_prefixes_that_resolve(tmp_path: Path, build, dump, monkeypatch) -> None:
    """Pi's ids are UUIDv7: sessions started in the same minute share 8 digits, and `list`
    showed the same unusable 8 for each. It shows the shortest unique prefix instead."""
    root = tmp_path / "sessions"
    folder = root / "--p--"
    folder.mkdir(parents=True)
    tails = ["aa58-7000-8000-000000000001", "ab00-7000-8000-000000000002",
             "aa59-7000-8000-000000000003"]  # fmt: skip
    ids = [f"01a229f4-{tail}" for tail in tails] + ["ffff0000-0000-7000-8000-000000000004"]
    for n, sid in enumerate(ids):
        path = folder / f"2025-01-01T00-00-0{n}-000Z_{sid}.jsonl"
        path.write_bytes(dump([build.header(session_id=sid), build.user("u", None, f"prompt {n}")]))
    table = run("list", "--all", "--sessions-dir", str(root)).stdout.splitlines()
    shown = [line.split()[-1] for line in table[2:]]
    assert sorted(shown) == ["01a229f4-aa58", "01a229f4-aa59", "01a229f4-ab", "ffff0000"]
    for prefix in shown:
        resolved = run("stats", prefix, "--json", "--sessions-dir", str(root))
        assert resolved.exit_code == 0, resolved.stderr
        assert json.loads(resolved.stdout)["id"].startswith(prefix)


def test_list_shows_last_activity_in_local_time_as_since_reads_dates(
    tmp_path: Path, build, dump, monkeypatch
) -> None:
    """`list` printed UTC without a zone while `--since 2025-01-01` means local midnight:
    in New York a session shown on 2025-01-01 was "not active since 2025-01-01"."""
    import time

    folder = tmp_path / "sessions" / "--p--"
    folder.mkdir(parents=True)
    path = folder / "2025-01-01T00-00-00-000Z_01a229f4-aa58-7000-8000-000000000001.jsonl"
    path.write_bytes(dump([build.header(), build.user("u", None, "prompt")]))  # 00:00 UTC
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        table = run("list", "--all", "--sessions-dir", str(tmp_path / "sessions")).stdout
    finally:
        monkeypatch.undo()
        time.tzset()
    header, _, row = table.splitlines()[:3]
    assert header.startswith("last activity (local)") and row.startswith("2024-12-31 19:00")


def test_list_shows_a_time_with_no_local_date_in_utc(tmp_path: Path, build, dump, monkeypatch):
    """Year 9999 east of UTC has no local date: `list` ended in an OverflowError traceback."""
    import time

    folder = tmp_path / "sessions" / "--p--"
    folder.mkdir(parents=True)
    user = build.user("u", None, "prompt")
    user["timestamp"] = "9999-12-31T23:30:00.000Z"
    path = folder / "9999-12-31T23-30-00-000Z_01a229f4-aa58-7000-8000-000000000001.jsonl"
    path.write_bytes(dump([build.header(), user]))
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        result = run("list", "--all", "--sessions-dir", str(tmp_path / "sessions"))
    finally:
        monkeypatch.undo()
        time.tzset()
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[2].startswith("9999-12-31 23:30 UTC")


def test_list_columns_line_up_with_wide_characters(
    tmp_path: Path, build, dump, monkeypatch
) -> None:
    """Numbers are right-aligned under their headers in the one-project table (the
    alignment was off by the hidden project column), and a CJK title, two columns per
    character, no longer pushes the rest of its row out of line."""
    project = tmp_path / "proj"
    project.mkdir()
    root = tmp_path / "sessions"
    folder = root / encode_cwd(str(project))
    folder.mkdir(parents=True)
    for n, title in enumerate(["会话树导出", "plain title"]):
        path = folder / f"2025-01-01T00-00-0{n}-000Z_s{n}.jsonl"
        path.write_bytes(dump([build.header(session_id=f"s{n}", cwd=str(project)),
                               build.user("u", None, title)]))  # fmt: skip
    lines = run("list", "--cwd", str(project), "--sessions-dir", str(root)).stdout.splitlines()
    header, _rule, *rows = (_columns(line) for line in lines)
    assert "会话树导出" in lines[2] + lines[3]
    for name in ("messages", "tokens", "cost"):  # right-aligned: the value ends where it does
        end = "".join(header).index(name) + len(name)
        for row in rows:
            assert row[end - 1] not in " ", (name, lines)
            assert row[end] == " "
    id_start = "".join(header).index(" id") + 1  # left-aligned, one column for every row
    assert all(row[id_start] == "s" for row in rows), lines


def _columns(line: str) -> list[str]:
    """The terminal columns of a line: a wide character fills two (its second is "")."""
    from exporter.formatting import display_width

    out: list[str] = []
    for char in line:
        out += [char] + [""] * (display_width(char) - 1)
    return out + [" "] * 10


def test_list_and_stats_survive_a_latin1_terminal(sessions: dict) -> None:
    """A title in another script made `list` and `stats` abort under a Latin-1 stdout;
    text falls back to escapes and JSON to ``\\u`` escapes (still the same JSON)."""
    command = [sys.executable, "-m", "exporter"]
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(sessions["root"].parent),
           "PYTHONIOENCODING": "latin-1"}  # fmt: skip
    env.pop("PYTHONUTF8", None)
    cjk = sessions["root"] / "--cjk--" / "2025-01-01T00-00-00-000Z_cjk.jsonl"
    cjk.parent.mkdir()
    cjk.write_text(
        '{"type":"session","version":3,"id":"cjk","timestamp":"2025-01-01T00:00:00Z","cwd":"/c"}\n'
        '{"type":"message","id":"u","parentId":null,"timestamp":"2025-01-01T00:00:01Z",'
        '"message":{"role":"user","content":"会话 😀 café"}}\n',
        encoding="utf-8",
    )
    for args in (["list", "--all"], ["stats", str(cjk)], ["stats", "--json", str(cjk)],
                 ["list", "--all", "--json"]):  # fmt: skip
        done = subprocess.run([*command, *args], capture_output=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        out = done.stdout.decode("latin-1")
        if "--json" in args:
            documents = (
                [json.loads(line) for line in out.splitlines()]
                if args[0] == "list"
                else [json.loads(out)]
            )
            assert any("会话 😀 café" in d.values() for d in documents), documents
        else:
            assert "café" in out and "\\u4f1a" in out


def test_list_with_a_missing_sessions_dir_is_an_error(tmp_path: Path) -> None:
    result = run("list", "--all", "--sessions-dir", str(tmp_path / "typo"))
    assert_one_line_error(result, 2, "does not exist")


def test_list_ids_resolve_from_any_folder_and_exact_ids_win(
    tmp_path: Path, build, dump, monkeypatch
) -> None:
    """The prefixes were unique only among the sessions listed, but SESSION is looked up in
    the current folder's project first: listing another project showed a prefix that then
    named a session of this one. An id that is the start of another (notes, notes2) is
    found by itself."""
    root = tmp_path / "sessions"
    here, there = tmp_path / "here", tmp_path / "there"
    layout = {here: ["0197aaaa-3333-7000-8000-000000000003", "notes2"],
              there: ["0197aaaa-1111-7000-8000-000000000001", "notes"]}  # fmt: skip
    for cwd, ids in layout.items():
        cwd.mkdir()
        folder = root / encode_cwd(str(cwd))
        folder.mkdir(parents=True)
        for sid in ids:
            records = [build.header(session_id=sid, cwd=str(cwd)), build.user("u", None, sid)]
            (folder / f"2025-01-01T00-00-00-000Z_{sid}.jsonl").write_bytes(dump(records))
    monkeypatch.chdir(here)
    table = run("list", "--cwd", str(there), "--sessions-dir", str(root)).stdout.splitlines()
    shown = sorted(line.split()[-1] for line in table[2:])
    assert shown == ["0197aaaa-1", "notes"]
    for prefix in shown:
        found = run("stats", prefix, "--json", "--sessions-dir", str(root))
        assert found.exit_code == 0, found.stderr
        assert json.loads(found.stdout)["cwd"] == str(there)


def test_a_mistyped_sessions_dir_is_an_error_for_json_too(tmp_path: Path) -> None:
    result = run("list", "--json", "--sessions-dir", str(tmp_path / "typo"))
    assert_one_line_error(result, 2, "does not exist")


def test_table_columns_count_what_the_terminal_shows() -> None:
    """A cell with a bidi override prints as ⟨U+202E⟩ (ten columns), measured as one."""
    from exporter.formatting import render_table

    lines = render_table(["a", "b"], [["x\u202ey", "1"], ["plain", "2"]], {1}).splitlines()
    assert len({len(line) for line in lines}) == 1, lines


def test_a_column_of_amounts_lines_up_its_decimal_points(fixtures_dir: Path) -> None:
    """pi-branched-4's branches cost "$16.15" and "$0.600": right-aligned, their points
    stood a column apart in `stats`. Each amount is padded to the column's most decimals."""
    from exporter.formatting import decimal_pads, render_table

    amounts = ["$16.15", "$0.600", "<$0.0001", "12", "", "$1.2e+15"]
    assert decimal_pads(amounts) == [2, 1, 0, 0, 0, 0]
    table = render_table(["n", "cost"], [["a", "$16.15"], ["b", "$0.600"], ["c", "3"]], {1})
    assert table.splitlines()[2:] == ["a  $16.15", "b   $0.600", "c        3"]

    result = run("stats", str(fixtures_dir / "pi-branched-4.jsonl"))
    rows = (
        result.output.split("\nBranches (", 1)[1]
        .split("\n", 1)[1]
        .split("\n\n", 1)[0]
        .splitlines()[2:]
    )
    points = {row.index("$") + row[row.index("$") :].index(".") for row in rows}
    assert len(rows) == 6 and len(points) == 1, rows


def _damaged_trees(build) -> dict[str, list]:
    h, u, a = build.header, build.user, build.assistant
    nan_usage = json.dumps(a("a2", "a1", "nan")).replace('"input": 10', '"input": NaN', 1)
    assert "NaN" in nan_usage
    null_id = {**u("x", None), "id": None}
    return {
        "repeated ids": [h(), u("a", None), u("a", "a", "two"), u("a", "a", "three"), a("b", "a")],
        "parentId loop": [h(), u("u1", None), a("a1", "u1"), u("x1", "x2"), a("x2", "x1")],
        "missing ids": [h(), null_id, u(None, None), u("L3", None), a("b", "L3")],
        "NaN in usage": [h(), u("u1", None), a("a1", "u1"), nan_usage],
        "NaN only in text": [h(), u("u1", None, "is it NaN or Infinity?"), a("a1", "u1")],
    }


def test_list_counts_a_damaged_tree_as_stats_does(tmp_path: Path, build, dump) -> None:
    """``list`` reads a fast scan of each line's prefix; on repeated or missing ids, parentId
    loops and NaN numbers, which the loader repairs or rejects, its entries, branches and
    usage disagreed with ``stats`` (a loop had 0 branches). It now asks the loader."""
    folder = tmp_path / "sessions" / encode_cwd("/home/dev/proj")
    folder.mkdir(parents=True)
    paths = {}
    for n, (case, lines) in enumerate(_damaged_trees(build).items()):
        paths[case] = folder / f"2025-01-01T00-00-0{n}-000Z_case{n}.jsonl"
        paths[case].write_bytes(dump(lines))
    (folder / "2025-01-01T00-00-09-000Z_blank.jsonl").write_bytes(b"\n  \n\n")
    result = run("list", "--all", "--json", "--sessions-dir", str(tmp_path / "sessions"))
    rows = {row["path"]: row for row in map(json.loads, result.stdout.splitlines())}
    differ = []
    for case, path in paths.items():
        row, stats = rows[str(path)], json.loads(run("stats", str(path), "--json").stdout)
        listed = (row["entries"], row["branches"], row["messages"], row["tokens"], row["cost"])
        all_usage = stats["usage"]["all"]
        counted = (
            stats["entries"],
            stats["branches"],
            sum(stats["messages"].values()),
            {k: all_usage[k] for k in row["tokens"]},
            round(all_usage["cost"], 6),
        )
        if listed != counted:
            differ.append((case, listed, counted))
    assert differ == []
    assert rows[str(folder / "2025-01-01T00-00-09-000Z_blank.jsonl")]["error"] == "empty file"


def test_list_reads_a_sound_file_without_the_loader(
    tmp_path: Path, build, dump, fixtures_dir: Path, monkeypatch
) -> None:
    """The loader is the slow path for damaged trees only: "NaN" in a message's text, a
    real session or a v1 file (entries without ids) must not send ``list`` there."""
    from exporter import discover

    def refuse(path: object) -> None:
        raise AssertionError(f"loaded {path}")

    monkeypatch.setattr(discover, "load_session", refuse)
    text_case = tmp_path / "nan-text.jsonl"
    text_case.write_bytes(dump(_damaged_trees(build)["NaN only in text"]))
    for path in [text_case, *sorted(fixtures_dir.glob("*.jsonl"))]:
        assert discover.scan_summary(path).entries > 0


def test_list_and_stats_give_one_start_time(pi_fixture: Path) -> None:
    """``list`` took the header's time as the start, ``stats`` the earlier of it and the
    entries': pi-v1-before-compaction started 2 h 12 min apart in the two."""
    from exporter.discover import scan_summary
    from exporter.usage import compute_stats

    assert scan_summary(pi_fixture).started == compute_stats(load_session(pi_fixture)).started


def test_a_stamp_shaped_like_pis_but_no_date_does_not_hide_the_start(tmp_path: Path) -> None:
    """``list`` compared Pi-shaped stamps as text and kept the smallest, "2025-00-01...",
    which then did not parse: the entries' real start was lost."""
    from exporter.discover import scan_summary
    from exporter.usage import compute_stats

    stamp = "2025-01-01T0{}:00:00.000Z"
    user = {"role": "user", "content": "hi"}

    def entry(entry_id: str, parent: str | None, timestamp: str) -> dict[str, object]:
        fields = {"id": entry_id, "parentId": parent, "timestamp": timestamp, "message": user}
        return {"type": "message", **fields}

    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": stamp.format(9), "cwd": "/p"},
        entry("a", None, stamp.format(8)),
        entry("b", "a", "2025-00-01T00:00:00.000Z"),
    ]
    path = tmp_path / "2025-01-01T10-00-00-000Z_s1.jsonl"
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines), "utf-8")
    started = compute_stats(load_session(path)).started
    assert started is not None and started.hour == 8
    assert scan_summary(path).started == started


def test_stats_say_when_a_forked_session_was_made() -> None:
    """As the page does: Pi dates a session by its header, and a fork is made after the
    entries it copies, so "started" alone hid when it was forked (pi-v1: 00:53:29)."""
    from tests.conftest import FIXTURES_DIR

    forked = run("stats", str(FIXTURES_DIR / "pi-v1-before-compaction.jsonl"))
    assert forked.exit_code == 0, forked.stderr
    line = next(x for x in forked.stdout.splitlines() if x.startswith("  forked    from "))
    assert line.endswith(" at 2025-12-09 00:53:29 +00:00") and "d97339c6" in line
    made = run("stats", str(FIXTURES_DIR / "pi-large-session.jsonl"))
    assert "  file      created 2025-11-20 23:33:50 +00:00" in made.stdout.splitlines()
    assert "  id        d703a1a9-1b7b-4fb1-b512-c9738b1fe617  (file v1, read as v3)" in (
        made.stdout.splitlines()
    )  # as the page says both (stop 58: "created" above "started" read as a contradiction)
    plain = run("stats", "--demo").stdout
    assert "  file " not in plain and "  forked " not in plain  # made when it started
    doc = json.loads(run("stats", "--demo", "--json").stdout)
    assert doc["created"] == doc["started"]


def test_stats_says_what_the_page_says_about_models_and_roles(pi_fixture: Path) -> None:
    """`stats` read "messages 8 toolResult, ..." and listed models that never answered as
    if they had; the page says "8 tool results" and "also selected, never answered"."""
    text = run("stats", str(pi_fixture)).stdout
    doc = json.loads(run("stats", str(pi_fixture), "--json").stdout)
    assert "toolResult" not in text
    if doc["messages"].get("toolResult"):
        assert f"{doc['messages']['toolResult']:,} tool result" in text
    models_line = next(line for line in text.splitlines() if line.startswith("  models"))
    silent = doc["models_never_answered"]
    assert ("also selected, never answered: " + ", ".join(silent) in models_line) == bool(silent)


def test_the_top_help_names_every_command_in_one_whole_line() -> None:
    """Click cut each command's docstring mid-sentence ("Render SESSION (default: the latest
    session of this..."), and the top line left out redact and publish."""
    from exporter.cli import LAZY_COMMANDS, SHORT_HELP

    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert set(SHORT_HELP) == set(LAZY_COMMANDS)  # a new command needs its line
    text = " ".join(result.stdout.split())
    for name, line in SHORT_HELP.items():
        assert f"{name} {line}" in text
    commands = result.stdout.split("Commands:", 1)[1]
    assert "..." not in commands and "redact, share and publish" in text
    # and it is still short: listing the commands imports none of their modules
    code = "import sys; from exporter.cli import run; sys.argv = ['pi-session', '--help']\n"
    code += "try: run()\nexcept SystemExit: pass\n"
    code += "print(sorted(m for m in sys.modules if m.endswith('_cli') and m != 'exporter.cli'))"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert shown.stdout.strip().splitlines()[-1] == "[]", shown


def test_the_top_help_says_the_exit_codes_the_commands_use(tmp_path: Path) -> None:
    """They were only in the README (CLI review): a script reads `--help`."""
    text = " ".join(CliRunner().invoke(cli, ["--help"]).stdout.split())
    said = dict(re.findall(r"(\d+) (a usage or setting error|a session or file that cannot)", text))
    assert said == {"1": "a usage or setting error", "2": "a session or file that cannot"}, text
    assert "3 a remote or authentication failure" in text and "130 stopped by Ctrl-C" in text
    missing = CliRunner().invoke(cli, ["export", str(tmp_path / "nope.jsonl")])
    usage = CliRunner().invoke(cli, ["export", "--theme", "sepia", "--demo"])
    assert (missing.exit_code, usage.exit_code) == (2, 1), (missing.output, usage.output)


def test_help_never_breaks_a_name_at_its_hyphen() -> None:
    """click wrapped help at hyphens ("./pi-session-" / "share-<name>.html", "--with-" /
    "jsonl", "[default: keep-" / "hidden]"): copied from the help, such a name failed."""
    env = {**os.environ, "COLUMNS": "80", "PYTHONIOENCODING": "utf-8"}
    broken = []
    for command in ("export", "share", "publish", "redact", "list", "stats"):
        done = subprocess.run(
            [sys.executable, "-m", "exporter", command, "--help"],
            capture_output=True, text=True, encoding="utf-8", env=env, timeout=60, check=True,
        )  # fmt: skip
        broken += [line for line in done.stdout.splitlines() if re.search(r"\w-$", line)]
    assert broken == []
    assert "./pi-session-share-<name>.html" in subprocess.run(
        [sys.executable, "-m", "exporter", "share", "--help"],
        capture_output=True, text=True, encoding="utf-8", env=env, timeout=60, check=True,
    ).stdout  # fmt: skip


def test_stats_names_a_branch_by_its_prompt_s_words(fixtures_dir: Path) -> None:
    """The Branches table showed every-entry-type's skill prompt as its raw
    ``<skill name="pdf" location=…>`` wrapper, the page as "skill: pdf · …" (review
    2026-12-02)."""
    out = run("stats", str(fixtures_dir / "every-entry-type.jsonl")).stdout
    table = out.split("\nBranches (", 1)[1].split("\n", 1)[1]
    assert "skill: pdf · please convert the file" in table and "<skill" not in table
    assert "Look at this image and code:" in table and "**" not in table


def test_a_session_without_entries_says_0_and_nothing_after(fixtures_dir: Path, tmp_path) -> None:
    """The lines "entries   0 · " and "Entries: 0: " ended on a separator, nothing after it."""
    from exporter.markdown_doc import session_markdown

    path = tmp_path / "header-only.jsonl"
    path.write_bytes((fixtures_dir / "every-entry-type.jsonl").read_bytes().splitlines()[0])
    out = run("stats", str(path)).stdout
    assert "\n  entries   0\n  tree      0 branches\n" in out, out
    markdown = session_markdown(load_session(path))
    assert "- **Entries:** 0\n- **Tool calls:** none\n- **Tree:** 0 branches\n" in markdown


def test_the_cli_review_s_findings(tmp_path: Path, fixtures_dir: Path) -> None:
    """What a review of the command line found (2026-12-03): `watch --help` offered --report,
    which watch refuses; `export --all -o /typo/site` made /typo and built the site there
    (`-o FILE` into a missing folder is refused); a file `search` could not read was named
    twice in its warning ("warning: p/g.jsonl: p/g.jsonl: not a Pi session file")."""
    assert "--report" not in run("watch", "--help").output
    assert "Not with --all" in " ".join(run("export", "--help").output.split())
    folder = tmp_path / "sessions" / "--proj--"
    folder.mkdir(parents=True)
    shutil.copyfile(fixtures_dir / "every-entry-type.jsonl", folder / "a.jsonl")
    (folder / "g.jsonl").write_text("garbage\n", encoding="utf-8")
    typo = tmp_path / "typo" / "site"
    sessions = ["--sessions-dir", str(tmp_path / "sessions")]
    result = run("export", "--all", *sessions, "-o", str(typo))
    assert_one_line_error(result, 1, f"-o: the folder {typo.parent} does not exist")
    assert not typo.parent.exists()
    assert run("export", "--all", *sessions, "-o", str(tmp_path / "site")).exit_code == 0
    found = run("search", "-E", ".", "--all", *sessions)
    warning = next(line for line in found.stderr.splitlines() if "g.jsonl" in line)
    assert warning.count("g.jsonl") == 1 and warning.endswith("; not searched"), warning
    # nothing could be searched: an error (exit 2), not "no matches" and exit 0
    (folder / "a.jsonl").unlink()
    blind = run("search", "-E", ".", "--all", *sessions)
    assert blind.exit_code == 2 and "no matches" not in blind.stderr, blind.stderr
    assert "error: no session could be searched (1 file unreadable)" in blind.stderr


@pytest.mark.parametrize(
    ("typed", "meant"), [("exprot", "export"), ("lsit", "list"), ("stat", "stats"), ("zzz", None)]
)
def test_a_mistyped_command_names_the_nearest_one(typed: str, meant: str | None) -> None:
    """`pi-session exprot` said only "No such command" (CLI review s43), though a mistyped
    option already got a suggestion."""
    done = CliRunner().invoke(cli, [typed])
    assert done.exit_code == 1
    assert f"no such command '{typed}'." in done.output
    suggestion = f"Did you mean '{meant}'?" if meant else "Did you mean"
    assert (suggestion in done.output) is (meant is not None), done.output


def test_list_counts_tokens_as_stats_and_the_page_do(tmp_path: Path, build, dump) -> None:
    """A turn's tokens (the sum of its four parts, as every table's caption says; not Pi's
    totalTokens, which pi-ai fills in as input + output for some providers) are the total
    `stats`, the page, the site's index and `list` show alike."""
    root = tmp_path / "sessions"
    folder = root / "--p--"
    folder.mkdir(parents=True)
    usage = build.usage()
    usage.update(input=4, output=3, cacheRead=2, cacheWrite=1, totalTokens=1000)
    path = folder / "2025-01-01T00-00-00-000Z_s.jsonl"
    path.write_bytes(
        dump([build.header(), build.user("u", None), build.assistant("a", "u", usage=usage)])
    )
    stats = json.loads(run("stats", str(path), "--json").stdout)["usage"]["all"]
    assert stats["total_tokens"] == 10
    (row,) = [
        json.loads(line)
        for line in run("list", "--all", "--sessions-dir", str(root), "--json").stdout.splitlines()
    ]
    assert row["tokens"]["total_tokens"] == 10
    table = run("list", "--all", "--sessions-dir", str(root)).stdout
    assert re.search(r"\b10\b", table) and "1,000" not in table, table
