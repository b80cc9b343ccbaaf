"""Named secret detectors: where in a string a secret sits, never what to do about it.

Every pattern is linear: bounded quantifiers over disjoint classes, a literal first so the
regex engine can skip ahead, and context checks (word boundary, placeholder, "looks random")
done in Python on the rare matches. `Scanner.find` runs them all plus exact literal secrets
and returns merged, non-overlapping spans; `redact.py` turns spans into placeholders.
Token formats live here; detectors that judge a value by the name or flag before it live in
`context_detectors`, the shared base in `detector_base`.
"""

from __future__ import annotations

import base64
import bisect
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from exporter import base64_text
from exporter.context_detectors import (
    AssignmentDetector,
    CommandLineDetector,
    NameValueDetector,
    NetrcDetector,
    SensitiveOutputDetector,
)
from exporter.decoded_view import DecodedView, decoded_view, replaced_view
from exporter.detector_base import Detector, Finding, Span, wrapped_base64_end
from exporter.placement_detectors import (
    CodeFormDetector,
    CommandArgumentDetector,
    DockerConfigDetector,
    EnvDefaultDetector,
    ExpectSendDetector,
    PgpassDetector,
    ProsePasswordDetector,
    PuttyKeyDetector,
    RedisPasswordDetector,
    SignedUrlDetector,
    TableRowDetector,
)
from exporter.secret_heuristics import (
    DIGIT,
    LOWER,
    UPPER,
    WORDLIKE,
    is_documented_example,
    is_dummy,
    is_placeholder,
    is_secret_assignment,
    looks_random,
    not_dummy,
)
from exporter.service_tokens import LONG_SERVICE_TOKENS, SHORT_SERVICE_TOKENS
from exporter.wrapped_tokens import WrappedTokenDetector

__all__ = [
    "DETECTORS",
    "DETECTOR_NAMES",
    "DETECTOR_VERSION",
    "Detector",
    "Finding",
    "Scanner",
    "scan",
]

# Bump whenever a pattern or heuristic changes: publishing keys its cache on it.
DETECTOR_VERSION = "2026.12-48"

_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_ESCAPE = re.compile(r"\\(?:[nrtfb]|u[0-9A-Fa-f]{4})\Z")
_ANSI_END = re.compile(r"\x1b\[[0-9;]{0,12}m\Z")


_HEX = frozenset("0123456789abcdefABCDEF")


def _after_url_escape(text: str, start: int) -> bool:
    """``%3D`` just before ``start`` (``access_token%3Dghp_…``), also doubly encoded
    (``%253D``: the ``%`` itself escaped)."""
    if start < 3 or not _HEX.issuperset(text[start - 2 : start]):
        return False
    return text[start - 3] == "%" or (start >= 5 and text[start - 5 : start - 2] == "%25")


def _at_boundary(text: str, start: int) -> bool:
    """True when no word character glues onto ``start``: a JSON escape like ``\\n``, a URL
    escape like ``%3D`` (``access_token%3Dghp_…``) or a terminal colour code like ``ESC[32m``
    (coloured tool output) is a gap."""
    if start == 0 or text[start - 1] not in _WORD:
        return True
    if _after_url_escape(text, start):
        return True
    if _ESCAPE.search(text, max(0, start - 6), start) is not None:
        return True
    return text[start - 1] == "m" and _ANSI_END.search(text, max(0, start - 16), start) is not None


class RegexDetector(Detector):
    """A token format that starts with a fixed literal (fast search) checked in Python.

    With ``edges`` the match must not be glued to word characters on either side, so a
    random base64 blob that happens to contain ``sk-`` or ``AKIA`` is not a key.
    """

    by_shape = True

    def __init__(
        self,
        name: str,
        summary: str,
        pattern: str,
        triggers: tuple[str, ...],
        check: Callable[[str], bool] = not_dummy,
        group: int = 0,
        edges: bool = True,
        min_length: int = 8,
    ) -> None:
        self.name, self.summary, self.triggers = name, summary, triggers
        self.min_length = min_length
        self._re, self._check, self._group, self._edges = re.compile(pattern), check, group, edges

    def find(self, text: str, lower: str) -> Iterator[Span]:
        size = len(text)
        for match in self._re.finditer(text):
            if self._edges:
                after, start = match.end(), match.start()
                # a long prefix with its own separator (ghp_, glpat-, sk-ant-) does not start
                # by chance inside a name: "app-ghp_…", "GH_TOKEN_ghp_…" or "ghp_…_old" is
                # still the token
                distinct = text.startswith(_JOINABLE, start)
                # `_hf_…_`: Markdown's emphasis around a token (the page shows it in italics)
                emphasis = start > 0 and text[start - 1] == "_" and _at_boundary(text, start - 1)
                glued = after < size and text[after] in _WORD
                if glued and distinct and text[after] in "-_":
                    glued = False
                elif glued and emphasis and text[after] == "_":
                    glued = after + 1 < size and text[after + 1] in _WORD  # not where it closes
                joined = (distinct and start > 0 and text[start - 1] in "-_") or emphasis
                if glued or not (joined or _at_boundary(text, start)):
                    continue
            start, end = match.span(self._group)
            if self._check(text[start:end]) and not is_documented_example(text[start:end]):
                yield start, end


# The first line of a PEM/OpenSSH/PGP private key (also looked for inside base64 blocks)
_BEGIN_PRIVATE = r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"


#: What `cat -n`, `grep -n` or a numbered read puts before a line: blanks, its number.
_NUMBERED = r"[ \t]*(?:[0-9]{1,6}[ \t:|]+)?"


