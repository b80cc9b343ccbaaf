"""Detectors that know a secret by where it sits rather than by its name or format.

A `.pgpass` line's fifth field, a Docker registry config sent as base64, the signature of a
signed URL (Azure SAS, S3/GCS presigned), the password of ``htpasswd -b``, a value piped
into a command that stores secrets (``echo X | vercel env add``), ``gh secret set --body X``,
the default of ``os.getenv("API_TOKEN", "X")``, a ``| API_KEY | X |`` table row and
"the password is X" in prose. Each is anchored on a literal so that text without it costs
one substring test, and each pattern is bounded so that dense input stays linear.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from exporter.detector_base import Detector, Span
from exporter.secret_heuristics import (
    DIGIT,
    LOWER,
    PLAIN_WORD,
    UPPER,
    is_placeholder,
    is_secret_assignment,
    name_strength,
)

# What ends an unquoted shell word.
_WORD_END = r"[^\s\"'`;&|<>()]"
_ARG = rf"(?:'[^'\r\n]{{1,512}}'|\"[^\"\r\n]{{1,512}}\"|{_WORD_END}{{1,512}})"  # one argument


def _literal(value: str) -> bool:
    """A value written out, not a variable, a flag, a path or a plain word."""
    return (
        value[0] not in "$%-/~.<{" and not PLAIN_WORD.fullmatch(value) and not is_placeholder(value)
    )


class PgpassDetector(Detector):
    """``host:port:database:user:password`` lines (``~/.pgpass``): the fifth field."""

    name, summary = "pgpass", "the password field of .pgpass lines (host:port:db:user:password)"
    triggers = (":5432:", ":*:", "pgpass")
    _line = re.compile(
        r"^[ \t]*[A-Za-z0-9_.\-*\[\]]{1,253}:(?:[0-9]{1,5}|\*):[^:\s]{1,128}:[^:\s]{1,128}:"
        r"(?P<pw>[^\s]{4,512})[ \t]*$",
        re.M,
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._line.finditer(text):
            value = match.group("pw")
            if value != "*" and not is_placeholder(value):
                yield match.span("pw")


class PuttyKeyDetector(Detector):
    """The private lines of a PuTTY key file (``.ppk``): ``Private-Lines: N`` and the N
    base64 lines after it (PEM and OpenSSH keys are the private-key detector's)."""

    name, summary = "putty-key", "the private part of PuTTY .ppk key files"
    triggers = ("Private-Lines:",)
    _head = re.compile(r"Private-Lines:[ \t]*(?P<n>[0-9]{1,3})[ \t]*\r?\n")
    _line = re.compile(r"[ \t]*[A-Za-z0-9+/=]{1,256}[ \t]*(?:\r?\n|\Z)")

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for head in self._head.finditer(text):
            start = end = head.end()
            for _ in range(int(head["n"])):
                line = self._line.match(text, end)
                if line is None:
                    break
                end = line.end()
            while end > start and text[end - 1] in "\r\n":
                end -= 1
            if end > start:
                yield start, end


class DockerConfigDetector(Detector):
    """A Docker registry config (``{"auths": …}``, user:password inside) sent as base64:
    a Kubernetes ``.dockerconfigjson`` secret, ``DOCKER_AUTH_CONFIG``. Its base64 opens
    with the encoding of ``{"auths"`` (compact or pretty-printed)."""

    name, summary = "docker-config", 'base64 Docker registry configs ({"auths": …})'
    triggers = ("eyJhdXRocyI", "ewogICJhdXRocyI", "ewogICAgImF1dGhzIj", "ewoJImF1dGhzIj")
    _blob = re.compile(
        r"(?:eyJhdXRocyI|ewogICJhdXRocyI|ewogICAgImF1dGhzIj|ewoJImF1dGhzIj)[A-Za-z0-9+/]{8,65536}=*"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._blob.finditer(text):
            yield match.span()


class SignedUrlDetector(Detector):
    """The signature (and session token) in a signed URL's query: Azure SAS ``sig=``,
    S3 ``X-Amz-Signature=`` / ``X-Amz-Security-Token=``, GCS ``X-Goog-Signature=``,
    CloudFront ``Signature=``. Anyone holding the URL has the access it grants."""

    name, summary = "signed-url", "signatures in signed URLs (SAS sig=, X-Amz-Signature=, …)"
    lower_triggers = ("sig=", "signature=", "security-token=")
    _param = re.compile(
        r"[?&](?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token)="
        r"(?P<v>[a-z0-9%+/=_.\-]{16,4096})"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._param.finditer(lower):
            start, end = match.span("v")
            value = text[start:end]
            if DIGIT.search(value) and not is_placeholder(value):
                yield start, end


class CommandArgumentDetector(Detector):
    """Secrets a command takes as a plain argument: ``htpasswd -b[c] FILE USER PASSWORD``
    (``-nb USER PASSWORD``), ``gh secret set NAME --body VALUE`` / ``-b VALUE``, and a value
    piped into a command that stores it (``echo X | vercel env add``, ``… | gh secret set``,
    ``… | docker login --password-stdin``, ``… | wrangler secret put``)."""

    name, summary = "command-argument", "htpasswd -b, gh secret set --body, echo X | … env add"
    lower_triggers = ("htpasswd", "secret set", "|")
    _htpasswd = re.compile(
        r"\bhtpasswd(?P<flags>(?:[ \t]+-[a-z]{1,6})+)"
        rf"(?P<args>(?:[ \t]+{_ARG}){{2,3}})",
        re.I,
    )
    _arg = re.compile(r"'(?P<sq>[^']*)'|\"(?P<dq>[^\"]*)\"|(?P<w>\S+)")
    _gh_body = re.compile(
        r"\bgh[ \t]+secret[ \t]+set\b[^\n;&|]{0,200}?[ \t](?:--body|-b)(?:[ \t]+|=)"
        rf"(?:(?P<q>[\"'])(?P<qv>[^\"'\r\n]{{4,512}})(?P=q)|(?P<v>{_WORD_END}{{4,512}}))"
    )
    _piped = re.compile(
        r"\b(?:echo|printf)(?:[ \t]+-[neE]{1,3})*(?:[ \t]+(?P<fq>[\"'])%s(?P=fq))?[ \t]+"
        rf"(?:(?P<q>[\"'])(?P<qv>[^\"'\r\n]{{4,512}})(?P=q)|(?P<v>{_WORD_END}{{4,512}}))"
        r"[ \t]*\|(?P<rest>[^\n;&|]{1,200})"
    )
    _stores = re.compile(
        r"\b(?:vercel[ \t]+env[ \t]+add|gh[ \t]+secret[ \t]+set|wrangler[ \t]+secret[ \t]+put"
        r"|netlify[ \t]+env:set|fly[ \t]+secrets[ \t]+set|firebase[ \t]+functions:secrets:set)\b"
        r"|--password-stdin\b"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        if "htpasswd" in lower:
            for match in self._htpasswd.finditer(text):
                flags = match.group("flags")  # -b is batch mode (password given), -B bcrypt
                if "b" not in flags:
                    continue
                args = list(self._arg.finditer(match.group("args")))
                wanted = 2 if "n" in flags else 3  # -n prints instead of writing a file
                if len(args) >= wanted:
                    word = args[wanted - 1]
                    group = next(g for g in ("sq", "dq", "w") if word.group(g) is not None)
                    start = match.start("args") + word.start(group)
                    value = word.group(group)
                    if value and _literal(value):
                        yield start, start + len(value)
        if "secret set" in lower:
            yield from self._values(text, self._gh_body.finditer(text))
        if "|" in text:
            piped = (m for m in self._piped.finditer(text) if self._stores.search(m["rest"]))
            yield from self._values(text, piped)

    @staticmethod
    def _values(text: str, matches: Iterator[re.Match[str]]) -> Iterator[Span]:
        for match in matches:
            group = "qv" if match.group("qv") else "v"
            start, end = match.span(group)
            if _literal(text[start:end]):
                yield start, end


class EnvDefaultDetector(Detector):
    """The default of an environment lookup under a sensitive name:
    ``os.getenv("API_TOKEN", "X")``, ``os.environ.get('SECRET_KEY', 'X')``,
    ``ENV.fetch("DB_PASSWORD", "X")``: the fallback is the secret, written in the code."""

    name, summary = "env-default", 'defaults of getenv("SECRET_NAME", "value") lookups'
    lower_triggers = ("getenv", "environ.get", "env.fetch")
    _call = re.compile(
        r"(?:getenv|environ\.get|env\.fetch)\(\s{0,8}(?P<nq>[\"'])(?P<name>[A-Za-z_][\w.\-]{0,127})"
        r"(?P=nq)\s{0,8},\s{0,8}(?P<q>[\"'])(?P<v>[^\"'\r\n]{5,512})(?P=q)",
        re.I,
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._call.finditer(text):
            if is_secret_assignment(match["name"], match["v"], quoted=True, env_style=False):
                yield match.span("v")


class TableRowDetector(Detector):
    """A two-cell table row naming a secret and giving it: ``| OPENAI_API_KEY | sk… |``
    (an agent's Markdown summary of an environment)."""

    name, summary = "table-row", "| SECRET_NAME | value | rows of Markdown tables"
    triggers = ("|",)
    # all in a look-ahead: each "|" is tried once and none is consumed, so the cell after
    # a non-matching one ("| DB | API_KEY | x |") can still start a row
    _row = re.compile(
        r"\|(?=[ \t]{0,8}`?(?P<name>[A-Za-z_][\w.\-]{1,127})`?[ \t]{0,8}\|[ \t]{0,8}"
        r"`?(?P<v>[^\s|`]{8,512})`?[ \t]{0,8}\|)"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._row.finditer(text):
            if is_secret_assignment(match["name"], match["v"], quoted=False, env_style=True):
                yield match.span("v")


class ProseSecretDetector(Detector):
    """A secret said in a sentence: "the password is Tr0ub4dor&3", "my API key is X".
    Only values that mix letters and digits count: "the token is valid" is prose."""

    name, summary = "prose-secret", '"the password is X" / "my API key is X" in sentences'
    lower_triggers = (" is ",)
    _said = re.compile(
        r"\b(?P<name>password|passphrase|passwd|api[ _\-]?key|access[ _\-]?token|secret[ _\-]?key"
        r"|token|secret)[ \t]+(?:is|was)[ \t]*:?[ \t]+(?P<q>[\"'`]?)(?P<v>[^\s\"'`]{8,256})",
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._said.finditer(lower):
            start, end = match.span("v")
            while end > start and text[end - 1] in ".,;:!?)":  # sentence punctuation
                end -= 1
            value = text[start:end]
            name = match["name"].replace(" ", "_")
            if (
                len(value) >= 8
                and DIGIT.search(value)
                and (LOWER.search(value) or UPPER.search(value))
                and name_strength(name) is not None
                and _literal(value)
                and is_secret_assignment(name, value, quoted=True, env_style=False)
            ):
                yield start, end
