"""A warning for pages made without redaction: how many credentials of a well-known format
they still hold (an AWS key id, a GitHub token, a private key...), so a page that is about
to be attached to an issue or mailed is not sent on with them unnoticed.

The full detectors read ~5 MB/s, too slow for every export (a 25 MB session would take 5 s
more). One pattern of the formats' fixed prefixes finds the candidates at ~200 MB/s, and
the real detectors judge only a window around each, so what is counted is exactly what
``--redact`` would replace (``AKIAIOSFODNN7EXAMPLE``, AWS's documentation key, too).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter

__all__ = ["likely_secret_values", "likely_secrets", "secrets_warning", "secrets_warning_line"]

# Fixed prefixes no prose or code has by chance, each with enough of its body to be a
# candidate. One pattern each: a pattern that starts with a literal is searched for as a
# string (~7 ms for 25 MB), an alternation of them is tried at every position (~0.9 s).
_CANDIDATE_PATTERNS = (
    r"AKIA[0-9A-Z]{16}",
    r"ASIA[0-9A-Z]{16}",
    r"gh[pousr]_[A-Za-z0-9]{30,}",
    r"github_pat_[A-Za-z0-9_]{30,}",
    r"gl(?:pat|dt|rt|ptt|cbt|ft|soat)-[\w-]{20,}",
    r"sk-[A-Za-z0-9_-]{20,}",
    r"_live_[A-Za-z0-9]{10,}",
    r"xox[abposre]-[\w-]{10,}",
    r"xapp-[\w-]{10,}",
    r"AIza[\w-]{35}",
    r"hf_[A-Za-z]{30,}",
    r"npm_[A-Za-z0-9]{36}",
    r"PRIVATE KEY-----",
)
_CANDIDATES = tuple(re.compile(p, re.ASCII) for p in _CANDIDATE_PATTERNS)
_CANDIDATES_BYTES = tuple(re.compile(p.encode("ascii")) for p in _CANDIDATE_PATTERNS)
#: How much text around a candidate the detectors read (a key block: what follows it).
_AROUND = 256
_KEY_BLOCK = 8192
#: Candidates judged at most (a file of 100,000 keys is said as "at least").
_MAX_JUDGED = 2_000


def likely_secrets(text: str | bytes) -> tuple[Counter[str], bool]:
    """Detector name -> how many distinct values ``text`` (or a file's UTF-8 bytes) holds
    in clear, and whether the count stopped early (more candidates than are judged)."""
    values, more = likely_secret_values(text)
    return Counter(values.values()), more


def likely_secret_values(text: str | bytes) -> tuple[dict[str, str], bool]:
    """The distinct values ``text`` holds in clear, each by its SHA-256 digest (so who
    keeps them, `watch`, can tell a new one from one said before without keeping it) ->
    the detector that found it; and whether the count stopped early."""
    patterns = _CANDIDATES_BYTES if isinstance(text, bytes) else _CANDIDATES
    spans = sorted(m.span() for p in patterns for m in p.finditer(text))  # type: ignore[arg-type]
    found: dict[str, str] = {}
    if not spans:
        return found, False
    from exporter.detectors import scan  # ~80 ms of imports: only when there is a candidate

    for start, end in spans[:_MAX_JUDGED]:
        key_block = text[start:end] in ("PRIVATE KEY-----", b"PRIVATE KEY-----")
        before = text[max(0, start - 24) : start]
        if key_block and ("END " in before if isinstance(before, str) else b"END " in before):
            continue  # a block's last line: counted at its BEGIN line
        low = max(0, start - _AROUND)
        window = text[low : min(len(text), end + (_KEY_BLOCK if key_block else _AROUND))]
        if isinstance(window, bytes):  # a character cut at the window's edge: replaced
            window = window.decode("utf-8", "replace")
            start, end = _offset(text, low, start), _offset(text, low, end)  # type: ignore[arg-type]
        else:
            start, end = start - low, end - low
        if key_block:  # the detectors find the block from its BEGIN line
            start = max(0, window.rfind("-----BEGIN", 0, start))
        for finding in scan(window):
            if finding.start < end and finding.end > start:
                value = window[finding.start : finding.end].encode("utf-8", "replace")
                found.setdefault(hashlib.sha256(value).hexdigest(), finding.detector)
                break
    return found, len(spans) > _MAX_JUDGED


def _offset(data: bytes, low: int, at: int) -> int:
    """Where byte ``at`` falls in ``data[low:]`` decoded (characters, not bytes)."""
    return len(data[low:at].decode("utf-8", "replace"))


def secrets_warning(text: str | bytes, how: str) -> str | None:
    """The warning line for ``text`` (None when it holds none), ending with ``how`` to
    make the page without them."""
    found, more = likely_secrets(text)
    return secrets_warning_line(found, more, how) if found else None


def secrets_warning_line(found: Counter[str], more: bool, how: str) -> str:
    """The warning line for what :func:`likely_secrets` found (``more``: it stopped
    counting), ending with ``how`` to make the page without them."""
    total = sum(found.values())
    kinds = ", ".join(name for name, _ in found.most_common(4))
    kinds += ", …" if len(found) > 4 else ""
    count = f"at least {total:,}" if more else f"{total:,}"
    noun = "credential" if total == 1 else "credentials"
    return f"the page holds {count} {noun} of a known format in clear ({kinds}); {how}"
