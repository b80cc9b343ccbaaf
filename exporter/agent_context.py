"""`--agent-context FILE`: the agent's system prompt and tool list, which Pi keeps in memory
and never writes to the session file, read from the JSON the Pi extension passes.

Pi's own interactive `/export` shows both; our page shows them folded after the header
when they are given. The file is the extension's, but it is read as untrusted input:
anything that does not fit (missing, unreadable, not JSON, wrong shapes) is a one-line
warning and the page is made without it, never a failure of the export.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from exporter.formatting import clipped, cluster_cut

if TYPE_CHECKING:
    from exporter.policy import RedactionPolicy
    from exporter.redact import RedactionReport
    from exporter.session import Session

__all__ = [
    "MAX_PROMPT_CHARS",
    "MAX_TOOLS",
    "AgentContext",
    "AgentTool",
    "ToolParam",
    "agent_context_option",
    "default_warn",
    "read_agent_context",
    "redact_agent_context",
]

#: The longest system prompt shown (characters, ~256 kB); the rest is said to be left out.
MAX_PROMPT_CHARS = 262_144
#: The most tools listed; the others are named as left out in a count.
MAX_TOOLS = 200
#: Per tool: the longest description and the most parameters shown.
MAX_DESCRIPTION_CHARS = 16_384
MAX_PARAMS = 100
#: A larger file is not read at all (the extension writes a few hundred kB at most).
MAX_FILE_BYTES = 16 * 1024 * 1024
F = TypeVar("F", bound=Callable[..., Any])

#: Lines of the prompt shown while it is folded (Pi's own export shows 10).
PREVIEW_LINES = 10
#: ... and at most this many characters of them (a prompt of one 200 kB line).
PREVIEW_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class ToolParam:
    """One parameter from a tool's JSON schema ``properties``."""

    name: str
    type: str
    required: bool
    description: str


@dataclass(frozen=True, slots=True)
class AgentTool:
    """A tool the agent was given: ``active`` is None when the file did not say."""

    name: str
    description: str
    params: tuple[ToolParam, ...] = ()
    active: bool | None = None
    params_left_out: int = 0


@dataclass(frozen=True, slots=True)
class AgentContext:
    """What the page and the Markdown show; ``left_out`` says what the caps cut. The texts
    are kept whole until :meth:`capped` (what is shown): redaction reads every character,
    so a secret across a cap is found whole (cut first, its head no longer looked like a
    token and was published)."""

    system_prompt: str = ""
    tools: tuple[AgentTool, ...] = ()
    active_known: bool = False
    left_out: tuple[str, ...] = ()

    @property
    def active_count(self) -> int:
        return sum(1 for tool in self.tools if tool.active)

    @property
    def prompt_lines(self) -> int:
        return self.system_prompt.count("\n") + 1 if self.system_prompt else 0

    @property
    def preview(self) -> str:
        """The prompt's first lines, as the folded card shows them (a long one cut at a
        grapheme cluster's start: no emoji or accented letter broken before the "…")."""
        lines = "\n".join(self.system_prompt.split("\n", PREVIEW_LINES)[:PREVIEW_LINES])
        return clipped(lines, PREVIEW_CHARS)

    def capped(self) -> AgentContext:
        """The context as shown: the prompt and the descriptions cut at their caps, at a
        grapheme cluster's start (the last emoji or accented letter shown is whole)."""

        def cut(text: str, path: tuple[str | int, ...]) -> str:
            if path == ("systemPrompt",):
                return text[: cluster_cut(text, MAX_PROMPT_CHARS)]
            if path[-1] == "description":
                return text[: cluster_cut(text, MAX_DESCRIPTION_CHARS)]
            return text

        return self.map_text(cut)

    def map_text(self, change: Callable[[str, tuple[str | int, ...]], str]) -> AgentContext:
        """Every string passed through ``change(text, json_path)`` (redaction): the prompt,
        and each tool's name, description and parameters' names, types and descriptions."""
        tools = []
        for index, tool in enumerate(self.tools):
            at: tuple[str | int, ...] = ("tools", index)
            params = tuple(
                ToolParam(
                    change(p.name, (*at, "parameters", n, "name")),
                    change(p.type, (*at, "parameters", n, "type")),
                    p.required,
                    change(p.description, (*at, "parameters", n, "description")),
                )
                for n, p in enumerate(tool.params)
            )
            tools.append(
                dataclasses.replace(
                    tool,
                    name=change(tool.name, (*at, "name")),
                    description=change(tool.description, (*at, "description")),
                    params=params,
                )
            )
        prompt = change(self.system_prompt, ("systemPrompt",)) if self.system_prompt else ""
        return dataclasses.replace(self, system_prompt=prompt, tools=tuple(tools))


