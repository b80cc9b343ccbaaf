"""Per-entry-type views: what each kind of entry shows in the transcript.

Each builder fills an :class:`EntryView` from a typed entry; tool calls are paired with
their results on the same main line, and long outputs are shown once (see PageBuilder).
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from exporter.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    Entry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    as_str,
)
from exporter.formatting import fmt_cost, fmt_int, one_line, split_skill, word_count
from exporter.pasted_diff import fence_pasted_diffs
from exporter.render.entry_lines import only_tool_calls
from exporter.render.environment import model_breaks
from exporter.render.folding import fold_command, fold_text, terminal_text
from exporter.render.markup import files_api_image, markdown, safe_image_src
from exporter.render.model import EntryView, Part
from exporter.render.odd_values import (
    attachment_facts,
    attachment_line,
    document_view,
    not_text,
    odd_content,
)
from exporter.render.outline_html import quoted_row
from exporter.render.prose_fold import fold_prose
from exporter.render.tools import (
    ImageView,
    ToolView,
    build_tool_view,
    details_fold,
    document_lines,
    json_fold,
    json_text,
    standalone_result_view,
)
from exporter.render.turns import turn_summary
from exporter.shown_rules import SHOWN_ROLES, is_interrupt
from exporter.usage import Usage, turn_usage

if TYPE_CHECKING:
    from exporter.render.view import PageBuilder


def _images_of(blocks: list[dict[str, Any]]) -> list[Part]:
    parts = []
    for block in blocks:
        if block.get("type") == "image":
            mime = as_str(block.get("mimeType")) or "?"
            image = ImageView(safe_image_src(block.get("data")), mime, files_api_image(block))
            parts.append(Part("image", image=image))
    return parts


def _attachments(raw: Any, view: EntryView) -> bool:
    """Files attached to a v1 prompt (Pi stopped reading them; the model saw them): a note
    each, an image shown, a document's extracted text folded. True when there were any."""
    if not isinstance(raw, list) or not raw:
        return False
    for item in raw:
        if not isinstance(item, dict):
            view.notes.append(f"Attachment: {json_text(item)}")
            continue
        facts = attachment_facts(item)
        view.notes.append(f"Attached {facts.kind}: {facts.name} ({attachment_line(facts)})")
        if facts.kind == "image":
            image = ImageView(safe_image_src(item.get("content")), facts.mime)
            view.parts.append(Part("image", image=image))
        _attached_text(view, as_str(item.get("extractedText")), facts.name)
    return True


def _attached_text(view: EntryView, text: str | None, name: str) -> None:
    """An attached document's text, folded under "Text of the attached <name>"."""
    if text:
        view.parts.append(Part("attachment", html=Markup(escape(text)), name=name))


def _documents(blocks: list[dict[str, Any]], view: EntryView) -> bool:
    """The API documents in a message's content (a PDF, a text file attached to a Claude
    Code prompt), said as a v1 prompt's attachments are: a line each, not their base64,
    and a text document's text folded. True when there were any."""
    found = False
    for block in blocks:
        if (document := document_view(block)) is not None:
            view.notes.extend(document_lines(document))
            _attached_text(view, document.text, document.name)
            found = True
    return found


def _custom_content(view: EntryView, blocks: list[dict[str, Any]], text: str) -> None:
    """An extension's message in the order it wrote it: "the page now looks like this:"
    before its screenshot, not after it (a user's images lead, as in Pi's UI)."""
    if not any(block.get("type") == "image" for block in blocks):
        view.html = _prose_html(text)
        return
    for block in blocks:
        if block.get("type") == "image":
            view.parts.extend(_images_of([block]))
        elif block.get("type") == "text" and (said := as_str(block.get("text"))):
            view.parts.append(Part("text", html=_prose_html(said)))


#: A run of this many characters without a space or line break (a pasted blob, a minified
#: file) is slow for a browser to lay out, and the time grows with its square: 0.8 s for
#: 500,000 characters, 19 s for 2,000,000, the page blank all the while.
HUGE_WORD = 100_000


def _prose_html(text: str, fold_long_code: bool = False) -> Markup:
    """An answer's, summary's or extension message's Markdown; one holding a huge word shows
    its first screen and folds the rest as a long prompt does, so the page opens at once and
    the word costs its layout time only to a reader who opens it. Other text shows whole,
    however long."""
    if len(text) >= HUGE_WORD and max(map(len, text.split()), default=0) >= HUGE_WORD:
        return _folded_html(*fold_prose(text))
    return markdown(text, fold_long_code=fold_long_code)