class PrivateKeyDetector(Detector):
    """PEM/OpenSSH/PGP private key blocks, BEGIN to END; a truncated block to its last byte.

    One forward cursor for END markers keeps this linear however many BEGINs there are.
    """

    by_shape = True
    name, summary = "private-key", "-----BEGIN ... PRIVATE KEY----- blocks"
    triggers = ("-----BEGIN ", "-----END ")
    _begin = re.compile(_BEGIN_PRIVATE)
    _end = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
    _body = re.compile(r"[A-Za-z0-9+/=:,\-\s\\]{0,100000}")
    # a line break, real or JSON-escaped, then a full line of key data
    # (after up to four other lines: armor headers, a blank line, a note)
    _next_line = re.compile(
        r"(?:[^\r\n\\]{0,200}(?:\r?\n|\\(?:r\\)?n)){1,4}?"
        + _NUMBERED
        + r"(?:>[ \t]?){0,4}"  # (quoted: `> `)
        # a full line of key data, not hex (a hash a later command printed)
        + r"(?=[A-Za-z0-9+/]{0,76}[g-zG-Z+/])[A-Za-z0-9+/]{60,76}={0,2}[ \t]*(?:\r?\n|\\[rn\"]|\Z)"
    )
    # a line of key data, as `tail`, `cat -n` or a read with an offset prints it: full width
    # but for the last
    _line_number = re.compile(_NUMBERED)
    _quote = re.compile(r"(?:>[ \t]?){1,4}")
    # a quoted line of key data: full width, or the last line, shorter (with a digit or a
    # `+`, `/`, `=`, as base64's tail has: not a word like `Alice`)
    _quoted_data = re.compile(
        r"(?:[A-Za-z0-9+/]{40,100}={0,2}"
        r"|(?P<last>(?=[A-Za-z0-9+/=]{0,100}[0-9+/=])[A-Za-z0-9+/]{1,100}={0,2}))[ \t]*\r?(?=\n|\Z)"
    )
    # a key file's lines in a diff (`+`, `-`) or quoted in a mail or Markdown (`> `)
    _marker = re.compile(r"[ \t]{0,8}(?:[+\-]|(?:>[ \t]?){1,4})")
    # (digits and both cases, as random base64 has: not a `====` rule, a hash or a word)
    _data_line = re.compile(
        _NUMBERED + r"(?=[^ \t]*[0-9])(?=[^ \t]*[A-Z])(?=[^ \t]*[a-z])"
        r"[A-Za-z0-9+/]{40,100}={0,2}[ \t]*\r?"
    )
    _last_data_line = re.compile(_NUMBERED + r"[A-Za-z0-9+/]{2,100}={0,2}[ \t]*\r?")

    def find(self, text: str, lower: str) -> Iterator[Span]:
        done = 0
        end: re.Match[str] | None = None
        ends_left = "-----BEGIN " in text
        for begin in self._begin.finditer(text):
            if begin.start() < done:
                continue
            if ends_left and (end is None or end.start() < begin.end()):
                end = self._end.search(text, begin.end())
                ends_left = end is not None
            # A cut-off block (no END anywhere after it) is taken up to its last key byte.
            done = end.end() if ends_left and end else self._cut_off_end(text, begin.end())
            yield begin.start(), done
        for end in self._end.finditer(text, done):
            # its BEGIN is not in the text: output that shows only a key's last lines
            start = self._data_start(text, end.start())
            if start < end.start():
                yield start, end.end()

    def _cut_off_end(self, text: str, at: int) -> int:
        """The last key byte of a block with no END: key data goes on past a PGP armor
        header (`Version: GnuPG v2 (GNU/Linux)`) or a tool's note on a line of its own."""
        end = self._body_end(text, at)
        for _ in range(16):
            more = self._next_line.match(text, end)
            if more is None:
                break
            end = self._body_end(text, more.end())
        return end

    def _body_end(self, text: str, at: int) -> int:
        """Where the key data from ``at`` ends, going on over the ``> `` that quotes each
        of its lines (a key pasted into a mail or a Markdown quote); 1,000 lines at most.
        A quoted line is taken only when it is key data: full width, or a shorter last
        line; a blank quoted line or quoted prose (the reply under the key) ends it."""
        end = cursor = self._body.match(text, at).end()
        for _ in range(1000):
            quote = self._quote.match(text, cursor)
            if quote is None:
                break
            line_start = text.rfind("\n", max(0, cursor - 16), cursor)
            if line_start < 0 or text[line_start + 1 : cursor].strip(" \t"):
                break  # a `>` inside a line, not the quote that starts it
            line = self._quoted_data.match(text, quote.end())
            if line is None:
                break
            end = line.end()
            if line["last"] is not None or not text.startswith("\n", end):
                break
            cursor = end + 1
        return end

    def _data_start(self, text: str, at: int) -> int:
        """Where the run of key-data lines before the END line at ``at`` starts (``at`` when
        there is none); 200 lines back at most. Lines end in a line break, or in a JSON
        string's ``\\n`` (a service account's ``private_key`` shown from its middle)."""
        escaped = text.endswith("\\n", 0, at)
        sep = "\\n" if escaped else "\n"
        start = at if escaped else text.rfind("\n", max(0, at - 16), at) + 1
        marker = ""  # a diff's `+`/`-` or a quote's `> ` that every line of the key has
        if not escaped:
            if start == 0 and at > 16:
                return at
            if not self._line_number.fullmatch(text, start, at):
                if not self._marker.fullmatch(text, start, at):
                    return at  # the END line holds more than a line number before the marker
                marker = text[start:at]
        found, line, full = at, self._last_data_line, False
        for _ in range(200):
            end = start - len(sep)
            if end < 0 or not text.startswith(sep, end):
                break
            line_start = text.rfind(sep, max(0, end - 120), end)
            line_start = line_start + len(sep) if line_start >= 0 else max(0, end - 120)
            if (line_start == 0 and end > 120) or not text.startswith(marker, line_start):
                break
            data = line_start + len(marker)
            if not line.fullmatch(text, data, end):
                break
            if text.count("/", data, end) > 6:
                break  # a path, not 64 characters of base64 (which holds about one "/")
            full = full or self._data_line.fullmatch(text, data, end) is not None
            found, start = data, line_start
            line = self._data_line
        return found if full else at  # (one short line before an END is too little to say)


