"""One Hugging Face dataset repo on one endpoint: ``HubRepo`` wraps ``huggingface_hub.HfApi``
with the endpoint passed explicitly (``HF_ENDPOINT`` is read only when huggingface_hub is
imported), turns every failure into a one-line ``PublishError`` (exit code 3) that never
shows the token, and waits out 429s as the ``RateLimit``/``Retry-After`` headers say.
"""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

from exporter import __version__
from exporter.publish.errors import (
    AuthError,
    NetworkError,
    NotFoundError,
    PublishError,
    RateLimitError,
    ValidationError,
    clipped,
    host_for_messages,
    scrubbed,
    transport_reason,
)
from exporter.publish.hub_commits import Commit
from exporter.publish.hub_http import (
    HUB_TIMEOUT,
    HubCreateConflict,
    HubRateLimited,
    bound_timeouts,
    bounded_create_conflicts,
    forget_answers,
    last_answer,
    our_rate_limits,
    rate_wait,
    route_hub_log,
)
from exporter.publish.hub_state import RemoteFile, RemoteState, file_holds

__all__ = ["DEFAULT_ENDPOINT", "HubRepo", "TokenAccess", "default_token"]

DEFAULT_ENDPOINT = "https://huggingface.co"
MAX_RATE_WAIT = 300.0  # longer waits become a RateLimitError with the time to retry
RATE_RETRIES = 5
#: Seconds before each new try of a commit POST the Hub answered with a 5xx. Only that
#: request is tried again here: huggingface_hub does not retry it, while it retries every
#: other step of a commit itself (preupload, LFS uploads: 5 retries, 23 s of waits), so
#: each step has one retry layer and a commit that keeps failing stops within ~30 s.
SERVER_ERROR_WAITS = (2, 5)
_SERVER_ERRORS = (500, 502, 503, 504)
PREUPLOAD = "preparing the upload (preupload)"
LARGE_FILES = "uploading large files"
COMMITTING = "committing"
CARD_CHECK = "checking the dataset card"
#: The step of a commit a failed request belongs to, by its URL after the repo id.
_STAGES = (
    ("/preupload/", PREUPLOAD),
    ("/info/lfs/", LARGE_FILES),
    ("/xet-write-token/", LARGE_FILES),
    ("/commit/", COMMITTING),
    ("/validate-yaml", CARD_CHECK),
)
#: The steps of a commit huggingface_hub retries itself (``http_backoff``): not again here.
_RETRIED_BY_HUB = (PREUPLOAD, LARGE_FILES)
T = TypeVar("T")
Notify = Callable[[str], None]


