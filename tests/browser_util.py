"""Shared helpers for the page tests: fixtures, cached renders, a tiny DOM, and Chromium.

Test modules use the pytest fixtures defined here through ``pytest_plugins``:

    pytest_plugins = ["tests.browser_util"]

Everything rendered here is cached for the whole test session: each fixture file is
loaded, rendered and parsed once, whichever module asks first.

(PYTEST_DONT_REWRITE: test modules import this before pytest sees ``pytest_plugins``; the
checks here raise AssertionError with their own messages.)
"""

from __future__ import annotations

import base64
import functools
import gzip
import http.server
import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from exporter.loader import load_session, parse_session_bytes
from exporter.render import RenderOptions, render_session
from exporter.session import Session

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("PI_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


# --- session fixtures (files) ----------------------------------------------------------------


def shared_dir() -> Path:
    """``../shared`` next to the repository, or ``$PI_SHARED_DIR``."""
    return Path(os.environ.get("PI_SHARED_DIR") or REPO.parent / "shared")


EMBEDDED = re.compile(r'id="session-jsonl" href="data:application/gzip;base64,([A-Za-z0-9+/=]*)"')


def embedded_jsonl(html: str | bytes) -> list[bytes]:
    """The session files a page (or several) carries in its footer's download link."""
    text = html.decode("utf-8") if isinstance(html, bytes) else html
    return [gzip.decompress(base64.b64decode(blob)) for blob in EMBEDDED.findall(text)]


def fixture_paths() -> list[Path]:
    return sorted((shared_dir() / "fixtures").glob("*.jsonl"))


FIXTURES = fixture_paths()
FIXTURE_NAMES = [p.name for p in FIXTURES]
BRANCHED = [n for n in FIXTURE_NAMES if n.startswith("pi-branched-")]
V1_FIXTURES = ["pi-large-session.jsonl", "pi-v1-before-compaction.jsonl"]
CORPUS = "xss-corpus.jsonl"  # built by tests/xss_corpus.py, not a file
#: A Claude Code transcript in the shapes its files have (tests/data/claude-code/).
CLAUDE_CODE = "7f3c9a12-4b6e-4d1a-9c3e-2a5b8d0e1f47.jsonl"
CLAUDE_CODE_PATH = REPO / "tests" / "data" / "claude-code" / CLAUDE_CODE
#: A Codex rollout in the shapes its files have (tests/data/codex/).
CODEX = "rollout-2025-12-28T13-18-30-019b64e5-57fa-7463-b644-fba7e456f905.jsonl"
CODEX_PATH = REPO / "tests" / "data" / "codex" / CODEX
ALL_PAGES = [*FIXTURE_NAMES, CORPUS, CLAUDE_CODE, CODEX]


def fixture_path(name: str) -> Path:
    if name == CLAUDE_CODE:
        return CLAUDE_CODE_PATH
    if name == CODEX:
        return CODEX_PATH
    path = shared_dir() / "fixtures" / name
    if not path.is_file():
        pytest.fail(f"session fixture {path} is missing (set PI_SHARED_DIR?)")
    return path


def load_fresh(name: str, leaf_id: str | None = None) -> Session:
    """A newly loaded copy of a fixture (or of the XSS corpus)."""
    if name == CORPUS:
        from tests.xss_corpus import build_corpus

        return parse_session_bytes(build_corpus(), path=CORPUS, leaf_id=leaf_id)
    return load_session(fixture_path(name), leaf_id=leaf_id)


@functools.cache
def load_fixture(name: str) -> Session:
    """A loaded fixture shared by all tests: treat it as read-only (no set_leaf)."""
    return load_fresh(name)


@functools.cache
def render_fixture(name: str, theme: str = "auto", embed: bool = True) -> str:
    return render_session(load_fixture(name), RenderOptions(theme=theme, embed_jsonl=embed))


@functools.cache
def parse_fixture(name: str) -> Page:
    return parse_html(render_fixture(name))


def _json_line(**fields: object) -> str:
    return json.dumps(fields, ensure_ascii=False)


UNICODE_TEXTS = {
    "cjk": "中文字符 日本語のテキスト 한국어 텍스트",
    "emoji": "emoji 👩\u200d👩\u200d👧\u200d👦 🏳️\u200d🌈 🙂 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "rtl": "mixed \u202eRTL override\u202c עברית العربية",
    "combining": "e\u0301 a\u0308 \u0915\u094d\u0937",
    "controls": "bell\x07 escape\x1b[31m red\x1b[0m form\x0cfeed tab\tend",
}


def retry_session(retries: int) -> bytes:
    """A prompt retried at every turn: one abandoned sibling per step of the active path."""
    lines = [
        _json_line(type="session", version=3, id="s", timestamp="2025-01-01T00:00:00Z", cwd="/")
    ]
    parent = None
    for n in range(retries + 1):
        kinds = (("kept", f"u{n}"),) if n == 0 else (("abandoned", f"a{n}"), ("kept", f"u{n}"))
        for kind, entry_id in kinds:
            message = {"role": "user", "content": f"{kind} {n}"}
            stamp = "2025-01-01T00:00:01Z"
            lines.append(
                _json_line(
                    type="message", id=entry_id, parentId=parent, timestamp=stamp, message=message
                )
            )
        parent = f"u{n}"
    return ("\n".join(lines) + "\n").encode("utf-8")


def unicode_session() -> bytes:
    """CJK, emoji, bidi, combining and control characters, and lone surrogates (JSON escapes)."""
    lines = [
        _json_line(
            type="session", version=3, id="uni-😀", timestamp="2025-01-01T00:00:00Z", cwd="/tmp/中"
        ),
        _json_line(
            type="message",
            id="u1-中文",
            parentId=None,
            timestamp="2025-01-01T00:00:01Z",
            message={"role": "user", "content": " / ".join(UNICODE_TEXTS.values())},
        ),
        # a lone surrogate, written as a JSON escape (as JavaScript's JSON.stringify can)
        '{"type":"message","id":"a1-🙂","parentId":"u1-中文","timestamp":"2025-01-01T00:00:02Z",'
        '"message":{"role":"assistant","content":[{"type":"text","text":"lone \\ud83d half '
        'and \\udc00 low"},{"type":"thinking","thinking":"思考 \\ud800"},{"type":"toolCall",'
        '"id":"c1","name":"bash","arguments":{"command":"echo \\ud83d 中"}}],'
        '"provider":"p","model":"m\\ud800"}}',
        _json_line(
            type="message",
            id="r1",
            parentId="a1-🙂",
            timestamp="2025-01-01T00:00:03Z",
            message={
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "bash",
                "content": [{"type": "text", "text": "出力 🙂\n" * 30}],
            },
        ),
        _json_line(
            type="label",
            id="l1",
            parentId="r1",
            targetId="u1-中文",
            label="ラベル 🏷️",
            timestamp="2025-01-01T00:00:04Z",
        ),
    ]
    return ("\n".join(lines) + "\n").encode("utf-8")


# --- a tiny DOM over html.parser -------------------------------------------------------------

VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
     "track", "wbr"}
)  # fmt: skip
RAW_TEXT_TAGS = frozenset({"script", "style"})


