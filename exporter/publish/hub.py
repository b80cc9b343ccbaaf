"""Publishing many sessions to one Hugging Face dataset repo (``pi-session publish``).

``publish`` runs the whole job against one ``HubRepo`` (``hub_repo``, the remote half):
read the remote tree and manifest, redact what changed (``hub_plan``), chunk the changes
into self-consistent commits (``hub_commits``, which explains the interruption story) and
commit them in a chain (``parent_commit``), so a concurrent publisher is detected.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exporter import __version__
from exporter.formatting import plural
from exporter.fsutil import atomic_write_text, private_user_cache_dir, user_cache_dir
from exporter.policy import RedactionPolicy, cut_option, given_digest
from exporter.publish.dataset_card import (
    CARD_BEGIN,
    CARD_END,
    card_problem,
    has_card_block,
    render_card,
    render_index,
    render_manifest,
)
from exporter.publish.deny import Denied, DenyPattern
from exporter.publish.errors import (
    AuthError,
    NetworkError,
    NoTokenError,
    PublishError,
    clean_token,
)
from exporter.publish.hub_commits import (
    Commit,
    Op,
    PruneScope,
    RenderMeta,
    html_ops,
    is_pruned,
    plan_commits,
    prune_ops,
    session_ops,
)
from exporter.publish.hub_plan import (
    Prepared,
    Source,
    claim_paths,
    classify,
    dropped_cuts,
    fewer_given_by_marks,
    fewer_given_secrets,
    one_per_copy,
    one_per_session,
    policy_cuts,
    prepare_all,
    probe_sources,
    published_stems,
    publisher_mark,
    session_id_mark,
    unknown_policy_replaced,
)
from exporter.publish.hub_repo import DEFAULT_ENDPOINT, HubRepo, default_token
from exporter.publish.hub_site import (
    build_html,
    copies_cache_dir,
    copies_in_use,
    html_cache_dir,
    keep_copies,
    remote_copies,
    write_page_notes,
)
from exporter.publish.hub_state import RemoteState, git_oid
from exporter.publish.publish_key import PublishKey, load_publish_key
from exporter.redact import gps_warning, name_scrubber

if TYPE_CHECKING:
    from exporter.site import SitePagesUnwritten

__all__ = ["DEFAULT_ENDPOINT", "HubRepo", "PublishRequest", "PublishResult", "publish"]

Notify = Callable[[str], None]


@dataclass
class PublishRequest:
    repo_id: str
    files: list[Path]
    policy: RedactionPolicy
    endpoint: str = DEFAULT_ENDPOINT
    token: str | None = None
    public: bool = False
    dry_run: bool = False
    prune: bool = False
    prune_all: bool = True  # --prune over every project (--all), else the selection's
    partial_selection: bool = False  # SESSION arguments or --since: no "no file here" count
    html: bool = False
    jobs: int = 1
    progress: bool | None = None
    want_records: bool = False
    allow_weaker_policy: bool = False
    #: --deny: a session one of them matches (redacted) is not published (``deny.py``)
    deny: tuple[DenyPattern, ...] = ()
    #: the endpoint was typed (--endpoint), not taken from HF_ENDPOINT or the default: a dry
    #: run that cannot reach it stops at once (a typo, a dead proxy), before any redacting
    endpoint_typed: bool = False
    #: called with the result once every session is redacted and the commits are planned,
    #: before the first one is sent (a real run only): what was found is said before it goes up
    before_upload: Callable[[PublishResult], None] | None = None


@dataclass
class PublishResult:
    url: str
    exists: bool = False
    reached: bool = True  # False: a dry run that could not read the dataset planned without it
    created: bool = False
    private: bool = True
    ops: list[Op] = field(default_factory=list)
    unchanged: int = 0
    prepared: int = 0
    failed: list[tuple[Path, str]] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    planned_commits: int = 0
    #: the dataset's own files the commits write (index, card, manifest): name -> bytes
    metadata: dict[str, int] = field(default_factory=dict)
    metadata_sent: int = 0  # bytes of them over all commits (each may write them again)
    sessions: int = 0
    redactions: dict[str, int] = field(default_factory=dict)
    actions: dict[str, int] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    without_file: int = 0  # published sessions a --prune of this selection would remove
    denied: list[Denied] = field(default_factory=list)  # sessions --deny kept out
    deny_patterns: int = 0  # how many --deny patterns the run checked

    def count(self, action: str, sessions: bool = True) -> int:
        return sum(op.action == action and op.is_session == sessions for op in self.ops)


@dataclass(frozen=True)
class _Run:
    """What the steps of one run share once the dataset was read: one argument, not ten."""

    req: PublishRequest
    repo: HubRepo
    remote: RemoteState
    result: PublishResult
    notify: Notify
    marks: PublishKey
    environ: dict[str, str]  # os.environ without the token's value
    key: str  # the redaction settings' mark, which the manifest records per session
    policy: RedactionPolicy  # what the workers redact with
    cuts: list[str]  # what the policy removes besides secrets (--no-thinking, ...)
    public_name: Callable[[str], str]  # a file's name with its secrets out (dataset paths)
    publisher: str  # this machine's mark on what it publishes
    deny_marks: list[str]  # the --deny patterns' marks, which the manifest records per session


def publish(req: PublishRequest, notify: Notify = lambda _: None) -> PublishResult:
    """Probe, diff, redact, plan and (unless ``dry_run``) commit; see the module doc."""
    token = _hub_token(req)
    repo = HubRepo(req.repo_id, endpoint=req.endpoint, token=token, notify=notify)
    result = PublishResult(url=repo.url)
    _check_token(req, repo, token, result)
    remote = _open_remote(req, repo, result)
    if not token and not result.reached:
        result.warnings.append("no token: a real run needs one (--token, HF_TOKEN or a login)")
    if not token and not remote.exists and result.reached:  # a private one looks missing
        raise NoTokenError(
            f"dry run without a token: {req.repo_id} is not visible anonymously (missing, or "
            "private), so what a run would do cannot be told; pass --token or set HF_TOKEN"
        )
    run = _begin(req, repo, remote, result, token, _publish_key(result, req.dry_run), notify)
    # a file's name becomes its dataset path and its page's name: no secret in either
    sources, result.failed = probe_sources(req.files, run.public_name)
    sources, copies = one_per_copy(sources)
    for copy, kept in copies:  # local paths, said on stderr only
        result.warnings.append(
            f"{_folder_and_name(copy.path)} is a byte-identical copy of "
            f"{_folder_and_name(kept.path)}: one session, published once"
        )
    sources, earlier, apart = one_per_session(sources)
    for copy, kept, same in earlier:
        result.warnings.append(_held_copy_said(copy.path, kept.path, same))
    for group in apart:
        names = " and ".join(_folder_and_name(s.path) for s in group)
        result.warnings.append(
            f"{names} hold one session that went on apart: each is published, as rows with "
            "the same id (the index's path tells them apart)"
        )
    moved: list[str] = []
    id_mark = functools.partial(session_id_mark, run.marks.mark)
    sources = claim_paths(sources, remote, run.public_name, moved, id_mark, mark=run.marks.mark)
    for path in moved:  # said without the secret; the old path stays until --prune
        notify(
            f"warning: {path}: the session was published at a path holding a secret or your "
            "user name, which this run redacts (a --secret or sensitive value it was not given "
            "before, or what an earlier version did not find): it goes up again at a path "
            "without it; the old file stays, "
            "left out of index.jsonl, manifest.json and the card, until --all --prune deletes it"
        )
    unchanged, todo = classify(sources, remote, run.key, run.marks.mark, run.deny_marks)
    _refuse_dropped_cuts(run, todo)
    result.unchanged = len(unchanged)
    with tempfile.TemporaryDirectory(prefix="pi-session-publish-") as tmp:
        _publish_changes(run, sources, unchanged, todo, Path(tmp))
    return result


def _held_copy_said(copy: Path, kept: Path, same: bool) -> str:
    """Why a file of a session another file holds is not published: the same entries in
    other bytes (a copy re-saved with CRLF, a byte order mark, as UTF-16 or gzip) is no
    "earlier state" of a session that "went on"."""
    copy_said, kept_said = _folder_and_name(copy), _folder_and_name(kept)
    if same:
        return (
            f"{copy_said} holds the same entries as {kept_said} (a copy saved in other bytes: "
            "line ends, byte order mark, encoding or compression): one session, published once, "
            f"as {kept_said}"
        )
    return (
        f"{copy_said} is an earlier state of {kept_said} (one session; the other went on): "
        "published once, as the later"
    )


def _folder_and_name(path: Path) -> str:
    """A session file as its project folder and name: enough to tell copies apart."""
    return f"{path.parent.name}/{path.name}"


def _hub_token(req: PublishRequest) -> str | None:
    """--token, else HF_TOKEN or the login's; missing, only a dry run goes on (anonymously),
    and a real run fails before anything is read."""
    token = clean_token(req.token, "Hugging Face") or clean_token(default_token(), "Hugging Face")
    if not token and not req.dry_run:
        raise NoTokenError(
            "no Hugging Face token: pass --token, set HF_TOKEN or run `hf auth login`"
        )
    return token


def _check_token(
    req: PublishRequest, repo: HubRepo, token: str | None, result: PublishResult
) -> None:
    """A read-only token, or one whose user may not write to the namespace, would fail
    only at the first commit, after all the redacting: it is found out first, from the
    Hub's ``whoami``. A dry run goes on, and its warnings say what a real run lacks."""
    if not token:
        result.warnings.append("no token: the dataset was read anonymously")
        return
    access = repo.token_access()
    ns = req.repo_id.split("/", 1)[0]
    if access.role == "read":
        if not req.dry_run:  # refused now, not after every session was redacted
            raise AuthError(
                f"the token is read-only on {repo.host}: publishing to '{ns}' needs a token "
                "with the write role (or a fine-grained one that may write to it)",
                status=403,
            )
        result.warnings.append("the token is read-only: a real run would be refused")
    elif (why := access.refusal(req.repo_id)) is not None:
        # what the Hub's 403 at the first write says, before any session is redacted
        message = f"no write access to '{ns}' on {repo.host}: {why}"
        if not req.dry_run:
            raise AuthError(message, status=403)
        result.warnings.append(f"{message}: a real run would be refused")