def default_token() -> str | None:
    """huggingface_hub's own lookup: HF_TOKEN, then the token file of ``hf auth login``."""
    from huggingface_hub import get_token

    return get_token()


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class TokenAccess:
    """What ``whoami`` tells of a token: its role, whose it is and where that user may
    write. ``None`` is "not told": only what the Hub said rules a run out, since a wrong
    guess would refuse a run that works, and a run let through is still refused by the
    Hub at its first write."""

    role: str | None = None  # "read", "write" or "fineGrained"
    user: str | None = None
    orgs: dict[str, str | None] | None = None  # organisation (lower case) -> roleInOrg

    @classmethod
    def from_whoami(cls, answer: Any) -> TokenAccess:
        """Read leniently: a field of another shape counts as not told."""
        if not isinstance(answer, dict):
            return cls()
        auth = answer.get("auth")
        access = auth.get("accessToken") if isinstance(auth, dict) else None
        access = access if isinstance(access, dict) else {}
        orgs: dict[str, str | None] | None = None
        if isinstance(answer.get("orgs"), list):
            orgs = {}
            for org in answer["orgs"]:
                name = _text(org.get("name")) if isinstance(org, dict) else None
                if name is None:  # an entry we cannot read: membership is not told
                    orgs = None
                    break
                orgs[name.lower()] = _text(org.get("roleInOrg"))
        return cls(
            role=_text(access.get("role")),
            user=_text(answer.get("name")),
            orgs=orgs,
        )

    def refusal(self, repo_id: str) -> str | None:
        """Why this token cannot write to ``repo_id`` by the Hub's own answer (a read role
        aside, which says so itself); None when it may, or when that cannot be told."""
        ns = repo_id.split("/", 1)[0]
        if self.role == "write" and self.user is not None and self.orgs is not None:
            if ns.lower() == self.user.lower():
                return None
            if ns.lower() not in self.orgs:
                return (
                    f"the token is {self.user}'s, and '{ns}' is neither {self.user} nor an "
                    f"organization {self.user} belongs to"
                )
            if self.orgs[ns.lower()] == "read":
                return f"{self.user} has the read role in the organization '{ns}'"
        # (a fine-grained token is not judged here: its global permissions, such as write
        # to all of its user's repos, are not a list of names to look the namespace up in)
        return None

    def may_write(self, repo_id: str) -> bool:
        """Whether the Hub's answer confirms the token may write to ``repo_id``'s namespace
        (a write token of its user, or of an organization's member with the write or admin
        role: a contributor writes only to its own repositories there)."""
        if self.role != "write" or self.user is None or self.orgs is None:
            return False
        ns = repo_id.split("/", 1)[0].lower()
        return ns == self.user.lower() or self.orgs.get(ns) in ("write", "admin")


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
        bound_timeouts(timeout)
        route_hub_log(notify)
        self.repo_id, self.endpoint = repo_id, endpoint.rstrip("/")
        self.host = host_for_messages(self.endpoint)  # a user part may hold a token
        self.notify, self.max_wait = notify, max_wait
        self._token = token  # only to hide it should a server echo it back
        #: whoami confirmed the token may write here: a 403 is then the Hub's own limit
        #: (storage, a disabled dataset), said in its words, unless they are about access
        self.write_confirmed = False
        self.api = HfApi(
            endpoint=self.endpoint,
            token=token or False,
            library_name="pi-session-export",
            library_version=__version__,
        )

    @property
    def url(self) -> str:
        return f"{self.endpoint}/datasets/{self.repo_id}"

    @property
    def namespace(self) -> str:
        """The dataset's owner, as messages name it."""
        return self.repo_id.split("/", 1)[0] if "/" in self.repo_id else "your namespace"

    def _call(self, what: str | Callable[[], str], fn: Callable[[], T]) -> T:
        """Run ``fn``; on 429 wait as told (bounded) and retry; translate every failure.
        ``what`` (or what it returns once ``fn`` failed) names the step in messages.

        This is the only layer that retries a 429: inside it, huggingface_hub's client
        raises a 429 at once (``HubRateLimited``) instead of sleeping and retrying it
        itself, which multiplied our retries by its own (a preupload answered 429 was
        sent 36 times)."""
        from huggingface_hub.errors import HfHubHTTPError

        for attempt in range(RATE_RETRIES + 1):
            forget_answers()  # an answer to an earlier call tells nothing of this one
            try:
                with our_rate_limits():
                    return fn()
            except (HfHubHTTPError, HubRateLimited, RuntimeError) as error:
                step = what() if callable(what) else what
                response = _rate_limited(error)
                if response is None:
                    raise scrubbed(self._translate(error, step), self._token) from None
                wait = rate_wait(response.headers, attempt)
                if attempt == RATE_RETRIES or wait > self.max_wait:
                    retry_at = datetime.now().astimezone() + timedelta(seconds=wait)
                    tried = f" ({attempt + 1} tries)" if attempt else ""
                    raise RateLimitError(
                        f"rate limited by {self.host} while {step}{tried}: retry after "
                        f"{retry_at:%H:%M:%S} (in {wait:.0f} s); a re-run resumes",
                        wait_seconds=wait,
                        retry_at=retry_at,
                        status=429,
                    ) from None
                self.notify(f"rate limited by {self.host} while {step}; waiting {wait:.0f} s")
                time.sleep(wait)
            except Exception as error:
                step = what() if callable(what) else what
                raise scrubbed(self._translate(error, step), self._token) from None
        raise AssertionError("unreachable")

    def _translate(self, error: Exception, what: str) -> PublishError:
        """A one-line message per failure kind; never the token, never a traceback."""
        import httpx2
        from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

        if isinstance(error, PublishError):
            return error
        large_upload = _in_large_upload(error)
        unreadable = _is_unreadable_answer(error)
        error = _unwrapped(error)
        ns = self.namespace
        if isinstance(error, OfflineModeIsEnabled):
            return NetworkError("HF_HUB_OFFLINE is set: unset it to publish")
        if isinstance(error, HubCreateConflict):
            return NetworkError(
                f"{self.host} kept answering that another operation on '{ns}' is in progress "
                f"while {what} ({error.tries} tries over {error.waited:.0f} s): try again in a "
                "few minutes; nothing was sent"
            )
        if isinstance(error, HfHubHTTPError) and error.response is not None:
            response = error.response
            return self._http_failure(
                what,
                response.status_code,
                detail=clipped(_server_text(error), 200, self._token),
                code=response.headers.get("x-error-code"),
                request=_request_of(error),
                large_upload=large_upload,
            )
        if unreadable:  # huggingface_hub read the answer as JSON before checking its status
            return self._unreadable_failure(what, large_upload)
        if _in_xet_upload(error):
            return self._xet_failure(error)
        if isinstance(error, ValueError) and "README.md" in str(error):
            return ValidationError(
                f"the Hub refused the dataset card: {clipped(str(error), 300, self._token)}"
            )
        if isinstance(error, (httpx2.TransportError, OSError)):
            return NetworkError(
                f"cannot reach {self.host} while {what} ({transport_reason(error)}): nothing "
                "is lost; a re-run resumes where this one stopped"
            )
        return PublishError(f"{what} failed: {type(error).__name__}: {error}")

    def _http_failure(
        self,
        what: str,
        status: int,
        *,
        detail: str = "",
        code: str | None = None,
        request: tuple[str, str] | None = None,
        large_upload: bool = False,
    ) -> PublishError:
        """An HTTP error status in words. A large file's bytes go to a storage host (and
        are checked by a verify request) after the Hub took the token and the dataset: a
        4xx there is said as that step's failure, not as a token or a missing dataset."""
        ns = self.namespace
        method, url = request or ("", "")
        host = host_for_messages(url) if url and large_upload else self.host  # (its storage)
        said = f" ({detail})" if detail else ""
        if large_upload and 400 <= status < 500:
            part = "sending a file's bytes" if method == "PUT" else "checking an uploaded file"
            return PublishError(
                f"{host} answered HTTP {status} while {what} ({part}){said}: the large-file "
                f"upload failed, not the token or access to {self.repo_id}; a re-run uploads "
                "the large files again",
                status=status,
            )
        if status == 401 and code != "RepoNotFound":
            return AuthError(
                f"{self.host} rejected the token (invalid or expired): pass --token, "
                "set HF_TOKEN or run `hf auth login`",
                status=status,
            )
        if status == 403 and detail and self.write_confirmed and not _about_access(detail):
            return PublishError(
                f"{self.host} refused {what} (HTTP 403): {detail.rstrip('.')}; not the "
                f"token (whoami confirmed it may write to '{ns}'): once that is resolved, a "
                "re-run resumes where this one stopped",
                status=status,
            )
        if status == 403:
            return AuthError(
                f"no write access to '{ns}' on {self.host}{said}: the token needs the write "
                f"role (or write access to {ns})",
                status=status,
            )
        if status == 404 and code in _MISSING_IN_DATASET:
            # the dataset is there: a revision or a file in it is not (changed meanwhile)
            at = f"revision {_revision_in(url) or '(unnamed)'}"
            missing = at if code == "RevisionNotFound" else f"the file, at {at},"
            return PublishError(
                f"{self.host} answered that {missing} is not in {self.repo_id} while "
                f"{what}{said}: the dataset changed meanwhile (another publisher?); a re-run "
                "reads it again",
                status=status,
            )
        if status in (401, 404):
            return NotFoundError(
                f"dataset {self.repo_id} not found on {self.host} (or not visible to this token)",
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
                f"{host} answered HTTP {status} while {what}: try again later; "
                "a re-run resumes where this one stopped",
                status=status,
            )
        return PublishError(f"{what} failed: HTTP {status} {detail}".strip(), status=status)

    def _xet_failure(self, error: Exception) -> PublishError:
        """A failure inside hf_xet (a large file's bytes to the Xet storage): a bare
        ConnectionError or RuntimeError whose text names the address and any HTTP status;
        said as "cannot reach <the Hub> while committing" after minutes of hf_xet's retries."""
        text = str(error)
        url = re.search(r"(?:domain: |url \()(\w+://[^\s)]+)", text)
        host = host_for_messages(url.group(1)) if url else self.host
        status = re.search(r"\(([1-5]\d\d) [A-Z][a-z]", text)  # "(403 Forbidden)", not "(120 s)"
        if status is not None:
            code = int(status.group(1))
            kind = NetworkError if code >= 500 else PublishError
            return kind(
                f"{host} answered HTTP {code} while {LARGE_FILES} (Xet storage): the large-file "
                "upload failed; a re-run uploads the large files again",
                status=code,
            )
        reason = re.sub(r"\s*\(?\w+://[^\s)]*\)?", "", text.removeprefix("Network error: "))
        reason = clipped(reason, 160, self._token)
        return NetworkError(
            f"cannot reach {host} while {LARGE_FILES} (Xet storage: {reason}): nothing is "
            "lost; a re-run resumes where this one stopped"
        )

    def _unreadable_failure(self, what: str, large_upload: bool) -> PublishError:
        """An answer that is not JSON (an HTML error page from a proxy, an answer cut off):
        said by its status, which huggingface_hub had not checked yet. One with a success
        status has no status to retry on (``status`` None): for a commit, whether it landed
        is read from the dataset."""
        answer = last_answer()
        if answer is not None and answer.status >= 400:
            return self._http_failure(
                what,
                answer.status,
                request=(answer.method, answer.url),
                large_upload=large_upload,
            )
        host = host_for_messages(answer.url) if answer is not None else self.host
        status = f" (HTTP {answer.status})" if answer is not None else ""
        return NetworkError(
            f"{host} sent an answer that is not JSON{status} while {what} (cut off, or not "
            "from the Hub): try again later; a re-run resumes where this one stopped"
        )

    def token_access(self) -> TokenAccess:
        """What the Hub says the token may do (``whoami``): a token that may not write to
        the dataset is otherwise found out only at the first commit, after every session
        was redacted. Nothing known when it cannot be told; a rejected token is an
        ``AuthError`` here."""
        try:
            answer = self.api.whoami()
        except Exception as error:
            failure = self._translate(error, "checking the token")
            if isinstance(failure, AuthError) and failure.status == 401:
                raise scrubbed(failure, self._token) from None
            return TokenAccess()  # rate limited or unreachable: the work itself will tell
        access = TokenAccess.from_whoami(answer)
        self.write_confirmed = access.may_write(self.repo_id)
        return access

    def create(self, *, private: bool) -> None:
        """The dataset created (one that exists is fine). huggingface_hub sends a creation
        the Hub answers "another conflicting operation is in progress" again at once and
        forever: here it is tried a few times, with waits, then said."""

        def create() -> Any:
            with bounded_create_conflicts():
                return self.api.create_repo(
                    self.repo_id, repo_type="dataset", private=private, exist_ok=True
                )

        self._call("creating the dataset", create)

    def download(self, name: str, revision: str) -> bytes:
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
        try:
            info = self._call(
                "reading the dataset", lambda: self.api.repo_info(self.repo_id, repo_type="dataset")
            )
        except NotFoundError:
            return RemoteState()
        state = RemoteState(exists=True, head=info.sha, private=bool(info.private))
        if info.sha:
            state.files = self._files_at(info.sha)
            if "manifest.json" in state.files:
                state.load_manifest(self.download("manifest.json", info.sha))
            if "index.jsonl" in state.files:
                state.load_index(self.download("index.jsonl", info.sha))
            if "README.md" in state.files:  # its owner's text is kept around our block
                state.card = self.download("README.md", info.sha)
        return state

    def commit(
        self,
        commit: Commit,
        parent: str | None,
        title: str,
        description: str,
        *,
        before_send: Callable[[], None] | None = None,
    ) -> str:
        """One atomic commit on top of ``parent``; returns the new head. ``before_send`` is
        called first, before any byte of the commit leaves (a check that raises stops it:
        nothing is sent; a large file pre-uploaded to a dataset made public meanwhile sat in
        its storage).

        A failure names its step (the card's check, preupload, large files, the commit
        itself). Only a 5xx answer to the card's check (sent after the preupload, before the
        commit) or to the commit POST is tried again here, the latter only while the head is
        still ``parent``
        (then it did not land, and the same commit is safe to send again): preupload and
        large files were already retried by huggingface_hub, and repeating the whole commit
        around them multiplied its retries (18 tries over 77 s). A commit POST whose answer
        was lost (a dropped connection, one cut off) is looked for in the dataset."""
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        if before_send is not None:
            before_send()
        stage = [COMMITTING]

        def attempt() -> Any:
            ops: list[Any] = []
            for op in commit.ops:
                if op.action == "remove":
                    ops.append(CommitOperationDelete(op.path))
                elif op.uploads:
                    ops.append(CommitOperationAdd(op.path, str(op.local)))
            ops += [CommitOperationAdd(name, data) for name, data in commit.metadata.items()]
            adds = [op for op in ops if isinstance(op, CommitOperationAdd)]
            stage[0] = COMMITTING
            try:
                # pre-uploaded first (create_commit skips it then), to see what the Hub
                # would leave out (a .gitignore of the dataset's) before the commit is sent
                self.api.preupload_lfs_files(
                    self.repo_id, adds, repo_type="dataset", free_memory=False
                )
                self._refuse_ignored(adds)
                return self._readable(
                    lambda: self.api.create_commit(
                        self.repo_id,
                        ops,
                        commit_message=title,
                        commit_description=description,
                        repo_type="dataset",
                        parent_commit=parent,
                    )
                )
            except Exception as error:
                stage[0] = _stage_of(error, self.repo_id)
                refused = self._refused_objects(error, adds)
                if refused is not None:
                    stage[0] = LARGE_FILES
                    raise refused from None
                raise

        for wait in (*SERVER_ERROR_WAITS, None):  # None: the last try
            try:
                return str(self._call(lambda: stage[0], attempt).oid)
            except NetworkError as error:
                if stage[0] in _RETRIED_BY_HUB:
                    raise
                if stage[0] != COMMITTING:  # the card's check (after the preupload)
                    if wait is None or error.status not in _SERVER_ERRORS:
                        raise
                    self.notify(
                        f"{self.host} answered HTTP {error.status} while {stage[0]}; trying "
                        f"again in {wait} s"
                    )
                    time.sleep(wait)
                    continue
                if wait is None or error.status not in _SERVER_ERRORS:
                    # a lost answer (a dropped connection, a 5xx from a proxy, one cut off
                    # or not JSON) to a commit that landed: the dataset's head is this
                    # commit, and the run goes on
                    landed = self._landed(commit, parent)
                    if landed is None:
                        raise
                    return landed
                self.notify(f"{self.host} answered HTTP {error.status}; trying again in {wait} s")
                time.sleep(wait)
                head = self._head()
                if head is None:  # cannot tell whether it landed: not sent twice
                    raise
                if head != parent:
                    landed = self._landed(commit, parent, head)
                    if landed is not None:
                        return landed
                    raise NetworkError(
                        f"{self.host} answered HTTP {error.status} while committing, but the "
                        "dataset has a new head since: the commit most likely landed; a re-run "
                        "checks and publishes only what is missing",
                        status=error.status,
                    ) from None
        raise AssertionError("unreachable")

    def _readable(self, send: Callable[[], Any]) -> Any:
        """The commit's answer, or a ``NetworkError`` (no status) when it has a success
        status but not a commit's fields (a proxy's, a truncated one, a null commit id):
        huggingface_hub failed on it with a KeyError, or returned no commit id. Like an
        answer cut off, whether the commit landed is then read from the dataset."""
        try:
            info = send()
            oid = getattr(info, "oid", None)
            failure = None if isinstance(oid, str) and oid else "no commit id"
        except (KeyError, TypeError, AttributeError) as error:
            failure = f"{type(error).__name__}: {clipped(str(error), 80, self._token)}"
        if failure is None:
            return info
        raise NetworkError(
            f"{self.host} answered the commit with something that cannot be read ({failure}) "
            "while committing: try again later; a re-run resumes where this one stopped"
        )

    def _refused_objects(self, error: Exception, adds: list[Any]) -> PublishError | None:
        """The LFS batch answer refused some files one by one (an ``error`` per object):
        huggingface_hub says so as a ValueError naming them by SHA-256, each reason behind an
        unclosed backtick. Said here by path, with the Hub's reasons."""
        text = str(error)
        if not (isinstance(error, ValueError) and text.startswith(_LFS_OBJECT_ERRORS)):
            return None
        paths = {}
        for op in adds:
            with contextlib.suppress(AttributeError):
                paths[op.upload_info.sha256.hex()] = op.path_in_repo
        refused: dict[str, list[str]] = {}  # the Hub's reason -> paths
        for oid, reason in re.findall(r"file with OID (\S+): `(.*)", text):
            refused.setdefault(reason.strip() or "no reason given", []).append(paths.get(oid, oid))
        said = "; ".join(
            f"{_listed(names)}: {clipped(reason, 200, self._token)}"
            for reason, names in refused.items()
        )
        count = sum(map(len, refused.values()))
        return PublishError(
            f"{self.host} refused {count} large file(s) while {LARGE_FILES} ({said}); nothing "
            "was committed; a re-run tries them again"
        )

    def _refuse_ignored(self, adds: list[Any]) -> None:
        """The Hub marks a file a ``.gitignore`` in the dataset matches ``shouldIgnore``, and
        huggingface_hub then leaves it out of the commit without a word: the run would say
        it added sessions the dataset does not hold (and add them again every run)."""
        ignored = sorted(op.path_in_repo for op in adds if getattr(op, "_should_ignore", False))
        if not ignored:
            return
        shown = _listed(ignored)
        raise PublishError(
            f"the .gitignore in {self.repo_id} matches {len(ignored)} of the files this run "
            f"publishes ({shown}): the Hub would leave them out of the commit; edit or delete "
            f"the dataset's .gitignore ({self.url}/blob/main/.gitignore), then re-run; "
            "nothing was committed"
        )

    def is_private(self) -> bool:
        """Whether the dataset is private now (read again: it may have changed since). A
        5xx or a dropped connection is tried again, as the commit it comes before would be:
        this one read ended runs that went through before it was made."""
        for wait in (*SERVER_ERROR_WAITS, None):  # None: the last try
            try:
                info = self._call(
                    "reading the dataset",
                    lambda: self.api.repo_info(self.repo_id, repo_type="dataset"),
                )
                return bool(info.private)
            except NetworkError as error:
                if wait is None or error.status not in (None, *_SERVER_ERRORS):
                    raise
                said = f"HTTP {error.status}" if error.status else "no answer"
                self.notify(
                    f"{self.host}: {said} while reading the dataset; trying again in {wait} s"
                )
                time.sleep(wait)
        raise AssertionError("unreachable")

    def _landed(self, commit: Commit, parent: str | None, head: str | None = None) -> str | None:
        """The dataset's head, when it is ``commit`` on top of ``parent`` (its answer was
        lost): the head moved, and its tree holds what the commit wrote, without what it
        removed. None when that cannot be told (the head unread, another commit there)."""
        head = head or self._head()
        if head is None or head == parent:
            return None
        try:
            files = self._files_at(head)
        except PublishError:
            return None
        for op in commit.ops:
            if op.action == "remove" and op.path in files:
                return None
            if op.uploads and (
                op.local is None or not file_holds(files, op.path, op.local.read_bytes())
            ):
                return None
        if not all(file_holds(files, name, data) for name, data in commit.metadata.items()):
            return None
        self.notify(f"{self.host} did not confirm a commit, but the dataset holds it; going on")
        return head

    def _files_at(self, revision: str) -> dict[str, RemoteFile]:
        """The dataset's files at ``revision``: path -> size, git blob id and, for a file
        stored with LFS, the SHA-256 of its bytes (its git id is its pointer file's)."""
        from huggingface_hub.hf_api import RepoFile

        tree = self._call(
            "listing files",
            lambda: list(
                self.api.list_repo_tree(
                    self.repo_id, repo_type="dataset", recursive=True, revision=revision
                )
            ),
        )
        return {
            item.path: RemoteFile(int(item.size or 0), str(item.blob_id), _lfs_sha256(item))
            for item in tree
            if isinstance(item, RepoFile)
        }

    def _head(self) -> str | None:
        """The dataset's head commit now (None when it cannot be read)."""
        try:
            info = self._call(
                "reading the dataset", lambda: self.api.repo_info(self.repo_id, repo_type="dataset")
            )
        except PublishError:
            return None
        return str(info.sha) if info.sha else None


