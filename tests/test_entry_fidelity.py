"""Compactions, branch summaries and extension messages show all they hold."""

from __future__ import annotations

import html as html_module
import json
import re
from typing import Any

from exporter.loader import parse_session_bytes
from exporter.render import render_session
from tests.browser_util import render_fixture


def _visible(html: str) -> str:
    return html_module.unescape(re.sub(r"<[^>]+>", "", html))


def _article(page: str, entry_id: str) -> str:
    return _visible(page.split(f'data-entry-id="{entry_id}"', 1)[1].split("</article>", 1)[0])


def _page(entries: list[dict[str, Any]]) -> str:
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"}
    lines = [header]
    for index, entry in enumerate(entries):
        lines.append({"timestamp": f"2025-01-01T00:00:{index + 1:02d}Z", **entry})
    data = "\n".join(json.dumps(line) for line in lines).encode("utf-8")
    return render_session(parse_session_bytes(data))


def _user(entry_id: str, parent: str | None, text: str) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent,
            "message": {"role": "user", "content": text}}  # fmt: skip


def test_pis_own_branch_summaries_and_extension_messages_show_their_details() -> None:
    """Pi writes the files a branch summary read and modified, and extensions put their data
    on their messages: neither was anywhere on the page (compactions' files were)."""
    summaries = render_fixture("pi-branched-1.jsonl")
    assert "Files modified: src/tree.ts" in _visible(summaries)
    lint = render_fixture("pi-branched-2.jsonl")
    assert '"source": "lint-ext"' in _visible(lint)


def test_every_file_of_a_long_compaction_is_on_the_page() -> None:
    """The notes list 20 files "and 30 more": the other 30 were nowhere."""
    details = {"readFiles": [f"/r/read_{n}" for n in range(50)],
               "modifiedFiles": [f"/m/mod_{n}" for n in range(3)], "extra": "EXTRA_73"}  # fmt: skip
    page = _page(
        [
            _user("u1", None, "one"),
            {"type": "compaction", "id": "c1", "parentId": "u1", "summary": "S",
             "firstKeptEntryId": "u1", "tokensBefore": 10, "details": details,
             "fromHook": True},
        ]
    )  # fmt: skip
    text = _article(page, "c1")
    assert all(f"/r/read_{n}" in text for n in range(50))
    assert "and 30 more (in Details)" in text and "EXTRA_73" in text
    assert "Files modified: /m/mod_0, /m/mod_1, /m/mod_2" in text
    assert "made by an extension (fromHook)" in text
    assert "context kept from entry u1" in text


def test_a_compaction_keeping_an_entry_it_cannot_keep_says_so() -> None:
    """A ``firstKeptEntryId`` missing from the file said nothing; one on another branch said
    "context kept from" it, against the page's own marking (Pi keeps nothing before)."""
    page = _page(
        [
            _user("u1", None, "one"),
            _user("u2", "u1", "two"),
            _user("x1", "u1", "OTHER BRANCH"),
            {"type": "compaction", "id": "c1", "parentId": "u2", "summary": "S",
             "firstKeptEntryId": "GONE_600", "tokensBefore": 10},
            _user("u3", "c1", "three"),
            {"type": "compaction", "id": "c2", "parentId": "u3", "summary": "S2",
             "firstKeptEntryId": "x1", "tokensBefore": 20},
            _user("u4", "c2", "four"),
        ]
    )  # fmt: skip
    assert "entry GONE_600, which is not in this file" in _article(page, "c1")
    other = _article(page, "c2")
    assert "context kept from entry x1" in other and "not before this compaction" in other


def test_a_compaction_that_does_not_say_its_size_or_summary_says_so() -> None:
    """A compaction with ``"tokensBefore": "many"`` and no summary read "Compacted from 0
    tokens" over an empty summary fold (review 2026-12-02)."""
    from exporter.markdown_doc import session_markdown

    entries = [
        _user("u1", None, "one"),
        {"type": "compaction", "id": "c1", "parentId": "u1", "summary": None,
         "tokensBefore": "many"},
        {"type": "compaction", "id": "c2", "parentId": "c1", "summary": "S", "tokensBefore": 0},
        {"type": "compaction", "id": "c3", "parentId": "c2", "summary": "S", "tokensBefore": -5},
        {"type": "compaction", "id": "c4", "parentId": "c3", "summary": "S",
         "tokensBefore": 1e300},
        {"type": "compaction", "id": "c5", "parentId": "c4", "summary": "S",
         "tokensBefore": 1200.0},
    ]  # fmt: skip
    page = _page(entries)
    unsized = _article(page, "c1")
    assert "Compacted" in unsized and "tokens" not in unsized
    assert "the file holds no summary for this compaction" in unsized
    assert 'data-entry-id="c1"' in page and page.count('class="summary-block"') == 4
    assert "Compacted from 0 tokens" in _article(page, "c2")  # a size of 0 is a size
    for nonsense in ("c3", "c4"):  # -5 and a 300-digit number are no size
        assert "tokens" not in _article(page, nonsense), _article(page, nonsense)
    assert "Compacted from 1,200 tokens" in _article(page, "c5")
    assert "[compaction]" in page and "[compaction: 0 tokens]" in page  # the outline rows
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"}
    data = "\n".join(json.dumps(line) for line in [header, *entries]).encode("utf-8")
    markdown = session_markdown(parse_session_bytes(data))
    assert "Compaction ·" in markdown and markdown.count("tokens before") == 2


