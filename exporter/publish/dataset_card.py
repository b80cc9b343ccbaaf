"""What a published dataset repo contains besides the sessions: index, manifest and card.

Everything here is a pure function of its inputs (no clock, no paths of this machine), so
re-publishing an unchanged set of sessions produces byte-identical files and therefore no
commit. The index has one fixed schema (``INDEX_FIELDS``) so ``datasets`` and the Hub's viewer
infer a single table; the manifest is what the next ``publish`` diffs against.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from exporter import __version__
from exporter.detectors import DETECTOR_VERSION
from exporter.formatting import escape_surrogates, one_line, replace_surrogates
from exporter.policy import RedactionPolicy
from exporter.session import Session
from exporter.times import clock_text, parse_time, utc_moment
from exporter.usage import compute_stats

__all__ = [
    "CARD_BEGIN",
    "CARD_END",
    "CLAMPED",
    "COST_DROPPED",
    "INDEX_FIELDS",
    "MANIFEST_SCHEMA",
    "SUPERSEDED",
    "CardError",
    "card_problem",
    "has_card_block",
    "index_row",
    "render_card",
    "render_index",
    "render_manifest",
]

MANIFEST_SCHEMA = 1
SESSION_FORMAT_DOC = (
    "https://github.com/badlogic/pi-mono/blob/main/packages/coding-agent/docs/session.md"
)
# name -> JSON type (None is allowed only for the two timestamps, and for the agent of a row
# published before 0.2.41, which did not record it).
INDEX_FIELDS: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "agent": (str, type(None)),
    "name": str,
    "project": str,
    "started_at": (str, type(None)),
    "ended_at": (str, type(None)),
    "models": list,
    "entries": int,
    "branches": int,
    "messages": int,
    "tool_calls": int,
    "input_tokens": int,
    "output_tokens": int,
    "cache_read_tokens": int,
    "cache_write_tokens": int,
    "cost": float,
    "path": str,
    "sha256": str,
    "bytes": int,
}


def _iso(moment: datetime | None) -> str | None:
    """``YYYY-MM-DDTHH:MM:SS.mmmZ``, the year in four digits (``0001-…``, not ``1-…``)."""
    if moment is None:
        return None
    return clock_text(utc_moment(moment), "milliseconds", "T") + "Z"


#: The count columns: ``datasets`` types each column from its values, so one count beyond
#: int64 (a file's ``"input": 1e30``) made ``input_tokens`` float64 for every row.
COUNT_FIELDS = tuple(name for name, kind in INDEX_FIELDS.items() if kind is int)
INT64_MAX = 2**63 - 1
#: The key of a row (never written to ``index.jsonl``) naming the counts :func:`index_row`
#: had to bring into 0..int64, for the run to warn about.
CLAMPED = "clamped"
#: The key of a row (never written out) saying its session's costs added up past the largest
#: float: the row's cost is 0, as a single cost that is no finite number counts (the run warns).
COST_DROPPED = "cost_dropped"
#: The key (never written out) of a manifest entry and an index row whose path its session
#: left (its name holds a secret found since): the index, card and manifest a run writes leave
#: them out, so they neither name the secret in clear nor count the session twice.
SUPERSEDED = "superseded"


def index_row(session: Session, *, path: str, sha256: str, size: int) -> dict[str, Any]:
    """One ``index.jsonl`` row for a redacted session (every field always present, typed,
    readable by Arrow: see :func:`_arrow_safe`); the counts it clamped are under ``CLAMPED``."""
    stats = compute_stats(session)
    usage = stats.all
    cost = float(usage.cost)  # (two turns of 1e308 add up to inf, which JSON cannot hold)
    row = {
        "id": session.id,
        "agent": session.agent,  # Pi, or Claude Code or Codex (converted to Pi's format)
        "name": one_line(replace_surrogates(session.title), 120),  # text for readers
        "project": session.header.cwd or "",
        "started_at": _iso(stats.started),
        "ended_at": _iso(stats.ended),
        "models": list(stats.models_used),
        "entries": len(session.entries),
        "branches": len(stats.branches),
        "messages": sum(stats.roles.values()),
        "tool_calls": stats.tool_calls,
        "input_tokens": usage.input,
        "output_tokens": usage.output,
        "cache_read_tokens": usage.cache_read,
        "cache_write_tokens": usage.cache_write,
        "cost": round(cost, 6) if math.isfinite(cost) else 0.0,
        "path": path,
        "sha256": sha256,
        "bytes": size,
    }
    safe = _arrow_safe(row)
    clamped = [name for name in COUNT_FIELDS if safe[name] != row[name]]
    if clamped:
        safe[CLAMPED] = clamped
    if not math.isfinite(cost):
        safe[COST_DROPPED] = True
    return safe


def _count(value: Any) -> Any:
    """A count within 0..int64 (the column's type); anything else as it is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return min(max(value, 0), INT64_MAX)
    return value


def _finite(value: Any) -> Any:
    """A float that JSON can hold: an infinite or NaN one (a row an earlier version wrote
    from costs that added up past the largest float) as 0.0; anything else as it is."""
    if isinstance(value, float) and not math.isfinite(value):
        return 0.0
    return value


def _readable(value: Any) -> Any:
    """Strings (in lists too) with their lone surrogates as U+FFFD: Arrow refuses the whole
    file for one (an escaped ``\\udce9`` parses back to the half), so ``datasets`` could not
    load the index at all."""
    if isinstance(value, str):
        return replace_surrogates(value)
    if isinstance(value, list):
        return [_readable(item) for item in value]
    return value


def _arrow_safe(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row as ``datasets`` can read it: counts in 0..int64, strings without halves of
    a character. Rows published by earlier versions are made so when the index is written."""
    return {
        name: _count(value) if name in COUNT_FIELDS else _finite(_readable(value))
        for name, value in row.items()
    }


def _listed(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The manifest entries or index rows a run writes: not those :data:`SUPERSEDED`."""
    return [record for record in records if not record.get(SUPERSEDED)]


def render_index(rows: Iterable[Mapping[str, Any]]) -> bytes:
    """``index.jsonl``: rows sorted by path, keys in ``INDEX_FIELDS`` order."""
    lines = [
        json.dumps(_arrow_safe({k: row.get(k) for k in INDEX_FIELDS}), ensure_ascii=False)
        for row in sorted(_listed(rows), key=lambda r: str(r.get("path")))
    ]
    return "".join(line + "\n" for line in lines).encode("utf-8")


def _current(entry: Mapping[str, Any]) -> dict[str, Any]:
    """An entry without what earlier versions recorded in the clear: the source's SHA-256
    and the unkeyed redaction key (their entries have no ``source_mark``). A session no run
    has touched since keeps such an entry; the next run that has its file re-checks it."""
    current = {k: v for k, v in entry.items() if k != "source_sha256"}
    if "source_mark" not in current:
        current.pop("redaction_key", None)
    return current


def render_manifest(
    sessions: Mapping[str, Mapping[str, Any]], card_oid: str | None = None
) -> bytes:
    """``manifest.json``: per published path its source mark, redaction key and output hash;
    and the git oid of the card this tool wrote, to tell a card a person edited."""
    document: dict[str, Any] = {
        "schema_version": MANIFEST_SCHEMA,
        "generator": f"pi-session-export {__version__}",
        "detector_version": DETECTOR_VERSION,
        "sessions": {
            path: _current(sessions[path])
            for path in sorted(sessions)
            if not sessions[path].get(SUPERSEDED)
        },
    }
    if card_oid:
        document["card_oid"] = card_oid
    text = json.dumps(document, ensure_ascii=False, indent=1, sort_keys=True)
    return (escape_surrogates(text) + "\n").encode("utf-8")


#: The lines around the part of the card each run writes again; the rest is the owner's.
CARD_BEGIN = "<!-- pi-session:begin -->"
CARD_END = "<!-- pi-session:end -->"
_BLOCK_NOTE = (
    "<!-- This part is written by `pi-session publish` and replaced on every run: edit the "
    "card outside the pi-session begin/end lines (and its YAML above), which runs keep. -->"
)
_MARKER = re.compile(r"[ \t]*<!--[ \t]*pi-session:(begin|end)[ \t]*-->[ \t]*\r?")
#: The configs the card must hold, whatever else its owner adds: the index is the default
#: config (one table for the viewer and ``datasets``), the raw traces the ``sessions`` one.
CARD_CONFIGS: list[dict[str, Any]] = [
    {"config_name": "default", "data_files": [{"split": "train", "path": "index.jsonl"}]},
    {"config_name": "sessions", "data_files": [{"split": "train", "path": "sessions/*/*.jsonl"}]},
]


class CardError(ValueError):
    """A card whose generated part cannot be brought up to date; ``str()`` says why."""


def render_card(
    repo_id: str,
    rows: Iterable[Mapping[str, Any]],
    sessions: Mapping[str, Mapping[str, Any]],
    policy: RedactionPolicy,
    *,
    has_html: bool = False,
    existing: str | None = None,
) -> bytes:
    """``README.md``: YAML metadata (``configs`` -> ``index.jsonl``), a title, the generated
    block between :data:`CARD_BEGIN` and :data:`CARD_END`, and a license section.

    With ``existing`` (the card on the Hub, which holds the markers), only its block is
    replaced: what its owner wrote around it stays, and so do their YAML keys, with our
    ``configs`` put right. Raises :class:`CardError` when that cannot be done."""
    rows = _listed(rows)
    sessions = {path: entry for path, entry in sessions.items() if not entry.get(SUPERSEDED)}
    agents = _agents(rows)
    name = card_title(repo_id.split("/")[-1], agents)
    block = [
        CARD_BEGIN,
        _BLOCK_NOTE,
        *_introduction(agents),
        *_totals_table(rows, agents),
        *_files_section(has_html),
        *_loading_example(repo_id),
        *_redaction_section(policy, sessions),
        "",
        CARD_END,
    ]
    if existing is not None:
        return replace_surrogates(_merged(existing, block)).encode("utf-8")
    lines = [*_front_matter(name), "", f"# {name}", "", *block, *_license_section()]
    return replace_surrogates("\n".join(lines)).encode("utf-8")


def has_card_block(text: str) -> bool:
    """True when the card has a marker line of its generated block (begin or end)."""
    return any(_MARKER.fullmatch(line) for line in text.split("\n"))


def card_problem(text: str) -> str | None:
    """Why the generated block of this card cannot be refreshed (None: it can)."""
    try:
        _merged(text, [CARD_BEGIN, CARD_END])
    except CardError as error:
        return str(error)
    return None


def _merged(existing: str, block: list[str]) -> str:
    """``existing`` with its marked block replaced by ``block`` and its front matter's
    ``configs`` put right (the front matter text is kept as it is when they were)."""
    front, body = _split_front_matter(existing.removeprefix("\ufeff"))
    if front is None:  # none (deleted): ours, with the owner's text below it
        head = "\n".join(_front_matter(None))
    else:
        head = _front_matter_with_our_configs(front)
    lines = body.split("\n")
    marks = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _MARKER.fullmatch(line))]
    if [kind for _, kind in marks] != ["begin", "end"]:
        raise CardError(f"its {CARD_BEGIN} and {CARD_END} lines are not one of each, in that order")
    (start, _), (end, _) = marks
    return "\n".join([head, *lines[:start], *block, *lines[end + 1 :]])


