"""`pi-session share`: one session as a secret GitHub gist, and a link that renders the page.

Redaction is on and hidden entries are dropped by default; the same session shared again
updates the same gist (so links keep working); `--dry-run` writes the exact upload locally.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import functools
import gzip
import io
import json
import os
import re
import secrets
import shlex
import zlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import click
import requests
from click.core import ParameterSource

from exporter.agent_context import (
    AgentContext,
    agent_context_option,
    default_warn,
    read_agent_context,
    redact_agent_context,
)
from exporter.cli import (
    EXIT_INTERRUPTED,
    CliError,
    check_http_url,
    open_session,
    refuse_url_credentials,
    report_diagnostics,
    session_argument,
)
from exporter.formatting import local_minute, one_line, plural, terminal_text
from exporter.fsutil import atomic_open
from exporter.jsonl_out import session_records, session_to_jsonl
from exporter.policy import (
    GIVEN_SECRETS,
    RedactionPolicy,
    cut_option,
    given_digest,
    opt_in_cuts,
)
from exporter.prepare import CUT_OPTIONS, prepare_session
from exporter.publish.errors import (
    NotFoundError,
    NoTokenError,
    PublishError,
    TooLargeError,
)
from exporter.publish.gist import (
    DEFAULT_API_URL,
    GIST_WARN_BYTES,
    Gist,
    GistClient,
    InterruptedRequest,
)
from exporter.publish.gist_share import (
    DEFAULT_FILENAME,
    SHARED_FILE_NAMES,
    check_size,
    check_viewer_template,
    file_sizes,
    ignored_env_viewer,
    is_pi_format_viewer,
    share_files,
    viewer_link,
)
from exporter.publish.github_auth import FoundToken, find_github_token
from exporter.publish.share_state import ShareState, earlier_gists
from exporter.redact_cli import (
    check_exclusions,
    echo_path,
    exclude_option,
    finish_report,
    policy_from_options,
    policy_options,
    public_stem,
    read_files,
    refuse_collisions,
    refuse_default_in_sessions,
)
from exporter.render import RenderOptions, render_session
from exporter.session import Session, parse_time
from exporter.share_cuts import excluded_ids, is_hidden
from exporter.token_arg import TOKEN_HELP, stdin_reader, token_argument

if TYPE_CHECKING:
    from exporter.redact import RedactionReport


def gist_description(session: Session) -> str:
    """``Pi session: <title> (<date>)`` as the gist list shows it (``Claude Code session``
    for one of its transcripts)."""
    started = parse_time(session.header.timestamp)
    date = local_minute(started)[:10] if started else "undated"  # the day list says
    # as `list` shows it: a name's escape sequences and bidi overrides as visible signs
    # (GitHub's gist list and the terminals of people reading it, review s60 #6)
    title = one_line(terminal_text(session.title), 80)
    return f"{session.agent} session: {title} ({date})"


def _notify(message: str) -> None:
    click.echo(f"pi-session: {message}", err=True)


def _every_share(record: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The session's recorded share and the earlier gists it keeps: each a share that a
    weaker one must not undo."""
    return [record or {}, *earlier_gists(record or {})]


def _weaker(where: str, said: str) -> CliError:
    """The refusal of a share weaker than the one to gist ``where``: what that share did and
    what to pass (``said``, ending in "or"), then the way past it."""
    return CliError(
        f"the share to gist {where} of this session {said} --allow-weaker-policy "
        f"(share --delete {where} forgets that gist)",
        1,
    )


def _refuse_lost_given_secrets(record: dict[str, Any] | None, given: set[str]) -> None:
    """A re-share without a ``--secret`` value or environment variable an earlier share of
    the session replaced (Pi started from another shell) would put it back in clear: refused.
    ``given``: the values this share is given."""
    lost, where = 0, ""
    for shared in _every_share(record):
        salt, digests = shared.get("given_salt"), shared.get("given")
        if isinstance(salt, str) and isinstance(digests, list):
            mine = {given_digest(value, salt) for value in given}
            missing = len({d for d in digests if isinstance(d, str)} - mine)
            if missing > lost:
                lost, where = missing, str(shared.get("gist_id", ""))
    if lost > 0:
        raise _weaker(
            where,
            f"replaced {plural(lost, 'secret')} this share is not given (--secret or --env-file "
            "values, sensitive environment variables, the token): they would go up in clear; "
            "pass the same ones, without --no-redact (a token replaced since: the old one with "
            "--secret), or",
        )


def _refuse_lost_removals(
    record: dict[str, Any] | None, loaded: Session, excluded: set[str], removed: list[str]
) -> None:
    """A re-share without an ``--exclude``, ``--pii`` or ``--redact-pattern`` an earlier
    share of the session had (Pi's ``/share``, another shell) would put what it left out
    back in the gist: refused. ``excluded``: the entry ids this share leaves out;
    ``removed``: its ``pii`` and ``pattern:<name>`` (see ``policy.opt_in_cuts``)."""
    for shared in _every_share(record):
        where = str(shared.get("gist_id", ""))
        ids, kinds = shared.get("excluded"), shared.get("removed")
        ids = ids if isinstance(ids, list) else []
        back = sorted(i for i in ids if isinstance(i, str) and i in loaded.by_id.keys() - excluded)
        kinds = kinds if isinstance(kinds, list) else []
        lost = [k for k in kinds if isinstance(k, str) and k not in removed]
        if not back and not lost:
            continue
        if back:
            named = " ".join(f"--exclude {terminal_text(i)}" for i in back[:3])
            more = f" and {len(back) - 3} more" if len(back) > 3 else ""
            what = f"left out {plural(len(back), 'entry', 'entries')}"
        else:
            named = " ".join(cut_option(terminal_text(k)) for k in lost)
            more, what = "", "replaced what " + named + " found"
        raise _weaker(where, f"{what} this share would put back: pass {named}{more} again, or")


def _refuse_unredacted(record: dict[str, Any] | None, redacted: bool) -> None:
    """A ``--no-redact`` re-share of a session an earlier share redacted would put what the
    detectors found (a token in a tool result) back in its gist in clear, where the warning
    came too late: refused. A record from before ``redacted`` was kept says nothing."""
    if redacted:
        return
    for shared in _every_share(record):
        if shared.get("redacted") is True:
            where = str(shared.get("gist_id", ""))
            raise _weaker(
                where,
                "was redacted: with --no-redact, the secrets it replaced would go up in clear; "
                "share without --no-redact, or pass",
            )


#: A cut that leaves out all another does: --no-tool-calls drops the results (and ``!``
#: output) that --no-tool-output replaces by a note.
_COVERED_BY = {"no_tool_output": "no_tool_calls"}


#: A recorded cut that no option turns on: home paths and the user name replaced (``~``,
#: ``<user>``), which ``--keep-paths`` turns off.
_HOME_HIDDEN = "home_hidden"


def _cuts_of(policy: RedactionPolicy) -> list[str]:
    """The policy's cuts (``CUT_OPTIONS`` it has on: ``no_thinking``, ``drop_hidden``...,
    and ``home_hidden`` unless --keep-paths), as a share's record keeps them."""
    cuts = [name for name in CUT_OPTIONS if getattr(policy, name)]
    return [*cuts, _HOME_HIDDEN] if policy.redact and not policy.keep_paths else cuts