def _answer(entry_id: str, **fields: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
               "provider": "openrouter", "model": "openrouter/auto", **fields}  # fmt: skip
    return {"type": "message", "id": entry_id, "parentId": "u1", "message": message}


def test_what_the_provider_said_besides_the_answer_is_shown() -> None:
    """The model behind a router alias, diagnostics, an unknown stop reason and an error
    message on a normal stop were nowhere on the page."""
    diagnostics = [{"type": "ws_fallback", "error": {"message": "socket closed"}},
                   {"type": "reset", "error": {"code": 7}}]  # fmt: skip
    page = _page(
        [
            _user("u1", None, "go"),
            _answer("a1", responseModel="vendor/real-model", diagnostics=diagnostics,
                    stopReason="stop", errorMessage="partial output"),
            _answer("a2", stopReason="content_filter"),
            _answer("a3", stopReason="toolUse", responseModel="openrouter/auto"),
        ]
    )  # fmt: skip
    first = _article(page, "a1")
    assert "openrouter/openrouter/auto (answered by vendor/real-model)" in first
    assert "Diagnostic: ws_fallback: socket closed" in first
    assert 'Diagnostic: {"type": "reset", "error": {"code": 7}}' in first
    assert "Error message: partial output" in first
    assert "Stopped: content_filter (stopReason)" in _article(page, "a2")
    third = _article(page, "a3")
    assert "answered by" not in third and "Stopped" not in third


PNG_8PX = (
    "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEklEQVR4nGP4z8CAFWEXHbQSACj/"
    "P8Fu7N9hAAAAAElFTkSuQmCC"
)


def test_files_attached_to_a_v1_prompt_are_shown() -> None:
    """v1 prompts carry ``attachments`` (the model saw them); the page showed none of them,
    and said nothing."""
    attachments = [
        {"id": "a1", "type": "image", "fileName": "shot.png", "mimeType": "image/png",
         "size": 77, "content": PNG_8PX},
        {"id": "a2", "type": "document", "fileName": "notes.txt", "mimeType": "text/plain",
         "size": 1234, "content": "eA==", "extractedText": "line one\n<b>two</b>"},
    ]  # fmt: skip
    lines = [
        {"type": "session", "id": "v1", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/w"},
        {"type": "message", "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": "see these", "attachments": attachments}},
    ]  # fmt: skip
    data = "\n".join(json.dumps(line) for line in lines).encode("utf-8")
    session = parse_session_bytes(data)
    assert session.version == 1
    page = render_session(session)
    prompt = page.split("k-user", 1)[1].split("</article>", 1)[0]
    text = _visible(prompt)
    assert "Attached image: shot.png (image/png, 77 bytes)" in text
    assert "Attached document: notes.txt (text/plain, 1,234 bytes)" in text
    assert f'src="data:image/png;base64,{PNG_8PX}"' in prompt
    assert "line one\n<b>two</b>" in text and "<b>two" not in prompt  # as text, escaped
    # a size JSON reads as infinity (1e400) is left out, not the whole entry
    attachments[0]["size"] = 1e400
    lines[1]["message"]["attachments"] = attachments
    data = "\n".join(json.dumps(line) for line in lines).encode("utf-8")
    again = render_session(parse_session_bytes(data.replace(b"Infinity", b"1e400")))
    assert "Attached image: shot.png (image/png)" in _visible(again)
    assert "could not be shown" not in again


def test_an_entry_whose_parent_is_on_a_damaged_line_says_which(tmp_path: Any) -> None:
    """ "parent 'a2' does not exist" although line 3 still shows its id; and the header's
    list of problems led nowhere near the damaged text (shown only by the All filter)."""
    from exporter.loader import load_session

    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"}
    first = _user("a1", None, "the real first prompt")
    child = _user("a3", "a2", "CHILD_OF_DAMAGED")
    cut = json.dumps(_user("a2", "a1", "DAMAGED_PARENT"))[:-4]  # a line cut short
    text = "\n".join([json.dumps(header), json.dumps(first), cut, json.dumps(child)]) + "\n"
    source = tmp_path / "s.jsonl"
    source.write_text(text, encoding="utf-8")
    session = load_session(source)
    said = [str(d) for d in session.diagnostics if d.kind == "orphan"]
    assert said == [
        "line 4: parent 'a2' of entry 'a3' is on damaged line 3; shown as a root [orphan]"
    ]
    page = render_session(session)
    problems = page.split('<details class="diagnostics">', 1)[1].split("</details>", 1)[0]
    assert '<a href="#line-3">line 3</a>' in problems
    assert 'id="line-3"' in page and "DAMAGED_PAREN" in page  # the cut text, kept