def _split_front_matter(text: str) -> tuple[str | None, str]:
    """The YAML between a first ``---`` line and the next one, and the text after that
    line; None: no front matter."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    raise CardError("its YAML front matter has no closing --- line")


def _front_matter_with_our_configs(front: str) -> str:
    """The owner's front matter with :data:`CARD_CONFIGS` in ``configs`` (theirs kept after
    ours): as written when nothing had to change, else written out again by YAML."""
    import yaml

    try:
        data = yaml.safe_load(front) if front.strip() else {}
    except (yaml.YAMLError, RecursionError, ValueError) as error:
        where = getattr(error, "problem_mark", None)
        at = f" (line {where.line + 2})" if where is not None else ""
        raise CardError(f"its YAML front matter does not parse{at}") from None
    if not isinstance(data, dict):
        raise CardError("its YAML front matter is not a mapping of keys")
    had_configs = "configs" in data
    configs = data.get("configs")
    configs = configs if isinstance(configs, list) else []
    if all(ours in configs for ours in CARD_CONFIGS):
        return "\n".join(["---", front, "---"])
    names = {ours["config_name"] for ours in CARD_CONFIGS}
    theirs = [c for c in configs if not (isinstance(c, dict) and c.get("config_name") in names)]
    data["configs"] = [*CARD_CONFIGS, *theirs]
    edited = _configs_replaced(front, data["configs"], had_configs)
    if edited is not None and _reads_as(edited, data):
        return "\n".join(["---", edited, "---"])  # the owner's text, comments and all
    try:
        dumped = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)
    except yaml.YAMLError:  # (a value safe_load made that it cannot write back: none known)
        raise CardError("its YAML front matter cannot be written back") from None
    return "\n".join(["---", dumped.rstrip("\n"), "---"])


def _reads_as(text: str, data: Any) -> bool:
    """Whether the YAML ``text`` reads back as ``data`` (an edit by lines went right)."""
    import yaml

    try:
        return yaml.safe_load(text) == data
    except (yaml.YAMLError, RecursionError, ValueError):
        return False


#: A top-level key's line in YAML front matter (``license: mit``, ``configs:``)
_TOP_KEY = re.compile(r"(?P<key>[A-Za-z_][\w.\-]*)[ \t]*:(?:[ \t]|\r?$)")


def _configs_replaced(front: str, configs: list[Any], had_configs: bool) -> str | None:
    """``front`` with only its top-level ``configs`` block written anew (appended when it
    has none): PyYAML writing the whole front matter again dropped the owner's comments,
    quoting and layout. None when the text is not plain enough to edit by its lines (the
    caller also checks that the result reads back as intended)."""
    import yaml

    block = yaml.safe_dump(
        {"configs": configs}, sort_keys=False, allow_unicode=True, width=1000
    ).rstrip("\n")
    lines = front.split("\n")
    keys = [(i, m["key"]) for i, line in enumerate(lines) if (m := _TOP_KEY.match(line))]
    mine = [i for i, key in keys if key == "configs"]
    if not mine:  # (a `configs` key not found by its line, `"configs":`, is not doubled)
        if had_configs:
            return None
        return f"{front.rstrip()}\n{block}" if front.strip() else block
    if len(mine) > 1:
        return None
    start = mine[0]
    end = next((i for i, _ in keys if i > start), len(lines))
    while end > start + 1 and lines[end - 1].lstrip().startswith("#"):
        end -= 1  # a comment right above the next key belongs to it
    return "\n".join([*lines[:start], block, *lines[end:]])


def _agents(rows: list[Mapping[str, Any]]) -> list[str]:
    """The agents whose sessions the dataset holds, Pi first (a row published before 0.2.41
    has none: counted as Pi's, as the card then said of every row)."""
    found = {row.get("agent") if isinstance(row.get("agent"), str) else "Pi" for row in rows}
    return sorted(found or {"Pi"}, key=lambda agent: (agent != "Pi", agent))


def card_title(name: str, agents: list[str] | None = None) -> str:
    """The card's title and ``pretty_name``: "Pi coding-agent sessions: work", but a name
    that says sessions already is not repeated ("sessions (Pi coding agent)", not "Pi
    coding-agent sessions: sessions"); "coding-agent" alone when other agents' are there."""
    pi_only = agents in (None, ["Pi"])
    if {"session", "sessions"} & set(re.split(r"[-_.\s]+", name.lower())):
        return f"{name} (Pi coding agent)" if pi_only else f"{name} (coding agents)"
    return f"Pi coding-agent sessions: {name}" if pi_only else f"Coding-agent sessions: {name}"


def _front_matter(title: str | None) -> list[str]:
    """The YAML the Hub reads: the index is the default config, so its viewer and
    ``datasets`` infer one table (``title`` None: no ``pretty_name``)."""
    lines = ["---"]
    if title is not None:
        lines.append(f"pretty_name: {json.dumps(title)}")
    lines += ["license: other", "tags:", "- agent-traces", "- pi", "- coding-agent"]
    lines += ["task_categories:", "- text-generation", "configs:"]
    for config in CARD_CONFIGS:  # the raw traces: the config the Hub's trace viewer reads
        (files,) = config["data_files"]
        lines += [f"- config_name: {config['config_name']}", "  data_files:"]
        lines += [f"  - split: {files['split']}", f"    path: {files['path']}"]
    return [*lines, "---"]


def _introduction(agents: list[str]) -> list[str]:
    made = f"published with `pi-session publish` (pi-session-export {__version__})"
    if agents == ["Pi"]:
        return ["", f"Sessions of the [Pi]({_PI}) coding agent, {made}."]
    others = " and ".join(a for a in agents if a != "Pi")
    return [
        "",
        f"Sessions of coding agents ({', '.join(agents)}), {made}. {others} sessions are "
        f"converted to the session format of [Pi]({_PI}); the index's `agent` says whose "
        "each is.",
    ]


_PI = "https://github.com/badlogic/pi-mono"


def _total(rows: list[Mapping[str, Any]], key: str) -> str:
    """A column's sum over the index rows, as the table shows it; a row without it adds 0."""
    return f"{sum(_count(int(row.get(key) or 0)) for row in rows):,}"


def _totals_table(rows: list[Mapping[str, Any]], agents: list[str]) -> list[str]:
    """Totals over every session the dataset holds once the commit lands (its index rows),
    not only this run's."""
    cost = sum(_finite(float(row.get("cost") or 0)) for row in rows)
    # each row's is finite, but two of 1e308 add up to inf: no total, rather than "inf"
    spent = (
        f"{cost:,.2f}"
        if math.isfinite(cost)
        else "n/a (the recorded costs add up past the largest number)"
    )
    # Claude Code's and Codex's files record tokens; their cost is computed from list prices
    how = "as recorded" if agents == ["Pi"] else "as recorded, else from list prices"
    return [
        "",
        "| | |",
        "|---|--:|",
        f"| sessions | {len(rows):,} |",
        f"| projects | {len({row.get('project') for row in rows}):,} |",
        f"| messages | {_total(rows, 'messages')} |",
        f"| tool calls | {_total(rows, 'tool_calls')} |",
        f"| input / output tokens | {_total(rows, 'input_tokens')} / "
        f"{_total(rows, 'output_tokens')} |",
        f"| cache read / write tokens | {_total(rows, 'cache_read_tokens')} / "
        f"{_total(rows, 'cache_write_tokens')} |",
        f"| cost (USD, {how}) | {spent} |",
        f"| activity | {_activity_span(rows)} |",
    ]


def _activity_span(rows: list[Mapping[str, Any]]) -> str:
    """First to last day any session was active (UTC dates, as the index records them):
    the times read, not their text sorted (a year written as ``1-`` by an older publish
    sorted after ``2025-``); a time nothing reads is left out."""
    moments = [
        parse_time(t)
        for r in rows
        for t in (r.get("started_at"), r.get("ended_at"))
        if isinstance(t, str)
    ]
    days = sorted(utc_moment(m).date() for m in moments if m is not None)
    return f"{days[0].isoformat()} to {days[-1].isoformat()}" if days else "n/a"


def _files_section(has_html: bool) -> list[str]:
    lines = [
        "",
        "## Files",
        "",
        "- `sessions/<YYYY-MM>/<file>.jsonl`: the redacted Pi session files, one JSON object "
        f"per line ([format]({SESSION_FORMAT_DOC})), the `sessions` config: the Hub's Agent Traces "
        "viewer reads Pi sessions.",
        "- `index.jsonl`: one row per session (the default config): "
        + ", ".join(f"`{k}`" for k in INDEX_FIELDS)
        + ".",
        "- `manifest.json`: per file a keyed hash of its source and of the redaction settings "
        "(HMACs under a key that stays on the publishing machine) and the published SHA-256, "
        "so the next publish uploads only what changed.",
    ]
    if has_html:
        lines.append("- `html/`: a static site (`html/index.html`) to browse the sessions.")
    return lines


def _loading_example(repo_id: str) -> list[str]:
    """The index as a table, and the traces as ``datasets`` reads Pi sessions: it knows
    them as agent traces (a row per session: prompt, messages, tools...) when ``teich`` is
    installed, and fails without it (checked with datasets 5.2 and teich 0.3)."""
    return [
        "",
        "```python",
        "from datasets import load_dataset",
        f'index = load_dataset("{repo_id}", split="train")  # a row per session',
        "# the sessions themselves as agent traces (pip install datasets teich):",
        f'traces = load_dataset("{repo_id}", "sessions", split="train")',
        "```",
        "",
        "A session is a tree: entries link to their parent by `parentId`, and a user who went "
        "back and tried again left branches. The trace view reads the file in order, so a "
        "branched session's retries and abandoned answers come one after another in its "
        "messages; follow `parentId` from the last entry back to the root for the path the "
        "session ended on.",
    ]


def _redaction_section(
    policy: RedactionPolicy, sessions: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    return [
        "",
        "## How the data was redacted",
        "",
        *_policy_lines(policy, sessions),
        _replacements_line(sessions),
        "",
        "Automatic redaction is not a guarantee: review the sessions before making this dataset "
        "public.",
    ]


def _policy_lines(
    policy: RedactionPolicy, sessions: Mapping[str, Mapping[str, Any]] | None = None
) -> list[str]:
    lines = [
        f"- Secrets found by the detectors (version `{DETECTOR_VERSION}`), values of the "
        "publisher's sensitive environment variables and any `--secret` values are replaced "
        "by placeholders such as `[REDACTED:github-token:1]`.",
    ]
    if not policy.keep_paths:
        lines.append("- The home folder is shown as `~` and the user name as `<user>`.")
    lines.append(
        "- Hidden entries (custom entries, `display: false` messages) are dropped, and so are "
        "the providers' signatures of thinking and text blocks (`thinkingSignature`, "
        "`thoughtSignature`, `textSignature`): a turn with extended thinking cannot be sent "
        "back to its provider from this data."
    )
    extra = {
        "active_branch_only": "only the active branch of each session is kept",
        "no_thinking": "thinking text and signatures are removed",
        "no_tool_output": "tool results are replaced by a note",
        "no_tool_calls": "tool calls and their results are left out (the conversation only)",
        "no_images": "images are replaced by a note",
        "pii": "e-mail addresses, phone numbers and IPv4 and IPv6 addresses are replaced (--pii)",
    }
    # what each published session records (a dataset published over several runs may mix
    # them); a session published before they were recorded counts as under this run's policy
    held = [
        set(cuts) if isinstance(cuts := entry.get("cuts"), list) else None
        for entry in (sessions or {}).values()
    ]
    total = len(held)
    for flag, text in extra.items():
        n = sum(flag in cuts if cuts is not None else getattr(policy, flag) for cuts in held)
        if not held:
            n, total = int(getattr(policy, flag)), 1
        if n == total:
            lines.append(f"- Also: {text}.")
        elif n:
            lines.append(f"- Also, in {n:,} of the {total:,} sessions: {text}.")
    with_images = sum(
        "no_images" not in cuts if cuts is not None else not policy.no_images for cuts in held
    )
    if with_images or (not held and not policy.no_images):
        # (how many carry a location is not said: the manifest does not record it, see
        # hub_plan's `gps_images`; the publisher was warned of each)
        lines.append(
            "- Images are published as they are, their metadata (EXIF, XMP, PNG text) "
            "included: a photo's may hold the GPS location where it was taken."
        )
    patterns = {f"pattern:{name}" for name, _ in policy.patterns} if not held else set()
    for cuts in held:
        patterns |= {c for c in cuts or () if isinstance(c, str) and c.startswith("pattern:")}
    if patterns:  # the names only: a regex may spell out what it looks for
        names = ", ".join(f"`{c.removeprefix('pattern:')}`" for c in sorted(patterns))
        lines.append(f"- Also: the publisher's own patterns are replaced ({names}).")
    return lines


def _replacements_line(sessions: Mapping[str, Mapping[str, Any]]) -> str:
    """The placeholders the published files hold, per kind, summed from the manifest (a
    dataset published over several runs counts every run's)."""
    found: dict[str, int] = {}
    for entry in sessions.values():
        for name, n in (entry.get("redactions") or {}).items():
            found[name] = found.get(name, 0) + int(n)
    total = sum(found.values())
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(found.items(), key=lambda i: (-i[1], i[0])))
    return f"- Replacements in the published files: {total:,}" + (f" ({kinds})." if kinds else ".")


def _license_section() -> list[str]:
    return [
        "",
        "## License",
        "",
        "Not chosen yet (`license: other` is a placeholder): edit this card to state the terms "
        "(this section and the YAML above are yours: publish keeps them).",
        "",
    ]