@dataclass(eq=False, repr=False)
class Element:
    tag: str
    attrs: dict[str, str | None]
    parent: Element | None
    index: int
    children: list[Element | str] = field(default_factory=list)
    duplicate_attrs: bool = False
    _text: str | None = None

    def __repr__(self) -> str:
        shown = {k: v for k, v in self.attrs.items() if k in ("id", "class", "data-entry-id")}
        return f"<{self.tag} {shown}>"

    @property
    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()

    def has_class(self, name: str) -> bool:
        return name in self.classes

    def get(self, name: str) -> str | None:
        return self.attrs.get(name)

    def ancestors(self) -> Iterator[Element]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def iter(self) -> Iterator[Element]:
        """This element and every descendant element, in document order."""
        stack: list[Element] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed([c for c in node.children if isinstance(c, Element)]))

    def find_all(self, predicate: Callable[[Element], bool]) -> list[Element]:
        return [e for e in self.iter() if predicate(e)]

    @property
    def text(self) -> str:
        """Text content (character references decoded), scripts and styles left out."""
        if self._text is None:
            parts: list[str] = []
            stack: list[Element | str] = [self]
            while stack:
                node = stack.pop()
                if isinstance(node, str):
                    parts.append(node)
                elif node.tag not in RAW_TEXT_TAGS or node is self:
                    stack.extend(reversed(node.children))
            self._text = "".join(parts)
        return self._text

    @property
    def raw_text(self) -> str:
        return "".join(c for c in self.children if isinstance(c, str))


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {}, None, 0)
        self.stack = [self.root]
        self.elements: list[Element] = []
        self.declarations: list[str] = []

    def _new(self, tag: str, attrs: list[tuple[str, str | None]]) -> Element:
        parent = self.stack[-1]
        element = Element(tag, dict(attrs), parent, len(self.elements))
        element.duplicate_attrs = len({k for k, _ in attrs}) != len(attrs)
        parent.children.append(element)
        self.elements.append(element)
        return element

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = self._new(tag, attrs)
        if tag not in VOID_TAGS:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._new(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)

    def handle_decl(self, decl: str) -> None:
        self.declarations.append(decl)


