"""Regressions from an adversarial review: valid but extreme sessions never hang, never crash.

Each case is a session a hostile or broken tool could write: a code fence for a Pygments lexer
that never finishes, costs that add up past the float range, timestamps at the ends of the
calendar, lone surrogates in what the site index shows, JSON nested deeper than Python parses,
a header whose ``type`` is not a string. Single pages go through the CLI; the site build too.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.render.chart import nice_ceiling, on_axis
from exporter.render.markup import lexer_for

REPO = Path(__file__).resolve().parents[1]


def _header(sid: str = "s1", timestamp: str = "2026-01-01T00:00:00.000Z") -> dict[str, Any]:
    return {"type": "session", "version": 3, "id": sid, "timestamp": timestamp, "cwd": "/w"}


def _user(eid: str, parent: str | None, text: str, second: int = 1) -> dict[str, Any]:
    return {"type": "message", "id": eid, "parentId": parent,
            "timestamp": f"2026-01-01T00:00:{second:02d}.000Z",
            "message": {"role": "user", "content": text, "timestamp": 1}}  # fmt: skip


def _assistant(eid: str, parent: str, cost: float, timestamp: str) -> dict[str, Any]:
    usage = {
        "input": 10,
        "output": 5,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 15,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": timestamp,
            "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                        "provider": "p", "model": "m", "usage": usage, "stopReason": "stop",
                        "timestamp": 1}}  # fmt: skip


def _write(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def _export(source: Path, out: Path) -> Any:
    result = CliRunner().invoke(cli, ["export", str(source), "-o", str(out), "-j", "1"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result


def _site(sessions_dir: Path, out: Path) -> Any:
    args = ["export", "--all", "--sessions-dir", str(sessions_dir), "-o", str(out), "-j", "1"]
    result = CliRunner().invoke(cli, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result


# --- Pygments lexers that never finish -------------------------------------------------------


@pytest.mark.parametrize(("language", "body"), [("tnt", "b"), ("mcschema", "<!--")])
def test_code_fences_for_hanging_lexers_render_as_plain_text(
    tmp_path: Path, language: str, body: str
) -> None:
    assert lexer_for(language) is None
    source = _write(
        tmp_path / "s.jsonl", [_header(), _user("u1", None, f"```{language}\n{body}\n```")]
    )
    out = tmp_path / "out.html"
    # A fresh process with a deadline: a regression would hang, not fail.
    code = "from exporter.cli import main; main()"
    args = [sys.executable, "-c", code, "export", str(source), "-o", str(out), "-j", "1"]
    done = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    assert f'<span class="code-lang">{language}</span>' in html


# --- costs past the float range, the axis maximum --------------------------------------------


@pytest.mark.parametrize(
    ("value", "ceiling"),
    [(0.003, 0.005), (0.41, 0.5), (0.1, 0.1), (7, 10), (150, 200), (1000, 1000), (0, 1.0),
     (-3, 1.0), (float("nan"), 1.0)],
)  # fmt: skip
def test_nice_ceiling_is_a_round_number_at_or_above(value: float, ceiling: float) -> None:
    assert nice_ceiling(value) == pytest.approx(ceiling)
    if value > 0:
        assert nice_ceiling(value) >= value  # 0.41 used to get an axis of 0.1


def test_nice_ceiling_and_on_axis_survive_overflowed_sums() -> None:
    top = nice_ceiling(math.inf)
    assert math.isfinite(top) and nice_ceiling(1.7e308) == 1.7e308
    assert on_axis(math.inf, top) == top and on_axis(-math.inf, top) == 0.0
    assert on_axis(-5.0, 10.0) == 0.0 and on_axis(50.0, 10.0) == 10.0


def test_costs_that_overflow_render_a_page_and_a_site(tmp_path: Path) -> None:
    records: list[Any] = [_header(), _user("u1", None, "go")]
    parent = "u1"
    for n in range(3):
        records.append(_assistant(f"a{n}", parent, 1.7e308, f"2026-01-01T00:01:0{n}.000Z"))
        parent = f"a{n}"
    source = _write(tmp_path / "one" / "s.jsonl", records)
    out = tmp_path / "page.html"
    assert _export(source, out).exit_code == 0
    html = out.read_text(encoding="utf-8")
    chart = html.split('<figure class="chart"', 1)[1].split("</figure>")[0]
    coordinates = re.findall(r'\s(?:d|cx|cy|x|y|x1|x2|y1|y2|width|height)="([^"]*)"', chart)
    assert coordinates and not [c for c in coordinates if "inf" in c or "nan" in c]
    _write(tmp_path / "one" / "t.jsonl", [_header("s2"), *records[1:]])
    result = _site(tmp_path / "one", tmp_path / "site")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "site" / "index.html").is_file()
    again = _site(tmp_path / "one", tmp_path / "site")  # the manifest row is valid: kept
    assert "0 rendered, 2 unchanged" in again.output, again.output


# --- timestamps at the ends of the calendar ---------------------------------------------------


@pytest.mark.parametrize(
    ("header_time", "turn_time"),
    [
        ("0001-01-01T00:00:00+14:00", "2026-01-01T00:01:00.000Z"),  # before year 1 in UTC
        ("2026-01-01T00:00:00.000Z", "0001-01-01T00:00:00Z"),  # a day chart ending in year 1
        ("2026-01-01T00:00:00.000Z", "9999-12-31T23:59:59-14:00"),  # after year 9999 in UTC
    ],
)
def test_extreme_timestamps_build_the_site(
    tmp_path: Path, header_time: str, turn_time: str
) -> None:
    folder = tmp_path / "sessions"
    _write(folder / "odd.jsonl", [_header("odd", header_time), _user("u1", None, "hi"),
                                  _assistant("a1", "u1", 0.5, turn_time)])  # fmt: skip
    _write(folder / "plain.jsonl", [_header("plain"), _user("u1", None, "hello")])  # no cost
    result = _site(folder, tmp_path / "site")
    assert result.exit_code == 0, result.output
    assert "2 rendered" in result.output and " 0 failed" in result.output, result.output
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "<code>odd</code>" in index and "<code>plain</code>" in index


# --- lone surrogates in what the site index shows ---------------------------------------------


@pytest.mark.parametrize("field", ["name", "prompt", "cwd"])
def test_lone_surrogates_never_stop_the_site_index(tmp_path: Path, field: str) -> None:
    folder = tmp_path / "sessions"
    header = _header("sur")
    prompt = "hello"
    extra: list[Any] = []
    if field == "cwd":
        header["cwd"] = "/w/\ud800"
    elif field == "prompt":
        prompt = "bad \ud800 prompt"
    else:
        extra = [{"type": "session_info", "id": "n1", "parentId": "u1",
                  "timestamp": "2026-01-01T00:00:02.000Z", "name": "name \ud800"}]  # fmt: skip
    # json.dumps writes the lone surrogate as the escape \ud800, as Pi's JSON.stringify does.
    _write(folder / "sur.jsonl", [header, _user("u1", None, prompt), *extra])
    _write(folder / "plain.jsonl", [_header("plain"), _user("u1", None, "fine")])
    for _ in range(2):  # and the rebuild, with the row already in the manifest
        result = _site(folder, tmp_path / "site")
        assert result.exit_code == 0, result.output
        index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
        assert "\ufffd" in index


# --- loader: nesting and header shapes --------------------------------------------------------


def test_json_nested_deeper_than_python_parses_is_a_damaged_line(tmp_path: Path) -> None:
    depth = 2 * _deepest_parsable()  # 3,000 parses on Python 3.13 (its limit is ~8,000)
    deep = '{"type":"custom","customType":"c","id":"c1","parentId":"u1",' + (
        '"timestamp":"2026-01-01T00:00:03.000Z","data":' + "[" * depth + "]" * depth + "}"
    )
    source = _write(tmp_path / "s.jsonl", [_header(), _user("u1", None, "hi"), deep,
                                           _user("u2", "u1", "after", 4)])  # fmt: skip
    result = _export(source, tmp_path / "out.html")
    assert result.exit_code == 0, result.output
    assert "nested too deeply" in result.output
    html = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert 'data-entry-id="u2"' in html  # the lines around it still load


def test_header_type_that_is_not_a_string(tmp_path: Path) -> None:
    header = {**_header(), "type": ["session"]}
    source = _write(tmp_path / "s.jsonl", [header, _user("u1", None, "hi")])
    result = _export(source, tmp_path / "out.html")
    assert result.exit_code == 0, result.output
    assert 'data-entry-id="u1"' in (tmp_path / "out.html").read_text(encoding="utf-8")


# --- the site folder and the session folder ---------------------------------------------------


def test_a_second_build_into_the_same_folder_is_refused(tmp_path: Path) -> None:
    import fcntl

    from exporter.site import LOCK_NAME, SiteError, build_site

    folder = tmp_path / "sessions"
    source = _write(folder / "a.jsonl", [_header("a"), _user("u1", None, "hi")])
    out = tmp_path / "site"
    out.mkdir()
    with open(out / LOCK_NAME, "a+b") as held:  # another build holds the folder
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(SiteError, match="another pi-session build"):
            build_site([source], out, jobs=1)
        result = _site(folder, out)
        assert result.exit_code != 0 and "another pi-session build" in result.output
    assert build_site([source], out, jobs=1).rendered == 1  # released: builds again


def test_a_fifo_named_like_a_session_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "--w--"
    _write(folder / "real.jsonl", [_header("real"), _user("u1", None, "hi")])
    os.mkfifo(folder / "pipe.jsonl")  # opening it would block forever
    args = ["list", "--all", "--sessions-dir", str(tmp_path / "sessions")]
    listed = subprocess.run(
        [sys.executable, "-c", "from exporter.cli import main; main()", *args],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert listed.returncode == 0 and "real" in listed.stdout and "pipe" not in listed.stdout
    result = _site(tmp_path / "sessions", tmp_path / "site")
    assert result.exit_code == 0 and "1 rendered" in result.output


@pytest.mark.parametrize("since", ["1000000d", "99999999999d", "0001-01-01"])
def test_since_out_of_range_is_a_clear_error(tmp_path: Path, since: str) -> None:
    folder = tmp_path / "sessions"
    _write(folder / "a.jsonl", [_header("a"), _user("u1", None, "hi")])
    args = ["export", "--all", "--sessions-dir", str(folder), "-o", str(tmp_path / "s")]
    result = CliRunner().invoke(cli, [*args, "--since", since])
    assert result.exit_code == 1 and "--since" in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_json_outputs_stay_json_when_costs_overflow(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "--w--"
    records: list[Any] = [_header("inf"), _user("u1", None, "go")]
    records += [_assistant("a1", "u1", 1.7e308, "2026-01-01T00:01:00.000Z"),
                _assistant("a2", "a1", 1.7e308, "2026-01-01T00:02:00.000Z")]  # fmt: skip
    source = _write(folder / "inf.jsonl", records)
    for args in (["list", "--all", "--json"], ["stats", str(source), "--json"]):
        result = CliRunner().invoke(cli, [*args, "--sessions-dir", str(tmp_path / "sessions")])
        assert result.exit_code == 0, result.output
        for chunk in _json_documents(result.stdout):
            json.loads(chunk, parse_constant=_reject)  # strict: no Infinity, no NaN


def _json_documents(text: str) -> list[str]:
    """``list --json`` prints one object per line; ``stats --json`` one indented document."""
    stripped = text.strip()
    return [stripped] if stripped.startswith("{\n") else stripped.splitlines()


def _reject(constant: str) -> None:
    raise AssertionError(f"not strict JSON: {constant}")


SLOW_BUILD = """
import os, sys, threading, time
from pathlib import Path
from exporter.site import build_site

