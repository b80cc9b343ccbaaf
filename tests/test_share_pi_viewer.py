"""`share --pi-viewer`: the page carries Pi's own ``session-data`` block, so viewers of Pi's
exports (pi.dev, pi-share-viewer) show it, and the View link is the one Pi's /share prints.

Such a viewer fetches the gist's ``session.html``, refuses a page without
``script#session-data[type="application/json"]``, adds its own policy and the address's
parameters as meta tags, and shows the page in ``<iframe sandbox="allow-scripts
allow-downloads" srcdoc>`` (reference: publish-apis.md §1.5). The browser test plays that
viewer over loopback HTTP with real Chromium; the share tests talk to the loopback GitHub."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

import exporter.publish.gist_share as gist_share
from exporter.loader import parse_session_bytes
from exporter.render import RenderOptions, render_session
from tests.browser_util import PageServer, Viewer, load_fixture
from tests.fakes.github import FakeGitHub
from tests.share_env import share

pytest_plugins = ["tests.browser_util"]

FIXTURES = Path(os.environ.get("PI_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
FIXTURE = FIXTURES / "fixtures" / "pi-branched-1.jsonl"
PLANTED = "ghp_" + "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0Ja2Pq4"
BLOCK = re.compile(r'<script id="session-data" type="application/json">([^<]*)</script>')


@pytest.fixture
def fake() -> FakeGitHub:
    with FakeGitHub() as server:
        yield server


@pytest.fixture
def env(tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated share: its own state folder and token, no gh, no proxies; the loopback
    API stands for github.com (only there are public viewers and PI_SHARE_VIEWER_URL used)."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "PI_SHARE_VIEWER_URL"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "empty-bin").mkdir()
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("GH_ENTERPRISE_TOKEN", fake.token)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.setattr(gist_share, "is_enterprise", lambda api_url: False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def uploaded(fake: FakeGitHub) -> dict[str, str]:
    """The files of the last create or update the fake GitHub received."""
    request = [r for r in fake.requests if r.method in ("POST", "PATCH")][-1]
    return {name: body["content"] for name, body in request.json["files"].items()}


def session_data(page: str) -> dict[str, Any]:
    (block,) = BLOCK.findall(page)
    return json.loads(base64.b64decode(block, validate=True).decode("utf-8"))


def planted_copy(folder: Path) -> Path:
    """pi-branched-1 with a GitHub token in a tool result and CJK, emoji and a lone
    surrogate (valid in JSON, not in UTF-8) in a user prompt."""
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(lines):
        record = json.loads(line)
        message = record.get("message") or {}
        if message.get("role") == "toolResult":
            message["content"][0]["text"] += f"\nexport GITHUB_TOKEN={PLANTED}\n"
            lines[index] = json.dumps(record, ensure_ascii=False)
            break
    for index, line in enumerate(lines):
        record = json.loads(line)
        message = record.get("message") or {}
        if message.get("role") == "user":
            message["content"][0]["text"] += " 漢字 🎉 \ud800 end"
            lines[index] = json.dumps(record)  # ascii: the lone surrogate as \ud800
            break
    path = folder / "planted.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_shared_page_carries_the_redacted_session_in_pi_s_format(
    fake: FakeGitHub, env: Path
) -> None:
    source = planted_copy(env)
    result = share(fake, str(source), "--pi-viewer", "--with-jsonl")
    assert result.exit_code == 0, result.output
    files = uploaded(fake)
    data = session_data(files["session.html"])
    assert set(data) == {"header", "entries", "leafId"}
    records = [json.loads(line) for line in files["session.jsonl"].splitlines()]
    # what the viewer reads is what was shared: the redacted copy, entry for entry
    assert data["header"] == records[0] and data["header"]["version"] == 3
    assert data["entries"] == records[1:]
    assert len(data["entries"]) > 200  # (share leaves out Pi's hidden entries by default)
    assert data["leafId"] == load_fixture("pi-branched-1.jsonl").leaf_id
    decoded = json.dumps(data, ensure_ascii=False)
    assert PLANTED not in decoded and PLANTED not in files["session.html"]
    assert "漢字 🎉 \ud800 end" in decoded  # nothing lost or replaced
    gist_id = next(iter(fake.gists))
    assert f"View: https://pi.dev/session/#{gist_id}" in result.stdout
    assert "PI_SHARE_VIEWER_URL" not in result.stderr and "Pi's own" not in result.stderr


def test_without_the_flag_the_page_has_no_block_and_the_link_is_gisthost(
    fake: FakeGitHub, env: Path
) -> None:
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 0, result.output
    assert 'id="session-data"' not in uploaded(fake)["session.html"]
    gist_id = next(iter(fake.gists))
    assert f"View: https://gisthost.github.io/?{gist_id}/session.html" in result.stdout
    # sharing again with the flag updates the same gist: the page is what changed
    again = share(fake, str(FIXTURE), "--pi-viewer")
    assert again.exit_code == 0, again.output
    assert [r.method for r in fake.requests if r.method in ("POST", "PATCH")] == ["POST", "PATCH"]
    assert BLOCK.search(uploaded(fake)["session.html"])
    assert f"View: https://pi.dev/session/#{gist_id}" in again.stdout


def test_pi_share_viewer_url_is_the_link_with_the_flag_and_said_unused_without(
    fake: FakeGitHub, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Pi user's PI_SHARE_VIEWER_URL (a self-hosted pi-share-viewer) was left out with a
    note, since it could not show our page: with --pi-viewer it can, so it is the link."""
    monkeypatch.setenv("PI_SHARE_VIEWER_URL", "https://viewer.example/session/")
    plain = share(fake, str(FIXTURE))
    assert plain.exit_code == 0, plain.output
    assert "PI_SHARE_VIEWER_URL (https://viewer.example/session/) is not used" in plain.stderr
    assert "--pi-viewer makes the page readable there" in plain.stderr
    result = share(fake, str(FIXTURE), "--pi-viewer")
    assert result.exit_code == 0, result.output
    gist_id = next(iter(fake.gists))
    assert f"View: https://viewer.example/session/#{gist_id}" in result.stdout
    assert "PI_SHARE_VIEWER_URL" not in result.stderr