def _prompt_html(text: str) -> Markup:
    """A prompt's Markdown, a pasted diff in it shown as one; a long paste shows its first
    screen and folds the rest."""
    return _folded_html(*fold_prose(fence_pasted_diffs(text)))


def _folded_html(shown: Markup, folded: Markup | None, summary: str) -> Markup:
    if folded is None:
        return shown
    folded_html = '{}<details class="fold fold-after prose"><summary>{}</summary>{}</details>'
    return Markup(folded_html).format(shown, summary, folded)


def _message(
    builder: PageBuilder, entry: MessageEntry, view: EntryView, line_set: set[str]
) -> None:
    role = entry.role
    view.kind = role
    if role == "user":
        view.classes.append("is-user")
        view.parts = _images_of(entry.content)
        skill, text = split_skill(entry.text)
        if skill is not None:
            name, body = skill
            view.parts.insert(0, Part("skill", html=markdown(body), name=name))
        view.html = _prompt_html(text)
        attached = _attachments(entry.message.get("attachments"), view)
        attached = _documents(entry.content, view) or attached
        if not view.parts and not text.strip() and not attached and not odd_content(entry):
            view.notes.append("(empty message)")  # (an odd value is shown as written below)
        view.meta = turn_summary(builder.session, entry.id, line_set)
    elif role == "assistant":
        _assistant(builder, entry, view, line_set)
    elif role == "toolResult":
        call = builder.call_of(entry.id)
        view.kind = "toolResult"
        view.classes.append("is-tool")
        tool = standalone_result_view(entry, call, builder.show)
        builder.dedupe_output(tool)
        view.parts = [Part("tool", tool=tool)]
        view.status = view.parts[0].tool.status  # type: ignore[union-attr]
    elif role == "bashExecution":
        view.kind = "bashExecution"
        view.html, command_rest = fold_command(entry.command)
        # (a user's `!` command: its colours shown as a bash call's are)
        output = fold_text(terminal_text(entry.output), 12, tail=True, ansi=True)
        view.parts = [Part("output", html=None)]
        view.parts[0].tool = ToolView(
            call_id="", name="bash", kind="bashExecution", output=output, command_rest=command_rest
        )
        code = entry.exit_code
        cancelled = entry.message.get("cancelled") is True
        view.status = "error" if cancelled or (code not in (None, 0)) else "ok"
        notes = []
        if code is not None:
            notes.append(f"exit {code}")
        if cancelled:
            notes.append("cancelled")
        if entry.message.get("truncated") is True:
            path = as_str(entry.message.get("fullOutputPath"))
            notes.append(f"output truncated by Pi{f' (full output: {path})' if path else ''}")
        if entry.excluded_from_context:
            notes.append("!! not sent to the model")
            view.classes.append("excluded")
        view.notes = notes
    elif role == "custom":
        view.kind = "customMessage"
        view.title = entry.custom_type or "custom"
        _custom_content(view, entry.content, entry.text)
        _documents(entry.content, view)
        view.details = details_fold(entry.message.get("details"))
        if not entry.display:
            view.classes.append("hide-default")
            display = entry.message.get("display", _NO_DISPLAY)
            view.notes.append(_hidden_in_pi_note(builder, entry.id, display))
    else:
        unknown_view(builder, entry, view)