def slow(session):
    (Path(sys.argv[3]) / str(os.getpid())).write_text("")  # this worker's pid, for the test
    time.sleep(60)
    return session

if __name__ == "__main__":
    if sys.argv[4] == "threaded":  # another thread: the pool then uses a forkserver, not fork
        threading.Thread(target=time.sleep, args=(120,), daemon=True).start()
    files = sorted(Path(sys.argv[1]).glob("*.jsonl"))
    build_site(files, Path(sys.argv[2]), jobs=2, transform=slow)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork/forkserver: Linux")
@pytest.mark.parametrize("mode", ["fork", "threaded"])
def test_workers_end_when_the_build_is_killed(tmp_path: Path, mode: str) -> None:
    import signal
    import time

    folder = tmp_path / "sessions"
    for name in ("a", "b", "c"):
        _write(folder / f"{name}.jsonl", [_header(name), _user("u1", None, "hi")])
    script = tmp_path / "slow_build.py"
    script.write_text(SLOW_BUILD, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    pids = tmp_path / "pids"
    pids.mkdir()
    args = [str(script), str(folder), str(tmp_path / "site"), str(pids), mode]
    build = subprocess.Popen([sys.executable, *args], env=env)
    workers: list[int] = []
    deadline = time.monotonic() + 60
    while len(workers) < 2 and time.monotonic() < deadline:  # the pool's two workers
        time.sleep(0.2)
        workers = [int(p.name) for p in pids.iterdir()]
    assert len(workers) >= 2, "the build never started its workers"
    build.send_signal(signal.SIGKILL)
    build.wait(10)
    deadline = time.monotonic() + 15
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in workers if _alive(pid)], "workers outlived the killed build"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_refused_folder_gets_no_lock_file(tmp_path: Path) -> None:
    from exporter.site import LOCK_NAME, SiteError, build_site

    source = _write(tmp_path / "s" / "a.jsonl", [_header("a"), _user("u1", None, "hi")])
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "index.html").write_text("mine", encoding="utf-8")
    with pytest.raises(SiteError):
        build_site([source], foreign, jobs=1)
    assert sorted(p.name for p in foreign.iterdir()) == ["index.html"]
    assert not (foreign / LOCK_NAME).exists()


