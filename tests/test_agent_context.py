"""`--agent-context FILE`: the system prompt and tools Pi keeps in memory (its own interactive
/export shows them), passed by the Pi extension, shown folded after the page's header, in
the Markdown, and redacted with the session by `share` and `export --redact`.

A file that cannot be used is a warning and the page is what it was without it, byte for
byte (the benchmarks compare pages made without a context)."""

from __future__ import annotations

import html as html_module
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.render import RenderOptions, render_session
from tests.browser_util import PageServer, Viewer, embedded_jsonl, fixture_path, load_fixture
from tests.xss_corpus import PAYLOADS

pytest_plugins = ["tests.browser_util"]

FIXTURE = "pi-branched-1.jsonl"
PLANTED = "ghp_" + "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0Ja2Pq4"  # ghp_ + 36 letters and digits
PROMPT_LINES = [f"Rule {n}: keep the diff small." for n in range(1, 15)]
PROMPT = "\n".join(
    [
        "You are an expert coding assistant. <b>Not bold</b> & not *emphasis*.",
        *PROMPT_LINES,
        f"Deploy with {PLANTED} from /home/carol/work/deploy.sh",
        "The last line of the prompt.",
    ]
)
TOOLS = [
    {
        "name": "bash",
        "description": "Execute a bash command.\nOutput is cut at 2000 lines.",
        "parameters": {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "Bash command to execute"},
                "timeout": {"type": "number", "description": "Timeout in seconds"},
            },
            "required": ["command"],
        },
    },
    {
        "name": "read",
        "description": f"Read a file (as /home/carol/ does, token {PLANTED})",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path to the file"},
                "limit": {"type": ["integer", "null"]},
                "mode": {"enum": ["text", "bytes"]},
                "paths": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["path"],
        },
    },
    {"name": "grep", "description": "Search file contents", "parameters": {"type": "object"}},
]
CONTEXT = {"systemPrompt": PROMPT, "tools": TOOLS, "activeTools": ["bash", "read"]}
ALLOWED_TAGS = {"section", "details", "summary", "b", "span", "pre", "ul", "li", "code", "div", "p"}
ALLOWED_ATTRIBUTES = {"class", "aria-label", "aria-hidden"}


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder, and a home and user name the redaction hides (carol's)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", "/home/carol")
    monkeypatch.setenv("USER", "carol")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for name in ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "PI_SHARE_VIEWER_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no `gh` to ask for a token
    (tmp_path / "empty-bin").mkdir()
    return tmp_path


def write_context(folder: Path, data: Any, name: str = "context.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def export(folder: Path, *args: str, name: str = "page.html") -> tuple[Any, str]:
    """Export the fixture to ``folder/name``; the result and the page's text."""
    out = folder / name
    jobs = () if name.endswith(".md") else ("-j", "1")
    result = run("export", str(fixture_path(FIXTURE)), "-o", str(out), *jobs, *args)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return result, out.read_text(encoding="utf-8")


def card(page: str) -> str:
    """The cards' markup, from the section's start to its end."""
    start = page.index('<section class="agent-context"')
    return page[start : page.index("</section>", start) + len("</section>")]


def warnings(result: Any) -> list[str]:
    return [line for line in result.stderr.splitlines() if "warning:" in line]


# --- the page -------------------------------------------------------------------------------


def test_the_page_shows_the_prompt_folded_and_every_tool(in_tmp: Path) -> None:
    context = write_context(in_tmp, CONTEXT)
    result, page = export(in_tmp, "--agent-context", str(context))
    # the token planted in the prompt is in clear on a page made without --redact: said
    assert [w for w in warnings(result) if "in clear (github-token)" not in w] == []
    assert len(warnings(result)) == 1
    section = card(page)
    # after the header card, before the usage tables
    assert page.index("</header>") < page.index(section) < page.index('<section id="usage"')
    lines = PROMPT.count("\n") + 1
    summary = (
        '<details class="ac-prompt"><summary><b>System prompt</b> <span class="muted">'
        f"({lines} lines, {len(PROMPT):,} characters)</span>"
    )
    assert summary in section  # folded: no `open`
    preview = re.search(r'<span class="ac-preview" aria-hidden="true">(.*?)</span>', section, re.S)
    assert preview is not None
    assert html_module.unescape(preview.group(1)) == "\n".join(PROMPT.split("\n")[:10])
    assert f"… {lines - 10} more lines: open to read it all" in section
    full = re.search(r"</summary><pre>(.*?)</pre></details>", section, re.S)
    assert full is not None and html_module.unescape(full.group(1)) == PROMPT  # whole, escaped
    assert "&lt;b&gt;Not bold&lt;/b&gt; &amp; not *emphasis*" in section  # no Markdown, no markup
    # the tools: how many and how many active; the inactive one marked; parameters listed
    assert '<b>Tools</b> <span class="muted">(3, 2 active)</span>' in section
    assert '<li class="ac-tool inactive"><details><summary><code>grep</code> ' in section
    assert '<span class="ac-tag">inactive</span>' in section
    assert section.count('<li class="ac-tool">') == 2
    assert (
        '<li><code>command</code> <span class="ac-type">string</span> <span class="ac-req">'
        'required</span><span class="ac-pdesc">Bash command to execute</span></li>'
    ) in section
    assert '<code>timeout</code> <span class="ac-type">number</span> <span class="ac-opt">' in (
        section
    )
    assert '<code>limit</code> <span class="ac-type">integer | null</span>' in section
    assert '<code>mode</code> <span class="ac-type">enum</span>' in section
    assert '<code>paths</code> <span class="ac-type">string[]</span>' in section
    assert "<p>Execute a bash command.\nOutput is cut at 2000 lines.</p>" in section
    assert '<p class="muted">No parameters.</p>' in section  # grep's schema names none
    # a plain export shows it as it is; the download stays the session alone
    assert PLANTED in section and "/home/carol/work" in section
    (jsonl,) = embedded_jsonl(page)
    assert b"expert coding assistant" not in jsonl and PLANTED.encode() not in jsonl


def test_its_style_is_allowed_by_the_page_policy_only_where_it_is(in_tmp: Path) -> None:
    context = write_context(in_tmp, CONTEXT)
    _, page = export(in_tmp, "--agent-context", str(context))
    _, plain = export(in_tmp, name="plain.html")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    plain_policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', plain)
    assert policy and plain_policy
    styles = re.search(r"style-src ([^;]+);", html_module.unescape(policy.group(1)))
    plain_styles = re.search(r"style-src ([^;]+);", html_module.unescape(plain_policy.group(1)))
    assert styles and plain_styles
    assert len(styles.group(1).split()) == len(plain_styles.group(1).split()) + 1
    assert ".agent-context{" in page and ".agent-context{" not in plain
    assert "ac-prompt" not in plain and "agent-context" not in plain


@pytest.mark.parametrize(
    "content",
    [
        None,  # no file at all
        "folder",
        b"\xff\xfe not utf-8",
        b'{"systemPrompt": "cut',
        b"[1, 2]",
        b'{"systemPrompt": 42}',
        b'{"tools": {"name": "bash"}}',
        b"[" * 100_000 + b"]" * 100_000,  # nested past the parser's depth
        b"{}",  # nothing to show: no card and no warning
        b'{"systemPrompt": "", "tools": []}',
    ],
    ids=[
        "missing",
        "folder",
        "not-utf8",
        "cut-json",
        "list",
        "prompt-number",
        "tools-object",
        "deep",
        "empty",
        "empty-values",
    ],
)
def test_an_unusable_file_is_a_warning_and_the_page_stays_as_it_was(
    in_tmp: Path, content: bytes | str | None
) -> None:
    path = in_tmp / "context.json"
    if content == "folder":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    result, page = export(in_tmp, "--agent-context", str(path))
    _, plain = export(in_tmp, name="plain.html")
    assert page == plain  # byte for byte: the context changed nothing
    said = warnings(result)
    if content in (b"{}", b'{"systemPrompt": "", "tools": []}'):
        assert said == []
    else:
        assert len(said) == 1, result.stderr
        assert said[0].startswith(f"pi-session: warning: --agent-context {path}: ")
        assert said[0].endswith("the page is made without the system prompt and tools")


def test_wrong_tools_are_left_out_and_said(in_tmp: Path) -> None:
    tools = [
        1,
        {"name": 5},
        {"description": "no name"},
        {"name": "ok", "parameters": "x"},
        {"name": "odd", "parameters": {"properties": {"a": 3, "b": {"type": 7}}, "required": "a"}},
    ]
    context = write_context(in_tmp, {"systemPrompt": "Short.", "tools": tools})
    result, page = export(in_tmp, "--agent-context", str(context))
    assert warnings(result) == [
        "pi-session: warning: --agent-context: 3 tools without a name left out"
    ]
    section = card(page)
    assert "<code>ok</code>" in section and "<code>odd</code>" in section
    assert '<code>a</code> <span class="ac-type">any</span> <span class="ac-opt">' in section
    assert '<b>Tools</b> <span class="muted">(2)</span>' in section  # active ones not said
    assert "Left out: 3 tools without a name left out." in section
    # a one-line prompt: no "more lines" hint
    assert "(1 line, 6 characters)" in section and "more line" not in section


def test_the_caps_say_what_they_left_out(in_tmp: Path) -> None:
    from exporter.agent_context import MAX_PROMPT_CHARS, MAX_TOOLS

    prompt = "x" * (MAX_PROMPT_CHARS + 1000)
    tools = [{"name": f"tool{n}", "description": "d"} for n in range(MAX_TOOLS + 50)]
    context = write_context(in_tmp, {"systemPrompt": prompt, "tools": tools})
    result, page = export(in_tmp, "--agent-context", str(context))
    said = warnings(result)
    assert said == [
        f"pi-session: warning: --agent-context: the system prompt is cut at {MAX_PROMPT_CHARS:,} "
        f"of its {len(prompt):,} characters",
        f"pi-session: warning: --agent-context: 50 of {MAX_TOOLS + 50} tools left out (at most "
        f"{MAX_TOOLS})",
    ]
    section = card(page)
    assert f"(1 line, {MAX_PROMPT_CHARS:,} characters)" in section
    # the folded preview of one long line is short: the whole is in the <pre> only
    preview = re.search(r'<span class="ac-preview" aria-hidden="true">(.*?)</span>', section)
    assert preview is not None and len(preview.group(1)) == 2_000
    assert '<span class="ac-more">Open to read it all</span>' in section
    assert section.count('<li class="ac-tool">') == MAX_TOOLS
    assert "Left out: the system prompt is cut at" in section


def test_hostile_text_never_becomes_markup(in_tmp: Path) -> None:
    hostile = "\n".join(PAYLOADS)
    tools = [
        {
            "name": payload,
            "description": payload,
            "parameters": {
                "properties": {payload: {"type": payload, "description": payload}},
                "required": [payload],
            },
        }
        for payload in PAYLOADS
    ]
    context = write_context(
        in_tmp, {"systemPrompt": hostile, "tools": tools, "activeTools": PAYLOADS[:3]}
    )
    _, page = export(in_tmp, "--agent-context", str(context))
    section = card(page)
    tags = set(re.findall(r"<([a-zA-Z][\w-]*)", section))
    assert tags <= ALLOWED_TAGS, tags - ALLOWED_TAGS
    attributes = set(re.findall(r"\s([a-zA-Z-]+)=\"", section))
    assert attributes <= ALLOWED_ATTRIBUTES, attributes - ALLOWED_ATTRIBUTES
    assert "{{7*7}}" in section  # shown as text, not evaluated


def test_markdown_has_the_prompt_fenced_and_the_tools(in_tmp: Path) -> None:
    prompt = "Use ````four```` backticks\n# Not a heading\n<b>not html</b>"
    context = write_context(in_tmp, {**CONTEXT, "systemPrompt": prompt})
    result, document = export(
        in_tmp, "--format", "md", "--agent-context", str(context), name="doc.md"
    )
    assert [w for w in warnings(result) if "in clear (github-token)" not in w] == []
    part = document[document.index("## System prompt") : document.index("## Transcript")]
    assert f"*3 lines, {len(prompt)} characters.*" in part
    assert f"`````\n{prompt}\n`````" in part  # a fence longer than the run inside
    assert "## Tools\n\n*3 tools, 2 active.*" in part
    assert "- `grep` *(inactive)*" in part
    assert "  - `command` (string, required): Bash command to execute" in part
    assert "  - `timeout` (number, optional): Timeout in seconds" in part
    _, plain = export(in_tmp, "--format", "md", name="plain.md")
    assert "## System prompt" not in plain and "## Tools" not in plain


# --- redaction ------------------------------------------------------------------------------


def test_export_redact_redacts_the_prompt_and_the_tools(in_tmp: Path) -> None:
    context = write_context(in_tmp, CONTEXT)
    result, page = export(
        in_tmp, "--redact", "--agent-context", str(context), "--secret", "keep the diff"
    )
    section = card(page)
    assert PLANTED not in page
    assert "/home/carol" not in section and "carol" not in section
    assert "from ~/work/deploy.sh" in section  # the home folder, as in the session
    assert "[REDACTED:github-token:" in section
    assert "keep the diff" not in section and "[REDACTED:literal-secret:" in section
    # counted with the session's: on stderr and in the page's note
    assert "github-token" in result.stderr
    note = re.search(r"<dt>Redaction</dt><dd>([^<]*)</dd>", page)
    assert note is not None and "github-token" in note.group(1)
    # the Markdown too
    result, document = export(
        in_tmp, "--redact", "--format", "md", "--agent-context", str(context), name="doc.md"
    )
    assert PLANTED not in document and "/home/carol" not in document


def test_a_secret_across_a_cap_is_redacted_whole(in_tmp: Path) -> None:
    """The caps cut the texts when the file was read, before redaction: a token that
    crossed one lost its tail, no longer looked like a token, and its first 20 characters
    were published (bug hunt 2026-12-05). Redaction now reads the whole texts; the cut
    comes when they are shown."""
    from exporter.agent_context import MAX_DESCRIPTION_CHARS, MAX_PROMPT_CHARS

    def across(cap: int) -> str:  # the token starts 20 characters before the cap
        return "x " * ((cap - 21) // 2) + "x" * ((cap - 21) % 2) + " " + PLANTED + " end"

    head = PLANTED[:20]
    data = {
        "systemPrompt": across(MAX_PROMPT_CHARS),
        "tools": [
            {
                "name": "deploy",
                "description": across(MAX_DESCRIPTION_CHARS),
                "parameters": {
                    "properties": {
                        "target": {"type": "string", "description": across(MAX_DESCRIPTION_CHARS)}
                    }
                },
            }
        ],
    }
    assert data["systemPrompt"].index(PLANTED) == MAX_PROMPT_CHARS - 20
    context = write_context(in_tmp, data)
    result, page = export(in_tmp, "--redact", "--agent-context", str(context))
    section = card(page)
    assert head not in page and "github-token" in result.stderr
    # the placeholder is what the cap cuts now, 20 characters in, in all three texts
    assert section.count("[REDACTED:github-tok") == 3
    assert f"({1:,} line, {MAX_PROMPT_CHARS:,} characters)" in section  # still cut when shown
    _, document = export(
        in_tmp, "--redact", "--format", "md", "--agent-context", str(context), name="doc.md"
    )
    assert head not in document and document.count("[REDACTED:github-tok") == 3
    # without --redact the texts are shown as before: cut at their caps, the token's head
    _, plain = export(in_tmp, "--agent-context", str(context), name="plain.html")
    assert card(plain).count(html_module.escape(head)) == 3


def _redacted_with_token_in_session(in_tmp: Path, token: str) -> tuple[Any, str]:
    """`export --redact` of the fixture with ``token`` added to its first tool result, and
    the usual context: the result and the page."""
    session = in_tmp / "planted.jsonl"
    lines = fixture_path(FIXTURE).read_text(encoding="utf-8").split("\n")
    for index, line in enumerate(lines):
        if '"role":"toolResult"' in line:
            record = json.loads(line)
            record["message"]["content"][0]["text"] += f"\ntoken {token}\n"
            lines[index] = json.dumps(record)
            break
    session.write_text("\n".join(lines), encoding="utf-8")
    context = write_context(in_tmp, CONTEXT)
    out = in_tmp / "page.html"
    result = run(
        "export", str(session), "-o", str(out), "--redact", "--agent-context", str(context)
    )
    assert result.exit_code == 0, result.output
    return result, out.read_text(encoding="utf-8")


def test_placeholders_go_on_from_the_session_s(in_tmp: Path) -> None:
    """A token in the session and another in the prompt get different numbers."""
    other = "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"
    result, page = _redacted_with_token_in_session(in_tmp, other)
    assert "[REDACTED:github-token:1]" in page.replace(card(page), "")
    assert "[REDACTED:github-token:2]" in card(page)
    assert "[REDACTED:github-token:1]" not in card(page)
    # hits are counted: the prompt and a tool's description hold the same token
    assert "3 secrets in 2 entries (github-token 3)" in result.stderr


def test_a_secret_in_the_session_and_the_prompt_has_one_placeholder(in_tmp: Path) -> None:
    """The prompt's redactor numbered on from the session's but did not know its values: one
    token was [REDACTED:github-token:1] in the transcript and :2 on the card (review 166)."""
    _, page = _redacted_with_token_in_session(in_tmp, PLANTED)
    assert PLANTED not in page
    assert "[REDACTED:github-token:1]" in page.replace(card(page), "")
    assert "[REDACTED:github-token:1]" in card(page)
    assert "[REDACTED:github-token:2]" not in page


def test_share_dry_run_redacts_the_prompt_by_default(in_tmp: Path) -> None:
    context = write_context(in_tmp, CONTEXT)
    result = run(
        "share",
        str(fixture_path(FIXTURE)),
        "--dry-run",
        "--with-markdown",
        "--agent-context",
        str(context),
    )
    assert result.exit_code == 0, result.output
    written = [Path(line) for line in result.stdout.splitlines() if line.endswith((".html", ".md"))]
    assert {p.suffix for p in written} == {".html", ".md"}
    for path in written:
        text = path.read_text(encoding="utf-8")
        assert "expert coding assistant" in text, path
        assert PLANTED not in text, path
        assert "/home/carol" not in text, path
        assert "[REDACTED:github-token:" in text, path
    # --no-redact shares it as it is (and says that secrets are not looked for)
    plain = run(
        "share",
        str(fixture_path(FIXTURE)),
        "--dry-run",
        "--no-redact",
        "--agent-context",
        str(context),
    )
    assert plain.exit_code == 0, plain.output
    page = next(p for p in written if p.suffix == ".html").read_text(encoding="utf-8")
    assert PLANTED in page


# --- options --------------------------------------------------------------------------------


def test_it_is_for_one_page_and_not_for_delete(in_tmp: Path) -> None:
    context = write_context(in_tmp, CONTEXT)
    site = run("export", "--all", "-o", str(in_tmp / "site"), "--agent-context", str(context))
    assert site.exit_code == 1
    assert (
        site.stderr.strip() == "pi-session: error: --agent-context is one session's: not with --all"
    )
    delete = run("share", "--delete", "abc123", "--agent-context", str(context))
    assert delete.exit_code == 1
    assert "--agent-context is for sharing one" in delete.stderr
    assert "Traceback" not in site.output + delete.output


@pytest.mark.parametrize("command", ["export", "share"])
def test_help_names_the_option(command: str) -> None:
    result = run(command, "--help")
    assert result.exit_code == 0
    assert "--agent-context FILE" in result.output


def test_a_user_option_given_later_wins(in_tmp: Path) -> None:
    """The extension passes its file first; one typed after the command replaces it."""
    first = write_context(in_tmp, {"systemPrompt": "From the extension."}, "first.json")
    second = write_context(in_tmp, {"systemPrompt": "Typed by the user."}, "second.json")
    _, page = export(in_tmp, "--agent-context", str(first), "--agent-context", str(second))
    assert "Typed by the user." in page and "From the extension." not in page


# --- in a browser ---------------------------------------------------------------------------


def _page_with_context(
    folder: Path, theme: str = "auto", context: dict[str, Any] | None = None
) -> str:
    """The fixture's page with a context read the way the CLI reads it."""
    from exporter.agent_context import read_agent_context

    path = write_context(folder, context or CONTEXT)
    parsed = read_agent_context(str(path), pytest.fail)
    options = RenderOptions(theme=theme, agent_context=parsed)
    return render_session(load_fixture(FIXTURE), options)


@pytest.mark.browser
@pytest.mark.parametrize("js", [True, False], ids=["js", "no-js"])
def test_the_card_is_folded_and_opens(
    viewer: Viewer, page_server: PageServer, tmp_path: Path, js: bool
) -> None:
    url = page_server.publish(f"context-{js}.html", _page_with_context(tmp_path))
    page = viewer.open(url, js=js)
    prompt = page.locator("details.ac-prompt")
    assert prompt.evaluate("d => d.open") is False
    assert page.locator("details.ac-prompt .ac-preview").is_visible()
    assert "Rule 9: keep the diff small." in page.locator(".ac-preview").inner_text()
    assert page.locator("details.ac-prompt > pre").is_hidden()
    page.locator("details.ac-prompt > summary").click()
    assert prompt.evaluate("d => d.open") is True
    assert page.locator("details.ac-prompt > pre").is_visible()
    assert "The last line of the prompt." in page.locator("details.ac-prompt > pre").inner_text()
    assert page.locator("details.ac-prompt .ac-preview").is_hidden()
    # the tools: a list, then a tool's parameters
    page.locator("details.ac-tools > summary").click()
    bash = page.locator("li.ac-tool", has=page.locator("code", has_text="bash")).first
    assert bash.locator(".ac-params").is_hidden()
    bash.locator("summary").click()
    assert bash.locator(".ac-params").is_visible()
    assert "Bash command to execute" in bash.locator(".ac-params").inner_text()
    # its own style applied (the page's policy allows it): a card, not bare text
    radius = prompt.evaluate("d => getComputedStyle(d).borderTopLeftRadius")
    assert radius == "10px"
    viewer.assert_clean()


@pytest.mark.browser
def test_paper_prints_the_prompt_once_without_the_card_s_hints(
    viewer: Viewer, page_server: PageServer, tmp_path: Path
) -> None:
    """Printed without a script, the card printed its preview and the whole prompt (the
    first lines twice), and "open to read it all", which paper cannot."""
    url = page_server.publish("context-print.html", _page_with_context(tmp_path))
    page = viewer.open(url, js=False)
    page.emulate_media(media="print")
    shown = page.evaluate(
        """[...document.querySelectorAll('.ac-preview, .ac-more, details.ac-prompt > pre')]
             .map(e => [e.className || e.tagName, getComputedStyle(e).display])"""
    )
    assert [display for _, display in shown if display != "none"] == ["block"], shown
    assert "The last line of the prompt." in page.locator("details.ac-prompt > pre").inner_text()
    viewer.assert_clean()


@pytest.mark.browser
def test_the_card_fits_a_phone_and_takes_the_dark_theme(
    viewer: Viewer, page_server: PageServer, tmp_path: Path
) -> None:
    long_word = "x" * 300  # a long unbroken token must wrap, not widen the page
    context = {**CONTEXT, "systemPrompt": PROMPT + "\n" + long_word}
    context["tools"] = [*TOOLS, {"name": "mcp__" + long_word, "description": long_word}]
    url = page_server.publish("context-dark.html", _page_with_context(tmp_path, "dark", context))
    page = viewer.open(url, viewport={"width": 390, "height": 844})
    for selector in ("details.ac-prompt > summary", "details.ac-tools > summary"):
        page.locator(selector).click()
    page.locator("li.ac-tool").last.locator("summary").click()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px phone"
    box = page.locator("details.ac-prompt").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    background = page.locator("details.ac-prompt").evaluate(
        "d => getComputedStyle(d).backgroundColor"
    )
    assert background == "rgb(27, 30, 37)"  # the dark theme's --card
    viewer.assert_clean()


@pytest.mark.browser
def test_hostile_context_runs_nothing(
    viewer: Viewer, page_server: PageServer, tmp_path: Path
) -> None:
    hostile = "\n".join(PAYLOADS)
    tools = [
        {"name": p, "description": p, "parameters": {"properties": {p: {"type": p}}}}
        for p in PAYLOADS
    ]
    url = page_server.publish(
        "context-hostile.html",
        _page_with_context(tmp_path, context={"systemPrompt": hostile, "tools": tools}),
    )
    page = viewer.open(url)
    page.locator("details.ac-prompt > summary").click()
    page.locator("details.ac-tools > summary").click()
    for summary in page.locator("li.ac-tool summary").all():
        summary.click()
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("window.__cspViolations") == []
    assert PAYLOADS[0] in page.locator("details.ac-prompt > pre").inner_text()
    viewer.assert_clean()