def _open_remote(req: PublishRequest, repo: HubRepo, result: PublishResult) -> RemoteState:
    """Read the repo (a missing one is planned as empty and made by :func:`_commit`, so a
    run that has nothing readable to send creates nothing). A dry run
    that cannot reach the Hub (offline, HF_HUB_OFFLINE) still says what the sessions would
    be, redacted, planned as a first publish; one whose --endpoint was typed stops here
    (exit 3), before hashing or redacting any session."""
    try:
        remote = repo.read_state()
    except NetworkError as error:
        if not req.dry_run or error.status is not None:  # a 5xx: the Hub is there, try again
            raise
        offline = str(error).startswith("HF_HUB_OFFLINE")
        if req.endpoint_typed and not offline:  # a guessed plan of every session: minutes
            raise NetworkError(
                f"--endpoint {repo.host} cannot be reached, so no plan was made (it would be "
                "a guess: a new dataset with every session added); check the URL"
            ) from None
        result.reached = False
        result.warnings = [w for w in result.warnings if not w.startswith("no token:")]
        result.warnings.append(
            f"{'HF_HUB_OFFLINE is set' if offline else f'cannot reach {repo.host}'}: planned as "
            "a first publish to a new dataset, every session added (a run that reads the "
            "dataset sends only what changed)"
        )
        remote = RemoteState()
    result.exists = remote.exists  # a missing one is created at the first commit (_commit)
    result.private = remote.private if remote.exists else not req.public
    if remote.exists and not remote.private and not req.public:
        # made public on the Hub since (a teammate): a routine run would add to it unread
        public = f"{req.repo_id} is public: what is published is visible to all; pass --public"
        if not req.dry_run:  # refused before any session is read, redacted or sent
            raise PublishError(f"{public} to publish to it", exit_code=1)
        result.warnings.append(f"{public}, or a real run is refused")
    if result.exists and remote.private and req.public:
        result.warnings.append(f"{req.repo_id} exists and stays private (--public only creates)")
    result.warnings += remote.problems
    if remote.manifest_gap() == "missing" and any(p.startswith("sessions/") for p in remote.files):
        result.warnings.append(
            "the dataset holds sessions but no manifest.json (deleted?): every session is "
            "checked again, and one whose copy in the dataset this run would change is "
            "refused (how that copy was redacted cannot be told)"
        )
    return remote


