"""Publishing many sessions to one Hugging Face dataset repo (``pi-session publish``).

The remote half lives here: ``HubRepo`` wraps ``huggingface_hub.HfApi`` with the endpoint
passed explicitly (``HF_ENDPOINT`` is read only when huggingface_hub is imported), turns every
failure into a one-line ``PublishError`` (exit code 3) that never shows the token, and waits
out 429s as the ``RateLimit``/``Retry-After`` headers say. ``publish`` runs the whole job:
read the remote tree and manifest, redact what changed (``hub_plan``), chunk the changes
into self-consistent commits (``hub_commits``, which explains the interruption story) and
commit them in a chain (``parent_commit``), so a concurrent publisher is detected.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from exporter import __version__
from exporter.policy import RedactionPolicy
from exporter.publish.dataset_card import render_card, render_index, render_manifest
from exporter.publish.errors import (
    AuthError,
    NetworkError,
    NotFoundError,
    NoTokenError,
    PublishError,
    RateLimitError,
    ValidationError,
    bounded_wait,
    clean_token,
    scrubbed,
)
from exporter.publish.hub_commits import Commit, Op, html_ops, plan_commits, prune_ops, session_ops
from exporter.publish.hub_plan import (
    Prepared,
    RemoteFile,
    RemoteState,
    Source,
    build_html,
    claim_paths,
    classify,
    copies_cache_dir,
    git_oid,
    html_cache_dir,
    prepare_all,
    probe_sources,
    remote_copies,
)

__all__ = ["DEFAULT_ENDPOINT", "HubRepo", "PublishRequest", "PublishResult", "publish"]

DEFAULT_ENDPOINT = "https://huggingface.co"
MAX_RATE_WAIT = 300.0  # longer waits become a RateLimitError with the time to retry
RATE_RETRIES = 5
T = TypeVar("T")
Notify = Callable[[str], None]


def default_token() -> str | None:
    """huggingface_hub's own lookup: HF_TOKEN, then the token file of ``hf auth login``."""
    from huggingface_hub import get_token

    return get_token()


def _rate_wait(headers: Any, attempt: int) -> float:
    from huggingface_hub.utils import parse_ratelimit_headers

    info = parse_ratelimit_headers(headers)
    if info is not None and info.remaining == 0:
        wait = info.reset_in_seconds + 1.0
    else:
        value = (headers.get("retry-after") or "").strip()
        numeric = value.isascii() and value.isdigit()  # "²".isdigit() is True
        wait = float(value) if numeric else float(min(60, 2 ** (attempt + 1)))
    return bounded_wait(wait)


#: Seconds a Hub request may wait to connect, or between two reads or writes.
HUB_TIMEOUT = 60.0
_RETRY_NOTE = re.compile(r"(?:Retrying in|Waiting) (\d+(?:\.\d+)?)s.*\[Retry (\d+)/(\d+)\]")


class _HubLogLines(logging.Handler):
    """huggingface_hub's log as our own lines: a retry becomes one ``pi-session:`` line
    (it printed "HTTP Error 503 thrown while requesting POST <url>" and "Retrying in 8s
    [Retry 4/5]" for each try), errors pass as one line, other warnings are dropped."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.notify: Callable[[str], None] = lambda _: None

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        retry = _RETRY_NOTE.search(text)
        if retry:
            wait, number, most = retry.groups()
            self.notify(
                f"the Hub is busy or failed; retrying in {float(wait):g} s ({number}/{most})"
            )
        elif record.levelno >= logging.ERROR:
            self.notify(f"huggingface_hub: {' '.join(text.split())[:300]}")


_HUB_LOG = _HubLogLines()


def _route_hub_log(notify: Callable[[str], None]) -> None:
    """Send huggingface_hub's log through ``notify`` instead of its own stderr handler."""
    _HUB_LOG.notify = notify
    logger = logging.getLogger("huggingface_hub")
    for handler in list(logger.handlers):
        if handler is not _HUB_LOG:
            logger.removeHandler(handler)
    if _HUB_LOG not in logger.handlers:
        logger.addHandler(_HUB_LOG)
    logger.propagate = False