def _lfs_sha256(item: Any) -> str | None:
    """The SHA-256 of a listed file stored with LFS (huggingface_hub's ``BlobLfsInfo``,
    from the listing's ``lfs.oid``), None for a regular file."""
    lfs = getattr(item, "lfs", None)
    digest = getattr(lfs, "sha256", None) if lfs is not None else None
    if digest is None and isinstance(lfs, dict):
        digest = lfs.get("sha256")
    return str(digest) if digest else None


def _causes(error: BaseException) -> Iterator[BaseException]:
    """The error and what caused it (huggingface_hub wraps a failed LFS upload in a
    ``RuntimeError`` "Error while uploading ..." raised from the real one)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _unwrapped(error: Exception) -> Exception:
    """What failed inside huggingface_hub's ``RuntimeError("Error while uploading ...")``
    (a large file's upload), or behind its ``LocalEntryNotFoundError`` (a download whose
    HEAD failed): its HTTP error or network failure, which the message names (it said
    "uploading files failed: RuntimeError: ..." for an HTTP 500, and "cannot reach" for a
    download the Hub answered with HTTP 500)."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    known = (HfHubHTTPError, httpx2.TransportError)
    if isinstance(error, LocalEntryNotFoundError):
        cause = error.__cause__
        return cause if isinstance(cause, known) else error
    if not _is_large_upload(error):  # (another RuntimeError is said as it is)
        return error
    known = (HfHubHTTPError, httpx2.TransportError, OSError)
    cause = next((c for c in _causes(error) if isinstance(c, known)), None)
    return cause if isinstance(cause, Exception) else error