def test_rate_limit_header_with_a_non_ascii_digit() -> None:
    from exporter.publish.hub_http import rate_wait

    assert rate_wait({"retry-after": "\u00b2"}, 0) == 2.0  # "²": not a number of seconds


def test_turns_without_usage_are_not_plotted_at_zero(tmp_path: Path) -> None:
    """An aborted turn reports no usage; a point at 0 would draw a context drop."""
    from exporter.loader import load_session
    from exporter.usage import compute_stats

    aborted = _assistant("a2", "a1", 0.0, "2026-01-01T00:02:00.000Z")
    aborted["message"].update(stopReason="aborted", usage={"input": 0, "output": 0})
    records = [_header(), _user("u1", None, "go"),
               _assistant("a1", "u1", 0.5, "2026-01-01T00:01:00.000Z"), aborted,
               _assistant("a3", "a2", 0.5, "2026-01-01T00:03:00.000Z")]  # fmt: skip
    session = load_session(_write(tmp_path / "s.jsonl", records))
    series = compute_stats(session).context_series
    assert [p.entry_id for p in series] == ["a1", "a3"]
    assert min(p.context_tokens for p in series) > 0


def test_counts_read_in_the_singular_for_one(tmp_path: Path) -> None:
    from exporter.formatting import role_label as _role_label

    assert _role_label("bashExecution", 1) == "shell command"
    assert _role_label("bashExecution", 2) == "shell commands"
    assert _role_label("toolResult", 1) == "tool result" and _role_label("odd", 1) == "odd"