def _refuse_lost_cuts(record: dict[str, Any] | None, cuts: list[str]) -> None:
    """A re-share without a ``--no-tool-output``, ``--no-thinking``, ``--active-branch-only``
    (...) an earlier share of the session had would widen what its gist shows, as publish
    refuses for a dataset: refused, naming them. ``cuts``: this share's (``_cuts_of``)."""
    for shared in _every_share(record):
        held = shared.get("cuts")
        held = [name for name in held if isinstance(name, str)] if isinstance(held, list) else []
        lost = [
            name
            for name in held
            if name in CUT_OPTIONS and name not in cuts and _COVERED_BY.get(name) not in cuts
        ]
        where = str(shared.get("gist_id", ""))
        if lost:
            named = " ".join(cut_option(name) for name in lost)
            raise _weaker(
                where,
                f"was made with {named}: this share would put back what it left out; pass "
                f"{named} again, or",
            )
        if _HOME_HIDDEN in held and _HOME_HIDDEN not in cuts:
            raise _weaker(
                where,
                "replaced your home folder and user name: --keep-paths would put them back; "
                "share without it, or",
            )


def _refuse_weaker_policy(
    record: dict[str, Any] | None,
    loaded: Session,
    policy: RedactionPolicy,
    given_now: set[str],
    excluded: set[str],
) -> None:
    """Every check of this share against what the session's earlier shares left out (see
    each); ``given_now``: the values this share is given, ``excluded``: the ids it leaves out."""
    _refuse_lost_given_secrets(record, given_now)
    _refuse_unredacted(record, policy.redact)
    _refuse_lost_removals(record, loaded, excluded, opt_in_cuts(policy))
    _refuse_lost_cuts(record, _cuts_of(policy))
    _refuse_unread(record)


def _given_record(
    values: set[str], excluded: set[str], policy: RedactionPolicy, salt: str | None = None
) -> dict[str, Any]:
    """What the state keeps of the given secrets a share replaced (salted digests), of the
    entries it left out (their ids), of its opt-in redaction (``opt_in_cuts``), whether it
    was redacted and its cuts (``_cuts_of``): what a later share must not put back.
    ``salt``: the session's record's, so that a share that changed nothing records the
    same (and the file is not rewritten); a new one otherwise."""
    salt = salt or secrets.token_hex(16)
    record: dict[str, Any] = {"given_salt": salt}
    record["given"] = sorted(given_digest(v, salt) for v in values)
    if excluded:
        record["excluded"] = sorted(excluded)
    removed = opt_in_cuts(policy)
    if removed:
        record["removed"] = removed
    record["redacted"] = policy.redact
    record["cuts"] = _cuts_of(policy)  # written even empty: a record without it is older
    return record


# --------------------------------------------------------------------------- older records


#: What a record says its share left out, and since when: 0.2.0 to 0.2.9 kept only the gist,
#: 0.2.10 added the given secrets (``given_salt``), 0.2.25 ``redacted`` and ``cuts``. (Its
#: ``excluded`` and ``removed`` came with --exclude and --pii themselves: never unsaid.)
_SAID_SINCE = ("given_salt", "redacted", "cuts")

#: The key of a share whose record does not say what it left out and whose gist could not
#: be read to tell (``_as_their_gists_say``); only ever made here, never kept.
_UNREAD = "_unread"


def _unsaid(shared: Mapping[str, Any]) -> bool:
    """The record of this share (a pi-session before 0.2.25 wrote it) does not say all it
    left out: taken as "nothing", a share without an earlier --secret or --no-thinking put
    the secret or the thinking back in the same gist."""
    return any(key not in shared for key in _SAID_SINCE)


def _as_their_gists_say(
    client: GistClient, record: dict[str, Any] | None, loaded: Session, prepared: Session
) -> dict[str, Any] | None:
    """The record with what each of its shares recorded before 0.2.25 left out read from
    what its gist holds (``_left_out_by``), where the record does not say; a gist that
    cannot be read is marked ``_UNREAD`` (refused: ``_refuse_unread``)."""
    if not record or not any(_unsaid(shared) for shared in _every_share(record)):
        return record
    judged = [
        _judged(client, shared, loaded, prepared) if _unsaid(shared) else shared
        for shared in _every_share(record)
    ]
    latest, *earlier = judged
    latest = {k: v for k, v in latest.items() if k != "earlier"}
    return {**latest, "earlier": earlier} if earlier else latest


def _judged(
    client: GistClient, shared: dict[str, Any], loaded: Session, prepared: Session
) -> dict[str, Any]:
    """``shared`` with the fields its record lacks as its gist's session copy tells them
    (what the record says stays as it is)."""
    copy, why = _copy_in_gist(client, str(shared.get("gist_id", "")))
    if copy is None:
        return {**shared, _UNREAD: why}
    return {**_left_out_by(copy, loaded, prepared), **shared}


#: The copy of the session a page carries for its download link (gzip, then base64): in
#: the footer's data: URL since 0.2.1, in a JSON string in a script element in 0.2.0.
_EMBEDDED = re.compile(
    r'id="session-jsonl"(?: href="data:application/gzip;base64,([A-Za-z0-9+/=]+)"'
    r'|[^>]*>"([A-Za-z0-9+/=]+)"</script>)'
)


#: The most of a session copy an old gist's page is unpacked to (a gzip bomb stops here)
MAX_GIST_COPY_BYTES = 512 * 1024 * 1024


def _copy_in_gist(client: GistClient, gist_id: str) -> tuple[list[dict[str, Any]] | None, str]:
    """The session copy the gist holds, as records (its session.jsonl, else the one its
    page carries), or None and why not. Read from the file's raw address, without the
    token (GitHub's answer carries at most 1 MB of a file)."""
    try:
        gist = client.get(gist_id)
    except NotFoundError:
        return None, "it is gone on GitHub"
    except PublishError as error:
        return None, terminal_text(one_line(str(error), 200))
    name = "session.jsonl" if "session.jsonl" in gist.files else DEFAULT_FILENAME
    raw = gist.files[name]["raw_url"] if name in gist.files else ""
    if not raw:
        return None, f"it holds no {name} that can be downloaded"
    try:
        answer = client.download(raw)
    except requests.RequestException:
        return None, f"its {name} could not be downloaded"
    if answer.status_code != 200:
        return None, f"its {name} could not be downloaded (HTTP {answer.status_code})"
    text = answer.content.decode("utf-8", "replace")
    if name == DEFAULT_FILENAME:
        found = _EMBEDDED.findall(text)
        try:
            blob = found[-1][0] or found[-1][1]
            with gzip.GzipFile(fileobj=io.BytesIO(base64.b64decode(blob))) as unzipped:
                copy = unzipped.read(MAX_GIST_COPY_BYTES + 1)
        except (IndexError, binascii.Error, OSError, EOFError, zlib.error):
            return None, "its page carries no copy of the session"  # (a damaged gzip too)
        if len(copy) > MAX_GIST_COPY_BYTES:
            return None, "its page's copy of the session is too big to read"
        text = copy.decode("utf-8", "replace")
    return [r for r in _records_of(text) if isinstance(r, dict)], ""


