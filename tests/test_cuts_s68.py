"""Every cut a reader sees keeps whole characters (s68).

`exporter.formatting` cuts titles and previews between grapheme clusters (what a reader
sees as one character: an emoji with a skin tone, a zero width joiner's sequence, a flag,
a letter and its combining accents). These cuts were still by code point, so a long text
ending in such a cluster showed a broken glyph beside the ellipsis: a site's failure
message (`export --all`), the site search index's prompts, calls and tool output, a load
diagnostic's quoted value, a wrong `--pick` answer, a turn summary's tool name, the agent
context's prompt preview and caps, and `search`'s snippets.

Each test puts the clusters at every offset across the cut (a pad of 1 to 9 characters
before and after them) and checks the kept part ends, or starts, between two clusters.
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter import site_search
from exporter.agent_context import (
    MAX_DESCRIPTION_CHARS,
    MAX_PROMPT_CHARS,
    PREVIEW_CHARS,
    read_agent_context,
)
from exporter.cli import cli
from exporter.loader import load_session
from exporter.site import build_site
from exporter.site_search import CALL_CHARS, OUTPUT_HEAD, OUTPUT_TAIL, TEXT_CHARS, session_records
from tests.graphemes import EMOJI_AND_ACCENTS as CLUSTERS

#: Each cluster with each pad: the cut falls at every offset inside the clusters.
VARIANTS = [(cluster, pad) for cluster in CLUSTERS.values() for pad in range(1, 10)]
_GLUE = {"\u200d", *map(chr, range(0x1F3FB, 0x1F400))}
_FLAG_LETTERS = frozenset(map(chr, range(0x1F1E6, 0x1F200)))
WHEN = "2025-06-01T10:00:00.000Z"
USAGE = {
    "input": 10,
    "output": 5,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 15,
    "cost": {"input": 0.01, "output": 0.01, "cacheRead": 0, "cacheWrite": 0, "total": 0.02},
}


def _text(cluster: str, pad: int, size: int, tag: str = "") -> str:
    """``tag``, ``pad`` letters, clusters, ``pad`` letters: longer than ``size``."""
    return tag + "z" * pad + cluster * (size // len(cluster) + 2) + "y" * pad


def _between_clusters(text: str, at: int) -> bool:
    """Whether ``text[:at]`` and ``text[at:]`` split no cluster: no mark or joiner starts
    the second part, no joiner ends the first, and no flag's letters are parted."""
    if at <= 0 or at >= len(text):
        return True
    after = text[at]
    if unicodedata.category(after).startswith("M") or after in _GLUE or text[at - 1] == "\u200d":
        return False
    if after in _FLAG_LETTERS:
        first = at
        while first > 0 and text[first - 1] in _FLAG_LETTERS:
            first -= 1
        return (at - first) % 2 == 0
    return True


def _end(text: str) -> str:
    """A failure's look at a long text: its ends, escaped."""
    return ascii(text if len(text) <= 40 else f"{text[:12]}...{text[-24:]}")


def _head_problem(original: str, kept: str) -> str | None:
    if not kept or not original.startswith(kept):
        return f"not the start of {_end(original)}: {_end(kept)}"
    if not _between_clusters(original, len(kept)):
        return f"a character cut at the end: {_end(kept)}"
    return None


def _tail_problem(original: str, kept: str) -> str | None:
    if not kept or not original.endswith(kept):
        return f"not the end of {_end(original)}: {_end(kept)}"
    if not _between_clusters(original, len(original) - len(kept)):
        return f"a character cut at the start: {kept[:24]!a}"
    return None


def _cut_problem(original: str, shown: str) -> str | None:
    """What is wrong with ``shown`` as ``original`` cut before an ellipsis, between whole
    characters."""
    if not shown.endswith("…"):
        return f"not cut: {_end(shown)}"
    return _head_problem(original, shown[:-1])