class Base64PrivateKeyDetector(Detector):
    """A PEM private key stored base64-encoded, as kubeconfig ``client-key-data`` and
    Kubernetes Secrets hold it: ``LS0tLS1CRUdJTi`` is ``-----BEGIN`` in base64. Only blocks
    whose decoded first line names a private key count (certificates are public)."""

    by_shape = True
    name, summary = "private-key-base64", "base64-encoded PEM private keys (kubeconfig, k8s)"
    triggers = ("LS0tLS1CRUdJTi",)
    _block = re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,200000}={0,2}")
    _private = re.compile(_BEGIN_PRIVATE.encode("ascii"))

    def find(self, text: str, lower: str) -> Iterator[Span]:
        covered = 0  # a block's wrapped lines are not searched again (linear on many lines)
        for match in self._block.finditer(text):
            if match.start() < covered:
                continue
            head = match.group()[:96]
            try:
                decoded = base64.b64decode(head[: len(head) // 4 * 4])
            except ValueError:  # binascii.Error is one
                continue
            if self._private.match(decoded):
                covered = wrapped_base64_end(text, match.end(), match.start())
                yield match.start(), covered


class AwsSecretDetector(Detector):
    """AWS secret access keys: after a ``secret_access_key`` name, or near an ``AKIA`` id.

    The 40-character candidate must mix upper, lower and digits, so git SHAs never match.
    One pass for candidates; an id is "near" within 300 characters (bisect over id offsets).
    """

    name, summary = "aws-secret-key", "40-char AWS secret keys named or next to an AKIA id"
    triggers = ("AKIA", "ASIA", "ABIA", "ACCA")
    lower_triggers = ("secret",)
    # `secret_access_key = X`, `aws configure set aws_secret_access_key X`, the prompt of
    # `aws configure` (`AWS Secret Access Key [None]: X`) and "my secret access key is X"
    _named = re.compile(
        r"secret[_ ]?(?:access[_ ]?)?key(?:\\{0,3}[\"'])?(?:[ \t]{0,4}\[[^\]\n]{0,40}\])?"
        r"(?:[ \t]{0,4}[:=][ \t]{0,4}|[ \t]{1,4}(?:is[ \t]{1,4})?)(?:\\{0,3}[\"'])?"
        r"([a-z0-9/+]{40})(?![a-z0-9/+=])"
    )
    _ids = re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}")
    _candidate = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
    window = 300

    @staticmethod
    def _ok(value: str) -> bool:
        return bool(LOWER.search(value) and UPPER.search(value) and DIGIT.search(value))

    def find(self, text: str, lower: str) -> Iterator[Span]:
        if "secret" in lower:
            for match in self._named.finditer(lower):
                value = text[match.start(1) : match.end(1)]
                if self._ok(value) and not is_documented_example(value):
                    yield match.span(1)
        ids = [match.start() for match in self._ids.finditer(text)]
        if not ids:
            return
        for match in self._candidate.finditer(text):
            if is_documented_example(match.group()):
                continue
            nearest = bisect.bisect_left(ids, match.start() - self.window - 20)
            near = nearest < len(ids) and ids[nearest] <= match.end() + self.window
            if near and self._ok(match.group()):
                yield match.span()


_CAMEL_WORDS = re.compile(r"[a-z]*(?:[A-Z][a-z]+)+")  # YourApiKey, apiKeyFromEnv


def _hf_shape(token: str) -> bool:
    """A Hugging Face token (``hf_`` and 34 letters), not a name in code that starts with
    ``hf_`` (Objective-C's ``hf_requiredCharacteristicTypesForDisplayMetadata``)."""
    body = token[3:]
    return looks_random(token) and (len(body) == 34 or not _CAMEL_WORDS.fullmatch(body))


# request signing schemes named in an Authorization header (AWS SigV4, GCS, Alibaba OSS)
_SIGNING_SCHEME = re.compile(r"[a-z0-9]{2,8}-hmac-sha[0-9]{1,3}|goog4-rsa-sha256")
_SIGNATURE = re.compile(r"\bsignature=([0-9a-f]{40,128})\b")


class AuthHeaderDetector(Detector):
    """``Authorization: Bearer|Basic|Token VALUE``, a bare ``Bearer <token>``, Cookie headers,
    and headers that hold only a key (``PRIVATE-TOKEN: X``, ``X-Api-Key: X``)."""

    name, summary = "auth-header", "Authorization/Bearer/Basic values, API key and Cookie headers"
    # headers that hold nothing but a credential (GitLab's PRIVATE-TOKEN, X-Api-Key, ...)
    _key_headers = (
        "private-token", "job-token", "x-api-key", "api-key", "x-auth-token", "x-access-token",
        "x-vault-token", "x-gitlab-token", "x-goog-api-key", "ocp-apim-subscription-key",
        "x-rapidapi-key", "x-shopify-access-token", "dd-api-key", "dd-application-key",
        "x-figma-token", "x-functions-key",
    )  # fmt: skip
    _key_headers = tuple(sorted(_key_headers, key=len, reverse=True))  # x-api-key before api-key
    lower_triggers = ("auth", "bearer", "cookie", "-token", "-key")
    _q = r"(?:\\{0,3}[\"'])?"
    _sources = (
        rf"authorization{_q}[ \t]{{0,4}}[:=][ \t]{{0,4}}{_q}[ \t]{{0,4}}"
        r"(?:(?:bearer|basic|token|bot|digest)[ \t]{1,4})?([a-z0-9._~+/\-]{6,4096}=*)",
        r"bearer[ \t]{1,4}([a-z0-9._~+/\-]{16,4096}=*)",
        rf"cookie{_q}[ \t]{{0,4}}:[ \t]{{0,4}}{_q}([^\r\n\"'\\]{{8,4096}})",
    )
    _patterns = tuple(re.compile(s) for s in _sources)
    # after a key header's name (found by its -token or -key: an alternation of names would
    # be tried at every character of a long output)
    _key_value = re.compile(rf"{_q}[ \t]{{0,4}}:[ \t]{{0,4}}{_q}([a-z0-9._~+/\-]{{8,4096}}=*)")
    _KEY = 3
    _cookie = re.compile(r"[A-Za-z0-9_.\-]{1,64}=(\S{8,})")

    def _ok(self, kind: int, value: str) -> bool:
        if kind == 2:
            pair = self._cookie.match(value)
            return pair is not None and not is_placeholder(pair.group(1))
        if is_placeholder(value) or len(value) < 8:
            return False
        if kind == self._KEY:  # the header says it is a key: what NAME=value takes, and
            if not looks_random(value):
                return False
            if is_secret_assignment("api_key", value, quoted=False, env_style=False):
                return True  # a mixed-case one of letters only, not a name in code
            return len(value) >= 16 and value.isalpha() and not _CAMEL_WORDS.fullmatch(value)
        return not WORDLIKE.fullmatch(value) and (kind == 0 or looks_random(value))

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for kind, pattern in enumerate(self._patterns):
            for match in pattern.finditer(lower):
                at = match.start()  # Proxy-Authorization and Set-Cookie count as well
                if _at_boundary(text, at) or lower.endswith(("proxy-", "set-"), 0, at):
                    start, end = match.span(1)
                    if kind == 0 and _SIGNING_SCHEME.fullmatch(lower, start, end):
                        # `AWS4-HMAC-SHA256 Credential=…, Signature=<hex>`: the scheme's
                        # name is no secret; the signature is
                        line_end = lower.find("\n", end, end + 2048)
                        signed = _SIGNATURE.search(
                            lower, end, end + 2048 if line_end < 0 else line_end
                        )
                        if signed:
                            yield signed.span(1)
                    elif self._ok(kind, text[start:end]):
                        yield start, end
        for suffix in ("-token", "-key"):
            at = lower.find(suffix)
            while at >= 0:
                yield from self._key_header(text, lower, at + len(suffix))
                at = lower.find(suffix, at + len(suffix))

    def _key_header(self, text: str, lower: str, end: int) -> Iterator[Span]:
        """The value of the key header whose name ends at ``end``, if one does."""
        if ":" not in lower[end : end + 10]:  # no header's colon: most -key and -token words
            return
        for name in self._key_headers:
            if lower.startswith(name, end - len(name)) and _at_boundary(text, end - len(name)):
                match = self._key_value.match(lower, end)
                if match:
                    start, stop = match.span(1)
                    if self._ok(self._KEY, text[start:stop]):
                        yield start, stop
                return


class JwtDetector(Detector):
    """JSON web tokens ``eyJ….eyJ….signature``.

    The header run is matched greedily on its own and the rest checked from where it ends, so
    a long run full of ``eyJ`` is consumed once instead of being retried at each of them.
    """

    by_shape = True
    name, summary = "jwt", "eyJ….eyJ….signature JSON web tokens"
    triggers = ("eyJ",)
    _head = re.compile(r"eyJ[A-Za-z0-9_\-]{5,4000}")
    _rest = re.compile(r"\.eyJ[A-Za-z0-9_\-]{5,8000}\.[A-Za-z0-9_\-]{0,4000}")

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for head in self._head.finditer(text):
            rest = self._rest.match(text, head.end())
            if rest is None or not _at_boundary(text, head.start()):
                continue
            end = rest.end()
            token = text[head.start() : end]
            whole = end == len(text) or text[end] not in _WORD
            # (jwt.io's sample, on every page about JWTs, is no one's token)
            if whole and not_dummy(token) and not is_documented_example(token):
                yield head.start(), end


def _discord_user_id(part: str) -> bool:
    """``part`` is a Discord user id (a snowflake: 17 to 20 digits) in unpadded base64."""
    try:
        decoded = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except ValueError:  # binascii.Error is one: 25 characters are no base64
        return False
    return 17 <= len(decoded) <= 20 and decoded.isdigit() and decoded[:1] != b"0"


class DiscordBotTokenDetector(Detector):
    """Discord bot tokens ``<user id>.<timestamp>.<HMAC>``: the bot's numeric user id in
    base64 (so M, N or O first), 6 characters, then 27 to 38. There is no fixed prefix, so
    the regex is anchored on the dots and the id part checked by decoding it: dotted names,
    versions and hosts do not decode to digits, and a JWT opens with ``eyJ``."""

    by_shape = True
    name, summary = "discord-bot-token", "<base64 user id>.<timestamp>.<hmac> Discord bot tokens"
    triggers = (".",)  # one cheap pass; the regex then only tries the dots
    _tail = re.compile(r"\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}(?![A-Za-z0-9_\-])")

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._tail.finditer(text):
            dot = match.start()
            run = dot  # the id part: the word before the first dot, 23 to 27 characters
            while run > max(0, dot - 27) and text[run - 1] in _WORD:
                run -= 1
            for start in range(run, dot - 22):  # a JSON escape (\n) may glue onto it
                if text[start] in "MNO" and _at_boundary(text, start):
                    if _discord_user_id(text[start:dot]) and not_dummy(match.group()):
                        yield start, match.end()
                    break


def _has_digit(body: str) -> bool:
    return bool(DIGIT.search(body)) and not is_dummy(body)


def _slack_shape(body: str) -> bool:
    """Every Slack token's first part after its prefix is a number (``xoxb-1234-…``,
    ``xoxe.xoxp-1-…``, ``xapp-1-…``): ``xoxo-gossip-girl-season-2`` is a word."""
    return body.partition("-")[2][:1].isdigit() and _has_digit(body)


def _base36(body: str) -> bool:
    return looks_random(body) and any("g" <= char <= "z" for char in body[4:])


def _three_classes(body: str) -> bool:
    """Lower case, upper case and digits: a token, not an UPPER_CASE_CONSTANT."""
    return bool(DIGIT.search(body) and LOWER.search(body) and UPPER.search(body)) and not is_dummy(
        body
    )


_ANY = r"[A-Za-z0-9_\-]"
_HEX_TOKEN = re.compile(r"[0-9a-f]{32,}")
_PORT = re.compile(r"[0-9]{1,5}[/?#]")  # host:8080/path@x is a port, not a password
# after the "@" that ends a password: a host name or [IPv6] and a port, then what ends a host
_HOST = re.compile(
    r"@(?:[A-Za-z0-9][A-Za-z0-9.\-]*|\[[0-9A-Fa-f:.]+(?:%[\w.\-]+)?\])(?::[0-9]{1,5})?"
    r"(?=[/?#\s\"'<>\\,;)\]]|\Z)"
)
#: The prefixes that may follow "-" or "_": long and distinctive (not hf_ or a bare sk-,
#: which identifiers like load_hf_TransformersConfig… or prefix-sk-… contain).
_JOINABLE = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xoxb-", "xoxp-",
             "xoxa-", "xoxe", "xoxr-", "xoxs-", "xoxo-", "sk-ant-", "sk-or-", "sk-proj-",
             "sk-svcacct-", "sk-admin-", "npm_", "pypi-Ag", "SG.",
             "sk_live_", "rk_live_")  # fmt: skip