def _publish_key(result: PublishResult, dry_run: bool) -> PublishKey:
    """The local key the dataset's marks are made under (a dry run creates no key file); a
    refused one (a too short PI_SESSION_PUBLISH_KEY) is a setting to fix (exit 1), not a
    failed upload."""
    try:
        marks = load_publish_key(create=not dry_run)
    except ValueError as error:
        raise PublishError(str(error), exit_code=1) from None
    if marks.note:
        result.warnings.append(marks.note)
    return marks


def _begin(
    req: PublishRequest,
    repo: HubRepo,
    remote: RemoteState,
    result: PublishResult,
    token: str | None,
    marks: PublishKey,
    notify: Notify,
) -> _Run:
    """The settings as the dataset records them (HMACs under the local key) and as the
    workers redact with them, fixed once for the whole run."""
    # Hub tokens are redacted as such (auth_tokens), whatever their place, and are no part
    # of the settings' key: a new one in HF_TOKEN, or --token given beside it or not, must
    # not read as changed settings and re-redact every session
    tokens = _hub_tokens(token)
    environ = {name: value for name, value in os.environ.items() if value.strip() not in tokens}
    key = marks.mark(req.policy.key(environ))
    policy = dataclasses.replace(req.policy, auth_tokens=tokens) if tokens else req.policy
    policy = policy.resolved(environ)  # the workers redact with this process's environment
    return _Run(
        req=req,
        repo=repo,
        remote=remote,
        result=result,
        notify=notify,
        marks=marks,
        environ=environ,
        key=key,
        policy=policy,
        cuts=policy_cuts(req.policy),
        public_name=name_scrubber(policy, environ),
        publisher=publisher_mark(marks.mark),  # this machine's key, not secret
        # marks, not the patterns: the manifest is public and a pattern may name a customer
        deny_marks=sorted({marks.mark(f"pi-session deny: {p.text}") for p in req.deny}),
    )


#: Where huggingface_hub looks for a token in the environment (HF_TOKEN, then the old name).
HUB_TOKEN_VARIABLES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


def _hub_tokens(token: str | None) -> tuple[str, ...]:
    """The token in use and those of the environment's Hub token variables: with --token
    A and HF_TOKEN=B, B counted as an environment secret in the key, and a later run on B
    alone (the token in use then) left it out: every session was redacted again."""
    found = [token, *(os.environ.get(name, "").strip() for name in HUB_TOKEN_VARIABLES)]
    return tuple(dict.fromkeys(t for t in found if t))


def _refuse_dropped_cuts(run: _Run, todo: list[Source]) -> None:
    """Refused before any session is redacted: sessions the dataset holds with more removed
    (--no-thinking, ...) would go up again with that content back."""
    dropped = dropped_cuts(run.remote, todo, run.cuts)
    if dropped and not run.req.allow_weaker_policy:
        # the given values missing too, where the marks tell: said now, not one run later
        fewer = fewer_given_by_marks(run.remote, todo, _given_marks(run), run.publisher)
        message = _weaker_policy_message(dropped)
        if fewer:
            message += f". Also: {_fewer_secrets_message(fewer)}"
        raise PublishError(message, exit_code=1)


def _weaker_policy_message(dropped: dict[str, int]) -> str:
    """Why a run that removes less than the dataset's sessions had removed is refused."""
    held = ", ".join(f"{n:,} with {cut_option(name)}" for name, n in sorted(dropped.items()))
    return (
        f"the dataset holds sessions of this selection published with more removed ({held}); "
        "this run would publish them again with that content back. Pass the same options, or "
        "--allow-weaker-policy to publish them so"
    )


def _given_marks(run: _Run) -> set[str]:
    """The marks of the values this run is given (--secret, --env-file, the environment)."""
    return {run.marks.mark(given_digest(v)) for v in run.policy.given_values(run.environ)}


def _publish_changes(
    run: _Run, sources: list[Source], unchanged: list[Source], todo: list[Source], tmp: Path
) -> None:
    """Redact what changed, plan the commits and (unless a dry run) make them; the staged
    uploads wait in ``tmp`` until their commit."""
    prepared = _prepare(run, todo, tmp / "staged")
    _refuse_nothing_readable(run, sources, unchanged)
    ops = session_ops(prepared, run.remote, run.key, run.marks.mark, run.cuts, run.publisher)
    for op in ops:  # checked against these patterns: unchanged for a run with them (classify)
        if op.entry is not None and run.deny_marks:
            op.entry["deny"] = list(run.deny_marks)
    failed = {path for path, _ in run.result.failed}
    scope = _prune_scope(run, sources, prepared)
    ops += _prune(run, sources, failed, scope)
    ops += _denied_removals(run)
    uploads = {p.source.repo_path: p for p in prepared if p.error is None}
    has_html = "html/index.html" in run.remote.files
    kept = False  # this run's uploads kept as the dataset's copies (for the site)
    # html/ is the site of every session the dataset holds (another project's, another
    # machine's, one deleted here too). A dataset with a site keeps it in step, or pages
    # of pruned sessions, or of sessions re-published with more redacted, would stay.
    if run.req.html or has_html:
        others = _sessions_beside_uploads(run, sources, unchanged, failed, scope)
        site = _site_ops(run, others, uploads, tmp)
        if site is not None:
            ops += site
            has_html, kept = True, not run.req.dry_run
    card = _card_plan(run, ops)
    commits, final = plan_commits(ops, run.remote, _meta_renderer(run, card, has_html))
    run.result.ops, run.result.planned_commits, run.result.sessions = ops, len(commits), len(final)
    for commit in commits:  # the last version of each, as the dataset ends up with it
        run.result.metadata.update((name, len(data)) for name, data in commit.metadata.items())
        run.result.metadata_sent += sum(len(data) for data in commit.metadata.values())
    if not run.req.dry_run:
        if run.req.before_upload is not None:
            run.req.before_upload(run.result)
        _commit(run, commits, uploads if has_html and not kept else {})