def _records_of(jsonl: str) -> Iterator[Any]:
    """The lines of a JSONL copy that parse."""
    for line in jsonl.splitlines():
        try:
            yield json.loads(line)
        except (ValueError, RecursionError):
            continue


#: The notes the cuts put in place of what they left out, as every version wrote them.
_CUT_NOTES = {
    "no_tool_output": re.compile(
        r"\[tool output (?:omitted by share policy|left out \(--no-tool-output\)): "
        r"[\d,]+ lines?, [\d,]+ characters.*\]", re.S
    ),
    "no_images": re.compile(
        r"\[image (?:omitted by share policy|left out \(--no-images\)): [^\]]*\]"
    ),
    "no_tool_calls": re.compile(
        r"\[[\d,]+ tool calls? (?:omitted by share policy|left out \(--no-tool-calls\)): .*\]",
        re.S,
    ),
}  # fmt: skip
_PLACEHOLDER = re.compile(r"\[REDACTED:([^\]\s]+):\d+\]")
_ONLY_PLACEHOLDERS = re.compile(r"(?:\[REDACTED:[^\]\s]+:\d+\])+")


def _left_out_by(copy: list[dict[str, Any]], loaded: Session, prepared: Session) -> dict[str, Any]:
    """What an earlier share left out, read from the session copy it put in its gist
    (``copy``), as a record keeps it: the given secrets it replaced that this share
    (``prepared``) would put back in clear (salted digests of them), whether it was
    redacted (a placeholder, the home folder as ``~``) and its cuts (their notes, no
    thinking where the session has some, one branch of a branched session, no hidden
    entries, the home folder hidden)."""
    home_hidden = _home_hidden(copy, loaded)
    redacted = home_hidden or _says(copy, "[REDACTED:")
    salt = secrets.token_hex(16)
    lost = _given_in_clear(copy, prepared)
    cuts = _cut_notes(copy) + _entries_cut(copy, loaded, prepared)
    return {
        "given_salt": salt,
        "given": sorted(given_digest(value, salt) for value in lost),
        "redacted": redacted,
        "cuts": [*cuts, _HOME_HIDDEN] if home_hidden else cuts,
    }


def _texts(value: Any) -> Iterator[tuple[tuple[Any, ...], str]]:
    """Every string in a record, with where it is."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            yield path, item
        elif isinstance(item, dict):
            stack += [((*path, k), v) for k, v in item.items()]
        elif isinstance(item, list):
            stack += [((*path, i), v) for i, v in enumerate(item)]


def _key(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """A record's kind and id (Claude Code's ``uuid``), which its copies keep."""
    found = record.get("id", record.get("uuid"))
    return (str(record.get("type")), found) if isinstance(found, str) and found else None


def _given_in_clear(copy: list[dict[str, Any]], prepared: Session) -> set[str]:
    """What this share would put in clear where the earlier copy has a given secret's
    placeholder (``--secret``, ``--env-file``, the environment, the token), compared
    string by string in the records both have; where a string cannot be lined up, each
    placeholder this share's string has no counterpart for (its name stands for it)."""
    mine = {_key(record): record for record in session_records(prepared)}
    lost: set[str] = set()
    for record in copy:
        now = mine.get(_key(record)) if _key(record) else None
        if now is None:
            continue
        texts = dict(_texts(now))
        for path, text in _texts(record):
            marks = list(_PLACEHOLDER.finditer(text))
            there = texts.get(path)
            if there is None or there == text or not any(_given(m) for m in marks):
                continue
            lost |= _replaced_values(text, marks, there)
    return lost


def _given(mark: re.Match[str]) -> bool:
    return mark.group(1) in GIVEN_SECRETS


def _replaced_values(text: str, marks: list[re.Match[str]], there: str) -> set[str]:
    """What ``there`` has where ``text`` has a given secret's placeholder and is not one
    itself: the text around the placeholders, in order, lines the two up."""
    pieces, gaps, last = [], [], 0  # the text between placeholders; each gap's placeholders
    for mark in marks:
        if pieces and mark.start() == last:  # side by side: one gap
            gaps[-1].append(mark)
        else:
            pieces.append(text[last : mark.start()])
            gaps.append([mark])
        last = mark.end()
    pieces.append(text[last:])
    values: set[str] = set()
    pos = len(pieces[0])
    if not there.startswith(pieces[0]):
        return _unlined(marks, there)
    for index, gap in enumerate(gaps):
        after = pieces[index + 1]
        if index + 1 == len(gaps):
            end = len(there) - len(after) if there.endswith(after) else -1
        else:
            end = there.find(after, pos + 1)
        if end <= pos:
            return _unlined(marks, there)
        value = there[pos:end]
        if any(_given(m) for m in gap) and not _ONLY_PLACEHOLDERS.fullmatch(value):
            values.add(value)
        pos = end + len(after)
    return values


def _unlined(marks: list[re.Match[str]], there: str) -> set[str]:
    """Strings that changed too much to line up: a given placeholder counts as put back
    when this share's string has fewer placeholders."""
    if len(_PLACEHOLDER.findall(there)) >= len(marks):
        return set()
    return {m.group(0) for m in marks if _given(m)}


def _cut_notes(copy: list[dict[str, Any]]) -> list[str]:
    """The cuts whose notes the copy holds (a content block that is one)."""
    texts = [text for record in copy for _path, text in _texts(record) if text.startswith("[")]
    return [cut for cut, note in _CUT_NOTES.items() if any(note.fullmatch(t) for t in texts)]


def _entries_cut(copy: list[dict[str, Any]], loaded: Session, prepared: Session) -> list[str]:
    """The cuts the copy shows by what it lacks of the session as it was then (the entries
    up to the last one it has): thinking where the session had some in entries it holds,
    every hidden entry, or all branches but one."""
    held = {_key(record) for record in copy} - {None}
    place = {_key(entry.raw): n for n, entry in enumerate(loaded.entries)}
    reached = [place[key] for key in held if key in place]
    if not reached:
        return []
    then = loaded.entries[: max(reached) + 1]
    cuts = []
    thought = any(_thinking(entry.raw) for entry in then if _key(entry.raw) in held)
    if thought and not any(_thinking(record) for record in copy):
        cuts.append("no_thinking")
    if not held & {_key(e.raw) for e in then if is_hidden(e)} and any(map(is_hidden, then)):
        cuts.append("drop_hidden")
    existed = {_key(entry.raw) for entry in then}
    shared_now = [r for r in session_records(prepared) if _key(r) in existed]
    if _branched(shared_now) and not _branched([r for r in copy if _key(r) in existed]):
        cuts.append("active_branch_only")
    return cuts


def _thinking(record: Mapping[str, Any]) -> bool:
    """The record holds a thinking block with text."""
    message = record.get("message")
    blocks = message.get("content") if isinstance(message, dict) else None
    return isinstance(blocks, list) and any(
        isinstance(b, dict) and b.get("type") == "thinking" and bool(b.get("thinking"))
        for b in blocks
    )


def _branched(records: list[dict[str, Any]]) -> bool:
    """Two of the records have the same parent."""
    parents = [r.get("parentId", r.get("parentUuid")) for r in records if _key(r)]
    named = [p for p in parents if isinstance(p, str)]
    return len(named) != len(set(named))


