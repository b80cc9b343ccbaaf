"""Stop 66 (helper hunt: tool views and the Files table), checked against Pi 0.73.1's own
tools, run here in a temporary folder:

* One file was several rows of the Files table when the calls named it ``@a.py``,
  ``~/proj/a.py`` and ``/home/alice/proj/a.py``: Pi's ``resolveToCwd`` drops the ``@`` and
  expands ``~``, and the table did neither.
* Half of Pi's diffs got no gutter (``-2 b``: the widest line number has no space before
  it), so on a phone a wrapped line went on under its line number.
* A bash call that succeeded and printed "exit code: 7" last was labelled "exit 7": Pi's
  bash says a code only when the command fails.
* A write of ``"a\\n\\tb\\n\\n\\n"`` said "2 lines" and showed two; one of CRLF lines
  showed a blank line that is not in the file.
"""

from __future__ import annotations

import json
import os
import posixpath
import subprocess
from pathlib import Path
from typing import Any

from exporter.loader import load_session
from exporter.render import render_session
from exporter.render.files_touched import file_key
from exporter.render.tools import diff_gutter
from tests.browser_util import CODEX_PATH, PageServer, Viewer

pytest_plugins = ["tests.browser_util"]

NO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
USAGE = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "cost": NO_COST}
PHONE = {"width": 390, "height": 844}

#: Runs Pi's own tools (``calls``) in ``cwd``, or its ``resolveToCwd`` on ``paths``;
#: prints what they returned, as JSON. A tool that throws is an error result, as Pi's
#: agent loop records it.
PI_TOOLS = r"""
import { pathToFileURL } from "node:url";
import { dirname, join } from "node:path";
const [pkg, specText] = process.argv.slice(1);
const spec = JSON.parse(specText);
if (spec.paths) {
  const utils = await import(pathToFileURL(join(dirname(pkg), "core/tools/path-utils.js")).href);
  console.log(JSON.stringify(spec.paths.map((p) => utils.resolveToCwd(p, spec.cwd))));
} else {
  const pi = await import(pathToFileURL(pkg).href);
  const tools = { bash: pi.createBashTool(spec.cwd), write: pi.createWriteTool(spec.cwd),
                  edit: pi.createEditTool(spec.cwd) };
  const out = [];
  for (const [i, call] of spec.calls.entries()) {
    try {
      const result = await tools[call.name].execute("c" + i, call.args, undefined, undefined);
      out.push({ content: result.content, details: result.details ?? {}, isError: false });
    } catch (error) {
      out.push({ content: [{ type: "text", text: error.message }], details: {}, isError: true });
    }
  }
  console.log(JSON.stringify(out));
}
"""


def _pi(pi_pkg: Path, spec: dict[str, Any], home: str | None = None) -> Any:
    """What Pi's own code returns for ``spec`` (see PI_TOOLS)."""
    env = {**os.environ, **({"HOME": home} if home else {})}
    done = subprocess.run(
        ["node", "--input-type=module", "-e", PI_TOOLS, str(pi_pkg), json.dumps(spec)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _session_file(
    folder: Path, cwd: str, calls: list[dict[str, Any]], results: list[dict[str, Any] | None]
) -> Path:
    """A Pi session file of one prompt, one assistant turn making ``calls``, and their
    ``results`` (None: no result), as Pi's SessionManager writes them."""
    stamp = "2026-12-07T10:00:{:02d}.000Z".format
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s66", "timestamp": stamp(0), "cwd": cwd},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": stamp(1),
         "message": {"role": "user", "content": "go", "timestamp": 1}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": stamp(2),
         "message": {"role": "assistant", "api": "anthropic-messages", "provider": "anthropic",
                     "model": "claude-sonnet-4-5", "usage": USAGE, "stopReason": "toolUse",
                     "timestamp": 2,
                     "content": [{"type": "toolCall", "id": f"call{i}", "name": c["name"],
                                  "arguments": c["args"]} for i, c in enumerate(calls)]}},
    ]  # fmt: skip
    parent = "a1"
    for index, (call, result) in enumerate(zip(calls, results, strict=True)):
        if result is None:
            continue
        entry_id = f"r{index}"
        message = {"role": "toolResult", "toolCallId": f"call{index}", "toolName": call["name"],
                   "timestamp": 3 + index, **result}  # fmt: skip
        lines.append({"type": "message", "id": entry_id, "parentId": parent,
                      "timestamp": stamp(3 + index), "message": message})  # fmt: skip
        parent = entry_id
    path = folder / "session.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    return path


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    """An edit call of one replacement."""
    return {"name": "edit", "args": {"path": path, "edits": [{"oldText": old, "newText": new}]}}