def test_an_entry_without_its_own_time_shows_its_messages() -> None:
    """An entry with no ISO ``timestamp`` (none, or a number) showed only "#", though its
    message carries its own time (epoch milliseconds)."""
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"},
        {"type": "message", "id": "t2", "parentId": None,
         "message": {"role": "user", "content": "no entry time", "timestamp": 1748779200123}},
        {"type": "message", "id": "t4", "parentId": "t2", "timestamp": 1748786400000,
         "message": {"role": "user", "content": "a number", "timestamp": 0}},
        {"type": "message", "id": "t5", "parentId": "t4",
         "message": {"role": "user", "content": "none at all", "timestamp": 0}},
    ]  # fmt: skip
    data = "\n".join(json.dumps(line) for line in lines).encode("utf-8")
    page = render_session(parse_session_bytes(data))
    assert "2025-06-01 12:00:00 UTC" in _article(page, "t2")
    assert "2025-06-01 14:00:00 UTC" in _article(page, "t4")
    assert "UTC" not in _article(page, "t5")  # nothing to show: no 1970 from a 0


def test_a_v1_headers_first_model_and_other_fields_are_shown() -> None:
    """A v1 header's provider, modelId and thinkingLevel (the settings the session started
    with) and any field a newer Pi adds were nowhere on the page."""
    from tests.browser_util import render_fixture as fixture_page

    facts = _visible(fixture_page("pi-v1-before-compaction.jsonl").split("</dl>", 1)[0])
    assert "provider: anthropic · modelId: claude-opus-4-5 · thinkingLevel: off" in facts
    assert "branchedFrom" not in facts  # shown as "Forked from"
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z",
              "cwd": "/w", "futureField": {"x": 1}}  # fmt: skip
    data = (json.dumps(header) + "\n" + json.dumps(_user("u", None, "hi"))).encode("utf-8")
    page = render_session(parse_session_bytes(data))
    assert 'futureField: {"x": 1}' in _visible(page.split("</dl>", 1)[0])
    assert "Header" not in _visible(render_fixture("pi-branched-1.jsonl").split("</dl>", 1)[0])


def test_chained_compactions_render_in_linear_time() -> None:
    """Each compaction walked its whole path to check its kept entry: 20,000 chained
    compactions took 12.9 s (1.4 s before that check; review of 1fa5ec5)."""
    import time

    entries = [_user("u0", None, "x")]
    parent = "u0"
    for index in range(20_000):
        entries.append({"type": "compaction", "id": f"c{index}", "parentId": parent,
                        "summary": "s", "firstKeptEntryId": parent, "tokensBefore": 1})  # fmt: skip
        parent = f"c{index}"
    lines = [{"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"}]
    data = "\n".join(json.dumps(line) for line in [*lines, *entries]).encode("utf-8")
    session = parse_session_bytes(data)
    start = time.process_time()
    page = render_session(session)
    assert time.process_time() - start < 8, "quadratic in the number of compactions?"
    assert "context kept from <a" in page and "not before this compaction" not in page


def test_details_that_are_not_an_object_are_shown_too() -> None:
    """A compaction whose ``details`` was a list or a string showed nothing of it; an entry
    whose ``timestamp`` is "" showed no time though its message had one (review)."""
    page = _page(
        [
            _user("u1", None, "one"),
            {"type": "compaction", "id": "c1", "parentId": "u1", "summary": "S",
             "firstKeptEntryId": "u1", "tokensBefore": 1, "details": ["LIST_DETAIL_1"]},
            {"type": "branch_summary", "id": "b1", "parentId": "c1", "summary": "B",
             "fromId": "u1", "details": "STRING_DETAIL_2"},
        ]
    )  # fmt: skip
    assert "LIST_DETAIL_1" in _article(page, "c1")
    assert "STRING_DETAIL_2" in _article(page, "b1")
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"},
        {"type": "message", "id": "t1", "parentId": None, "timestamp": "",
         "message": {"role": "user", "content": "x", "timestamp": 1748779200123}},
    ]  # fmt: skip
    data = "\n".join(json.dumps(line) for line in lines).encode("utf-8")
    assert "2025-06-01 12:00:00 UTC" in _article(render_session(parse_session_bytes(data)), "t1")
