"""Differential test: our loader against Pi 0.73.1's own SessionManager, run by node.

``tests/node/pi_reference.mjs`` loads each file (a COPY) with Pi and prints leaf, path, labels,
name, entry and branch counts, cost and tree shape; one node process handles every file of
this module: the shared fixtures, >= 20 sessions freshly written by Pi (random seeds, shown in
the report header) and hand-made adversarial files.

Deliberate differences, each pinned by a test below:

* cleared labels: Pi's SessionManager clears them, and so do we; Pi's *HTML export* keeps
  showing them (template.js only ever sets labels), which we do not copy.
* parent cycles: Pi's getBranch()/getTree() never return, so cycles are NOT given to Pi; we
  cut each cycle and report it (test_cycles_are_broken_where_pi_hangs).
* duplicate ids: Pi resolves a parentId to the LAST entry of the file with that id, even one
  written after the child (and so hangs when that makes a cycle); we never point a child at a
  later namesake.
* a non-object JSON line (``[1]``, ``42``) is an entry to Pi (no id, a root); ``null`` or a
  non-string session name crash Pi. We keep those lines as damaged records.
* no header: Pi treats the file as empty and (on open) wipes it; we synthesize a header.
* a v1 compaction whose firstKeptEntryIndex is its own index: Pi stores the compaction's own
  new id, we store none. Both keep nothing before the compaction.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from exporter.discover import encode_cwd
from exporter.entries import CompactionEntry, MessageEntry
from exporter.jsonl_out import session_to_jsonl
from exporter.loader import load_session
from exporter.session import Session
from exporter.usage import compute_stats
from tests.conftest import GEN_SEEDS, cpu_time_limit

pytestmark = pytest.mark.pi

REPO_TESTS = Path(__file__).resolve().parent
COMPARED = ["id", "leaf_id", "leaf_index", "active_path", "labels", "name", "entries", "branches"]
COMPARED_V1 = ["leaf_index", "labels", "name", "entries", "branches", "tree_shape"]

#: The head of a node script that opens a copy of each of ``spec.files`` (Pi may rewrite a
#: file it opens) with Pi's SessionManager, as ``sm``: the loop's body follows. ``root`` is
#: removed at the end.
PI_EACH_FILE = r"""
import { SessionManager } from "PKG_URL";
import { copyFileSync, mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { join, basename } from "node:path";
const spec = JSON.parse(process.argv[2]);
const root = mkdtempSync(join(spec.tmp, "pi-"));
let n = 0;
for (const file of spec.files) {
  const dir = join(root, String(n++));
  mkdirSync(dir);
  const copy = join(dir, basename(file));
  copyFileSync(file, copy);
  const sm = SessionManager.open(copy, join(dir, "sessions"));
"""


def run_pi_script(
    script: str, pi_pkg: Path, spec: dict[str, Any], folder: Path, node_runner: Any
) -> list[dict[str, Any]]:
    """The JSON lines ``script`` prints, run by node against Pi's package ``pi_pkg``."""
    path = folder / "pi.mjs"
    path.write_text(script.replace("PKG_URL", pi_pkg.resolve().as_uri()), encoding="utf-8")
    out = node_runner([str(path), json.dumps(spec)])
    return [json.loads(line) for line in out.splitlines()]


# Pi's buildSessionContext roles, and what firstKeptEntryId points at (as a file-order index).
CONTEXT_SCRIPT = (
    PI_EACH_FILE
    + r"""
  const entries = sm.getEntries();
  const index = new Map(entries.map((e, i) => [e.id, i]));
  const compactions = entries
    .map((e, i) => [e, i])
    .filter(([e]) => e.type === "compaction")
    .map(([e, i]) => [i, e.firstKeptEntryId === undefined ? null : index.get(e.firstKeptEntryId)]);
  const roles = sm.buildSessionContext().messages.map((m) => m.role);
  console.log(JSON.stringify({ file, roles, compactions }));
}
const { getDefaultSessionDir } = await import(new URL("./core/session-manager.js", "PKG_URL"));
for (const cwd of spec.cwds) {
  const folder = basename(getDefaultSessionDir(cwd, join(root, "agent")));
  console.log(JSON.stringify({ cwd, folder }));
}
rmSync(root, { recursive: true, force: true });
"""
)


def python_facts(session: Session) -> dict[str, Any]:
    """The oracle's fields, computed by our loader."""
    index = {e.id: i for i, e in enumerate(session.entries)}
    shape = []
    for i, entry in enumerate(session.entries):
        parent = session.parent_of(entry.id)
        shape.append([i, None if parent is None else index[parent]])
    return {
        "id": session.id,
        "leaf_id": session.leaf_id,
        "leaf_index": index.get(session.leaf_id) if session.leaf_id else None,
        "active_path": session.active_path,
        "labels": session.labels,
        "name": session.name,
        "entries": len(session.entries),
        "branches": len(session.leaf_ids),
        "cost_total": compute_stats(session).all.cost,
        "tree_shape": shape,
    }


def assert_agrees(pi: dict[str, Any], ours: dict[str, Any], version: int, context: str) -> None:
    assert "error" not in pi, f"Pi failed on {context}: {pi['error']}"
    assert math.isclose(ours["cost_total"], pi["cost_total"], rel_tol=1e-9, abs_tol=1e-12), context
    if version >= 2:  # real ids: compare them
        assert {k: ours[k] for k in COMPARED} == {k: pi[k] for k in COMPARED}, context
        assert ours["tree_shape"] == pi["tree_shape"], context
    else:  # Pi gives v1 files random ids on every load: compare the structure
        assert {k: ours[k] for k in COMPARED_V1} == {k: pi[k] for k in COMPARED_V1}, context
        assert pi["active_path"] is not None and len(set(pi["active_path"])) == ours["entries"]
        position = {entry_id: i for i, entry_id in enumerate(ours["active_path"])}
        assert [position[i] for i in ours["active_path"]] == list(range(ours["entries"]))
        assert pi["rewritten"] is True  # Pi migrates (rewrites) v1 files; we never write


# --- adversarial files --------------------------------------------------------------------------


def adversarial_files(folder: Path, build, dump) -> dict[str, Path]:
    files: dict[str, list] = {}
    b = build
    files["cleared-label"] = [
        b.header(),
        b.user("u1", None, "q", 1),
        b.assistant("a1", "u1", second=2),
        b.label("l1", "a1", "u1", "first", 3),
        b.label("l2", "l1", "a1", "answer", 4),
        b.label("l3", "l2", "u1", None, 5),  # no label key: clears
        b.label("l4", "l3", "a1", "", 6),  # empty: clears
        b.label("l5", "l4", "a1", "again", 7),
        b.label("l6", "l5", "ghost", "dangling", 8),
        b.label("l7", "l6", "u1", "x", 9),
        b.label("l8", "l7", "u1", None, 10),
    ]
    files["orphans"] = [
        b.header(),
        b.user("u1", None, "q", 1),
        b.user("o1", "gone", "orphan", 2),
        b.assistant("a2", "o1", second=3),
        b.user("s1", "s1", "self parent", 4),
        {"type": "custom", "id": "np", "timestamp": "2025-01-01T00:00:05.000Z"},
        b.assistant("a3", "u1", second=6),
    ]
    files["unknown-types"] = [
        b.header(futureField={"x": 1}),
        b.user("u1", None, "q", 1),
        b.entry("telepathy", "t1", "u1", 2, payload=[1, 2]),
        b.entry("message", "m1", "t1", 3, message={"role": "oracle", "content": "?"}),
        b.assistant("a1", "m1", second=4, usage=b.usage(cost=None)),  # cost missing: 0
        b.entry("session_info", "n1", "a1", 5, name="  Named  "),
        b.entry("session_info", "n2", "n1", 6, name=""),  # clears
        b.entry("session_info", "n3", "n2", 7, name="Final 会话 🌙"),
        b.header(session_id="second-header"),  # not an entry for either
    ]
    files["v2-hook-message"] = [
        b.header(version=2),
        b.user("u1", None, "q", 1),
        b.entry(
            "message",
            "h1",
            "u1",
            2,
            message={"role": "hookMessage", "customType": "x", "content": "c"},
        ),
        b.assistant("a1", "h1", second=3, usage=b.usage(cost=0.25)),
    ]
    files["forks-and-times"] = [
        b.header(),
        b.user("r", None, "root", 0),
        b.assistant("late", "r", second=30),
        b.assistant("tie1", "r", second=10),
        b.assistant("tie2", "r", second=10),
        b.assistant("early", "r", second=5),
        b.user("deep", "tie1", "more", 40),
        b.entry("branch_summary", "bs", "r", 41, fromId="late", summary="tried"),
    ]
    raw_lines: dict[str, bytes] = {}
    tricky = "sep\u2028line\u2029para\u0085nel\x1cfs 会话 🌙 \ud83d"
    good = [
        b.header(),
        b.user("u1", None, tricky, 1),
        b.assistant("a1", "u1", second=2, usage=b.usage(cost=0.5)),
        b.user("u2", "a1", "next", 3),
    ]
    body = dump(good[:2]) + b"{not json\n\n  \n" + dump(good[2:3])
    body += b'{"type":"custom","id":"nan","parentId":"a1","timestamp":"t","data":NaN}\n'
    body += dump(good[3:]) + dump([b.assistant("a2", "u2", second=4)])[:70]
    raw_lines["malformed-lines"] = b"\xef\xbb\xbf" + body.replace(b"\n", b"\r\n")
    raw_lines["v1-damaged"] = dump(
        [
            b.header(version=None),
            b.user(None, None, "one", 1),
            "{garbage",
            b.assistant(None, None, "two", 2, usage=b.usage(cost=0.125)),
            b.user(None, None, "three", 3),
            b.entry("compaction", None, None, 4, summary="s", firstKeptEntryIndex=3),
            b.user(None, None, "four", 5),
            b.entry("compaction", None, None, 6, summary="s2", firstKeptEntryIndex=9),
            b.assistant(None, None, "five", 7),
        ]
    )
    # (bug hunt 2026-12-05) an entry that lost its type, on the path; a v1 index as 3.0
    lost_type = b.user("u2", "u1", "two", 2)
    del lost_type["type"]
    files["lost-type-on-path"] = [
        b.header(),
        b.user("u1", None, "one", 1),
        lost_type,
        b.user("u3", "u2", "three", 3),
        b.assistant("a4", "u3", second=4),
    ]
    files["v1-compaction-float-index"] = [
        b.header(version=None),
        b.user(None, None, "one", 1),
        b.user(None, None, "two", 2),
        b.user(None, None, "three", 3),
        b.entry("compaction", None, None, 4, summary="s", firstKeptEntryIndex=3.0),
        b.user(None, None, "four", 5),
    ]
    # Documented differences.
    files["non-object-line"] = [b.header(), b.user("u1", None), "[1,2]", "42", b.user("u2", "u1")]
    files["missing-header"] = [b.user("u1", None), b.assistant("a1", "u1")]
    files["duplicate-id"] = [
        b.header(),
        b.user("a", None, "first a", 1),
        b.assistant("b", "a", second=2),  # written between the two a's
        b.user("a", None, "second a, a new root", 3),
        b.assistant("d", "a", second=4),  # written after both
    ]
    files["label-not-a-string"] = [b.header(), b.user("u1", None), b.label("l1", "u1", "u1", 5)]
    files["name-not-a-string"] = [b.header(), b.user("u1", None), b.name("n1", "u1", 5)]
    files["null-line"] = [b.header(), b.user("u1", None), "null", b.user("u2", "u1")]
    files["v1-compaction-self-index"] = [
        b.header(version=None),
        b.user(None, None, "one", 1),
        b.entry("compaction", None, None, 2, summary="s", firstKeptEntryIndex=2),
        b.user(None, None, "after", 3),
    ]
    files["context-latest-compaction"] = [
        b.header(),
        b.user("u1", None, "one", 1),
        b.user("u2", "u1", "two", 2),
        b.user("u3", "u2", "three", 3),
        b.entry("compaction", "c1", "u3", 4, summary="s1", firstKeptEntryId="u3"),
        b.user("u4", "c1", "four", 5),
        b.entry("compaction", "c2", "u4", 6, summary="s2", firstKeptEntryId="u2"),
        b.user("u5", "c2", "five", 7),
    ]
    paths = {}
    for name, lines in files.items():
        paths[name] = folder / f"{name}.jsonl"
        paths[name].write_bytes(dump(lines))
    for name, data in raw_lines.items():
        paths[name] = folder / f"{name}.jsonl"
        paths[name].write_bytes(data)
    return paths


@pytest.fixture(scope="module")
def adversarial(tmp_path_factory, build, dump) -> dict[str, Path]:
    return adversarial_files(tmp_path_factory.mktemp("adversarial"), build, dump)


@pytest.fixture(scope="module")
def pi_records(pi_reference, generated_sessions, adversarial, shared) -> dict[Path, dict]:
    """One node process for every file this module compares."""
    fixtures = sorted((shared / "fixtures").glob("*.jsonl"))
    files = [*fixtures, *generated_sessions.files, *adversarial.values()]
    before = {f: f.read_bytes() for f in files}
    records = pi_reference(files)
    assert {f: f.read_bytes() for f in files} == before  # the script only touches copies
    return dict(zip(files, records, strict=True))


def ours(path: Path) -> tuple[Session, dict[str, Any]]:
    with cpu_time_limit(30):
        session = load_session(path)
    return session, python_facts(session)


# --- real sessions ------------------------------------------------------------------------------


def test_fixture_agrees_with_pi(pi_fixture: Path, pi_records) -> None:
    session, facts = ours(pi_fixture)
    assert_agrees(pi_records[pi_fixture], facts, session.version, pi_fixture.name)


def test_generated_session_agrees_with_pi(generated_index: int, generated_sessions, pi_records):
    path = generated_sessions.files[generated_index]
    session, facts = ours(path)
    record = pi_records[path]
    context = generated_sessions.describe(generated_index)
    assert_agrees(record, facts, session.version, context)
    assert session.version == 3 and record["rewritten"] is False, context
    assert session.diagnostics == [] and session.damaged == [], context


def test_generated_sessions_are_varied(generated_sessions, pi_records) -> None:
    """The random corpus really exercises forks, labels and names (else it proves little)."""
    records = [pi_records[f] for f in generated_sessions.files]
    assert len(records) >= 20
    assert sum(r["branches"] > 1 for r in records) >= 5, generated_sessions.describe()
    assert sum(bool(r["labels"]) for r in records) >= 3, generated_sessions.describe()
    assert len({r["id"] for r in records}) == len(records)


def test_every_process_of_a_run_draws_the_same_generated_sessions() -> None:
    """An xdist worker is a process the run starts, and it imports the conftest again: it
    must write the sessions the header's seeds name, as every other worker does (each drew
    seeds of its own, so gen05 was another session on each worker)."""
    conftest_file = str(REPO_TESTS / "conftest.py")
    loaded = [
        m for m in list(sys.modules.values()) if getattr(m, "__file__", None) == conftest_file
    ]
    assert {tuple(m.GEN_SEEDS) for m in loaded} == {tuple(GEN_SEEDS)}  # (imported twice here)
    code = "from tests.conftest import GEN_SEEDS; print(*GEN_SEEDS, sep=',')"
    child = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_TESTS.parent,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == ",".join(map(str, GEN_SEEDS))


# --- adversarial files: agreement ---------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "cleared-label",
        "orphans",
        "unknown-types",
        "v2-hook-message",
        "forks-and-times",
        "malformed-lines",
        "v1-damaged",
        "lost-type-on-path",
        "v1-compaction-float-index",
    ],
)
def test_adversarial_file_agrees_with_pi(name: str, adversarial, pi_records) -> None:
    path = adversarial[name]
    session, facts = ours(path)
    assert_agrees(pi_records[path], facts, session.version, name)