class _Cuts:
    """The first problem of each kind of cut a test checks: all are said at the end."""

    def __init__(self) -> None:
        self.broken: dict[str, str] = {}

    def note(self, aspect: str, problem: str | None) -> None:
        if problem:
            self.broken.setdefault(aspect, problem)

    def head(self, aspect: str, original: str, kept: str) -> None:
        self.note(aspect, _head_problem(original, kept))

    def tail(self, aspect: str, original: str, kept: str) -> None:
        self.note(aspect, _tail_problem(original, kept))

    def cut(self, aspect: str, original: str, shown: str) -> None:
        self.note(aspect, _cut_problem(original, shown))

    def check(self) -> None:
        if self.broken:
            pytest.fail("\n".join(f"{aspect}: {said}" for aspect, said in self.broken.items()))


def _assert_cut(original: str, shown: str) -> None:
    if problem := _cut_problem(original, shown):
        pytest.fail(problem)


def _line(kind: str, entry_id: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": WHEN, **fields}


class _Chain:
    """A session file's lines, each entry the child of the one before."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = [
            {"type": "session", "version": 3, "id": "s68-cuts", "timestamp": WHEN, "cwd": "/p"}
        ]
        self.last: str | None = None

    def add(self, kind: str, **fields: Any) -> str:
        entry_id = f"e{len(self.lines):05d}"
        self.lines.append(_line(kind, entry_id, self.last, **fields))
        self.last = entry_id
        return entry_id

    def message(self, **message: Any) -> str:
        return self.add("message", message={"timestamp": 1748772000000, **message})

    def prompt(self, text: str) -> str:
        return self.message(role="user", content=text)

    def reply(self, content: list[dict[str, Any]]) -> str:
        stop = "toolUse" if any(block["type"] == "toolCall" for block in content) else "stop"
        fields = {"provider": "anthropic", "model": "claude-x", "usage": USAGE}
        return self.message(role="assistant", content=content, stopReason=stop, **fields)

    def tool_turn(self, name: str, arguments: dict[str, Any], output: str) -> None:
        call = f"c{len(self.lines)}"
        self.reply([{"type": "toolCall", "id": call, "name": name, "arguments": arguments}])
        self.message(
            role="toolResult",
            toolCallId=call,
            toolName=name,
            content=[{"type": "text", "text": output}],
            isError=False,
        )

    def write(self, path: Path) -> Path:
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines)
        path.write_text(text, encoding="utf-8")
        return path


def test_site_failure_messages_are_cut_between_whole_characters(tmp_path: Path) -> None:
    """`export --all`'s reason a session failed (a policy's error quoting the session)."""
    files, said = [], {}
    for number, (cluster, pad) in enumerate(VARIANTS):
        chain = _Chain()
        prompt = _text(cluster, pad, 320)
        chain.prompt(prompt)
        path = chain.write(tmp_path / f"s{number:03d}.jsonl")
        files.append(path)
        said[path] = f"ValueError: {prompt}"

    def refuse(session: Any) -> Any:
        raise ValueError(session.entries[0].text)

    report = build_site(files, tmp_path / "site", jobs=1, transform=refuse, progress=False)
    assert len(report.failed) == len(files)
    for path, error in report.failed:
        _assert_cut(said[Path(path)], error)


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)  # (as the index holds text)


def test_site_search_records_are_cut_between_whole_characters(tmp_path: Path) -> None:
    """The index's prompts, tool calls (and shell commands), and tool output's head and
    tail."""
    chain, originals = _Chain(), {}
    for number, (cluster, pad) in enumerate(VARIANTS):
        # (twice as long: composed, "e" and two accents are two characters, not three)
        prompt = _text(cluster, pad, 2 * TEXT_CHARS, f"P{number:03d}")
        command = _text(cluster, pad, 2 * CALL_CHARS, f"C{number:03d}")
        output = _text(cluster, pad, 2 * (OUTPUT_HEAD + OUTPUT_TAIL), f"O{number:03d}")
        shell = _text(cluster, pad, 2 * CALL_CHARS, f"S{number:03d}")
        shell_output = _text(cluster, pad, 2 * (OUTPUT_HEAD + OUTPUT_TAIL), f"X{number:03d}")
        chain.prompt(prompt)
        chain.tool_turn("bash", {"command": command}, output)
        chain.message(
            role="bashExecution", command=shell, output=shell_output, exitCode=0,
            cancelled=False, truncated=False,
        )  # fmt: skip
        for text in (prompt, output, shell_output):
            originals[text[:4]] = _nfc(text)
        originals[command[:4]] = _nfc(f"bash {command}")
        originals[shell[:4]] = _nfc(f"bash {shell}")
    records, cut = session_records(load_session(chain.write(tmp_path / "s.jsonl")))
    assert not cut
    kinds = [kind for _, kind, _ in records]
    assert kinds.count("p") == kinds.count("c") // 2 == kinds.count("o") // 2 == len(VARIANTS)
    cuts = _Cuts()
    for _, kind, text in records:
        tag = text.removeprefix("bash ")[:4]
        original = originals[tag]
        if kind == "o":
            head, tail = text.split(" … ")
            cuts.head("tool output's head", original, head)
            cuts.tail("tool output's tail", original, tail)
        else:
            cuts.cut({"p": "prompt", "c": "tool call"}[kind], original, text)
    cuts.check()


def test_a_site_search_session_cut_to_its_share_keeps_whole_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session of more text than the index keeps of one: each record is cut to a share
    (prompts at their end, tool output in its middle), between whole characters."""
    monkeypatch.setattr(site_search, "SESSION_CHARS", 30_000)  # (1,000,000: a big file)
    chain, originals = _Chain(), {}
    for number, (cluster, pad) in enumerate(VARIANTS):
        prompt = _text(cluster, pad, 1500, f"P{number:03d}")
        output = _text(cluster, pad, 1000, f"X{number:03d}")
        chain.prompt(prompt)
        chain.message(
            role="bashExecution", command=f"S{number:03d}", output=output, exitCode=0,
            cancelled=False, truncated=False,
        )  # fmt: skip
        originals[prompt[:4]], originals[output[:4]] = _nfc(prompt), _nfc(output)
    records, cut = session_records(load_session(chain.write(tmp_path / "s.jsonl")))
    assert cut
    shortened, cuts = 0, _Cuts()
    for _, kind, text in records:
        if kind == "c":
            continue
        original = originals[text[:4]]
        if kind == "o":
            head, tail = text.split(" … ")
            cuts.head("tool output's head", original, head)
            cuts.tail("tool output's tail", original, tail)
            shortened += len(text) < OUTPUT_HEAD + OUTPUT_TAIL
        else:
            cuts.cut("prompt", original, text)
            shortened += 1
    cuts.check()
    assert shortened == 2 * len(VARIANTS)  # (every prompt and output was cut to its share)


