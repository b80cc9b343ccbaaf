"""Tokens and cost: totals for all branches vs the active path, per model, branch and tool.

Pi's page sums every branch into one number; here every total says which scope it covers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from exporter.entries import (
    UNNAMED_TOOL,
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    Entry,
    MessageEntry,
    ModelChangeEntry,
    as_dict,
    as_str,
    whole_count,
)
from exporter.formatting import fmt_cost, fmt_int, plural
from exporter.session import Branch, Session, parse_time


@dataclass(slots=True)
class Usage:
    """Token and cost totals of some assistant turns."""

    turns: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: float = 0.0
    turns_without_usage: int = 0

    def add(self, other: Usage) -> None:
        self.turns += other.turns
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.total_tokens += other.total_tokens
        self.cost += other.cost
        self.turns_without_usage += other.turns_without_usage

    @property
    def context_tokens(self) -> int:
        """What the model read this turn: fresh input plus cached prompt."""
        return self.input + self.cache_read + self.cache_write

    def as_dict(self) -> dict[str, Any]:
        """The `--json` form: every count, so a reader knows how many turns had no usage
        (their tokens and cost are zeros, not what they spent). The cost to 12 significant
        digits, which drops a sum's float noise (0.30000000000000004) and nothing a turn
        cost: rounded to 6 decimals, a model's $0.0000004 read 0.0 under a total of 1e-06."""
        return {
            "turns": self.turns,
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
            "total_tokens": self.total_tokens,
            "cost": float(f"{self.cost:.12g}"),
            "turns_without_usage": self.turns_without_usage,
        }


def usage_rows(items: list[tuple[str, Usage]], total_label: str = "Total") -> list[list[str]]:
    """Formatted table rows (model, turns, input, output, cache read/write, cost) + a total."""
    total = Usage()
    rows = []
    for name, usage in [*items, (total_label, total)]:
        if usage is not total:
            total.add(usage)
        rows.append(
            [
                name,
                fmt_int(usage.turns),
                fmt_int(usage.input),
                fmt_int(usage.output),
                fmt_int(usage.cache_read),
                fmt_int(usage.cache_write),
                fmt_cost(usage.cost),
            ]
        )
    return rows


def turn_usage(entry: MessageEntry) -> Usage:
    """Usage of one assistant message; missing usage counts as zero and is noted.

    Parsed once per entry and shared (callers only read it; ``Usage.add`` is called on
    fresh totals, never on a turn's own object)."""
    usage = entry.usage_cache
    if usage is None:
        usage = entry.usage_cache = usage_from_raw(entry.message.get("usage"))
    return usage


def usage_from_raw(raw: Any) -> Usage:
    """One turn's ``usage`` object: ``cost.total``, else the sum of its parts; any bad value
    (a cost outside 0 to ``MAX_TURN_COST``) counts as zero. Shared with the listing scan so
    both always agree."""
    if not isinstance(raw, dict):
        return Usage(turns=1, turns_without_usage=1)
    cost = as_dict(raw.get("cost"))
    total_cost = cost.get("total")
    if _is_number(total_cost):
        cost_value = _amount(total_cost)
    else:
        cost_value = sum(_amount(cost.get(k)) for k in _COST_PARTS)
    tokens = tuple(_tokens(raw.get(key)) for key in _TOKEN_FIELDS)
    # the sum of the four, as every table says ("tokens count input, output and cache reads
    # and writes"), not Pi's totalTokens: pi-ai fills that in as input + output alone where
    # a provider gives none (Bedrock, Mistral), 150 for a turn that read 5,000 cached tokens
    return Usage(1, *tokens, total_tokens=sum(tokens), cost=cost_value)


#: The token counts of a turn's ``usage``, as Pi writes them.
_TOKEN_FIELDS = ("input", "output", "cacheRead", "cacheWrite")