def _edit_result(path: str, diff: str) -> dict[str, Any]:
    """Pi's answer to an edit it made (``diff``: as its tool returns one)."""
    text = f"Successfully replaced 1 block(s) in {path}."
    return {
        "content": [{"type": "text", "text": text}],
        "details": {"diff": diff, "firstChangedLine": 1},
        "isError": False,
    }


def _page(path: Path) -> str:
    return render_session(load_session(path))


def _tool_boxes(html: str, name: str) -> list[str]:
    """Each call of tool ``name`` in the page, from its head to the next tool's box."""
    marker = f'<span class="tool-name">{name}</span>'
    return [part.split('<div class="tool ', 1)[0] for part in html.split(marker)[1:]]


# --- 1. one file, one row ----------------------------------------------------------------


def test_pi_s_spellings_of_one_file_are_one_row_of_the_files_table(tmp_path: Path) -> None:
    """The hunter's session (Pi applied all three edits to the same a.py): three rows, two
    of them "~/proj/a.py". One row now, named without Pi's "@"."""
    cwd = "/home/alice/proj"
    calls = [
        _edit("@a.py", "a = 1", "a = 10"),
        _edit("~/proj/a.py", "b = 2", "b = 20"),
        _edit("/home/alice/proj/a.py", "a = 10", "a = 100"),
        {"name": "read", "args": {"path": "a.py"}},
    ]
    diffs = [
        "-1 a = 1\n+1 a = 10\n 2 b = 2",
        " 1 a = 10\n-2 b = 2\n+2 b = 20",
        "-1 a = 10\n+1 a = 100\n 2 b = 20",
    ]  # Pi 0.73.1's, as recorded
    results: list[dict[str, Any] | None] = [
        _edit_result(c["args"]["path"], diff) for c, diff in zip(calls, diffs, strict=False)
    ]
    results.append({"content": [{"type": "text", "text": "a = 100\nb = 20\n"}], "isError": False})
    html = _page(_session_file(tmp_path, cwd, calls, results))
    start = html.index('<table class="files">')
    table = html[start : html.index("</table>", start)]
    rows = table.split("<tbody>", 1)[1].split("<tr>")[1:]
    assert len(rows) == 1, rows
    cells = [cell.split("<", 1)[0] for cell in rows[0].split("<td>")[1:]]
    assert rows[0].startswith('<th scope="row"><code>a.py</code>'), rows[0]
    assert cells[:4] == ["1", "0", "3", "+3 −3"], cells


SPELLINGS = ["@a.py", "~/proj/a.py", "/home/alice/proj/a.py", "a.py", "./a.py", "@./a.py",
             "@~/proj/a.py", "~", "~/", "~/x/../proj/a.py", "~bob/a.py", "@@a.py", "a\u00a0b.py",
             "a\u3000b.py", "@/etc/hosts", "src/../../a.py"]  # fmt: skip


def test_a_file_key_is_where_pi_s_tools_open_the_file(pi_pkg: Path) -> None:
    """Keyed as Pi's own ``resolveToCwd`` resolves each spelling (its home: the one the
    cwd is in, as the page's ``~``), normalised (Pi leaves ``~/x/../a`` as it is: the
    same file)."""
    cwd = "/home/alice/proj"
    resolved = _pi(pi_pkg, {"cwd": cwd, "paths": SPELLINGS}, home="/home/alice")
    assert [file_key(path, cwd) for path in SPELLINGS] == list(map(posixpath.normpath, resolved))