def agent_context_option(func: F) -> F:
    """``--agent-context FILE``: the system prompt and tools the Pi extension passes."""
    return click.option(
        "--agent-context",
        metavar="FILE",
        help="JSON of the agent's system prompt and tools (the Pi extension writes it; they "
        "are not in the session file): shown folded after the header, redacted with the "
        "session. An unusable file is a warning.",
    )(func)


class _Unfit(ValueError):
    """The file cannot be used: the message is the warning's reason."""


def read_agent_context(path: str, warn: Callable[[str], None]) -> AgentContext | None:
    """The context in ``path``, or None (after one ``warn``) when it cannot be used; what
    the caps left out is warned about too (and said on the page)."""
    try:
        context = _parse(_load(path))
    except _Unfit as error:
        warn(
            f"--agent-context {path}: {error}; the page is made without the system prompt and tools"
        )
        return None
    for note in context.left_out if context else ():
        warn(f"--agent-context: {note}")
    return context


def _load(path: str) -> Any:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise _Unfit("no such file") from None
    except IsADirectoryError:
        raise _Unfit("is a folder, not a file") from None
    except OSError as error:
        raise _Unfit(f"cannot read it ({error.strerror or error})") from None
    if len(data) > MAX_FILE_BYTES:
        raise _Unfit(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise _Unfit(f"not UTF-8 text (byte {error.start:,})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise _Unfit(f"not JSON ({error.msg} at line {error.lineno})") from None
    except (ValueError, RecursionError):
        raise _Unfit("not JSON that can be read (nested too deeply or too large)") from None


def _parse(data: Any) -> AgentContext | None:
    """The shapes the extension writes; a wrong one at the top is unfit, a wrong tool is
    skipped (and counted). Nothing to show at all is None, without a warning."""
    if not isinstance(data, dict):
        raise _Unfit(f"expected a JSON object, found {_kind(data)}")
    prompt = data.get("systemPrompt")
    if prompt is None:
        prompt = ""
    if not isinstance(prompt, str):
        raise _Unfit(f"systemPrompt is {_kind(prompt)}, not text")
    raw_tools = data.get("tools")
    if raw_tools is None:
        raw_tools = []
    if not isinstance(raw_tools, list):
        raise _Unfit(f"tools is {_kind(raw_tools)}, not a list")
    active_names = data.get("activeTools")
    active_known = isinstance(active_names, list)
    active = {name for name in active_names if isinstance(name, str)} if active_known else set()
    left_out: list[str] = []
    if len(prompt) > MAX_PROMPT_CHARS:
        left_out.append(
            f"the system prompt is cut at {cluster_cut(prompt, MAX_PROMPT_CHARS):,} of its "
            f"{len(prompt):,} characters"  # (at a whole character: a few before the cap)
        )
    tools: list[AgentTool] = []
    skipped = 0
    for item in raw_tools:
        tool = _tool(item, active if active_known else None)
        if tool is None:
            skipped += 1
        elif len(tools) < MAX_TOOLS:
            tools.append(tool)
    shown_of = len(raw_tools) - skipped
    if shown_of > MAX_TOOLS:
        left_out.append(
            f"{shown_of - MAX_TOOLS:,} of {shown_of:,} tools left out (at most {MAX_TOOLS})"
        )
    if skipped:
        left_out.append(f"{skipped:,} tool{'s' if skipped != 1 else ''} without a name left out")
    cut_descriptions = sum(1 for t in raw_tools if _long_description(t))
    if cut_descriptions:
        left_out.append(
            f"{cut_descriptions:,} tool description{'s' if cut_descriptions != 1 else ''} cut at "
            f"most at {MAX_DESCRIPTION_CHARS:,} characters (at a whole character)"
        )
    cut_params = sum(1 for t in tools if t.params_left_out)
    if cut_params:
        left_out.append(
            f"{cut_params:,} tool{'s' if cut_params != 1 else ''} with more than {MAX_PARAMS} "
            "parameters: the rest left out"
        )
    if not prompt.strip() and not tools:
        return None
    return AgentContext(prompt, tuple(tools), active_known, tuple(left_out))


def _long_description(item: Any) -> bool:
    return isinstance(item, dict) and len(_text(item.get("description"))) > MAX_DESCRIPTION_CHARS


def _tool(item: Any, active: set[str] | None) -> AgentTool | None:
    """One entry of ``tools``: ``{name, description, parameters}`` (a JSON schema)."""
    if not isinstance(item, dict):
        return None
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    description = _text(item.get("description"))  # cut when shown (AgentContext.capped)
    schema = item.get("parameters")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    required_names = schema.get("required") if isinstance(schema, dict) else None
    required = _strings(required_names)
    params: list[ToolParam] = []
    left = 0
    if isinstance(properties, dict):
        for key, prop in properties.items():
            if not isinstance(key, str):
                continue
            if len(params) >= MAX_PARAMS:
                left += 1
                continue
            prop = prop if isinstance(prop, dict) else {}
            said = _text(prop.get("description"))
            params.append(ToolParam(key, _type_said(prop), key in required, said))
    return AgentTool(
        name=name,
        description=description,
        params=tuple(params),
        active=None if active is None else name in active,
        params_left_out=left,
    )


def _strings(value: Any) -> set[str]:
    return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _type_said(prop: dict[str, Any]) -> str:
    """A schema's type as Pi's export says it (``any`` when it names none); a list of types
    (``["string", "null"]``), an enum, or a choice of schemas said in a few words."""
    kind = prop.get("type")
    if isinstance(kind, str):
        said = kind
    elif isinstance(kind, list) and all(isinstance(k, str) for k in kind) and kind:
        said = " | ".join(kind)
    elif "enum" in prop or "const" in prop:
        said = "enum"
    elif any(isinstance(prop.get(key), list) for key in ("anyOf", "oneOf")):
        said = "one of"
    else:
        said = "any"
    if said == "array" and isinstance(prop.get("items"), dict):
        inner = prop["items"].get("type")
        if isinstance(inner, str):
            said = f"{inner}[]"
    return said[: cluster_cut(said, 80)]


def _kind(value: Any) -> str:
    """A JSON value's kind, for a warning (never the value: it may be long or secret)."""
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "text"}
    names |= {list: "a list", dict: "an object"}
    return names.get(type(value), "something else")


def default_warn(message: str) -> None:
    """A warning line on stderr, as the CLI writes them (control characters made visible)."""
    from exporter.formatting import terminal_text

    click.echo(terminal_text(f"pi-session: warning: {message}"), err=True)


def redact_agent_context(
    context: AgentContext | None,
    policy: RedactionPolicy,
    report: RedactionReport | None,
    prepared: Session,
    cwd: str,
) -> AgentContext | None:
    """The context under the session's redaction (``share``, ``export --redact``): the same
    detectors, secrets, home folder and user name, counted in the session's ``report``, and
    the page's redaction note said again with them. ``cwd`` is the session's own, as read
    (its owner's home is hidden too)."""
    if context is None or report is None or not policy.redact:
        return context
    from exporter.redact import text_redactor

    redacted = context.map_text(text_redactor(policy, report, cwd=cwd))
    prepared.redaction_note = report.page_note()
    prepared.redaction_heading = report.page_heading()
    return redacted