#: The Hub's X-Error-Code of a 404 that is about a part of an existing dataset.
_MISSING_IN_DATASET = ("RevisionNotFound", "EntryNotFound")


def _revision_in(url: str) -> str:
    """The revision a Hub address names (``.../tree/<rev>/...``, ``.../resolve/<rev>/...``)."""
    found = re.search(r"/(?:tree|resolve|revision)/([^/?]+)", url)
    return unquote(found.group(1)) if found else ""


#: How huggingface_hub starts the ValueError for an LFS batch answer with per-object errors.
_LFS_OBJECT_ERRORS = "LFS batch API returned errors"
#: Words of a 403's text that say it is about the token or access (then the token is
#: blamed); any other text (storage, quota, a disabled dataset) is the Hub's own limit.
_ACCESS_WORDS = re.compile(
    r"\b(?:permission|rights|forbidden|not allowed|unauthori[sz]|authori[sz]|authenticat"
    r"|token|write access|read access|role|restricted|gated|log in)",
    re.IGNORECASE,
)  # (whole words' starts: "gated" is in "investigated", "rights" in "copyrights")


def _listed(names: list[str], shown: int = 3) -> str:
    """``a, b, c and 2 more``: a few paths of a long list, in order."""
    names = sorted(names)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _about_access(text: str) -> bool:
    return _ACCESS_WORDS.search(text) is not None