def test_a_pi_format_viewer_url_is_not_warned_about_with_the_flag(
    fake: FakeGitHub, env: Path
) -> None:
    warned = share(fake, str(FIXTURE), "--viewer-url", "https://pi.dev/session/")
    assert "viewer of Pi's own exports" in warned.stderr and "add --pi-viewer" in warned.stderr
    result = share(fake, str(FIXTURE), "--viewer-url", "https://pi.dev/session/", "--pi-viewer")
    assert result.exit_code == 0, result.output
    assert "Pi's own" not in result.stderr
    assert f"View: https://pi.dev/session/#{next(iter(fake.gists))}" in result.stdout


def test_a_dry_run_writes_the_page_with_the_block(fake: FakeGitHub, env: Path) -> None:
    result = share(fake, str(FIXTURE), "--pi-viewer", "--dry-run", "--with-jsonl")
    assert result.exit_code == 0, result.output
    page = (env / "pi-session-share-pi-branched-1.html").read_text(encoding="utf-8")
    written = (env / "pi-session-share-pi-branched-1.jsonl").read_text(encoding="utf-8")
    assert session_data(page)["entries"] == [json.loads(x) for x in written.splitlines()[1:]]
    assert fake.requests == []


def test_the_block_is_inert_text_whatever_the_session_holds() -> None:
    """Entry text that closes a script element stays inside the base64, and an entry named
    like the block takes another anchor: the page has one block, and no markup or script
    came from the session."""
    hostile = "</script><script>parent.__pwned=1</script><!--"
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/"},
        {"type": "message", "id": "session-data", "parentId": None,
         "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": hostile}},
    ]  # fmt: skip
    body = "\n".join(json.dumps(line) for line in lines).encode("utf-8")
    page = render_session(parse_session_bytes(body), RenderOptions(pi_session_data=True))
    assert len(BLOCK.findall(page)) == 1
    assert page.count(' id="session-data"') == 1  # an entry with that id is anchored elsewhere
    assert session_data(page)["entries"][0]["message"]["content"] == hostile
    assert "<script>parent.__pwned" not in page