def _refuse_nothing_readable(run: _Run, sources: list[Source], unchanged: list[Source]) -> None:
    """A selection of which no session could be read is an error (exit 2), before anything
    is planned, sent or created: a run that only rewrote the card of an empty dataset (or
    created one) and exited 0 looked like a success."""
    if run.req.files and not unchanged and not run.result.prepared and run.result.denied:
        if not (run.req.prune and any(d.published for d in run.result.denied)):
            sent = "nothing would be sent" if run.req.dry_run else "nothing was sent"
            error = PublishError(
                f"--deny keeps out every session that could be read "
                f"({len(run.result.denied):,}); {sent}",
                exit_code=2,
            )  # a cron job must see a run that would put out nothing, as --skip's
            error.partial = run.result
            raise error
    elif run.req.files and not unchanged and not run.result.prepared:
        selected = len(run.req.files)
        which = "the session" if selected == 1 else f"none of the {selected:,} sessions"
        verb = "could be read" if selected != 1 else "could not be read"
        sent = "nothing would be sent" if run.req.dry_run else "nothing was sent"
        error = PublishError(f"{which} selected {verb}; {sent}", exit_code=2)
        error.partial = run.result  # the warnings say why each one failed
        raise error


def _prepare(run: _Run, todo: list[Source], staging: Path) -> list[Prepared]:
    """The changed sessions redacted into ``staging`` and counted in the result; checked
    for given secrets an earlier run replaced before anything is planned from them."""
    prepared = prepare_all(
        todo, run.policy, staging, jobs=run.req.jobs, progress=run.req.progress,
        want_records=run.req.want_records, deny=tuple(p.text for p in run.req.deny),
    )  # fmt: skip
    run.result.deny_patterns = len(run.req.deny)
    _say_denied(run, [p for p in prepared if p.denied is not None])
    prepared = [p for p in prepared if p.denied is None]  # not published, not counted
    _tally(run.result, prepared)
    _refuse_fewer_secrets(run, prepared)
    return prepared


def _say_denied(run: _Run, denied: list[Prepared]) -> None:
    """The sessions a --deny pattern matched, for the CLI to say (never what matched):
    whether the dataset holds a copy, and whether this run (--prune) deletes it."""
    for item in sorted(denied, key=lambda p: p.source.repo_path):
        index, where = item.denied or (0, "")
        published = item.source.repo_path in run.remote.files
        run.result.denied.append(
            Denied(
                path=item.source.path,
                repo_path=item.source.repo_path,
                pattern=run.req.deny[index],
                where=where,
                published=published,
                removed=published and run.req.prune,
            )
        )


def _denied_removals(run: _Run) -> list[Op]:
    """With --prune, the dataset's copies of denied sessions deleted (as --skip with
    --prune deletes a skipped one's). The path is the one this session claimed (its
    published copy, found by its id: see ``claim_paths``), so no other session is
    touched, whichever machine published it. Without --prune the copy stays, said."""
    return [
        Op("remove", d.repo_path, run.remote.files[d.repo_path].size)
        for d in run.result.denied
        if d.removed
    ]


def _tally(result: PublishResult, prepared: list[Prepared]) -> None:
    result.prepared = sum(1 for p in prepared if p.error is None)  # failed ones redacted nothing
    result.failed += [(p.source.path, p.error) for p in prepared if p.error is not None]
    for item in prepared:
        for name, n in item.redactions.items():
            result.redactions[name] = result.redactions.get(name, 0) + n
        for name, n in item.actions.items():
            result.actions[name] = result.actions.get(name, 0) + n
        result.records += [{"session": item.source.repo_path, **r} for r in item.records]
        if item.lone_surrogates:
            n = item.lone_surrogates
            result.warnings.append(
                f"{item.source.repo_path}: {n} half character{'s' if n != 1 else ''} (a lone "
                "surrogate, as a cut emoji leaves) written as U+FFFD in the upload: the "
                "datasets library cannot read the file otherwise"
            )
        if item.bad_usage:  # as export and stats warn: the row's tokens and cost leave it out
            result.warnings.append(
                f"{item.source.repo_path}: {item.bad_usage} (in the index row's tokens and "
                "cost too)"
            )
        if located := gps_warning(item.gps_images):  # (README: images go
            result.warnings.append(f"{item.source.repo_path}: {located}")  # out as they are)
        if item.damaged:  # session_to_jsonl writes entries; a damaged line is none
            count, first = len(item.damaged), item.damaged[0]
            more = f" (first: {first})" if count > 1 else f" ({first})"
            result.warnings.append(
                f"{item.source.repo_path}: {count} damaged line{'s' if count != 1 else ''} "
                f"left out of the upload{more}"
            )


def _refuse_fewer_secrets(run: _Run, prepared: list[Prepared]) -> None:
    """Refused before anything is sent: a --secret value or environment variable an earlier
    run replaced, missing now, would go up in clear."""
    fewer = fewer_given_secrets(run.remote, prepared, _given_marks(run), run.publisher)
    if fewer and not run.req.allow_weaker_policy:
        raise PublishError(_fewer_secrets_message(fewer), exit_code=1)
    unknown = unknown_policy_replaced(run.remote, prepared)
    if unknown and not run.req.allow_weaker_policy:
        raise PublishError(_unknown_policy_message(run.remote, unknown), exit_code=1)