def test_cleared_labels_match_pi_session_manager(adversarial, pi_records) -> None:
    """Pi's HTML export would still show "first" on u1 (it never deletes); we follow Pi's
    SessionManager, whose label map is the truth."""
    session, _ = ours(adversarial["cleared-label"])
    assert session.labels == {"a1": "again", "ghost": "dangling"}
    assert pi_records[adversarial["cleared-label"]]["labels"] == session.labels


def test_malformed_lines_are_reported_where_pi_is_silent(adversarial, pi_records) -> None:
    session, _ = ours(adversarial["malformed-lines"])
    assert pi_records[adversarial["malformed-lines"]]["entries"] == len(session.entries) == 3
    assert sorted((d.line, d.kind) for d in session.damaged) == [
        (3, "invalid-json"),
        (7, "invalid-json"),
        (9, "truncated"),
    ]
    assert session.entries[0].text == "sep\u2028line\u2029para\u0085nel\x1cfs 会话 🌙 \ud83d"


# --- adversarial files: documented differences --------------------------------------------------


def test_non_object_lines_are_damaged_not_entries(adversarial, pi_records) -> None:
    session, facts = ours(adversarial["non-object-line"])
    pi = pi_records[adversarial["non-object-line"]]
    # Pi: "[1,2]" and "42" are two more entries, both with id undefined: two roots that
    # getTree() merges into one node, so one extra leaf.
    assert (pi["entries"], pi["branches"]) == (4, 2)
    assert pi["tree_shape"] == [[0, None], [1, None], [2, None], [3, 0]]
    assert (facts["entries"], facts["branches"]) == (2, 1)
    assert [d.kind for d in session.damaged] == ["not-an-object", "not-an-object"]
    assert facts["active_path"] == pi["active_path"] == ["u1", "u2"]


