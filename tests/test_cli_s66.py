"""CLI fixes of session 66: a Markdown document's images beside a name that is no UTF-8,
the -o name guard through a symbolic link, a missing PI_CODING_AGENT_DIR said by every
command, `search -E` patterns that match a place, `search --json --limit`, and a full
standard output after the page was written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote_to_bytes

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from tests.browser_util import fixture_path

WITH_IMAGES = "every-entry-type.jsonl"  # user and tool-result images: --images files writes them


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def run_process(
    *args: str | bytes, cwd: Path, stdout: int | None = subprocess.PIPE
) -> subprocess.CompletedProcess[bytes]:
    """The installed program in a process of its own: real argv bytes, real streams."""
    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"}
    return subprocess.run(
        [sys.executable, "-m", "exporter", *args],
        cwd=cwd,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=env,
        timeout=120,
        check=False,
    )


def one_error_line(result: Result, code: int) -> str:
    """The single ``pi-session: error:`` line of a failed command, no traceback."""
    assert result.exit_code == code, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pi-session: error: "), result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    return lines[0]


@pytest.fixture
def small_session(tmp_path: Path, build, dump) -> Path:
    """A session whose three entries say "hello" (a prompt, a reply, a second prompt)."""
    path = tmp_path / "s1.jsonl"
    path.write_bytes(
        dump(
            [
                build.header("s66-session"),
                build.user("u1", None, "please say hello there", second=1),
                build.assistant("a1", "u1", "hello from me", second=2),
                build.user("u2", "a1", "and hello again", second=3),
            ]
        )
    )
    return path


# --- 1: --images files beside a document whose name is not UTF-8 ----------------------------


def test_images_go_beside_a_document_whose_name_is_not_utf8(tmp_path: Path) -> None:
    """`-o $'img\\xff\\xfe.md' --images files` failed with "text encoding problem" (the
    link's folder was quoted as UTF-8) and wrote nothing: the document and its assets are
    written, the link percent-encoding the name's own bytes."""
    name = b"img\xff\xfe.md"
    done = run_process(
        "export", str(fixture_path(WITH_IMAGES)), "--format", "md", "--images", "files",
        "-o", name, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    folder = os.fsencode(tmp_path) + b"/img\xff\xfe.assets"
    document = (os.fsencode(tmp_path) + b"/" + name).decode("utf-8", "surrogateescape")
    text = Path(document).read_text(encoding="utf-8")
    assert "](img%FF%FE.assets/image-001.png)" in text
    linked = unquote_to_bytes("img%FF%FE.assets/image-001.png")
    assert (
        Path(os.fsdecode(os.fsencode(tmp_path) + b"/" + linked)).read_bytes().startswith(b"\x89PNG")
    )
    assert os.path.isdir(folder)


# --- 2: the -o name guard looks at the file a symbolic link leads to --------------------------


def test_export_to_a_link_named_html_that_leads_to_a_text_file_is_refused(
    small_session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-o notes.txt` is refused, but `-o page.html` linked to notes.txt wrote the page into
    the notes: the name checked is that of the file the write replaces."""
    monkeypatch.chdir(tmp_path)
    notes = tmp_path / "notes.txt"
    notes.write_text("precious notes\n", encoding="utf-8")
    (tmp_path / "page.html").symlink_to("notes.txt")
    line = one_error_line(run("export", str(small_session), "-o", "page.html"), 1)
    assert "page.html is a symbolic link to" in line and str(notes) in line
    assert "not .txt" in line
    assert notes.read_text(encoding="utf-8") == "precious notes\n"
    assert (tmp_path / "page.html").is_symlink()


def test_export_at_the_default_name_linked_to_a_text_file_is_refused(
    small_session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    notes = tmp_path / "notes.txt"
    notes.write_text("precious notes\n", encoding="utf-8")
    (tmp_path / "pi-session-s1.html").symlink_to(notes)
    line = one_error_line(run("export", str(small_session)), 1)
    assert "pi-session-s1.html is a symbolic link to" in line and "not .txt" in line
    assert notes.read_text(encoding="utf-8") == "precious notes\n"


def test_markdown_through_a_link_to_a_page_is_refused(
    small_session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-o notes.md` chose Markdown by its name; the link's file is a page."""
    monkeypatch.chdir(tmp_path)
    page = tmp_path / "page.html"
    page.write_text("<!DOCTYPE html><p>kept</p>\n", encoding="utf-8")
    (tmp_path / "notes.md").symlink_to(page)
    line = one_error_line(run("export", str(small_session), "-o", "notes.md"), 1)
    assert "notes.md is a symbolic link to" in line and "not .html" in line
    assert page.read_text(encoding="utf-8") == "<!DOCTYPE html><p>kept</p>\n"


def test_redact_to_a_link_named_jsonl_that_leads_to_a_text_file_is_refused(
    small_session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    notes = tmp_path / "notes.txt"
    notes.write_text("precious notes\n", encoding="utf-8")
    (tmp_path / "copy.jsonl").symlink_to("notes.txt")
    line = one_error_line(run("redact", str(small_session), "-o", "copy.jsonl"), 1)
    assert "copy.jsonl is a symbolic link to" in line and str(notes) in line
    assert "redact writes a session's JSONL" in line
    assert notes.read_text(encoding="utf-8") == "precious notes\n"


def test_a_link_to_a_file_of_the_right_kind_is_still_written_through(
    small_session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "latest.html").symlink_to("real.html")  # dangling: its file is made
    result = run("export", str(small_session), "-o", "latest.html")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "latest.html").is_symlink()
    assert (tmp_path / "real.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_export_into_dev_stdout_is_not_taken_for_a_link_to_another_kind(
    small_session: Path, tmp_path: Path
) -> None:
    """/dev/stdout leads to whatever the shell opened (here a .txt file): written as asked."""
    with open(tmp_path / "out.txt", "wb") as out:
        done = run_process("export", str(small_session), "-o", "/dev/stdout", cwd=tmp_path,
                           stdout=out.fileno())  # fmt: skip
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert (tmp_path / "out.txt").read_bytes().startswith(b"<!DOCTYPE html>")


# --- 3: a missing PI_CODING_AGENT_DIR is said by every command --------------------------------


@pytest.mark.parametrize("kind", ["missing", "file"])
@pytest.mark.parametrize(
    "command",
    [
        ["list"], ["stats"], ["stats", "--all"], ["export"], ["export", "--all", "-o", "site"],
        ["search", "x"], ["redact"], ["share", "--dry-run"], ["watch"],
        ["publish", "me/ds", "--dry-run"], ["export", "--pick"], ["export", "someid"],
    ],
    ids=lambda c: " ".join(c),
)  # fmt: skip
def test_a_missing_agent_dir_is_named_by_every_command(
    command: list[str], kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only `list` said "PI_CODING_AGENT_DIR: … does not exist" (or "is not a folder"); the
    others said "no Pi sessions for … under /typo/sessions (it does not exist)", which
    reads as Pi never having run (as test_a_missing_sessions_dir_is_named_by_every_command
    for --sessions-dir)."""
    monkeypatch.chdir(tmp_path)
    agent = tmp_path / "agnet"
    if kind == "file":
        agent.write_text("not a folder\n", encoding="utf-8")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    line = one_error_line(run(*command), 2)
    said = "is not a folder" if kind == "file" else "does not exist"
    assert line == f"pi-session: error: PI_CODING_AGENT_DIR: {agent} {said}"
    assert not (tmp_path / "site").exists()


def test_a_session_file_needs_no_agent_dir(
    small_session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SESSION given as a file is read from there: the variable is not looked at."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agnet"))
    result = run("stats", str(small_session), "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["id"] == "s66-session"


# --- 4: search -E with a pattern that matches a place -----------------------------------------


@pytest.mark.parametrize("pattern", ["(?=hello)", r"\bhello", "^", "$", r"\b"])
def test_a_pattern_that_matches_a_place_finds_the_entries_there(
    small_session: Path, pattern: str
) -> None:
    """`-E '(?=hello)'` said "no matches" while `hello` found 3 entries (empty matches were
    dropped): grep -P lists those lines, and so does search, nothing marked."""
    result = run("search", "-E", pattern, str(small_session), "--json")
    assert result.exit_code == 0, result.stderr
    found = [json.loads(line) for line in result.stdout.splitlines()]
    assert [m["entry_id"] for m in found] == ["u1", "a1", "u2"]  # (\bhello: as before)


def test_a_lookahead_match_is_where_the_word_is(small_session: Path) -> None:
    result = run("search", "-E", "(?=hello)", str(small_session), "--json")
    first = json.loads(result.stdout.splitlines()[0])
    assert first["start"] == first["end"] == first["snippet"].index("hello")
    text = run("search", "-E", "(?=hello)", str(small_session)).stdout
    assert "u1  user: please say hello there" in text and "[]" not in text  # nothing marked
    none = run("search", "-E", "(?=zzz)", str(small_session))
    assert none.exit_code == 0 and none.stdout == "" and "no matches" in none.stderr


# --- 5: search --json honours --limit ---------------------------------------------------------


def test_json_output_honours_limit_and_counts_the_rest_on_stderr(small_session: Path) -> None:
    """`search hello s1.jsonl --json --limit 1` printed all 3 entries."""
    limited = run("search", "hello", str(small_session), "--json", "--limit", "1")
    assert limited.exit_code == 0, limited.stderr
    assert [json.loads(line)["entry_id"] for line in limited.stdout.splitlines()] == ["u1"]
    assert f"pi-session: {small_session}: … and 2 more (--limit 3)" in limited.stderr
    every = run("search", "hello", str(small_session), "--json")  # no --limit: all, as always
    assert len(every.stdout.splitlines()) == 3 and "more" not in every.stderr


# --- 6: a full standard output after the page is written --------------------------------------


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="Linux's always-full device")
def test_a_full_stdout_after_the_page_is_said_as_standard_output(
    small_session: Path, tmp_path: Path
) -> None:
    """`export -o fd.html >/dev/full` said "No space left on device", as if the page's write
    had failed; the page is there, whole: it is the path's echo that failed."""
    with open("/dev/full", "wb") as full:
        done = run_process("export", str(small_session), "-o", "fd.html", cwd=tmp_path,
                           stdout=full.fileno())  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.decode("utf-8").splitlines() == [
        "pi-session: error: standard output: No space left on device"
    ]
    assert (tmp_path / "fd.html").read_text(encoding="utf-8").rstrip().endswith("</html>")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="Linux's always-full device")
@pytest.mark.parametrize(
    "args",
    [["export", "-o", "-"], ["redact", "-o", "copy.jsonl"], ["stats", "--json"], ["stats"]],
    ids=lambda a: " ".join(a),
)
def test_every_write_to_a_full_stdout_names_it(
    args: list[str], small_session: Path, tmp_path: Path
) -> None:
    with open("/dev/full", "wb") as full:
        done = run_process(args[0], str(small_session), *args[1:], cwd=tmp_path,
                           stdout=full.fileno())  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.decode("utf-8").splitlines() == [
        "pi-session: error: standard output: No space left on device"
    ]


# --- review of d56fcf4 ----------------------------------------------------------------------


def test_a_link_to_the_processes_stdout_writes_where_the_shell_sent_it(
    small_session: Path, tmp_path: Path
) -> None:
    """`-o devout.html` linked to /dev/stdout, stdout sent to out.txt: refused as a link to
    a .txt file (the chain was followed through /proc/self/fd/1); the page goes to stdout,
    as `-o /dev/stdout` does."""
    (tmp_path / "devout.html").symlink_to("/dev/stdout")
    with open(tmp_path / "out.txt", "wb") as sent:
        done = run_process("export", str(small_session), "-o", "devout.html", cwd=tmp_path,
                           stdout=sent.fileno())  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.txt").read_text(encoding="utf-8").rstrip().endswith("</html>")


def test_a_mistyped_session_file_is_said_as_one_with_a_bad_agent_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`export nosuch.jsonl` with a missing PI_CODING_AGENT_DIR said the variable's
    folder is missing, not the user's actual mistake: no such file."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "nope"))
    line = one_error_line(run("export", "nosuch.jsonl"), 2)
    assert "PI_CODING_AGENT_DIR" not in line and "nosuch.jsonl" in line
    line = one_error_line(run("export", "someid"), 2)  # an id: looked up in the folder
    assert "PI_CODING_AGENT_DIR" in line


@pytest.mark.parametrize(
    ("name", "target"), [("c.jsonl.gz", "clean.jsonl"), ("p.jsonl", "out.jsonl.gz")]
)
def test_redact_through_a_link_between_plain_and_gzip_names_is_refused(
    small_session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, target: str
) -> None:
    """The copy's format follows the -o name: `c.jsonl.gz` linked to clean.jsonl wrote gzip
    data into clean.jsonl, which Pi cannot open."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / target).write_text("keep\n", encoding="utf-8")
    (tmp_path / name).symlink_to(target)
    line = one_error_line(run("redact", str(small_session), "-o", name), 1)
    assert "symbolic link" in line and target in line
    assert (tmp_path / target).read_text(encoding="utf-8") == "keep\n"