def _fewer_secrets_message(fewer: dict[str, int]) -> str:
    """Why a run that would put given secrets back in clear is refused."""
    return (
        f"{plural(len(fewer), 'session')} would be published again without replacing "
        f"{plural(sum(fewer.values()), 'secret')} an earlier run was given (first: "
        f"{min(fewer)}): --secret or --env-file values, sensitive environment variables or "
        "the token it ran with, that this run lacks. Pass the same ones (a token replaced "
        "since: the old one with --secret), or --allow-weaker-policy if the values are gone "
        "for another reason"
    )


def _unknown_policy_message(remote: RemoteState, paths: list[str]) -> str:
    """Why a run is refused that would replace copies whose redaction the dataset's
    manifest.json cannot tell (deleted, damaged, from another version, or without them)."""
    gap = remote.manifest_gap()
    why = {
        "missing": "the dataset has no manifest.json (deleted?), which records how each copy "
        "was redacted",
        "unreadable": "the dataset's manifest.json, which records how each copy was redacted, "
        "is unreadable (damaged, or edited by hand)",
        "from another version": "the dataset's manifest.json, which records how each copy was "
        "redacted, is from another version of pi-session",
    }.get(
        gap or "",
        "their manifest.json entries are missing or record nothing of how they were redacted",
    )
    one = len(paths) == 1
    copies = "a copy that differs from the one" if one else "copies that differ from the ones"
    return (
        f"{plural(len(paths), 'session')} in the dataset (first: {paths[0]}) would be "
        f"replaced by {copies} there, and {why}: the new {'copy' if one else 'copies'} may "
        "hold what an earlier run removed (a --secret or --env-file value, thinking or tool "
        "output it cut). Pass the options they were published with (a session that only "
        "grew since is not refused then), and add --allow-weaker-policy to replace what is "
        "still refused; the manifest.json written then records this run's options, and "
        "later runs are checked against it"
    )


def _prune_scope(run: _Run, sources: list[Source], prepared: list[Prepared]) -> PruneScope:
    """--prune removes what the selection does not name: with --all every other session,
    else only the selection's projects' sessions published from here."""
    projects = None if run.req.prune_all else _selected_projects(sources, prepared, run.remote)
    return PruneScope(projects, run.publisher)


def _selected_projects(
    sources: list[Source], prepared: list[Prepared], remote: RemoteState
) -> frozenset[str]:
    """The projects (index rows' ``project``, as published) this run's sessions belong to."""
    projects = {str(item.row.get("project")) for item in prepared if item.error is None}
    for source in sources:
        row = remote.rows.get(source.repo_path)
        if row is not None:
            projects.add(str(row.get("project")))
    return frozenset(projects)


def _failed_names(run: _Run, failed: set[Path]) -> set[str]:
    """The unreadable files' names, as they are and as their dataset paths end: their
    published copies stay (a name with a secret in it is published without it)."""
    published = {
        f"{stem}.jsonl" for p in failed for stem in published_stems(p.name, run.public_name)
    }
    return {p.name for p in failed} | published


def _prune(run: _Run, sources: list[Source], failed: set[Path], scope: PruneScope) -> list[Op]:
    """The removals of a --prune run; without --prune, how many it would make is counted
    for the summary's note (not for SESSION arguments or --since: they name a part)."""
    paths, names = {s.repo_path for s in sources}, _failed_names(run, failed)
    left = prune_ops(run.remote, paths, names, scope)
    if run.req.prune:
        return left
    if not run.req.partial_selection:  # what --prune would remove, said
        run.result.without_file = len(left)
    return []


def _sessions_beside_uploads(
    run: _Run, sources: list[Source], unchanged: list[Source], failed: set[Path], scope: PruneScope
) -> set[str]:
    """The published sessions that stay besides this run's uploads, whose pages the site
    keeps: the unchanged ones here and those published from elsewhere."""
    names = _failed_names(run, failed)
    outside = _published_elsewhere(run.remote, sources, run.req.prune, failed, names, scope)
    # a copy left at a path whose name holds what this run redacts (a secret, the user's
    # name) went up again at a path without it: its page is not made twice (the old file
    # stays, out of the index, until --prune)
    outside = [path for path in outside if _name_kept(run.public_name, path)]
    kept = [s.repo_path for s in unchanged if s.path not in failed]
    # a denied session's published copy stays without --prune: so does its page
    denied = [d.repo_path for d in run.result.denied if d.published and not d.removed]
    return {*outside, *kept, *denied}


def _name_kept(public_name: Callable[[str], str], path: str) -> bool:
    """Whether the file name at dataset ``path`` is public as it is (``public_name``, a
    redacted run's name scrubber, leaves it alone)."""
    name = path.rsplit("/", 1)[-1]
    return public_name(name) == name


def _published_elsewhere(
    remote: RemoteState,
    sources: list[Source],
    prune: bool,
    failed: set[Path],
    names: set[str],
    scope: PruneScope,
) -> list[str]:
    """Sessions that stay on the Hub after this run without a readable file in it
    (``names``: the unreadable files', see :func:`_failed_names`)."""
    local = {source.repo_path for source in sources if source.path not in failed}
    paths = {source.repo_path for source in sources}

    def pruned(path: str) -> bool:  # as prune_ops
        return prune and is_pruned(path, remote, paths, names, scope)

    return sorted(  # from the tree, not the manifest (which may be unreadable)
        path
        for path in remote.files
        if path.startswith("sessions/")
        and path.endswith(".jsonl")
        and path not in local
        and not pruned(path)
    )