_timeout_limit = [HUB_TIMEOUT]


def _bounded_request(request: Any) -> None:
    """httpx request hook: huggingface_hub sends ``timeout=None`` (wait forever) on every
    call, so a server that takes the connection and never answers hung the publish."""
    given = request.extensions.get("timeout") or {}
    limit = _timeout_limit[0]
    request.extensions["timeout"] = {
        phase: limit if given.get(phase) is None else given[phase]
        for phase in ("connect", "read", "write", "pool")
    }


def _with_bounded_requests(client: Any) -> Any:
    hooks = client.event_hooks
    if _bounded_request not in hooks["request"]:
        client.event_hooks = {**hooks, "request": [*hooks["request"], _bounded_request]}
    return client


_factory_installed = [False]


def _bound_timeouts(limit: float) -> None:
    """:func:`_bounded_request` on every client huggingface_hub uses: the shared one now, and
    (through its client factory) the new one it makes after a connection error, which lost
    the limit when only the old client had it."""
    from huggingface_hub import get_session, set_client_factory

    _timeout_limit[0] = limit
    if not _factory_installed[0]:
        module = importlib.import_module("huggingface_hub.utils._http")
        base = getattr(module, "default_client_factory", None)  # not public: checked
        if callable(base):
            set_client_factory(lambda: _with_bounded_requests(base()))
            _factory_installed[0] = True
    _with_bounded_requests(get_session())