def _server_text(error: Any) -> str:
    """What the Hub said of a failure: huggingface_hub's reading of its answer, else the
    ``message`` of a git-lfs error body (the LFS batch endpoint's: huggingface_hub reads
    only ``error``)."""
    if error.server_message:
        return str(error.server_message)
    with contextlib.suppress(Exception):
        body = error.response.json()
        if isinstance(body, dict) and isinstance(body.get("message"), str):
            return body["message"]
    return ""


def _rate_limited(error: BaseException) -> Any:
    """The 429 answer behind ``error``, or None when it is another failure."""
    for cause in _causes(error):
        response = getattr(cause, "response", None)
        if isinstance(cause, HubRateLimited) or (
            response is not None and getattr(response, "status_code", None) == 429
        ):
            return response
    return None


def _stage_of(error: BaseException, repo_id: str) -> str:
    """Which step of a commit the request that failed belongs to, by its URL (the part
    after the repo id, which may itself hold "commit"). A request to none of the Hub's
    commit steps is a large file's upload (to the address the LFS batch answer gave: on
    the Hub, a storage host), as is any failure inside huggingface_hub's upload of one."""
    path = next(filter(None, map(_request_path, _causes(error))), "")
    if not path and _is_unreadable_answer(error) and not _in_large_upload(error):
        answer = last_answer()  # (a JSONDecodeError names no request)
        path = answer.url if answer is not None else ""
    if path:
        rest = path.split(f"/{repo_id}", 1)[-1]
        for part, stage in _STAGES:
            if part in rest:
                return stage
        return LARGE_FILES
    if _in_large_upload(error) or _in_xet_upload(error):
        return LARGE_FILES
    return COMMITTING