def _deepest_parsable() -> int:
    """The deepest [[…]] the loader's json still parses here (a little under the limit)."""
    depth = 100
    while True:
        try:
            json.loads("[" * (depth + 50) + "]" * (depth + 50))
        except RecursionError:
            return depth
        depth += 50


def test_arguments_nested_near_the_limit_render_a_page(tmp_path: Path) -> None:
    """A value the loader can parse may still be too deep to print again (json.dumps runs
    deeper): the call shows a note instead, and an ``edits`` string of 50,000 brackets is
    not parsed into a crash. Every entry of the page is still there."""
    depth = _deepest_parsable() - 50
    nested = json.loads("[" * depth + "]" * depth)
    calls = [
        {"type": "toolCall", "id": "c1", "name": "mytool", "arguments": {"deep": nested}},
        {"type": "toolCall", "id": "c2", "name": "grep",
         "arguments": {"pattern": "x", "deep": nested}},
        {"type": "toolCall", "id": "c3", "name": "edit",
         "arguments": {"path": "a.py", "edits": "[" * 50_000}},
    ]  # fmt: skip
    assistant = {"type": "message", "id": "a1", "parentId": "u1",
                 "timestamp": "2026-01-01T00:00:02.000Z",
                 "message": {"role": "assistant", "content": calls}}  # fmt: skip
    source = tmp_path / "s.jsonl"
    records = [_header(), _user("u1", None, "hi"), assistant, _user("u2", "a1", "after", 3)]
    try:
        text = "\n".join(json.dumps(r) for r in records) + "\n"
    except RecursionError:
        pytest.skip("this Python cannot even write the fixture")
    source.write_text(text, encoding="utf-8")
    result = _export(source, tmp_path / "out.html")
    assert result.exit_code == 0, result.output
    html = (tmp_path / "out.html").read_text(encoding="utf-8")
    for entry_id in ("u1", "a1", "u2"):
        assert f'data-entry-id="{entry_id}"' in html
    assert "edit" in html and "grep" in html
    assert "could not be shown" not in html  # each call shows itself, not a fallback


