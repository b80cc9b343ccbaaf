"""Stop 67, interrupts: a Ctrl-C between a Markdown document's rename and its images' move
left the new document linking the old export's pictures, and a staging folder no later run
removed; SIGTERM or SIGHUP during a write left its hidden temporary file (SIGTERM, SIGHUP
now end a command as Ctrl-C does, exit 143 and 129); a Ctrl-C right after a temporary file
was made left it; `publish --html` stopped between commits left the dataset's index linking
pages never uploaded.

Each signal here is a real one, sent by the command to itself at the step under test (a
hook in a fresh Python), so no test depends on timing.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import posixpath
import re
import signal
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.discover import encode_cwd
from exporter.publish import hub_commits
from tests.conftest import ctrl_c_as_at_a_terminal
from tests.fakes.hub import FakeHub, fake_hub_fixture
from tests.test_publish import PROJECTS, REPO_ID, Corpus, hub_env, make_corpus, publish

__all__ = ["fake_hub_fixture", "hub_env"]  # fixtures, used by name

REPO = Path(__file__).resolve().parent.parent
LINK = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
STAGING = re.compile(r"\.images\.[0-9a-f]{8}\.tmp")


# --- helpers ------------------------------------------------------------------------------------


def _png(color: bytes) -> bytes:
    """A real 4x4 PNG of one colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        return struct.pack(">I", len(data)) + kind + data + crc

    rows = (b"\x00" + color * 4) * 4
    header = struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


def _session_with_images(path: Path, word: str, colors: list[bytes]) -> list[bytes]:
    """A session whose user shows ``colors`` (one image each) and says ``word``; the PNGs."""
    images = [_png(color) for color in colors]
    content: list[dict[str, Any]] = [{"type": "text", "text": f"the {word} screenshots"}]
    content += [
        {"type": "image", "mimeType": "image/png", "data": base64.b64encode(raw).decode()}
        for raw in images
    ]
    lines = [
        {"type": "session", "version": 3, "id": f"s-{word}", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/p"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": content}},
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return images