def _home_hidden(copy: list[dict[str, Any]], loaded: Session) -> bool:
    """The copy's header has the session's folder with the home folder as ``~``, or the
    copy has the user name as ``<user>`` where the session has none."""
    header = next((r for r in copy if r.get("type") == "session"), {})
    shown, cwd = header.get("cwd"), loaded.header.cwd
    if isinstance(shown, str) and shown.startswith("~") and bool(cwd) and shown != cwd:
        return True
    return _says(copy, _USER) and not _says(session_records(loaded), _USER)


#: What redaction puts in place of the user name.
_USER = "<user>"


def _says(records: list[dict[str, Any]], word: str) -> bool:
    return any(word in text for record in records for _path, text in _texts(record))


def _refuse_unread(record: dict[str, Any] | None) -> None:
    """A share recorded before 0.2.25 whose gist could not be read (``_UNREAD``): what it
    left out is not known, so this share could put it back; refused, naming the way on."""
    earlier = (record or {}).get("earlier")
    for shared in [record or {}, *(earlier if isinstance(earlier, list) else [])]:
        if isinstance(shared, dict) and _UNREAD in shared:
            where = str(shared.get("gist_id", ""))
            raise _weaker(
                where,
                "was made by a pi-session before 0.2.25, which did not record what it left "
                f"out, and the gist could not be read to tell ({shared[_UNREAD]}): if this "
                "share leaves out at least as much (the same --secret values, --no-thinking, "
                "--no-tool-output...), pass",
            )


def _token_for_upload(token: str | None, api_url: str, dry_run: bool) -> FoundToken | None:
    """The GitHub token, found before anything is rendered (a missing one fails early);
    a dry run uploads nothing and needs none, but still hides one it can find."""
    try:
        return _github_token(token, api_url)
    except NoTokenError:
        if dry_run:
            return None
        raise


def _github_token(token: str | None, api_url: str) -> FoundToken:
    """``find_github_token``, its warnings (``gh`` timed out) said on stderr."""
    return find_github_token(token, api_url, warn=lambda said: _notify(terminal_text(said)))


#: What --delete works with; any other option given with it meant something else.
_WITH_DELETE = {"delete_gist", "dry_run", "token", "api_url"}


def _as_typed(param: click.Parameter, value: Any) -> str:
    """The option as the user typed it: ``--no-redact``, not ``--redact``."""
    if not isinstance(param, click.Option):
        return param.human_readable_name
    if param.is_flag and param.secondary_opts and value is False:
        return param.secondary_opts[0]
    return param.opts[0]


def _gist_id(value: str) -> str:
    """A gist id, or a gist URL's last part; a blank one is a usage error."""
    context = click.get_current_context()
    given = [
        _as_typed(param, context.params.get(param.name or ""))
        for param in context.command.params
        if param.name not in _WITH_DELETE
        and context.get_parameter_source(param.name or "") == ParameterSource.COMMANDLINE
    ]
    if given:
        raise click.UsageError(f"--delete takes no {', '.join(given)}")
    gist_id = _id_in(value.strip())
    if not gist_id.isascii() or not gist_id.isalnum():
        what = "was empty" if not value.strip() else f"{value!r} is not one"
        raise click.UsageError(f"--delete needs a gist id or gist URL ({what})")
    return gist_id


def _api_option(api_url: str) -> str:
    """`` --api-url URL`` for a command to run against the same API (nothing for
    github.com's), without a user part, which may hold a token."""
    if api_url.rstrip("/") == DEFAULT_API_URL.rstrip("/"):
        return ""
    parts = urlsplit(api_url)
    plain = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
    return f" --api-url {shlex.quote(plain)}"


_GIST_ID = re.compile(r"[0-9a-f]{20,40}")  # 20 or 32 hex digits (very old gists: a number)
_REVISION = re.compile(r"[0-9a-f]{40}")  # a revision is a full git commit id


def _id_in(value: str) -> str:
    """The gist id in what share printed or a browser shows: an id, the gist's page (with a
    ``#file-…`` or ``?…``, a revision, or its ``.git`` clone URL), a raw file's URL, or a
    View link, whose id is in its query (``https://gisthost.github.io/?ID/session.html``)
    or, as Pi's viewer links put it, its fragment (``https://viewer/#ID``)."""
    if "://" not in value and value.startswith(("gist.github", "api.github", "gist.")):
        value = "https://" + value  # an address copied without its scheme
    if "://" not in value:
        return value.rstrip("/").rsplit("/", 1)[-1]
    try:
        parts = urlsplit(value)
    except ValueError:  # `http://[::1`: no address at all, so no id (it was a traceback)
        return ""
    segments = [s.removesuffix(".git") for s in parts.path.split("/") if s]
    if "raw" in segments[1:]:  # …/USER/ID/raw/REVISION/FILE
        segments = segments[: segments.index("raw", 1)]
    elif len(segments) > 1 and _REVISION.fullmatch(segments[-1]):  # …/ID/REVISION
        segments = segments[:-1]
    last = segments[-1] if segments else ""
    # the gist's own page, or one under it (/revisions, /forks, api …/comments): an anchor
    # (#comments) is not its id, nor is a user name before it
    ids = [s for s in segments if _GIST_ID.fullmatch(s) and not _REVISION.fullmatch(s)]
    if ids:
        return ids[-1]
    if parts.fragment.isascii() and parts.fragment.isalnum():  # Pi's viewer form: BASE#ID
        return parts.fragment
    if parts.query:  # gisthost's form: ?ID/file
        return parts.query.split("/", 1)[0]
    return last


def _check_shared_session(gist: Gist) -> None:
    """Only a shared session is deleted (its page, with its .jsonl and README.md or not, as
    share and Pi's /share make them): a mistyped or pasted id deleted whatever gist of the
    user's it named, with no way back."""
    names = sorted(gist.files)
    if DEFAULT_FILENAME in names and set(names) <= SHARED_FILE_NAMES:
        return
    held = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    raise CliError(
        f"gist {gist.id} is not a shared session (it holds {held or 'no files'}); not "
        f"deleted: delete it on GitHub if you meant to ({gist.html_url})",
        2,
    )


def _delete(gist_id: str, api_url: str, token: str | None, dry_run: bool) -> None:
    if dry_run:
        click.echo(f"pi-session: dry run: would delete gist {gist_id}; nothing sent", err=True)
        return
    found = _github_token(token, api_url)
    client = GistClient(api_url, found.token, notify=_notify, token_source=found.source)
    try:
        there = client.get(gist_id)
    except NotFoundError as gone:
        _forgotten_if_known(gone, api_url, gist_id)
        raise
    _check_shared_session(there)
    try:
        client.delete(gist_id)
    except NotFoundError as refused:  # gone since the read, or not this token's to delete
        try:
            client.get(gist_id)
        except NotFoundError as gone:
            _forgotten_if_known(gone, api_url, gist_id)
            raise
        except PublishError:  # the second look failed: what the delete was answered
            raise refused from None
        raise
    click.echo(f"Deleted gist {gist_id}")
    _forget_deleted(api_url, gist_id)


