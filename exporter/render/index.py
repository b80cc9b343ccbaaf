"""Site index and project pages: session rows -> one self-contained, sortable HTML listing.

Rows are small JSON-friendly dicts (:func:`session_row`) so a site build can keep them in its
manifest and rebuild the index without re-reading unchanged sessions. The listing is complete
without JavaScript (server-sorted by last activity); ``static/index.js`` only adds sorting,
filtering, local times and the theme toggle, allowed by the same hash-based CSP as the pages.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import math
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

from markupsafe import Markup

from exporter import __version__
from exporter.entries import MessageEntry
from exporter.formatting import fmt_cost, plain_text_shown, plural, writable_page
from exporter.render import _iso, display_path, page_title
from exporter.render.assets import asset_dir, head_script, minified_file, shared_script
from exporter.render.chart import nice_ceiling, on_axis
from exporter.render.csp import content_security_policy
from exporter.render.entry_lines import prompt_preview
from exporter.render.environment import jinja_environment
from exporter.render.view import entry_anchors
from exporter.session import Session, parse_time
from exporter.times import clock_text, message_time, utc_moment
from exporter.usage import SessionStats, compute_stats, models_with_answers, turn_usage

__all__ = [
    "SearchIndex",
    "answer_usage",
    "listing_key",
    "project_slug",
    "render_listing",
    "session_row",
]

_UNSAFE = re.compile(r"[^a-z0-9._-]+")
MAX_DAYS = 366


def project_slug(cwd: str) -> str:
    """Stable, unique, file-name-safe: ``<folder name>-<8 hex of the full path>``."""
    base = cwd.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    base = _UNSAFE.sub("-", base.lower()).strip("-.")[:40] or "project"
    return f"{base}-{hashlib.sha256(cwd.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def _day(moment: datetime) -> str:
    if moment.utcoffset() is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.date().isoformat()


def _money(value: float) -> float:
    """Rounded, and finite: costs that add up past the float range are stored as the largest
    float, so the manifest stays valid JSON and the row is not rebuilt on every run."""
    return round(value, 6) if math.isfinite(value) else sys.float_info.max


def _answering_models(session: Session, stats: SessionStats) -> list[str]:
    """The models that answered (the page's header names the ones only selected apart);
    all of them when none did, so the column still says what was tried."""
    models = models_with_answers(session, stats)
    answered = [m.name for m in models if m.answers]
    return answered or [m.name for m in models]


def session_row(session: Session) -> dict[str, Any]:
    """What the index needs about one rendered session (all branches counted once)."""
    stats = compute_stats(session)
    by_day: dict[str, float] = defaultdict(float)
    for day, _tokens, cost in answer_usage(session, stats):
        if day is not None:
            by_day[day] += cost
    first = session.first_prompt()
    prompts, more_words, later_words = indexed_prompts(session)
    return {
        "id": session.id,
        "name": session.name,
        "title": page_title(session),
        "first_prompt": prompt_preview(first, 160) if session.name and first else None,
        "cwd": session.header.cwd or "",
        "started": _iso(stats.started),
        "last_activity": _iso(stats.last_message or stats.ended),
        "messages": sum(stats.roles.values()),
        "entries": len(session.entries),
        "branches": len(stats.branches),
        "models": _answering_models(session, stats),
        "tokens": stats.all.total_tokens,
        "cost": _money(stats.all.cost),
        "cost_by_day": {d: _money(c) for d, c in sorted(by_day.items()) if c},
        "problems": sum(1 for d in session.diagnostics if d.severity != "info"),
        "agent": session.agent,
        "prompts": prompts,
        "prompt_more": more_words,
        "prompt_later": later_words,
    }


def answer_usage(session: Session, stats: SessionStats) -> list[tuple[str | None, int, float]]:
    """Each answer of the session (every branch, file order) as the index counts it: its
    UTC day (None when nothing dates it), tokens and cost. A turn is dated as ``stats
    --all`` dates it (:func:`message_time`: its entry's time, else its message's); the
    session's end dated a turn whose entry time was unreadable days after it happened."""
    out: list[tuple[str | None, int, float]] = []
    for entry in session.entries:
        if isinstance(entry, MessageEntry) and entry.role == "assistant":
            moment = message_time(entry.moment, entry.raw)
            usage = turn_usage(entry)
            out.append((_day(moment) if moment else None, usage.total_tokens, usage.cost))
    return out


#: What the index shows of each prompt its filter finds: enough words to know it by.
PROMPT_CHARS = 240
#: ... and of how many prompts of one session (a loop that prompts itself has thousands).
PROMPTS_PER_SESSION = 400
#: The next words of a long prompt (each once) are kept for the filter up to this many
#: characters, and of one session's prompts, with the words of those past the 400th, up to
#: this many (the filter missed every word past the 240th character of a prompt, and every
#: prompt past the 400th). The words of a long paste's end are not kept: a site of 2,000
#: sessions of six 12 KB pasted logs grew by 8 MB when a session kept 6,000 characters;
#: the "Search text" box reads more of each prompt.
PROMPT_WORDS_CHARS = 1_000
SESSION_WORDS_CHARS = 2_000
#: A "word" longer than this (base64, a minified line) is nobody's filter: left out.
LONGEST_WORD = 80


def prompt_index(session: Session) -> list[list[str]]:
    """Every prompt a person typed (every branch, file order) as ``[anchor, text]``: the
    index's search finds a session by what was asked in it and links to that prompt. The
    text is the session's as rendered (a redacted site's is redacted), on one line, cut,
    its colour codes dropped and hidden controls (bidi overrides) as signs, as pages show it."""
    return indexed_prompts(session)[0]


def indexed_prompts(session: Session) -> tuple[list[list[str]], list[list[Any]], str]:
    """:func:`prompt_index`'s prompts, the words of each long one after the shown text as
    ``[number of the prompt, words]``, and the words of the prompts past the ones listed:
    each word once per prompt, within :data:`SESSION_WORDS_CHARS` in all."""
    anchors = entry_anchors(session)
    shown: list[list[str]] = []
    more: list[list[Any]] = []
    later: list[str] = []
    later_seen: set[str] = set()
    room = SESSION_WORDS_CHARS
    for entry in session.iter_messages():
        if entry.role != "user":
            continue
        text = " ".join(plain_text_shown(entry.text).split())
        if not text:
            continue
        if len(shown) < PROMPTS_PER_SESSION:
            shown.append([anchors[entry.id], text[:PROMPT_CHARS]])
            if len(text) > PROMPT_CHARS and room > 0:
                in_view = {w.lower() for w in text[:PROMPT_CHARS].split(" ")[:-1]}
                words = _words_after(text, PROMPT_CHARS, in_view, min(room, PROMPT_WORDS_CHARS))
                if words:
                    more.append([len(shown) - 1, words])
                    room -= len(words) + 1
        elif room > 0:  # no longer listed: its words still find the session
            words = _words_after(text, 0, later_seen, min(room, PROMPT_WORDS_CHARS))
            if words:
                later.append(words)
                room -= len(words) + 1
    return shown, more, " ".join(later)


def _words_after(text: str, start: int, seen: set[str], room: int) -> str:
    """The words of ``text`` that end past character ``start`` (one cut there whole), each
    once (``seen`` holds those already kept, as the filter compares them: lower case), in
    at most ``room`` characters."""
    kept: list[str] = []
    size, at = 0, 0
    for word in text.split(" "):
        at += len(word) + 1
        key = word.lower()
        if at - 1 <= start or len(word) > LONGEST_WORD or key in seen:
            continue
        if size + len(word) > room:
            break
        seen.add(key)
        kept.append(word)
        size += len(word) + 1
    return " ".join(kept)


def packed_prompts(index: list[list[Any]]) -> str:
    """The prompt index as the listing embeds it: JSON (non-ASCII escaped, so a lone
    surrogate survives), gzip, base64. Prompts are most of a big site's index (~3 KB a
    session) and compress about fourfold; the script unpacks them at the first search."""
    data = json.dumps(index, separators=(",", ":")).encode("ascii")
    return base64.b64encode(gzip.compress(data, 6, mtime=0)).decode("ascii")


def _sessions_of(rows: list[dict[str, Any]]) -> str:
    """What a listing holds: "Pi sessions", "Claude Code sessions", or "Sessions" of both."""
    agents = {row.get("agent") or "Pi" for row in rows if not row.get("error")}
    return (
        f"{agents.pop()} sessions" if len(agents) == 1 else "Sessions" if agents else "Pi sessions"
    )


# --- view model ---------------------------------------------------------------------------


@dataclass(slots=True)
class DayChart:
    """Cost per day (or per week, for long spans) as SVG geometry (bars, ticks); the
    template only prints these numbers."""

    width: int
    height: int
    bars: list[tuple[float, float, float, float, str]]  # x, y, w, h, tooltip
    y_ticks: list[tuple[float, str]]
    x_ticks: list[tuple[float, str, str]]  # x, label, text-anchor
    days: int
    first: str
    last: str
    total: float  # of the charted days (the bars)
    earlier: float  # cost before the charted window
    table: list[tuple[str, str, int]]  # day, cost, sessions (newest first), for readers
    bucket_days: int = 1  # 7: one bar per week (Monday to Sunday)
    later: float = 0.0  # cost dated after today (a wrong clock), not charted
    plot_left: int = 56
    plot_right: int = 704
    plot_bottom: int = 156


#: A cost label's room, in the chart's units: a character of the phone's 19-unit labels,
#: and the gap to the axis.
TICK_CHAR_WIDTH, TICK_GAP = 11.5, 10

#: A day's cost is counted up to this: sums of absurd amounts stay finite numbers.
MAX_DAY_COST = 1e12
#: Above this many days a bar per day would be under 5 px wide: one bar per week instead.
WEEKLY_AFTER_DAYS = 120


def day_chart(rows: list[dict[str, Any]], today: date | None = None) -> DayChart | None:
    """Bars from the first to the last day with cost (at most the last 366 days): one per
    day, or one per week when the span is too long for daily bars to be seen. The window
    ends today at the latest: one turn from a machine with a wrong clock (year 2099) made
    the chart show that day alone and call a year of real cost "not shown"."""
    cost: dict[str, float] = defaultdict(float)
    sessions: dict[str, set[int]] = defaultdict(set)
    for number, row in enumerate(rows):
        for day, amount in (row.get("cost_by_day") or {}).items():
            # an absurd amount (1.7e308, summed to inf) would make the bars and totals nan
            cost[day] += min(amount, MAX_DAY_COST) if math.isfinite(amount) else 0.0
            sessions[day].add(number)
    if not cost:
        return None
    today = today or datetime.now(timezone.utc).date()
    last = date.fromisoformat(max(cost))
    if last > today:
        past = [d for d in cost if date.fromisoformat(d) <= today]
        last = date.fromisoformat(max(past)) if past else last
    window_start = date.fromordinal(max(1, last.toordinal() - MAX_DAYS + 1))  # year 1 is fine
    first = max(date.fromisoformat(min(cost)), window_start)
    earlier = sum(v for d, v in cost.items() if date.fromisoformat(d) < first)
    later = sum(v for d, v in cost.items() if date.fromisoformat(d) > last)
    span = (last - first).days + 1
    chart = DayChart(720, 180, [], [], [], span, first.isoformat(), last.isoformat(), 0, 0, [])
    chart.total, chart.earlier = sum(cost.values()) - earlier - later, earlier  # the bars
    chart.later = later
    chart.bucket_days = 7 if span > WEEKLY_AFTER_DAYS else 1
    starts = _bucket_starts(first, last, chart.bucket_days)
    bucket_cost = [0.0] * len(starts)
    bucket_sessions: list[set[int]] = [set() for _ in starts]
    for key, amount in cost.items():
        day = date.fromisoformat(key)
        if first <= day <= last:
            index = (day - starts[0]).days // chart.bucket_days
            bucket_cost[index] += amount
            bucket_sessions[index] |= sessions[key]
    top, inner_h = 12, chart.plot_bottom - 12
    peak = nice_ceiling(max(bucket_cost))
    # room for the longest cost label at a phone's label size ("$0.00025" ran off the left
    # edge of a phone, where the chart fits the screen; review 2026-12-02)
    ticks = [(f, _money_tick(peak * f)) for f in (0, 0.5, 1)]
    longest = max(len(label) for _, label in ticks)
    chart.plot_left = max(chart.plot_left, TICK_GAP + round(TICK_CHAR_WIDTH * longest))
    inner_w = chart.plot_right - chart.plot_left
    step = inner_w / len(starts)
    for i, start in enumerate(starts):
        amount = bucket_cost[i]
        if amount <= 0:
            continue
        height = max(inner_h * on_axis(amount, peak) / peak, 1.0)
        count = len(bucket_sessions[i])
        when = start.isoformat()
        if chart.bucket_days == 7:  # the first week may begin before the 366-day window
            cut = start < first and earlier
            when = f"week of {when}" + (f" (from {first.isoformat()})" if cut else "")
        tip = f"{when}: {fmt_cost(amount)} ({count} session{'s' if count != 1 else ''})"
        width = min(max(step * 0.8, 1.0), 36.0)
        x = chart.plot_left + i * step + (step - width) / 2
        chart.bars.append((x, chart.plot_bottom - height, width, height, tip))
    chart.table = [(d, fmt_cost(cost[d]), len(sessions[d])) for d in sorted(cost, reverse=True)]
    chart.y_ticks = [(chart.plot_bottom - inner_h * f, label) for f, label in ticks]
    chart.y_ticks = [(y, label) for y, label in chart.y_ticks if y >= top]
    picks = sorted({0, (len(starts) - 1) // 2, len(starts) - 1})
    anchors = {0: "start", len(starts) - 1: "end"} if len(starts) > 1 else {}
    ends = {0: first, len(starts) - 1: last}  # the axis runs from the first to the last day
    chart.x_ticks = [
        (
            chart.plot_left + (i + 0.5) * step,
            ends.get(i, starts[i]).isoformat(),
            anchors.get(i, "middle"),
        )
        for i in picks
    ]
    return chart


def _bucket_starts(first: date, last: date, bucket_days: int) -> list[date]:
    """The first day of each bar: every day, or every Monday from the week of ``first``."""
    start = first - timedelta(days=first.weekday()) if bucket_days == 7 else first
    return [start + timedelta(days=i) for i in range(0, (last - start).days + 1, bucket_days)]


def _money_tick(value: float) -> str:
    """Short axis labels ($0.005, $12.5, $1.5k): long ones would not fit left of the plot."""
    if value >= 1000:
        return f"${value / 1000:,.4g}k"
    return f"${value:.4g}" if value >= 1 or value == 0 else f"${value:.2g}"


def _when(iso: str | None) -> str:
    """A row's time as the listing shows it without its script: the UTC minute (year 999
    as ``0999``)."""
    moment = parse_time(iso)
    return f"{clock_text(utc_moment(moment), 'minutes')} UTC" if moment else ""


def _utc_stamp(iso: str | None) -> str:
    """A row's time as its ``<time datetime>`` carries it: in UTC, as the script's tooltip
    calls it (a row keeps the offset its session wrote: "…T10:00:00.000+09:00 (UTC)");
    empty for a time nothing reads, which the script then leaves alone."""
    moment = parse_time(iso)
    return utc_moment(moment).isoformat(timespec="milliseconds") if moment else ""


def _sort_time(iso: str | None) -> str:
    """The moment as the listing's script sorts it: seconds to the microsecond, as
    :func:`_by_recency` orders rows (whole seconds tied sessions active in one second, and
    a sort by last activity left them in the order of the column sorted before)."""
    moment = parse_time(iso)
    return f"{moment.timestamp():.6f}" if moment else "0"


def project_names(cwds: set[str]) -> dict[str, str]:
    """How each project folder is shown: home folders as ``~``, unless two projects would
    then read the same (``/home/alice/proj`` and ``/Users/bob/proj`` are not one project):
    those keep their full paths."""
    short = {cwd: display_path(cwd) for cwd in cwds}
    counts = Counter(short.values())
    return {cwd: name if counts[name] == 1 else cwd for cwd, name in short.items()}


def _session_view(
    row: dict[str, Any], base: str, project_links: dict[str, str], names: dict[str, str]
) -> dict[str, Any]:
    cwd = row.get("cwd") or ""
    error = row.get("error")
    return {
        "href": base + row["page"] if row.get("page") and not error else None,
        "title": row.get("title") or row.get("file") or "?",
        "subtitle": row.get("first_prompt"),
        "id": row.get("id") or "",
        "file": row.get("file") or "",
        "error": error,
        "project": names.get(cwd, display_path(cwd)) if cwd else "",
        "project_href": base + project_links[cwd] if cwd in project_links else None,
        "when": _when(row.get("last_activity")),
        "when_iso": _utc_stamp(row.get("last_activity")),
        "when_sort": "0" if error else _sort_time(row.get("last_activity")),  # sorts last
        "messages": row.get("messages", 0),
        "branches": row.get("branches", 0),
        "models": [str(m) for m in row.get("models") or []],
        "tokens": row.get("tokens", 0),
        "cost": row.get("cost", 0.0),
        "problems": row.get("problems", 0),
        "prompts": row.get("prompts") or [],
        "more_words": _more_words(row),
        "counted_cost": counted(row, "cost") if isinstance(row.get("counted"), dict) else None,
        "copy_of": _copy_view(row, base),
    }


def _copy_view(row: dict[str, Any], base: str) -> dict[str, Any] | None:
    """What the row says of the turns another listed session holds too: how many of its
    own, and which session counts them (its title and page)."""
    numbers, source = row.get("counted"), row.get("copy_of")
    if not isinstance(numbers, dict) or not numbers.get("repeated") or not isinstance(source, dict):
        return None
    return {
        "all": is_copy(row),
        "repeated": numbers["repeated"],
        "answers": numbers.get("answers", 0),
        "title": source.get("title") or "another session",
        "href": base + source["page"] if source.get("page") else None,
    }


def _more_words(row: dict[str, Any]) -> list[Any]:
    """What the listing's filter reads of a row's prompts besides their shown start: the
    words of its long prompts after it and of its prompts past the listed, or nothing."""
    more, later = row.get("prompt_more") or [], row.get("prompt_later") or ""
    return [more, later] if more or later else []


def counted(row: dict[str, Any], key: str) -> Any:
    """A row's ``tokens``, ``cost``, ``cost_by_day``, ``messages`` or ``branches`` as the
    totals count them: without the turns, messages and branches another listed file holds
    too (``row["counted"]``, which site.py adds to a copy's row), so a copied session is not
    paid for, nor its messages counted, twice."""
    numbers = row.get("counted")
    return numbers[key] if isinstance(numbers, dict) and key in numbers else row.get(key)


def is_copy(row: dict[str, Any]) -> bool:
    """Every turn of the row's session is counted in another listed session."""
    numbers = row.get("counted")
    return isinstance(numbers, dict) and 0 < numbers.get("answers", 0) == numbers.get("repeated")


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if not r.get("error")]
    times = sorted((r["last_activity"] for r in ok if r.get("last_activity")), key=_instant)
    starts = [r.get("started") or r["last_activity"] for r in ok if r.get("last_activity")]
    starts.sort(key=_instant)
    return {
        "sessions": len(ok),
        "failed": len(rows) - len(ok),
        "messages": sum(counted(r, "messages") or 0 for r in ok),
        "branches": sum(counted(r, "branches") or 0 for r in ok),
        "copies": sum(is_copy(r) for r in ok),
        "tokens": sum(counted(r, "tokens") or 0 for r in ok),
        "cost": sum(counted(r, "cost") or 0.0 for r in ok),
        "first": _utc_stamp(starts[0]) if starts else None,
        "last": _utc_stamp(times[-1]) if times else None,
        "last_when": _when(times[-1]) if times else "",
        "first_when": _when(starts[0]) if starts else "",
        "last_sort": _sort_time(times[-1]) if times else "0",
    }


def _instant(iso: str | None) -> float:
    moment = parse_time(iso)
    return moment.timestamp() if moment else 0.0


def _by_recency(row: dict[str, Any]) -> tuple[bool, float, str, str]:
    """Newest first, sessions that could not be read last (their time is the file's);
    ties broken by title and page, so the output never depends on order."""
    page = row.get("page") or row.get("file") or ""
    return (
        bool(row.get("error")),
        -_instant(row.get("last_activity")),
        row.get("title") or "",
        page,
    )


#: The order of a listing's rows (the text search lists its sessions in it too).
listing_key = _by_recency


@dataclass(slots=True)
class SearchIndex:
    """What the index page embeds for its text search (``exporter.site_search`` makes it),
    and what its note says: how much of each entry is searched, and what was left out."""

    packed: str  # JSON, gzip, base64
    sessions: int  # sessions searchable
    records: int
    chars: int  # characters of text in the records
    cut: int  # sessions of which only part is searchable (too long)
    missing: int  # sessions listed whose records could not be read
    text_chars: int  # the most kept of a prompt or a reply
    output_head: int  # ... of the start of a tool's output
    output_tail: int  # ... of its end


def _search_view(search: SearchIndex | None) -> dict[str, Any] | None:
    """The text search's embedded index and what its note says of it: what is searched,
    and when some of it could not be (sessions cut to fit, shards that could not be read)."""
    if search is None:
        return None
    said = (
        f"Searches the prompts, replies, tool calls and the first {search.output_head} and "
        f"last {search.output_tail} characters of each tool's output of "
        f"{plural(search.sessions, 'session')} (a long prompt or reply up to its first "
        f"{search.text_chars:,} characters)."
    )
    gaps = []
    if search.cut:
        gaps.append(
            f"{plural(search.cut, 'session')} {'is' if search.cut == 1 else 'are'} too long to "
            "search in full (their longest entries are searched in part)"
        )
    if search.missing:
        gaps.append(
            f"{plural(search.missing, 'session')} could not be indexed (build the site again)"
        )
    incomplete = f"Results may be incomplete: {'; '.join(gaps)}." if gaps else ""
    return {"packed": search.packed, "note": said, "incomplete": incomplete}


def render_listing(
    rows: list[dict[str, Any]],
    *,
    project_pages: dict[str, str] | None = None,
    project: str | None = None,
    theme: str = "auto",
    all_projects: set[str] | None = None,
    search: SearchIndex | None = None,
) -> str:
    """The site index (``project`` None) or one project's page (one folder deeper);
    ``all_projects`` (every project's folder) lets a project page name its project as the
    index does; ``search`` (the index's) is what its text search searches.

    ``project_pages`` maps a cwd to its page path relative to the site root; when given on the
    index, a per-project totals table links to them.
    """
    project_pages = project_pages or {}
    base = "../" if project is not None else ""
    ordered = sorted(rows, key=_by_recency)
    names = project_names({row.get("cwd") or "" for row in rows} | (all_projects or set()))
    projects = []
    if project is None and len(project_pages) > 1:
        grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in ordered:
            if not row.get("error"):
                grouped[row.get("cwd") or ""].append(row)
        for cwd, members in grouped.items():
            totals = _totals(members)
            totals.update(name=names[cwd] or "unknown", href=project_pages.get(cwd), cwd=cwd)
            projects.append(totals)
        projects.sort(key=lambda p: (-float(p["last_sort"]), p["name"]))
    kind = _sessions_of(rows)
    heading = kind if project is None else (names.get(project) or "unknown project")
    css, js = _assets()
    context = {
        "tool_version": __version__,
        "theme": theme,
        "csp": content_security_policy([css], [head_script(), js]),
        "css": Markup(css),
        "head_js": Markup(head_script()),
        "js": Markup(js),
        "title": heading if project is None else f"{heading} · {kind}",
        "heading": heading,
        "up_href": "../index.html" if project is not None else None,
        "show_project": project is None,
        "sessions": (sessions := [_session_view(r, base, project_pages, names) for r in ordered]),
        "prompt_index": packed_prompts([[s["href"], s["prompts"]] for s in sessions]),
        "prompt_words": packed_prompts([s["more_words"] for s in sessions]),
        "projects": projects,
        "totals": _totals(rows),
        "project_count": len({r.get("cwd") or "" for r in rows if not r.get("error")}),
        "chart": day_chart(
            [{"cost_by_day": counted(r, "cost_by_day")} for r in rows if not r.get("error")]
        ),
        "search": _search_view(search),
    }
    return writable_page(jinja_environment().get_template("index.html.j2").render(context))


@lru_cache(maxsize=1)
def _assets() -> tuple[str, str]:
    """page.css (for the shared look and themes) + index.css, and the listing script."""
    folder = asset_dir("static")
    css = minified_file(folder, "page.css") + "\n" + minified_file(folder, "index.css")
    return css, shared_script(folder, "index.js")
