"""`pi-session watch --agent-context FILE`: the live page (Pi's /live-html) shows the agent's
system prompt and tools as an exported one does, on every version. The file is read once,
when the watch starts: Pi's extension removes it as soon as the watch serves. Driven as a
real subprocess over HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from exporter.cli import cli
from exporter.loader import load_session
from tests.test_watch import (
    append,
    copy_of,
    http_get,
    served_version,
    start_watch,
    user_line,
    wait_for_a_version_after,
)

PLANTED = "ghp_" + "Wq7Er2Ty9Ui4Op1As6Df3Gh8Jk5Lz0Xc2Vb4"  # ghp_ + 36 letters and digits
PROMPT = "\n".join(
    [
        "You are a live test agent. <b>Not bold</b> & plain.",
        *(f"Rule {n}: keep the page current." for n in range(1, 13)),
        f"Deploy with {PLANTED} when asked.",
        "The prompt's last line.",
    ]
)
TOOLS = [
    {
        "name": "bash",
        "description": "Execute a bash command.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "What to run"}},
            "required": ["command"],
        },
    },
    {"name": "grep", "description": "Search file contents", "parameters": {"type": "object"}},
]
CONTEXT = {"systemPrompt": PROMPT, "tools": TOOLS, "activeTools": ["bash"]}


def write_context(folder: Path, data: Any) -> Path:
    path = folder / "agent-context.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def cards(page: str) -> str:
    """The cards' section of the page ('' when it has none)."""
    start = page.find('<section class="agent-context"')
    if start < 0:
        return ""
    return page[start : page.index("</section>", start) + len("</section>")]


def page_of(url: str) -> str:
    status, body = http_get(url)
    assert status == 200
    return body.decode("utf-8")


def grow(path: Path, url: str, entry_id: str, text: str) -> str:
    """Append a prompt to the session and return the version of the page made after it."""
    before = served_version(url)
    append(path, user_line(entry_id, load_session(path).leaf_id or "", text))
    wait_for_a_version_after(url, before)
    page = page_of(url)
    assert entry_id in page
    return page


def stop(process: subprocess.Popen[str]) -> str:
    process.terminate()
    _, errors = process.communicate(timeout=30)
    assert process.returncode == 0, errors
    assert "Traceback" not in errors
    return errors


def test_every_version_has_the_cards_after_the_file_is_gone(tmp_path: Path) -> None:
    path = copy_of("pi-branched-1.jsonl", tmp_path)
    context = write_context(tmp_path, CONTEXT)
    process, url = start_watch(str(path), "--agent-context", str(context), cwd=tmp_path)
    try:
        assert url.startswith("http://127.0.0.1:"), url
        first = cards(page_of(url))
        context.unlink()  # as /live-html does once the watch serves
        later = cards(grow(path, url, "live-ctx-1", "asked after the file was removed"))
    finally:
        errors = stop(process)
    for section in (first, later):
        assert '<details class="ac-prompt">' in section
        assert "You are a live test agent. &lt;b&gt;Not bold&lt;/b&gt; &amp; plain." in section
        assert "The prompt&#39;s last line." in section  # whole, in the folded card's body
        assert PLANTED in section  # a plain watch shows it as it is, as a plain export does
        assert re.search(r"<b>Tools</b> <span class=\"muted\">\(2, 1 active\)", section)
        assert '<li class="ac-tool inactive"><details><summary><code>grep</code>' in section
    assert "--agent-context" not in errors, errors  # read, and nothing left out


def test_with_redact_a_token_in_the_prompt_is_never_served(tmp_path: Path) -> None:
    path = copy_of("pi-branched-1.jsonl", tmp_path)
    context = write_context(tmp_path, CONTEXT)
    process, url = start_watch(str(path), "--redact", "--agent-context", str(context), cwd=tmp_path)
    try:
        first = page_of(url)
        context.unlink()
        later = grow(path, url, "live-ctx-2", "a later prompt")
    finally:
        stop(process)
    for page in (first, later):
        assert PLANTED not in page and "Wq7Er2Ty9Ui4" not in page
        section = cards(page)
        assert "You are a live test agent." in section
        assert re.search(r"Deploy with \[REDACTED:github-token:\d+\] when asked\.", section)
        # counted with the session's: the page's redaction note names it on every version
        note = re.search(r"<dt>Redaction</dt><dd>([^<]*)</dd>", page)
        assert note is not None and "github-token" in note.group(1), note


def test_a_policy_that_does_not_redact_keeps_the_cards_as_they_are(tmp_path: Path) -> None:
    path = copy_of("pi-branched-1.jsonl", tmp_path)
    context = write_context(tmp_path, CONTEXT)
    process, url = start_watch(
        str(path), "--no-thinking", "--agent-context", str(context), cwd=tmp_path
    )
    try:
        later = grow(path, url, "live-ctx-3", "with thinking left out")
    finally:
        stop(process)
    section = cards(later)
    assert PLANTED in section and "[REDACTED:" not in section
    assert '<details class="ac-tools">' in section


def test_an_unusable_file_is_one_warning_and_a_page_without_cards(tmp_path: Path) -> None:
    path = copy_of("pi-branched-1.jsonl", tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    for given, reason in ((tmp_path / "gone.json", "no such file"), (broken, "not JSON")):
        process, url = start_watch(str(path), "--agent-context", str(given), cwd=tmp_path)
        try:
            assert url.startswith("http://127.0.0.1:"), url
            first = page_of(url)
            later = grow(path, url, f"live-bad-{given.stem}", "a prompt")
        finally:
            errors = stop(process)
        for page in (first, later):
            assert 'class="agent-context"' not in page and "ac-prompt" not in page
        said = [line for line in errors.splitlines() if "warning" in line]
        assert len(said) == 1, errors
        assert said[0].startswith(f"pi-session: warning: --agent-context {given}: {reason}")
        assert said[0].endswith("the page is made without the system prompt and tools")


def test_help_names_the_option() -> None:
    result = CliRunner().invoke(cli, ["watch", "--help"])
    assert result.exit_code == 0
    assert "--agent-context FILE" in result.output
