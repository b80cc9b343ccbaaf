"""Where `export` writes (hunt s67): a Markdown document and its images fail together, long
legal names, a symbolic link's images, ids `list` shows that SESSION takes back, ``~`` in
``-o``, a working folder deeper than PATH_MAX, and messages that say what is wrong."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from urllib.parse import unquote

import pytest
from click.testing import CliRunner

from exporter.cli import cli

REPO = Path(__file__).resolve().parents[1]
LINK = re.compile(r"!\[[^\]]*\]\(([^)]+)\)")


def png(red: int, green: int, blue: int) -> bytes:
    """A real 2x1 PNG of one colour: each colour its own image file."""
    raw = b"\x00" + bytes((red, green, blue)) * 2

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        return struct.pack(">I", len(data)) + kind + data + crc

    header = struct.pack(">IIBBBBB", 2, 1, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


def image_session(path: Path, session_id: str, images: list[bytes], words: int = 3000) -> Path:
    """A session whose one prompt is ``words`` words (its Markdown is long) and the images."""
    content: list[dict] = [{"type": "text", "text": " ".join(["word"] * words)}]
    content += [
        {"type": "image", "mimeType": "image/png", "data": base64.b64encode(raw).decode("ascii")}
        for raw in images
    ]
    lines = [
        {"type": "session", "version": 3, "id": session_id,
         "timestamp": "2025-01-01T00:00:00Z", "cwd": "/p"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": content}},
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def with_this_checkout(python_path: str | None) -> str:
    """``PYTHONPATH`` with this checkout first (no empty entry: it means the working folder,
    which Python cannot make absolute when it is deeper than PATH_MAX)."""
    entries = [str(REPO), *(python_path or "").split(os.pathsep)]
    return os.pathsep.join(entry for entry in entries if entry)


def run_cli(*args: str, cwd: Path, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own; ``limit``: the largest file it may write (a write
    past it fails with "File too large", as on a full disk; no root or mount needed)."""
    resource = pytest.importorskip("resource")  # POSIX only

    def small_files() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"}
    env |= {"PYTHONDONTWRITEBYTECODE": "1", "PI_SESSION_NO_TEMPLATE_CACHE": "1"}
    env["PYTHONPATH"] = with_this_checkout(env.get("PYTHONPATH"))
    return subprocess.run(
        [sys.executable, "-m", "exporter", *args],
        cwd=cwd, capture_output=True, text=True, encoding="utf-8", errors="replace", env=env,
        timeout=120, preexec_fn=small_files, check=False,
    )  # fmt: skip


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` by its SHA-256 (hidden ones too: a staging folder left
    is a failure)."""
    return {
        str(path.relative_to(folder)): (
            hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else "folder"
        )
        for path in sorted(folder.rglob("*"))
    }


# --- 1. the document and its images: both or neither -------------------------------------


def test_a_failed_document_write_leaves_the_old_document_and_its_images(tmp_path: Path) -> None:
    """The images were written (the old ones overwritten, the unused ones deleted) before
    the document, whose write then failed (a full disk): the old notes.md stayed, linking
    images that were now another session's or gone. A first export left an orphan folder."""
    first = image_session(tmp_path / "a.jsonl", "aaaa", [png(255, 0, 0), png(0, 255, 0)])
    second = image_session(tmp_path / "b.jsonl", "bbbb", [png(0, 0, 255)])
    out = tmp_path / "out"
    out.mkdir()
    done = run_cli("export", str(first), "-o", "out/notes.md", "--images", "files", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (out / "notes.assets" / "mine.txt").write_text("the user's own", encoding="utf-8")
    before = snapshot(out)
    assert sorted(before) == [
        "notes.assets", "notes.assets/image-001.png", "notes.assets/image-002.png",
        "notes.assets/mine.txt", "notes.md",
    ]  # fmt: skip
    assert (out / "notes.assets" / "image-001.png").read_bytes() == png(255, 0, 0)

    limit = 8 * 1024  # the document (~15 KB) fails half-way; an image (~70 bytes) does not
    for name in ("notes.md", "new.md"):  # a second export over the first, and a first one
        done = run_cli(
            "export", str(second), "-o", f"out/{name}", "--images", "files",
            cwd=tmp_path, limit=limit,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert f"out/{name}: File too large" in done.stderr
        assert "Traceback" not in done.stderr
        assert snapshot(out) == before, "the old document and its images, exactly as they were"

    done = run_cli("export", str(second), "-o", "out/notes.md", "--images", "files", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = (out / "notes.md").read_text(encoding="utf-8")
    assert LINK.findall(document) == ["notes.assets/image-001.png"]
    assert sorted(p.name for p in (out / "notes.assets").iterdir()) == [
        "image-001.png",
        "mine.txt",
    ]  # the unused image-002 went, the user's file stayed, no staging folder is left
    assert (out / "notes.assets" / "image-001.png").read_bytes() == png(0, 0, 255)


# --- 2. legal names up to 255 bytes --------------------------------------------------------


def _long_names_allowed(folder: Path) -> None:
    if os.pathconf(folder, "PC_NAME_MAX") < 255:
        pytest.skip("a file system with names shorter than 255 bytes")


def test_an_output_name_up_to_255_bytes_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temporary name ``.<name>.XXXXXXXX.tmp`` is 14 bytes longer than the name: a legal
    name of 242 to 255 bytes was refused as "File name too long"."""
    _long_names_allowed(tmp_path)
    monkeypatch.chdir(tmp_path)  # where redact's default name goes
    source = image_session(tmp_path / "s.jsonl", "ssss", [png(1, 2, 3)], words=10)
    page = "x" * 250 + ".html"  # 255 bytes
    notes = "日" * 80 + ".md"  # 243 bytes, its images' folder 247
    runner = CliRunner()
    done = runner.invoke(cli, ["export", str(source), "-o", str(tmp_path / page)])
    assert done.exit_code == 0, done.output
    done = runner.invoke(
        cli, ["export", str(source), "-o", str(tmp_path / notes), "--images", "files"]
    )
    assert done.exit_code == 0, done.output
    folder = tmp_path / ("日" * 80 + ".assets")
    assert (folder / "image-001.png").read_bytes() == png(1, 2, 3)
    assert LINK.findall((tmp_path / notes).read_text(encoding="utf-8")) == [
        f"{'%E6%97%A5' * 80}.assets/image-001.png"
    ]
    # redact's default name, <stem>.redacted.jsonl: 247 bytes for a 232-byte stem
    stem = "y" * 232
    shutil.copyfile(source, tmp_path / f"{stem}.jsonl")
    done = runner.invoke(cli, ["redact", str(tmp_path / f"{stem}.jsonl")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / f"{stem}.redacted.jsonl").is_file()
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_long_temporary_name_is_still_swept_as_one(tmp_path: Path) -> None:
    """The shortened temporary name still starts with a dot and ends in ``.tmp``, the form
    the site's sweeps (``.*.tmp``) remove, and stays within the longest name."""
    from exporter.fsutil import create_temp_file

    _long_names_allowed(tmp_path)
    handle, name = create_temp_file(tmp_path, "é" * 127 + ".html")  # 259 bytes: cut
    os.close(handle)
    made = Path(name).name
    assert made.startswith(".é") and made.endswith(".tmp") and len(os.fsencode(made)) <= 255
    assert Path(name).parent == tmp_path


# --- 3. a symbolic link's document and its images -----------------------------------------


def test_the_images_go_beside_the_file_a_link_leads_to(tmp_path: Path) -> None:
    """``-o link.md`` -> ``real/doc.md`` wrote the document into real/doc.md and the images
    beside the link: the document's links (relative to real/) led nowhere."""
    source = image_session(tmp_path / "s.jsonl", "ssss", [png(9, 9, 9)], words=10)
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "doc.md").write_text("old", encoding="utf-8")
    (tmp_path / "link.md").symlink_to("real/doc.md")
    done = CliRunner().invoke(
        cli, ["export", str(source), "-o", str(tmp_path / "link.md"), "--images", "files"]
    )
    assert done.exit_code == 0, done.output
    assert (tmp_path / "link.md").is_symlink()
    document = (tmp_path / "real" / "doc.md").read_text(encoding="utf-8")
    links = LINK.findall(document)
    assert links == ["doc.assets/image-001.png"]  # named after the file, as -o real/doc.md
    assert (tmp_path / "real" / unquote(links[0])).read_bytes() == png(9, 9, 9)
    assert not (tmp_path / "link.assets").exists()


def test_images_beside_a_device_are_refused(tmp_path: Path) -> None:
    """A document written to a device (here through a link, so that the code before this
    fix made its folder in tmp_path, not /dev) has no folder beside it for its images:
    ``-o /dev/null --images files`` made /dev/null.assets (as root)."""
    source = image_session(tmp_path / "s.jsonl", "ssss", [png(9, 9, 9)], words=10)
    (tmp_path / "dev.md").symlink_to(os.devnull)
    out = str(tmp_path / "dev.md")
    done = CliRunner().invoke(cli, ["export", str(source), "-o", out, "--images", "files"])
    assert done.exit_code == 1
    assert f"not with -o {out} (a device or pipe)" in done.stderr
    assert not (tmp_path / "dev.assets").exists()


# --- 4. what `list` shows, SESSION takes back ------------------------------------------------

#: File names a terminal cannot show as they are: a tab, a line break, a byte not UTF-8.
AWKWARD_NAMES = [b"tab\tname", b"nl\nname", b"bad\xfename"]


def test_every_id_list_shows_is_taken_back_as_session(tmp_path: Path) -> None:
    """``tab<TAB>name.jsonl`` was listed as ``tab name`` and ``bad<0xFE>name.jsonl`` with a
    U+FFFD for the byte: `stats -- "<shown id>"` (or export) said no session matches."""
    folder = tmp_path / "sessions" / "--p--"
    folder.mkdir(parents=True)
    for number, name in enumerate(AWKWARD_NAMES):
        path = os.fsdecode(bytes(folder) + b"/" + name + b".jsonl")
        image_session(Path(path), f"header-{number}", [], words=number + 1)
    runner = CliRunner()
    listed = runner.invoke(cli, ["list", "--all", "--sessions-dir", str(tmp_path / "sessions")])
    assert listed.exit_code == 0, listed.output
    header, _rule, *rows = listed.stdout.splitlines()
    column = header.rindex(" id") + 1
    shown = [row[column:].rstrip() for row in rows]
    assert len(shown) == len(AWKWARD_NAMES)
    for said in shown:
        done = runner.invoke(
            cli,
            ["stats", "--json", "--sessions-dir", str(tmp_path / "sessions"), "--", said],
        )
        assert done.exit_code == 0, (said, done.output)
        found = json.loads(done.stdout)
        number = int(found["id"].removeprefix("header-"))
        assert os.fsencode(found["path"]).endswith(b"/" + AWKWARD_NAMES[number] + b".jsonl")
    assert sorted(shown) == ["bad\ufffdname", "nl name", "tab name"]  # on one line each
    # --json stays lossless: the path is the file's own, escaped as JSON
    raw = runner.invoke(
        cli, ["list", "--all", "--json", "--sessions-dir", str(tmp_path / "sessions")]
    )
    paths = {os.fsencode(json.loads(line)["path"]) for line in raw.stdout.splitlines()}
    assert paths == {bytes(folder) + b"/" + name + b".jsonl" for name in AWKWARD_NAMES}


# --- 5. ~ in -o and --report ----------------------------------------------------------------


def test_a_tilde_in_the_output_names_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-o '~/page.html'`` (and ``--output=~/x``, which bash leaves as it is) said "the
    folder ~ does not exist", though SESSION's ``~`` is expanded."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    image_session(home / "s.jsonl", "ssss", [], words=10)
    runner = CliRunner()
    done = runner.invoke(cli, ["export", "~/s.jsonl", "-o", "~/page.html"])
    assert done.exit_code == 0, done.output
    assert done.stdout == f"{home / 'page.html'}\n"
    done = runner.invoke(
        cli, ["export", "~/s.jsonl", "--output=~/notes.md", "--redact", "--report=~/r.jsonl"]
    )
    assert done.exit_code == 0, done.output
    assert (home / "notes.md").is_file() and (home / "r.jsonl").is_file()
    assert not (tmp_path / "~").exists()


# --- 6. a working folder deeper than PATH_MAX ---------------------------------------------


def test_relative_outputs_in_a_folder_deeper_than_path_max(tmp_path: Path) -> None:
    """The temporary file's path was made absolute, too long to open: `-o x.html` said
    "x.html: File name too long", and `--images files` left an empty y.assets/ behind."""
    step = "d" * 200
    script = (
        "import os, shutil, sys\n"
        f"os.chdir({str(tmp_path)!r})\n"
        f"for _ in range(25):\n    os.mkdir({step!r})\n    os.chdir({step!r})\n"
        f"shutil.copyfile({str(tmp_path / 's.jsonl')!r}, 's.jsonl')\n"
        "os.execv(sys.executable, [sys.executable, '-c', sys.argv[1]])\n"
    )
    run = (
        "import os, subprocess, sys\n"
        "for args in (['-o', 'x.html'], ['-o', 'y.md', '--images', 'files']):\n"
        "    done = subprocess.run([sys.executable, '-m', 'exporter', 'export', 's.jsonl',"
        " *args], capture_output=True, text=True)\n"
        "    print(f'{done.returncode} {done.stderr.strip()}'.strip())\n"
        "print(sorted(os.listdir('.')), sorted(os.listdir('y.assets')) if"
        " os.path.isdir('y.assets') else None)\n"
    )
    image_session(tmp_path / "s.jsonl", "ssss", [png(5, 6, 7)], words=10)
    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"}
    env["PYTHONPATH"] = with_this_checkout(env.get("PYTHONPATH"))
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, run], capture_output=True, text=True, env=env,
            timeout=180, check=False,
        )  # fmt: skip
    finally:
        shutil.rmtree(tmp_path / step, ignore_errors=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "0",
        "0",
        "['s.jsonl', 'x.html', 'y.assets', 'y.md'] ['image-001.png']",
    ], done.stdout


# --- 7. messages that say what is wrong ---------------------------------------------------


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="Linux's /proc")
def test_a_file_in_a_folder_that_takes_no_new_files_is_said_so(tmp_path: Path) -> None:
    """``-o /proc/version`` said "No such file or directory" of a file that is there (the
    temporary file beside it cannot be made)."""
    source = image_session(tmp_path / "s.jsonl", "ssss", [], words=10)
    done = CliRunner().invoke(cli, ["export", str(source), "-o", "/proc/version"])
    assert done.exit_code == 2
    assert "/proc/version: the folder /proc does not allow creating files" in done.stderr
    assert "No such file" not in done.stderr


def test_an_images_folder_that_is_a_link_leading_nowhere_is_said_so(tmp_path: Path) -> None:
    """``page.assets`` a dangling link or a loop of links: "cannot write page.assets: File
    exists" said nothing of why; no document is written without its images."""
    source = image_session(tmp_path / "s.jsonl", "ssss", [png(1, 1, 1)], words=10)
    (tmp_path / "page.assets").symlink_to("gone")
    (tmp_path / "loop.assets").symlink_to("loop.assets")
    for name, why in (("page", "gone does not exist"), ("loop", "a loop of links")):
        done = CliRunner().invoke(
            cli, ["export", str(source), "-o", str(tmp_path / f"{name}.md"), "--images", "files"]
        )
        assert done.exit_code == 2
        said = f"{tmp_path / name}.assets: it is a symbolic link that leads nowhere ({why})"
        assert said in done.stderr, done.stderr
        assert not (tmp_path / f"{name}.md").exists()