def _assistant(
    builder: PageBuilder, entry: MessageEntry, view: EntryView, line_set: set[str]
) -> None:
    session = builder.session
    content = entry.message.get("content")
    blocks = content if isinstance(content, list) else []
    for index, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            said = as_str(block.get("text")) or ""
            view.parts.append(Part("text", html=_prose_html(said, fold_long_code=True)))
        elif kind == "thinking":
            text = as_str(block.get("thinking")) or ""
            redacted = block.get("redacted") is True
            if text or redacted:
                view.parts.append(
                    Part(
                        "thinking",
                        html=markdown(text),
                        redacted=redacted,
                        name=word_count(text) if text.strip() else "",
                    )
                )
        elif kind == "toolCall":
            # Results on other branches render there, next to a copy of the call.
            result = session.result_for_call(entry.id, index, within=line_set)
            tool = build_tool_view(
                block, result if isinstance(result, MessageEntry) else None, builder.show
            )
            anchor = label = None
            forks = 0
            if result is None:  # the tree forks between call and result: say where it is
                elsewhere = session.result_for_call(entry.id, index)
                if elsewhere is not None:
                    tool.result_elsewhere = builder.anchor(elsewhere.id)
            if result is not None:  # shown here, so the plan skips its own entry
                forks = builder.result_forks.get(result.id, 0)
                anchor = builder.anchor(result.id)
                builder.dedupe_output(tool)
                label = session.labels.get(result.id)
                if label:  # the "Labeled" filter keeps the message that shows it
                    view.classes.append("has-labeled")
            view.parts.append(
                Part(
                    "tool", tool=tool, tool_entry_anchor=anchor, tool_label=label, tool_forks=forks
                )
            )
        elif kind == "image":
            view.parts.extend(_images_of([block]))
        else:
            view.parts.append(Part("other", fold=json_fold(block)))
    if isinstance(content, str):
        view.parts.append(Part("text", html=_prose_html(content, fold_long_code=True)))
    elif only_tool_calls(entry):
        view.classes.append("is-tool")
    usage = turn_usage(entry)
    model = entry.model_key or "unknown model"
    answered_by = as_str(entry.message.get("responseModel"))
    if answered_by and answered_by != entry.model:  # a router alias names another model
        model = f"{model} (answered by {answered_by})"
    if none_said := no_usage_said(usage):
        view.meta = f"{model} · {none_said}"
    else:
        view.meta = (
            f"{model} · in {fmt_int(usage.input)} · out {fmt_int(usage.output)}"
            f" · cache read {fmt_int(usage.cache_read)} · write {fmt_int(usage.cache_write)}"
            f" · {fmt_cost(usage.cost)}"
        )
    reason = entry.stop_reason
    if reason == "error":
        view.status = "error"
        said = (entry.error_message or "").strip() or "the model call failed"
        if not_text(entry.message.get("errorMessage")):  # (odd_values shows it as written)
            said += " (its errorMessage is not text: shown below as written)"
        # "Error: Error: …", "Error: API Error: 529 …" (a provider's message says it already)
        plain = said.lower().startswith(("error", "api error"))
        view.notes.append(said if plain else f"Error: {said}")
    elif reason == "aborted":
        view.status = "aborted"
        said = (entry.error_message or "").strip()
        # Pi's own interrupt message says no more than "Aborted"; any other message (a
        # timeout, a tool's abort) is shown as given
        view.notes.append("Aborted" + ("" if is_interrupt(said) else f": {said}"))
    elif reason == "length":
        view.status = "length"
        view.notes.append("Stopped: output token limit reached (stopReason: length)")
    elif reason not in (None, "stop", "toolUse"):
        view.notes.append(f"Stopped: {reason} (stopReason)")
    if reason not in ("error", "aborted") and (said := (entry.error_message or "").strip()):
        view.notes.append(f"Error message: {said}")
    view.notes.extend(diagnostic_notes(entry.message.get("diagnostics")))


def no_usage_said(usage: Usage) -> str:
    """A turn's usage when there is none to count, in words (the page's and the Markdown's):
    "no usage recorded", "no tokens used" (an aborted turn), not "in 0 · out 0 · … $0.00";
    empty when there is some."""
    if usage.turns_without_usage:
        return "no usage recorded"
    if not (usage.input or usage.output or usage.cache_read or usage.cache_write or usage.cost):
        return "no tokens used"
    return ""


def diagnostic_notes(diagnostics: Any) -> list[str]:
    """What the provider reported besides the answer (a fallback, a reset): one note each
    (the page's and the Markdown's)."""
    notes: list[str] = []
    if diagnostics in (None, []):
        return notes
    for item in diagnostics if isinstance(diagnostics, list) else [diagnostics]:
        error = item.get("error") if isinstance(item, dict) else None
        said = as_str(error.get("message")) if isinstance(error, dict) else as_str(error)
        plain = (
            isinstance(item, dict)
            and isinstance(item.get("type"), str)
            and set(item) <= {"type", "error"}
            and (error is None or said is not None)
            and (not isinstance(error, dict) or set(error) == {"message"})
        )
        if plain:
            notes.append(f"Diagnostic: {item['type']}" + (f": {said}" if said else ""))
        else:  # anything more, as written
            notes.append(f"Diagnostic: {json_text(item)}")
    return notes


def _entry_link(builder: PageBuilder, entry_id: str) -> Markup | str:
    """``entry <id>`` as a link to it when the file has it (a #fragment the page resolves)."""
    entry_id = builder.session.named_entry(entry_id) or entry_id
    if entry_id not in builder.session.by_id:
        return f"entry {entry_id}"
    said = one_line(builder.row_text(entry_id), 60)  # what is there, not only where
    # (a quote of another entry: the search leaves it out, or "think" found the compaction)
    # in quotation marks: "(assistant: (aborted))" nested its brackets (review 2026-12-03)
    link = Markup('<a href="#{}">entry {}</a> <span class="quoted">“{}”</span>')
    # its words in their own direction, as the outline's row (a Hebrew row's "!" inside “”)
    name = builder.session.leaf_name(entry_id)
    return link.format(builder.anchor(entry_id), name, quoted_row(said))