def test_a_damaged_value_quoted_in_a_diagnostic_keeps_whole_characters(tmp_path: Path) -> None:
    """The loader's diagnostics quote a value cut short (an unknown entry type here)."""
    chain, kinds = _Chain(), []
    for cluster, pad in VARIANTS:
        kinds.append(_text(cluster, pad, 40))
        chain.add(kinds[-1])
    session = load_session(chain.write(tmp_path / "s.jsonl"))
    said = [d.message for d in session.diagnostics if d.kind == "unknown-type"]
    assert len(said) == len(kinds)
    for kind, message in zip(kinds, said, strict=True):
        quoted = message.removeprefix("unknown entry type ")
        _assert_cut(kind, ast.literal_eval(quoted))


def test_a_wrong_pick_answer_is_quoted_in_whole_characters(tmp_path: Path) -> None:
    """`--pick` quotes a long answer that is no session number, cut."""
    sessions = tmp_path / "sessions" / "--p--"
    sessions.mkdir(parents=True)
    chain = _Chain()
    chain.prompt("hello")
    chain.write(sessions / "2025-06-01T10-00-00-000Z_s68-cuts.jsonl")
    for cluster, pad in VARIANTS:
        answer = _text(cluster, pad, 20)
        result = CliRunner().invoke(
            cli,
            ["export", "--pick", "--sessions-dir", str(tmp_path / "sessions")],
            input=answer + "\n",
            catch_exceptions=False,
        )
        assert result.exit_code == 1, result.output
        found = re.search(r"--pick: ('.*') is not a session number", result.stderr)
        assert found, result.stderr
        _assert_cut(answer, ast.literal_eval(found.group(1)))