@pytest.mark.parametrize("name", ["null-line", "name-not-a-string"])
def test_lines_that_crash_pi_load_here(name: str, adversarial, pi_records) -> None:
    assert "TypeError" in pi_records[adversarial[name]]["error"]
    session, facts = ours(adversarial[name])
    assert facts["entries"] == 2 and facts["name"] is None
    expected = [] if name == "name-not-a-string" else [(3, "not-an-object")]
    assert [(d.line, d.kind) for d in session.damaged] == expected


def test_missing_header_is_recovered_where_pi_wipes_the_file(adversarial, pi_records) -> None:
    pi = pi_records[adversarial["missing-header"]]
    assert pi["entries"] == 0 and pi["rewritten"] is True
    session, facts = ours(adversarial["missing-header"])
    assert session.header.synthesized and facts["entries"] == 2
    assert facts["active_path"] == ["u1", "a1"]


def test_label_that_is_not_a_string(adversarial, pi_records) -> None:
    assert pi_records[adversarial["label-not-a-string"]]["labels"] == {"u1": 5}
    session, _ = ours(adversarial["label-not-a-string"])
    assert session.labels == {"u1": "5"}  # as Pi, any truthy label is set; shown as text


def test_duplicate_ids_against_pi(adversarial, pi_records) -> None:
    """Pi points every ``parentId "a"`` at the LAST ``a`` of the file, even for ``b``, written
    before that entry existed; we never resolve to a later namesake (documented difference).
    For ``d``, written after both, the nearest earlier ``a`` is the last one: there we must
    agree with Pi. Product bug: we attach ``d`` to the FIRST ``a`` (see test_tree)."""
    pi = pi_records[adversarial["duplicate-id"]]
    session, facts = ours(adversarial["duplicate-id"])
    assert pi["tree_shape"] == [[0, None], [1, 2], [2, None], [3, 2]]
    assert facts["tree_shape"][1] == [1, 0]  # b stays under the a it was written after
    assert facts["tree_shape"][3] == pi["tree_shape"][3]  # d under the second a
    assert [d.kind for d in session.diagnostics] == ["duplicate-id"]


