"""Stop 68, the Markdown export: one function removes an earlier export's images (two copies
did, one importing the other's private pattern); an underlined heading of several lines
outside an entry kept its lines soft, so GitHub joined them; an image whose bytes are not
in the file (a redacted copy empties an image that is no picture) read "0 bytes"; and the
values the page shows under "Not of the type Pi writes, so shown as written" were dropped
without a word, with "empty message" or "no summary" said over them."""

from __future__ import annotations

import base64
import html
import inspect
import json
import re
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from click.testing import CliRunner
from cmarkgfm.cmark import Options
from markdown_it import MarkdownIt

from exporter import assets_swap
from exporter.cli import cli
from exporter.markdown_text import prose
from tests.conftest import Build

ODD_SAID = "Not of the type Pi writes, so shown as written:"


def _export(source: Path, out: Path, *options: str) -> str:
    """``pi-session export source -o out [options]``: the file written (Markdown or HTML by
    its suffix)."""
    done = CliRunner().invoke(cli, ["export", str(source), "-o", str(out), *options])
    assert done.exit_code == 0, done.output
    return out.read_text(encoding="utf-8")


# --- 1: one function removes an earlier export's images -------------------------------------


PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def test_one_public_function_removes_only_an_earlier_exports_images(tmp_path: Path) -> None:
    from exporter.markdown_images import remove_earlier_images  # (none before: two copies)

    folder = tmp_path / "notes.assets"
    folder.mkdir()
    for name in ("image-001.png", "image-002.jpg", "image-1234.webp", "image-1.png", "mine.txt"):
        (folder / name).write_bytes(b"x")
    (folder / "image-003.gif").mkdir()  # a folder of that name is not an image of ours
    remove_earlier_images(folder, {"image-001.png"})
    left = sorted(path.name for path in folder.iterdir())
    assert left == ["image-001.png", "image-003.gif", "image-1.png", "mine.txt"]
    remove_earlier_images(tmp_path / "not-there", set())  # no folder: nothing to do
    # the staged export's commit uses it, not a copy of the private pattern
    assert "remove_earlier_images" in inspect.getsource(assets_swap.StagedImages.commit)
    assert "_OURS" not in inspect.getsource(assets_swap)


def test_a_second_export_with_images_still_removes_the_first_ones_stale_images(
    write_session: Any, tmp_path: Path
) -> None:
    """The behaviour through the CLI, unchanged: the commit removes what it no longer links."""
    image = {"type": "image", "mimeType": "image/png", "data": base64.b64encode(PNG).decode()}
    prompt = Build.user("u1", None, "look")
    prompt["message"]["content"] = [{"type": "text", "text": "look"}, image]
    source = write_session([Build.header(), prompt])
    folder = tmp_path / "doc.assets"
    folder.mkdir()
    (folder / "image-007.png").write_bytes(b"old")
    (folder / "kept.txt").write_text("mine", encoding="utf-8")
    document = _export(source, tmp_path / "doc.md", "--images", "files")
    assert "](doc.assets/image-001.png)" in document
    assert sorted(path.name for path in folder.iterdir()) == ["image-001.png", "kept.txt"]
    assert (folder / "image-001.png").read_bytes() == PNG


# --- 2: an underlined heading of several lines keeps its lines ------------------------------


#: Titles of several lines over a "===" or "---" rule, at the top level, in a quote and in a
#: list item, with a paragraph of several lines after them.
UNDERLINED = [
    "Release notes\nfor version 2\n===\n\nbody\nmore",
    "first line\nsecond line\nthird line\n---",
    "> quoted title\n> over two lines\n> ===\n>\n> after",
    "- item title\n  on two lines\n  ---\n- next",
    "a `span` title *\nwhose first line ends in a star\n===",
]


@pytest.mark.parametrize("text", UNDERLINED)
def test_an_underlined_heading_outside_an_entry_keeps_its_lines(text: str) -> None:
    """``prose`` without an entry's heading above (``below`` 0) left such a title's line
    breaks soft: markdown-it and GitHub showed one line, "Release notes for version 2",
    where the page (markdown-it with ``breaks``) shows two. Read as the page reads the
    source, and as GitHub reads it with every soft break a hard one."""
    said = prose(text)
    plain = MarkdownIt("commonmark", {"html": False})
    page = MarkdownIt("commonmark", {"html": False, "breaks": True})
    assert plain.render(said) == page.render(text)
    wanted = cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_HARDBREAKS)
    assert cmarkgfm.github_flavored_markdown_to_html(said) == wanted
    assert [t.tag for t in plain.parse(said) if t.type == "heading_open"] == [
        t.tag for t in page.parse(text) if t.type == "heading_open"
    ]