def _site_ops(
    run: _Run, others: set[str], uploads: dict[str, Prepared], tmp: Path
) -> list[Op] | None:
    """The html/ site rebuilt, as ops; None when a session's copy could not be downloaded
    (a site without it would drop its page).

    Each page is made from the file the dataset holds, never from a local one: a damaged or
    legacy local file made a page unlike its copy's, so runs with and without it (--cwd,
    another machine) made a commit each. This run's uploads are its staged copies, kept
    first (a real run) where the others' are: downloaded once per version and kept (a dry
    run uses the kept copies too: they are a local cache, not the dataset). So a page's
    source is the same file whichever run uploaded it, and is not rendered again."""
    try:
        cache = _cache_folder(run, lambda: copies_cache_dir(run.repo.endpoint, run.req.repo_id))
        with copies_in_use(cache, run.remote):  # (another publish's copies are not deleted)
            return _site_from_copies(run, others, uploads, tmp, cache)
    except OSError as error:
        raise _cache_unusable(error) or error from None


#: What a cache folder of another user's, one without write permission, one on a read-only
#: file system, or a file where a folder goes (HOME a file) fails with.
_NOT_ALLOWED_HERE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EEXIST})


def _cache_unusable(error: OSError) -> PublishError | None:
    """A cache folder this user cannot make or write (another user's, HOME a file): it
    was "error: …/pi-session-export: Permission denied", saying neither what the folder is
    for nor what to do. None for an error elsewhere (it is said as it is)."""
    if error.errno not in _NOT_ALLOWED_HERE:  # (a full disk is said as it is)
        return None
    where = error.filename
    root = user_cache_dir()
    if not isinstance(where, str) or not (where == str(root) or where.startswith(f"{root}/")):
        return None
    return PublishError(
        f"the local publish cache cannot be written ({where}: {error.strerror or error}); "
        "nothing was sent. Make that folder yours and writable, or set XDG_CACHE_HOME to "
        "a folder you can write",
        exit_code=2,
    )


def _site_from_copies(
    run: _Run, others: set[str], uploads: dict[str, Prepared], tmp: Path, cache: Path
) -> list[Op] | None:
    """:func:`_site_ops` with the kept copies in ``cache`` held for this run's use."""
    remote = run.remote
    elsewhere = sorted(others - set(uploads))
    copies, missing = remote_copies(
        elsewhere, remote, cache, lambda path: run.repo.download(path, remote.head or "main")
    )
    if missing:
        run.result.warnings.append(
            f"html/ was not rebuilt: {len(missing)} published session(s) could not be "
            "downloaded for their pages; a re-run tries again"
        )
        return None
    counts = {
        copy: _recorded_counts(remote.manifest.get(path))
        for path, copy in zip(elsewhere, copies, strict=True)
    }
    for copy, item in _upload_copies(run, uploads, cache, tmp / "uploads"):
        counts[copy] = {"redactions": item.redactions, "actions": item.actions}
    notes = write_page_notes({c: n for c, n in counts.items() if n is not None}, tmp)
    return _rebuilt_site(run, sorted(counts), notes, tmp)


def _recorded_counts(entry: dict[str, Any] | None) -> dict[str, dict[str, int]] | None:
    """What the manifest says was done to a published session's original (an entry of an
    older version has no ``actions``); None for a session it does not describe."""
    if entry is None or not isinstance(entry.get("redactions"), dict):
        return None
    actions = entry.get("actions")
    return {"redactions": entry["redactions"], "actions": actions or {}}


def _upload_copies(
    run: _Run, uploads: dict[str, Prepared], cache: Path, folder: Path
) -> list[tuple[Path, Prepared]]:
    """Where each upload's page is made from: a real run keeps the staged copies as the
    dataset's (where a later run finds them), else (a dry run, a copy that could not be
    kept) they are linked under their names in the dataset (a page's name comes from its
    file's) in ``folder``."""
    staged = {path: (p.staged, p) for path, p in uploads.items() if p.staged is not None}
    kept: dict[str, Path] = {}
    if not run.req.dry_run:
        kept = keep_copies({path: (file, p.oid) for path, (file, p) in staged.items()}, cache)
    files = []
    for repo_path, (file, item) in sorted(staged.items()):
        target = kept.get(repo_path)
        if target is None:
            target = folder / repo_path
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(file, target)
            except OSError:
                shutil.copyfile(file, target)
        files.append((target, item))
    return files


def _rebuilt_site(run: _Run, copies: list[Path], notes: Path, tmp: Path) -> list[Op]:
    """Pages rendered into the kept site (only what changed is rendered), and the ops that
    bring the dataset's html/ to it; a dry run renders into a copy, leaving the kept one."""
    from exporter.site import SitePagesUnwritten  # (as build_html: loaded for a site only)
    from exporter.site_manifest import SiteBusy

    if not run.req.html:
        run.notify("the dataset has an html/ site: rebuilding it too")
    site = _cache_folder(run, lambda: html_cache_dir(run.repo.endpoint, run.req.repo_id))
    if run.req.dry_run:  # a copy of the kept site: only what changed is rendered
        site = _scratch_copy(site, tmp / "site")
    build = functools.partial(
        build_html,
        copies,
        site,
        run.policy,
        run.key,
        jobs=run.req.jobs,
        progress=run.req.progress,
        public_name=run.public_name,
        notes=notes,
    )
    try:
        try:
            build()
        except OSError as error:
            if error.errno not in _IN_THE_WAY:
                raise
            # a folder where the index or a page goes, a file where a folder goes: every
            # run failed on it (exit 2). The site is a cache: made again, whole
            shutil.rmtree(site, ignore_errors=True)
            run.result.warnings.append(
                f"the local cache of html/ pages ({site}) was damaged "
                f"({os.strerror(error.errno or 0).lower()} where the site writes): dropped, "
                "and every page rendered again"
            )
            build()
    except SiteBusy:
        # the kept site is this machine's publish cache: only another publish to this
        # dataset builds it. Its folder and "build" mean nothing to the user: said (exit 3)
        # as another publish that changed the dataset meanwhile is
        raise PublishError(
            f"another publish to {run.req.repo_id} is running (its html/ pages are being "
            "built); nothing was sent; run again when it ends"
        ) from None
    except SitePagesUnwritten as error:
        raise _unwritten_pages(run, error, site) from None
    return html_ops(site, run.remote, skip=lambda rel: rel.startswith("."))