def _forget_deleted(api_url: str, gist_id: str) -> None:
    """Drop the deleted gist from the share state; a state that cannot be written (a full
    disk) is a warning: the gist is deleted all the same (exit 0), and sharing its session
    again finds it gone and makes a new one."""
    state = ShareState()
    try:
        state.forget_gist(api_url, gist_id)
    except OSError as error:
        reason = error.strerror or str(error)
        _notify(
            terminal_text(
                f"warning: could not save share state to {state.path}: {reason}; it still "
                f"names the deleted gist {gist_id} (sharing its session again makes a new gist)"
            )
        )


def _forgotten_if_known(gone: NotFoundError, api_url: str, gist_id: str) -> None:
    """A gist GitHub does not have (404 to reading it) is dropped from the share state, and
    when the state named it, the error says so (still exit 2, a thing not found): kept, its
    policy refused shares of its session, and the refusal's way out (``--delete``) could
    not forget it (review s60 #2)."""
    if gone.status == 404 and _forget_gone(api_url, gist_id):
        raise CliError(
            f"{gone}; it was already gone on GitHub: forgotten, so sharing its session "
            "again makes a new gist",
            gone.exit_code,
        ) from None


def _forget_gone(api_url: str, gist_id: str) -> bool:
    """Forget a gist GitHub no longer has; True if the share state named it."""
    try:
        return ShareState().forget_gone_gist(api_url, gist_id)
    except OSError as error:
        _notify(terminal_text(f"warning: could not forget gist {gist_id}: {error.strerror}"))
        return False


@click.command("share")
@session_argument
@click.option(
    "--leaf", metavar="ID", help="Entry id (or unique prefix) whose branch the page shows."
)
@policy_options(redact_default=True)
@exclude_option
@click.option("--public", is_flag=True, help="Create a public gist (default: secret).")
@click.option("--new", "new_gist", is_flag=True, help="Create a new gist instead of updating.")
@click.option(
    "--delete",
    "delete_gist",
    metavar="GIST",
    help="Delete this shared session's gist and forget it (a gist holding other files is refused).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Write the exact upload to ./pi-session-share-<name>.html (and .jsonl with "
    "--with-jsonl, .md with --with-markdown); send nothing.",
)
@click.option(
    "--token",
    metavar="TOKEN",
    help="GitHub token (default: GH_TOKEN, GITHUB_TOKEN for github.com, GH_ENTERPRISE_TOKEN "
    f"for another --api-url, then `gh auth token`){TOKEN_HELP}.",
)
@click.option(
    "--api-url", default=DEFAULT_API_URL, show_default=True, metavar="URL", help="GitHub API root."
)
@click.option(
    "--viewer-url",
    metavar="URL",
    help="Where the View link opens the page: a template with {id} (and {file}), e.g. "
    "https://host/?{id} (default: gisthost.github.io; on GitHub Enterprise the gist's own "
    "page). PI_SHARE_VIEWER_URL is used only when it is not a viewer of Pi's own exports "
    "(pi.dev, or a base URL that gets #ID), which cannot show this page without --pi-viewer.",
)
@click.option(
    "--pi-viewer",
    is_flag=True,
    help="Make the page readable in viewers of Pi's own exports too (pi.dev, "
    "pi-share-viewer): it carries Pi's session-data block (the shared, redacted entries as "
    "base64 JSON: about 1.33x the session file's size more), and the View link is "
    "PI_SHARE_VIEWER_URL#ID, else https://pi.dev/session/#ID, as Pi's /share prints.",
)
@click.option("--with-jsonl", is_flag=True, help="Also upload the (redacted) session.jsonl.")
@click.option(
    "--with-markdown",
    is_flag=True,
    help="Also upload the session as README.md (Markdown), which GitHub shows on the gist's "
    "own page: readable there without a viewer.",
)
@click.option("--force", is_flag=True, help="Upload even above the 10 MiB gist limit.")
@click.option(
    "--allow-weaker-policy",
    is_flag=True,
    help="Share a session again with less left out than an earlier share of it (fewer "
    "--secret/--env-file/environment values replaced, --no-redact after a redacted share, "
    "without its --exclude, --pii, --redact-pattern, --no-thinking, --no-tool-output...); "
    "refused otherwise.",
)
@agent_context_option
def share_command(
    session: str | None,
    demo: bool,
    sessions_dir: str | None,
    leaf: str | None,
    public: bool,
    new_gist: bool,
    delete_gist: str | None,
    dry_run: bool,
    token: str | None,
    api_url: str,
    viewer_url: str | None,
    with_jsonl: bool,
    with_markdown: bool,
    force: bool,
    allow_weaker_policy: bool,
    agent_context: str | None,
    pi_viewer: bool = False,
    **policy_values: Any,
) -> None:
    """Share SESSION as a secret gist (redacted by default) and print a link to the page."""
    check_http_url(api_url, "--api-url")
    refuse_url_credentials(api_url, "--api-url", "GitHub", "--token, GH_TOKEN, gh auth token")
    token = token_argument(token, "GitHub", stdin_taken=stdin_reader(session, policy_values))
    if delete_gist is not None:  # `--delete "$GIST"` with GIST unset must not share instead
        if agent_context is not None:
            raise CliError("--delete removes a gist: --agent-context is for sharing one", 1)
        _delete(_gist_id(delete_gist), api_url, token, dry_run)
        return
    _check_viewer(viewer_url, pi_viewer)
    policy = policy_from_options(**policy_values)
    loaded = open_session(session, demo, sessions_dir, leaf, warnings=False)
    check_exclusions(loaded, policy, leaf=leaf)
    auth = _token_for_upload(token, api_url, dry_run)
    if auth and policy.redact:  # a token pasted into the session goes no further than here
        policy = dataclasses.replace(policy, auth_tokens=(auth.token,))
    extras = (["session.jsonl"] if with_jsonl else []) + (["README.md"] if with_markdown else [])
    targets = _dry_run_targets(loaded, extras, sessions_dir, policy) if dry_run else {}
    _refuse_output_collisions(loaded, targets, policy_values, agent_context)
    _say_redacting_a_large_session(loaded, policy.redact)
    context = None if agent_context is None else read_agent_context(agent_context, default_warn)
    prepared, report = prepare_session(loaded, policy)
    context = redact_agent_context(context, policy, report, prepared, loaded.header.cwd)
    report_diagnostics(prepared)  # from the redacted copy: they quote the file
    given_now = policy.given_values() if policy.redact else set()
    excluded = excluded_ids(loaded, policy.exclude)
    _refuse_unkept_state(dry_run)
    if not allow_weaker_policy:  # before the dry run too: it says what a share would do
        record = ShareState().entry(api_url, loaded.id)  # the state file, read once
        # --no-redact is given none of them: a gist that hid some would show them (code
        # review 2026-12-02: it updated the gist with a --secret value in clear), nor
        # does it find any (review 2026-12-03: a detector-found token went up in clear)
        _refuse_weaker_policy(record, loaded, policy, given_now, excluded)
        if dry_run and record and any(_unsaid(shared) for shared in _every_share(record)):
            _notify(
                "note: this session's gist was shared by a pi-session before 0.2.25, which "
                "did not record what it left out; a real share reads that from the gist "
                "first, and is refused if it would put any of it back"
            )
    files = _upload_files(prepared, extras, context, pi_viewer)
    _finish_redaction(report, policy.redact, policy_values.get("report"))
    _warn_of_located_images(prepared, report)
    size = _checked_size(files, force, dry_run, prepared)
    if dry_run:
        _write_dry_run(files, targets, size)
        return
    if auth is None:  # only a dry run goes on without a token, and it has returned
        raise CliError("no GitHub token", 3)
    client = GistClient(api_url, auth.token, notify=_notify, token_source=auth.source)
    state = ShareState()
    refuse = None if allow_weaker_policy else functools.partial(
        _refuse_weaker_policy, loaded=loaded, policy=policy, given_now=given_now,
        excluded=excluded,
    )  # fmt: skip
    keep = functools.partial(
        _given_record, report.given_values if report else set(), excluded, policy
    )
    try:
        gist, action, earlier = _share_under_lock(
            client, state, loaded, prepared, files, public=public, new_gist=new_gist,
            refuse=refuse, keep=keep,
        )  # fmt: skip
    except InterruptedRequest as stop:  # Ctrl-C with the create or update on its way
        click.echo(err=True)  # past the terminal's ^C, as the plain "interrupted" line
        raise CliError(str(stop), EXIT_INTERRUPTED) from None
    if not gist.id:
        raise CliError("GitHub answered without a gist id", 3)
    _say_what_was_done(
        gist, action, public, api_url, viewer_url, earlier, state, loaded.id, pi_viewer
    )


