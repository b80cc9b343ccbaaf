"""Times as every output writes them: years before 1000 in four digits, one zone (UTC)
throughout a document, the offsets of historical zones (local mean time) in whole seconds,
times the tool could not read left as written, and the site's per-day cost dated as
``stats --all`` dates a turn.

Real session files, the real `pi-session` in a process of its own, a publish over loopback
HTTP to the fake Hub, and Chromium where the reader's view is what matters."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.discover import encode_cwd
from exporter.loader import load_session
from exporter.render.index import session_row
from tests.fakes.hub import TOKEN, FakeHub, fake_hub_fixture, isolate_hub

pytest_plugins = ["tests.browser_util"]

__all__ = ["fake_hub_fixture"]

PI_SESSION = Path(sys.executable).parent / "pi-session"
CWD = "/home/dev/times"
COST = {"input": 0.5, "output": 0.5, "cacheRead": 0, "cacheWrite": 0, "total": 1.0}
USAGE = {"input": 100, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150}
USAGE["cost"] = COST


def _ms(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def _write(folder: Path, session_id: str, header_time: str, turns: list[tuple[Any, ...]]) -> Path:
    """A Pi session file: a header at ``header_time``, then one entry per turn, each
    ``(role, entry timestamp or None, the message's own timestamp, text)``."""
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": session_id, "timestamp": header_time, "cwd": CWD}
    ]
    parent = None
    for number, (role, stamp, own, text) in enumerate(turns):
        message: dict[str, Any] = {"role": role, "content": text, "timestamp": own}
        if role == "assistant":
            message.update(content=[{"type": "text", "text": text}], api="anthropic-messages",
                           provider="anthropic", model="claude-sonnet-4", usage=USAGE,
                           stopReason="stop")  # fmt: skip
        entry: dict[str, Any] = {"type": "message", "id": f"t{number:03d}", "parentId": parent}
        if stamp is not None:
            entry["timestamp"] = stamp
        entry["message"] = message
        lines.append(entry)
        parent = entry["id"]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _run(*args: str, env: dict[str, str] | None = None) -> str:
    """The real `pi-session` with ``args``; its output (a failure fails the test)."""
    done = subprocess.run(
        [str(PI_SESSION), *args], capture_output=True, text=True, encoding="utf-8",
        env={**os.environ, **(env or {})}, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    """Pi's sessions folder with: a session started in year 999 (and answered in 1850), one
    written at +05:30 and ended in UTC, one written at +09:00 that is older than one
    written in UTC, and one whose times the tool cannot read."""
    root = tmp_path / "sessions"
    folder = root / encode_cwd(CWD)
    _write(folder, "old-0999", "0999-06-01T12:00:00Z", [
        ("user", "0999-06-01T12:00:00Z", 0, "a question in year 999"),
        ("assistant", "1850-01-01T00:00:00Z", 0, "an answer in 1850"),
    ])  # fmt: skip
    _write(folder, "mixed-offsets", "2025-06-01T10:00:00+05:30", [
        ("user", "2025-06-01T04:31:00Z", _ms("2025-06-01T04:31:00Z"), "mixed one"),
        ("assistant", "2025-06-01T10:02:00+05:30", _ms("2025-06-01T04:32:00Z"), "reply"),
        ("user", "2025-05-31T21:40:00-07:00", _ms("2025-06-01T04:40:00Z"), "from LA"),
        ("assistant", "2025-06-01T04:41:00Z", _ms("2025-06-01T04:41:00Z"), "last"),
    ])  # fmt: skip
    _write(folder, "tokyo-older", "2025-09-01T09:00:00+09:00", [
        ("user", "2025-09-01T09:30:00+09:00", _ms("2025-09-01T00:30:00Z"), "older, Tokyo"),
        ("assistant", "2025-09-01T10:00:00+09:00", _ms("2025-09-01T01:00:00Z"), "reply"),
    ])  # fmt: skip
    _write(folder, "utc-newer", "2025-09-01T00:00:00Z", [
        ("user", "2025-09-01T01:30:00Z", _ms("2025-09-01T01:30:00Z"), "newer, UTC"),
        ("assistant", "2025-09-01T02:00:00Z", _ms("2025-09-01T02:00:00Z"), "reply"),
    ])  # fmt: skip
    return root


def _file(root: Path, session_id: str) -> Path:
    return root / encode_cwd(CWD) / f"{session_id}.jsonl"


# --- 1: years before 1000 -------------------------------------------------------------------


def test_a_year_before_1000_is_written_in_four_digits_in_every_output(
    sessions: Path, tmp_path: Path
) -> None:
    """strftime's ``%Y`` wrote year 999 as "999" on Linux: a ``<time datetime>`` the
    browser cannot read, "Started: 999-06-01" in Markdown and `stats`, a site row
    "999-06-01 12:00 UTC"."""
    old = _file(sessions, "old-0999")
    page = tmp_path / "old.html"
    _run("export", str(old), "-o", str(page))
    html = page.read_text(encoding="utf-8")
    assert '<time datetime="0999-06-01T12:00:00Z">0999-06-01 12:00:00 UTC</time>' in html
    markdown = tmp_path / "old.md"
    _run("export", str(old), "-o", str(markdown))
    assert "**Started:** 0999-06-01 12:00:00 +00:00" in markdown.read_text(encoding="utf-8")
    assert "  started   0999-06-01 12:00:00 +00:00" in _run("stats", str(old)).splitlines()
    site = tmp_path / "site"
    _run("export", "--all", "--sessions-dir", str(sessions), "-o", str(site), "-j", "1")
    index = (site / "index.html").read_text(encoding="utf-8")
    assert ">0999-06-01 12:00 UTC</time>" in index  # the period's start, without the script


def test_a_publish_writes_year_one_in_four_digits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_hub: FakeHub
) -> None:
    """A session of year 1 was published as ``started_at: "1-01-01T00:00:00.000Z"``, in
    a month folder ``sessions/1-01/``, and the card's activity said "1-01-01T00 to …"."""
    isolate_hub(monkeypatch, tmp_path)
    root = tmp_path / "sessions"
    _write(root / encode_cwd(CWD), "year-one", "0001-01-01T00:00:00Z", [
        ("user", "0001-01-01T00:00:00Z", 0, "year one"),
        ("assistant", "2025-07-01T00:10:00Z", 0, "much later"),
    ])  # fmt: skip
    args = ["publish", "alice/sessions", "--all", "--sessions-dir", str(root)]
    result = CliRunner().invoke(
        cli, [*args, "--endpoint", fake_hub.url, "-j", "1", "--token", TOKEN],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    files = fake_hub.files("alice/sessions")
    rows = [json.loads(line) for line in files["index.jsonl"].splitlines()]
    assert [(r["started_at"], r["ended_at"]) for r in rows] == [
        ("0001-01-01T00:00:00.000Z", "2025-07-01T00:10:00.000Z")
    ]
    assert rows[0]["path"].startswith("sessions/0001-01/"), rows[0]["path"]
    card = files["README.md"].decode("utf-8")
    assert "| activity | 0001-01-01 to 2025-07-01 |" in card


# --- 1, 2, 3: the reader's view --------------------------------------------------------------


def test_old_times_are_local_with_the_offset_in_whole_seconds(
    sessions: Path, tmp_path: Path, pw_browser: Any
) -> None:
    """In Los Angeles the year-999 start stayed in UTC (its datetime was "999-…"), and a
    time before 1883 (local mean time, −7:52:58) said "UTC−07:52.96666666666664"."""
    page_file = tmp_path / "old.html"
    _run("export", str(_file(sessions, "old-0999")), "-o", str(page_file))
    site = tmp_path / "site"
    _run("export", "--all", "--sessions-dir", str(sessions), "-o", str(site), "-j", "1")
    zone = ZoneInfo("America/Los_Angeles")
    start = datetime(999, 6, 1, 12, tzinfo=timezone.utc).astimezone(zone)
    end = datetime(1850, 1, 1, tzinfo=timezone.utc).astimezone(zone)
    assert str(start.utcoffset()) == "-1 day, 16:07:02"  # −07:52:58, local mean time
    context = pw_browser.new_context(timezone_id="America/Los_Angeles", locale="en-US")
    try:
        page = context.new_page()
        page.goto(page_file.as_uri())
        shown = page.locator(".facts time").all_text_contents()
        assert shown[:2] == [
            f"0999-{start:%m-%d %H:%M:%S} UTC−07:52:58",  # (strftime: "999")
            f"{end:%Y-%m-%d %H:%M:%S} UTC−07:52:58",
        ], shown
        page.goto((site / "index.html").as_uri())
        period = page.locator(".facts time").first.text_content()
        assert period == f"0999-{start:%m-%d %H:%M} UTC−07:52:58", period
    finally:
        context.close()


def test_site_rows_carry_utc_times_as_their_tooltip_says(
    sessions: Path, tmp_path: Path, pw_browser: Any
) -> None:
    """A row of a session written at +09:00 had ``datetime="…T10:00:00.000+09:00"``, and
    the script's tooltip called that time UTC."""
    site = tmp_path / "site"
    _run("export", "--all", "--sessions-dir", str(sessions), "-o", str(site), "-j", "1")
    context = pw_browser.new_context(timezone_id="Asia/Tokyo", locale="en-US")
    try:
        page = context.new_page()
        page.goto((site / "index.html").as_uri())
        row = page.locator("#session-table tbody tr", has_text="older, Tokyo")
        time = row.locator("time").first
        assert time.get_attribute("datetime") == "2025-09-01T01:00:00.000+00:00"
        assert time.get_attribute("title") == "2025-09-01T01:00:00.000+00:00 (UTC)"
        assert time.text_content() == "2025-09-01 10:00"  # Tokyo's clock
        last = page.locator(".facts time").last
        assert last.get_attribute("title") == "2025-09-01T02:00:00.000+00:00 (UTC)"
    finally:
        context.close()


# --- 4: one zone in Markdown, stats and JSON --------------------------------------------------


def test_markdown_stats_and_list_json_write_every_time_in_utc(
    sessions: Path, tmp_path: Path
) -> None:
    """A session started at 10:00 +05:30 said "Ended: 2025-06-01 04:41:00 +00:00" below
    it (it read as ending before it began), and `list --json` mixed +09:00 and +00:00, so
    ``sort_by(.modified)`` put a later session first."""
    mixed = _file(sessions, "mixed-offsets")
    markdown = tmp_path / "mixed.md"
    _run("export", str(mixed), "-o", str(markdown))
    text = markdown.read_text(encoding="utf-8")
    assert "**Started:** 2025-06-01 04:30:00 +00:00" in text
    assert "**Ended:** 2025-06-01 04:41:00 +00:00 (11m 0s)" in text
    headings = re.findall(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d", text)
    assert headings and all(h.endswith(" +00:00") for h in headings), headings
    assert headings[2:] == sorted(headings[2:])  # the entries, in the order they were said
    lines = _run("stats", str(mixed)).splitlines()
    assert "  started   2025-06-01 04:30:00 +00:00" in lines
    listed = [
        json.loads(line)
        for line in _run("list", "--all", "--json", "--sessions-dir", str(sessions)).splitlines()
    ]
    times = {row["id"]: (row["started"], row["modified"]) for row in listed}
    assert times["tokyo-older"] == ("2025-09-01T00:00:00+00:00", "2025-09-01T01:00:00+00:00")
    assert times["mixed-offsets"][0] == "2025-06-01T04:30:00+00:00"
    by_modified = [row["id"] for row in sorted(listed, key=lambda row: row["modified"])]
    assert by_modified.index("tokyo-older") < by_modified.index("utc-newer"), by_modified


# --- 5: times the tool could not read ----------------------------------------------------------


def test_an_unreadable_time_is_shown_as_written_not_localised(
    tmp_path: Path, pw_browser: Any
) -> None:
    """``T24:00:00Z`` and ``+002025-…`` are no times to the exporter (a bad-timestamp
    warning, none in Markdown), yet the page's script read them and showed a local time
    later than the session's end."""
    written = ["2025-06-01T24:00:00Z", "+002025-06-01T00:00:00Z"]
    path = _write(tmp_path / "s", "unreadable", "2025-06-01T00:00:00Z", [
        ("user", written[0], 0, "hour 24"),
        ("assistant", written[1], 0, "expanded year"),
        ("user", "2025-06-01T00:05:00Z", 0, "the end"),
    ])  # fmt: skip
    page_file = tmp_path / "unreadable.html"
    _run("export", str(path), "-o", str(page_file))
    context = pw_browser.new_context(timezone_id="Asia/Tokyo", locale="en-US")
    try:
        page = context.new_page()
        page.goto(page_file.as_uri())
        for stamp, said in zip(written, ["hour 24", "expanded year"], strict=True):
            time = page.locator("article", has_text=said).locator("header time")
            assert time.text_content() == stamp  # as written, not "2025-06-02 09:00:00"
            assert time.get_attribute("datetime") is None
    finally:
        context.close()


# --- 7: the site's per-day cost --------------------------------------------------------------


def test_the_site_dates_a_turn_as_stats_all_does(tmp_path: Path) -> None:
    """A turn whose entry time is unreadable was put on the session's last day by the site
    (``stats.ended``), while `stats --all` dates it by its message's own time."""
    root = tmp_path / "sessions"
    path = _write(root / encode_cwd(CWD), "bad-entry-time", "2025-07-01T00:00:00Z", [
        ("user", "2025-07-01T00:01:00Z", _ms("2025-07-01T00:01:00Z"), "first"),
        ("assistant", "2025-13-45T00:00:00Z", _ms("2025-07-01T00:02:00Z"), "bad month"),
        ("user", "2025-07-05T00:00:00Z", _ms("2025-07-05T00:00:00Z"), "days later"),
        ("assistant", "2025-07-05T00:01:00Z", _ms("2025-07-05T00:01:00Z"), "the end"),
    ])  # fmt: skip
    report = json.loads(
        _run("stats", "--all", "--json", "--sessions-dir", str(root), env={"TZ": "UTC"})
    )
    by_stats = {row["day"]: row["cost"] for row in report["by_day"]}
    assert by_stats == {"2025-07-01": 1.0, "2025-07-05": 1.0}
    assert session_row(load_session(path))["cost_by_day"] == by_stats


def test_stats_json_and_the_gist_description_say_times_as_the_rest(sessions: Path) -> None:
    """`stats --json` wrote each time in the offset it was written in (+05:30 beside
    +00:00); share's gist description gave the header's UTC date where `list` says the
    local one (a session begun at 00:30 in Kolkata is dated the day before)."""
    mixed = _file(sessions, "mixed-offsets")
    document = json.loads(_run("stats", "--json", str(mixed)))
    said = [document["started"], document["ended"]]
    assert all(time.endswith("+00:00") for time in said), said
    code = (
        "import sys\nfrom exporter.loader import load_session\n"
        "from exporter.share_cli import gist_description\n"
        "print(gist_description(load_session(sys.argv[1])))"
    )
    path = sessions / "kolkata-midnight.jsonl"
    header = {"type": "session", "version": 3, "id": "kolkata-midnight", "cwd": "/w",
              "timestamp": "2025-12-31T19:00:00.000Z"}  # fmt: skip
    path.write_text(json.dumps(header) + "\n", encoding="utf-8")
    for zone, day in (("Asia/Kolkata", "2026-01-01"), ("America/Los_Angeles", "2025-12-31")):
        done = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, text=True,
            encoding="utf-8", env={**os.environ, "TZ": zone}, timeout=60, check=True,
        )  # fmt: skip
        assert done.stdout.strip().endswith(f"({day})"), (zone, done.stdout)


def test_stats_since_says_the_local_moment_the_user_gave(sessions: Path) -> None:
    """`stats --all --since 2025-01-01` in Tokyo said "turns since 2024-12-31 15:00:00
    +00:00" under a day table in local time (review): the moment as the user gave it."""
    args = ["stats", "--all", "--sessions-dir", str(sessions), "--since", "2025-01-01"]
    text = _run(*args, env={"TZ": "Asia/Tokyo"})
    assert "turns since 2025-01-01 00:00 (local time)" in text, text[:400]
    document = json.loads(_run(*args, "--json", env={"TZ": "Asia/Tokyo"}))
    assert document["since"] == "2024-12-31T15:00:00+00:00"