def test_markdown_nested_past_the_parser_limit_keeps_every_line() -> None:
    """markdown-it stops parsing at its nesting limit and drops the rest of the text without a
    word (a 10-level list lost the conclusion after it): such a text is shown plain, whole."""
    from exporter.render.markup import markdown

    deep_list = "\n".join("  " * i + f"- level {i}" for i in range(30)) + "\n\nCONCLUSION"
    deep_quote = ">" * 60 + " quoted\n\nCONCLUSION <b>"
    for text in (deep_list, deep_quote):
        html = str(markdown(text))
        assert "CONCLUSION" in html and "shown as plain text" in html
        assert "<b>" not in html  # still escaped
    ten_levels = "\n".join("  " * i + f"- level {i}" for i in range(10)) + "\n\nCONCLUSION"
    html = str(markdown(ten_levels))
    assert "CONCLUSION" in html and html.count("<ul>") == 10 and "plain text" not in html


def test_a_file_of_garbage_lines_makes_a_page_of_its_size() -> None:
    """500,000 damaged lines made a 190 MB page (27 s, 1.4 GB): each had its own block and
    a line in the header's problem list. Past 200 they share one block, and the header lists
    20 problems of a kind and counts the rest; every line's text is still in the page."""
    from exporter.loader import parse_session_bytes
    from exporter.render import render_session

    header = (
        b'{"type":"session","version":3,"id":"g","timestamp":"2026-01-01T00:00:00Z","cwd":"/x"}'
    )
    lines = [f"garbage {n:05d}".encode() for n in range(3000)]
    data = b"\n".join([header, *lines]) + b"\n"
    html = render_session(parse_session_bytes(data))
    assert len(html) < 40 * len(data) + 200_000
    assert all(f"garbage {n:05d}" in html for n in range(3000))
    assert html.count('class="entry k-damaged"') == 201  # 200 alone, then one for the rest
    assert "2,800 more damaged lines" in html
    assert "3,000 problems found while reading the file" in html
    assert "… and 2,980 more like these" in html


def test_image_data_that_is_no_image_gets_a_note() -> None:
    """Valid base64 that is not an image (text, a PDF) showed a broken-image icon; it now
    gets the "not shown" note. A PNG labelled image/jpeg still shows (browsers sniff)."""
    import base64

    from exporter.render.markup import safe_image_src
    from tests.xss_corpus import PNG

    assert safe_image_src(PNG) == f"data:image/png;base64,{PNG}"
    webp = base64.b64encode(b"RIFF\x00\x00\x00\x00WEBPVP8 ").decode()  # a header alone
    assert safe_image_src(webp) is None  # (Chromium draws it 0 wide: a broken picture)
    whole = "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="
    assert safe_image_src(whole) == f"data:image/webp;base64,{whole}"
    for data in (base64.b64encode(b"%PDF-1.7 not an image").decode(), "", "AAAA", None):
        assert safe_image_src(data) is None