def test_a_turn_summary_names_its_tool_in_whole_characters(tmp_path: Path) -> None:
    """The page's "Turn: … tool call (name…)" line under a prompt."""
    chain, names = _Chain(), []
    for cluster, pad in VARIANTS:
        names.append(_text(cluster, pad, 32))
        chain.prompt("go")
        chain.tool_turn(names[-1], {}, "ok")
        chain.reply([{"type": "text", "text": "done"}])
    page = tmp_path / "page.html"
    source = chain.write(tmp_path / "s.jsonl")
    result = CliRunner().invoke(cli, ["export", str(source), "-o", str(page), "-j", "1"])
    assert result.exit_code == 0, result.output
    footers = re.findall(r"<footer>Turn: [^<]*? tool call \(([^<]*)\) · ", page.read_text("utf-8"))
    assert len(footers) == len(names)
    for name, shown in zip(names, footers, strict=True):
        _assert_cut(name, shown)


def _agent_context(path: Path, prompt: str, description: str, kind: str) -> Path:
    tool = {
        "name": "look",
        "description": description,
        "parameters": {"type": "object", "properties": {"at": {"type": kind}}},
    }
    data = {"systemPrompt": prompt, "tools": [tool], "activeTools": ["look"]}
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_the_agent_context_is_cut_between_whole_characters(tmp_path: Path) -> None:
    """The folded prompt's preview, the prompt and descriptions at their caps, and a
    parameter's type as said."""
    cuts = _Cuts()
    for cluster, pad in VARIANTS:
        prompt = _text(cluster, pad, MAX_PROMPT_CHARS)
        description = _text(cluster, pad, MAX_DESCRIPTION_CHARS)
        kind = _text(cluster, pad, 80)
        path = _agent_context(tmp_path / "context.json", prompt, description, kind)
        context = read_agent_context(str(path), lambda _note: None)
        assert context is not None
        cuts.cut("the prompt's preview", prompt, context.preview)
        assert len(context.preview) <= PREVIEW_CHARS
        shown = context.capped()
        cuts.head("the prompt at its cap", prompt, shown.system_prompt)
        assert len(shown.system_prompt) <= MAX_PROMPT_CHARS
        cuts.head("a description at its cap", description, shown.tools[0].description)
        assert len(shown.tools[0].description) <= MAX_DESCRIPTION_CHARS
        cuts.head("a parameter's type", kind, shown.tools[0].params[0].type)
    cuts.check()


def test_the_page_previews_the_agents_prompt_in_whole_characters(tmp_path: Path) -> None:
    """The preview as `export --agent-context` shows it on the page."""
    source = tmp_path / "s.jsonl"
    chain = _Chain()
    chain.prompt("hello")
    chain.write(source)
    cluster = CLUSTERS["person with a cane, skin tone, facing right"]
    for pad in range(1, 8):
        prompt = _text(cluster, pad, PREVIEW_CHARS)
        context = _agent_context(tmp_path / "context.json", prompt, "looks", "string")
        page = tmp_path / "page.html"
        args = ["export", str(source), "--agent-context", str(context), "-o", str(page)]
        result = CliRunner().invoke(cli, [*args, "-j", "1"])
        assert result.exit_code == 0, result.output
        found = re.search(
            r'<span class="ac-preview" aria-hidden="true">([^<]*)</span>', page.read_text("utf-8")
        )
        assert found
        _assert_cut(prompt, found.group(1))


