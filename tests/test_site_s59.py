"""Stop 59 (helper hunt: the site): a redacted rebuild kept the page name made from the file's
name before an address in it was redacted; a project page left out its failed files, which the
index linked to it; a page could be named ``CON.html``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.discover import encode_cwd
from tests.conftest import FIXTURES_DIR

EVERY = FIXTURES_DIR / "every-entry-type.jsonl"
ADDRESS_NAME = "notes-for-alice.smith@corp-example.com.jsonl"


@pytest.fixture(autouse=True)
def own_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """--redact makes a publish key: in this test's folder, not the tester's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def _session(folder: Path, name: str, session_id: str, cwd: str) -> Path:
    head, rest = EVERY.read_text(encoding="utf-8").split("\n", 1)
    header = json.loads(head) | {"id": session_id, "cwd": cwd}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(header) + "\n" + rest, encoding="utf-8")
    return path


def _site(root: Path, out: Path, *flags: str) -> str:
    args = ["export", "--all", "--sessions-dir", str(root), "-o", str(out), "-j", "1", *flags]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _site_files_text(out: Path) -> str:
    """Every file name and every file's text in the site."""
    parts = []
    for path in sorted(out.rglob("*")):
        parts.append(str(path.relative_to(out)))
        if path.is_file():
            parts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


@pytest.mark.parametrize("first", [(), ("--redact",)], ids=["plain", "redact"])
def test_a_page_named_after_an_address_moves_when_addresses_are_redacted(
    tmp_path: Path, first: tuple[str, ...]
) -> None:
    root = tmp_path / "sessions"
    _session(root / encode_cwd("/home/dev/pii"), ADDRESS_NAME, "pii-1", "/home/dev/pii")
    fresh, site = tmp_path / "fresh", tmp_path / "site"
    _site(root, fresh, "--redact", "--pii")
    _site(root, site, *first)
    _site(root, site, "--redact", "--pii")
    pages = sorted(p.relative_to(site) for p in site.rglob("sessions/*/*.html"))
    assert pages == sorted(p.relative_to(fresh) for p in fresh.rglob("sessions/*/*.html"))
    assert len(pages) == 1
    text = _site_files_text(site)
    for leak in ("alice.smith", "corp-example"):
        assert leak not in text


def test_a_project_page_lists_its_failed_files(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    for n, cwd in enumerate(["/home/alice/alpha", "/home/alice/beta"]):
        _session(root / encode_cwd(cwd), f"s{n}.jsonl", f"s-{n}", cwd)
    broken = root / encode_cwd("/home/alice/beta") / "broken.jsonl"
    broken.write_bytes(b"\x00\x01 not a session\n")
    out = tmp_path / "site"
    _site(root, out)
    index = (out / "index.html").read_text(encoding="utf-8")
    beta = [p for p in (out / "projects").glob("*.html") if "beta" in p.name]
    assert len(beta) == 1 and f'href="projects/{beta[0].name}"' in index
    assert "broken.jsonl" in index
    assert "broken.jsonl" in beta[0].read_text(encoding="utf-8")  # the page the row links to
    alpha = [p for p in (out / "projects").glob("*.html") if "alpha" in p.name]
    assert "broken.jsonl" not in alpha[0].read_text(encoding="utf-8")


def test_no_page_takes_a_windows_device_name(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    folder = root / encode_cwd("/home/dev/odd")
    for n, name in enumerate(["CON.jsonl", "nul.jsonl", "Com1.jsonl", "lpt9.x.jsonl"]):
        _session(folder, name, f"dev-{n}", "/home/dev/odd")
    out = tmp_path / "site"
    _site(root, out)
    stems = sorted(p.name for p in out.rglob("sessions/*/*.html"))
    assert stems == ["CON_.html", "Com1_.html", "lpt9_.x.html", "nul_.html"]
    from exporter.fsutil import not_a_device_name  # (new in 0.2.42)

    assert not_a_device_name("console") == "console"
    assert not_a_device_name("COM²") == "COM²_"


def test_the_search_finds_an_aborted_turns_message_only_where_the_page_shows_it() -> None:
    from exporter.loader import parse_session_bytes
    from exporter.site_search import session_records
    from tests.conftest import Build, dump_lines

    lines = [
        Build.header(),
        Build.user("u1", None),
        Build.assistant("a1", "u1", "", stopReason="aborted", errorMessage="Request was aborted."),
        Build.user("u2", "a1", second=3),
        Build.assistant("a2", "u2", "", 4, stopReason="aborted", errorMessage="tool timeout 30s"),
    ]
    records, _cut = session_records(parse_session_bytes(dump_lines(lines)))
    said = [text for _, kind, text in records if kind == "e"]
    assert said == ["tool timeout 30s"]  # the page: "Aborted", then "Aborted: tool timeout 30s"