class HubRepo:
    """One dataset repo on one endpoint; every call goes through ``_call``."""

    def __init__(
        self,
        repo_id: str,
        *,
        endpoint: str = DEFAULT_ENDPOINT,
        token: str | None = None,
        notify: Callable[[str], None] = lambda _: None,
        max_wait: float = MAX_RATE_WAIT,
        timeout: float = HUB_TIMEOUT,
    ) -> None:
        from huggingface_hub import HfApi
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()  # our own progress output only
        _bound_timeouts(timeout)
        _route_hub_log(notify)
        self.repo_id, self.endpoint = repo_id, endpoint.rstrip("/")
        self.host = urlsplit(self.endpoint).netloc or self.endpoint
        self.notify, self.max_wait = notify, max_wait
        self._token = token  # only to hide it should a server echo it back
        self.api = HfApi(
            endpoint=self.endpoint,
            token=token or False,
            library_name="pi-session-export",
            library_version=__version__,
        )

    @property
    def url(self) -> str:
        return f"{self.endpoint}/datasets/{self.repo_id}"

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """Run ``fn``; on 429 wait as told (bounded) and retry; translate every failure."""
        from huggingface_hub.errors import HfHubHTTPError

        for attempt in range(RATE_RETRIES + 1):
            try:
                return fn()
            except HfHubHTTPError as error:
                response = getattr(error, "response", None)
                if response is None or response.status_code != 429:
                    raise scrubbed(self._translate(error, what), self._token) from None
                wait = _rate_wait(response.headers, attempt)
                if attempt == RATE_RETRIES or wait > self.max_wait:
                    retry_at = datetime.now().astimezone() + timedelta(seconds=wait)
                    raise RateLimitError(
                        f"rate limited by {self.host} while {what}: retry after "
                        f"{retry_at:%H:%M:%S} (in {wait:.0f} s); a re-run resumes",
                        wait_seconds=wait,
                        retry_at=retry_at,
                        status=429,
                    ) from None
                self.notify(f"rate limited by {self.host}; waiting {wait:.0f} s")
                time.sleep(wait)
            except Exception as error:
                raise scrubbed(self._translate(error, what), self._token) from None
        raise AssertionError("unreachable")

    def _translate(self, error: Exception, what: str) -> PublishError:
        """A one-line message per failure kind; never the token, never a traceback."""
        import httpx2
        from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

        if isinstance(error, PublishError):
            return error
        ns = self.repo_id.split("/", 1)[0] if "/" in self.repo_id else "your namespace"
        if isinstance(error, OfflineModeIsEnabled):
            return NetworkError("HF_HUB_OFFLINE is set: unset it to publish")
        if isinstance(error, HfHubHTTPError) and error.response is not None:
            status = error.response.status_code
            detail = " ".join((error.server_message or "").split())[:200]
            code = error.response.headers.get("x-error-code")
            if status == 401 and code != "RepoNotFound":
                return AuthError(
                    f"{self.host} rejected the token (invalid or expired): pass --token, "
                    "set HF_TOKEN or run `hf auth login`",
                    status=status,
                )
            if status == 403:
                return AuthError(
                    f"no write access to '{ns}' on {self.host}: the token needs the write role "
                    f"(or write access to {ns})" + (f" ({detail})" if detail else ""),
                    status=status,
                )
            if status in (401, 404):
                return NotFoundError(
                    f"dataset {self.repo_id} not found on {self.host} (or not visible to this "
                    "token)",
                    status=status,
                )
            if status in (409, 412) and what.startswith("commit"):
                return PublishError(
                    f"{self.repo_id} changed on the Hub while publishing (another publisher?): "
                    "re-run to publish on top of it",
                    status=status,
                )
            if status >= 500:
                return NetworkError(
                    f"{self.host} answered HTTP {status} while {what}: try again later; "
                    "a re-run resumes where this one stopped",
                    status=status,
                )
            return PublishError(f"{what} failed: HTTP {status} {detail}".strip(), status=status)
        if isinstance(error, ValueError) and "README.md" in str(error):
            return ValidationError(f"the Hub refused the dataset card: {str(error)[:300]}")
        name = type(error).__name__
        if isinstance(error, (httpx2.TransportError, OSError)):
            return NetworkError(
                f"cannot reach {self.host} while {what} ({name}): nothing is lost; "
                "a re-run resumes where this one stopped"
            )
        return PublishError(f"{what} failed: {name}: {error}")

    def create(self, *, private: bool) -> None:
        self._call(
            "creating the dataset",
            lambda: self.api.create_repo(
                self.repo_id, repo_type="dataset", private=private, exist_ok=True
            ),
        )

    def _download(self, name: str, revision: str) -> bytes:
        """One file at an exact commit, into a throw-away cache (a stale copy is never used)."""
        with tempfile.TemporaryDirectory(prefix="pi-session-hub-") as cache:
            path = self._call(
                f"reading {name}",
                lambda: self.api.hf_hub_download(
                    self.repo_id, name, repo_type="dataset", revision=revision, cache_dir=cache
                ),
            )
            return Path(path).read_bytes()

    def read_state(self) -> RemoteState:
        """Head commit, file tree, manifest and index rows; a missing repo is an empty state."""
        from huggingface_hub.hf_api import RepoFile

        try:
            info = self._call(
                "reading the dataset", lambda: self.api.repo_info(self.repo_id, repo_type="dataset")
            )
        except NotFoundError:
            return RemoteState()
        state = RemoteState(exists=True, head=info.sha, private=bool(info.private))
        if info.sha:
            tree = self._call(
                "listing files",
                lambda: list(
                    self.api.list_repo_tree(
                        self.repo_id, repo_type="dataset", recursive=True, revision=info.sha
                    )
                ),
            )
            for item in tree:
                if isinstance(item, RepoFile):
                    state.files[item.path] = RemoteFile(int(item.size or 0), str(item.blob_id))
            if "manifest.json" in state.files:
                state.load_manifest(self._download("manifest.json", info.sha))
            if "index.jsonl" in state.files:
                state.load_index(self._download("index.jsonl", info.sha))
        return state

    def commit(self, commit: Commit, parent: str | None, title: str, description: str) -> str:
        """One atomic commit on top of ``parent``; returns the new head."""
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        def attempt() -> Any:
            ops: list[Any] = []
            for op in commit.ops:
                if op.action == "remove":
                    ops.append(CommitOperationDelete(op.path))
                elif op.uploads:
                    ops.append(CommitOperationAdd(op.path, str(op.local)))
            ops += [CommitOperationAdd(name, data) for name, data in commit.metadata.items()]
            return self.api.create_commit(
                self.repo_id,
                ops,
                commit_message=title,
                commit_description=description,
                repo_type="dataset",
                parent_commit=parent,
            )

        return str(self._call("committing", attempt).oid)