def _tokens(value: Any) -> int:
    """A token count: a whole number from 0 to 2**53 (``100.0`` too, the same number to
    Pi's JavaScript), as another agent's file's are read (``token_count``); anything else
    is 0 (the loader warns): 1e308 became a 309-digit count that widened every table, and
    -500 took tokens away from the total."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    count = whole_count(value)
    return 0 if count is None else count


#: The most one turn's cost (or one part of it) may be, in dollars: past it, a cost is no
#: amount a model call was charged, and counts as 0 (the loader warns). A call that fills a
#: million-token context at the dearest list prices costs hundreds of dollars; even a model
#: configured with its prices per token, not per million (a million times too dear), stays
#: under this. And a session's sum of such costs stays a finite number a table can print:
#: 1e300 read "$1e+300", and 1e400 (JavaScript's Infinity) was 0 without a word.
MAX_TURN_COST = 1e9

#: The parts of a turn's cost Pi writes, summed where it gives no ``total``.
_COST_PARTS = ("input", "output", "cacheRead", "cacheWrite")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _dollars(value: Any) -> float | None:
    """A cost as an amount from 0 to ``MAX_TURN_COST``; None for one outside it (negative:
    it took money off every total; infinite, NaN, or past the bound) or no number."""
    if not _is_number(value):
        return None
    if isinstance(value, int):  # (checked as an int: 10**400 has no float)
        return float(value) if 0 <= value <= MAX_TURN_COST else None
    return value if 0 <= value <= MAX_TURN_COST else None  # (inf and NaN fail both)


def _amount(value: Any) -> float:
    """A cost as counted: 0 for one that is no amount (``_dollars``)."""
    amount = _dollars(value)
    return 0.0 if amount is None else amount


def unusable_costs(raw: Any) -> list[tuple[str, Any]]:
    """The costs a turn's ``usage`` gives that are counted as 0, by name (``cost.total``,
    else the parts summed for it: ``cost.output``); one that is no number at all (a string,
    null) says nothing wrong, as before: the parts stand in for a total that is none."""
    cost = as_dict(raw.get("cost")) if isinstance(raw, dict) else {}
    names = ("total",) if _is_number(cost.get("total")) else _COST_PARTS
    read = [(f"cost.{name}", cost.get(name)) for name in names]
    return [(name, v) for name, v in read if _is_number(v) and _dollars(v) is None]


def unusable_token_counts(raw: Any) -> list[Any]:
    """The token counts a turn's ``usage`` gives that are counted as 0 (see ``_tokens``);
    a count missing or null says nothing wrong."""
    if not isinstance(raw, dict):
        return []
    values = (raw.get(key) for key in _TOKEN_FIELDS)
    return [v for v in values if v is not None and _tokens(v) == 0 and v != 0]


def sum_usage(entries: Iterable[Entry]) -> Usage:
    total = Usage()
    for entry in entries:
        if isinstance(entry, MessageEntry) and entry.role == "assistant":
            total.add(turn_usage(entry))
    return total


def usage_by_model(entries: Iterable[Entry]) -> list[tuple[str, Usage]]:
    """Per ``provider/model``, in first-seen order."""
    return _scope_usage(entries)[1]


def _scope_usage(entries: Iterable[Entry]) -> tuple[Usage, list[tuple[str, Usage]]]:
    """The total and the per-model split of one scope, in a single pass."""
    total = Usage()
    result: dict[str, Usage] = {}
    for entry in entries:
        if isinstance(entry, MessageEntry) and entry.role == "assistant":
            usage = turn_usage(entry)
            total.add(usage)
            key = entry.model_key or "(unknown model)"
            per_model = result.get(key)
            if per_model is None:
                per_model = result[key] = Usage()
            per_model.add(usage)
    return total, list(result.items())


@dataclass(slots=True)
class ToolStats:
    calls: int = 0
    errors: int = 0
    missing_results: int = 0


@dataclass(slots=True)
class BranchStats:
    branch: Branch
    usage: Usage
    entries: int
    first_prompt: str | None
    last_activity: datetime | None
    labels: list[str]


@dataclass(slots=True)
class ContextPoint:
    """One assistant turn on the active path, for the context-size chart."""

    entry_id: str
    context_tokens: int
    cumulative_cost: float
    compaction_before: str | None = None
    turn: int = 0  # its number among the path's assistant turns (unplotted ones counted)


@dataclass(slots=True)
class SessionStats:
    all: Usage
    active_path: Usage
    by_model_all: list[tuple[str, Usage]]
    by_model_path: list[tuple[str, Usage]]
    branches: list[BranchStats]
    tools: dict[str, ToolStats]
    roles: Counter[str]
    other_entries: Counter[str]  # entry type -> count, for the entries that are no message
    models_used: list[str]
    compactions: int
    branch_summaries: int
    custom_messages: int
    labels: int
    errors: int
    aborted: int
    length_stops: int
    started: datetime | None
    ended: datetime | None
    context_series: list[ContextPoint] = field(default_factory=list)
    created: datetime | None = None  # the header's time: when the session file was made
    #: the last user or assistant message's time: the session's last activity, as `list`
    #: and --since read it (Pi's "modified"); ``ended`` counts any entry
    last_message: datetime | None = None

    @property
    def duration_seconds(self) -> float | None:
        if self.started and self.ended:
            return max(0.0, (self.ended - self.started).total_seconds())
        return None

    @property
    def created_apart(self) -> datetime | None:
        """When the session file was made, where that is not when it started: a fork is
        made after the entries it copies (Pi's page dates a session by this time)."""
        created, started = self.created, self.started
        if created is None or started is None:
            return None
        if created.utcoffset() is None or started.utcoffset() is None:
            return None
        return created if abs((created - started).total_seconds()) >= 1 else None

    @property
    def tool_calls(self) -> int:
        return sum(t.calls for t in self.tools.values())


def _models_used(entries: Iterable[Entry]) -> list[str]:
    """Models from model changes AND assistant messages (Pi's header counts only the latter)."""
    seen: dict[str, None] = {}
    for entry in entries:
        key = entry.model_key if isinstance(entry, (ModelChangeEntry, MessageEntry)) else None
        if key:
            seen.setdefault(key, None)
    return list(seen)


def _tool_stats(session: Session) -> dict[str, ToolStats]:
    tools: dict[str, ToolStats] = {}
    for entry in session.iter_messages():
        if entry.role != "assistant":
            continue
        content = entry.message.get("content")
        if not isinstance(content, list):
            continue
        for index, block in enumerate(content):
            if not isinstance(block, dict) or block.get("type") != "toolCall":
                continue
            name = as_str(block.get("name")) or UNNAMED_TOOL
            stats = tools.setdefault(name, ToolStats())
            stats.calls += 1
            result = session.result_for_call(entry.id, index)
            if result is None:
                stats.missing_results += 1
            elif isinstance(result, MessageEntry) and result.is_error:
                stats.errors += 1
    return dict(sorted(tools.items(), key=lambda item: (-item[1].calls, item[0])))


def _last_activity(entries: Iterable[Entry]) -> datetime | None:
    latest: datetime | None = None
    for entry in entries:
        moment = entry.moment
        if moment and (latest is None or moment > latest):
            latest = moment
    return latest


def _context_series(session: Session) -> list[ContextPoint]:
    series: list[ContextPoint] = []
    cumulative = 0.0
    turn = 0
    pending_compaction: str | None = None
    for entry in session.active_entries():
        if isinstance(entry, CompactionEntry):
            pending_compaction = entry.id
        elif isinstance(entry, MessageEntry) and entry.role == "assistant":
            turn += 1
            usage = turn_usage(entry)
            cumulative += usage.cost
            if not usage.context_tokens:  # an aborted or failed turn reported no usage: plotting
                continue  # it at 0 would draw a context drop that never happened
            series.append(
                ContextPoint(entry.id, usage.context_tokens, cumulative, pending_compaction, turn)
            )
            pending_compaction = None
    return series


def compute_stats(session: Session) -> SessionStats:
    """Everything the header, tables and chart need, in O(n)."""
    path_entries = session.active_entries()
    roles: Counter[str] = Counter()
    others: Counter[str] = Counter()  # the entries that are no message, by type
    errors = aborted = length = compactions = summaries = custom = 0
    last_message: datetime | None = None
    for entry in session.entries:
        if isinstance(entry, MessageEntry):
            roles[entry.role] += 1
            moment = entry.moment
            if moment and entry.role in ("user", "assistant"):
                last_message = moment if last_message is None else max(last_message, moment)
            if entry.role == "assistant":
                reason = entry.stop_reason
                errors += reason == "error"
                aborted += reason == "aborted"
                length += reason == "length"
        elif isinstance(entry, CompactionEntry):
            compactions += 1
        elif isinstance(entry, BranchSummaryEntry):
            summaries += 1
        elif isinstance(entry, CustomMessageEntry):
            custom += 1
        if not isinstance(entry, MessageEntry):
            others[entry.type] += 1
    branch_stats = []
    for branch in session.branches():
        own = [session.by_id[i] for i in branch.entry_ids]
        branch_stats.append(
            BranchStats(
                branch=branch,
                usage=sum_usage(own),
                entries=len(own),
                first_prompt=session.first_prompt(branch.entry_ids),
                last_activity=_last_activity(own),
                labels=[session.labels[i] for i in branch.entry_ids if i in session.labels],
            )
        )
    times = [t for t in (entry.moment for entry in session.entries) if t]
    created = parse_time(session.header.timestamp)
    started = created or (min(times) if times else None)
    if times and started and min(times) < started:
        started = min(times)
    all_total, by_model_all = _scope_usage(session.entries)
    path_total, by_model_path = _scope_usage(path_entries)
    return SessionStats(
        all=all_total,
        active_path=path_total,
        by_model_all=by_model_all,
        by_model_path=by_model_path,
        branches=branch_stats,
        tools=_tool_stats(session),
        roles=roles,
        other_entries=others,
        models_used=_models_used(session.entries),
        compactions=compactions,
        branch_summaries=summaries,
        custom_messages=custom,
        # (a label of an id the file lacks is kept on the session, but the page's and
        # stats' lists of labels, which link to their entries, cannot show it)
        labels=sum(target in session.by_id for target in session.labels),
        errors=errors,
        aborted=aborted,
        length_stops=length,
        started=started,
        ended=max(times) if times else started,
        context_series=_context_series(session),
        created=created,
        last_message=last_message,
    )


class ModelTurns(NamedTuple):
    """A model used in a session, as the header names it."""

    name: str
    answers: int  # its assistant turns that said something
    turns: int  # all its assistant turns
    empty: str  # its turns that said nothing, by why ("1 aborted turn"); "" when none


#: Why a turn said nothing, by its stop reason ("empty" for any other).
_EMPTY_KIND = {"aborted": "aborted", "error": "failed"}


def models_with_answers(session: Session, stats: SessionStats) -> list[ModelTurns]:
    """Each model used, with its assistant turns that said something and all its turns, in
    all branches: a model picked with a model change but never answering (pi-branched-4:
    three of four), or whose only turn was aborted before a word (pi-large-session), is not
    mistaken for one that did; the second kind still has turns in the usage tables, so the
    header counts them too, saying why they are empty (aborted, failed)."""
    answers: Counter[str] = Counter()
    turns: Counter[str] = Counter()
    empty: dict[str, Counter[str]] = {}
    for entry in session.iter_messages():
        key = entry.model_key if entry.role == "assistant" else None
        if not key:
            continue
        turns[key] += 1
        if _said_something(entry.message.get("content")):
            answers[key] += 1
        else:
            stop = entry.message.get("stopReason")
            kind = _EMPTY_KIND.get(stop, "empty") if isinstance(stop, str) else "empty"
            empty.setdefault(key, Counter())[kind] += 1
    return [
        ModelTurns(name, answers[name], turns[name], _empty_said(empty.get(name)))
        for name in stats.models_used
    ]


def _empty_said(kinds: Counter[str] | None) -> str:
    """ "1 aborted turn, 2 empty turns": the most frequent kind first."""
    return ", ".join(plural(n, f"{kind} turn") for kind, n in (kinds or Counter()).most_common())


def models_said(models: list[ModelTurns], show: Callable[[str], str] = lambda name: name) -> str:
    """As the page says it: models that answered, then those only picked (with their turns
    that said nothing, which the usage tables count); ``show`` writes a name (`stats` as
    it is, the Markdown export as code)."""
    answered = ", ".join(show(m.name) for m in models if m.answers)
    silent = ", ".join(
        show(m.name) + (f" ({m.empty})" if m.empty else "") for m in models if not m.answers
    )
    if not silent:
        return answered or "none"
    silent = f"also selected, never answered: {silent}"
    return f"{answered} · {silent}" if answered else silent


def _said_something(content: object) -> bool:
    """Text or thinking with words in it, a tool call, an image: not empty text blocks."""
    if isinstance(content, str):
        return bool(content.strip())
    if not isinstance(content, list):
        return False
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        words = block.get(kind) if kind in ("text", "thinking") else None
        if kind not in ("text", "thinking") or (isinstance(words, str) and words.strip()):
            return True
    return False