def _run_hooked(hook: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`pi-session ARGS` in a fresh Python (as the script runs it: exporter.launch), after
    ``hook`` (Python code run first: it wraps the step at which the command signals itself)."""
    code = (
        "import contextlib, os, signal, sys\n"
        f"{hook}\n"
        "sys.argv = ['pi-session', *sys.argv[1:]]\n"
        "from exporter.launch import run\n"
        "run()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(cwd / "cache")}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        preexec_fn=ctrl_c_as_at_a_terminal,  # (a test run in the background ignores Ctrl-C)
    )


def _linked_images(document: Path) -> list[bytes]:
    """The bytes of each image the Markdown document links (a missing one fails)."""
    links = LINK.findall(document.read_text(encoding="utf-8"))
    return [(document.parent / unquote(link)).read_bytes() for link in links]


def _temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".*.tmp"))


# --- 1. a document and its images: both or neither ---------------------------------------------

#: The document's write returns (its rename done), then the signal comes, before the images'
#: move: the worst moment there is.
#: (a page goes out as the bytes it was made in, ``atomic_write_bytes``; a Markdown
#: document as text)
_SIGNAL_AFTER_THE_DOCUMENT = """
import exporter.export_cli as export_cli
def then_signal(write):
    def write_then_signal(*args, **kwargs):
        done = write(*args, **kwargs)
        signal.raise_signal(signal.{name})
        return done
    return write_then_signal
export_cli.atomic_write_text = then_signal(export_cli.atomic_write_text)
export_cli.atomic_write_bytes = then_signal(export_cli.atomic_write_bytes)
"""


@pytest.mark.parametrize(
    ("name", "code", "said"),
    [("SIGINT", 130, "pi-session: interrupted"), ("SIGTERM", 143, "pi-session: stopped (SIGTERM)")],
)
def test_a_signal_between_the_document_and_its_images_leaves_both_new(
    tmp_path: Path, name: str, code: int, said: str
) -> None:
    """Ctrl-C after the new document's rename left it linking the old export's pictures
    (or none), and the staging folder with the new ones stayed for good. The signal is now
    acted on once the images are in: the document and its images are the new export's."""
    old = tmp_path / "old.jsonl"
    new = tmp_path / "new.jsonl"
    _session_with_images(old, "before", [b"\xff\x00\x00", b"\x00\xff\x00", b"\x00\x00\xff"])
    images = _session_with_images(new, "after", [b"\x10\x20\x30", b"\x40\x50\x60"])
    document = tmp_path / "n.md"
    first = CliRunner().invoke(cli, ["export", str(old), "-o", str(document), "--images", "files"])
    assert first.exit_code == 0, first.output
    assert len(list((tmp_path / "n.assets").iterdir())) == 3

    hook = _SIGNAL_AFTER_THE_DOCUMENT.replace("{name}", name)
    args = ["export", str(new), "-o", str(document), "--images", "files"]
    stopped = _run_hooked(hook, args, tmp_path)
    assert stopped.returncode == code, stopped.stderr
    assert stopped.stderr.strip() == said, stopped.stderr  # one line: no traceback, no OSError
    text = document.read_text(encoding="utf-8")
    assert "the after screenshots" in text
    assert _linked_images(document) == images  # the new export's pictures, every one there
    assert sorted(p.name for p in (tmp_path / "n.assets").iterdir()) == [
        "image-001.png",
        "image-002.png",
    ]  # the old export's third image gone, and no staging folder
    assert _temp_files(tmp_path) == []


@pytest.mark.parametrize("output", ["page.html", "notes.md"])
def test_a_signal_between_a_page_and_its_report_leaves_both_new(
    tmp_path: Path, output: str
) -> None:
    """`export --redact --report r.jsonl`: a Ctrl-C after the page's rename left the report
    of the run before beside the new page (counting secrets this page does not have). The
    signal is acted on once the report is written too."""
    old = tmp_path / "old.jsonl"
    new = tmp_path / "new.jsonl"
    _session_with_images(old, "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8", [])
    _session_with_images(new, "plain", [])
    report = tmp_path / "r.jsonl"
    base = ["export", "--redact", "--report", str(report), "-o", str(tmp_path / output)]
    first = CliRunner().invoke(cli, [*base, str(old)])
    assert first.exit_code == 0, first.output

    def total() -> int:
        summary = json.loads(report.read_text(encoding="utf-8").splitlines()[0])
        return int(summary["total"])

    assert total() >= 1
    hook = _SIGNAL_AFTER_THE_DOCUMENT.replace("{name}", "SIGINT")
    stopped = _run_hooked(hook, [*base, str(new)], tmp_path)
    assert stopped.returncode == 130, stopped.stderr
    assert stopped.stderr.strip().endswith("pi-session: interrupted"), stopped.stderr
    assert "the plain screenshots" in (tmp_path / output).read_text(encoding="utf-8")
    assert total() == 0  # the new page's report, not the old one's
    assert _temp_files(tmp_path) == []


#: redact's copy written (its rename done), then Ctrl-C, before its --report.
_SIGNAL_AFTER_THE_COPY = """
import exporter.redact_cli as redact_cli
write = redact_cli.atomic_write_bytes
def write_then_signal(*args, **kwargs):
    done = write(*args, **kwargs)
    signal.raise_signal(signal.SIGINT)
    return done
redact_cli.atomic_write_bytes = write_then_signal
"""


def test_a_signal_between_a_redacted_copy_and_its_report_leaves_both_new(
    tmp_path: Path,
) -> None:
    """`redact -o c2.jsonl --report r.jsonl`: a Ctrl-C after the copy's rename left the
    report of the run before (another session's findings) beside the new copy."""
    old = tmp_path / "old.jsonl"
    new = tmp_path / "new.jsonl"
    _session_with_images(old, "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8", [])
    _session_with_images(new, "plain", [])
    report = tmp_path / "r.jsonl"
    first = CliRunner().invoke(
        cli, ["redact", str(old), "-o", str(tmp_path / "c1.jsonl"), "--report", str(report)]
    )
    assert first.exit_code == 0, first.output
    assert json.loads(report.read_text(encoding="utf-8").splitlines()[0])["total"] >= 1
    args = ["redact", str(new), "-o", str(tmp_path / "c2.jsonl"), "--report", str(report)]
    stopped = _run_hooked(_SIGNAL_AFTER_THE_COPY, args, tmp_path)
    assert stopped.returncode == 130, stopped.stderr
    assert "the plain screenshots" in (tmp_path / "c2.jsonl").read_text(encoding="utf-8")
    assert json.loads(report.read_text(encoding="utf-8").splitlines()[0])["total"] == 0
    assert _temp_files(tmp_path) == []


#: The command killed (SIGKILL: no cleanup at all) once its images are staged.
_KILLED_ONCE_STAGED = """
import exporter.assets_swap as assets_swap
write_assets = assets_swap.write_assets
def write_then_die(*args, **kwargs):
    write_assets(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
assets_swap.write_assets = write_then_die
"""


def test_a_staging_folder_a_killed_export_left_is_removed_by_the_next_one(tmp_path: Path) -> None:
    """`n.assets/.images.XXXXXXXX.tmp/` (a whole export's images) stayed for good: the
    commit removed only image-NNN files. The next export to the folder removes it; a
    staging folder another export still works in (locked), and names that only look alike,
    stay."""
    import fcntl

    session = tmp_path / "s.jsonl"
    images = _session_with_images(session, "shots", [b"\x01\x02\x03", b"\x04\x05\x06"])
    document = tmp_path / "n.md"
    args = ["export", str(session), "-o", str(document), "--images", "files"]
    killed = _run_hooked(_KILLED_ONCE_STAGED, args, tmp_path)
    assert killed.returncode == -signal.SIGKILL
    assets = tmp_path / "n.assets"
    (left,) = [p for p in assets.iterdir() if STAGING.fullmatch(p.name)]
    assert sorted(p.name for p in left.iterdir()) == ["image-001.png", "image-002.png"]

    busy = assets / ".images.0123abcd.tmp"  # another export at work: it holds the lock
    busy.mkdir()
    (busy / "image-001.png").write_bytes(b"theirs")
    alike = [".images.keep.tmp", ".images.0123abcd.tmp.bak", "images.0123abcd.tmp"]
    for name in alike:
        (assets / name).mkdir()
    (assets / ".images.89abcdef.tmp").write_bytes(b"a file, not our folder")
    handle = os.open(busy, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        again = CliRunner().invoke(cli, args)
    finally:
        os.close(handle)
    assert again.exit_code == 0, again.output
    assert not left.exists()
    assert (busy / "image-001.png").read_bytes() == b"theirs"
    assert all((assets / name).is_dir() for name in alike)
    assert (assets / ".images.89abcdef.tmp").is_file()
    assert _linked_images(document) == images


# --- 3. SIGTERM and SIGHUP end a command as Ctrl-C does ----------------------------------------

#: The page's write, cut by the signal once its temporary file holds part of it.
_SIGNAL_WHILE_WRITING = """
import exporter.fsutil as fsutil
real_open = fsutil.atomic_open
class Cut:
    def __init__(self, stream, path):
        self._stream, self._path = stream, path
    def __getattr__(self, name):
        return getattr(self._stream, name)
    def write(self, data):
        half = len(data) // 2
        self._stream.write(data[:half])
        self._stream.flush()
        folder = os.path.dirname(os.path.abspath(self._path))
        there = [n for n in os.listdir(folder) if n.endswith('.tmp')]
        sys.stderr.write('temporary file: %d\\n' % len(there))
        sys.stderr.flush()
        signal.raise_signal(signal.{name})
        return self._stream.write(data[half:])
@contextlib.contextmanager
def cut_open(path, *args, **kwargs):
    with real_open(path, *args, **kwargs) as stream:
        yield Cut(stream, path) if os.path.basename(str(path)) == {target!r} else stream
fsutil.atomic_open = cut_open
"""


@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGHUP", 129), ("SIGINT", 130)])
@pytest.mark.parametrize(
    "command",
    [
        ["export", "{session}", "-o", "x.html"],
        ["export", "{session}", "-o", "x.md"],
        ["redact", "{session}", "-o", "x.jsonl"],
    ],
    ids=["html", "md", "redact"],
)
def test_sigterm_and_sighup_during_a_write_leave_no_temporary_file(
    tmp_path: Path, fixtures_dir: Path, name: str, code: int, command: list[str]
) -> None:
    """Only Ctrl-C ran the write's cleanup: SIGTERM (`kill`, `timeout`, a service manager)
    or SIGHUP (the terminal closed) left the hidden partial file (`.x.html.96cebbab.tmp`,
    up to megabytes) beside the output, exit -15 or -1. Both now end the command as Ctrl-C
    does, with 128 + the signal and one line."""
    session = fixtures_dir / "every-entry-type.jsonl"
    args = [str(session) if part == "{session}" else part for part in command]
    target = args[args.index("-o") + 1]
    hook = _SIGNAL_WHILE_WRITING.replace("{name}", name).replace("{target!r}", repr(target))
    out = tmp_path / "out"
    out.mkdir()
    stopped = _run_hooked(hook, args, out)
    assert "temporary file: 1" in stopped.stderr, stopped.stderr  # the signal came mid-write
    assert stopped.returncode == code, stopped.stderr
    said = "pi-session: interrupted" if name == "SIGINT" else f"pi-session: stopped ({name})"
    assert stopped.stderr.strip().splitlines()[-1] == said, stopped.stderr
    assert "Traceback" not in stopped.stderr
    assert sorted(p.name for p in out.iterdir() if p.name != "cache") == []


#: A signal the moment the temporary file is made, before the write's cleanup knows it.
_SIGNAL_ONCE_THE_TEMP_FILE_IS_MADE = """
import exporter.fsutil as fsutil
create = fsutil.create_temp_file
def create_then_signal(*args, **kwargs):
    made = create(*args, **kwargs)
    signal.raise_signal(signal.SIGINT)
    return made
fsutil.create_temp_file = create_then_signal
"""


def test_a_ctrl_c_right_after_the_temporary_file_is_made_leaves_none(tmp_path: Path) -> None:
    """create_temp_file ran outside the try that removes the file: a Ctrl-C between the two
    left it (empty) beside the output."""
    out = tmp_path / "out"
    out.mkdir()
    stopped = _run_hooked(
        _SIGNAL_ONCE_THE_TEMP_FILE_IS_MADE, ["export", "--demo", "-o", "p.html"], out
    )
    assert stopped.returncode == 130, stopped.stderr
    assert stopped.stderr.strip() == "pi-session: interrupted", stopped.stderr
    assert [p.name for p in out.iterdir() if p.name != "cache"] == []


def test_forked_children_get_the_default_sigterm_back(tmp_path: Path) -> None:
    """A renderer or the early scan forked from the command must not unwind into its cleanup
    on SIGTERM (as the command now does): the child gets the system's default; a pool's
    worker still sets its own (exporter.workers), and the command keeps its handler."""
    code = (
        "import os, signal\n"
        "from exporter import launch\n"
        "launch.stop_as_ctrl_c()\n"
        "assert signal.getsignal(signal.SIGTERM) is launch._stop\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    ok = all(signal.getsignal(s) == signal.SIG_DFL for s in launch.STOPPING)\n"
        "    os._exit(0 if ok else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "assert os.waitstatus_to_exitcode(status) == 0, status\n"
        "assert signal.getsignal(signal.SIGTERM) is launch._stop\n"
        "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"  # nohup: left ignored
        "launch.stop_as_ctrl_c()\n"
        "assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN\n"
        "print('ok')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env,
        preexec_fn=ctrl_c_as_at_a_terminal,  # (a run under nohup has SIGHUP ignored)
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_the_help_says_the_exit_codes_of_sigterm_and_sighup() -> None:
    """And `watch` keeps SIGTERM to itself: it sets its own handler once it begins (exit 0),
    which tests/test_watch.py sees in /proc as the sign that it has."""
    from exporter import launch

    text = " ".join(CliRunner().invoke(cli, ["--help"]).stdout.split())
    assert "130 stopped by Ctrl-C (0 for `watch`" in text
    assert "143 by SIGTERM and 129 by SIGHUP" in text
    assert launch._signals_for(["export", "x.jsonl"]) == (signal.SIGTERM, signal.SIGHUP)
    assert launch._signals_for(["watch", "x.jsonl"]) == (signal.SIGHUP,)


# --- 2. publish --html: the index after the pages it links -------------------------------------


def _listing_links(files: dict[str, bytes]) -> set[str]:
    """Every page (under html/) the site's index and project pages link, in their links and
    in the prompt and search data the index embeds (gzip + base64)."""
    linked: set[str] = set()
    for path, data in files.items():
        if not (path == "html/index.html" or path.startswith("html/projects/")):
            continue
        text = data.decode("utf-8")
        here = posixpath.dirname(path)
        for href in re.findall(r'href="([^"]+)"', text):
            if re.match(r"[a-z][a-z0-9+.-]*:|#|/", href):  # another site, this page, data:
                continue
            linked.add(posixpath.normpath(posixpath.join(here, unquote(href.split("#")[0]))))
        for blob in re.findall(
            r'<script type="application/octet-stream"[^>]*>(.*?)</script>', text, re.S
        ):
            embedded = gzip.decompress(base64.b64decode(blob.strip())).decode("utf-8")
            for page in re.findall(r"(?:sessions|projects)/[^\"'#?\s]+\.html", embedded):
                linked.add("html/" + page)
    return linked


def _dangling_after_each_commit(fake: FakeHub, since: int) -> list[tuple[int, list[str]]]:
    repo = fake.repo(REPO_ID)
    found = []
    for number, commit in enumerate(fake.commits[since:], start=since):
        files = repo.history[commit.sha]
        missing = sorted(link for link in _listing_links(files) if link not in files)
        if missing:
            found.append((number, missing))
    return found


def test_every_commit_of_a_published_site_links_only_pages_it_holds(
    fake_hub: FakeHub, tmp_path: Path, fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """html/index.html went up in the site's first commit (sorted by path, it came before
    projects/ and sessions/) and the removed pages before it: a run stopped between two
    commits (Ctrl-C, the network) left the dataset's index linking pages never uploaded,
    or removed. Now pages go first, then the project pages and the index, then the pages
    that left: the dataset as any commit leaves it links only what it holds."""
    corpus = make_corpus(tmp_path / "sessions", fixtures_dir, count=8)
    monkeypatch.setattr(hub_commits, "MAX_FILES_PER_COMMIT", 8)  # 5 files a commit
    first = publish(fake_hub, corpus, "--html")
    assert first.exit_code == 0, first.output
    assert len(fake_hub.commits) >= 4
    assert _dangling_after_each_commit(fake_hub, 0) == []

    # sessions of one project leave (its project page and theirs go), a new project comes
    gone = [path for path in corpus.files if path.parent.name == encode_cwd(PROJECTS[2])]
    assert gone
    for path in gone:
        path.unlink()
    more = make_corpus(tmp_path / "more", fixtures_dir, count=4, seed=11)
    for number, path in enumerate(more.files):
        text = path.read_text(encoding="utf-8").replace(PROJECTS[number % 3], "/home/dev/new")
        target = corpus.root / encode_cwd("/home/dev/new") / path.name
        target.parent.mkdir(exist_ok=True)
        target.write_text(text, encoding="utf-8")
    before = len(fake_hub.commits)
    second = publish(fake_hub, Corpus(corpus.root, [], []), "--html", "--prune")
    assert second.exit_code == 0, second.output
    assert len(fake_hub.commits) - before >= 3
    removed = {p for c in fake_hub.commits[before:] for p in c.deleted if p.startswith("html/")}
    assert any(p.startswith("html/projects/") for p in removed), removed
    assert _dangling_after_each_commit(fake_hub, before) == []