def _refuse_unkept_state(dry_run: bool) -> None:
    """A share whose state cannot be written (its folder read-only or another user's) is
    refused before anything is uploaded: it made its gist, said "could not save share
    state" and exited 0, and every share again made another gist, not held to what this one
    left out (--secret...). A dry run uploads nothing: it goes on, warned."""
    state = ShareState()
    error = state.why_unwritable(create=not dry_run)  # a dry run makes no folder
    if error is None:
        return
    folder = terminal_text(str(state.path.parent))
    reason = terminal_text(error.strerror or str(error))
    fix = (
        "make that folder yours and writable (fix its ownership or permissions), or set "
        "XDG_STATE_HOME to a folder you can write"
    )
    if dry_run:
        _notify(
            f"warning: the share state cannot be written in {folder} ({reason}): a real "
            f"share would be refused; {fix}"
        )
        return
    raise CliError(
        f"the share state cannot be written in {folder} ({reason}), so the gist would not "
        "be recorded: sharing again would make another, and not be held to what this share "
        f"leaves out; nothing was uploaded. {fix[0].upper()}{fix[1:]}, then share again",
        2,
    )


def _check_viewer(viewer_url: str | None, pi_viewer: bool = False) -> None:
    """--viewer-url, else PI_SHARE_VIEWER_URL, checked before any work; a --viewer-url of
    Pi's own export format is warned about here, before the upload (it is still used),
    unless --pi-viewer gives the page what such a viewer needs."""
    if viewer_url is not None:
        try:
            check_viewer_template(viewer_url)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--viewer-url") from None
        if is_pi_format_viewer(viewer_url) and not pi_viewer:
            _notify(
                terminal_text(
                    f"warning: --viewer-url {viewer_url} looks like a viewer of Pi's own "
                    "exports (pi.dev, or a base URL given the gist id after #): those show "
                    "only pages carrying Pi's session-data block, which this page does not "
                    "have, so the View link will likely not show it; add --pi-viewer, leave "
                    "--viewer-url out for gisthost.github.io, or give an HTML viewer's "
                    "template with {id}"
                )
            )
    elif os.environ.get("PI_SHARE_VIEWER_URL", "").strip():
        try:
            check_viewer_template(os.environ["PI_SHARE_VIEWER_URL"].strip())  # read so
        except ValueError as error:
            raise CliError(f"PI_SHARE_VIEWER_URL: {error}", 1) from None


#: Said when PI_SHARE_VIEWER_URL, set for Pi's /share, is left out of the View link.
_PI_VIEWER_IGNORED = (
    "note: PI_SHARE_VIEWER_URL ({}) is not used: it names a viewer of Pi's own exports, "
    "which cannot show this page; the View link uses gisthost.github.io (--pi-viewer "
    "makes the page readable there; --viewer-url TEMPLATE with {{id}} names another HTML "
    "viewer)"
)


def _dry_run_targets(
    loaded: Session, extras: list[str], sessions_dir: str | None, policy: RedactionPolicy
) -> dict[str, Path]:
    """Where a dry run writes each file it would upload: ./pi-session-share-<name>.<ext>
    (a redacted share's without the secrets of that name)."""
    stem = public_stem(loaded.path, loaded.id, policy)  # as export names a page
    names = ["session.html", *extras]
    targets = {name: Path(f"pi-session-share-{stem}.{name.split('.')[-1]}") for name in names}
    if "session.jsonl" in targets:  # a session copy run from Pi's folder: a 2nd session
        refuse_default_in_sessions(
            targets["session.jsonl"], sessions_dir, "run the dry run from another folder"
        )
    return targets


def _refuse_output_collisions(
    loaded: Session,
    targets: dict[str, Path],
    policy_values: dict[str, Any],
    agent_context: str | None,
) -> None:
    """--report and the dry run's files are checked against what the share reads before any
    work (a big session takes seconds to render); a re-run's own session.jsonl is replaced."""
    outputs: dict[str, Any] = {"--report": policy_values.get("report")}
    # named by the file the dry run writes (./pi-session-share-<name>.html), not by the
    # gist's file name it stands for (review 2026-12-03: "the dry run's session.html")
    labels = {name: f"the dry run's {path}" for name, path in targets.items()}
    outputs.update({labels[name]: path for name, path in targets.items()})
    copy_of = {labels["session.jsonl"]: loaded.id} if "session.jsonl" in labels else {}
    refuse_collisions(
        outputs,
        [*read_files([loaded.path], policy_values), ("--agent-context", agent_context)],
        copy_of=copy_of,  # a re-run replaces its own copy
    )


#: Above this source size (bytes) ``share`` says it is redacting before it goes quiet.
PROGRESS_SOURCE_BYTES = 5_000_000


def _say_redacting_a_large_session(loaded: Session, redacted: bool) -> None:
    """One line on stderr before a long redaction: the gist size limit is only checked on
    the finished page, seconds later (a 25 MB session took ~15 s to be refused). No cheap
    sound lower bound of the page exists: a detector, --redact-pattern or the home path
    can replace spans of any length by a short placeholder, so refusing early could
    refuse a session that would have fit."""
    if not redacted:
        return
    if loaded.source_data is not None:  # the bytes as read (a pipe's too)
        size = len(loaded.source_data)
    else:
        try:
            size = os.path.getsize(loaded.path) if loaded.path else 0
        except OSError:  # it was read a moment ago; a vanished file only loses this line
            return
    if size > PROGRESS_SOURCE_BYTES:
        click.echo(f"pi-session: redacting {size / 1e6:.0f} MB before the size check…", err=True)