def _unwritten_pages(run: _Run, error: SitePagesUnwritten, site: Path) -> PublishError:
    """Pages the local cache of html/ (a dry run's copy of it, in the temporary folder)
    could not take (a full disk): the site there lacks them, and its diff would delete
    them from the dataset; or pages (search text) it no longer lists that it could not
    delete (a folder of another user's), which its diff would leave up. The run stops
    before any commit (exit 2, as for a cache that cannot be written at all), naming the
    folder; the next run with room (or rights) renders them and publishes."""
    sent = "nothing would be sent" if run.req.dry_run else "nothing was sent"
    where = (
        f"the temporary folder {tempfile.gettempdir()} (a dry run renders into a copy there)"
        if run.req.dry_run
        else f"the local publish cache {site}"
    )
    report = error.report
    what = [
        f"{plural(len(report.unwritten), 'html/ page')} could not be written"
        if report.unwritten
        else "",
        f"{plural(len(report.undeleted), 'html/ page')} of sessions no longer published could "
        "not be deleted"
        if report.undeleted
        else "",
        f"the search text of {plural(len(report.undeleted_search), 'session')} no longer "
        "published could not be deleted"
        if report.undeleted_search
        else "",
    ]
    stopped = PublishError(
        f"{error.reason}: {' and '.join(part for part in what if part)} in {where}; {sent} "
        f"(the dataset is as it was); {error.advice}",
        exit_code=2,
    )
    stopped.partial = run.result  # (what was redacted is still said)
    return stopped


#: What writing into a damaged cache folder fails with: something else in a name's place
#: (a link where its lock goes: ``site.SiteLinkInTheWay``).
_IN_THE_WAY = frozenset({errno.EEXIST, errno.EISDIR, errno.ENOTDIR, errno.ELOOP})


def _cache_folder(run: _Run, make: Callable[[], Path]) -> Path:
    """The cache folder ``make`` gives (made if needed), made again when a file is in its
    place (damaged): every run failed with "File exists" or "Not a directory" (exit 2)."""
    folder = make()
    if folder.is_dir() or not os.path.lexists(folder):
        return folder
    try:
        folder.unlink()
    except OSError:
        return folder  # (its first write says why)
    run.result.warnings.append(
        f"the local publish cache {folder} was a file, not a folder (damaged): replaced by "
        "an empty folder; what it kept is made or downloaded again"
    )
    return make()


def _scratch_copy(folder: Path, scratch: Path) -> Path:
    """``folder`` copied to ``scratch``; an empty ``scratch`` when there is none yet, or
    when another run is writing it (its temp files come and go under a copy)."""
    try:
        if folder.is_dir():
            shutil.copytree(folder, scratch, symlinks=True, ignore=shutil.ignore_patterns(".*.tmp"))
    except (OSError, shutil.Error):
        shutil.rmtree(scratch, ignore_errors=True)
    return scratch


@dataclass(frozen=True)
class _CardPlan:
    """What this run does with README.md: write a new card (``existing`` None), refresh
    the marked block of ``existing``, or leave the card as it is (``frozen``)."""

    frozen: bool = False
    existing: str | None = None


def _card_plan(run: _Run, ops: list[Op]) -> _CardPlan:
    """A card with the pi-session block has that block refreshed and the rest kept; one
    this tool wrote (or none) is written new; one the owner wrote before the first publish
    is kept with the block added at its end (it was replaced: their text lost); one without
    the block that someone edited on the Hub is left as it is, said once per version of it
    (how to opt back in too)."""
    readme, data = run.remote.files.get("README.md"), run.remote.card
    if readme is None:
        return _CardPlan()
    text = None
    if data is not None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    if text is not None and has_card_block(text):
        why = card_problem(text)
        if why is None:
            return _CardPlan(existing=text)
        run.notify(
            f"README.md: its pi-session block cannot be brought up to date ({why}): the card "
            "is kept as it is until that is fixed on the Hub"
        )
        return _CardPlan(frozen=True)
    if "manifest.json" not in run.remote.files:  # never published here: the owner's card
        if text is not None and not text.strip():
            return _CardPlan()  # an empty one: nothing of theirs to keep
        marked = f"{text.rstrip()}\n\n{CARD_BEGIN}\n{CARD_END}\n" if text is not None else ""
        why = card_problem(marked) if text is not None else "it could not be read as UTF-8 text"
        if why is not None:
            run.notify(
                f"README.md was there before the first publish and is kept as it is ({why}): "
                "no card is written until that is fixed on the Hub"
            )
            return _CardPlan(frozen=True)
        run.notify(
            "README.md was there before the first publish: kept, with the generated part "
            f"added at its end between a {CARD_BEGIN} and a {CARD_END} line (and the "
            "configs in its YAML), which later runs refresh"
        )
        return _CardPlan(existing=marked)
    if run.remote.card_oid in (None, readme.oid):  # ours, as written (an older layout)
        return _CardPlan()
    if _first_time_said(run, readme.oid):
        stale = "; its numbers and redaction section are not brought up to date" if ops else ""
        run.notify(
            f"README.md was edited on the Hub: kept as it is{stale}. To have publish keep "
            f"it current and your text too, put a line {CARD_BEGIN} and a line {CARD_END} in "
            "it where the generated part goes (the next run fills it), or delete README.md "
            "for a new card (said once)"
        )
    return _CardPlan(frozen=True)


def _first_time_said(run: _Run, oid: str) -> bool:
    """True the first time this edited card (this version of it) is met on this machine:
    a note repeated on every run is noise. A dry run says it and records nothing."""
    digest = hashlib.sha256(f"{run.repo.endpoint}|{run.req.repo_id}".encode()).hexdigest()[:16]
    note = user_cache_dir("publish-notes", digest) / "edited-card"
    try:
        if note.read_text(encoding="utf-8").strip() == oid:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    if not run.req.dry_run:
        with contextlib.suppress(OSError):  # not recorded: said again next time, no harm
            atomic_write_text(private_user_cache_dir("publish-notes", digest) / "edited-card", oid)
    return True