#: name, what it catches, pattern, prefix literals, check, the group that holds the secret
TokenFormat = tuple[str, str, str, tuple[str, ...], Callable[[str], bool], int]
# Token formats with a fixed prefix: name, what it catches, pattern, prefix literals, check,
# the group that holds the secret. Order is priority: overlapping spans are named after the
# longest hit, ties go to the earlier detector.
# fmt: off
_TOKEN_FORMATS: tuple[TokenFormat, ...] = (
    ("anthropic-key", "sk-ant-… keys", rf"sk-ant-{_ANY}{{20,300}}", ("sk-",), looks_random, 0),
    ("openrouter-key", "sk-or-v1-… keys", rf"sk-or-{_ANY}{{20,300}}", ("sk-",), looks_random, 0),
    ("openai-key", "sk-…, sk-proj-…, sk-svcacct-…, sk-admin-… keys",
     rf"sk-(?:(?:proj|svcacct|admin)-{_ANY}{{20,300}}|(?!ant-|or-)[A-Za-z0-9]{{20,300}})",
     ("sk-",), looks_random, 0),
    ("groq-key", "gsk_… keys", r"gsk_[A-Za-z0-9]{40,80}", ("gsk_",), looks_random, 0),
    ("xai-key", "xai-… keys", r"xai-[A-Za-z0-9_]{40,120}", ("xai-",), looks_random, 0),
    ("cerebras-key", "csk-… keys", r"csk-[A-Za-z0-9]{32,80}", ("csk-",), looks_random, 0),
    ("google-api-key", "AIza… API keys", rf"AIza{_ANY}{{35}}", ("AIza",), not_dummy, 0),
    ("github-token", "ghp_/gho_/ghu_/ghs_/ghr_ and github_pat_ tokens",
     r"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}", ("gh", "github_pat_"),
     not_dummy, 0),
    ("gitlab-token", "glpat-, gldt-, glrt-, glptt-, glcbt-, glft-, glsoat-, glimt-, glagent-, "
     "gloas-, glffct- tokens (also routable: ….01tlud265)",
     rf"gl(?:pat|dt|rt|ptt|cbt|ft|soat|imt|agent|oas|ffct)-{_ANY}{{20,255}}"
     r"(?:\.[0-9a-z]{2,9}(?:\.[0-9a-z]{7,9})?(?![0-9a-z]))?",
     ("gl",), looks_random, 0),
    ("google-oauth-secret", "GOCSPX-… OAuth client secrets", rf"GOCSPX-{_ANY}{{24,40}}",
     ("GOCSPX-",), looks_random, 0),
    ("google-oauth-token", "ya29.… OAuth access tokens", rf"ya29\.{_ANY}{{30,2048}}", ("ya29.",),
     looks_random, 0),
    ("shopify-token", "shpat_/shpss_/shpca_/shppa_ tokens", r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
     ("shp",), not_dummy, 0),
    ("age-secret-key", "AGE-SECRET-KEY-1… keys", r"AGE-SECRET-KEY-1[0-9A-Z]{58}",
     ("AGE-SECRET-KEY-1",), not_dummy, 0),
    ("huggingface-token", "hf_… tokens", r"hf_[A-Za-z0-9]{30,64}", ("hf_",), _hf_shape, 0),
    ("aws-access-key-id", "AKIA…/ASIA… access key ids", r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}",
     AwsSecretDetector.triggers, not_dummy, 0),
    ("slack-token", "xoxb-/xoxp-/xoxa-/xoxe-… tokens, xapp- app tokens",
     r"xox(?:[abposr]|e(?:\.xox[abposr])?)-[A-Za-z0-9\-]{10,300}|xapp-[0-9]-[A-Za-z0-9\-]{10,300}",
     ("xox", "xapp-"), _slack_shape, 0),
    ("stripe-key", "sk_live_/rk_live_ (and _test_) keys, whsec_ secrets",
     # (a live key cut short, `sk_live_51HqLyjWDarj` in a session's name, still names it)
     r"(?:sk|rk)_live_[A-Za-z0-9]{12,247}|(?:sk|rk)_test_[A-Za-z0-9]{16,247}"
     r"|whsec_[A-Za-z0-9]{24,64}",
     ("_live_", "_test_", "whsec_"), looks_random, 0),
    ("npm-token", "npm_… tokens", r"npm_[A-Za-z0-9]{36}", ("npm_",), looks_random, 0),
    ("pypi-token", "pypi-Ag… upload tokens", rf"pypi-Ag{_ANY}{{50,1000}}", ("pypi-Ag",),
     not_dummy, 0),
    ("sendgrid-key", "SG.….… API keys", rf"SG\.{_ANY}{{22}}\.{_ANY}{{43}}", ("SG.",), not_dummy, 0),
    ("telegram-bot-token", "<bot id>:AA… bot tokens", rf"(?:bot)?([0-9]{{5,16}}:AA{_ANY}{{33}})",
     (":AA",), not_dummy, 1),
    # `vault operator init` prints its unseal keys and root token so (the older `s.` tokens
    # have no prefix of their own: hvs. ones are vault-token's)
    ("vault-unseal-key", "Unseal Key N: … of vault operator init",
     r"Unseal Key [0-9]{1,2}: ([A-Za-z0-9+/]{40,88}={0,2})", ("Unseal Key ",), not_dummy, 1),
    ("vault-root-token", "Initial Root Token: … of vault operator init",
     rf"Initial Root Token: ((?:s|hvs|hvb)\.{_ANY}{{24,300}})", ("Initial Root Token: ",),
     not_dummy, 1),
)
SERVICE_TOKEN_LENGTH = 28
# Services' tokens: none is shorter than 28 characters, so shorter strings skip their checks.
_SERVICE_TOKENS: tuple[TokenFormat, ...] = (
    ("vault-token", "HashiCorp Vault hvs./hvb./hvr. tokens", rf"hv[sbr]\.{_ANY}{{24,300}}",
     ("hvs.", "hvb.", "hvr."), looks_random, 0),
    ("digitalocean-token", "dop_v1_/doo_v1_/dor_v1_ tokens", r"do[opr]_v1_[a-f0-9]{64}",
     ("_v1_",), looks_random, 0),
    ("docker-hub-token", "dckr_pat_/dckr_oat_ access tokens", rf"dckr_(?:pat|oat)_{_ANY}{{20,100}}",
     ("dckr_",), looks_random, 0),
    ("databricks-token", "dapi… tokens", r"dapi[a-f0-9]{32}(?:-[0-9])?", ("dapi",),
     looks_random, 0),
    ("linear-key", "lin_api_/lin_oauth_ keys", r"lin_(?:api|oauth)_[A-Za-z0-9]{32,100}",
     ("lin_",), looks_random, 0),
    ("twilio-key", "SK… API key sids", r"SK[0-9a-fA-F]{32}", ("SK",), looks_random, 0),
    ("replicate-token", "r8_… tokens", rf"r8_{_ANY}{{37}}", ("r8_",), looks_random, 0),
    ("perplexity-key", "pplx-… keys", r"pplx-[A-Za-z0-9]{40,64}", ("pplx-",), looks_random, 0),
    ("atlassian-token", "ATATT… API tokens", r"ATATT3[A-Za-z0-9_\-=]{100,400}", ("ATATT",),
     looks_random, 0),
    ("postman-key", "PMAK-… API keys", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", ("PMAK-",),
     looks_random, 0),
    ("grafana-token", "glsa_ service account and glc_ cloud tokens",
     r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,2}", ("glsa_", "glc_"),
     looks_random, 0),
    ("supabase-token", "sbp_… access tokens", r"sbp_[a-f0-9]{40}", ("sbp_",), looks_random, 0),
    ("sentry-token", "sntrys_/sntryu_ auth tokens", r"sntry[su]_[A-Za-z0-9+/=_\-]{40,400}",
     ("sntry",), looks_random, 0),
    ("newrelic-key", "NRAK-… user keys, NRII- insights and NRJS- browser keys",
     r"NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9_\-]{32}|NRJS-[a-f0-9]{19}", ("NRAK-", "NRII-", "NRJS-"),
     looks_random, 0),
    ("pulumi-token", "pul-… access tokens", r"pul-[a-f0-9]{40}", ("pul-",), looks_random, 0),
    ("doppler-token", "dp.pt./dp.st.[env.]/dp.ct./dp.sa./dp.scim. tokens",
     rf"dp\.(?:pt|st|ct|sa|scim|audit)\.(?:[a-z0-9_\-]{{2,35}}\.)?{_ANY}{{40,100}}", ("dp.",),
     looks_random, 0),
    ("terraform-token", "….atlasv1.… Terraform Cloud tokens",
     rf"[A-Za-z0-9]{{14}}\.atlasv1\.{_ANY}{{60,90}}", (".atlasv1.",), looks_random, 0),
    ("fly-token", "fo1_… tokens", rf"fo1_{_ANY}{{40,50}}", ("fo1_",), looks_random, 0),
    ("netlify-token", "nfp_… access tokens", r"nfp_[A-Za-z0-9]{36,40}", ("nfp_",),
     looks_random, 0),
    ("bedrock-key", "ABSK… Amazon Bedrock API keys", r"ABSK[A-Za-z0-9+/]{100,300}={0,2}",
     ("ABSK",), looks_random, 0),
    # base 36, not hex: `key-<md5>` is a cache or object key
    ("mailgun-key", "key-… Mailgun API keys", r"key-[0-9a-z]{32}", ("key-",), _base36, 0),
    # (not sq0idp-: an application id, public, in a payment form's code)
    ("square-token", "sq0atp-/sq0csp-… Square tokens", r"sq0(?:atp|csp)-[A-Za-z0-9\-_]{22,60}",
     ("sq0",), lambda body: looks_random(body[7:]), 0),
    ("meta-token", "EAA… Facebook/Instagram/WhatsApp and Square EAAA… access tokens",
     r"EAA[A-Z][A-Za-z0-9]{60,400}", ("EAA",), _three_classes, 0),
)
# fmt: on
def _azure_key_shape(key: str) -> bool:
    """Random, and no documentation's ``?code=YOUR_FUNCTION_KEY_GOES_HERE_1234``."""
    words = ("your", "here", "key", "function", "placeholder", "example")
    return (
        looks_random(key) and not is_placeholder(key) and not any(w in key.lower() for w in words)
    )


