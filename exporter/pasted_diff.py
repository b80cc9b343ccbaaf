"""A unified diff pasted into a prompt without a code fence, fenced as ``diff``.

Read as Markdown, a pasted diff's ``-`` lines became a bullet list, its ``+`` lines
paragraphs and its ``@@`` headers text: the change the user asked about was unreadable.
A run is taken as a diff only from a line no prose starts with (``diff --git``, a
``---``/``+++`` pair over a hunk, or a hunk header followed by diff lines), and a hunk
ends where its header's line counts say it does, so a list written after the diff stays a
list. Text inside an existing code fence is left alone.
"""

from __future__ import annotations

import re

_HUNK = re.compile(r"@@ -\d+(?:,(\d{1,9}))? \+\d+(?:,(\d{1,9}))? @@")  # counts: int() stays cheap
_FILE_START = re.compile(r"diff --git |diff -")
# git's extended header: only right after its `diff --git` line ("rename to a nicer name"
# written under a diff is prose)
_EXTENDED_HEADER = re.compile(
    r"(?:index [0-9a-f]+\.\.[0-9a-f]+|new file mode |deleted file mode |old mode |new mode |"
    r"similarity index |dissimilarity index |rename from |rename to |copy from |copy to |"
    r"Binary files )"
)
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`+")


def fence_pasted_diffs(text: str) -> str:
    """``text`` with each unfenced unified diff in it wrapped in a ```` ```diff ```` fence."""
    if "@@ -" not in text:  # no hunk header: nothing to do (most prompts)
        return text
    lines = text.replace("\r\n", "\n").split("\n")
    out: list[str] = []
    fence: str | None = None  # the fence the current line is inside, if any
    index = 0
    while index < len(lines):
        line = lines[index]
        if fence is None:
            end = _diff_run_end(lines, index)
            if end > index:
                out.extend(_fenced(lines[index:end]))
                index = end
                continue
            fence = _opens(line)
        elif _closes(line, fence):
            fence = None
        out.append(line)
        index += 1
    return "\n".join(out)


def _opens(line: str) -> str | None:
    """The fence a line opens: "```npm test``` fails" is inline code, not a fence (a
    backtick fence's info string holds no backtick, as CommonMark says)."""
    match = _FENCE.match(line)
    if match is None:
        return None
    fence = match.group(1)
    if fence[0] == "`" and "`" in line[match.end() :]:
        return None
    return fence


def _closes(line: str, fence: str) -> bool:
    match = _FENCE.match(line)
    return bool(
        match
        and match.group(1)[0] == fence[0]
        and len(match.group(1)) >= len(fence)
        and not line[match.end() :].strip()
    )


def _fenced(run: list[str]) -> list[str]:
    """The run in a fence longer than any backtick run inside it (a context line
    `` ```` `` would otherwise close it)."""
    longest = max((len(m) for line in run for m in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}diff", *run, fence]


def _starts_diff(lines: list[str], index: int) -> bool:
    line = lines[index]
    following = lines[index + 1] if index + 1 < len(lines) else ""
    if line.startswith("diff --git "):
        return True
    if line.startswith("--- ") and following.startswith("+++ "):
        return index + 2 < len(lines) and _HUNK.match(lines[index + 2]) is not None
    return _HUNK.match(line) is not None and following[:1] in (" ", "+", "-", "\\")


def _diff_run_end(lines: list[str], start: int) -> int:
    """The index after the diff starting at ``start`` (``start`` itself: none starts there)."""
    if not _starts_diff(lines, start):
        return start
    index = start
    in_header = False  # after a `diff --git` line, before the file's first hunk
    while index < len(lines):
        line = lines[index]
        hunk = _HUNK.match(line)
        if hunk is not None:
            index, in_header = _hunk_end(lines, index + 1, hunk), False
            continue
        if _FILE_START.match(line):
            in_header = True
        elif not (
            (in_header and _EXTENDED_HEADER.match(line))
            or _is_file_header_pair(lines, index)
            or (index > start and line.startswith("+++ ") and lines[index - 1].startswith("--- "))
        ):
            break
        index += 1
    while index > start and not lines[index - 1].strip():
        index -= 1  # trailing blank lines stay outside the fence
    return index


def _hunk_end(lines: list[str], index: int, hunk: re.Match[str]) -> int:
    """The index after a hunk's body: as many lines as its header counts, or fewer where a
    line cannot be part of it (a pasted hunk that was cut short, or whose counts were
    edited by hand)."""
    old = int(hunk.group(1) or 1)
    new = int(hunk.group(2) or 1)
    while index < len(lines) and (old > 0 or new > 0):
        line = lines[index]
        mark = line[:1]
        if mark == "-" and old > 0 and not _is_file_header_pair(lines, index):
            old -= 1
        elif mark == "+" and new > 0:
            new -= 1
        elif mark in (" ", "") and old > 0 and new > 0:
            old -= 1  # a context line (a blank one lost its space to an editor)
            new -= 1
        elif mark != "\\":  # "\ No newline at end of file" counts for neither side
            break
        index += 1
    if index < len(lines) and lines[index].startswith("\\"):
        index += 1  # the last line's "\ No newline at end of file"
    return index


def _is_file_header_pair(lines: list[str], index: int) -> bool:
    """A ``--- a/file`` / ``+++ b/file`` pair: the next file's header, not a removed line."""
    return (
        lines[index].startswith("--- ")
        and index + 1 < len(lines)
        and lines[index + 1].startswith("+++ ")
    )