def test_v1_first_kept_entry_index_agrees_with_pi(context_records, adversarial) -> None:
    record = context_records[adversarial["v1-damaged"]]
    session, _ = ours(adversarial["v1-damaged"])
    assert compaction_targets(session) == record["compactions"] == [[3, 2], [5, None]]
    pi_self = context_records[adversarial["v1-compaction-self-index"]]
    session, _ = ours(adversarial["v1-compaction-self-index"])
    assert pi_self["compactions"] == [[1, 1]]  # Pi: the compaction's own new id
    assert compaction_targets(session) == [[1, None]]  # we: none
    assert roles_in_context(session) == pi_self["roles"]  # the same context either way


def test_cycles_are_broken_where_pi_hangs(build, dump, tmp_path: Path) -> None:
    """Not given to Pi: its getBranch()/getTree() loop forever on a parentId cycle."""
    path = tmp_path / "cycle.jsonl"
    path.write_bytes(
        dump(
            [
                build.header(),
                build.user("a", "c", "a", 1),
                build.user("b", "a", "b", 2),
                build.user("c", "b", "c", 3),
                build.user("d", "c", "tail", 4),
            ]
        )
    )
    session, facts = ours(path)
    assert [(d.line, d.kind) for d in session.diagnostics] == [(2, "cycle")]
    assert facts["active_path"] == ["a", "b", "c", "d"]
    assert facts["tree_shape"] == [[0, None], [1, 0], [2, 1], [3, 2]]