def test_a_home_path_is_never_the_file_of_that_name_in_the_cwd() -> None:
    """With no home to expand ``~`` to (a cwd outside /home and /Users, or none), a ``~``
    path is its own row, not the folder named "~" in the cwd; a Codex patch's ``~/a.py``
    is that folder (Codex expands no ``~``)."""
    assert file_key("~/a.py", "/srv/proj") != file_key("./~/a.py", "/srv/proj")
    assert file_key("~/a.py", "") != file_key("./~/a.py", "")
    assert file_key("~", "proj") != file_key("~", "proj", as_pi=False)
    assert file_key("~/a.py", "/srv/proj") == file_key("@~/./a.py", "/srv/proj")
    assert file_key("~/a.py", "/home/alice/p", as_pi=False) == "/home/alice/p/~/a.py"


# --- 2. the diff gutter ----------------------------------------------------------------


WIDE = "b = " + " + ".join(f"value_{n}" for n in range(40))  # wraps on a phone


def _pi_edit_diffs(pi_pkg: Path, folder: Path) -> list[str]:
    """Diffs Pi's edit tool returns: around line 2 of a short file (one-digit numbers),
    around line 150 (three-digit ones, the widest without a space before it)."""
    (folder / "short.py").write_text("a = 1\nb = 2\nc = 3\n", encoding="utf-8")
    (folder / "long.txt").write_text(
        "".join(f"line {n}\n" for n in range(1, 201)), encoding="utf-8"
    )
    calls = [_edit("short.py", "b = 2", WIDE), _edit("long.txt", "line 150\n", "LINE 150\n")]
    results = _pi(pi_pkg, {"cwd": str(folder), "calls": calls})
    assert not any(r["isError"] for r in results), results
    return [r["details"]["diff"] for r in results]


def test_a_diff_gutter_counts_the_widest_line_number_pi_wrote(pi_pkg: Path, tmp_path: Path) -> None:
    """``-2 b`` and ``-150 x``: marker, number, space. The widest number has no padding, so
    a gutter that needed a space after the marker was found in neither diff."""
    short, long = _pi_edit_diffs(pi_pkg, tmp_path)
    assert "-2 b = 2" in short and "-150 line 150" in long, (short, long)
    assert (diff_gutter(short), diff_gutter(long)) == (3, 5)


def test_a_wrapped_line_of_pi_s_diff_goes_on_past_its_line_number(
    pi_pkg: Path, tmp_path: Path, viewer: Viewer, page_server: PageServer
) -> None:
    """On a phone the long added line wraps; its rest starts under its code ("+2 " before
    it), not under the line number."""
    diff = _pi_edit_diffs(pi_pkg, tmp_path)[0]
    calls = [_edit("short.py", "b = 2", WIDE)]
    html = _page(_session_file(tmp_path, str(tmp_path), calls, [_edit_result("short.py", diff)]))
    page = viewer.open(page_server.publish("s66-gutter.html", html), viewport=PHONE, is_mobile=True)
    starts = page.evaluate(
        """() => {
          const ins = document.querySelector('pre.diff > ins');
          const text = ins.firstChild, one = document.createRange();
          one.setStart(text, 0); one.setEnd(text, 1);
          const ch = one.getBoundingClientRect().width, all = document.createRange();
          all.selectNodeContents(ins);
          const tops = new Map();
          for (const box of all.getClientRects()) {
            if (!box.width) continue;
            const top = Math.round(box.top);
            tops.set(top, Math.min(tops.get(top) ?? Infinity, box.left));
          }
          return {ch, lefts: [...tops.values()]};
        }"""
    )
    first, *rest = starts["lefts"]
    assert rest, starts  # the line wraps
    for left in rest:
        assert abs(left - first - 3 * starts["ch"]) < 1, starts
    assert '<pre class="diff g3">' in html  # the gutter: marker, number, space
    viewer.assert_clean()