def _upload_files(
    prepared: Session,
    extras: list[str],
    context: AgentContext | None = None,
    pi_viewer: bool = False,
) -> dict[str, str]:
    """The gist's files, by name: the page, and with --with-jsonl the redacted session,
    with --with-markdown the same session as Markdown (README.md: GitHub lists a gist's
    files by name, so it comes before the page's source on the gist's own page). The
    agent's ``context`` (already redacted) goes on the page and in the Markdown only; with
    ``pi_viewer`` the page also carries Pi's session-data block (of the redacted copy)."""
    options = RenderOptions(agent_context=context, pi_session_data=pi_viewer)
    files = {"session.html": render_session(prepared, options)}
    if "session.jsonl" in extras:
        files["session.jsonl"] = session_to_jsonl(prepared)
    if "README.md" in extras:
        from exporter.markdown_doc import session_markdown

        files["README.md"] = session_markdown(prepared, agent_context=context)
    return files


def _finish_redaction(
    report: RedactionReport | None, redacted: bool, report_path: str | None
) -> None:
    """What redaction found (and the --report file), said before the upload is sized or
    sent; with --no-redact, that nothing was looked for."""
    if report is not None:
        finish_report(report, report_path)
    if not redacted:
        click.echo("pi-session: warning: --no-redact: secrets are not looked for", err=True)


def _checked_size(files: dict[str, str], force: bool, dry_run: bool, prepared: Session) -> int:
    """The upload's size in bytes; above the gist limit a real share is refused (without
    --force), while a dry run says so and still writes the page. GitHub's API truncates
    each file over 1 MiB: that warning names the files (the total warned when none was).
    Either names --no-images where images are a large part of the upload."""
    sizes = file_sizes(files)
    size = sum(sizes.values())
    share = _image_share(prepared) if size > GIST_WARN_BYTES else 0.0  # (else unsaid)
    try:
        warning = check_size(size, force, sizes, share)
    except TooLargeError as error:
        if not dry_run:
            raise
        warning = f"warning: a real share would be refused: {error}"  # the page is still written
    if warning:
        click.echo(f"pi-session: {warning}", err=True)
    return size


def _image_share(prepared: Session) -> float:
    """The part of the session's text that is its images' base64 (0 to 1), which is about
    the part of the upload they make: the page shows each image and carries the session
    in its download link, the JSONL copy is the session (a 27 MB session of screenshots
    made a 54 MB page, 85 KB without them)."""
    from exporter.redact import session_images

    pictures = sum(len(data) for found in session_images(prepared) for data in found)
    return pictures / max(_text_size(prepared), pictures) if pictures else 0.0


def _text_size(session: Session) -> int:
    """How many characters the strings of the session's records hold: what its size is."""
    total = 0
    stack: list[Any] = [*session_records(session)]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            total += len(value)
        elif isinstance(value, dict):
            stack += value.values()
        elif isinstance(value, list):
            stack += value
    return total


def _warn_of_located_images(prepared: Session, report: RedactionReport | None) -> None:
    """The images that go out with a GPS location in their EXIF (README: images go out as
    they are, metadata included, unless --no-images), counted by the redaction walk, or
    looked for where no policy touched the copy (--no-redact)."""
    from exporter.redact import GPS_IMAGES, gps_warning, images_with_gps

    count = report.actions.get(GPS_IMAGES, 0) if report is not None else images_with_gps(prepared)
    if warning := gps_warning(count):
        _notify(terminal_text(f"warning: {warning}"))


def _write_dry_run(files: dict[str, str], targets: dict[str, Path], size: int) -> None:
    """The dry run's files, all or none: each goes in place only once every one is written
    (a full disk left a new page beside the .jsonl and .md of an earlier dry run)."""
    with contextlib.ExitStack() as stack:
        for name, text in files.items():
            out = stack.enter_context(atomic_open(targets[name], "wb"))
            out.write(text.encode("utf-8", errors="surrogateescape"))
    for name in files:
        echo_path(targets[name])
    written = ", ".join(str(path) for path in targets.values())
    click.echo(
        f"pi-session: dry run: wrote {terminal_text(written)} ({size:,} bytes would be "
        "uploaded); nothing sent",
        err=True,
    )


def _share_under_lock(
    client: GistClient,
    state: ShareState,
    loaded: Session,
    prepared: Session,
    files: dict[str, str],
    *,
    public: bool,
    new_gist: bool,
    refuse: Callable[[dict[str, Any] | None], None] | None,
    keep: Callable[[str | None], dict[str, Any]],
) -> tuple[Gist, str, dict[str, Any] | None]:
    """Create or update the session's gist holding the share state's lock, so a share of
    the same session running meanwhile neither makes a second gist nor slips past the
    weaker-policy checks (``refuse``, run on the record, with what shares recorded before
    0.2.25 left out read from their gists; None with --allow-weaker-policy). ``keep``: what
    the record keeps of this share's policy (``_given_record``, given the record's salt).
    Returns the gist, what was done and the session's record from before."""
    description = gist_description(prepared)
    source = _source_file(loaded)
    lock = terminal_text(str(state.lock_path))
    waiting = f"waiting for another share to finish (it holds {lock})"
    with state.locked(on_wait=lambda: _notify(waiting)):
        earlier = state.entry(client.api_url, loaded.id)  # reads the file: is it usable?
        judged = None
        if refuse is not None:  # again under the lock: a share that ran meanwhile counts too
            judged = _as_their_gists_say(client, earlier, loaded, prepared)
            refuse(judged)
        _warn_of_damaged_state(state, earlier)
        if earlier and not new_gist and bool(earlier.get("public")) == public:  # it is reused
            _note_another_file_with_this_id(earlier, source)
        salt = (earlier or {}).get("given_salt")
        kept = keep(salt if isinstance(salt, str) else None)
        unsaved: list[str] = []  # share_files' word on a failed write, said truly below
        gist, action = share_files(
            client, state, loaded.id, files, description, public=public, new=new_gist,
            source=source, given=kept, judged=_judged_to_keep(earlier, judged, kept),
            warn=functools.partial(_warn_unless_unsaved, state, unsaved),
        )  # fmt: skip
    if unsaved:
        _warn_unsaved(state, client.api_url, loaded.id, gist.id, unsaved[0])
    return gist, action, earlier