# --- context (buildSessionContext) and session folders -----------------------------------------


CONTEXT_FILES = [
    "lost-type-on-path",
    "v1-compaction-float-index",
    "v1-damaged",
    "v1-compaction-self-index",
    "context-latest-compaction",
    "unknown-types",
    "forks-and-times",
]
CWDS = [
    "/home/dev/projects/webapp",
    "/",
    "/a:b\\c/d",
    "C:\\Users\\me\\proj",
    "\\\\server\\share",
    "//double",
    "/with space/ünï 会话",
    "/trailing/",
]


@pytest.fixture(scope="module")
def context_script_output(pi_pkg, adversarial, shared, tmp_path_factory, node_runner):
    folder = tmp_path_factory.mktemp("pi-context")
    files = sorted((shared / "fixtures").glob("*.jsonl")) + [adversarial[n] for n in CONTEXT_FILES]
    spec = {"files": [str(f) for f in files], "cwds": CWDS, "tmp": str(folder)}
    return run_pi_script(CONTEXT_SCRIPT, pi_pkg, spec, folder, node_runner)


@pytest.fixture(scope="module")
def context_records(context_script_output) -> dict[Path, dict]:
    return {Path(r["file"]): r for r in context_script_output if "file" in r}


def compaction_targets(session: Session) -> list[list[int | None]]:
    index = {e.id: i for i, e in enumerate(session.entries)}
    return [
        [index[e.id], index.get(e.first_kept_entry_id) if e.first_kept_entry_id else None]
        for e in session.entries
        if isinstance(e, CompactionEntry)
    ]