_UNGLUED = (  # formats whose secret sits inside a longer match
    RegexDetector(
        "azure-function-key",
        "?code= keys in Azure Functions URLs (*.azurewebsites.net)",
        r"\.azurewebsites\.net/[^\s?#\"'<>]{0,300}\?(?:[^\s#\"'<>]{0,300}&)?code="
        r"([A-Za-z0-9_\-]{30,200}={0,2})",
        (".azurewebsites.net/",),
        check=_azure_key_shape,
        group=1,
        edges=False,
    ),
    RegexDetector(
        "slack-webhook",
        "hooks.slack.com webhook paths",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/\-]{20,200})",
        ("hooks.slack.com/",),
        group=1,
        edges=False,
    ),
    RegexDetector(
        "password-hash",
        "crypt(3) password hashes ($6$, $apr1$, $2b$, $y$: /etc/shadow, .htpasswd)",
        r"\$(?:1|5|6|7|apr1|2[abxy]?|y|gy)\$(?:[./A-Za-z0-9,=]{1,64}\$){1,3}[./A-Za-z0-9]{20,200}",
        ("$",),  # one pre-check for all eight schemes: each is a pass over every string
        edges=False,
    ),
    RegexDetector(
        "discord-webhook",
        "discord.com/api/webhooks/<id>/<token> paths",
        r"discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/([A-Za-z0-9_\-]{60,80})",
        ("/api/webhooks/",),
        group=1,
        edges=False,
    ),
)


