"""Stop 72: inputs of a few KB that made an export take seconds to minutes.

* Highlighting: the size caps (60,000 characters, 1,500 lines) did not bound the time.
  Some Pygments lexers backtrack: a fence of 2,000 tabs tagged ``easytrieve`` took 12 s
  (as the cube of its size, inside ONE regular expression match), 20 C# fences of 1,500
  one-letter lines 24 s. A text now gets a CPU-time budget (a clock read between tokens,
  and in the main thread a ``SIGVTALRM`` timer, which ``re`` gives way to); past it the
  text is shown plain and whole. Each text is judged alone: a page does not depend on what
  else its process rendered (a first version stopped colouring a lexer for the rest of the
  process, and pages changed with -j).
* An edit's diff, when Pi recorded none, was ``difflib`` over the whole texts: 32,000
  lines a side of 200 kinds took 6 s, 64,000 15 s. The lines both sides start and end
  with are matched first; past a size, the rest is shown removed, then added, and the
  hunk says so."""

from __future__ import annotations

import difflib
import json
import random
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import exporter.render.markup as markup
from exporter.render.tools import UNMATCHED_NOTE, _unified, computed_diff
from tests.test_page_s65 import _prompt, _session

EASYTRIEVE_BOMB = "\t" * 2000  # 12 s in Pygments 2.19 before the budget
CSHARP_SLOW = "b\n" + "a\n" * 1499  # ~1 s a fence (1,500 lines: under the size caps)


@pytest.fixture(autouse=True)
def fresh_highlighting() -> None:
    """Nothing cached by another test (or by this one's)."""
    markup._highlighted.cache_clear()
    markup._highlighted_head.cache_clear()


def _answer(text: str) -> dict[str, object]:
    return {"role": "assistant", "api": "x", "provider": "anthropic", "model": "m",
            "content": [{"type": "text", "text": text}], "stopReason": "stop"}  # fmt: skip


PYTHON = "def shout(word):\n    return word.upper() + '!'  # loud\n" * 3


def test_code_out_of_time_is_shown_plain_and_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "<span" in "".join(markup.highlight_lines(PYTHON, "python"))  # with time: coloured
    markup._highlighted.cache_clear()
    monkeypatch.setattr(markup, "HIGHLIGHT_CPU_SECONDS", 1e-6)
    monkeypatch.setattr(markup, "HIGHLIGHT_CPU_SECONDS_PER_CHAR", 0.0)
    lines = markup.highlight_lines(PYTHON, "python")
    assert lines == [markup.escape(line, quote=False) for line in PYTHON.split("\n")]
    # each text alone: with time again, the same lexer colours the next one
    monkeypatch.undo()
    assert "<span" in "".join(markup.highlight_lines(PYTHON + "x = 1\n", "py"))


def test_an_error_pygments_raises_for_the_timer_is_out_of_time_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pygments compiles a sub-lexer's rules (a script in an HTML fence) the first time it
    is used, and turns any exception meanwhile into a ValueError: the timer's went out as
    "entry could not be shown" and the whole entry was dropped. Other errors still rise."""

    def compiling(lexer: object, text: str) -> Iterator[str]:
        try:
            raise markup._TooSlow
        except Exception as error:
            raise ValueError("uncompilable regex in state 'root'") from error
        yield ""  # (a generator, as the real one)

    monkeypatch.setattr(markup, "_html_lines", compiling)
    plain = markup.highlight_lines("<script>x</script>", "html")
    assert plain == ["&lt;script&gt;x&lt;/script&gt;"]

    def broken(lexer: object, text: str) -> Iterator[str]:
        raise ValueError("a real bug")
        yield ""

    monkeypatch.setattr(markup, "_html_lines", broken)
    with pytest.raises(ValueError, match="a real bug"):
        markup.highlight_lines("<b>y</b>", "html")


def test_without_interval_timers_the_clock_alone_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows has no ``setitimer``: highlighting works, stopped by the clock only."""
    monkeypatch.delattr(signal, "setitimer")
    assert "<span" in "".join(markup.highlight_lines(PYTHON, "python"))
    assert markup.highlight_lines(CSHARP_SLOW, "csharp") == CSHARP_SLOW.split("\n")


def test_a_lexer_stuck_inside_one_match_is_stopped_and_the_signal_state_restored() -> None:
    before = time.thread_time()
    lines = markup.highlight_lines(EASYTRIEVE_BOMB, "easytrieve")
    assert time.thread_time() - before < 5  # 12 s (and more on a slower machine) before
    assert lines == [EASYTRIEVE_BOMB]
    assert signal.getsignal(signal.SIGVTALRM) == signal.SIG_DFL
    assert signal.getitimer(signal.ITIMER_VIRTUAL) == (0.0, 0.0)