def _request(error: BaseException) -> Any:
    """The request ``error`` failed on, None if it names none."""
    response = getattr(error, "response", None)
    with contextlib.suppress(AttributeError, RuntimeError):  # httpx: RuntimeError for none
        return response.request if response is not None else error.request  # type: ignore[attr-defined]
    return None


def _request_path(error: BaseException) -> str:
    """The address (without its query) of the request ``error`` failed on; "" if none."""
    return str(getattr(_request(error), "url", "") or "").split("?", 1)[0]


def _request_of(error: BaseException) -> tuple[str, str] | None:
    """The method and address (without its query) of the request ``error`` failed on."""
    request = _request(error)
    if request is None:
        return None
    return str(getattr(request, "method", "") or ""), _request_path(error)


def _is_unreadable_answer(error: BaseException) -> bool:
    """huggingface_hub failed to read an answer as JSON: it names no request."""
    return any(isinstance(c, (json.JSONDecodeError, UnicodeDecodeError)) for c in _causes(error))


def _in_large_upload(error: BaseException) -> bool:
    """Whether ``error`` comes from inside huggingface_hub's upload of a large file."""
    return any(_is_large_upload(cause) for cause in _causes(error))


def _in_xet_upload(error: BaseException) -> bool:
    """Whether ``error`` was raised inside huggingface_hub's upload of files to Xet storage
    (hf_xet's errors are bare ConnectionError/RuntimeError: only where they come from
    tells them apart)."""
    for cause in _causes(error):
        frame = cause.__traceback__
        while frame is not None:
            if frame.tb_frame.f_code.co_name == "_upload_xet_files":
                return True
            frame = frame.tb_next
    return False


def _is_large_upload(error: BaseException) -> bool:
    """huggingface_hub's wrapper of a failed LFS upload (``_commit_api._upload_lfs_files``)."""
    return type(error) is RuntimeError and str(error).startswith("Error while uploading ")


# --- the whole job ----------------------------------------------------------------------------
