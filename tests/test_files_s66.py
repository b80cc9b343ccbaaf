"""Stop 66: a read that failed (no such file, a folder, an offset past the end) or never
ran counted in the Files table's "Reads" as one that read the file; failed and unrun writes
and edits were already counted apart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.test_tools_s66 import _page, _session_file


def _read(path: str) -> dict[str, Any]:
    return {"name": "read", "args": {"path": path}}


def _said(text: str, error: bool) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": error}


def _rows(html: str) -> dict[str, list[str]]:
    """The Files table's rows: file -> its Reads, Writes and Edits cells as text."""
    start = html.index('<table class="files">')
    body = html[start : html.index("</table>", start)].split("<tbody>", 1)[1]
    rows = {}
    for row in body.split("<tr>")[1:]:
        name = row.split("<code>", 1)[1].split("</code>", 1)[0]
        cells = [cell.split("</td>", 1)[0] for cell in row.split("<td>")[1:4]]
        rows[name] = [
            cell.replace('<span class="muted">', "").replace("</span>", "") for cell in cells
        ]
    return rows


def test_a_read_that_failed_or_never_ran_is_counted_apart(tmp_path: Path) -> None:
    calls = [_read("a.py"), _read("missing.txt"), _read("a.py"), _read("src"), _read("late.py")]
    results = [
        _said("print(1)\n", False),
        _said("ENOENT: no such file or directory, access '/w/missing.txt'", True),
        _said("Offset 90 is beyond end of file (1 lines total)", True),
        _said("EISDIR: illegal operation on a directory, read", True),
        None,  # the turn ended before the tool ran
    ]
    rows = _rows(_page(_session_file(tmp_path, "/w", calls, results)))
    assert rows["a.py"][0] == "1 (and 1 failed)", rows
    assert rows["missing.txt"][0] == "0 (and 1 failed)", rows
    assert rows["src"][0] == "0 (and 1 failed)", rows
    assert rows["late.py"][0] == "0 (and 1 with no result)", rows
    assert all(cells[1:] == ["0", "0"] for cells in rows.values()), rows