def test_integers_longer_than_pythons_limit_load_render_and_write(tmp_path: Path) -> None:
    """JSON integers have no length limit and Pi reads any; past Python's 4,300 digits a
    valid line was called "not valid JSON" and its entry dropped."""
    digits = "9" * 5000
    lines = [
        '{"type":"session","version":3,"id":"big","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}',
        '{"type":"message","id":"u","parentId":null,"timestamp":"2025-01-01T00:00:01Z",'
        '"message":{"role":"user","content":"hi"}}',
        '{"type":"message","id":"a","parentId":"u","timestamp":"2025-01-01T00:00:02Z",'
        '"message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"calc",'
        f'"arguments":{{"n":{digits}}}}}]}}}}',
    ]
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    from exporter.loader import load_session

    session = load_session(path)  # the library, without the CLI's raised limit
    assert [e.id for e in session.entries] == ["u", "a"] and not session.damaged
    commands = [
        ["export", str(path), "-o", str(tmp_path / "big.html")],
        ["redact", str(path), "-o", str(tmp_path / "copy.jsonl"), "--no-redact"],
    ]
    for args in commands:
        command = [sys.executable, "-m", "exporter", *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    page = (tmp_path / "big.html").read_text(encoding="utf-8")
    # one 5,000-character line is folded inside itself: the number continues in the fold
    assert digits in re.sub(r"<summary>.*?</summary>|<[^>]+>", "", page)
    assert digits in (tmp_path / "copy.jsonl").read_text(encoding="utf-8")


def test_a_site_is_never_built_inside_pis_sessions_folder(tmp_path: Path) -> None:
    """`export --all -o` the sessions folder (or a project folder in it) wrote index.html,
    sessions/, projects/ and a lock file among Pi's own session files."""
    folder = tmp_path / "sessions"
    _write(folder / "--p--" / "a.jsonl", [_header("a"), _user("u1", None, "hi")])
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    for out in (folder, folder / "--p--", folder / "site"):
        result = _site(folder, out)
        assert result.exit_code == 1 and "inside Pi's sessions folder" in result.output
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before


def test_long_integers_render_in_forkserver_workers(tmp_path: Path) -> None:
    """The CLI raises Python's 4,300-digit limit in its own process; a site build that runs
    its workers through forkserver (another thread running, or not Linux) failed every page
    with such an integer ("Exceeds the limit (4300 digits)")."""
    digits = "7" * 5000
    folder = tmp_path / "sessions" / "--p--"
    for n in range(2):
        _write(folder / f"s{n}.jsonl", [_header(f"s{n}"), _user("u1", None, "hi")])
        custom = '{"type":"custom","id":"c","parentId":"u1","customType":"n","data":{"n":%s}}'
        with open(folder / f"s{n}.jsonl", "a", encoding="utf-8") as handle:
            handle.write(custom % digits + "\n")
    script = (
        "import sys, threading\n"
        "threading.Thread(target=threading.Event().wait, daemon=True).start()  # forkserver\n"
        "from exporter.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    command = [sys.executable, "-c", script, "export", "--all", "--sessions-dir",
               str(tmp_path / "sessions"), "-o", str(tmp_path / "site"), "-j", "2"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and "2 rendered" in done.stderr and "0 failed" in done.stderr, (
        done.stderr
    )


def test_the_library_reads_a_pipe_and_refuses_a_device(tmp_path: Path) -> None:
    """A pipe is read as `cat` reads it (`pi-session export <(ssh host cat s.jsonl)`); a
    device like /dev/zero would never end, so it is refused. A session folder's FIFO is
    never opened by listings (see test_a_fifo_named_like_a_session_is_skipped)."""
    from exporter.loader import SessionFormatError, load_session

    pipe = tmp_path / "pipe.jsonl"
    os.mkfifo(pipe)
    data = json.dumps(_header("piped")) + "\n" + json.dumps(_user("u1", None, "hi")) + "\n"
    code = "import sys\nfrom exporter.loader import load_session as L\nprint(L(sys.argv[1]).id)\n"
    reader = subprocess.Popen([sys.executable, "-c", code, str(pipe)], cwd=REPO,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    pipe.write_text(data, encoding="utf-8")  # opens once the reader has
    out, _ = reader.communicate(timeout=30)
    assert reader.returncode == 0 and out.strip() == "piped"
    with pytest.raises(SessionFormatError, match="not a regular file"):
        load_session("/dev/zero")


def test_a_pipe_that_never_ends_is_a_clear_error(tmp_path: Path) -> None:
    """`cat /dev/zero | pi-session stats -` grew until memory ran out, then a traceback."""
    import io

    from exporter.loader import SessionFormatError, _read_pipe

    endless = tmp_path / "zeros"
    endless.write_bytes(b"\0" * (3 << 20))
    with (
        open(endless, "rb") as stream,
        pytest.raises(
            SessionFormatError, match="zeros: more than 2 MB arrived through the pipe; save"
        ),
    ):
        _read_pipe(stream, limit=2 << 20)
    assert _read_pipe(io.BytesIO(b'{"type":"session"}\n'), limit=2 << 20).startswith(b"{")


def test_running_out_of_memory_is_one_line_and_the_listing_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of one endless line (4 GB of NULs a crash left) gave a MemoryError traceback
    in `stats`, stopped `list` for every session, and read "MemoryError:" in `export --all`."""
    import builtins

    import exporter.discover

    sessions = tmp_path / "sessions" / "--p--"
    sessions.mkdir(parents=True)
    good = _write(sessions / "good.jsonl", [_header("good"), _user("u1", None, "hello")])
    huge = sessions / "huge.jsonl"
    huge.write_bytes(b"\0" * 64)
    real_open = builtins.open

    def tight_memory(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).endswith("huge.jsonl"):
            raise MemoryError
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", tight_memory)
    stats = CliRunner().invoke(cli, ["stats", str(huge)])
    assert stats.exit_code == 2 and "Traceback" not in stats.output
    assert stats.stderr.strip() == (
        "pi-session: error: not enough memory: the input is too large to read (is it a Pi session?)"
    )
    listing = CliRunner().invoke(
        cli, ["list", "--all", "--json", "--sessions-dir", str(tmp_path / "sessions")]
    )
    assert listing.exit_code == 0, listing.output
    rows = {Path(r["path"]).name: r for r in map(json.loads, listing.stdout.splitlines())}
    assert rows["huge.jsonl"]["error"] == exporter.discover.TOO_BIG
    assert rows[good.name]["messages"] == 1


def test_integers_past_float_range_in_flags_load_and_render(tmp_path: Path) -> None:
    """Pi reads a custom message's ``display`` and a label's ``label`` by truthiness; an
    integer past 1e308 there was turned into a float to test it for NaN and overflowed: a
    traceback for the label, an entry "could not be shown" for the display (fuzzing
    2026-12-01)."""
    huge = "1" + "0" * 400
    lines = [
        json.dumps(_header()),
        json.dumps(_user("u", None, "hi")),
        '{"type":"custom_message","id":"c","parentId":"u","timestamp":"2026-01-01T00:00:02Z",'
        f'"customType":"x","content":"shown","display":{huge}}}',
        '{"type":"label","id":"l","parentId":"c","timestamp":"2026-01-01T00:00:03Z",'
        f'"targetId":"u","label":{huge}}}',
    ]
    path = tmp_path / "huge.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "huge.html"
    done = CliRunner().invoke(cli, ["export", str(path), "-o", str(out)])
    assert done.exit_code == 0 and "could not be shown" not in done.output, done.output
    page = out.read_text(encoding="utf-8")
    assert all(f'data-entry-id="{i}"' in page for i in "ucl")
    (opening,) = re.findall(r'<article [^>]*data-entry-id="c"[^>]*>', page)
    assert "hide-default" not in opening  # displayed: a huge number is truthy, as in Pi


def test_a_huge_id_is_quoted_short_in_warnings(tmp_path: Path) -> None:
    """Each warning naming an entry quoted its id whole: two entries sharing a 1 MB id wrote
    4 MB of warnings to the terminal (fuzzing 2026-12-01)."""
    huge = "x" * 100_000
    lines = [
        json.dumps(_header()),
        json.dumps(_user(huge, None, "first")),
        json.dumps(_user(huge, huge + "y", "second")),
    ]
    path = tmp_path / "ids.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = CliRunner().invoke(cli, ["export", str(path), "-o", str(tmp_path / "ids.html")])
    assert done.exit_code == 0, done.output[:500]
    warnings = [line for line in done.output.splitlines() if "warning:" in line]
    assert len(warnings) == 2 and all(len(line) < 400 for line in warnings), warnings
    assert "(100,000 characters) already used on line 2" in warnings[0]
    assert "'xxxxxx~1' (100,002 characters)" in warnings[0]  # which one it was kept as
