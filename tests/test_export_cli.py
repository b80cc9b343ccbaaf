"""`pi-session export`: output naming, stdout mode, exit codes, clean errors, inputs untouched."""

from __future__ import annotations

import errno
import gzip
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.fsutil import atomic_open, atomic_write_bytes
from exporter.loader import load_session
from tests.browser_util import (
    CORPUS,
    V1_FIXTURES,
    embedded_jsonl,
    fixture_path,
    parse_html,
    unicode_session,
)
from tests.page_anchors import anchor_for
from tests.xss_corpus import build_corpus

SAMPLER = "every-entry-type.jsonl"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def copy_fixture(name: str, folder: Path) -> Path:
    target = folder / name
    shutil.copyfile(fixture_path(name), target)
    return target


def assert_clean_error(stderr: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("pi-session: error: "), stderr
    assert "Traceback" not in stderr


def test_default_output_name_in_the_current_folder(runner: CliRunner, in_tmp: Path) -> None:
    (in_tmp / "in").mkdir()
    source = copy_fixture(SAMPLER, in_tmp / "in")
    result = runner.invoke(cli, ["export", str(source)])
    assert result.exit_code == 0, result.output
    expected = in_tmp / "pi-session-every-entry-type.html"
    assert expected.is_file()
    assert result.stdout.strip() == "pi-session-every-entry-type.html"
    assert (in_tmp / result.stdout.strip()).resolve() == expected.resolve()
    page = parse_html(expected.read_text(encoding="utf-8"))
    assert {e.id for e in load_session(source).entries} == set(page.by_entry)
    assert sorted(p.name for p in in_tmp.iterdir()) == ["in", expected.name], "no temp files"


def test_output_option_writes_there_and_prints_the_path(runner: CliRunner, in_tmp: Path) -> None:
    target = in_tmp / "out" / "page.html"
    target.parent.mkdir()
    result = runner.invoke(cli, ["export", str(fixture_path(SAMPLER)), "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(target)
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert [p.name for p in target.parent.iterdir()] == ["page.html"]


def test_existing_output_is_replaced_atomically(runner: CliRunner, in_tmp: Path) -> None:
    """A rename over the old file (new inode): readers never see a half-written page."""
    target = in_tmp / "page.html"
    target.write_text("old page", encoding="utf-8")
    before = target.stat().st_ino
    result = runner.invoke(cli, ["export", str(fixture_path(SAMPLER)), "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert target.stat().st_ino != before
    assert [p.name for p in in_tmp.iterdir()] == ["page.html"]


@pytest.mark.parametrize(
    "error",
    [RuntimeError("render failed"), KeyboardInterrupt(), OSError(errno.ENOSPC, "No space left")],
    ids=["exception", "ctrl-c", "disk-full"],
)
@pytest.mark.parametrize("old", [None, b"old page\n"], ids=["new-file", "existing-file"])
def test_a_failed_atomic_write_leaves_no_temp_file_and_the_old_bytes(
    tmp_path: Path, error: BaseException, old: bytes | None
) -> None:
    """fsutil promises "a failed write leaves no debris": the half-written temp file goes,
    and a file that was there keeps its bytes (it is only replaced on success)."""
    target = tmp_path / "out.html"
    if old is not None:
        target.write_bytes(old)
    with pytest.raises(type(error)), atomic_open(target) as stream:
        stream.write(b"<!DOCTYPE html><p>half a pa")
        stream.flush()
        (temp,) = tmp_path.glob(".out.html.*.tmp")  # the write went to a temp file
        assert temp.read_bytes().startswith(b"<!DOCTYPE html>")
        raise error
    assert sorted(p.name for p in tmp_path.iterdir()) == ([] if old is None else ["out.html"])
    if old is not None:
        assert target.read_bytes() == old


def test_a_failed_rename_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last step can fail too (another file system, a folder now read-only): the whole
    page sits in the temp file, which must still be removed."""
    target = tmp_path / "out.html"
    target.write_bytes(b"old page\n")

    def refuse(source: object, destination: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr("exporter.fsutil.os.replace", refuse)
    with pytest.raises(OSError, match="cross-device"):
        atomic_write_bytes(target, b"<!DOCTYPE html><p>new page</p>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.html"]
    assert target.read_bytes() == b"old page\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="Linux's always-full device")
def test_a_full_device_is_named_like_a_full_disk(tmp_path: Path) -> None:
    """``-o /dev/full`` said "No space left on device" without saying where."""
    done = run_cli("export", str(fixture_path(SAMPLER)), "-o", "/dev/full", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert_clean_error(done.stderr)
    assert "/dev/full: No space left on device" in done.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="Linux's always-full device")
def test_no_report_is_left_of_a_page_a_full_disk_stopped(tmp_path: Path) -> None:
    """The --report file was written and announced before the page, which then failed: a
    report of a page that does not exist (CLI review s43)."""
    report = tmp_path / "report.jsonl"
    done = run_cli(
        "export", str(fixture_path(SAMPLER)), "--redact", "-o", "/dev/full",
        "--report", str(report), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "/dev/full: No space left on device" in done.stderr
    assert "report written" not in done.stderr and not report.exists()


def test_a_write_cut_short_by_a_full_disk_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    """The page fails half-way through its write (a file-size limit smaller than the page,
    as a full disk would): exit 2 with one clean line, no traceback, no temp file in the
    output folder, and an existing page is left as it was."""
    resource = pytest.importorskip("resource")  # POSIX only

    limit = 16 * 1024  # the page of every-entry-type is ~80 KB: its write starts, then fails

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    out = tmp_path / "out"
    out.mkdir()
    (out / "page.html").write_bytes(b"old page\n")
    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"}
    env |= {"PYTHONDONTWRITEBYTECODE": "1", "PI_SESSION_NO_TEMPLATE_CACHE": "1"}
    for name in ("page.html", "new.html"):
        done = subprocess.run(
            [sys.executable, "-m", "exporter", "export", str(fixture_path(SAMPLER)),
             "-o", str(out / name)],
            cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120,
            preexec_fn=small_files, check=False,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert done.stdout == ""
        assert_clean_error(done.stderr)
        assert f"{out / name}: File too large" in done.stderr  # says which file
        assert sorted(p.name for p in out.iterdir()) == ["page.html"], "no temp file left"
        assert (out / "page.html").read_bytes() == b"old page\n"
    done = run_cli("export", str(fixture_path(SAMPLER)), "-o", str(out / "new.html"), cwd=tmp_path)
    assert done.returncode == 0 and (out / "new.html").stat().st_size > limit  # it needs more


def test_a_symlink_is_written_through_and_stays_a_link(runner: CliRunner, in_tmp: Path) -> None:
    """The rename replaced the link itself with a page and left its file as it was."""
    real = in_tmp / "real.html"
    real.write_text("old page", encoding="utf-8")
    link = in_tmp / "link.html"
    link.symlink_to("real.html")
    result = runner.invoke(cli, ["export", str(fixture_path(SAMPLER)), "-o", str(link)])
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == "real.html"
    assert real.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in in_tmp.iterdir()) == ["link.html", "real.html"]
    loop = in_tmp / "loop.html"  # a loop of links is an error, as for a shell's >
    loop.symlink_to("loop.html")
    result = runner.invoke(cli, ["export", str(fixture_path(SAMPLER)), "-o", str(loop)])
    assert result.exit_code == 2 and "Too many levels of symbolic links" in result.stderr
    assert loop.is_symlink() and os.readlink(loop) == "loop.html"


@pytest.mark.parametrize("command", ["export", "redact"])
def test_a_pipe_or_device_is_written_not_replaced(tmp_path: Path, command: str) -> None:
    """-o onto a FIFO or /dev/null renamed a regular file over it (as root, /dev/null became
    a page); as another user it failed on the folder. Now they are written as they are."""
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    source = str(fixture_path(SAMPLER))
    done = run_cli(command, source, "-o", str(fifo), cwd=tmp_path)
    reader.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert received and received[0].startswith(b"<!DOCTYPE html>" if command == "export" else b"{")
    done = run_cli(command, source, "-o", os.devnull, "--report", os.devnull, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


@pytest.mark.parametrize("command", ["export", "redact"])
def test_an_empty_output_name_is_refused(runner: CliRunner, in_tmp: Path, command: str) -> None:
    """``-o ""`` quietly wrote the default file name."""
    result = runner.invoke(cli, [command, str(fixture_path(SAMPLER)), "-o", ""])
    assert result.exit_code == 1
    assert "the name is empty" in result.stderr
    assert list(in_tmp.iterdir()) == []


@pytest.mark.parametrize("command", ["export", "redact", "share", "publish"])
def test_an_empty_report_name_is_refused(runner: CliRunner, in_tmp: Path, command: str) -> None:
    """``--report ""`` quietly wrote no report (and went on to export, share or publish)."""
    source = str(fixture_path(SAMPLER))
    result = runner.invoke(cli, [command, source, "--report", ""])
    assert result.exit_code == 1
    assert "invalid value for '--report': the name is empty" in result.stderr
    assert list(in_tmp.iterdir()) == []


def test_dash_writes_the_page_to_stdout_only(runner: CliRunner, in_tmp: Path) -> None:
    corpus = in_tmp / CORPUS
    corpus.write_bytes(build_corpus())
    result = runner.invoke(cli, ["export", str(corpus), "-o", "-"])
    assert result.exit_code == 0, result.stderr
    html = result.stdout_bytes.decode("utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert set(parse_html(html).by_entry) == {e.id for e in load_session(corpus).entries}
    assert "pi-session: warning:" in result.stderr, "damaged lines are reported on stderr"
    assert sorted(p.name for p in in_tmp.iterdir()) == [CORPUS], "nothing written"


def test_an_unreadable_start_is_said_on_stderr_and_in_the_page(
    runner: CliRunner, in_tmp: Path
) -> None:
    """A header dated "yesterday" made the first readable entry the session's start, with
    no word of it: stderr and the page's list of the file's problems now say why."""
    header, *entries = fixture_path(SAMPLER).read_text(encoding="utf-8").splitlines()
    session = in_tmp / "s.jsonl"
    dated = {**json.loads(header), "timestamp": "yesterday"}
    session.write_text("\n".join([json.dumps(dated), *entries]) + "\n", encoding="utf-8")
    result = runner.invoke(cli, ["export", str(session), "-o", "page.html"])
    assert result.exit_code == 0, result.stderr
    said = "line 1: timestamp 'yesterday' is not an ISO date and time;"
    assert f"pi-session: warning: {said}" in result.stderr
    page = (in_tmp / "page.html").read_text(encoding="utf-8")
    assert said.replace("'", "&#39;") in page, "listed with the file's other problems"


def test_theme_leaf_and_no_embed_options(runner: CliRunner, in_tmp: Path) -> None:
    source = str(fixture_path(SAMPLER))
    result = runner.invoke(
        cli, ["export", source, "-o", "-", "--theme", "dark", "--no-embed", "--leaf", "e25"]
    )
    assert result.exit_code == 0, result.stderr
    page = parse_html(result.stdout_bytes.decode("utf-8"))
    (html,) = page.all(lambda e: e.tag == "html")
    assert html.get("data-theme") == "dark"
    assert not page.all(lambda e: e.get("id") == "session-jsonl")
    (leaf,) = page.all(lambda e: e.tag == "li" and e.has_class("leaf"))
    assert leaf.find_all(lambda e: e.tag == "a")[0].get("href") == "#e25"


def test_leaf_accepts_a_unique_prefix_only(runner: CliRunner, in_tmp: Path) -> None:
    source = fixture_path("pi-branched-1.jsonl")
    session = load_session(source)
    other = next(i for i in session.leaf_ids if i != session.leaf_id)
    result = runner.invoke(cli, ["export", str(source), "-o", "-", "--leaf", other[:6]])
    assert result.exit_code == 0, result.stderr
    (leaf,) = parse_html(result.stdout_bytes.decode("utf-8")).all(
        lambda e: e.tag == "li" and e.has_class("leaf")
    )
    assert leaf.find_all(lambda e: e.tag == "a")[0].get("href") == "#" + anchor_for(session, other)
    result = runner.invoke(cli, ["export", str(fixture_path(SAMPLER)), "-o", "-", "--leaf", "e2"])
    assert result.exit_code == 1, "e2 is ambiguous (e20 … e25)"
    assert_clean_error(result.stderr)


def test_unknown_leaf_is_a_usage_error(runner: CliRunner, in_tmp: Path) -> None:
    result = runner.invoke(cli, ["export", str(fixture_path(SAMPLER)), "--leaf", "nope"])
    assert result.exit_code == 1
    assert_clean_error(result.stderr)
    assert "nope" in result.stderr
    assert list(in_tmp.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [["--theme", "purple"], ["--no-such-option"], ["-o"]],
    ids=["bad-theme", "unknown-option", "missing-value"],
)
def test_usage_errors_exit_1(runner: CliRunner, in_tmp: Path, args: list[str]) -> None:
    """The spec: exit 1 for usage errors, 2 for bad input (click's own default is 2)."""
    result = runner.invoke(cli, ["export", str(fixture_path(SAMPLER)), *args])
    assert "Traceback" not in result.output
    assert result.exit_code == 1, f"usage error exited {result.exit_code}: {result.stderr}"


BAD_INPUTS = {
    "missing": None,
    "empty": b"",
    "binary": bytes(range(256)) * 4,
    "other-json": b'{"name": "package", "version": "1.0.0"}\n[1, 2, 3]\n',
    "html": b"<!DOCTYPE html><html><body>not a session</body></html>\n",
}


@pytest.mark.parametrize("kind", list(BAD_INPUTS))
def test_bad_input_exits_2_with_one_clean_line(runner: CliRunner, in_tmp: Path, kind: str) -> None:
    path = in_tmp / f"{kind}.jsonl"
    data = BAD_INPUTS[kind]
    if data is not None:
        path.write_bytes(data)
    result = runner.invoke(cli, ["export", str(path), "--sessions-dir", str(in_tmp / "none")])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert_clean_error(result.stderr)
    assert result.stdout == ""
    assert sorted(p.name for p in in_tmp.iterdir()) == ([path.name] if data is not None else [])


def test_a_folder_as_input_or_output_is_refused(runner: CliRunner, in_tmp: Path) -> None:
    result = runner.invoke(cli, ["export", str(in_tmp)])
    assert result.exit_code == 2
    assert_clean_error(result.stderr)
    (in_tmp / "out").mkdir()
    result = runner.invoke(cli, ["export", str(fixture_path(SAMPLER)), "-o", str(in_tmp / "out")])
    assert result.exit_code == 1
    assert_clean_error(result.stderr)
    assert list((in_tmp / "out").iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ["export", "--demo", "-o", "nodir/"],
        ["redact", "--demo", "-o", "nodir/"],
        ["redact", "--demo", "-o", "c.jsonl", "--report", "nodir/"],
        ["export", "--demo", "-o", "p.html", "--report", "nodir/"],
        ["export", "--demo", "-o", "nodir/."],
        ["redact", "--demo", "-o", "nodir/.."],
    ],
)
def test_an_output_ending_in_a_slash_names_a_folder(
    runner: CliRunner, in_tmp: Path, args: list[str]
) -> None:
    """`-o nodir/` wrote a page into a FILE called nodir and said nothing (pathlib drops the
    slash); an existing folder was refused already."""
    result = runner.invoke(cli, args)
    assert result.exit_code == 1
    assert "names a folder; give a file name" in result.stderr and args[-1] in result.stderr
    assert_clean_error(result.stderr)
    assert list(in_tmp.iterdir()) == []


@pytest.mark.parametrize("name", [SAMPLER, *V1_FIXTURES])
def test_input_file_is_never_modified(runner: CliRunner, in_tmp: Path, name: str) -> None:
    """Pi rewrites legacy v1 files in place; the exporter must only read."""
    source = copy_fixture(name, in_tmp)
    os.utime(source, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    before = (source.read_bytes(), source.stat().st_mtime_ns)
    source.chmod(0o444)
    result = runner.invoke(cli, ["export", str(source), "-o", str(in_tmp / "page.html")])
    assert result.exit_code == 0, result.output
    assert (source.read_bytes(), source.stat().st_mtime_ns) == before


def test_demo_session(runner: CliRunner, in_tmp: Path) -> None:
    result = runner.invoke(cli, ["export", "--demo", "-o", "demo.html"])
    assert result.exit_code == 0, result.output
    page = parse_html((in_tmp / "demo.html").read_text(encoding="utf-8"))
    assert page.by_entry and page.branches()


def test_open_hands_the_file_to_the_browser(
    runner: CliRunner, in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, *a, **k: opened.append(url) or True)
    result = runner.invoke(cli, ["export", str(fixture_path(SAMPLER)), "-o", "p.html", "--open"])
    assert result.exit_code == 0, result.output
    assert opened == [(in_tmp / "p.html").resolve().as_uri()]


@pytest.mark.parametrize("all_sessions", [False, True])
def test_a_browser_that_does_not_start_is_a_warning(
    runner: CliRunner, in_tmp: Path, monkeypatch: pytest.MonkeyPatch, all_sessions: bool
) -> None:
    """A review: ``BROWSER=/bin/false export --open`` exited 0 without a word
    (``webbrowser.open`` reports a failure only by returning False)."""
    monkeypatch.setattr("webbrowser.open", lambda url, *a, **k: False)
    if all_sessions:
        args = ["export", "--all", "--sessions-dir", str(sessions_folder(in_tmp)), "-o", "site"]
        page = Path("site", "index.html")
    else:
        args = ["export", str(fixture_path(SAMPLER)), "-o", "p.html"]
        page = Path("p.html")
    result = runner.invoke(cli, [*args, "--open"])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if "browser" in line]
    assert warnings == [f"pi-session: warning: could not open a browser; the page is {page}"]
    assert (in_tmp / page).is_file()


def sessions_folder(root: Path) -> Path:
    """A sessions folder with one project of one session, for ``--all``."""
    project = root / "sessions" / "--p--"
    project.mkdir(parents=True)
    copy_fixture(SAMPLER, project)
    return root / "sessions"


def test_since_empty_and_since_the_first_date(runner: CliRunner, in_tmp: Path) -> None:
    """A review: ``--since ''`` quietly meant no filter (an empty ``--report`` is refused),
    and ``--since 0001-01-01`` was refused with "use YYYY-MM-DD" although it is one (its
    local midnight cannot be placed: Python looks up the offset a day earlier, in year 0)."""
    site = ["export", "--all", "--sessions-dir", str(sessions_folder(in_tmp)), "-o", "site"]
    empty = runner.invoke(cli, [*site, "--since", ""])
    assert empty.exit_code == 1 and "the value is empty" in empty.stderr, empty.output
    assert_clean_error(empty.stderr)
    assert not (in_tmp / "site").exists()
    alone = runner.invoke(cli, ["export", str(fixture_path(SAMPLER)), "--since", ""])
    assert alone.exit_code == 1 and "only go with --all" in alone.stderr, alone.output
    first = runner.invoke(cli, [*site, "--since", "0001-01-01"])
    assert first.exit_code == 1, first.output
    assert_clean_error(first.stderr)
    assert "'0001-01-01': out of range, the earliest date is 0001-01-02" in first.stderr
    assert "YYYY-MM-DD" not in first.stderr and not (in_tmp / "site").exists()
    earliest = runner.invoke(cli, [*site, "--since", "0001-01-02"])
    assert earliest.exit_code == 0, earliest.output
    assert (in_tmp / "site" / "index.html").is_file()


def test_the_printed_path_is_the_page_written(runner: CliRunner, in_tmp: Path) -> None:
    """A review: click.echo drops escape codes when stdout is no terminal, so
    ``$(pi-session export …)`` got ``pi-session-escred.html``, which did not exist."""
    source = in_tmp / "esc\x1b[31mred.jsonl"
    shutil.copyfile(fixture_path(SAMPLER), source)
    result = runner.invoke(cli, ["export", str(source)])
    assert result.exit_code == 0, result.output
    assert result.stdout == "pi-session-esc\x1b[31mred.html\n"
    assert (in_tmp / result.stdout[:-1]).is_file()


def test_the_written_path_is_printed_to_any_stdout(in_tmp: Path) -> None:
    """Printing the exact path (bytes to stdout's buffer) crashed with a traceback, after the
    page was written, when stdout was closed (``>&-``) or a text stream without a buffer
    (the CLI called in-process under ``redirect_stdout``)."""
    import contextlib
    import io

    from exporter.cli import main

    closed = subprocess.run(
        ["sh", "-c", f'exec "{sys.executable}" -m exporter export --demo -o closed.html >&-'],
        cwd=in_tmp,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert closed.returncode == 0 and "Traceback" not in closed.stderr, closed.stderr
    assert (in_tmp / "closed.html").is_file()
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured), pytest.raises(SystemExit) as done:
        main(["export", "--demo", "-o", str(in_tmp / "in-process.html")])
    assert done.value.code == 0
    assert captured.getvalue() == f"{in_tmp / 'in-process.html'}\n"


def test_unicode_session_through_the_cli(runner: CliRunner, in_tmp: Path) -> None:
    source = in_tmp / "ünï-😀.jsonl"
    source.write_bytes(unicode_session())
    result = runner.invoke(cli, ["export", str(source)])
    assert result.exit_code == 0, result.output
    written = in_tmp / "pi-session-ünï-😀.html"
    html = written.read_bytes().decode("utf-8")  # strict UTF-8
    assert "中文字符" in html


# --- the real command, in a subprocess ------------------------------------------------------


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PI_CODING_AGENT_DIR",)}
    env["PYTHONIOENCODING"] = "utf-8"
    return subprocess.run(
        [sys.executable, "-m", "exporter", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=120,
        check=False,
    )


def test_subprocess_export_and_bad_input(tmp_path: Path) -> None:
    source = copy_fixture("pi-branched-1.jsonl", tmp_path)
    done = run_cli("export", str(source), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "pi-session-pi-branched-1.html\n"
    assert "Traceback" not in done.stderr
    html = (tmp_path / "pi-session-pi-branched-1.html").read_text(encoding="utf-8")
    assert set(parse_html(html).by_entry) == {e.id for e in load_session(source).entries}

    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"\x00\xff\xfe garbage \x89PNG\r\n")
    failed = run_cli("export", str(junk), cwd=tmp_path)
    assert failed.returncode == 2
    assert failed.stdout == ""
    assert_clean_error(failed.stderr)


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_output_files_follow_the_umask_and_keep_their_mode(tmp_path: Path) -> None:
    """A page may hold secrets (export does not redact): a umask of 077 keeps it private,
    and rewriting a file the user made private does not open it to everyone."""
    source = fixture_path("every-entry-type.jsonl")
    out = tmp_path / "page.html"
    code = (
        "import os, sys\nos.umask(0o077)\nfrom exporter.cli import main\n"
        f"sys.argv = ['pi-session', 'export', {str(source)!r}, '-o', {str(out)!r}]\nmain()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert oct(out.stat().st_mode & 0o777) == oct(0o600)
    out.chmod(0o640)
    done = run_cli("export", str(source), "-o", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert oct(out.stat().st_mode & 0o777) == oct(0o640)


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="Linux shows the umask")
def test_the_umask_is_read_without_being_changed_and_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading it meant setting it to 022 for a moment (a file another thread made then got
    0644 under the user's 077), and the first answer was kept after the program changed it
    (code review 2026-12-01)."""
    from exporter import fsutil

    old = os.umask(0o077)
    try:
        monkeypatch.setattr(fsutil.os, "umask", lambda mask: pytest.fail("umask was set"))
        assert fsutil._umask() == 0o077
        atomic_write_bytes(tmp_path / "a.html", b"x")
        monkeypatch.undo()
        os.umask(0o027)
        assert fsutil._umask() == 0o027
        atomic_write_bytes(tmp_path / "b.html", b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "a.html").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "b.html").stat().st_mode & 0o777 == 0o640


def test_a_reader_that_stops_early_gets_no_error(tmp_path: Path) -> None:
    """`pi-session list --json | head` printed "error: Broken pipe" and exited 2; now it
    ends quietly with 141, what a shell reports for a tool stopped by SIGPIPE."""
    folder = tmp_path / "sessions" / "--p--"
    folder.mkdir(parents=True)
    source = fixture_path("every-entry-type.jsonl").read_bytes()
    for n in range(400):  # ~200 KB of JSON: more than a pipe holds
        (folder / f"2025-01-01T00-00-{n:03d}Z_s{n}.jsonl").write_bytes(source)
    command = [sys.executable, "-m", "exporter", "list", "--all", "--json", "--sessions-dir",
               str(tmp_path / "sessions")]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(10).startswith(b"{")
    process.stdout.close()
    error = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141 and error == "", error


@pytest.mark.parametrize("command", ["export", "redact"])
def test_output_problems_are_found_before_any_work(
    runner: CliRunner, in_tmp: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """`-o` naming a folder, or a file in a missing folder, failed only after the whole
    session was rendered (seconds on a big one)."""
    import exporter.export_cli
    import exporter.redact

    def no_work(*_: object, **__: object) -> None:
        raise AssertionError("rendered or redacted before the output was checked")

    monkeypatch.setattr(exporter.export_cli, "render_session", no_work)
    monkeypatch.setattr(exporter.redact, "apply_policy", no_work)
    (in_tmp / "folder").mkdir()
    source = str(fixture_path("pi-branched-4.jsonl"))
    folder = runner.invoke(cli, [command, source, "-o", "folder"])
    assert folder.exit_code == 1 and "-o: folder is a folder" in folder.output, folder.output
    missing = runner.invoke(cli, [command, source, "-o", "nowhere/x.out"])
    assert missing.exit_code == 1 and "the folder nowhere does not exist" in missing.output
    assert not (in_tmp / "nowhere").exists()


@pytest.mark.parametrize("command", ["export", "redact"])
def test_stdout_cut_short_is_141_also_unbuffered(tmp_path: Path, command: str) -> None:
    """Unbuffered (PYTHONUNBUFFERED, common in containers) one write could take only part
    of the page when the reader went away: the rest was lost and the exit code was 0."""
    extra = ["--no-redact"] if command == "redact" else []
    args = [sys.executable, "-m", "exporter", command, str(fixture_path("pi-branched-4.jsonl")),
            "-o", "-", *extra]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(10)
    process.stdout.close()
    error = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141, error
    assert "Traceback" not in error


def test_a_page_is_not_written_under_another_format_s_name(runner: CliRunner, in_tmp: Path) -> None:
    """`export -o notes.md` wrote HTML into notes.md and said nothing (peer review); it now
    writes Markdown there (tests/test_markdown_export.py). Other formats' names are errors."""
    source = copy_fixture(SAMPLER, in_tmp)
    refused = [
        ([], ["notes.txt", "s.JSONL", "page.pdf", "page.xhtml"]),  # a browser reads XML there
        # the same names for Markdown, but .txt (Markdown is text), and a page's (CLI review)
        (["--format", "md"], ["s.JSONL", "page.pdf", "x.xhtml"]),
    ]
    for options, names in refused:
        for name in names:
            result = runner.invoke(cli, ["export", str(source), "-o", name, *options])
            assert result.exit_code == 1, (options, name)
            assert_clean_error(result.stderr)
            assert "export writes an HTML page (.html) or Markdown (.md)" in result.stderr
            assert not (in_tmp / name).exists()
    for name in ("page.html", "page.htm", "page"):  # a page's names, or none
        assert runner.invoke(cli, ["export", str(source), "-o", name]).exit_code == 0
    for name in ("notes.md", "notes.txt", "notes"):
        result = runner.invoke(cli, ["export", str(source), "-o", name, "--format", "md"])
        assert result.exit_code == 0 and (in_tmp / name).read_text("utf-8").startswith("# ")


@pytest.mark.parametrize("command", ["export", "redact"])
def test_an_output_never_replaces_a_pi_session(
    runner: CliRunner, in_tmp: Path, command: str
) -> None:
    """`export -o` onto a session file turned the session into HTML."""
    source = copy_fixture(SAMPLER, in_tmp)
    other = copy_fixture("pi-branched-1.jsonl", in_tmp).rename(in_tmp / "other-session")
    before = other.read_bytes()
    result = runner.invoke(cli, [command, str(source), "-o", str(other)])
    assert result.exit_code == 1
    assert_clean_error(result.stderr)
    assert "a Pi session file" in result.stderr and other.read_bytes() == before
    packed = in_tmp / "packed-session"  # one we read gzipped (security review 2026-12-01)
    packed.write_bytes(gzip.compress(before))
    result = runner.invoke(cli, [command, str(source), "-o", str(packed)])
    assert result.exit_code == 1 and "a Pi session file" in result.stderr
    assert gzip.decompress(packed.read_bytes()) == before
    # any other file: replaced (redact's named .jsonl: it refuses a page's name, review 150)
    html = in_tmp / ("page.html" if command == "export" else "old.jsonl")
    html.write_text("<p>an old page</p>", encoding="utf-8")
    assert runner.invoke(cli, [command, str(source), "-o", str(html)]).exit_code == 0
    if command == "redact":
        # a second run replaces its own copy at the default name ...
        default = [runner.invoke(cli, [command, str(source)]) for _ in range(2)]
        assert [r.exit_code for r in default] == [0, 0], default[1].output
        # ... but a copy keeps its session's id, so a chosen name that holds the same
        # session (the original, a backup) is never replaced: a second -o run was, and with
        # it Pi's own session file once a copy was redacted again onto it
        backup = in_tmp / "backup.jsonl"
        backup.write_bytes(source.read_bytes())
        onto = runner.invoke(cli, [command, str(source), "-o", str(backup), "--no-thinking"])
        assert onto.exit_code == 1 and backup.read_bytes() == source.read_bytes()


def test_conflicting_choices_are_usage_errors(runner: CliRunner, in_tmp: Path) -> None:
    """SESSION with --demo rendered the demo; `-o - --open` opened nothing."""
    source = copy_fixture(SAMPLER, in_tmp)
    for args in (["export", str(source), "--demo"], ["stats", str(source), "--demo"],
                 ["export", str(source), "-o", "-", "--open"]):  # fmt: skip
        result = runner.invoke(cli, args)
        assert result.exit_code == 1, result.output
        assert_clean_error(result.stderr)
        assert result.stdout == ""


@pytest.mark.parametrize(
    "value",
    [
        "./secrets.tx",
        "~/no-such-secrets-file",
        "sub",
        "mysecrets.txt",
        "prod.env",
        ".env",
        "id_rsa",
    ],
)
def test_a_secret_that_names_no_file_is_an_error(
    runner: CliRunner, in_tmp: Path, value: str
) -> None:
    """`--secret ./secrets.tx` (a typo) was taken as a literal secret: the run said "no
    secrets found" and left every secret in the meant file in place."""
    (in_tmp / "sub").mkdir()
    value = value if value != "sub" else str(in_tmp / "sub")
    source = copy_fixture(SAMPLER, in_tmp)
    result = runner.invoke(cli, ["redact", str(source), "-o", "out.jsonl", "--secret", value])
    assert result.exit_code == 1  # a usage error, as click says of --env-file
    assert_clean_error(result.stderr)
    assert "put it in a file" in result.stderr or "folder" in result.stderr
    if value != str(in_tmp / "sub"):  # it may be a secret that starts with "/": not echoed
        assert value[2:] not in result.stderr and value not in result.stderr
    assert not (in_tmp / "out.jsonl").exists()
    (in_tmp / "secrets.txt").write_text("correct-horse-battery\n", encoding="utf-8")
    fine = runner.invoke(cli, ["redact", str(source), "-o", "out.jsonl", "--secret",
                               "./secrets.txt", "--secret", "a/literal+secret/value"])  # fmt: skip
    assert fine.exit_code == 0, fine.output


_RUN_WITH_ATEXIT = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('teardown ran\\n'))\n"
    "from exporter.cli import run\n"
    "run()\n"
)


def test_the_program_ends_without_the_interpreters_teardown_once_all_is_written(
    in_tmp: Path,
) -> None:
    """Freeing every module and object at exit took ~45 ms of a 0.45 s export. Once the
    page is written (or piped out whole), the program now ends at once; a failure, or a
    command that did not say all is written, still exits the usual way."""
    base = [sys.executable, "-c", _RUN_WITH_ATEXIT]
    written = subprocess.run(
        [*base, "export", "--demo", "-o", "page.html"],
        cwd=in_tmp, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    assert written.stdout == "page.html\n" and "teardown ran" not in written.stderr
    assert (in_tmp / "page.html").read_text(encoding="utf-8").rstrip().endswith("</html>")
    piped = subprocess.run(
        [*base, "export", "--demo", "-o", "-"], cwd=in_tmp, capture_output=True, timeout=120
    )
    assert piped.returncode == 0 and piped.stdout.rstrip().endswith(b"</html>")
    assert piped.stdout == (in_tmp / "page.html").read_bytes()  # every byte flushed
    failed = subprocess.run(
        [*base, "export", "missing.jsonl"], cwd=in_tmp, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert failed.returncode != 0 and "teardown ran" in failed.stderr
    listed = subprocess.run(
        [*base, "stats", "--demo"], cwd=in_tmp, capture_output=True, text=True, timeout=120
    )
    assert listed.returncode == 0 and "teardown ran" in listed.stderr  # not marked: as before


def test_naming_a_secret_turns_redaction_on_where_it_is_off(
    runner: CliRunner, in_tmp: Path
) -> None:
    """`export --secret X` (redaction off by default) kept X in the page without a word, and
    `--report` wrote no report."""
    source = in_tmp / "secret.jsonl"
    source.write_text(
        '{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}\n'
        '{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:01Z",'
        '"message":{"role":"user","content":"the pass is zebra-kumquat-4471, keep it"}}\n',
        encoding="utf-8",
    )
    env_file = in_tmp / "app.env"
    env_file.write_text("DB_PASSWORD=plugh-xyzzy-9931\n", encoding="utf-8")
    for option, value, secret in (("--secret", "zebra-kumquat-4471", "zebra-kumquat"),
                                  ("--env-file", str(env_file), None)):  # fmt: skip
        result = runner.invoke(cli, ["export", str(source), "-o", "page.html", option, value])
        assert result.exit_code == 0, result.output
        assert "redact: " in result.stderr
        page = (in_tmp / "page.html").read_text(encoding="utf-8")
        if secret:
            assert secret not in page and "the pass is" in page
    reported = runner.invoke(cli, ["export", str(source), "-o", "p2.html", "--report", "r.jsonl"])
    assert reported.exit_code == 0, reported.output
    assert (in_tmp / "r.jsonl").is_file()
    contradiction = runner.invoke(
        cli, ["export", str(source), "--no-redact", "--secret", "zebra-kumquat-4471"]
    )
    assert contradiction.exit_code == 1
    assert_clean_error(contradiction.stderr)
    assert "--no-redact" in contradiction.stderr
    nothing = runner.invoke(cli, ["export", str(source), "--no-redact", "--report", "r2.jsonl"])
    assert nothing.exit_code == 1 and "--report" in nothing.stderr  # it wrote no report
    assert not (in_tmp / "r2.jsonl").exists()


def test_ctrl_c_exits_130_with_one_line_and_writes_nothing(
    runner: CliRunner, in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C printed click's "Aborted!" and exited 1, the code for a usage error."""
    source = copy_fixture(SAMPLER, in_tmp)

    def interrupted(*args: object, **kwargs: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr("exporter.export_cli.render_session", interrupted)
    result = runner.invoke(cli, ["export", str(source), "-o", "page.html"])
    assert result.exit_code == 130, result.output
    assert result.stderr.strip() == "pi-session: interrupted"
    assert not (in_tmp / "page.html").exists()


def test_an_unwritable_folder_names_the_default_output_not_an_option_never_given(
    runner: CliRunner, in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without -o, the error said "-o: cannot write in the folder ."."""
    (in_tmp / "in").mkdir()
    source = copy_fixture(SAMPLER, in_tmp / "in")
    monkeypatch.setattr("exporter.redact_cli.os.access", lambda *args, **kwargs: False)
    for command in ("export", "redact"):
        result = runner.invoke(cli, [command, str(source)])
        assert result.exit_code == 2, result.output
        assert_clean_error(result.stderr)
        assert "(default name; -o names another): cannot write in the folder" in result.stderr
        assert "error: -o:" not in result.stderr


def test_jobs_zero_means_one_per_cpu_as_in_the_library(runner: CliRunner, in_tmp: Path) -> None:
    """RenderOptions(jobs=0) is "one per CPU"; the CLI refused -j 0 as out of range."""
    source = copy_fixture(SAMPLER, in_tmp)
    result = runner.invoke(cli, ["export", str(source), "-o", "page.html", "-j", "0"])
    assert result.exit_code == 0, result.output
    assert "data-entry-id=" in (in_tmp / "page.html").read_text(encoding="utf-8")
    negative = runner.invoke(cli, ["export", str(source), "-o", "page.html", "-j", "-1"])
    assert negative.exit_code == 1


def test_a_session_can_be_piped_in(in_tmp: Path) -> None:
    """`cat s.jsonl | pi-session export -` and `<(ssh host cat s.jsonl)` were refused
    ("'-' matches no session", "'/dev/stdin' is not a file"). A pipe is read once, and the
    page's download is what came through it."""
    data = fixture_path("pi-branched-1.jsonl").read_bytes()
    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"}
    command = [sys.executable, "-m", "exporter"]
    stats = subprocess.run([*command, "stats", "-", "--json"], input=data, capture_output=True,
                           cwd=in_tmp, env=env, timeout=120, check=False)  # fmt: skip
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["entries"] == len(
        load_session(fixture_path("pi-branched-1.jsonl")).entries
    )
    export = subprocess.run([*command, "export", "-"], input=data, capture_output=True,
                            cwd=in_tmp, env=env, timeout=120, check=False)  # fmt: skip
    assert export.returncode == 0, export.stderr
    # named after the session: `pi-session-stdin.html` (and `pi-session-63.html` for a
    # `<(…)` pipe) was every piped session's name, each export replacing the last
    sid = load_session(fixture_path("pi-branched-1.jsonl")).id
    page = (in_tmp / f"pi-session-{sid}.html").read_text(encoding="utf-8")
    assert embedded_jsonl(page) == [data]
    script = f"{shlex.join(command)} export <(cat)"
    fd_pipe = subprocess.run(["bash", "-c", script], input=data, capture_output=True,
                             cwd=in_tmp, env=env, timeout=120, check=False)  # fmt: skip
    assert fd_pipe.returncode == 0, fd_pipe.stderr
    assert fd_pipe.stdout.strip().endswith(f"pi-session-{sid}.html".encode())
    fifo = in_tmp / "pipe.jsonl"
    os.mkfifo(fifo)
    writer = subprocess.Popen(
        ["sh", "-c", f"cat '{fixture_path('every-entry-type.jsonl')}' > '{fifo}'"]
    )
    named = run_cli("stats", str(fifo), cwd=in_tmp)
    writer.wait(timeout=60)
    assert named.returncode == 0, named.stderr
    assert "Sampler session" in named.stdout


def test_a_terminal_is_no_session_to_read(in_tmp: Path) -> None:
    """`pi-session export -` typed at a prompt would wait for input nobody means to give."""
    main, child = os.openpty()
    try:
        command = [sys.executable, "-m", "exporter", "stats", "-"]
        done = subprocess.run(
            command, stdin=child, capture_output=True, text=True, cwd=in_tmp, timeout=60
        )
    finally:
        os.close(main)
        os.close(child)
    assert done.returncode == 2
    assert_clean_error(done.stderr)
    assert "stdin is a terminal" in done.stderr


def test_ctrl_c_while_the_program_imports_is_a_quiet_interrupt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Ctrl-C in the first ~60 ms (the modules still importing) printed a 20-line
    traceback through the import machinery; it is `pi-session: interrupted`, exit 130."""
    import importlib.abc

    from exporter import launch

    class Interrupted(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: object = None, target: object = None) -> None:
            if name == "exporter.cli":
                raise KeyboardInterrupt

    monkeypatch.delitem(sys.modules, "exporter.cli")
    monkeypatch.setattr(sys, "meta_path", [Interrupted(), *sys.meta_path])
    with pytest.raises(SystemExit) as stop:
        launch.run()
    assert stop.value.code == 130
    assert capsys.readouterr().err == "\npi-session: interrupted\n"


def test_the_script_and_python_m_run_through_the_launcher() -> None:
    """`pi-session` is `exporter.launch:run`, which catches a Ctrl-C during the imports."""
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert 'pi-session = "exporter.launch:run"' in text
    main = Path(__file__).resolve().parents[1] / "exporter" / "__main__.py"
    assert "from exporter.launch import run" in main.read_text(encoding="utf-8")


def test_a_site_folder_without_write_permission_is_named_not_our_lock_file(
    tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`export --all -o ro` said "ro/.pi-session-site.lock: Permission denied": a file the
    reader never named. It says the folder, as the other commands do, and exits 2. A lock
    file left by another user (an earlier sudo build) in a folder this user may write is
    taken read-only instead (it was "cannot write in this folder")."""
    import builtins

    from exporter import site as site_module

    sessions = tmp_path / "sessions" / "--p--"
    sessions.mkdir(parents=True)
    shutil.copy(fixture_path(SAMPLER), sessions / "2025-01-01T00-00-00-000Z_s.jsonl")
    out = tmp_path / "site"
    out.mkdir()
    writable = {"folder": False}

    def guarded_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if str(file).endswith(".pi-session-site.lock") and mode != "rb":
            raise PermissionError(13, "Permission denied", str(file))  # not this user's
        return builtins.open(file, mode, *args, **kwargs)

    def no_write(lock: Path) -> Any:  # (the lock is opened for writing with os.open)
        return guarded_open(lock, "a+b")

    monkeypatch.setattr(site_module, "open", guarded_open, raising=False)
    monkeypatch.setattr(site_module, "_open_lock_file", no_write)
    monkeypatch.setattr(
        site_module.os, "access", lambda path, mode: writable["folder"] or path != out
    )
    args = ["export", "--all", "-o", str(out), "--sessions-dir", str(tmp_path / "sessions")]
    refused = runner.invoke(cli, args)
    assert refused.exit_code == 2
    assert refused.stderr.strip() == f"pi-session: error: {out}: cannot write in this folder"
    writable["folder"] = True
    (out / ".pi-session-site.lock").touch()
    shared = runner.invoke(cli, args)
    assert shared.exit_code == 0, shared.stderr
    assert (out / "index.html").is_file()


def test_the_package_still_gives_its_names_and_modules() -> None:
    """The package imports its library names lazily (for the launcher's Ctrl-C); its names,
    and its modules as attributes, come as before."""
    code = (
        "import exporter\n"
        "from exporter import load_session, parse_session_bytes, Session, SessionFormatError\n"
        "assert exporter.loader.load_session is load_session\n"
        "assert not hasattr(exporter, 'no_such_thing')\n"
        "assert not hasattr(exporter, 'TYPE_CHECKING')\n"  # a helper, not a name it offers
        "from exporter import *\n"
        "print(sorted(n for n in exporter.__all__ if n in globals()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "load_session" in done.stdout and "Session" in done.stdout
