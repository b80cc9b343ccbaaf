"""Stop 63 (helper hunt: the loader against Pi's SessionManager). A v1 file whose header line
is damaged or gone kept every compaction's context from one entry too late; a v1 prompt's
attached files were on the page but no search found them; an id made up for a line without
one (``L5``) or a renamed duplicate (``a~2``) took over the children, labels and warnings of
the entry that writes that id; a label on a repeated id went to its first copy; a byte order
mark inside the file and a version written ``"1"`` or ``3.0`` were said in Python's words."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.entries import CompactionEntry
from exporter.loader import load_session, parse_session_bytes
from exporter.search import Pattern, search_file
from exporter.session import Session
from tests.conftest import Build, dump_lines

V1_FIXTURE = "pi-v1-before-compaction.jsonl"


# --- 1. a v1 header line damaged or gone ---------------------------------------------------------


def _kept_entries(session: Session) -> list[tuple[str | None, str]]:
    """Each compaction's kept entry, by what it is (its time and type), not its made-up id
    (``L<line>``, which a deleted line shifts)."""
    kept = []
    for entry in session.entries:
        if isinstance(entry, CompactionEntry):
            target = session.by_id[entry.first_kept_entry_id or ""]
            kept.append((target.timestamp, target.type))
    return kept


def _dropped_lines(session: Session, shift: int = 0) -> set[int]:
    """The lines the page marks out of context (``context_status``), in the intact file's
    numbering."""
    return {session.by_id[i].line + shift for i in session.context_status()}


def test_a_v1_header_damaged_or_deleted_keeps_the_same_context(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    """Pi's v1 writer counted ``firstKeptEntryIndex`` with the header at index 0: a header
    line cut short (still line 1, no JSON) or deleted (line 1 is an entry) still had that
    place, so the kept entries are those of the intact file (L294 and L552, not L295, L553)."""
    source = fixtures_dir / V1_FIXTURE
    lines = source.read_bytes().split(b"\n")
    damaged = tmp_path / "damaged-header.jsonl"
    damaged.write_bytes(b"\n".join([lines[0][:120], *lines[1:]]))
    deleted = tmp_path / "deleted-header.jsonl"
    deleted.write_bytes(b"\n".join(lines[1:]))

    intact = load_session(source)
    assert [e.first_kept_entry_id for e in intact.entries if isinstance(e, CompactionEntry)] == [
        "L294",
        "L552",
    ]
    cut = load_session(damaged)
    assert cut.header.synthesized and [d.line for d in cut.damaged] == [1]
    assert [e.first_kept_entry_id for e in cut.entries if isinstance(e, CompactionEntry)] == [
        "L294",
        "L552",
    ]
    assert _dropped_lines(cut) == _dropped_lines(intact)
    gone = load_session(deleted)
    assert gone.header.synthesized and len(gone.entries) == len(intact.entries)
    assert _kept_entries(gone) == _kept_entries(intact)
    assert _dropped_lines(gone, shift=1) == _dropped_lines(intact)


def test_a_redacted_copy_of_a_v1_file_without_its_header_keeps_the_same_context(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    """``redact -o`` writes a v3 copy Pi opens: its firstKeptEntryId is the loader's."""
    lines = (fixtures_dir / V1_FIXTURE).read_bytes().split(b"\n")
    damaged = tmp_path / "damaged-header.jsonl"
    damaged.write_bytes(b"\n".join([lines[0][:120], *lines[1:]]))
    out = tmp_path / "copy.jsonl"
    result = CliRunner().invoke(cli, ["redact", str(damaged), "-o", str(out), "--no-redact"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    kept = [r["firstKeptEntryId"] for r in records if r.get("type") == "compaction"]
    assert kept == ["L294", "L552"]


# --- 2. a v1 prompt's attachments are searched ---------------------------------------------------


def _attached_prompt() -> list[dict[str, Any]]:
    document = {
        "id": "att1",
        "type": "document",
        "fileName": "budget-report.txt",
        "mimeType": "text/plain",
        "size": 56,
        "content": "UXVhcnRlcmx5",
        "extractedText": "Quarterly budget: the zanzibar project costs 4 million.",
    }
    image = {"id": "att2", "type": "image", "fileName": "whiteboard-photo.png",
             "mimeType": "image/png", "size": 68, "content": "iVBORw0KGgo="}  # fmt: skip
    prompt = Build.user(None, None, "see attached", 1)
    prompt["message"]["attachments"] = [document, image]
    return [Build.header(version=None), prompt, Build.assistant(None, None, "ok", 2)]


@pytest.mark.parametrize("word", ["zanzibar", "budget-report", "whiteboard-photo"])
def test_a_v1_prompts_attached_files_are_found_by_name_and_text(tmp_path: Path, word: str) -> None:
    """The page shows each attachment's name and a document's extracted text (``Attached
    document: budget-report.txt``); ``search`` said "no matches" for both."""
    path = tmp_path / "attached.jsonl"
    path.write_bytes(dump_lines(_attached_prompt()))
    found = search_file(path, Pattern(word))
    assert [(m["entry_id"], m["kind"]) for m in found["matches"]] == [("L2", "user")]
    assert word in found["matches"][0]["snippet"]
    result = CliRunner().invoke(cli, ["search", word, str(path)])
    assert result.exit_code == 0 and "1 entry in 1 session" in result.output


def test_an_attachments_image_data_is_not_searched(tmp_path: Path) -> None:
    """What the page shows as an image (its base64 data) is no text to find."""
    path = tmp_path / "attached.jsonl"
    path.write_bytes(dump_lines(_attached_prompt()))
    assert search_file(path, Pattern("iVBORw0KGgo"), skip_by_bytes=False)["matches"] == []


# --- 3. made-up and renamed ids never take a written id's place ----------------------------------


def _idless(parent: str, text: str, second: int) -> dict[str, Any]:
    """A v3 message line without an id (its parentId kept)."""
    line = Build.user("x", parent, text, second)
    del line["id"]
    return line


def _made_up_collides() -> list[dict[str, Any]]:
    """Line 2 writes the id ``L5``; line 5 has no id (made up as ``L5`` before); line 6 is a
    child of the real ``L5``."""
    return [
        Build.header(),
        Build.user("L5", None, "first", 1),
        Build.assistant("x2", "L5", "second", 2),
        Build.user("x3", "x2", "third", 3),
        _idless("x3", "no id here", 4),
        Build.assistant("x6", "L5", "child of the real L5", 5),
    ]


def _renamed_taken() -> list[dict[str, Any]]:
    """Two entries ``a`` (the second kept as ``a~2``) and one that writes ``a~2`` itself, whose
    child names it."""
    return [
        Build.header(),
        Build.user("r", None, "root", 1),
        Build.assistant("a", "r", "first a", 2),
        Build.user("a", "a", "second a", 3),
        Build.assistant("a~2", "r", "the real a~2", 4),
        Build.user("c", "a~2", "child of the real a~2", 5),
    ]


def _dangling_renamed() -> list[dict[str, Any]]:
    """``y`` names a parent ``x~2`` that no line writes: the renamed second ``x`` is not it."""
    return [
        Build.header(),
        Build.user("x", None, "one", 1),
        Build.user("x", None, "two", 2),
        Build.assistant("y", "x~2", "parent nowhere", 3),
    ]


def _tree(session: Session) -> list[list[int | None]]:
    index = {e.id: i for i, e in enumerate(session.entries)}
    return [
        [i, None if (p := session.parent_of(e.id)) is None else index[p]]
        for i, e in enumerate(session.entries)
    ]


def test_an_id_made_up_for_a_line_without_one_never_takes_a_written_ids_children() -> None:
    session = parse_session_bytes(dump_lines(_made_up_collides()))
    assert session.parent_of("x6") == "L5" and session.by_id["L5"].line == 2
    assert len(session.leaf_ids) == 2 and session.active_path == ["L5", "x6"]
    made_up = session.entries[3]
    assert made_up.line == 5 and made_up.id != "L5" and made_up.id in session.by_id
    said = {d.kind: d.message for d in session.diagnostics}
    assert "duplicate-id" not in said  # line 5 writes no id: it repeats none
    assert repr(made_up.id) in said["missing-id"]


def test_a_renamed_duplicate_never_takes_a_written_ids_name_or_children() -> None:
    session = parse_session_bytes(dump_lines(_renamed_taken()))
    assert session.by_id["a~2"].line == 5  # the entry that writes "a~2" keeps it
    assert session.active_path == ["r", "a~2", "c"]
    messages = [d.message for d in session.diagnostics if d.kind == "duplicate-id"]
    assert len(messages) == 1 and "id 'a' already used on line 3" in messages[0]
    dangling = parse_session_bytes(dump_lines(_dangling_renamed()))
    assert dangling.parent_of("y") is None
    assert [d.kind for d in dangling.diagnostics] == ["duplicate-id", "orphan"]


def test_a_warning_names_an_id_as_its_line_writes_it() -> None:
    """When a rename took the name a later line writes (nothing names it), the warning says
    whose it was: line 4's ``a``, not "id 'a~2' already used on line 4"."""
    lines = _renamed_taken()[:-1]  # no child names "a~2": the rename may take it
    session = parse_session_bytes(dump_lines(lines))
    messages = [d.message for d in session.diagnostics if d.kind == "duplicate-id"]
    assert messages == [
        "id 'a' already used on line 3; as in Pi, it names this later copy, and line 3's is 'a~1'"
    ]


@pytest.mark.pi
def test_made_up_and_renamed_ids_make_pis_tree(
    pi_reference: Callable[[Sequence[Path]], list[dict[str, Any]]], tmp_path: Path
) -> None:
    """The same tree as Pi's SessionManager (tests/node/pi_reference.mjs), by file order."""
    cases = {"made-up": _made_up_collides(), "renamed": _renamed_taken(),
             "dangling": _dangling_renamed()}  # fmt: skip
    paths = []
    for name, lines in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(dump_lines(lines))
        paths.append(path)
    for path, pi in zip(paths, pi_reference(paths), strict=True):
        ours = load_session(path)
        assert _tree(ours) == pi["tree_shape"], path.name
        assert ours.active_path == pi["active_path"], path.name


# --- 4. a label on a repeated id -----------------------------------------------------------------


def test_a_label_on_a_repeated_id_goes_to_the_copy_it_was_written_after() -> None:
    """``targetId`` names an entry as ``parentId`` does: the latest written with that id
    before the label line (the second ``a`` here), not always the first copy."""
    lines = [
        Build.header(version=2),
        Build.user("a", None, "q1", 1),
        Build.assistant("b", "a", "a1", 2),
        Build.user("a", "b", "q2", 3),
        Build.assistant("c", "a", "a2", 4),
        Build.label("l", "c", "a", "which a?", 5),
    ]
    session = parse_session_bytes(dump_lines(lines))
    assert session.parent_of("c") == "a~2"
    assert session.labels == {"a~2": "which a?"}
    early = [*lines[:2], Build.label("l", "a", "a", "the first", 2), *lines[2:5]]
    assert parse_session_bytes(dump_lines(early)).labels == {"a": "the first"}


# --- 5. a byte order mark mid-file, versions in JSON's words -------------------------------------


def test_a_byte_order_mark_inside_the_file_is_named() -> None:
    """Two files joined with cat: the second one's BOM starts a line. Pi drops that line, and
    so does the loader, but the warning names the mark ("Expecting value at column 1" did
    not)."""
    first = dump_lines([Build.header(), Build.user("u1", None, "one", 1)])
    second = dump_lines([Build.assistant("a1", "u1", "two", 2)])
    session = parse_session_bytes(first + b"\xef\xbb\xbf" + second)
    assert [e.id for e in session.entries] == ["u1"]
    (damaged,) = session.damaged
    assert damaged.line == 3 and "byte order mark" in damaged.message
    (said,) = [d for d in session.diagnostics if d.line == 3]
    assert said.kind == "invalid-json" and "byte order mark" in said.message
    assert "Expecting value" not in said.message and "JSON after the mark is whole" in said.message


@pytest.mark.parametrize(("version", "read_as"), [(3.0, 3), (2.0, 2), (4.0, 4)])
def test_a_whole_version_written_as_a_decimal_is_not_unknown(version: float, read_as: int) -> None:
    """JSON's ``3.0`` is JavaScript's ``3``: Pi reads the file exactly as a ``3``."""
    lines = [Build.header(version=version), Build.user("u1", None), Build.user("u2", "u1")]
    session = parse_session_bytes(dump_lines(lines))
    assert session.version == read_as and session.parent_of("u2") == "u1"
    messages = [d.message for d in session.diagnostics]
    assert not any("unknown" in m for m in messages)
    assert all(repr(version) in m for m in messages)  # as written: 3.0


def test_an_odd_version_is_said_as_the_file_writes_it() -> None:
    lines = [Build.header(version="1"), Build.user(None, None)]
    (said,) = parse_session_bytes(dump_lines(lines)).diagnostics
    assert said.message == 'version "1" is not a plain number; read as v1, as Pi does'
    lines = [Build.header(version={"x": "y"}), Build.user("u1", None)]
    (said,) = parse_session_bytes(dump_lines(lines)).diagnostics
    assert said.message == 'version {"x": "y"} unknown; read as v3, as Pi does'