MAX_LISTED_FILES = 20  # per list in a note; all of them are in the entry's Details
_FILE_LISTS = (("readFiles", "Files read"), ("modifiedFiles", "Files modified"))


def _file_notes(builder: PageBuilder, raw_details: Any, view: EntryView) -> None:
    """The files a compaction or branch summary read and modified, as notes; the whole
    ``details`` (every file past the first 20, any other key) folded below when the notes
    do not show all of it."""
    details = raw_details if isinstance(raw_details, dict) else {}
    whole = isinstance(raw_details, dict) and all(k in dict(_FILE_LISTS) for k in details)
    for key, label in _FILE_LISTS:
        files = details.get(key)
        if not isinstance(files, list):
            whole = whole and files is None
            continue
        if files:
            # a path as written; anything else as the JSON it was (not Python's repr)
            shown = ", ".join(
                builder.show(f if isinstance(f, str) else json_text(f))
                for f in files[:MAX_LISTED_FILES]
            )
            rest = len(files) - MAX_LISTED_FILES
            view.notes.append(
                f"{label}: {shown}" + (f" and {rest} more (in Details)" if rest > 0 else "")
            )
            whole = whole and rest <= 0
    if raw_details is not None and not whole:
        view.details = json_fold(raw_details)


def _made_by_extension(entry: CompactionEntry | BranchSummaryEntry, view: EntryView) -> None:
    if entry.raw.get("fromHook") is True:
        view.notes.append("made by an extension (fromHook), not by Pi's own summariser")


def _compaction(
    builder: PageBuilder, entry: CompactionEntry, view: EntryView, line_set: set[str]
) -> None:
    size = entry.tokens_before
    view.title = f"Compacted from {fmt_int(size)} tokens" if size is not None else "Compacted"
    view.html = _prose_html(entry.summary)
    if not entry.summary.strip():
        view.notes.append("the file holds no summary for this compaction")
    _file_notes(builder, entry.raw.get("details"), view)
    _made_by_extension(entry, view)
    kept = builder.session.first_kept_id(entry)
    if not kept:
        return
    if kept not in builder.session.by_id:
        view.notes.append(
            f"context kept from entry {kept}, which is not in this file: by Pi's rule nothing "
            "before this compaction stays in context"
        )
    elif not builder.is_before(kept, entry.id):
        view.notes.append(
            Markup(
                "context kept from {}, which is not before this compaction on its branch: by "
                "Pi's rule nothing before this compaction stays in context"
            ).format(_entry_link(builder, kept))
        )
    else:
        view.notes.append(Markup("context kept from {}").format(_entry_link(builder, kept)))


def _branch_summary(
    builder: PageBuilder, entry: BranchSummaryEntry, view: EntryView, line_set: set[str]
) -> None:
    view.kind = "branchSummary"
    view.html = _prose_html(entry.summary)
    if entry.from_id:
        view.title = Markup("branched away from {}").format(_entry_link(builder, entry.from_id))
    _file_notes(builder, entry.raw.get("details"), view)
    _made_by_extension(entry, view)


def _hidden_in_pi_note(builder: PageBuilder, entry_id: str, display: object) -> str:
    """What a falsy ``display`` means for this entry: Pi's UI hides it but the model reads
    it, unless a compaction has replaced it (the page said "still sent to the model" under
    its "not in the model's context" mark). The note names what the file says: a message
    without ``display`` was said to have ``display: false``."""
    why = "no display flag" if display is _NO_DISPLAY else f"display: {json_text(display)}"
    if len(why) > 40:
        why = why[:39] + "…"
    if entry_id in builder.compacted:
        return f"hidden in Pi's UI ({why})"
    return f"hidden in Pi's UI ({why}), still sent to the model"


#: ``display`` missing from the entry (not the same as ``null``).
_NO_DISPLAY = object()


def _custom_message(
    builder: PageBuilder, entry: CustomMessageEntry, view: EntryView, line_set: set[str]
) -> None:
    view.kind = "customMessage"
    view.title = entry.custom_type
    _custom_content(view, entry.content, entry.text)
    _documents(entry.content, view)
    view.details = details_fold(entry.raw.get("details"))  # Pi's UI may render from it
    if not entry.display:
        view.classes.append("hide-default")
        display = entry.raw.get("display", _NO_DISPLAY)
        view.notes.append(_hidden_in_pi_note(builder, entry.id, display))
    said = AGENT_CONTEXT.get(entry.custom_type) if builder.session.agent != "Pi" else None
    if said is not None:
        view.heading, note = said
        view.title = ""
        if note and not entry.display:
            view.notes[-1] = note