def _search(pattern: str, source: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(
        cli, ["search", "--json", "-E", pattern, str(source)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_search_snippets_are_cut_between_whole_characters(tmp_path: Path) -> None:
    """`search`'s context each side of a match, and a long match's head and tail."""
    chain, texts = _Chain(), {}
    for number, (cluster, pad) in enumerate(VARIANTS):
        # (search reads text composed, as the site search does: twice as long)
        text = _text(cluster, pad, 160) + f"M{number:03d}M" + _text(cluster, pad, 160)
        texts[chain.prompt(text)] = _nfc(text)
        whole = _text(cluster, pad, 400, f"Q{number:03d}")
        texts[chain.prompt(whole)] = _nfc(whole)
    source = chain.write(tmp_path / "s.jsonl")
    cuts = _Cuts()
    found = _search(r"M\d{3}M", source)
    assert len(found) == len(VARIANTS)
    for item in found:
        text, snippet = texts[item["entry_id"]], item["snippet"]
        match = re.search(r"M\d{3}M", text)
        assert match and snippet[item["start"] : item["end"]] == match.group()
        before, after = snippet[: item["start"]], snippet[item["end"] :]
        assert before.startswith("…") and after.endswith("…"), snippet
        cuts.tail("context before a match", text[: match.start()], before[1:])
        cuts.head("context after a match", text[match.end() :], after[:-1])
    found = _search(r"Q\d{3}z+\S+y+", source)
    assert len(found) == len(VARIANTS)
    for item in found:
        text, snippet = texts[item["entry_id"]], item["snippet"]
        head, tail = snippet.split("…")
        cuts.head("a long match's head", text, head)
        cuts.tail("a long match's tail", text, tail)
    cuts.check()


def test_ordinary_text_is_cut_where_it_was(tmp_path: Path) -> None:
    """Text of single-code-point characters keeps the lengths it kept before."""
    chain = _Chain()
    prompt, output = "p" * 3000 + "!", "o" * 2000 + "!"
    chain.prompt(prompt)
    chain.tool_turn("bash", {"command": "c" * 400}, output)
    chain.prompt("a" * 100 + "MATCH" + "b" * 100)
    source = chain.write(tmp_path / "s.jsonl")
    records, _ = session_records(load_session(source))
    texts = [text for _, _, text in records]
    assert texts[0] == prompt[: TEXT_CHARS - 1] + "…"
    assert texts[1] == ("bash " + "c" * 400)[: CALL_CHARS - 1] + "…"
    assert texts[2] == f"{output[:OUTPUT_HEAD]} … {output[-OUTPUT_TAIL:]}"
    (found,) = _search("MATCH", source)
    assert found["snippet"] == "…" + "a" * 60 + "MATCH" + "b" * 60 + "…"


def test_the_agent_context_warning_says_where_a_cluster_straddling_the_cap_cut_it(
    tmp_path: Path,
) -> None:
    """A cluster across the system prompt's cap (a letter and 300,000 accents) is kept
    whole or not at all, so the prompt shown is shorter than the cap: the warning said
    "cut at 262,144" though one character was kept (review)."""
    prompt = "ab" + "\u0301" * 300_000
    path = _agent_context(tmp_path / "context.json", prompt, "d", "string")
    notes: list[str] = []
    context = read_agent_context(str(path), notes.append)
    assert context is not None
    assert context.capped().system_prompt == "a"
    said = "the system prompt is cut at 1 of its 300,002 characters"
    assert [note for note in context.left_out if "system prompt" in note] == [said]
    assert notes == [f"--agent-context: {said}"]
