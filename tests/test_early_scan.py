"""The big file's embedded copy and credentials scan made by a child forked before the
load (``exporter.early_scan``): the same page and warning as made after it, and never for a
session that is not the file as it was read. Forking needs a process without threads, so
each scenario runs in a fresh Python (as in test_render_parallel)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import fresh_python
import pytest
from conftest import FIXTURE_FILES

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
    reason="reads ahead on Linux with two CPUs or more",
)

#: A credential of a well-known format, planted in the big file.
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _big_session(folder: Path) -> Path:
    """A session over EARLY_MIN_BYTES: a branched fixture twice (ids repeat: kept as
    ``id~2``) and an extension's entry holding a token."""
    source = next(p for p in FIXTURE_FILES if p.name == "pi-branched-4.jsonl")
    text = source.read_text(encoding="utf-8")
    planted = (
        '{"type":"custom","customType":"x","id":"tok1","parentId":null,'
        f'"timestamp":"2026-01-01T00:00:00Z","data":{{"t":"{TOKEN}"}}}}\n'
    )
    path = folder / "big.jsonl"
    path.write_text(text + planted + text.split("\n", 1)[1], encoding="utf-8")
    return path


def in_fresh_python(scenario: str, *args: str) -> None:
    """Run ``scenario(*args)`` of this module in a new interpreter (no stray threads)."""
    fresh_python.in_fresh_python("test_early_scan", scenario, *args)


def test_the_copy_and_scan_made_ahead_are_the_ones_made_after(tmp_path: Path) -> None:
    in_fresh_python("made_ahead_equals_made_after", str(_big_session(tmp_path)))


def made_ahead_equals_made_after(path: str) -> None:
    from exporter.early_scan import EARLY_MIN_BYTES, start_early_scan
    from exporter.jsonl_out import download_bytes, read_source_bytes
    from exporter.loader import load_session
    from exporter.policy import RedactionPolicy
    from exporter.prepare import prepare_session
    from exporter.render import embedded_copy
    from exporter.secret_warning import secrets_warning

    assert os.path.getsize(path) >= EARLY_MIN_BYTES
    scan = start_early_scan(path, True, "HOW")
    assert scan is not None
    session = load_session(path)
    source = read_source_bytes(session)
    assert source is not None
    assert scan.embedded_for(session) == embedded_copy(source)
    warning = secrets_warning(download_bytes(session), "HOW")
    assert warning is not None and "github-token" in warning
    assert scan.warning_for(session) == (warning,)
    # a redacted copy is not the file: made as usual
    redacted = prepare_session(session, RedactionPolicy())[0]
    assert scan.embedded_for(redacted) is None and scan.warning_for(redacted) is None
    # a file appended to after the load (Pi writes on): the copy made ahead is not used (it
    # is of the file as it was when the child read it); the bytes the load read still are
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("\n")
    assert read_source_bytes(session) == source
    assert scan.embedded_for(session) is None and scan.warning_for(session) is None
    assert scan.embedded_for(load_session(path)) is None
    # small files, ids and pipes are left to the usual code
    assert start_early_scan("-", True, "HOW") is None
    assert start_early_scan(str(FIXTURE_FILES[0]), True, "HOW") is None
    assert start_early_scan(path, False, None) is None


def test_the_export_command_uses_them_and_makes_the_same_page(tmp_path: Path) -> None:
    in_fresh_python("export_uses_them", str(_big_session(tmp_path)), str(tmp_path / "page.html"))


def export_uses_them(path: str, out: str) -> None:
    from click.testing import CliRunner

    import exporter.early_scan as early_scan
    from exporter.cli import cli
    from exporter.loader import load_session
    from exporter.render import RenderOptions, render_session

    used = []
    original = early_scan.EarlyScan._for

    def counted(self: early_scan.EarlyScan, session: object) -> object:
        answer = original(self, session)
        used.append(answer is not None)
        return answer

    early_scan.EarlyScan._for = counted  # type: ignore[method-assign]
    result = CliRunner().invoke(cli, ["export", path, "-o", out])
    assert result.exit_code == 0, result.output
    assert used == [True, True], used  # the embedded copy, then the warning
    assert "1 credential of a known format in clear (github-token)" in result.stderr
    page = Path(out).read_text(encoding="utf-8")
    assert page == render_session(load_session(path), RenderOptions(jobs=1))


def test_an_export_that_fails_after_the_fork_leaves_no_child(tmp_path: Path) -> None:
    in_fresh_python("failed_export_reaps_the_child", str(_big_session(tmp_path)), str(tmp_path))


def failed_export_reaps_the_child(path: str, folder: str) -> None:
    """An unknown --leaf fails after the child was forked: the child is stopped and reaped
    (it read on alone after the export's error, and was left a zombie meanwhile)."""
    from click.testing import CliRunner

    from exporter.cli import cli

    result = CliRunner().invoke(cli, ["export", path, "--leaf", "nope", "-o", f"{folder}/p.html"])
    assert result.exit_code != 0 and "nope" in result.output, result.output
    try:
        child = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return  # no child at all: the one forked was reaped
    raise AssertionError(f"a child was left behind: {child}")
