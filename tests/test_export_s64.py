"""Hunt s64, export: an ``--agent-context`` file is an input no output may replace; the
Markdown says what was left out or redacted, as the page's header does; a ``--leaf`` that
``--exclude`` leaves out is an error, not another branch made the main line.

Each test runs the real command in a process of its own, on copies of the shared fixtures.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from exporter.loader import load_session
from tests.conftest import FIXTURES_DIR

SAMPLER = FIXTURES_DIR / "every-entry-type.jsonl"
BRANCHED = FIXTURES_DIR / "pi-branched-1.jsonl"
AGENT_CONTEXT = '{"systemPrompt": "You are helpful", "tools": []}\n'


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``pi-session ARGS`` in ``cwd``, stdin empty (a watch stops when it closes)."""
    return subprocess.run(
        [sys.executable, "-m", "exporter", *args],
        cwd=cwd,
        input="",
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )


def _copy(source: Path, folder: Path) -> Path:
    target = folder / source.name
    shutil.copyfile(source, target)
    return target


# --- 1: the --agent-context file is an input --------------------------------------------


@pytest.mark.parametrize(
    ("context_name", "outputs", "option"),
    [
        ("agent-context.json", ["-o", "p.html", "--redact", "--report", "agent-context.json"],
         "--report"),
        ("ctx.md", ["-o", "ctx.md"], "-o"),
        ("ctx.html", ["-o", "ctx.html"], "-o"),
    ],
)  # fmt: skip
def test_no_output_replaces_the_agent_context_file(
    tmp_path: Path, context_name: str, outputs: list[str], option: str
) -> None:
    """Refused before any work, as an output naming a --secret or --env-file file is: the
    report (or the page) silently took the place of the context it was made from."""
    session = _copy(SAMPLER, tmp_path)
    context = tmp_path / context_name
    context.write_text(AGENT_CONTEXT, encoding="utf-8")
    done = _run(tmp_path, "export", str(session), *outputs, "--agent-context", context_name)
    assert done.returncode == 1, done.stderr
    assert (
        f"refusing to overwrite {context_name} (read with --agent-context) with {option}"
    ) in done.stderr
    assert "Traceback" not in done.stderr
    assert context.read_text(encoding="utf-8") == AGENT_CONTEXT
    assert not (tmp_path / "p.html").exists()


# --- 2: the Markdown says what the page's header says of the copy ------------------------


def _page_fact(page: str) -> tuple[str, str]:
    """The page header's "Left out" or "Redaction" fact: (its name, its text)."""
    found = re.search(r'<div class="redaction"><dt>([^<]*)</dt><dd>([^<]*)</dd>', page)
    assert found, "the page says nothing of what was left out"
    return html.unescape(found.group(1)), html.unescape(found.group(2))


def _markdown_fact(document: str, name: str) -> str:
    """The text of the document's ``- **NAME:**`` fact, its Markdown escapes undone."""
    found = re.search(rf"^- \*\*{re.escape(name)}:\*\* (.*)$", document, re.MULTILINE)
    assert found, f"the document has no {name!r} fact"
    return re.sub(r"\\(.)", r"\1", found.group(1))


