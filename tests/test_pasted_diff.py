"""A unified diff pasted into a prompt without a fence reads as a diff, in the page and in
the Markdown export; prose, lists and fenced code around it are left as they were."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from exporter.loader import parse_session_bytes
from exporter.markdown_doc import session_markdown
from exporter.pasted_diff import fence_pasted_diffs
from exporter.render import render_session
from tests.browser_util import parse_html

GIT_DIFF = """diff --git a/app.py b/app.py
index 3f2a1bc..9d8e7f0 100644
--- a/app.py
+++ b/app.py
@@ -1,5 +1,5 @@ def main():
 import os
-DEBUG = True
+DEBUG = False

 def main():
     return 0
\\ No newline at end of file"""

PROMPT = f"""Why does this change break the build?

{GIT_DIFF}

- it worked before
- only this file changed"""

VIEWER = MarkdownIt("commonmark")


def norm(text: str) -> str:
    return " ".join(text.split())


def _fences(markdown: str) -> list[tuple[str, str]]:
    return [(t.info, t.content) for t in VIEWER.parse(markdown) if t.type == "fence"]


def test_a_git_diff_is_fenced_whole_and_the_list_after_it_stays_a_list() -> None:
    fenced = fence_pasted_diffs(PROMPT)
    assert _fences(fenced) == [("diff", GIT_DIFF + "\n")]
    items = [t for t in VIEWER.parse(fenced) if t.type == "list_item_open"]
    assert len(items) == 2  # the prose list after the diff: its blank line ended the hunk
    assert fenced.replace("```diff\n", "").replace("\n```", "") == PROMPT  # nothing else


def test_a_bare_hunk_and_a_header_pair_start_a_diff_but_prose_does_not() -> None:
    hunk = "@@ -10,2 +10,3 @@\n-old\n+new\n+added\n ctx"
    assert _fences(fence_pasted_diffs(f"Then:\n{hunk}\nthanks")) == [("diff", hunk + "\n")]
    pair = "--- before.txt\n+++ after.txt\n@@ -1 +1 @@\n-a\n+b"
    assert _fences(fence_pasted_diffs(pair)) == [("diff", pair + "\n")]
    for prose in (
        "- a list\n- of things\n+ and more",
        "@@ -1 +1 @@ is what a hunk header looks like",  # no diff line after it
        "--- a/x\nnot a header pair\n@@ -1 +1 @@",
    ):
        assert fence_pasted_diffs(prose) == prose


def test_a_hunk_ends_where_its_counts_say_even_before_a_minus_line() -> None:
    text = "@@ -1,2 +1,1 @@\n-gone\n same\n- a list item after the diff\n- another"
    fenced = fence_pasted_diffs(text)
    assert _fences(fenced) == [("diff", "@@ -1,2 +1,1 @@\n-gone\n same\n")]
    assert fenced.endswith("```\n- a list item after the diff\n- another")


def test_two_files_and_a_hunk_cut_short_are_one_fence() -> None:
    two = (
        "--- a/one\n+++ b/one\n@@ -1 +1 @@\n-1\n+2\n"
        "--- a/two\n+++ b/two\n@@ -1,9 +1,9 @@\n-3\n+4"  # cut short: 9 lines claimed
    )
    assert _fences(fence_pasted_diffs(two + "\n\nand that is all")) == [("diff", two + "\n")]


def test_code_already_fenced_is_left_alone_and_backticks_inside_do_not_close_the_fence() -> None:
    inside = "```\n@@ -1 +1 @@\n-x\n+y\n```"
    assert fence_pasted_diffs(inside) == inside
    tildes = "~~~~\n@@ -1 +1 @@\n-x\n+y\n~~~~"
    assert fence_pasted_diffs(tildes) == tildes
    ticks = "@@ -1,2 +1,2 @@\n ```\n-````python\n+````text"
    assert _fences(fence_pasted_diffs(ticks)) == [("diff", ticks + "\n")]


def test_crlf_and_a_huge_count_are_handled() -> None:
    assert _fences(fence_pasted_diffs("@@ -1 +1 @@\r\n-a\r\n+b\r\n")) == [
        ("diff", "@@ -1 +1 @@\n-a\n+b\n")
    ]
    huge = "@@ -1,99999999999999999999 +1 @@\n-a\n+b\n\nprose"  # no such hunk: as written
    assert fence_pasted_diffs(huge) == huge
    digits = "@@ -1," + "9" * 200_000 + " +1 @@\n-a\n+b"  # int() of it raised (a review)
    assert fence_pasted_diffs(digits) == digits


def test_a_line_of_inline_code_is_no_fence() -> None:
    """ "```npm test``` fails:" opened a fence in the old tracking, and a real fence after
    it was read as its close: the pasted diff in it was fenced again (a review)."""
    text = "```npm test``` fails:\n\n```\n@@ -1 +1 @@\n-x\n+y\n```\nand then"
    assert fence_pasted_diffs(text) == text


def test_prose_right_after_a_diff_stays_prose_and_git_s_own_headers_stay_in() -> None:
    """ "rename to …" is a line of git's extended header only under its `diff --git` line;
    written under a finished hunk it is prose, and it was taken into the fence (a review),
    as was a `--- end ---` line with no `+++` under it."""
    hunk = "@@ -1,2 +1,2 @@\n-x = 1\n+x = 2\n print(x)"
    for prose in ("rename to something nicer", "--- end of patch ---", "index 1..2 is wrong"):
        fenced = fence_pasted_diffs(f"{hunk}\n{prose}\nthanks")
        assert _fences(fenced) == [("diff", hunk + "\n")], prose
        assert fenced.endswith(f"```\n{prose}\nthanks")
    moved = (
        "diff --git a/old.py b/new.py\nsimilarity index 90%\nrename from old.py\n"
        "rename to new.py\nindex 3f2a1bc..9d8e7f0 100644\n--- a/old.py\n+++ b/new.py\n"
        "@@ -1 +1 @@\n-a\n+b\n"
        "diff --git a/gone.bin b/gone.bin\ndeleted file mode 100644\n"
        "Binary files a/gone.bin and /dev/null differ"
    )
    assert _fences(fence_pasted_diffs(f"{moved}\nok")) == [("diff", moved + "\n")]


def _session(prompt: str) -> bytes:
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/w"},
        {"type": "message", "id": "u", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": [{"type": "text", "text": prompt}]}},
        {"type": "message", "id": "a", "parentId": "u", "timestamp": "2025-01-01T00:00:02Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "- one\n- two"}],
                     "model": "m", "provider": "p", "stopReason": "stop"}},
    ]  # fmt: skip
    return "\n".join(json.dumps(line) for line in lines).encode("utf-8")


def test_the_page_shows_a_pasted_diff_as_highlighted_code_not_a_list() -> None:
    page = parse_html(render_session(parse_session_bytes(_session(PROMPT))))
    prompt = page.entry("u")
    (pre,) = prompt.find_all(lambda e: e.tag == "pre")
    assert norm(pre.text) == norm(GIT_DIFF)
    assert pre.find_all(lambda e: e.tag == "span" and e.has_class("gd"))  # a removed line
    assert pre.find_all(lambda e: e.tag == "span" and e.has_class("gi"))  # an added line
    lists = prompt.find_all(lambda e: e.tag == "li")
    assert [norm(li.text) for li in lists] == ["it worked before", "only this file changed"]
    answer = page.entry("a")  # an answer's own list is untouched
    assert len(answer.find_all(lambda e: e.tag == "li")) == 2


def test_the_last_line_of_a_diff_is_coloured_as_a_change_not_as_an_error() -> None:
    """The lexers run with ``ensurenl=False``: the diff lexer read a last line without a
    line break as an error token, and a final `+new` showed in red (a review)."""
    hunk = "@@ -1,2 +1,2 @@\n x\n-old\n+new"
    page = parse_html(render_session(parse_session_bytes(_session(f"see:\n{hunk}"))))
    (pre,) = page.entry("u").find_all(lambda e: e.tag == "pre")
    assert not pre.find_all(lambda e: e.tag == "span" and e.has_class("err")), pre.text
    added = pre.find_all(lambda e: e.tag == "span" and e.has_class("gi"))
    assert [norm(span.text) for span in added] == ["+new"]


def test_the_markdown_export_fences_a_pasted_diff() -> None:
    document = session_markdown(parse_session_bytes(_session(PROMPT)))
    assert ("diff", GIT_DIFF + "\n") in _fences(document)


_PIECES = [
    "@@ -1,2 +1,2 @@", "@@ -3 +3,4 @@ f()", "-x", "+y", " ctx", "", "\\ No newline",
    "--- a/f", "+++ b/f", "diff --git a/f b/f", "```", "~~~", " ```", "- item", "prose",
]  # fmt: skip


def _unfenced(fenced: str) -> tuple[list[str], list[str]]:
    """The lines without the fences ``fence_pasted_diffs`` adds (an opener ending in
    "diff", closed by the first later line that is the same run of backticks), and what
    each of those fences holds."""
    out: list[str] = []
    held: list[str] = []
    closer: str | None = None
    for line in fenced.split("\n"):
        if closer is None and line.startswith("```") and line.endswith("diff"):
            closer = line[: -len("diff")]
            held.append("")
        elif line == closer:
            closer = None
        else:
            out.append(line)
            if closer is not None:
                held[-1] += line + "\n"
    assert closer is None  # every fence it opened, it closed
    return out, held


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30))
def test_fencing_only_adds_fence_lines_and_every_fence_it_adds_is_closed(
    pieces: list[str],
) -> None:
    text = "\n".join(pieces)
    fenced = fence_pasted_diffs(text)
    kept, held = _unfenced(fenced)
    assert kept == pieces or (not pieces and kept == [""])  # nothing lost, moved or changed
    diffs = [t.content for t in VIEWER.parse(fenced) if t.type == "fence" and t.info == "diff"]
    assert diffs == held  # each fence it added is one code block, closed by nothing inside