#: What a viewer of Pi's exports does with a gist's session.html (reference §1.5), played in
#: the browser: refuse a page without the block, add a policy and the address's parameters
#: as meta tags, show it in a sandboxed srcdoc frame. It also reads the block as Pi's data.
VIEWER_PAGE = """<!doctype html><meta charset="utf-8"><title>viewer</title>
<link rel=icon href="data:,"><p id="state">loading</p>
<iframe id="f" sandbox="allow-scripts allow-downloads" style="width:1200px;height:800px"></iframe>
<script>
const parsed = new DOMParser().parseFromString(page, "text/html");
const block = parsed.querySelector('script#session-data[type="application/json"]');
if (!block) {
  document.getElementById("state").textContent = "not a supported Pi session export";
} else {
  const bytes = Uint8Array.from(atob(block.textContent), (c) => c.charCodeAt(0));
  window.piData = JSON.parse(new TextDecoder().decode(bytes));
  const meta = (name, content) => {
    const m = parsed.createElement("meta"); m.name = name; m.content = content; return m;
  };
  const policy = parsed.createElement("meta");
  policy.httpEquiv = "Content-Security-Policy";
  policy.content = "default-src 'none'; script-src 'unsafe-inline'; " +
    "style-src 'unsafe-inline'; img-src data: blob:; connect-src 'none'";
  parsed.head.prepend(policy, meta("pi-share-base-url", "https://viewer.example/session/#ab12"),
                      meta("pi-url-params", PARAMS));
  document.getElementById("f").srcdoc = "<!doctype html>\\n" + parsed.documentElement.outerHTML;
  document.getElementById("state").textContent = "shown";
}
</script>"""


def _viewer_for(page_html: str, params: str) -> str:
    """The viewer page holding ``page_html`` as a script string ("<" escaped, so the page's
    own "</script>" cannot end it) and the address's parameters."""
    page = json.dumps(page_html).replace("<", "\\u003c")
    return VIEWER_PAGE.replace(
        "<script>\n", f"<script>\nconst page = {page};\nconst PARAMS = {json.dumps(params)};\n", 1
    )


def test_a_viewer_of_pi_exports_shows_the_page_and_opens_its_deep_link(
    viewer: Viewer, page_server: PageServer
) -> None:
    session = load_fixture("pi-branched-1.jsonl")
    target = next(e.id for e in session.entries if e.id not in set(session.active_path))
    with_block = render_session(session, RenderOptions(pi_session_data=True))
    url = page_server.publish(
        "pi-viewer.html", _viewer_for(with_block, f"targetId={quote(target)}")
    )
    page = viewer.open(url)
    assert page.inner_text("#state") == "shown"
    data = page.evaluate("window.piData")
    assert len(data["entries"]) == len(session.entries) and data["leafId"] == session.leaf_id
    frame = page.frame_locator("#f")
    # the viewer's ?targetId= was read: the entry is opened, focused (Tab goes on from it)
    # and the outline's current row (its highlight lasts 2 s: a busy machine looked later)
    shown = page.locator("#f").element_handle().content_frame()
    shown.wait_for_function(
        "() => document.activeElement.matches('article.entry')", polling=100, timeout=20_000
    )
    opened = shown.evaluate(
        """() => [document.activeElement.getAttribute('data-entry-id'),
                  document.querySelector('#tree li.current > a').getAttribute('href')]"""
    )
    assert opened == [target, f"#{target}"]
    assert frame.locator(f'[data-entry-id="{target}"]').is_visible()
    assert frame.locator("#transcript article.entry").count() > 20
    viewer.assert_clean()  # no script error in the sandbox (storage there throws)
    # the page without the block is refused, as such a viewer refuses it
    refused = page_server.publish(
        "pi-viewer-refused.html", _viewer_for(render_session(session), "")
    )
    assert viewer.open(refused).inner_text("#state") == "not a supported Pi session export"


def test_the_block_is_the_one_pi_itself_writes_for_the_shared_copy(
    fake: FakeGitHub, env: Path, pi_home: Path, node: str
) -> None:
    """The real Pi's export of the shared (redacted) session carries the same data: a
    viewer reading Pi's block reads ours as Pi's."""
    source = planted_copy(env)
    result = share(fake, str(source), "--pi-viewer", "--dry-run", "--with-jsonl")
    assert result.exit_code == 0, result.output
    shared = env / "pi-session-share-planted.jsonl"
    (env / "pi-home").mkdir()
    done = subprocess.run(
        [str(pi_home / "node_modules" / ".bin" / "pi"), "--export", str(shared), "pi.html"],
        cwd=env, env={**os.environ, "HOME": str(env / "pi-home"), "PATH": str(Path(node).parent)},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    pi = session_data((env / "pi.html").read_text(encoding="utf-8"))
    ours = session_data((env / "pi-session-share-planted.html").read_text(encoding="utf-8"))
    assert set(pi) >= {"header", "entries", "leafId"}
    assert ours == {key: pi[key] for key in ("header", "entries", "leafId")}
    assert PLANTED not in json.dumps(pi)
