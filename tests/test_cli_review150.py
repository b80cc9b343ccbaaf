"""The CLI review of helper 150, items 1-5 and 7-10: what a user types, said and done the
same way in every command.

Every test runs the real command in a process of its own, in a fake home with Pi's sessions
folder (tests/test_cli_consistency.py's); `publish` talks to the loopback fake Hub over
real HTTP, or to a loopback port nothing listens on.
"""

from __future__ import annotations

import gzip
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from exporter.discover import encode_cwd
from exporter.loader import load_session
from tests.fakes.hub import TOKEN, FakeHub
from tests.test_cli_consistency import (
    FIXTURES,
    PI_NAME,
    PROJECT,
    Home,
    Result,
    _error,
    _home,
)

SESSION_ID = "01a229f4-9ff2-7641-920f-f99cb5e24cb7"  # PI_NAME's


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return _home(tmp_path)


@pytest.fixture
def fake_hub() -> Iterator[FakeHub]:
    with FakeHub() as fake:
        yield fake


def _run_in(home: Home, cwd: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    """``pi-session ARGS`` in ``cwd`` (Home.run runs in its work folder)."""
    done = subprocess.run(
        [sys.executable, "-m", "exporter", *args],
        cwd=cwd,
        env={**home.env, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return Result(done.returncode, done.stdout, done.stderr)


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- 1: --cwd and --all mean one thing everywhere -----------------------------------------


def test_all_with_cwd_is_the_project_in_every_command(home: Home, fake_hub: FakeHub) -> None:
    """`stats`/`export` wanted `--all --cwd X`, `list`/`search`/`publish` refused it: now
    every command takes it, and it means what `--cwd X` means."""
    hub = ["--endpoint", fake_hub.url, "--token", TOKEN, "--dry-run", "-j", "1"]
    for command in (["list"], ["list", "--json"], ["search", "dimgray"], ["stats", "--json"]):
        alone = home.run(*command, "--cwd", PROJECT)
        both = home.run(*command, "--all", "--cwd", PROJECT)
        assert alone.code == 0 and both.code == 0, (command, alone.stderr, both.stderr)
        assert both.stdout == alone.stdout and alone.stdout, command
    report = json.loads(home.run("stats", "--cwd", PROJECT, "--json").stdout)
    assert report["cwd"] == PROJECT and report["sessions_read"] == 1  # a usage report
    published = home.run("publish", "alice/both", "--all", "--cwd", PROJECT, *hub)
    assert published.code == 0, published.stderr
    assert f"sessions/2026-11/{PI_NAME}" in published.stdout
    site = home.run("export", "--all", "--cwd", PROJECT, "-o", "site")
    assert site.code == 0 and (home.work / "site" / "index.html").is_file(), site.stderr


def test_no_sessions_of_the_project_says_what_to_type(home: Home, fake_hub: FakeHub) -> None:
    """With --all --cwd X accepted, "--all lists it" would name what was typed: the other
    projects' sessions are reached by dropping --cwd; `stats --cwd X` by `stats --all`."""
    elsewhere = str(home.base / "other-project")
    root = str(home.sessions)
    hub = ["--endpoint", fake_hub.url, "--token", TOKEN, "--dry-run"]
    for command, then in (
        (["list"], "drop --cwd to list it"),
        (["search", "x"], "drop --cwd to search it"),
        (["stats"], "drop --cwd to count it"),
        (["publish", "alice/x", *hub], "drop --cwd to publish it"),
    ):
        result = home.run(*command, "--all", "--cwd", elsewhere)
        said = result.stderr.strip().splitlines()[-1]
        assert said.endswith(
            f"no Pi sessions for {elsewhere} under {root}; 1 session of another project is "
            f"there: {then}" + ("; nothing sent" if command[0] == "publish" else "")
        ), (command, said)
    alone = home.run("stats", "--cwd", elsewhere)
    assert alone.code == 2 and _error(alone).endswith("there: `stats --all` counts it")


def test_export_cwd_alone_says_the_command_to_type(home: Home) -> None:
    """`export --cwd X` makes no site without --all: the error is the command to paste."""
    alone = home.run("export", "--cwd", PROJECT)
    assert alone.code == 1
    assert _error(alone).endswith(f"pi-session export --all --cwd {PROJECT} -o DIR")
    named = home.run("export", "--cwd", PROJECT, "-o", "my site/")
    assert named.code == 1
    typed = _error(named).rsplit(": ", 1)[1]
    assert shlex.split(typed) == [
        "pi-session", "export", "--all", "--cwd", PROJECT, "-o", "my site/"
    ]  # fmt: skip
    pasted = home.run(*shlex.split(typed)[1:])
    assert pasted.code == 0 and (home.work / "my site" / "index.html").is_file(), pasted.stderr


def test_session_with_cwd_or_all_is_one_message(home: Home, fake_hub: FakeHub) -> None:
    """SESSION with --cwd/--all was said three ways ("use only one of …", "drop SESSION …",
    "--cwd … only go with --all"); every command says it in one."""
    session = str(home.session)
    hub = ["--endpoint", fake_hub.url, "--token", TOKEN, "--dry-run"]
    said = set()
    for command in (
        ["stats", session],
        ["export", session, "-o", "site"],
        ["search", "dimgray", session],
        ["publish", "alice/x", session, *hub],
    ):
        for scope in (["--all"], ["--cwd", PROJECT], ["--all", "--cwd", PROJECT]):
            result = home.run(*command, *scope)
            assert result.code == 1, (command, scope, result.stderr)
            said.add(_error(result))
    assert said == {
        "SESSION and --cwd/--all both choose the sessions: give SESSION, or --cwd DIR (a "
        "project's sessions) or --all (every project's), not both"
    }
    assert fake_hub.requests == [] and not (home.work / "site").exists()
    since = home.run("stats", "--since", "7d")
    assert since.code == 1 and "add --all or --cwd DIR" in _error(since)


def test_help_says_what_cwd_and_all_do(home: Home) -> None:
    for command in (["list"], ["search"], ["publish"]):
        text = " ".join(home.run(*command, "--help").stdout.split())
        assert "with --cwd: of that project, as --cwd alone" in text, command
    stats = " ".join(home.run("stats", "--help").stdout.split())
    assert "every session of this project folder (with or without --all)" in stats
    assert "only go with --all" not in stats


# --- 2: publish --dry-run without the Hub -------------------------------------------------


def test_a_dry_run_that_cannot_read_the_dataset_says_its_plan_is_a_guess(
    home: Home, fake_hub: FakeHub
) -> None:
    """It exited 0 with a plan of a dataset it never read, and its help said it "needs the
    Hub". Now the plan is said to be a guess, and an --endpoint typed on the command line
    that cannot be reached is exit 3; the token is never printed."""
    dead = f"http://127.0.0.1:{_closed_port()}"
    secret = "hf_" + "Q" * 34
    typed = home.run("publish", "alice/x", "--dry-run", "--cwd", PROJECT, "--endpoint", dead,
                     "--token", secret, "-j", "1")  # fmt: skip
    assert typed.code == 3, typed.stderr
    assert typed.stdout == ""  # at once: no guessed plan, no session redacted (stop 48)
    message = _error(typed)
    assert message.startswith(f"--endpoint 127.0.0.1:{dead.rsplit(':', 1)[1]} cannot be reached")
    assert "no plan was made" in message and "new dataset" in message
    assert "redact:" not in typed.stderr
    assert secret not in typed.stdout + typed.stderr
    # from the environment (not typed here) and without a token: a warning, last, exit 0
    env = {"HF_ENDPOINT": dead}
    quiet = _run_in(home, home.work, "publish", "alice/x", "--dry-run", "--cwd", PROJECT,
                    "-j", "1", env=env)  # fmt: skip
    assert quiet.code == 0, quiet.stderr
    last = quiet.stderr.strip().splitlines()[-1]
    assert last.startswith("pi-session: warning: the dataset was not read (127.0.0.1:")
    assert "the plan above is a guess: it assumes a new dataset" in last
    # the Hub there: no such warning
    reached = home.run("publish", "alice/x", "--dry-run", "--cwd", PROJECT, "--endpoint",
                       fake_hub.url, "--token", TOKEN, "-j", "1")  # fmt: skip
    assert reached.code == 0 and "guess" not in reached.stderr, reached.stderr
    helped = " ".join(home.run("publish", "--help").stdout.split())
    assert "needs the Hub" not in helped and "cannot be reached is exit 3" in helped


# --- 3: one id in two project folders -----------------------------------------------------


def _copy_into(home: Home, project: str, data: bytes | None = None) -> Path:
    folder = home.sessions / encode_cwd(project)
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / PI_NAME
    copy.write_bytes(home.session.read_bytes() if data is None else data)
    return copy


def test_identical_copies_of_a_session_are_one_session(home: Home) -> None:
    """The same file in two project folders (a renamed project's copied sessions): its full
    id, as `list --all` prints it, was "ambiguous" from any third folder. Copies with the
    same bytes are one session: this folder's copy, else the newest, with a note."""
    here = _copy_into(home, str(home.work))
    os.utime(here, (1_000_000_000, 1_000_000_000))  # older than the other copy
    listed = home.run("list", "--all")
    assert listed.stdout.count(SESSION_ID) == 2  # the whole id, as the copies share it
    for given in (SESSION_ID, SESSION_ID[:8]):
        mine = home.run("stats", given, "--json")
        assert mine.code == 0, mine.stderr
        assert Path(json.loads(mine.stdout)["path"]) == here  # this folder's, as before
    third = home.base / "third"
    third.mkdir()
    newest = _run_in(home, third, "stats", SESSION_ID, "--json")
    assert newest.code == 0, newest.stderr
    assert Path(json.loads(newest.stdout)["path"]) == home.session
    assert "names 2 identical copies of one session" in newest.stderr
    assert f"using the newest: {home.session}" in newest.stderr
    prefix = _run_in(home, third, "export", SESSION_ID[:8], "-o", "p.html")
    assert prefix.code == 0 and (third / "p.html").is_file(), prefix.stderr


def test_an_ambiguous_id_lists_paths_to_pass(home: Home) -> None:
    """Copies that differ are two sessions: the error listed them relative to the sessions
    folder, which could not be pasted back. It lists absolute paths, and says to pass one."""
    data = home.session.read_bytes()
    other = _copy_into(home, "/srv/other project", data + data.splitlines(keepends=True)[-1])
    third = home.base / "third"
    third.mkdir()
    for given in (SESSION_ID, "01a229"):
        result = _run_in(home, third, "stats", given)
        assert result.code == 2, result.stderr
        message = _error(result)
        assert message.endswith("; pass the path of the one you mean"), message
        assert str(home.session) in message and shlex.quote(str(other)) in message
    pasted = _run_in(home, third, "stats", *shlex.split(shlex.quote(str(other))))
    assert pasted.code == 0, pasted.stderr


# --- 4: -o in a "folder" that is a file ---------------------------------------------------


def test_an_output_under_a_file_says_the_file_is_no_folder(home: Home) -> None:
    (home.work / "ff").write_text("not a folder\n", encoding="utf-8")
    session = str(home.session)
    for args in (
        ["export", session, "-o", "ff/x.html"],
        ["export", session, "-o", "ff/deeper/x.html"],
        ["export", session, "--redact", "--report", "ff/r.jsonl", "-o", "p.html"],
        ["redact", session, "-o", "ff/x.jsonl"],
        ["export", "--all", "-o", "ff/site"],
    ):
        result = home.run(*args)
        assert result.code == 1, (args, result.stderr)
        assert _error(result).endswith(": ff is a file, not a folder"), args
    missing = home.run("export", session, "-o", "nowhere/x.html")
    assert _error(missing) == "-o: the folder nowhere does not exist"
    assert sorted(p.name for p in home.work.iterdir()) == ["ff"]


# --- 5: redact counts what it writes ------------------------------------------------------


def _summary(report: Path) -> dict:
    return json.loads(report.read_text(encoding="utf-8").splitlines()[0])


def test_redact_counts_no_home_path_it_does_not_write(home: Home) -> None:
    """A session under the home folder was counted one home path more than the same bytes
    elsewhere: its own path (which no JSONL copy holds) was counted. A page shows only the
    file's name, so neither does its count."""
    fixture = FIXTURES / "every-entry-type.jsonl"
    inside = Path(home.env["HOME"]) / "notes" / "s.jsonl"
    outside = home.base / "elsewhere" / "s.jsonl"
    for place in (inside, outside):
        place.parent.mkdir(parents=True)
        shutil.copyfile(fixture, place)
    for command, output in (("redact", "c{}.jsonl"), ("export", "p{}.html")):
        summaries = []
        for n, source in enumerate((inside, outside)):
            extra = ["--redact"] if command == "export" else []
            result = home.run(command, str(source), *extra, "-o", output.format(n),
                              "--report", f"{command}{n}.jsonl")  # fmt: skip
            assert result.code == 0, result.stderr
            summaries.append(_summary(home.work / f"{command}{n}.jsonl"))
        assert summaries[0]["actions"] == summaries[1]["actions"], command
        assert summaries[0]["actions"].get("home_paths"), summaries  # the file's own ones
    assert (home.work / "c0.jsonl").read_bytes() == (home.work / "c1.jsonl").read_bytes()
    said = home.run("redact", str(inside), "-o", "-").stderr
    home_paths = _summary(home.work / "redact1.jsonl")["actions"]["home_paths"]
    assert f"home paths -> ~: {home_paths}" in said


def test_a_page_counts_the_user_name_its_footer_hides(home: Home) -> None:
    """The page's footer names the session file: a user name in that name is replaced there
    and counted; the JSONL copy, which holds no file name, does not count it."""
    named = home.base / "zebulon-notes.jsonl"
    shutil.copyfile(FIXTURES / "pi-branched-2.jsonl", named)
    env = {"USER": "zebulon"}
    page = _run_in(home, home.work, "export", str(named), "--redact", "-o", "p.html",
                   "--report", "page.jsonl", env=env)  # fmt: skip
    copy = _run_in(home, home.work, "redact", str(named), "--keep-hidden", "-o", "c.jsonl",
                   "--report", "copy.jsonl", env=env)  # fmt: skip
    assert page.code == 0 and copy.code == 0, page.stderr + copy.stderr
    html = (home.work / "p.html").read_text(encoding="utf-8")
    # (named as its copies are, since 0.2.55: "user", as in user-notes.html)
    assert "user-notes.jsonl" in html and "zebulon" not in html
    users_page = _summary(home.work / "page.jsonl")["actions"].get("user_names", 0)
    users_copy = _summary(home.work / "copy.jsonl")["actions"].get("user_names", 0)
    assert users_page == users_copy + 1
    assert (home.work / "c.jsonl").read_text(encoding="utf-8").count("zebulon") == 0


# --- 7: search says a damaged file is damaged ---------------------------------------------


def test_search_warns_of_a_file_pi_cannot_open(home: Home) -> None:
    """On a UTF-16 copy, a cut-off one and one without a header, `search` found matches and
    said nothing, where export, stats and redact warn."""
    text = home.session.read_text(encoding="utf-8")
    wide = home.base / "wide.jsonl"
    wide.write_bytes(text.encode("utf-16"))
    cut = home.base / "cut.jsonl"
    cut.write_text(text[: text.rindex("\n", 0, len(text) - 1) + 40], encoding="utf-8")
    headless = home.base / "headless.jsonl"
    headless.write_text(text.split("\n", 1)[1], encoding="utf-8")
    result = home.run("search", "dimgray", str(wide), str(cut), str(headless))
    assert result.code == 0 and "dimgray" in result.stdout.lower(), result.stderr
    for path, kind in ((wide, "not-utf8"), (cut, "truncated"), (headless, "missing-header")):
        lines = [ln for ln in result.stderr.splitlines() if ln.endswith(f"[{kind}]")]
        assert lines and lines[0].startswith(f"pi-session: warning: {path}: "), result.stderr
    assert "Pi reads only UTF-8" in result.stderr
    clean = home.run("search", "dimgray", str(home.session))
    assert "warning" not in clean.stderr, clean.stderr


# --- 8: watch's exit code, stats --since, publish's words ---------------------------------


def test_watch_help_says_ctrl_c_exits_0(home: Home) -> None:
    text = " ".join(home.run("watch", "--help").stdout.split())
    assert "Ctrl-C (or SIGTERM) stops it, with exit code 0" in text
    top = " ".join(home.run("--help").stdout.split())
    assert "130 stopped by Ctrl-C (0 for `watch`" in top


def test_stats_since_with_no_session_since_says_so(home: Home) -> None:
    """Three tables of zeros, exit 0, where search and export --all say no session is
    active since then (exit 2)."""
    for command in (["stats", "--all"], ["stats", "--cwd", PROJECT], ["search", "x", "--all"]):
        result = home.run(*command, "--since", "2030-01-01")
        assert result.code == 2 and result.stdout == "", (command, result.stdout)
        message = _error(result)
        assert "active since 2030-01-01 00:00; 1 session there is older" in message, command
    recent = home.run("stats", "--all", "--since", "2026-11-01", "--json")
    assert recent.code == 0 and json.loads(recent.stdout)["sessions_read"] == 1


def test_publish_says_an_unreachable_hub_in_words(home: Home) -> None:
    """ "cannot reach 127.0.0.1:9 while reading the dataset (ConnectError)": the HTTP
    library's class name, not a reason."""
    dead = f"http://127.0.0.1:{_closed_port()}"
    result = home.run("publish", "alice/x", "--cwd", PROJECT, "--endpoint", dead,
                      "--token", TOKEN, "-j", "1")  # fmt: skip
    assert result.code == 3, result.stderr
    message = _error(result)
    assert "ConnectError" not in result.stderr and "(connection failed)" in message, message
    assert TOKEN not in result.stderr


# --- 9: redact -o NAME.md -----------------------------------------------------------------


def test_redact_refuses_a_name_that_is_not_jsonl(home: Home) -> None:
    """`redact -o clean.md` wrote JSONL into a .md file without a word (export refuses
    `-o z.txt`); the error names the export that writes it."""
    session = str(home.session)
    for name, hint in (
        ("clean.md", "pi-session export --redact --format md -o clean.md"),
        ("notes.txt", "pi-session export --redact --format md -o notes.md"),
        ("noext", "pi-session export --redact --format md -o noext.md"),
        ("page.html", "pi-session export --redact -o page.html"),
    ):
        result = home.run("redact", session, "-o", name)
        assert result.code == 1, (name, result.stderr)
        message = _error(result)
        assert message.startswith(f"-o {name}: redact writes a session's JSONL"), message
        assert hint in message, message
    assert list(home.work.iterdir()) == []
    for name in ("clean.jsonl", "clean.JSONL", "clean.jsonl.gz", os.devnull, "-"):
        result = home.run("redact", session, "-o", name)
        assert result.code == 0, (name, result.stderr)
    # a .jsonl.gz copy is gzip (it was plain JSONL under a gzip name), the same session
    packed = (home.work / "clean.jsonl.gz").read_bytes()
    assert packed[:2] == b"\x1f\x8b"
    assert gzip.decompress(packed) == (home.work / "clean.jsonl").read_bytes()
    assert load_session(home.work / "clean.jsonl.gz").id == SESSION_ID


# --- 10: help and summary lines that misled -----------------------------------------------


def test_publish_help_and_the_not_redacted_lines(home: Home) -> None:
    helped = " ".join(home.run("publish", "--help").stdout.split())
    assert "one of the three" not in helped
    assert "or none of them for this folder's sessions" in helped
    session = str(home.session)
    excluded = home.run("export", session, "--exclude", "218377f3", "-o", "p.html")
    unredacted = home.run("redact", session, "--no-redact", "-o", "c.jsonl")
    assert excluded.code == 0 and unredacted.code == 0
    assert "no secret scan" not in excluded.stderr + unredacted.stderr
    assert (
        "pi-session: left out: entries excluded (--exclude): 1 (left out of the page entirely; "
        "the page is not redacted: --redact scans it)"
    ) in excluded.stderr
    assert "(not redacted: --no-redact)" in unredacted.stderr, unredacted.stderr