def _meta_renderer(run: _Run, card: _CardPlan, has_html: bool) -> RenderMeta:
    """How each planned commit renders the index, card and manifest of the state it
    reaches (a frozen card is left, and the manifest keeps its oid as it was)."""

    def render_meta(entries: dict[str, Any], rows: dict[str, Any]) -> dict[str, bytes]:
        meta = {"index.jsonl": render_index(rows.values())}
        card_oid = run.remote.card_oid
        if not card.frozen:
            data = render_card(
                run.req.repo_id, rows.values(), entries, run.req.policy, has_html=has_html,
                existing=card.existing,
            )  # fmt: skip
            meta["README.md"] = data
            if data != run.remote.card:  # an unchanged card changes no manifest either
                card_oid = git_oid(data)
        meta["manifest.json"] = render_manifest(entries, card_oid)
        return meta

    return render_meta


def _commit(run: _Run, commits: list[Commit], keep: dict[str, Prepared]) -> None:
    """The planned commits made; a failed one carries the result, so the CLI still reports
    what was redacted and which commits landed. ``keep``: the uploads to keep as the
    dataset's copies once they landed (of a dataset with a site whose build kept none)."""
    try:
        parent = run.remote.head
        if not run.remote.exists:  # private unless --public
            parent = _created_head(run)
        check = functools.partial(_check_private, run)
        run.result.commits = _commit_all(run.repo, commits, parent, run.notify, check)
        if keep:  # what it uploaded is the dataset's now: no download next run
            keep_copies(
                {path: (p.staged, p.oid) for path, p in keep.items() if p.staged},
                copies_cache_dir(run.repo.endpoint, run.req.repo_id),
            )
    except PublishError as error:
        error.partial = run.result
        raise


#: What the Hub puts in a dataset it creates: its first commit holds only this file.
CREATION_FILES = frozenset({".gitattributes"})


def _created_head(run: _Run) -> str | None:
    """The dataset created (one made meanwhile is fine) and its head, the parent of the
    first commit. This run planned against an empty dataset: a head holding more than what
    creation makes is another publisher's work (two first runs at once), which a commit on
    top of it would overwrite (its manifest, index and card, its sessions left listed
    nowhere), so the run stops there, nothing sent, as at any other concurrent commit."""
    run.repo.create(private=not run.req.public)
    state = run.repo.read_state()
    _refuse_public(run, state.private)  # created public meanwhile (by someone else)
    if not set(state.files) <= CREATION_FILES:
        raise PublishError(
            f"{run.req.repo_id} changed on the Hub while publishing (another publisher?): "
            "another run published to it since this one found it missing; none of this run's "
            "sessions was sent; re-run to publish on top of it"
        )
    run.result.created = True
    return state.head


def _check_private(run: _Run) -> None:
    """The dataset's privacy read again right before the first commit is sent: it was read
    before every session was redacted (minutes, for many), and made public since (by a
    teammate, on the Hub's settings page) it takes this run only with --public."""
    _refuse_public(run, run.repo.is_private())


def _refuse_public(run: _Run, private: bool) -> None:
    """Refused (nothing sent) when the dataset is public and --public was not given."""
    run.result.private = private
    if not private and not run.req.public:
        raise PublishError(
            f"{run.req.repo_id} is public on the Hub now (made or created public while this "
            "run redacted): what is published is visible to all; none of this run's sessions "
            "was sent; pass --public to publish to it",
            exit_code=1,
        )


def _commit_all(
    repo: HubRepo,
    commits: list[Commit],
    parent: str | None,
    notify: Notify,
    check: Callable[[], None] | None = None,
) -> list[str]:
    """Commit in a chain: each commit names the previous head as its parent. Returns the
    heads (appended as they land, so a failure leaves the ones that did in the list).
    ``check`` runs right before the first commit is sent."""
    heads: list[str] = []
    try:
        _commit_chain(repo, commits, parent, notify, heads, check)
    except PublishError as error:
        error.landed = len(heads)
        raise
    return heads


#: A commit of at most this many sessions names them in its title (more: the counts only).
TITLE_NAMES = 3


def _named_sessions(commit: Commit) -> str:
    """``": a, b"``: the files (as the dataset names them, without ``.jsonl``) a commit of a
    few sessions adds, updates or removes, for reading the dataset's history; "" for more."""
    names = [
        op.path.rsplit("/", 1)[-1].removesuffix(".jsonl")
        for op in commit.ops
        if op.is_session and op.action in ("add", "update", "remove")
    ]
    return f": {', '.join(sorted(names))}" if 0 < len(names) <= TITLE_NAMES else ""


def _commit_chain(
    repo: HubRepo,
    commits: list[Commit],
    parent: str | None,
    notify: Notify,
    heads: list[str],
    check: Callable[[], None] | None = None,
) -> None:
    for number, commit in enumerate(commits, start=1):
        notify(f"commit {number}/{len(commits)}: {plural(commit.files, 'file')}")
        n = {
            a: sum(op.action == a and op.is_session for op in commit.ops)
            for a in ("add", "update", "remove")
        }
        pages = sum(not op.is_session for op in commit.ops)
        if any(n.values()):
            what = f"{n['add']} added, {n['update']} updated, {n['remove']} removed"
        elif pages:  # the html/ part of a run: "0 added, 0 updated, 0 removed" said nothing
            what = f"html/ site ({plural(pages, 'file')})"
        else:
            what = "manifest and card"  # re-checked sessions under new settings
        title = f"pi-session publish: {what} ({number}/{len(commits)}){_named_sessions(commit)}"
        description = f"Published with pi-session-export {__version__}."
        first = check if number == 1 else None
        parent = repo.commit(commit, parent, title, description, before_send=first)
        heads.append(parent)