# --- the whole job ----------------------------------------------------------------------------


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
    html: bool = False
    jobs: int = 1
    progress: bool | None = None
    want_records: bool = False


@dataclass
class PublishResult:
    url: str
    exists: bool = False
    created: bool = False
    private: bool = True
    ops: list[Op] = field(default_factory=list)
    unchanged: int = 0
    prepared: int = 0
    failed: list[tuple[Path, str]] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    planned_commits: int = 0
    sessions: int = 0
    redactions: dict[str, int] = field(default_factory=dict)
    actions: dict[str, int] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def count(self, action: str, sessions: bool = True) -> int:
        return sum(op.action == action and op.is_session == sessions for op in self.ops)


def _tally(result: PublishResult, prepared: list[Prepared]) -> None:
    result.prepared = len(prepared)
    result.failed += [(p.source.path, p.error) for p in prepared if p.error is not None]
    for item in prepared:
        for name, n in item.redactions.items():
            result.redactions[name] = result.redactions.get(name, 0) + n
        for name, n in item.actions.items():
            result.actions[name] = result.actions.get(name, 0) + n
        result.records += [{"session": item.source.repo_path, **r} for r in item.records]


def _open_remote(req: PublishRequest, repo: HubRepo, result: PublishResult) -> RemoteState:
    """Read the repo; create it (private unless ``--public``) when it is missing."""
    remote = repo.read_state()
    result.exists = remote.exists
    if not remote.exists and not req.dry_run:
        repo.create(private=not req.public)
        result.created = True
        remote = repo.read_state()
    result.private = remote.private if remote.exists else not req.public
    if remote.exists and not remote.private and not req.public:
        result.warnings.append(f"{req.repo_id} is public: what is published is visible to all")
    if result.exists and remote.private and req.public:
        result.warnings.append(f"{req.repo_id} exists and stays private (--public only creates)")
    result.warnings += remote.problems
    return remote


def _commit_all(
    repo: HubRepo, commits: list[Commit], parent: str | None, key: str, notify: Notify
) -> list[str]:
    """Commit in a chain: each commit names the previous head as its parent."""
    heads = []
    for number, commit in enumerate(commits, start=1):
        notify(f"commit {number}/{len(commits)}: {commit.files} files")
        n = {
            a: sum(op.action == a and op.is_session for op in commit.ops)
            for a in ("add", "update", "remove")
        }
        title = (
            f"pi-session publish: {n['add']} added, {n['update']} updated, "
            f"{n['remove']} removed ({number}/{len(commits)})"
        )
        description = f"Published with pi-session-export {__version__}; redaction key {key}."
        parent = repo.commit(commit, parent, title, description)
        heads.append(parent)
    return heads


def _published_elsewhere(
    remote: RemoteState, sources: list[Source], prune: bool, failed: set[Path]
) -> list[str]:
    """Sessions that stay on the Hub after this run without a readable file in it."""
    local = {source.repo_path for source in sources if source.path not in failed}
    named = {source.repo_path for source in sources} | {path.name for path in failed}

    def pruned(path: str) -> bool:  # as prune_ops: what the run does not name goes
        return prune and path not in named and path.rsplit("/", 1)[-1] not in named

    return sorted(  # from the tree, not the manifest (which may be unreadable)
        path
        for path in remote.files
        if path.startswith("sessions/")
        and path.endswith(".jsonl")
        and path not in local
        and not pruned(path)
    )