# --- 3. an exit code only where the tool said one ----------------------------------------


def test_a_bash_call_shows_an_exit_code_only_when_pi_s_bash_reported_one(
    pi_pkg: Path, tmp_path: Path
) -> None:
    """Pi's bash ran each command: the two that succeeded and printed an "exit code" last
    have none; the failed one says Pi's code, not the one it printed."""
    commands = ["echo 'exit code: 7'", 'true; echo "exit code: $?"',
                "echo 'killed: exit code 137'; exit 2"]  # fmt: skip
    calls = [{"name": "bash", "args": {"command": c}} for c in commands]
    results = _pi(pi_pkg, {"cwd": str(tmp_path), "calls": calls})
    assert [r["isError"] for r in results] == [False, False, True], results
    html = _page(_session_file(tmp_path, str(tmp_path), calls, results))
    heads = [box.split("</h4>", 1)[0] for box in _tool_boxes(html, "bash")]
    assert ['<span class="status">' in head for head in heads] == [False, False, True], heads
    assert heads[2].endswith('<span class="status">error, exit 2</span>'), heads[2]


def test_a_codex_shell_call_that_failed_keeps_its_exit_code() -> None:
    """The Codex import writes a failure's code as Pi's bash does: still shown."""
    html = render_session(load_session(CODEX_PATH))
    heads = [box.split("</h4>", 1)[0] for box in _tool_boxes(html, "bash")]
    assert any(head.endswith('<span class="status">error, exit 1</span>') for head in heads)


# --- 4. a write's lines as written ------------------------------------------------------

WRITES = {
    "trail.txt": ("a   \n\tb\t\n\n\n", 4, ""),
    "crlf.bat": ("echo a\r\necho b\r\n", 2, " · CRLF line ends"),
    "lone.txt": ("progress 10%\rprogress 100%\n", 1, ""),
    "open.py": ("x = 1", 1, ""),
    "blank.txt": ("\n", 1, ""),
    "long.py": ("".join(f"n{k} = {k}\n" for k in range(20)) + "\n\n\n", 23, ""),
}


def test_a_write_shows_every_line_it_wrote_and_no_other(
    pi_pkg: Path, tmp_path: Path, viewer: Viewer, page_server: PageServer
) -> None:
    """Pi's write tool wrote each file; the view counts its lines as ``wc -l`` does (one
    more for a last line without its line break) and the page draws that many: trailing
    blank lines too (in a long file's fold), no phantom line for a CRLF end."""
    calls = [
        {"name": "write", "args": {"path": n, "content": c}} for n, (c, _, _) in WRITES.items()
    ]
    results = _pi(pi_pkg, {"cwd": str(tmp_path), "calls": calls})
    for name, (content, _, _) in WRITES.items():
        assert (tmp_path / name).read_bytes() == content.encode("utf-8")
    html = _page(_session_file(tmp_path, str(tmp_path), calls, results))
    boxes = _tool_boxes(html, "write")
    for box, (name, (_, lines, crlf)) in zip(boxes, WRITES.items(), strict=True):
        said = f"{lines} line{'s' if lines != 1 else ''}{crlf}"
        assert f'<span class="sub">{said}</span>' in box, name
        assert "\r" not in box, name
    page = viewer.open(page_server.publish("s66-writes.html", html))
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    drawn = page.evaluate(
        """() => [...document.querySelectorAll('.tool-write')].map(tool => {
          let lines = 0;
          for (const pre of tool.querySelectorAll('pre.code')) {
            const style = getComputedStyle(pre);
            const inner = pre.clientHeight - parseFloat(style.paddingTop)
              - parseFloat(style.paddingBottom);
            lines += Math.round(inner / parseFloat(style.lineHeight));
          }
          return lines;
        })"""
    )
    assert drawn == [lines for _, lines, _ in WRITES.values()]
    viewer.assert_clean()