def test_inside_an_entry_the_heading_is_still_moved_below_it() -> None:
    """Under an entry's heading it becomes a ``#`` heading one level under it, as before."""
    said = prose("Release notes\nfor version 2\n===\n\nbody\nmore", 3)
    assert said.split("\n")[0] == "#### Release notes for version 2"
    assert "body\\\nmore" in said


# --- 3: an image whose bytes are not in the file does not read "0 bytes" -------------------


def _image_session(write_session: Any, data: Any) -> Path:
    """A prompt with an image block of ``data`` and a v1-style attachment of the same."""
    prompt = Build.user("u1", None, "see")
    image = {"type": "image", "mimeType": "image/png", "data": data}
    prompt["message"]["content"] = [{"type": "text", "text": "see"}, image]
    return write_session([Build.header(), prompt])


def test_a_redacted_image_that_is_no_picture_is_not_said_to_be_empty(
    write_session: Any, tmp_path: Path
) -> None:
    """`export --redact --format md`: a redacted copy leaves out the bytes of an image that
    is neither a picture nor text (it cannot be scanned), and the note read "image/png,
    0 bytes", as if the file had held an empty image."""
    raw = bytes(range(256)) * 4  # 1 KB, no picture and no text
    source = _image_session(write_session, base64.b64encode(raw).decode())
    plain = _export(source, tmp_path / "plain.md")
    assert "*[image/png, 1 KB: not shown: unsupported or invalid data]*" in plain
    redacted = _export(source, tmp_path / "redacted.md", "--redact")
    assert "0 bytes" not in redacted
    note = "*[image/png: not shown: its bytes are not in this file (a redacted copy leaves out"
    assert note in redacted


def test_a_v1_attachment_whose_bytes_were_left_out_keeps_its_size(
    write_session: Any, tmp_path: Path
) -> None:
    raw = bytes(range(256)) * 4
    attached = {"id": "a1", "type": "image", "fileName": "shot.png", "mimeType": "image/png",
                "size": len(raw), "content": base64.b64encode(raw).decode()}  # fmt: skip
    line = {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "see", "attachments": [attached]}}  # fmt: skip
    source = write_session([Build.header(version=1), line])
    redacted = _export(source, tmp_path / "v1.md", "--redact")
    assert "*Attached image:* `shot.png` (image/png, 1,024 bytes)" in redacted
    assert "0 bytes" not in redacted and "its bytes are not in this file" in redacted


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ([1, 2], "its data is a list, not base64 text"),
        (12345, "its data is a number, not base64 text"),
        (None, "the block holds no data"),
    ],
)
def test_image_data_that_is_not_text_is_said_so(
    write_session: Any, tmp_path: Path, data: Any, said: str
) -> None:
    document = _export(_image_session(write_session, data), tmp_path / "odd.md")
    assert f"*[image/png: not shown: {said}]*" in document
    assert "0 bytes" not in document


# --- 4: values not of the type Pi writes, shown as written as on the page --------------------


def _user(content: Any) -> dict[str, Any]:
    line = Build.user("u1", None, "")
    line["message"]["content"] = content
    return line


def _answer(content: Any) -> dict[str, Any]:
    line = Build.assistant("a1", "u0", "")
    line["message"]["content"] = content
    return line


def _entry(kind: str, **fields: Any) -> dict[str, Any]:
    return Build.entry(kind, "e1", "u0", 5, **fields)


def _shell(**fields: Any) -> dict[str, Any]:
    message = {"role": "bashExecution", "command": "ls", "output": "o", "exitCode": 0}
    return _entry("message", message={**message, **fields})


