"""`redact -o OUT` (and any `--report FILE`) racing another writer of the same file: the
up-front check found OUT missing (or a file it may replace), then another run wrote its
copy there, and the temp-file-and-rename write replaced it, the promise ("a session file
you name is never replaced") broken without a word. The other run is made to finish at
the step between the check and the write (a hook on the call there), never left to
timing; with real files."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import exporter.export_cli as export_cli
import exporter.redact_cli as redact_cli
from exporter.cli import cli
from tests.conftest import FIXTURES_DIR

SESSION = FIXTURES_DIR / "every-entry-type.jsonl"
OTHER_SESSION = FIXTURES_DIR / "pi-branched-2.jsonl"
REFUSED = "refusing to overwrite {name}, a Pi session file (a copy made earlier is one too)"


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _other_run(name: str) -> bytes:
    """A real second `redact` of another session, written to ``name`` as that run writes
    it (complete, by rename); its bytes."""
    elsewhere = Path("elsewhere")
    elsewhere.mkdir(exist_ok=True)
    made = elsewhere / f"{len(list(elsewhere.iterdir()))}.jsonl"
    result = CliRunner().invoke(cli, ["redact", str(OTHER_SESSION), "-o", str(made)])
    assert result.exit_code == 0, result.output
    os.replace(made, name)
    return Path(name).read_bytes()


def _when_checked(
    monkeypatch: pytest.MonkeyPatch, module: Any, name: str, meanwhile: Callable[[], None]
) -> list[bool]:
    """``meanwhile`` runs once, at ``module.name``'s first call: after the command's checks
    of its outputs, before it writes them. The list says whether it ran."""
    real = getattr(module, name)
    ran: list[bool] = []

    def hooked(*args: Any, **kwargs: Any) -> Any:
        value = real(*args, **kwargs)
        if not ran:
            ran.append(True)
            meanwhile()
        return value

    monkeypatch.setattr(module, name, hooked)
    return ran


def _redact(*args: str) -> Result:
    return CliRunner().invoke(cli, ["redact", str(SESSION), *args])


def _debris(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def _assert_out_jsonl_written_meanwhile_is_kept(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another run writes its copy at out.jsonl after this run's checks: this run stops with
    exit 1 and says so, their copy stays as they wrote it, and no temporary file is left."""
    theirs: list[bytes] = []
    _when_checked(
        monkeypatch, redact_cli, "copy_to_jsonl", lambda: theirs.append(_other_run("out.jsonl"))
    )
    result = _redact("-o", "out.jsonl")
    assert result.exit_code == 1, result.output
    assert REFUSED.format(name="out.jsonl") in result.stderr
    assert (in_tmp / "out.jsonl").read_bytes() == theirs[0]
    assert _debris(in_tmp) == []


def test_a_copy_another_run_wrote_meanwhile_is_not_replaced(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two `redact -o out.jsonl` at once: both found no out.jsonl; the one that finished
    second replaced the first's copy, a session file, and said nothing."""
    theirs: list[bytes] = []
    ran = _when_checked(
        monkeypatch, redact_cli, "copy_to_jsonl", lambda: theirs.append(_other_run("out.jsonl"))
    )
    result = _redact("-o", "out.jsonl")
    assert ran and theirs
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, Exception)
    assert f"-o: {REFUSED.format(name='out.jsonl')}: remove it first" in result.stderr
    assert (in_tmp / "out.jsonl").read_bytes() == theirs[0]  # the other run's copy kept
    assert result.stdout == ""  # no path said: nothing was written
    assert _debris(in_tmp) == []


