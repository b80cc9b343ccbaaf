"""Stop 74: outputs written as a shell and a shared folder expect.

1. ``-o /dev/stdout >> build.log`` (``/dev/stderr``, ``/dev/fd/N``, ``/proc/self/fd/N``)
   replaced the log with a new file, its earlier lines lost; into a pipe the echoed path ran
   into the page's last line; ``redact -o /dev/stdout > clean.jsonl`` was refused.
2. A replaced file lost its group (and, written by root, its owner).
3. ``--images files``: a replaced image kept neither mode nor group.
4. ``_check_output_path`` said "cannot write in the folder ." of a writable page in a folder
   the user cannot write, a permission problem of a read-only mount, and nothing of a sticky
   folder (the rename then failed with "Operation not permitted").
5. The publish key's folder was made 0775 under umask 002.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from exporter.cli import CliError
from exporter.publish.publish_key import key_file, load_publish_key
from exporter.redact_cli import _check_output_path
from tests.browser_util import fixture_path

SESSION = "pi-branched-1.jsonl"
WITH_IMAGES = "every-entry-type.jsonl"  # user and tool-result images
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
NOBODY = 65534  # another user, for the checks a root process would pass
needs_root = pytest.mark.skipif(not ROOT, reason="needs root (another user's files)")


def run_cli(
    *args: str,
    cwd: Path,
    stdout: int = subprocess.PIPE,
    stderr: int = subprocess.PIPE,
    pass_fds: tuple[int, ...] = (),
    umask: int | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """The program in a process of its own, its streams where a shell would send them."""
    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"}
    return subprocess.run(
        [sys.executable, "-m", "exporter", *args],
        cwd=cwd,
        stdout=stdout,
        stderr=stderr,
        pass_fds=pass_fds,
        env=env,
        timeout=120,
        check=False,
        preexec_fn=None if umask is None else (lambda: os.umask(umask)),
    )


def other_group() -> int:
    """A group the files may be given other than the user's own: any, as root."""
    if ROOT:
        return 4374
    groups = [gid for gid in os.getgroups() if gid != os.getegid()]
    if not groups:
        pytest.skip("the user is in no second group")
    return groups[0]


# --- 1: a process's own streams are written through the shell's descriptor -----------------