@dataclass(repr=False)
class Page:
    html: str
    root: Element
    elements: list[Element]
    declarations: list[str]
    by_entry: dict[str, list[Element]]
    by_dom_id: dict[str, list[Element]]

    def one(self, predicate: Callable[[Element], bool]) -> Element:
        found = [e for e in self.elements if predicate(e)]
        assert len(found) == 1, f"expected one element, found {len(found)}"
        return found[0]

    def all(self, predicate: Callable[[Element], bool]) -> list[Element]:
        return [e for e in self.elements if predicate(e)]

    def entry(self, entry_id: str) -> Element:
        found = self.by_entry.get(entry_id, [])
        assert len(found) == 1, f"entry {entry_id!r} appears {len(found)} times"
        return found[0]

    def branches(self) -> list[Element]:
        return [e for e in self.elements if e.tag == "details" and e.has_class("branch")]


def parse_html(html: str) -> Page:
    builder = _Builder()
    builder.feed(html)
    builder.close()
    by_entry: dict[str, list[Element]] = {}
    by_dom_id: dict[str, list[Element]] = {}
    for element in builder.elements:
        entry_id = element.attrs.get("data-entry-id")
        if entry_id is not None:
            by_entry.setdefault(entry_id, []).append(element)
        dom_id = element.attrs.get("id")
        if dom_id is not None:
            by_dom_id.setdefault(dom_id, []).append(element)
    return Page(html, builder.root, builder.elements, builder.declarations, by_entry, by_dom_id)


def branch_depth(element: Element) -> int:
    return sum(1 for a in element.ancestors() if a.tag == "details" and a.has_class("branch"))


# --- Chromium ----------------------------------------------------------------------------------


def _chromium_unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed"
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"Chromium not found at {CHROMIUM}"
    return None


@pytest.fixture(scope="session")
def pw_browser() -> Iterator[Any]:
    """One headless Chromium for the whole run; skipped locally, a failure under CI."""
    reason = _chromium_unavailable()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; browser tests must run in CI", pytrace=False)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


#: The elements a jump highlighted, in order (init script). The page highlights its target
#: for 2 s once it has loaded, but a first look from a busy test process can still come
#: later than that (3.5 s measured before the 2 s waited for the load), and a wait for the
#: class then found it gone.
RECORD_HIGHLIGHTS = """window.__highlighted = [];
new MutationObserver(records => { for (const r of records)
    if (r.target.classList.contains('highlight') && !window.__highlighted.includes(r.target))
      window.__highlighted.push(r.target); })
  .observe(document, { subtree: true, attributes: true, attributeFilter: ['class'] });"""


def open_recording_highlights(view: Viewer, url: str, **options: Any) -> Any:
    """``view.open(url, **options)`` in a context of its own that records highlights."""
    context = view.context(**options)
    context.add_init_script(RECORD_HIGHLIGHTS)
    return view.open(url, context=context)


def wait_highlighted(page: Any, selector: str, timeout_ms: int = 15_000) -> None:
    """Waits until an element matching ``selector`` has been highlighted (a page or a frame
    opened by ``open_recording_highlights``); a jump's highlight lasts 2 s only."""
    page.wait_for_function(
        "sel => (window.__highlighted || []).some(e => e.matches(sel))",
        arg=selector,
        timeout=timeout_ms,
        polling=50,
    )


def highlighted(page: Any) -> list[str]:
    """The entry ids of the elements highlighted so far (``open_recording_highlights``)."""
    return page.evaluate("window.__highlighted.map(e => e.dataset.entryId)")


# Longer than page.js's wait before a search runs (30 ms; 120 ms past 3,000 rows).
SEARCH_SETTLE_MS = 250


def after_page_timers(page: Any, ms: int) -> None:
    """Returns once every timer the page has already set for less than ``ms`` has fired: a
    timer set later with a longer delay fires after them (a window's timers run in order of
    their deadlines). A fixed wait in the test can end first on a busy machine, where the
    page's own timers run late."""
    page.evaluate("ms => new Promise(done => setTimeout(done, ms))", ms)


def after_frames(page: Any, frames: int) -> None:
    """Returns once the page has drawn ``frames`` more frames: work the page put off by fewer
    nested ``requestAnimationFrame`` calls has run by then, however slow the machine."""
    page.evaluate(
        """n => new Promise(done => { const next = k => k ? requestAnimationFrame(() => next(k - 1))
          : done(); next(n); })""",
        frames,
    )


def search_for(page: Any, text: str) -> None:
    """Types a search and returns once the page has run it (on a timer after the last key)."""
    page.fill("#tree-search", text)
    after_page_timers(page, SEARCH_SETTLE_MS)


class _Handler(http.server.SimpleHTTPRequestHandler):
    log: list[tuple[str, str]]

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self.server.log.append(("GET", self.path))  # type: ignore[attr-defined]
        super().do_GET()

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


