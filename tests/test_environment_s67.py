"""The environment a command runs in, not its input: a current folder deleted under the
shell, Python's UTF-8 mode off in the C locale, a Latin-1 terminal, a closed stdout.

Each runs the real `pi-session` in a process of its own, as a user's shell would."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from exporter.discover import encode_cwd

#: The venv's `pi-session` is on PATH for ``sh -c`` (the script, not ``python -m``: that
#: puts the current folder on sys.path, which a deleted folder cannot be).
BIN = Path(sys.executable).parent
COST = {"input": 0.01, "output": 0.02, "cacheRead": 0, "cacheWrite": 0, "total": 0.03}
USAGE = {"input": 100, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150}
USAGE["cost"] = COST


def _session(folder: Path, session_id: str, cwd: str, prompt: str, name: str = "") -> Path:
    """A small Pi session (header, prompt, answer; a name when given) in ``folder``."""
    stamp = "2025-06-01T10:{:02d}:00.000Z".format
    lines = [
        {"type": "session", "version": 3, "id": session_id, "timestamp": stamp(0), "cwd": cwd},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": stamp(1),
         "message": {"role": "user", "content": prompt, "timestamp": 0}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": stamp(2),
         "message": {"role": "assistant", "content": [{"type": "text", "text": "好的 done"}],
                     "api": "anthropic-messages", "provider": "anthropic", "model": "m",
                     "usage": USAGE, "stopReason": "stop", "timestamp": 0}},
    ]  # fmt: skip
    if name:
        lines.append({"type": "session_info", "name": name, "id": "n1", "parentId": "a1",
                      "timestamp": stamp(3)})  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2025-06-01T10-00-00-000Z_{session_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> dict[str, Path]:
    """A project in a folder named in three scripts, with two sessions in Pi's sessions
    folder (one named in Hebrew, with an emoji title), and a sessions folder outside."""
    cwd = tmp_path / "项目" / "🚀app" / "שלום"
    cwd.mkdir(parents=True)
    sessions = tmp_path / "agent" / "sessions"
    folder = sessions / encode_cwd(str(cwd))
    first = _session(folder, "uni-0001-aaaa", str(cwd), "修复 登录 bug", name="会话 שם")
    second = _session(folder, "uni-0002-bbbb", str(cwd), "😀" * 40 + "全角文字" * 10)
    return {"cwd": cwd, "sessions": sessions, "first": first, "second": second}


def _env(**changes: str) -> dict[str, str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    for name in ("PYTHONUTF8", "PYTHONIOENCODING", "LANG", "LANGUAGE", "LC_CTYPE", "LC_ALL"):
        env.pop(name, None)
    env.update(changes)
    return env


def _run(
    args: list[str | bytes], *, cwd: Path | None = None, stdin: str = "", **env: str
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["pi-session", *args],
        cwd=cwd,
        env=_env(**env),
        input=stdin.encode(),
        capture_output=True,
        timeout=120,
    )


# --- a current folder deleted under the shell (a removed git worktree) -------------------


def _in_a_deleted_folder(
    tmp_path: Path, args: list[str], stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """`pi-session ARGS` run from a folder removed after the shell went into it."""
    gone = tmp_path / "worktree"
    gone.mkdir()
    script = f"cd {shlex.quote(str(gone))} && rmdir {shlex.quote(str(gone))} && exec pi-session "
    return subprocess.run(
        ["sh", "-c", script + shlex.join(args)],
        env=_env(PYTHONIOENCODING="utf-8"),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "command",
    [
        ["stats", "{file}"],
        ["export", "{file}", "-o", "{out}/page.html"],
        ["redact", "{file}", "-o", "-"],
        ["search", "登录", "{file}"],
        ["stats", "--pick", "--sessions-dir", "{sessions}"],
        ["stats", "uni-0001", "--sessions-dir", "{sessions}"],
    ],
    ids=["stats", "export", "redact", "search", "pick", "id"],
)
def test_a_session_named_needs_no_current_folder(
    tmp_path: Path, project: dict[str, Path], command: list[str]
) -> None:
    """A deleted current folder failed every command with "error: No such file or
    directory" (exit 2), naming no file, though SESSION was an absolute path: the current
    folder was read before SESSION was looked at. --pick offers every project's sessions
    then, and an id is looked for in every project's."""
    values = {"file": project["first"], "out": tmp_path, "sessions": project["sessions"]}
    args = [part.format(**values) for part in command]
    done = _in_a_deleted_folder(tmp_path, args, stdin="2\n")
    assert done.returncode == 0, done.stderr
    assert "No such file or directory" not in done.stderr
    if "--pick" in command:
        assert "Sessions of any project (this folder is deleted):" in done.stderr
    if command[0] == "export":
        assert (tmp_path / "page.html").stat().st_size > 0