def roles_in_context(session: Session) -> list[str]:
    """What buildSessionContext would send, from our context_status()."""
    dropped = session.context_status()
    path = session.active_entries()
    roles = ["compactionSummary"] if any(isinstance(e, CompactionEntry) for e in path) else []
    for entry in path:
        if entry.id in dropped or isinstance(entry, CompactionEntry):
            continue
        if isinstance(entry, MessageEntry):
            roles.append(entry.role)
        elif entry.type == "custom_message":
            roles.append("custom")
        elif entry.type == "branch_summary" and entry.raw.get("summary"):
            roles.append("branchSummary")
    return roles


def test_context_of_every_fixture_matches_pi(pi_fixture: Path, context_records) -> None:
    session, _ = ours(pi_fixture)
    record = context_records[pi_fixture]
    assert roles_in_context(session) == record["roles"]
    assert compaction_targets(session) == record["compactions"]  # file-order indices
    dropped = session.context_status()
    marked = sum(1 for e in session.active_entries() if e.id in dropped and e.type != "compaction")
    in_context = sum(
        1
        for e in session.active_entries()
        if e.type in {"message", "custom_message"}
        or (e.type == "branch_summary" and e.raw.get("summary"))
    )
    compaction = any(isinstance(e, CompactionEntry) for e in session.active_entries())
    assert in_context - marked + compaction == len(record["roles"])