@dataclass
class PageServer:
    """A loopback HTTP server over a temp folder (an http origin gives pages localStorage)."""

    folder: Path
    base: str
    log: list[tuple[str, str]]

    def publish(self, name: str, html: str) -> str:
        (self.folder / name).write_text(html, encoding="utf-8", errors="surrogateescape")
        return f"{self.base}/{name}"


@pytest.fixture(scope="session")
def page_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PageServer]:
    folder = tmp_path_factory.mktemp("pages")
    handler = functools.partial(_Handler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.log = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield PageServer(folder, f"http://127.0.0.1:{server.server_address[1]}", server.log)  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Watch:
    """What one page did that a self-contained, inert page must never do."""

    page_url: str
    also_allowed: tuple[str, ...] = ()  # a frame the page was made to hold
    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def foreign_requests(self) -> list[str]:
        allowed = {
            (parts.scheme, parts.netloc, parts.path)
            for parts in map(urlsplit, (self.page_url, *self.also_allowed))
        }
        bad = []
        for url in self.requests:
            parts = urlsplit(url)
            if parts.scheme in ("blob", "data"):  # local: the JSONL download, inline images
                continue
            if (parts.scheme, parts.netloc, parts.path) in allowed:
                continue
            bad.append(url)
        return bad

    def assert_clean(self) -> None:
        assert self.dialogs == [], f"dialogs opened: {self.dialogs}"
        assert self.page_errors == [], f"uncaught page errors: {self.page_errors}"
        assert self.console_errors == [], f"console errors: {self.console_errors}"
        assert self.foreign_requests() == [], f"network requests: {self.foreign_requests()}"


_WATCH_SCRIPT = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__cspViolations.push(e.violatedDirective + " " + e.blockedURI);
});
"""


class Viewer:
    """Opens pages in fresh browser contexts and records requests, errors and dialogs."""

    def __init__(self, browser: Any, server: PageServer) -> None:
        self.browser = browser
        self.server = server
        self.contexts: list[Any] = []
        self.watches: dict[Any, Watch] = {}
        self.log_start = len(server.log)
        self.opened_paths: set[str] = set()

    def context(self, *, js: bool = True, **options: Any) -> Any:
        options.setdefault("viewport", {"width": 1280, "height": 900})
        options.setdefault("service_workers", "block")
        context = self.browser.new_context(java_script_enabled=js, **options)
        if js:
            context.add_init_script(_WATCH_SCRIPT)
        self.contexts.append(context)
        return context

    def open(
        self,
        url: str,
        *,
        js: bool = True,
        context: Any = None,
        wait_until: str = "load",
        also_allow: tuple[str, ...] = (),
        **options: Any,
    ) -> Any:
        context = context or self.context(js=js, **options)
        page = context.new_page()
        watch = Watch(url, also_allow)
        self.watches[page] = watch
        page.on("request", lambda request: watch.requests.append(request.url))
        page.on(
            "console",
            lambda message: (
                watch.console_errors.append(message.text) if message.type == "error" else None
            ),
        )
        page.on("pageerror", lambda error: watch.page_errors.append(str(error)))

        def on_dialog(dialog: Any) -> None:
            watch.dialogs.append(f"{dialog.type}: {dialog.message}")
            dialog.dismiss()

        page.on("dialog", on_dialog)

        allowed = {u.split("#")[0].split("?")[0] for u in (url, *also_allow)}

        def guard(route: Any) -> None:  # the page (and a frame it was told to hold) only
            if route.request.url.split("#")[0].split("?")[0] in allowed:
                route.continue_()
            else:
                route.abort()

        page.route("**/*", guard)
        self.opened_paths.update(urlsplit(u).path for u in allowed)
        page.goto(url, wait_until=wait_until)
        return page

    def watch(self, page: Any) -> Watch:
        return self.watches[page]

    def assert_clean(self) -> None:
        """No dialog, console error, uncaught error or request beyond the pages themselves,
        seen by the browser or by the server."""
        for watch in self.watches.values():
            watch.assert_clean()
        log = self.server.log[self.log_start :]
        extra = [path for _, path in log if urlsplit(path).path not in self.opened_paths]
        assert extra == [], f"the server saw requests for {extra}"

    def close(self) -> None:
        """Closes every context, each even if one before it failed to: a context left open
        goes on running its pages (timers, reloads) into the tests after this one."""
        contexts, self.contexts = self.contexts, []
        failed: list[Exception] = []
        for context in contexts:
            try:
                context.close()
            except Exception as error:  # raised once all are closed
                failed.append(error)
        if failed:
            raise failed[0]


@pytest.fixture
def viewer(pw_browser: Any, page_server: PageServer) -> Iterator[Viewer]:
    view = Viewer(pw_browser, page_server)
    try:
        yield view
    finally:
        view.close()