def _subtree_to_leave_out() -> str:
    """An entry a third of the way down the active path: ``ID/`` leaves its subtree out."""
    session = load_session(BRANCHED)
    path = session.active_path
    return next(i for i in path[len(path) // 3 :] if session.by_id[i].type == "message")


@pytest.mark.parametrize(
    "options",
    [
        ["--exclude", "SUBTREE"],
        ["--active-branch-only"],
        ["--drop-hidden"],
        ["--no-thinking"],
        ["--redact"],
        ["--redact", "--no-thinking"],
    ],
)
def test_the_markdown_says_what_the_page_says_was_left_out(
    tmp_path: Path, options: list[str]
) -> None:
    """Page and Markdown of one copy agree: the document said nothing of what it lacks."""
    session = _copy(BRANCHED, tmp_path)
    options = [_subtree_to_leave_out() + "/" if o == "SUBTREE" else o for o in options]
    for name in ("p.html", "p.md"):
        done = _run(tmp_path, "export", str(session), *options, "-o", name)
        assert done.returncode == 0, done.stderr
    heading, note = _page_fact((tmp_path / "p.html").read_text(encoding="utf-8"))
    document = (tmp_path / "p.md").read_text(encoding="utf-8")
    assert _markdown_fact(document, heading) == note
    assert heading == ("Redaction" if "--redact" in options else "Left out")


def test_a_plain_markdown_export_has_no_such_fact(tmp_path: Path) -> None:
    """Nothing left out, nothing redacted: no fact about it (as on the page)."""
    session = _copy(BRANCHED, tmp_path)
    assert _run(tmp_path, "export", str(session), "-o", "p.md").returncode == 0
    document = (tmp_path / "p.md").read_text(encoding="utf-8")
    assert "- **Left out:**" not in document and "- **Redaction:**" not in document


def test_share_with_markdown_says_it_too(tmp_path: Path) -> None:
    """`share --with-markdown` makes the same document: its dry run's README says what was
    left out and redacted, as the shared page does."""
    session = _copy(SAMPLER, tmp_path)
    done = _run(tmp_path, "share", str(session), "--dry-run", "--with-markdown",
                "--exclude", "e03/")  # fmt: skip
    assert done.returncode == 0, done.stderr
    page = next(tmp_path.glob("pi-session-share-*.html")).read_text(encoding="utf-8")
    document = next(tmp_path.glob("pi-session-share-*.md")).read_text(encoding="utf-8")
    heading, note = _page_fact(page)
    assert heading == "Redaction" and "entries excluded (--exclude)" in note
    assert _markdown_fact(document, heading) == note


def test_the_summary_line_of_a_markdown_export_says_document(tmp_path: Path) -> None:
    """The stderr line says what was made: a Markdown export has no page."""
    session = _copy(SAMPLER, tmp_path)
    markdown = _run(tmp_path, "export", str(session), "--exclude", "e03", "-o", "p.md")
    page = _run(tmp_path, "export", str(session), "--exclude", "e03", "-o", "p.html")
    assert markdown.returncode == 0 and page.returncode == 0
    assert (
        "(left out of the document entirely; the document is not redacted: --redact scans it)"
    ) in markdown.stderr
    assert "the page" not in markdown.stderr
    assert (
        "(left out of the page entirely; the page is not redacted: --redact scans it)"
    ) in page.stderr


# --- 3: a --leaf that --exclude leaves out -------------------------------------------------


@pytest.mark.parametrize(
    ("leaf", "exclude"),
    [("e22", "e03/"), ("e22", "e22")],
)
@pytest.mark.parametrize("output", ["b.md", "b.html"])
def test_a_leaf_that_exclude_leaves_out_is_refused(
    tmp_path: Path, leaf: str, exclude: str, output: str
) -> None:
    """The copy's leaf became the nearest kept ancestor (e02): another branch was made the
    main line and nothing said so. A usage error names both options; nothing is written."""
    session = _copy(SAMPLER, tmp_path)
    done = _run(tmp_path, "export", str(session), "--leaf", leaf, "--exclude", exclude,
                "-o", output)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert f"--leaf {leaf}: --exclude {exclude} leaves that entry out" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / output).exists()


def test_exclude_without_leaf_still_moves_to_the_nearest_kept_entry(tmp_path: Path) -> None:
    """Without --leaf the session's own leaf may go: its nearest kept ancestor leads."""
    session = _copy(SAMPLER, tmp_path)
    done = _run(tmp_path, "export", str(session), "--exclude", "e25", "-o", "b.md")
    assert done.returncode == 0, done.stderr  # e25: the last entry, the session's leaf
    assert "leaf `e24`" in (tmp_path / "b.md").read_text(encoding="utf-8")
    kept = _run(tmp_path, "export", str(session), "--leaf", "e22", "--exclude", "e25",
                "-o", "c.md")  # fmt: skip
    assert kept.returncode == 0, kept.stderr
    assert "leaf `e22`" in (tmp_path / "c.md").read_text(encoding="utf-8")


def test_watch_refuses_a_leaf_that_exclude_leaves_out(tmp_path: Path) -> None:
    """`watch` takes both options too: refused before anything is served."""
    session = _copy(SAMPLER, tmp_path)
    done = _run(tmp_path, "watch", str(session), "--leaf", "e22", "--exclude", "e03/",
                "--until-stdin-closes")  # fmt: skip
    assert done.returncode == 1 and done.stdout == "", done.stdout
    assert "--leaf e22: --exclude e03/ leaves that entry out" in done.stderr


# --- share takes --agent-context, --report, --leaf and --exclude too -----------------------


def test_share_refuses_both_as_export_does(tmp_path: Path) -> None:
    """`share --dry-run --report ac.json --agent-context ac.json` replaced the context with
    the report, and `share --leaf e22 --exclude e03/` shared another branch, unsaid."""
    session = _copy(SAMPLER, tmp_path)
    context = tmp_path / "ac.json"
    context.write_text(AGENT_CONTEXT, encoding="utf-8")
    done = _run(tmp_path, "share", str(session), "--dry-run", "--report", "ac.json",
                "--agent-context", "ac.json")  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "refusing to overwrite ac.json (read with --agent-context) with --report" in done.stderr
    assert context.read_text(encoding="utf-8") == AGENT_CONTEXT
    done = _run(tmp_path, "share", str(session), "--dry-run", "--leaf", "e22",
                "--exclude", "e03/")  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "--leaf e22: --exclude e03/ leaves that entry out" in done.stderr
    assert "Traceback" not in done.stderr
    assert not list(tmp_path.glob("pi-session-share-*"))


def test_share_refuses_an_api_url_holding_credentials(tmp_path: Path) -> None:
    """`--api-url http://x:ghp_…@host` made the client send Basic x:ghp_… instead of the
    token, and GitHub's 401 was blamed on a good token (hunt, stop 64): refused before
    anything is sent, the user part never printed."""
    session = _copy(SAMPLER, tmp_path)
    url = "http://x:ghp_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA9@127.0.0.1:9/"
    done = _run(tmp_path, "share", str(session), "--dry-run", "--api-url", url)
    assert done.returncode == 1, done.stderr
    assert "holds a user name or password before its host" in done.stderr
    assert "ghp_" not in done.stderr + done.stdout and "***@127.0.0.1:9" in done.stderr
    assert not list(tmp_path.glob("pi-session-share-*"))