class UrlTokenDetector(Detector):
    """A token as the whole user part of a URL: ``https://<token>@github.com/org/repo``
    (git's token-in-URL form), a Sentry DSN's key. Only random-looking user parts count:
    ``ssh://git@host`` or ``https://alice@host`` are names."""

    name, summary = "url-token", "a token as the user part of a URL (https://TOKEN@host)"
    triggers = ("://",)
    _user = re.compile(r"://([A-Za-z0-9_\-]{20,256})(?=@)")

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._user.finditer(text):
            user = match.group(1)
            token_like = sum(user.count(c) for c in "-_") <= 2 and (
                bool(_HEX_TOKEN.fullmatch(user)) or bool(UPPER.search(user) and LOWER.search(user))
            )
            if token_like and DIGIT.search(user) and _HOST.match(text, match.end()):
                yield match.span(1)  # not build-agent-01-production-eu, a name


_FSSPEC_GITHUB = re.compile(r"(?<![a-z0-9+.\-])github\Z")


class UrlCredentialsDetector(Detector):
    """The password in ``scheme://user:password@host``: up to the first ``@`` that a clean
    host follows, since passwords that were not percent-encoded hold ``@``, ``/`` and ``#``
    too (``p@ss@db``), while a path may hold an ``@`` of its own (``repo.git@v1.2``).

    The run after ``user:`` is taken once and consumed (no backtracking into it), so text
    dense with ``://a:`` stays linear."""

    name, summary = "url-credentials", "the password in scheme://user:password@host"
    triggers = ("://",)
    _start = re.compile(
        r"://(?!\[)[^\s:/?#@\"'<>\\]{0,256}:(?=(?P<run>[^\s\"'<>\\]{1,256}))(?P=run)"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._start.finditer(text):
            if _FSSPEC_GITHUB.search(lower, max(0, match.start() - 7), match.start()):
                continue  # fsspec's `github://org:repo@sha/path`: an org and a repository
            run_start, run_end = match.span("run")
            run = text[run_start:run_end]
            at = run.find("@")
            while at >= 0:  # the first "@" a clean host follows whose password is one
                if at > 0 and _HOST.match(run, at):
                    value = run[:at]
                    if not is_placeholder(value) and not _PORT.match(value):
                        yield run_start, run_start + at
                        break
                at = run.find("@", at + 1)


_FORMATS: tuple[Detector, ...] = (
    *(
        RegexDetector(n, s, p, t, check=c, group=g)
        for n, s, p, t, c, g in (*_TOKEN_FORMATS, *SHORT_SERVICE_TOKENS)
    ),
    *(
        RegexDetector(n, s, p, t, check=c, group=g, min_length=SERVICE_TOKEN_LENGTH)
        for n, s, p, t, c, g in (*_SERVICE_TOKENS, *LONG_SERVICE_TOKENS)
    ),
    JwtDetector(),
)
DETECTORS: tuple[Detector, ...] = (
    PrivateKeyDetector(),
    Base64PrivateKeyDetector(),
    *_FORMATS,
    WrappedTokenDetector(_FORMATS),
    DiscordBotTokenDetector(),
    AwsSecretDetector(),
    *_UNGLUED,
    UrlCredentialsDetector(),
    UrlTokenDetector(),
    AuthHeaderDetector(),
    AssignmentDetector(),
    CommandLineDetector(),
    NetrcDetector(),
    NameValueDetector(),
    SensitiveOutputDetector(),
    PgpassDetector(),
    RedisPasswordDetector(),
    PuttyKeyDetector(),
    DockerConfigDetector(),
    SignedUrlDetector(),
    CommandArgumentDetector(),
    ExpectSendDetector(),
    EnvDefaultDetector(),
    CodeFormDetector(),
    TableRowDetector(),
    ProsePasswordDetector(),
)
DETECTOR_NAMES: tuple[str, ...] = tuple(d.name for d in DETECTORS)
#: Detectors that know a secret only by what surrounds it (``NAME=value``): their finds are
#: what redaction's second pass looks for elsewhere (a shape detector finds every copy).
CONTEXT_DETECTORS = frozenset(d.name for d in DETECTORS if not d.by_shape)
LITERAL_PRIORITY = DETECTOR_NAMES.index("url-credentials")  # literals rank just above it
MIN_SCAN_LENGTH = 8  # no detector matches anything shorter


#: Up to this many literals, a str.find each; more are searched as one trie-shaped regex.
_FIND_LIMIT = 32
#: The marks that gate the triggers holding them (see Scanner._index), rarest first
_GATES = ("_", "~", "$", "-", ".", ":")
_GatedTriggers = list[tuple[str, list[tuple[str, list[int]]]]]
_TRIE_MAX_LENGTH = 300  # the pattern nests one group per character


def _trie_pattern(words: list[str]) -> str:
    """A regex matching any of ``words``, shaped as their trie (``ab(?:c|d)``): at each
    position the engine tries the next characters, not every word; the longest match wins."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = [re.escape(char) + build(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if ends:  # a word ends here and longer ones go on: those first, greedily
            return f"(?:{body})?" if len(branches) > 1 or len(body) > 1 else f"{body}?"
        return body

    return build(trie)


class Scanner:
    """All detectors plus exact literal secrets, longest first; one per session redaction."""

    def __init__(
        self, literals: Iterable[tuple[str, str]] = (), detectors: Iterable[Detector] = DETECTORS
    ) -> None:
        self.detectors = tuple(detectors)
        unique = {value: label for value, label in literals if value}
        self.literals = sorted(unique.items(), key=lambda item: (-len(item[0]), item[0]))
        # Many literals (a second pass over a .env of 2,000 keys) are one regex shaped as a
        # trie, not a str.find per literal per string (minutes on a big session); a few, and
        # very long ones, keep the finds.
        short = [(v, lb) for v, lb in self.literals if len(v) <= _TRIE_MAX_LENGTH]
        self._many: re.Pattern[str] | None = None
        self._labels: dict[str, str] = {}
        self._few = self.literals
        if len(short) > _FIND_LIMIT:
            try:
                self._many = re.compile(_trie_pattern([v for v, _ in short]))
            except (RecursionError, re.error, OverflowError):  # too deep to compile: finds
                self._many = None
            else:
                self._labels = dict(short)
                self._few = [(v, lb) for v, lb in self.literals if len(v) > _TRIE_MAX_LENGTH]
        self._priority = {d.name: i for i, d in enumerate(self.detectors)}
        # what a detector knows by its own name (a Docker config's auth) is named so
        self._priority.setdefault(base64_text.NAME, len(self.detectors))
        self._non_ascii = [i for i, d in enumerate(self.detectors) if d.non_ascii]
        self._always = [i for i, d in enumerate(self.detectors) if d.always]
        # (the built-in ones find nothing shorter than 8; --pii's and a pattern may)
        self._shortest = min([MIN_SCAN_LENGTH, *(d.min_length for d in self.detectors)])
        # One substring pass per distinct trigger, then only the detectors that were triggered;
        # most strings are short (ids, names, times): they check only what can fit in them,
        # by tiers of the detectors' shortest finds.
        self._tiers = sorted({d.min_length for d in self.detectors})
        self._by_tier = [
            (
                self._index(d.triggers if d.min_length <= tier else () for d in self.detectors),
                self._index(
                    d.lower_triggers if d.min_length <= tier else () for d in self.detectors
                ),
            )
            for tier in self._tiers
        ]

    @staticmethod
    def _index(per_detector: Iterable[tuple[str, ...]]) -> _GatedTriggers:
        """Each trigger and the detectors it wakes, grouped under a punctuation mark the
        trigger holds (``_`` in ``napi_``, ``-`` in ``tvly-``): a text without the mark
        skips the whole group, one substring test instead of dozens."""
        index: dict[str, list[int]] = {}
        for position, triggers in enumerate(per_detector):
            for trigger in triggers:
                index.setdefault(trigger, []).append(position)
        groups: dict[str, list[tuple[str, list[int]]]] = {}
        for trigger, ids in index.items():
            gate = next((mark for mark in _GATES if mark in trigger), "")
            groups.setdefault(gate, []).append((trigger, ids))
        return sorted(groups.items())

    def _rank(self, detector: str) -> float:
        return self._priority.get(detector, LITERAL_PRIORITY - 0.5)

    def raw_hits(self, text: str) -> list[tuple[int, int, str]]:
        """Every hit of every detector and literal, overlapping, unsorted."""
        hits: list[tuple[int, int, str]] = []
        if len(text) >= self._shortest:
            lower = text.lower()
            if len(lower) != len(text):  # "İ", the one letter that lowercases to two
                lower = text.replace("\u0130", "i").lower()  # (so "ŞİFRE" is "şifre")
            tier = bisect.bisect_right(self._tiers, len(text)) - 1
            triggers, lower_triggers = self._by_tier[max(tier, 0)]
            active: set[int] = set()
            for among, gated in ((text, triggers), (lower, lower_triggers)):
                for gate, group in gated:
                    if gate in among:  # ("" is in every text)
                        active.update(i for t, ids in group if t in among for i in ids)
            if self._non_ascii and not text.isascii():
                active.update(self._non_ascii)
            active.update(self._always)
            for position in sorted(active):
                detector = self.detectors[position]
                hits.extend((s, e, detector.name) for s, e in detector.find(text, lower))
        if self._many is not None:  # one regex pass; a match may overlap the next one
            match = self._many.search(text)
            while match:
                hits.append((match.start(), match.end(), self._labels[match.group()]))
                match = self._many.search(text, match.start() + 1)
        for value, label in self._few:
            index = text.find(value)
            while index >= 0:
                hits.append((index, index + len(value), label))
                index = text.find(value, index + len(value))
        return hits

    def merge(self, hits: list[tuple[int, int, str]]) -> list[Finding]:
        """Union overlapping hits; each union is named by its longest hit, then by priority."""
        merged: list[Finding] = []
        best = (0, 0.0)
        for start, end, name in sorted(hits):
            score = (start - end, self._rank(name))
            if merged and start < merged[-1].end:
                last = merged[-1]
                label = name if score < best else last.detector
                best = min(best, score)
                merged[-1] = Finding(last.start, max(last.end, end), label)
            else:
                merged.append(Finding(start, end, name))
                best = score
        return merged

    def find(self, text: str) -> list[Finding]:
        """Sorted, non-overlapping secret spans in ``text``: those of the text as written
        and of the text as a reader sees it (see :mod:`exporter.decoded_view`), as spans of
        the text as written."""
        hits = self.raw_hits(text)
        view = decoded_view(text)
        if view is not None:
            for first, last in view.around_changes():
                for start, end, name in self.raw_hits(view.text[first:last]):
                    hits.append((*view.raw_span(first + start, first + end), name))
        if "\\" in text:  # a config file's lines inside a JSON string, read as lines
            for first, last in escaped_config_spans(text):
                escaped = _json_unescaped(text[first:last])
                for start, end, name in self.raw_hits(escaped.text):
                    raw_start, raw_end = escaped.raw_span(start, end)
                    hits.append((first + raw_start, first + raw_end, name))
        # a base64 run whose text holds a secret (`echo Z2hwX… | base64 -d`) goes whole
        hits.extend(
            (start, end, base64_text.NAME)
            for start, end, decoded in base64_text.base64_texts(text)
            if self.raw_hits(decoded)
        )
        return self.merge(hits) if hits else []


#: A line of a config file inside a JSON string (tool output that is JSON, or printed it):
#: an escaped line break, then a key that may name a secret (`password = x`, `pass: x`) or a
#: redis.conf/sentinel.conf directive. The INI, YAML and redis.conf rules read lines; in the
#: string as written they saw one long line.
_ESCAPED_CONFIG_LINE = re.compile(
    r"\\[nr][ \t]{0,16}(?:[0-9]{1,6}[ \t:|]{1,4})?[+\->]?[ \t]{0,16}"
    r"(?:[\w.\-]{0,64}?(?:pass|pwd|pw|secret|token|key|auth|credential|cookie)[\w.\-]{0,64}"
    r"[ \t]{0,8}[=:]|requirepass|masterauth|sentinel[ \t])",
    re.IGNORECASE,
)
_JSON_ESCAPES = re.compile(r'\\(["\\/bfnrt])')
_JSON_CHARACTERS = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_ESCAPED_REACH = 2048  # how far from a line the string's quotes are looked for


def _unescaped_quote(text: str, low: int, high: int, backward: bool) -> int:
    """The nearest ``"`` in ``text[low:high]`` that no backslash escapes (-1: none)."""
    at = high if backward else low
    while True:
        at = text.rfind('"', low, at) if backward else text.find('"', at, high)
        if at < 0:
            return -1
        slashes = 0
        while at - slashes > 0 and text[at - slashes - 1] == "\\":
            slashes += 1
        if slashes % 2 == 0:
            return at
        if not backward:
            at += 1


def _json_unescaped(text: str) -> DecodedView:
    """``text`` with one level of JSON string escapes decoded, mapped back to it."""
    found = [
        (m.start(), m.end(), _JSON_CHARACTERS.get(m[1], m[1])) for m in _JSON_ESCAPES.finditer(text)
    ]
    return replaced_view(text, found)


def escaped_config_spans(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` holding a config file's lines as a JSON string's escapes (``"[client]
    \\nuser = app\\npassword = x\\n"``): from the string's opening quote (or a line break
    near the line) to its closing one, so the file's first line starts the span."""
    spans: list[tuple[int, int]] = []
    size = len(text)
    match = _ESCAPED_CONFIG_LINE.search(text)
    while match:
        at = match.start()
        low = max(spans[-1][1] if spans else 0, at - _ESCAPED_REACH)
        opener = _unescaped_quote(text, low, at, backward=True)
        if opener >= 0:
            start = opener + 1
        else:  # no quote near: from a line break (a line cut in half starts no line)
            start = text.find("\\n", max(low, at - _ESCAPED_REACH // 2), at)
            start = at if start < 0 else start
        high = min(size, match.end() + _ESCAPED_REACH)
        closer = _unescaped_quote(text, match.end(), high, backward=False)
        if closer >= 0:
            end = closer
        else:
            end = text.rfind("\\n", match.end(), high) if high < size else size
            end = high if end < 0 else end
        spans.append((start, end))
        match = _ESCAPED_CONFIG_LINE.search(text, max(end, match.end()))
    return spans


def scan(text: str) -> list[Finding]:
    """Convenience for tests and debugging: the built-in detectors over one string."""
    return _DEFAULT.find(text)


_DEFAULT = Scanner()