def test_a_callers_own_timer_signal_is_left_alone() -> None:
    """A library user's SIGVTALRM handler stays; the clock between tokens still limits."""
    seen: list[int] = []

    def mine(signum: int, frame: object) -> None:
        seen.append(signum)

    previous = signal.signal(signal.SIGVTALRM, mine)
    try:
        lines = markup.highlight_lines(CSHARP_SLOW, "csharp")
        assert signal.getsignal(signal.SIGVTALRM) is mine and not seen
    finally:
        signal.signal(signal.SIGVTALRM, previous)
    assert lines == (CSHARP_SLOW).split("\n")


def test_in_another_thread_the_clock_between_tokens_stops_a_slow_lexer() -> None:
    found: list[list[str]] = []
    spent: list[float] = []

    def work() -> None:
        before = time.thread_time()
        found.append(markup.highlight_lines(CSHARP_SLOW, "csharp"))
        spent.append(time.thread_time() - before)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(60)
    assert found == [(CSHARP_SLOW).split("\n")] and spent[0] < 0.9  # ~1.1 s before


def test_the_export_of_a_pasted_fence_bomb_ends_and_shows_the_code(tmp_path: Path) -> None:
    session = tmp_path / "bomb.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "s72", "cwd": "/w",
         "timestamp": "2026-01-01T10:00:00.000Z"},
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2026-01-01T10:01:00.000Z",
         "message": {"role": "user", "content": "show me", "timestamp": 1}},
        {"type": "message", "id": "b", "parentId": "a", "timestamp": "2026-01-01T10:02:00.000Z",
         "message": {**_answer(f"```easytrieve\n{EASYTRIEVE_BOMB}\n```\n\n```python\nx = 1\n```"),
                     "timestamp": 2}},
    ]  # fmt: skip
    session.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    out = tmp_path / "bomb.html"
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    done = subprocess.run(
        [sys.executable, "-m", "exporter", "export", str(session), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before < 8  # 12-20 s before
    page = out.read_text(encoding="utf-8")
    assert EASYTRIEVE_BOMB in page  # the code, whole (plain)
    assert "x = <span class=mi>1</span>" in page  # the next fence coloured as before


def test_a_slow_fence_leaves_the_others_of_its_language_coloured() -> None:
    """Each text is judged alone, so a page is the same whichever process renders which
    entry (-j): the slow fence is plain, the next C# fence coloured as before."""
    fences = f"```csharp\n{CSHARP_SLOW}```\n\n```csharp\nclass A {{ int x = 1; }}\n```"
    page = _session(_prompt("go"), _answer(fences))
    assert "<span class=k>class</span>" in page and "\na\na\na\n" in page


# --- the diff of an edit Pi recorded none for ---------------------------------------------


def _lines(count: int, kinds: int, seed: int) -> list[str]:
    pick = random.Random(seed)
    return [f"x{pick.randrange(kinds)}\n" for _ in range(count)]


def test_a_huge_edit_of_repeating_lines_is_shown_removed_then_added_and_says_so() -> None:
    old, new = _lines(32_000, 200, 1), _lines(32_000, 200, 2)
    before = time.thread_time()
    diff = computed_diff([("".join(old), "".join(new))], "big.txt")
    assert time.thread_time() - before < 3  # 6 s before
    body = diff.splitlines(keepends=True)
    assert body[:3] == ["--- big.txt\n", "+++ big.txt\n", f"@@ replacement{UNMATCHED_NOTE} @@\n"]
    removed = [line[1:] for line in body if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in body if line.startswith("+") and not line.startswith("+++")]
    # nothing lost: every line of each side, in order, between the lines they share
    start = next(k for k, (a, b) in enumerate(zip(old, new, strict=True)) if a != b)
    end = next(k for k in range(len(old)) if old[-1 - k] != new[-1 - k])
    assert removed == old[start : len(old) - end] and added == new[start : len(new) - end]


def test_a_huge_edit_that_changes_little_is_diffed_as_difflib_diffs_it() -> None:
    """Past the size, the lines both sides start and end with are matched first: here the
    hunk is the one the whole diff has (2,100 lines a side, one changed: 4.4 M line pairs;
    in general it is another valid diff of the middle)."""
    old = [f"line {k}\n" for k in range(2_100)]
    new = [*old[:1000], "changed\n", *old[1001:]]
    assert len(old) * len(new) > 4_000_000
    assert _hunks(*_unified(old, new)) == _hunks(list(difflib.unified_diff(old, new, n=2)), True)
    assert _unified(old, list(old)) == ([], True)
    grown = [*old, "one more\n"]  # a side that is the other and more
    assert _hunks(*_unified(old, grown)) == _hunks(
        list(difflib.unified_diff(old, grown, n=2)), True
    )


def _hunks(diff: list[str], matched: bool) -> tuple[list[str], bool]:
    """The diff's lines but its hunk headers' numbers (computed_diff writes its own)."""
    return [line for line in diff if not line.startswith("@@")], matched