#: Messages a transcript read as a Pi session holds for what its agent did itself (told the
#: model, ran for the user): their heading, and the note of a hidden one, instead of an
#: extension's.
AGENT_CONTEXT: dict[str, tuple[str, str | None]] = {
    "codex-context": (
        "Codex context",
        "Codex's own message to the model (AGENTS.md, the environment, …), not typed by "
        "the user; hidden by default",
    ),
    "codex-developer": (
        "Codex instructions",
        "developer instructions Codex sent the model; hidden by default",
    ),
    "codex-system": ("Codex instructions", "system text Codex sent the model; hidden by default"),
    "claude-code-meta": (
        "Claude Code context",
        "Claude Code's own message to the model, not typed by the user; hidden by default",
    ),
    "claude-code-command": ("Claude Code command", None),
}


def _json_view(view: EntryView, value: Any) -> None:
    view.parts = [Part("json", fold=json_fold(value))]  # an extension's state ran 2,000 lines


def _custom(builder: PageBuilder, entry: CustomEntry, view: EntryView, line_set: set[str]) -> None:
    view.title = entry.custom_type
    view.classes.append("hide-default")
    _json_view(view, entry.data)


def _model_change(
    builder: PageBuilder, entry: ModelChangeEntry, view: EntryView, line_set: set[str]
) -> None:
    view.kind = "marker"
    view.title = Markup("Model: ") + model_breaks(entry.model_key or "?")  # wraps after "/"


def _thinking_change(
    builder: PageBuilder, entry: ThinkingLevelChangeEntry, view: EntryView, line_set: set[str]
) -> None:
    view.kind = "marker"
    view.title = f"Thinking level: {entry.thinking_level}"


def _session_info(
    builder: PageBuilder, entry: SessionInfoEntry, view: EntryView, line_set: set[str]
) -> None:
    view.kind = "marker"
    if entry.name:
        view.title = Markup("Session named “<bdi>{}</bdi>”").format(entry.name)  # its own dir
    elif not_text(entry.raw.get("name")):  # a list is no name cleared: shown below as written
        view.title = "Session named with a value that is not text"
    else:
        view.title = "Session name cleared"


def _label(builder: PageBuilder, entry: LabelEntry, view: EntryView, line_set: set[str]) -> None:
    view.kind = "marker"
    target = _entry_link(builder, entry.target_id) if entry.target_id else "entry ?"
    if entry.label:
        view.title = Markup("Label “<bdi>{}</bdi>” on {}").format(entry.label, target)
    else:
        view.title = Markup("Label cleared on {}").format(target)
    view.classes.append("hide-default")


def unknown_view(
    builder: PageBuilder, entry: Entry, view: EntryView, line_set: set[str] | None = None
) -> None:
    view.kind = "unknown"
    view.title = f"Unknown entry type “{entry.type}”"
    if isinstance(entry, MessageEntry):
        view.title = f"Message with unknown role “{entry.role}”"
    view.classes.append("hide-default")
    _json_view(view, entry.raw)


def default_hides(entry: Entry) -> tuple[str, str] | None:
    """What the Default filter leaves out in this entry, as ``(one, many)`` words, or None:
    the ``hide-default`` the builders here give, said for the printed page's note (a label
    is None: its entry shows it). tests/test_page_s59.py holds the two together."""
    if isinstance(entry, LabelEntry):
        return None
    if isinstance(entry, CustomMessageEntry) or (
        isinstance(entry, MessageEntry) and entry.role == "custom"
    ):
        hidden = not entry.display
        return ("hidden extension message", "hidden extension messages") if hidden else None
    if isinstance(entry, CustomEntry):
        return "extension state entry", "extension state entries"
    known = type(entry) in ENTRY_BUILDERS
    if known and not (isinstance(entry, MessageEntry) and entry.role not in SHOWN_ROLES):
        return None
    return "entry of an unknown type", "entries of unknown types"


ENTRY_BUILDERS: dict[type, Callable[..., None]] = {
    MessageEntry: _message,
    CompactionEntry: _compaction,
    BranchSummaryEntry: _branch_summary,
    CustomMessageEntry: _custom_message,
    CustomEntry: _custom,
    ModelChangeEntry: _model_change,
    ThinkingLevelChangeEntry: _thinking_change,
    SessionInfoEntry: _session_info,
    LabelEntry: _label,
}