FIRST = Build.user("u0", None, "first prompt")
#: (the lines after the header, what must not be said of them): each holds its marker
#: only in a value the views read as no text.
ODD_CASES: dict[str, tuple[list[dict[str, Any]], str | None]] = {
    "user text as a list": ([_user([{"type": "text", "text": ["MARK-USER-LIST"]}])], "(empty"),
    "user content as an object": ([_user({"text": "MARK-USER-OBJECT"})], "(empty message)"),
    "user text as an object": ([_user([{"type": "text", "text": {"t": "MARK-TEXT-OBJ"}}])], None),
    "user bare string block": ([_user(["MARK-BARE-STRING", {"type": "text", "text": "ok"}])], None),
    "user list as a block": ([_user([["MARK-LIST-BLOCK"]])], None),
    "assistant bare strings": ([FIRST, _answer(["MARK-ANSWER-1", "MARK-ANSWER-2"])], None),
    "assistant content object": ([FIRST, _answer({"text": "MARK-ANSWER-OBJ"})], None),
    "assistant thinking list": (
        [FIRST, _answer([{"type": "thinking", "thinking": ["MARK-THINKING"]}])],
        None,
    ),
    "compaction summary list": (
        [FIRST, _entry("compaction", summary=["MARK-SUMMARY"], firstKeptEntryId="u0")],
        "holds no summary",
    ),
    "branch summary object": (
        [FIRST, _entry("branch_summary", summary={"s": "MARK-BRANCH"}, fromId="u0")],
        None,
    ),
    "shell command list": ([FIRST, _shell(command=["rm", "-rf", "MARK-COMMAND"])], "```sh"),
    "shell output object": ([FIRST, _shell(output={"o": "MARK-OUTPUT"})], None),
    "extension content object": (
        [FIRST, _entry("custom_message", customType="x", display=True, content={"c": "MARK-EXT"})],
        None,
    ),
    "extension odd blocks": (
        [
            FIRST,
            _entry(
                "custom_message",
                customType="x",
                display=True,
                content=["MARK-EXT-STRING", {"type": "text", "text": ["MARK-EXT-LIST"]}],
            ),
        ],
        None,
    ),
}


@pytest.mark.parametrize("case", list(ODD_CASES))
def test_a_value_of_another_type_is_shown_as_written_as_on_the_page(
    case: str, write_session: Any, tmp_path: Path
) -> None:
    lines, untrue = ODD_CASES[case]
    source = write_session([Build.header(), *lines])
    markers = sorted(set(re.findall(r"MARK-[A-Z0-9-]+", json.dumps(lines))))
    page = html.unescape(_export(source, tmp_path / "page.html"))
    document = _export(source, tmp_path / "doc.md")
    for marker in markers:
        assert marker in page, marker  # the page shows it (under its note)
        assert marker in document, (marker, document)
    assert ODD_SAID in page and f"*{ODD_SAID}*" in document
    # as written: in a JSON code block, read back whole
    rendered = MarkdownIt("commonmark", {"html": False}).parse(document)
    blocks = [json.loads(t.content) for t in rendered if t.type == "fence" and t.info == "json"]
    assert any(all(m in json.dumps(block) for m in markers) for block in blocks), blocks
    if untrue is not None:  # what the document said over it, untrue
        transcript = document.split("## Transcript", 1)[1]
        assert untrue not in transcript, transcript


def test_an_empty_prompt_still_says_so(write_session: Any, tmp_path: Path) -> None:
    """Only a value shown as written takes the place of "(empty message)"."""
    source = write_session([Build.header(), _user([{"type": "text", "text": ""}])])
    document = _export(source, tmp_path / "empty.md")
    assert "*(empty message)*" in document and ODD_SAID not in document


def test_the_note_comes_before_the_turns_usage_as_on_the_page(
    write_session: Any, tmp_path: Path
) -> None:
    """The page shows the note at the end of the entry's body, above its usage line."""
    source = write_session([Build.header(), FIRST, _answer(["MARK-ORDER"])])
    document = _export(source, tmp_path / "order.md")
    turn = document.split("### Assistant", 1)[1]
    assert turn.index(ODD_SAID) < turn.index("MARK-ORDER") < turn.index("*in 10 · out 5")


def test_an_entry_named_elsewhere_is_not_called_empty_when_its_value_is_shown(
    write_session: Any, tmp_path: Path
) -> None:
    """A prompt whose text is a list is shown as written, but the lines that name it (a
    compaction's kept context, a label's bookmark) still quoted it as "user: (empty
    message)"; a prompt of truly no text still is one."""
    odd = _user([{"type": "text", "text": ["MARK-KEPT"]}])
    empty = Build.user("u2", "c1", "", second=7)
    source = write_session(
        [
            Build.header(),
            odd,
            Build.assistant("a1", "u1", "done", second=2),
            Build.entry("compaction", "c1", "a1", 6, summary="s", firstKeptEntryId="u1"),
            empty,
            Build.entry("label", "l1", "u2", 8, targetId="u1", label="odd-one"),
            Build.entry("label", "l2", "l1", 9, targetId="u2", label="empty-one"),
        ]
    )
    document = _export(source, tmp_path / "kept.md")
    said = "user: (a value not of the type Pi writes, shown as written)"
    assert f"*Context kept from entry `u1` “{said}”*" in document, document
    assert f"- `odd-one` on `u1`: {said}" in document, document
    assert "- `empty-one` on `u2`: user: (empty message)" in document, document
    assert "“user: (empty message)”" not in document
