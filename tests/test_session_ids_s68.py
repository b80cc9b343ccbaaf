"""Stop 68: one session id held by two different copies (the same session file in two
project folders, one copy gone on). From inside project A, `stats ID` silently read A's copy
while the README called such an id an error; `--skip ID` (the id `list` printed there) was
refused as ambiguous although the run selected only A's sessions.

One rule now: a SESSION argument takes this project's copy and says on stderr which other
copy it left; `--skip ID` resolves among the sessions the run selected; the id is an error
only from a folder that holds neither copy, or when the selection holds both.
"""

from __future__ import annotations

import json
import shlex
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from exporter.discover import encode_cwd
from tests.fakes.hub import TOKEN, FakeHub
from tests.test_cli_consistency import FIXTURES, Home, Result, _error, _home
from tests.test_cli_review150 import _run_in

SAMPLER = "sampler-0001"  # every-entry-type.jsonl's id
SAMPLER_NAME = f"2025-06-01T10-00-00-000Z_{SAMPLER}.jsonl"
#: pi-branched-2.jsonl: a second session of project A, so skipping one leaves a run
OTHER_NAME = "2026-11-30T00-57-08-167Z_01a229f4-a346-7019-99dc-c72325edfccd.jsonl"


@dataclass
class Copies:
    """Project folders A, B (each with its own copy of SAMPLER, differing) and C (none)."""

    home: Home
    a: Path
    b: Path
    c: Path
    copy_a: Path
    copy_b: Path


def _sampler_of(home: Home, project: Path) -> Path:
    """every-entry-type.jsonl as ``project``'s session: its header names that folder."""
    text = (FIXTURES / "every-entry-type.jsonl").read_text(encoding="utf-8")
    folder = home.sessions / encode_cwd(str(project))
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / SAMPLER_NAME
    copy.write_text(text.replace('"/home/alice/proj"', json.dumps(str(project)), 1), "utf-8")
    return copy


@pytest.fixture
def copies(tmp_path: Path) -> Copies:
    home = _home(tmp_path)
    a, b, c = (tmp_path / name for name in ("projA", "projB", "projC"))
    for project in (a, b, c):
        project.mkdir()
    copy_a, copy_b = _sampler_of(home, a), _sampler_of(home, b)
    assert copy_a.read_bytes() != copy_b.read_bytes()
    for project in (a, c):
        folder = home.sessions / encode_cwd(str(project))
        folder.mkdir(exist_ok=True)
        shutil.copyfile(FIXTURES / "pi-branched-2.jsonl", folder / OTHER_NAME)
    return Copies(home, a, b, c, copy_a, copy_b)


@pytest.fixture
def fake_hub() -> Iterator[FakeHub]:
    with FakeHub() as fake:
        yield fake


def _notes(result: Result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("pi-session: note:")]


def test_a_session_argument_takes_this_projects_copy_and_says_which_it_left(
    copies: Copies,
) -> None:
    """In A, the id (or a prefix) takes A's copy, as before, and one note names B's; in B
    the other way round. Before, nothing was said: a user who saw B's id in `list --all`
    could not tell which copy `stats`, `export` or `search` read."""
    home = copies.home
    for here, mine, other in ((copies.a, copies.copy_a, copies.copy_b),
                              (copies.b, copies.copy_b, copies.copy_a)):  # fmt: skip
        for given in (SAMPLER, "sampler"):
            expected = (
                f"pi-session: note: {given!r} also names a different copy in "
                f"{shlex.quote(str(other))}; using this project's {shlex.quote(str(mine))}"
            )
            stats = _run_in(home, here, "stats", given, "--json")
            assert stats.code == 0, stats.stderr
            assert Path(json.loads(stats.stdout)["path"]) == mine
            assert _notes(stats) == [expected], stats.stderr
            page = _run_in(home, here, "export", given, "-o", "p.html")
            assert page.code == 0 and (here / "p.html").is_file(), page.stderr
            assert _notes(page) == [expected], page.stderr
            found = _run_in(home, here, "search", "Sampler", given)
            assert found.code == 0, found.stderr
            assert _notes(found) == [expected], found.stderr


def test_a_session_argument_from_a_folder_with_neither_copy_is_still_an_error(
    copies: Copies,
) -> None:
    """From C (neither copy is its own) the id names two sessions: exit 2, both paths."""
    result = _run_in(copies.home, copies.c, "stats", SAMPLER)
    assert result.code == 2, result.stderr
    message = _error(result)
    assert message.startswith(f"session id prefix {SAMPLER!r} is ambiguous, it names 2 files")
    assert str(copies.copy_a) in message and str(copies.copy_b) in message


def test_skip_takes_the_id_list_printed_for_this_projects_sessions(copies: Copies) -> None:
    """`list` in A prints ``sampler-0001``; `export --all --cwd . --skip` of it (or of a
    prefix) was "ambiguous" (exit 1) for B's copy, which the run did not select."""
    home = copies.home
    listed = _run_in(home, copies.a, "list")
    assert listed.code == 0 and SAMPLER in listed.stdout, listed.stderr
    for n, skip in enumerate((SAMPLER, "sampler")):
        site = home.base / f"site{n}"
        done = _run_in(home, copies.a, "export", "--all", "--cwd", ".", "-o", str(site),
                       "--skip", skip)  # fmt: skip
        assert done.code == 0, done.stderr
        assert "--skip leaves out 1 of the 2 sessions selected" in done.stderr
        pages = "\n".join(p.read_text(encoding="utf-8") for p in site.rglob("*.html"))
        assert "01a229f4-a346" in pages and SAMPLER not in pages


def test_publish_skip_takes_this_projects_id(copies: Copies, fake_hub: FakeHub) -> None:
    """`publish --skip` of A's session from A, its own sessions selected: it stays out."""
    hub = ["--endpoint", fake_hub.url, "--token", TOKEN, "-j", "1", "--yes"]
    done = _run_in(copies.home, copies.a, "publish", "alice/x", "--skip", "sampler", *hub)
    assert done.code == 0, done.stderr
    assert "--skip leaves out 1 of the 2 sessions selected" in done.stderr
    sent = sorted(p for p in fake_hub.files("alice/x") if p.startswith("sessions/"))
    assert sent == [f"sessions/2026-11/{OTHER_NAME}"], sent


def test_skip_is_ambiguous_only_when_the_selection_holds_both_copies(
    copies: Copies, fake_hub: FakeHub
) -> None:
    """`--all` selects both copies: skipping one would put out the other, so it is an
    error (exit 1, nothing sent). From C, whose run holds neither, nothing is left out."""
    home = copies.home
    every = _run_in(home, copies.a, "publish", "alice/x", "--all", "--skip", SAMPLER,
                    "--endpoint", fake_hub.url, "--token", TOKEN, "-j", "1")  # fmt: skip
    assert every.code == 1, every.stderr
    message = _error(every)
    assert message.startswith(f"--skip {SAMPLER}: session id prefix {SAMPLER!r} is ambiguous")
    assert str(copies.copy_a) in message and str(copies.copy_b) in message
    assert message.endswith("; nothing sent") and fake_hub.requests == []
    site = home.base / "site-c"
    elsewhere = _run_in(home, copies.c, "export", "--all", "--cwd", ".", "-o", str(site),
                        "--skip", "sampler")  # fmt: skip
    assert elsewhere.code == 0, elsewhere.stderr
    assert "--skip leaves out 0 of the 1 session selected" in elsewhere.stderr
