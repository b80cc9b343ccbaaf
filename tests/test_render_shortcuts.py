"""The export's shortcuts never change what a page says: the embedded copy of an unchanged
file is the file itself, caches tolerate anything, and a plain export skips the detectors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import FIXTURES_DIR, REPO

import exporter.render.markup as markup
from exporter.jsonl_out import read_source_bytes, session_to_jsonl
from exporter.loader import load_session, parse_session_bytes
from exporter.redact import RedactionPolicy, apply_policy
from exporter.render import render_session
from exporter.render.template_cache import QuietBytecodeCache, template_cache
from exporter.usage import turn_usage
from tests.browser_util import embedded_jsonl

GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2025-01-01T00:00:00Z",
          "cwd": "/work/proj"}  # fmt: skip


def user(text: str) -> dict[str, object]:
    message = {"role": "user", "content": text, "timestamp": 1735689601000}
    return {"type": "message", "id": "m1", "parentId": None,
            "timestamp": "2025-01-01T00:00:01Z", "message": message}  # fmt: skip


def embedded_bytes(html: str) -> bytes:
    (blob,) = embedded_jsonl(html)
    return blob


def copy_fixture(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copyfile(FIXTURES_DIR / name, target)
    return target


def test_an_unchanged_v3_file_is_embedded_byte_for_byte(tmp_path: Path) -> None:
    path = copy_fixture(tmp_path, "pi-branched-2.jsonl")
    session = load_session(path)
    assert session.source_stamp == (path.stat().st_size, path.stat().st_mtime_ns)
    data = embedded_bytes(render_session(session))
    assert data == path.read_bytes()
    assert data != session_to_jsonl(session).encode("utf-8")  # Pi's bytes, not our re-encoding
    copy = parse_session_bytes(data)
    assert [(e.id, e.parent_id) for e in copy.entries] == [
        (e.id, e.parent_id) for e in session.entries
    ]


def test_a_file_appended_to_after_loading_embeds_the_bytes_read(tmp_path: Path) -> None:
    path = copy_fixture(tmp_path, "pi-branched-1.jsonl")
    data = path.read_bytes()
    session = load_session(path)
    with path.open("ab") as handle:  # Pi appended a turn while we were rendering
        handle.write(b'{"type":"label","id":"zz","parentId":null,"targetId":"x","label":"y"}\n')
    assert read_source_bytes(session) == data  # its first bytes: the ones read
    assert embedded_bytes(render_session(session)) == data


def test_same_size_rewrite_is_caught_by_the_mtime(tmp_path: Path) -> None:
    path = copy_fixture(tmp_path, "pi-branched-1.jsonl")
    session = load_session(path)
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"user"', b'"USER"', 1))
    os.utime(path, ns=(session.source_stamp[1] + 5_000_000_000,) * 2)  # type: ignore[index]
    assert read_source_bytes(session) is None


@pytest.mark.parametrize(
    "name", ["pi-v1-before-compaction.jsonl", "every-entry-type.jsonl", "pi-branched-4.jsonl"]
)
def test_migrated_or_repaired_files_embed_the_file_as_read(tmp_path: Path, name: str) -> None:
    """A legacy or repaired file is downloaded as it is: it loads to the same tree again,
    and nothing a re-serialisation would change or drop is lost."""
    path = copy_fixture(tmp_path, name)
    session = load_session(path)
    data = embedded_bytes(render_session(session))
    assert data == path.read_bytes()
    copy = parse_session_bytes(data, path=str(path))
    assert copy.active_path == session.active_path


def test_a_damaged_file_is_embedded_with_its_damaged_lines(
    write_session: Callable[..., Path],
) -> None:
    """The page lists damaged lines; its download once left them out without a word."""
    path = write_session([HEADER, user("hi"), '{"broken": ', '{"type":"message","id":"m2"}'])
    session = load_session(path)
    assert session.damaged
    data = embedded_bytes(render_session(session))
    assert data == path.read_bytes()
    assert b'{"broken": ' in data and data != session_to_jsonl(session).encode("utf-8")


def test_bytes_parsed_in_memory_are_embedded_as_given() -> None:
    """Site pages parse the bytes they hashed: their download is those bytes, not Python's
    re-encoding of them (0.00003 would come back as 3e-05)."""
    data = (FIXTURES_DIR / "pi-branched-1.jsonl").read_bytes()
    session = parse_session_bytes(data)
    assert embedded_bytes(render_session(session)) == data


def test_a_redacted_copy_never_embeds_the_original_file(write_session: Callable[..., Path]) -> None:
    path = write_session([HEADER, user(f"my token is {GHP}")])
    session = load_session(path)
    assert session.source_stamp is not None  # the original would qualify...
    redacted, _ = apply_policy(session, RedactionPolicy(env_secrets=False))
    assert redacted.source_stamp is None  # ...its redacted copy does not
    html = render_session(redacted)
    assert GHP not in html and GHP.encode() not in embedded_bytes(html)


def test_unknown_code_languages_never_trigger_a_plugin_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pygments.lexers

    def scan() -> None:
        raise AssertionError("plugin entry points scanned")

    monkeypatch.setattr(pygments.lexers, "find_plugin_lexers", scan)
    markup.lexer_for.cache_clear()
    try:
        assert markup.lexer_for("no-such-language-zz") is None
        assert markup.lexer_for("TypeScript") is not None
        html = markup.markdown("```weird-lang\nx = 1\n```")
        assert "x = 1" in html
    finally:
        markup.lexer_for.cache_clear()


def test_template_cache_lives_under_xdg_cache_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cache = template_cache()
    assert isinstance(cache, QuietBytecodeCache)
    assert Path(cache.directory) == tmp_path / "cache" / "pi-session-export" / "templates"
    monkeypatch.setenv("PI_SESSION_NO_TEMPLATE_CACHE", "1")
    assert template_cache() is None


def test_a_template_cache_others_may_write_in_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache is unpickled: a folder anyone may write in (a shared cache home) let them run
    code in the next export. Such a folder, or one under it, is left unused; and a HOME that
    does not exist gets no tree of folders made under it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "pi-session-export" / "templates"
    folder.mkdir(parents=True)
    for opened in (folder, folder.parent):
        opened.chmod(0o777)
        assert template_cache() is None, opened
        opened.chmod(0o700)
    assert isinstance(template_cache(), QuietBytecodeCache)
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "no-such-home"))
    assert template_cache() is None
    assert not (tmp_path / "no-such-home").exists()


def test_the_template_cache_is_used_under_umask_002(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under umask 002 (Debian's, Ubuntu's and Fedora's default for a user with a private
    group) the cache's parent folder was made group-writable, so the cache was never used and
    nothing said so: every export compiled the templates again (code review 2026-12-01)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    old = os.umask(0o002)
    try:
        assert isinstance(template_cache(), QuietBytecodeCache)
    finally:
        os.umask(old)
    parent = tmp_path / "cache" / "pi-session-export"
    assert parent.stat().st_mode & 0o777 == 0o700
    parent.chmod(0o775)  # made so before (an older version, the publish caches)
    assert isinstance(template_cache(), QuietBytecodeCache)
    assert parent.stat().st_mode & 0o777 == 0o755


def run_export(tmp_path: Path, env: dict[str, str], out: str = "page.html") -> str:
    result = subprocess.run(
        [sys.executable, "-m", "exporter", "export", "--demo", "-o", str(tmp_path / out)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return (tmp_path / out).read_text(encoding="utf-8")


def test_pages_are_the_same_with_a_cold_warm_broken_or_unwritable_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {"XDG_CACHE_HOME": str(cache)}
    cold = run_export(tmp_path, env, "cold.html")
    compiled = list((cache / "pi-session-export" / "templates").iterdir())
    assert compiled, "the cache was not written"
    assert run_export(tmp_path, env, "warm.html") == cold
    for entry in compiled:  # garbage in every cache file
        entry.write_bytes(b"\x00not bytecode")
    assert run_export(tmp_path, env, "broken.html") == cold
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be", encoding="utf-8")
    assert run_export(tmp_path, {"XDG_CACHE_HOME": str(blocked)}, "nocache.html") == cold


def test_a_plain_export_does_not_load_the_secret_detectors(tmp_path: Path) -> None:
    """Nor the publishing and site modules: each is import time on every export."""
    unwanted = ["exporter.detectors", "exporter.publish.errors", "exporter.site_manifest"]
    code = (
        "import sys\n"
        "from exporter.cli import main\n"
        f"sys.argv = ['pi-session', 'export', '--demo', '-o', {str(tmp_path / 'p.html')!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"loaded = [m for m in {unwanted!r} if m in sys.modules]\n"
        "print(loaded or 'clean', file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert result.stderr.strip().endswith("clean"), result.stderr
    assert (tmp_path / "p.html").stat().st_size > 10_000


def test_turn_usage_is_parsed_once_per_entry() -> None:
    session = load_session(FIXTURES_DIR / "pi-branched-1.jsonl")
    turn = next(e for e in session.iter_messages() if e.role == "assistant")
    assert turn_usage(turn) is turn_usage(turn)
    assert turn.role_cache == "assistant"


def _strings(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)


def test_markdown_without_the_html_rules_renders_exactly_as_with_them() -> None:
    """The two raw-HTML rules are dropped for speed: every string of every fixture and of
    the XSS corpus must render as markdown-it does with them (html off either way)."""
    from markdown_it import MarkdownIt

    from tests.xss_corpus import build_corpus

    reference = markup._markdown.__wrapped__()  # a fresh instance, then put the rules back
    reference.enable(["html_block", "html_inline"])
    assert isinstance(reference, MarkdownIt)
    lines = build_corpus().decode("utf-8", "replace").splitlines()
    for path in sorted(FIXTURES_DIR.glob("*.jsonl")):
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    texts = [
        "<script>alert(1)</script>", "a <b>bold</b>", "<div>\n\n*x*\n\n</div>", "<!-- c -->",
        "<?php x ?>", "<![CDATA[x]]>", "<a href='javascript:x'>y</a>", "<http://a.b> <x@y.z>",
        "`<code>`", "<pre>\nx\n</pre>", "&lt;x&gt; &amp; &#x41;", "<img src=x onerror=alert(1)>",
    ]  # fmt: skip
    for line in lines:
        try:
            _strings(json.loads(line), texts)
        except ValueError:
            texts.append(line)
    ours = markup._markdown()
    texts = list(dict.fromkeys(texts))  # each once (a fixture repeats its outputs)
    differ = [t for t in texts if ours.render(t) != reference.render(t)]
    assert len(texts) > 8_000 and differ == []


def test_the_page_css_loses_its_spaces_but_never_inside_a_string() -> None:
    """The spaces after ":" and "," were kept (1.1 KB of every page); a quoted ``content``
    keeps them."""
    from exporter.render.assets import minify_css

    css = (
        '/* note: a, b */\n.tree a::before { content: "fork: " / ""; color: rgb(1, 2, 3); }\n'
        "@media (max-width: 600px) { :is(th, td):last-child { margin: 0 auto; } }\n"
        ".x::after { content: 'it\\'s: here, there'; font-family: a, \"b, c\"; }"
    )
    assert minify_css(css) == (
        '.tree a::before{content:"fork: " / "";color:rgb(1,2,3)}'
        "@media (max-width:600px){:is(th,td):last-child{margin:0 auto}}"
        ".x::after{content:'it\\'s: here, there';font-family:a,\"b, c\"}"
    )
    # line breaks and the spaces around combinators go too, never inside a string
    css = '#a:checked ~ .b\n  .c > d::after { content: " > ~ "; }'
    assert minify_css(css) == '#a:checked~.b .c>d::after{content:" > ~ "}'