def _judged_to_keep(
    record: dict[str, Any] | None, judged: dict[str, Any] | None, kept: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """What the record of each gist shared before 0.2.25 is given once this share (whose
    policy is ``kept``) has gone by its judging (``_as_their_gists_say``): its gist was
    downloaded again at every share. By gist id, only the fields it lacks: ``redacted`` as
    its gist showed it; its ``cuts`` as judged, with this share's (some were judged against
    this share: one that left out all branches but one cannot tell whether the gist did);
    and, for a record without ``given_salt``, this share's given secrets, left-out entries and
    opt-in redaction (judged against this share, the gist's come out as "none it would put
    back", which says nothing of a later share that is given fewer or leaves out less).
    None judged (--allow-weaker-policy), a gist that could not be read, or one judged to
    hold given secrets this share has in clear: not kept (judged again next time)."""
    if not record or not judged:
        return {}
    pairs = zip(_every_share(record), [judged, *(judged.get("earlier") or [])], strict=False)
    found: dict[str, dict[str, Any]] = {}
    for shared, said in pairs:
        if not _unsaid(shared) or _UNREAD in said or said.get("gist_id") != shared["gist_id"]:
            continue
        fields: dict[str, Any] = {}
        if "given_salt" not in shared:
            if said.get("given"):  # (refused, but for a value given yet left in clear)
                continue
            fields.update(given_salt=kept["given_salt"], given=list(kept["given"]))
            # judged with this share's --exclude, --pii and --redact-pattern: a secret only
            # they kept out came out as "none put back", so a later share must keep them too
            for what in ("excluded", "removed"):
                if kept.get(what) and what not in shared:
                    fields[what] = list(kept[what])
        if "redacted" not in shared:
            fields["redacted"] = said.get("redacted") is True
        if "cuts" not in shared:
            fields["cuts"] = sorted({*(said.get("cuts") or []), *kept["cuts"]})
        found[shared["gist_id"]] = fields
    return found


def _warn_unless_unsaved(state: ShareState, unsaved: list[str], message: str) -> None:
    """Say ``message``, unless it is share_files' word that the state could not be saved
    ("sharing this session again will make a new gist"): kept in ``unsaved`` for
    ``_warn_unsaved``, which knows whether that is so."""
    if state.save_error is not None and message.startswith("warning: could not save share"):
        unsaved.append(message)
    else:
        _notify(message)


def _warn_unsaved(
    state: ShareState, api_url: str, session_id: str, gist_id: str, said: str
) -> None:
    """The state file could not be written (read-only, a full disk), and the record it
    still holds is what sharing again goes by: this share's gist (updated again, only what
    this share left out is not recorded), another one (updated instead of this share's), or
    none (a new gist, as ``said``)."""
    try:
        still = state.entry(api_url, session_id)
    except OSError:
        still = None
    if not still:
        _notify(terminal_text(said))
        return
    error = state.save_error
    reason = error.strerror if isinstance(error, OSError) and error.strerror else error
    unsaved = f"warning: could not save share state to {state.path}: {reason}; it still names"
    if still.get("gist_id") == gist_id:
        _notify(
            terminal_text(
                f"{unsaved} gist {gist_id} for this session, so sharing it again updates the "
                "same gist, but what this share left out is not recorded: a later share is "
                "not held to it"
            )
        )
        return
    _notify(
        terminal_text(
            f"{unsaved} gist {still.get('gist_id')} for this session, so sharing it again "
            f"updates that gist, not {gist_id}"
        )
    )


def _source_file(loaded: Session) -> str | None:
    """The session's file, resolved, which the state records the share came from; None for
    a pipe (/dev/stdin resolves to /proc/<pid>/fd/pipe:[...])."""
    is_file = bool(loaded.path) and os.path.isfile(loaded.path)
    return str(Path(loaded.path).resolve()) if is_file else None


def _warn_of_damaged_state(state: ShareState, record: dict[str, Any] | None) -> None:
    """A damaged share state (``state.corrupt``) keeps the records it still holds whole and
    is set aside: said, and whether this session's record was among them; where it was
    not, a new gist (with a new link) is made and the old one stays up. A session whose
    record is found nowhere while a copy set aside could not be read whole is warned at
    each share, not only the one that found the damage: it may have a gist already."""
    where = terminal_text(str(state.path))
    unopened = not state.path.is_file() or not os.access(state.path, os.R_OK)
    if state.corrupt and unopened:  # a folder there, or a file it may not read
        _notify(f"warning: {where} could not be read; a new gist is created")
    elif state.corrupt:
        aside = f"the damaged file is kept beside it as {state.backup_path.name}(-<time>)"
        if record is not None:
            _notify(
                f"warning: {where} is damaged: the records it still holds whole are used, "
                f"this session's among them, and {aside}"
            )
        else:
            _notify(
                f"warning: {where} is damaged and this session's record is not among those "
                f"it still holds whole; {aside}, and a new gist is created: if this session "
                "was shared before, that gist is still up"
            )
    elif record is None and state.lossy:
        names = ", ".join(terminal_text(path.name) for path in state.lossy)
        _notify(
            f"warning: {where} has no record of this session, and {names} beside it (set "
            "aside when it was damaged) could not be read whole: a new gist is created; if "
            "this session was shared before, that gist is still up"
        )


def _say_what_was_done(
    gist: Gist,
    action: str,
    public: bool,
    api_url: str,
    viewer_url: str | None,
    earlier: dict[str, Any] | None,
    state: ShareState,
    session_id: str,
    pi_viewer: bool = False,
) -> None:
    """The outcome on stderr (with the gists this session left up), then the two links."""
    kind = "public" if public else "secret"
    if action == "unchanged":
        click.echo(f"pi-session: gist unchanged ({kind}): it already holds this page", err=True)
    elif action == "replaced":
        click.echo(
            f"pi-session: the gist this session was shared to before is gone; gist created "
            f"({kind}) with a new link (the old one no longer works)",
            err=True,
        )
    else:
        click.echo(f"pi-session: gist {action} ({kind})", err=True)
    if earlier and earlier.get("gist_id") != gist.id and action != "replaced":
        # --new, or a change of --public (a gist's visibility cannot be changed): the
        # earlier gists stay up; each is named, to take a leaked secret back
        others = earlier_gists(state.entry(api_url, session_id) or {})
        if not others:  # the state could not be saved: at least the one just left
            others = [{"gist_id": earlier["gist_id"], "public": bool(earlier.get("public"))}]
        listed = ", ".join(
            f"{g['gist_id']} ({'public' if g['public'] else 'secret'})" for g in others
        )
        one = len(others) == 1
        _notify(
            terminal_text(
                f"note: this session's {'other gist is' if one else 'other gists are'} still "
                f"up: {listed}; pi-session share --delete "
                f"{others[0]['gist_id'] if one else 'GIST'}{_api_option(api_url)} removes "
                f"{'it' if one else 'one'}"
            )
        )
    if action == "updated":
        _notify(
            terminal_text(
                "note: earlier versions stay in the gist's revision history, open to anyone "
                f"with the link; to remove them: pi-session share --delete {gist.id}"
                f"{_api_option(api_url)}, then share again"
            )
        )
    view = viewer_link(gist, api_url, viewer_url, pi_format=pi_viewer)
    ignored = ignored_env_viewer(api_url, viewer_url, os.environ, pi_viewer)
    if ignored:
        _notify(terminal_text(_PI_VIEWER_IGNORED.format(ignored)))
    if view == gist.html_url:  # another GitHub host: no public viewer reads its gists
        _notify(
            terminal_text(
                "note: the View link is the gist's own page, which shows the HTML as source: "
                f"public gist viewers read only github.com; --viewer-url TEMPLATE names one "
                f"that reads {urlsplit(api_url).hostname}"
            )
        )
    if "README.md" in gist.files:
        _notify("note: the gist's own page shows the session as Markdown (README.md)")
    click.echo(f"Gist: {gist.html_url}")
    click.echo(f"View: {view}")


def _note_another_file_with_this_id(earlier: dict[str, Any], source: str | None) -> None:
    """A copy of a session file keeps the session's id, and the share state is keyed by it:
    sharing the copy updates the gist of the original. Said when that original is still
    there (a moved file is the same session and says nothing)."""
    shared_from = earlier.get("source")
    if not source or not isinstance(shared_from, str) or shared_from == source:
        return
    if not os.path.exists(shared_from):
        return
    _notify(
        terminal_text(
            f"note: gist {earlier['gist_id']} holds this session id as shared from "
            f"{shared_from}; this share replaces it with {source} (--new makes a separate gist)"
        )
    )