@pytest.mark.parametrize(
    ("command", "instead"),
    [
        (["list"], "pass --cwd DIR or --all"),
        (["search", "登录"], "pass --cwd DIR or --all"),
        (["stats"], "pass SESSION"),
        (["share", "--dry-run"], "pass SESSION"),
    ],
)
def test_a_deleted_current_folder_is_said_as_such(
    tmp_path: Path, project: dict[str, Path], command: list[str], instead: str
) -> None:
    """Where the current folder is the project worked on, its absence is said, with what
    to pass instead; "error: No such file or directory" named nothing."""
    args = [*command, "--sessions-dir", str(project["sessions"])]
    done = _in_a_deleted_folder(tmp_path, args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("pi-session: error: the current folder no longer exists")
    assert instead in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_any_other_look_at_a_deleted_current_folder_is_said_as_such(tmp_path: Path) -> None:
    """The one line every command's failure becomes: an OSError naming no file, raised by
    os.getcwd() in a deleted folder, says what is missing."""
    gone = tmp_path / "gone"
    gone.mkdir()
    code = (
        "import os, sys\n"
        f"os.chdir({str(gone)!r}); os.rmdir({str(gone)!r})\n"
        "from exporter.cli import cli, main\n"
        "cli.command('here')(lambda: print(os.getcwd()))\n"
        "main(['here'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr == (
        "pi-session: error: the current folder no longer exists (deleted?); "
        "cd to a folder that exists\n"
    )


# --- Python's UTF-8 mode off in the C locale --------------------------------------------

C_LOCALE = {"PYTHONUTF8": "0", "LC_ALL": "C"}


def _said(done: subprocess.CompletedProcess[bytes]) -> tuple[str, str]:
    """stdout and stderr as the UTF-8 they must be (strict: no byte left undecoded)."""
    return done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


def test_c_locale_arguments_are_their_utf8_text(project: dict[str, Path]) -> None:
    """Without UTF-8 mode the C locale hands Python each byte of a non-ASCII argument as
    an escape: `search 登录` found nothing (exit 0), and an id, a date, a pattern or an
    entry id in an error read '\\udce4\\udcbc…'."""
    sessions = str(project["sessions"])
    found = _run(["search", "登录", "--cwd", str(project["cwd"]), "--sessions-dir", sessions],
                 **C_LOCALE)  # fmt: skip
    out, err = _said(found)
    assert found.returncode == 0, err
    assert "[登录]" in out and "uni-0001-aaaa" in out and "1 entry in 1 session" in err
    for args, expected in (
        (["export", "会话", "--sessions-dir", sessions], "matches '会话'"),
        (["stats", str(project["first"]), "--leaf", "节点"], "'节点'"),
        (["search", "x", str(project["first"]), "--since", "昨天"], "'昨天'"),
        (["search", "-E", "登录(", str(project["first"])], "'登录('"),
        (["redact", str(project["first"]), "-o", "-", "--redact-pattern", "坏=("], "'坏'"),
    ):
        done = _run(args, **C_LOCALE)
        _, err = _said(done)
        assert done.returncode in (1, 2) and expected in err, (args, err)
        assert "\\udc" not in err and "\ufffd" not in err, err


def test_c_locale_paths_are_printed_as_their_utf8(project: dict[str, Path]) -> None:
    """File names Python decoded as ASCII were printed with U+FFFD for each byte, and put
    in JSON as '\\udcXX' escapes, which a JSON reader (jq) turns into U+FFFD: a path that
    does not exist. "no Pi sessions for …" and the --pick header garbled the folder too."""
    first, cwd, sessions = project["first"], project["cwd"], str(project["sessions"])
    listed = _run(["list", "--json", "--sessions-dir", sessions], cwd=cwd, **C_LOCALE)
    paths = {json.loads(line)["path"] for line in listed.stdout.decode("ascii").splitlines()}
    assert paths == {str(first), str(project["second"])}
    matches = _run(["search", "登录", str(first), "--json"], **C_LOCALE)
    assert json.loads(matches.stdout)["path"] == str(first)
    shown, _ = _said(_run(["search", "登录", str(first)], **C_LOCALE))
    assert f"  {first}\n" in shown
    picked = _run(["stats", "--pick", "--sessions-dir", sessions], cwd=cwd, stdin="1\n", **C_LOCALE)
    assert picked.returncode == 0
    assert f"Sessions of this folder ({cwd}):" in _said(picked)[1]
    empty = cwd.parent / "空"
    empty.mkdir()
    none = _run(["search", "x", "--cwd", str(empty), "--sessions-dir", sessions], **C_LOCALE)
    assert none.returncode == 2
    assert f"no Pi sessions for {empty} under {sessions}" in _said(none)[1]


def test_c_locale_file_names_stay_file_names(tmp_path: Path, project: dict[str, Path]) -> None:
    """What names a file is not decoded: Python opens it by the bytes it was given (a
    name in UTF-8 characters is not found in the C locale), and a name that is not UTF-8
    keeps its bytes (its JSON path gives them back)."""
    first, cwd = project["first"], project["cwd"]
    page = cwd / "页.html"
    exported = _run(["export", str(first), "-o", str(page)], **C_LOCALE)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout == os.fsencode(page) + b"\n" and page.stat().st_size > 0
    secrets = cwd / "秘密.txt"
    secrets.write_text("登录 bug\n", encoding="utf-8")
    redacted = _run(["redact", str(first), "-o", "-", "--secret", str(secrets)], **C_LOCALE)
    assert redacted.returncode == 0, redacted.stderr
    assert "登录 bug".encode() not in redacted.stdout
    # a session file whose name is one byte that is no UTF-8, in a folder named in UTF-8
    odd = os.fsencode(cwd) + b"/\xff.jsonl"
    with open(odd, "wb") as file:
        file.write(first.read_bytes())
    found = _run(["search", "bug", odd, "--json"], **C_LOCALE)
    assert found.returncode == 0, found.stderr
    path = json.loads(found.stdout)["path"]
    assert path == f"{cwd}/\udcff.jsonl" and os.fsencode(path) == odd


# --- a terminal whose encoding has no character for some text ---------------------------


def _table_aligned(lines: list[str]) -> None:
    """Every row of a table ends its columns where the dashes under the headings do."""
    dashes = next(line for line in lines if re.fullmatch(r"[- ]+", line))
    gaps = [m.start() for m in re.finditer(r"(?<=-)  (?=-)", dashes)]
    rows = lines[lines.index(dashes) + 1 :]
    assert rows
    for row in rows:
        assert len(row) <= len(dashes), row
        assert all(row[gap : gap + 2] == "  " for gap in gaps), (row, dashes)


def test_latin1_tables_keep_their_columns(project: dict[str, Path]) -> None:
    """A Latin-1 stdout writes an emoji as \\U0001f600 and a Chinese character as \\u4f1a:
    `list` and --pick fitted their cells before that, and rows ran 114 to 309 characters
    under headings 120 wide. The marks that keep a Hebrew name's column in a bidi terminal
    printed as \\u200e there."""
    args = ["--sessions-dir", str(project["sessions"])]
    listed = _run(["list", *args], cwd=project["cwd"], PYTHONIOENCODING="latin-1")
    assert listed.returncode == 0, listed.stderr
    out = listed.stdout.decode("latin-1")
    assert "\\U0001f600" in out and "\\u4f1a\\u8bdd" in out
    _table_aligned(out.splitlines())
    assert "\\u200e" not in out
    # from a folder with no sessions: every project's, with their folders (Hebrew too)
    picked = _run(["stats", "--pick", *args], cwd=project["sessions"], PYTHONIOENCODING="latin-1",
                  stdin="1\n")  # fmt: skip
    err = picked.stderr.decode("latin-1")
    assert "\\U0001f600" in err
    _table_aligned(err.split("Session number")[0].splitlines())
    assert "\\u200e" not in err


# --- a closed stdout ---------------------------------------------------------------------


def test_help_into_a_closed_stdout_names_it_once(tmp_path: Path) -> None:
    """`pi-session --help >&-` said "standard output: standard output is closed"."""
    done = subprocess.run(
        ["sh", "-c", "exec pi-session --help >&-"],
        env=_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr == "pi-session: error: standard output is closed\n"


# --- an empty HOME -----------------------------------------------------------------------


def test_an_empty_home_counts_as_unset(tmp_path: Path) -> None:
    """``HOME= pi-session …``: Python took the empty HOME for "/", and the template cache
    was made in /.cache/pi-session-export. Unset, the password entry's home is used."""
    import pwd

    code = (
        "from exporter.fsutil import home, xdg_dir\n"
        "print(home()); print(xdg_dir('XDG_CACHE_HOME', '.cache'))\n"
    )
    env = _env(HOME="", XDG_CACHE_HOME="")
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    own = pwd.getpwuid(os.getuid()).pw_dir
    assert done.stdout.splitlines() == [own, f"{own}/.cache/pi-session-export"]


def test_a_default_output_in_a_deleted_folder_says_the_folder_is_gone(
    tmp_path: Path, project: dict[str, Path]
) -> None:
    """`export /abs/f.jsonl` writes its page in the current folder: deleted, that said "the
    folder . does not allow creating files", as if of a folder that refused writes."""
    done = _in_a_deleted_folder(tmp_path, ["export", str(project["first"])])
    assert done.returncode == 2, done.stderr
    assert "the current folder no longer exists (deleted?)" in done.stderr, done.stderr
    assert "does not allow creating files" not in done.stderr