@pytest.mark.parametrize(
    "name",
    [
        "unknown-types",
        "forks-and-times",
        "v1-damaged",
        "lost-type-on-path",
        "v1-compaction-float-index",
    ],
)
def test_context_of_adversarial_files_matches_pi(name, adversarial, context_records) -> None:
    session, _ = ours(adversarial[name])
    record = context_records[adversarial[name]]
    assert roles_in_context(session) == record["roles"]
    assert compaction_targets(session) == record["compactions"]


def test_context_status_uses_only_the_latest_compaction_like_pi(adversarial, context_records):
    """Pi sends u2, u3 (kept by the newest compaction c2) although c1 had dropped them.

    Product bug (see test_tree): context_status() still marks u2 as out of context."""
    path = adversarial["context-latest-compaction"]
    assert context_records[path]["roles"] == ["compactionSummary", "user", "user", "user", "user"]
    session, _ = ours(path)
    compactions = {e.id for e in session.entries if e.type == "compaction"}
    assert set(session.context_status()) - compactions == {"u1"}


def test_encode_cwd_matches_pi(context_script_output) -> None:
    folders = {r["cwd"]: r["folder"] for r in context_script_output if "cwd" in r}
    assert set(folders) == set(CWDS)
    for cwd, folder in folders.items():
        assert encode_cwd(cwd) == folder, cwd


# --- other agents' transcripts, converted ---------------------------------------------------


@pytest.mark.parametrize(
    ("folder", "pattern", "name"),
    [
        ("claude-code", "7f3c9a12-*.jsonl", "Dark mode for settings"),
        ("codex", "rollout-*.jsonl", "Fix price rounding in the stock report"),  # a rollback
    ],
    ids=["claude-code", "codex"],
)
def test_another_agents_session_written_as_pi_session_is_what_pi_reads(
    pi_reference, tmp_path, folder: str, pattern: str, name: str
):
    """A Claude Code or Codex transcript as our Pi v3 copy (what ``redact`` and a gist's
    session.jsonl hold): Pi opens it on the same leaf, path, tree and cost as our reading of
    the original file."""
    (source,) = (REPO_TESTS / "data" / folder).glob(pattern)
    converted = load_session(source)
    copy = tmp_path / "converted.jsonl"
    copy.write_text(session_to_jsonl(converted), encoding="utf-8")
    (record,) = pi_reference([copy])
    facts = python_facts(converted)
    assert facts["name"] == name
    assert_agrees(record, facts, 3, copy.name)
    assert record["rewritten"] is False
    assert load_session(copy).active_path == converted.active_path