@pytest.mark.parametrize(
    ("kind", "output", "stream"),
    [
        ("html", "/dev/stdout", 1),
        ("md", "/dev/stderr", 2),
        ("html", "/proc/self/fd/1", 1),
        ("md", "/dev/fd/1", 1),
        ("html", "/dev/fd/{fd}", None),
    ],
)
def test_an_own_stream_appended_to_a_log_keeps_the_log(
    tmp_path: Path, kind: str, output: str, stream: int | None
) -> None:
    """`-o /dev/stdout >> build.log` truncated build.log and renamed a new file over it:
    the log's earlier lines were gone, and the page was followed by its own path."""
    log = tmp_path / "build.log"
    log.write_bytes(b"PRIOR LOG LINE\n")
    inode = log.stat().st_ino
    with open(log, "ab") as appended:
        fd = appended.fileno()
        sent = {"stdout": fd} if stream == 1 else {"stderr": fd} if stream == 2 else {}
        done = run_cli(
            "export", str(fixture_path(SESSION)), "--format", kind,
            "-o", output.format(fd=fd), cwd=tmp_path, pass_fds=(fd,), **sent,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = log.read_bytes()
    assert log.stat().st_ino == inode
    assert data.startswith(b"PRIOR LOG LINE\n"), data[:200]
    page = b"</html>" if kind == "html" else b"\n# "
    assert page in data
    assert b"/dev/" not in data[-40:] and b"/proc/" not in data[-40:]
    if stream != 1:
        assert done.stdout == b""  # no path said either


@pytest.mark.parametrize("command", [["export"], ["export", "--format", "md"], ["redact"]])
def test_an_own_stream_into_a_pipe_is_the_output_alone(tmp_path: Path, command: list[str]) -> None:
    """Into a pipe the page was followed by the path, no newline: `…</html>/dev/stdout`."""
    done = run_cli(*command, str(fixture_path(SESSION)), "-o", "/dev/stdout", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not done.stdout.rstrip().endswith(b"/dev/stdout"), done.stdout[-60:]
    if command == ["export"]:
        assert done.stdout.rstrip().endswith(b"</html>")
    if command == ["redact"]:
        lines = done.stdout.decode("utf-8").splitlines()
        assert all(isinstance(json.loads(line), dict) for line in lines)


def test_redact_to_dev_stdout_sent_to_a_jsonl_file_is_written(tmp_path: Path) -> None:
    """`redact -o /dev/stdout > clean.jsonl` was refused (the name /dev/stdout is no
    .jsonl), with advice to write /dev/stdout.md."""
    with open(tmp_path / "clean.jsonl", "wb") as out:
        done = run_cli("redact", str(fixture_path(SESSION)), "-o", "/dev/stdout", cwd=tmp_path,
                       stdout=out.fileno())  # fmt: skip
    assert done.returncode == 0, done.stderr
    first = (tmp_path / "clean.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert json.loads(first)["type"] == "session"


def test_open_is_refused_for_an_own_stream(tmp_path: Path) -> None:
    """`--open -o /dev/stdout` asks for a file to open where a stream is written, as `-o -`."""
    done = run_cli("export", str(fixture_path(SESSION)), "--open", "-o", "/dev/stdout",
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    assert b"--open needs a file to open" in done.stderr


# --- 2: a replaced file keeps its group (and its owner, when root writes it) -------------


def test_a_replaced_page_keeps_its_group_and_mode(tmp_path: Path) -> None:
    """A page shared with www-data by its group (0640) became the user's group only, and
    `sudo pi-session export` over a user's page left it root's."""
    page = tmp_path / "page.html"
    page.write_text("old", encoding="utf-8")
    group = other_group()
    owner = 4374 if ROOT else -1
    os.chown(page, owner, group)
    os.chmod(page, 0o640)
    done = run_cli("export", str(fixture_path(SESSION)), "-o", "page.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    info = page.stat()
    assert page.read_text(encoding="utf-8").rstrip().endswith("</html>")
    assert info.st_gid == group
    assert stat.S_IMODE(info.st_mode) == 0o640
    if ROOT:
        assert info.st_uid == 4374


# --- 3: --images files: a replaced image keeps its mode and group -------------------------


def test_replaced_images_keep_their_mode_and_group(tmp_path: Path) -> None:
    """Under umask 077 the document kept its 0644 while each image became 0600 (and the
    user's group)."""
    args = ("export", str(fixture_path(WITH_IMAGES)), "--format", "md", "--images", "files",
            "-o", "doc.md")  # fmt: skip
    done = run_cli(*args, cwd=tmp_path, umask=0o077)
    assert done.returncode == 0, done.stderr
    images = sorted((tmp_path / "doc.assets").iterdir())
    assert images
    group = other_group()
    for image in [tmp_path / "doc.md", *images]:
        os.chown(image, -1, group)
        os.chmod(image, 0o644)
    done = run_cli(*args, cwd=tmp_path, umask=0o077)
    assert done.returncode == 0, done.stderr
    for image in [*sorted((tmp_path / "doc.assets").iterdir()), tmp_path / "doc.md"]:
        info = image.stat()
        assert (image.name, stat.S_IMODE(info.st_mode), info.st_gid) == (image.name, 0o644, group)


# --- 4: the output checks say what stands in the way -----------------------------------


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder another user may enter (pytest's own are the user's only)."""
    folder = Path(tempfile.mkdtemp(prefix="s74-writes-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def checked_as_another_user(folder: Path, path: str) -> str:
    """What ``_check_output_path("-o", path)`` says in ``folder`` to another user than the
    owner of the files (a forked child of this process, its user switched: "" when it
    passes)."""
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # (nothing but the check and os._exit here: no pytest teardown)
        said = ""
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.chdir(folder)
            _check_output_path("-o", path)
        except CliError as error:
            said = str(error)
        except BaseException as error:  # (said to the parent, which fails)
            said = f"unexpected {error!r}"
        os.write(writing, said.encode("utf-8"))
        os._exit(0)
    os.close(writing)
    with os.fdopen(reading, "rb") as said:
        message = said.read().decode("utf-8")
    os.waitpid(child, 0)
    return message


@needs_root
def test_a_writable_page_in_a_folder_not_writable_says_how_to_write_it(open_folder: Path) -> None:
    """ "-o: cannot write in the folder ." named no folder, and not that the page itself is
    writable: replacing it needs the folder, `-o - > page.html` does not."""
    page = open_folder / "page.html"
    page.write_text("old", encoding="utf-8")
    page.chmod(0o666)
    said = checked_as_another_user(open_folder, "page.html")
    assert str(open_folder) in said
    assert "the folder ." not in said
    assert "not writable" in said and "-o - > page.html" in said


@needs_root
def test_another_user_s_page_in_a_sticky_folder_is_said_as_that(open_folder: Path) -> None:
    """The checks passed, then the rename failed: "page.html: Operation not permitted"."""
    open_folder.chmod(0o1777)
    (open_folder / "page.html").write_text("old", encoding="utf-8")  # root's
    said = checked_as_another_user(open_folder, "page.html")
    assert "sticky" in said and "another user" in said, said
    assert str(open_folder) in said


@needs_root
def test_a_read_only_mount_is_said_as_that(open_folder: Path) -> None:
    """A read-only file system was said as a permission problem: "cannot write in the
    folder"."""
    source, mounted = open_folder / "src", open_folder / "ro"
    source.mkdir()
    mounted.mkdir()
    bind = subprocess.run(["mount", "--bind", str(source), str(mounted)], capture_output=True)
    if bind.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {bind.stderr!r}")
    try:
        again = ["mount", "-o", "remount,bind,ro", str(mounted)]
        if subprocess.run(again, capture_output=True).returncode != 0:
            pytest.skip("cannot remount read-only here")
        with pytest.raises(CliError) as refused:
            _check_output_path("-o", str(mounted / "page.html"))
        assert "read-only file system" in str(refused.value)
    finally:
        subprocess.run(["umount", str(mounted)], capture_output=True)


def test_a_writable_folder_still_passes(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text("old", encoding="utf-8")
    _check_output_path("-o", str(tmp_path / "page.html"))
    _check_output_path("-o", str(tmp_path / "new.html"))


# --- 5: the publish key's folder is the user's only ------------------------------------


def test_the_publish_key_folder_is_made_private_under_umask_002(tmp_path: Path) -> None:
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    previous = os.umask(0o002)
    try:
        load_publish_key(environ)
    finally:
        os.umask(previous)
    folder = key_file(environ).parent
    assert key_file(environ).is_file()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


# --- owner and mode set by the open file, never by a name another user may swap (review) ----


def test_a_temp_file_swapped_for_a_link_does_not_pass_the_mode_to_its_target(
    tmp_path: Path,
) -> None:
    """Root writing into a user's folder: the user may put a link to any file in place of
    our temp file before the chmod/chown; by name, the link's target (/etc/shadow) got the
    page's mode and, as root, its owner."""
    from exporter.fsutil import atomic_open

    victim = tmp_path / "victim"
    victim.write_text("secret\n", encoding="utf-8")
    victim.chmod(0o600)
    folder = tmp_path / "site"
    folder.mkdir()
    page = folder / "p.html"
    page.write_text("old\n", encoding="utf-8")
    page.chmod(0o666)
    with atomic_open(page, "w", encoding="utf-8") as out:
        out.write("new\n")
        (temp,) = [p for p in folder.iterdir() if p.name != "p.html"]
        temp.unlink()
        temp.symlink_to(victim)
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600
    assert victim.read_text(encoding="utf-8") == "secret\n"


def test_a_staged_image_swapped_for_a_link_does_not_pass_the_mode_to_its_target(
    tmp_path: Path,
) -> None:
    from exporter.assets_swap import _like_the_old

    victim = tmp_path / "victim"
    victim.write_bytes(b"secret")
    victim.chmod(0o600)
    old = tmp_path / "image-001.png"
    old.write_bytes(b"png")
    old.chmod(0o666)
    staged = tmp_path / "staged.png"
    staged.symlink_to(victim)
    _like_the_old(staged, old)
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600
    hard = tmp_path / "hard.png"  # (a second name: not the file this process staged)
    os.link(victim, hard)
    _like_the_old(hard, old)
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600
    mine = tmp_path / "mine.png"
    mine.write_bytes(b"new")
    mine.chmod(0o600)
    _like_the_old(mine, old)
    assert stat.S_IMODE(mine.stat().st_mode) == 0o666