def test_a_file_that_became_a_session_meanwhile_is_not_replaced(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An out.jsonl that is no session may be replaced (the check lets it); another run's
    copy written over it after the check may not."""
    (in_tmp / "out.jsonl").write_text("scratch notes\n", "utf-8")
    _assert_out_jsonl_written_meanwhile_is_kept(in_tmp, monkeypatch)


def test_a_file_written_meanwhile_is_kept_and_said(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program wrote out.jsonl after the check (not a session, maybe not finished):
    what the check never saw is not replaced, and the message says what happened."""
    out = in_tmp / "out.jsonl"
    _when_checked(
        monkeypatch, redact_cli, "copy_to_jsonl", lambda: out.write_text("half a li", "utf-8")
    )
    result = _redact("-o", "out.jsonl")
    assert result.exit_code == 1, result.output
    assert result.stderr == (
        "pi-session: error: -o: out.jsonl was written to while this command ran (by another "
        "run?); it was kept as it is: run again, or choose another path\n"
    )  # one line, and no summary: nothing was written
    assert out.read_text("utf-8") == "half a li"
    assert _debris(in_tmp) == []


def test_a_report_path_taken_meanwhile_stops_the_copy_and_the_report(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--report rep.jsonl: another run's copy written there after the check was replaced
    by the report. Now neither output is written (the copy and its report go together)."""
    theirs: list[bytes] = []
    _when_checked(
        monkeypatch, redact_cli, "copy_to_jsonl", lambda: theirs.append(_other_run("rep.jsonl"))
    )
    result = _redact("-o", "out.jsonl", "--report", "rep.jsonl")
    assert result.exit_code == 1, result.output
    assert f"--report: {REFUSED.format(name='rep.jsonl')}" in result.stderr
    assert (in_tmp / "rep.jsonl").read_bytes() == theirs[0]
    assert not (in_tmp / "out.jsonl").exists()
    assert _debris(in_tmp) == []


def test_an_export_report_path_taken_meanwhile_is_not_replaced(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`export --report`, which writes its report through the same code: a session copy
    written at the report's name while the page was rendered was replaced by the report."""
    theirs: list[bytes] = []
    _when_checked(
        monkeypatch, export_cli, "render_session", lambda: theirs.append(_other_run("rep.jsonl"))
    )
    args = ["export", str(SESSION), "-o", "page.html", "--report", "rep.jsonl"]
    result = CliRunner().invoke(cli, args)
    assert theirs
    assert result.exit_code == 1, result.output
    assert f"--report: {REFUSED.format(name='rep.jsonl')}" in result.stderr
    assert (in_tmp / "rep.jsonl").read_bytes() == theirs[0]
    assert _debris(in_tmp) == []


def test_without_hard_links_a_copy_is_made_whole_and_still_never_replaces(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system without hard links (FAT, some network ones): the copy is made in place,
    exclusively, and is the same copy; one written meanwhile is still kept."""
    expected = _redact("-o", "plain.jsonl")
    assert expected.exit_code == 0, expected.output

    def no_hard_links(*_args: Any, **_kwargs: Any) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_hard_links)
    made = _redact("-o", "made.jsonl")
    assert made.exit_code == 0, made.output
    assert (in_tmp / "made.jsonl").read_bytes() == (in_tmp / "plain.jsonl").read_bytes()
    _assert_out_jsonl_written_meanwhile_is_kept(in_tmp, monkeypatch)


def test_what_the_checks_allow_is_still_written(in_tmp: Path) -> None:
    """No race: a new copy gets the mode a plain open() gives; a file that is no session is
    replaced keeping its mode; the default name is replaced by a re-run for the session."""
    old_mask = os.umask(0o027)
    try:
        first = _redact("-o", "new.jsonl", "--report", "rep.jsonl")
    finally:
        os.umask(old_mask)
    assert first.exit_code == 0, first.output
    assert (in_tmp / "new.jsonl").stat().st_mode & 0o777 == 0o640
    assert (in_tmp / "rep.jsonl").read_text("utf-8").startswith('{"type": "summary"')
    scratch = in_tmp / "scratch.jsonl"
    scratch.write_text("notes\n", "utf-8")
    scratch.chmod(0o600)
    again = _redact("-o", "scratch.jsonl", "--report", "rep.jsonl")  # an old report too
    assert again.exit_code == 0, again.output
    assert scratch.read_bytes() == (in_tmp / "new.jsonl").read_bytes()
    assert scratch.stat().st_mode & 0o777 == 0o600
    for _ in range(2):
        default = _redact()
        assert default.exit_code == 0, default.output
    assert (in_tmp / "every-entry-type.redacted.jsonl").read_bytes() == scratch.read_bytes()
    assert _debris(in_tmp) == []