def publish(req: PublishRequest, notify: Notify = lambda _: None) -> PublishResult:
    """Probe, diff, redact, plan and (unless ``dry_run``) commit; see the module doc."""
    token = clean_token(req.token, "Hugging Face") or clean_token(default_token(), "Hugging Face")
    if not token and not req.dry_run:
        raise NoTokenError(
            "no Hugging Face token: pass --token, set HF_TOKEN or run `hf auth login`"
        )
    repo = HubRepo(req.repo_id, endpoint=req.endpoint, token=token, notify=notify)
    result = PublishResult(url=repo.url)
    if not token:
        result.warnings.append("no token: the dataset was read anonymously")
    sources, result.failed = probe_sources(req.files)
    remote = _open_remote(req, repo, result)
    sources = claim_paths(sources, remote)
    key = req.policy.key()
    policy = dataclasses.replace(req.policy, auth_tokens=(token,)) if token else req.policy
    unchanged, todo = classify(sources, remote, key)
    result.unchanged = len(unchanged)
    with tempfile.TemporaryDirectory(prefix="pi-session-publish-") as tmp:
        staging = Path(tmp) / "staged"
        prepared = prepare_all(
            todo, policy, staging, jobs=req.jobs, progress=req.progress,
            want_records=req.want_records,
        )  # fmt: skip
        _tally(result, prepared)
        ops = session_ops(prepared, remote, key)
        failed = {path for path, _ in result.failed}
        if req.prune:
            ops += prune_ops(remote, {s.repo_path for s in sources}, {p.name for p in failed})
        has_html = "html/index.html" in remote.files
        # html/ is the site of every session the dataset holds: this run's files, and the
        # published copies of the others (another project, another machine, deleted here).
        # A dataset with a site keeps it in step, or pages of pruned sessions, or of sessions
        # re-published with more redacted, would stay as they were.
        if req.html or has_html:
            copies_dir = (
                Path(tmp) / "copies"
                if req.dry_run
                else copies_cache_dir(repo.endpoint, req.repo_id)
            )
            outside = _published_elsewhere(remote, sources, req.prune, failed)
            copies, missing = remote_copies(
                outside,
                remote,
                copies_dir,
                lambda path: repo._download(path, remote.head or "main"),
            )
            if missing:  # a site without them would drop their pages
                result.warnings.append(
                    f"html/ was not rebuilt: {len(missing)} published session(s) could not be "
                    "downloaded for their pages; a re-run tries again"
                )
            else:
                if not req.html:
                    notify("the dataset has an html/ site: rebuilding it too")
                site = (
                    Path(tmp) / "site"
                    if req.dry_run
                    else html_cache_dir(repo.endpoint, req.repo_id)
                )
                files = [s.path for s in sources if s.path not in failed] + copies
                build_html(files, site, policy, key, jobs=req.jobs, progress=req.progress)
                ops += html_ops(site, remote, skip=lambda rel: rel.startswith("."))
                has_html = True

        readme = remote.files.get("README.md")
        card_edited = readme is not None and remote.card_oid not in (None, readme.oid)
        if card_edited:
            notify("README.md was edited on the Hub: kept as it is (delete it for a new card)")

        def render_meta(entries: dict[str, Any], rows: dict[str, Any]) -> dict[str, bytes]:
            meta = {"index.jsonl": render_index(rows.values())}
            card_oid = remote.card_oid
            if not card_edited:
                card = render_card(
                    req.repo_id, rows.values(), entries, req.policy, has_html=has_html
                )
                meta["README.md"], card_oid = card, git_oid(card)
            meta["manifest.json"] = render_manifest(entries, card_oid)
            return meta

        commits, final = plan_commits(ops, remote, render_meta)
        result.ops, result.planned_commits, result.sessions = ops, len(commits), len(final)
        if not req.dry_run:
            result.commits = _commit_all(repo, commits, remote.head, key, notify)
    return result
