"""Opt-in detectors: personal data (``--pii``: e-mail addresses, phone numbers, IPv4 and
IPv6 addresses) and the user's own patterns (``--redact-pattern NAME=REGEX``).

They are off by default: an address or a number is not a secret, and in a coding session
most are the project's own (``git@github.com``, ``127.0.0.1``). A team publishing traces of
work with customer data turns them on; each find becomes ``[REDACTED:<kind>:<n>]`` like a
secret, and the report counts it by kind.
"""

from __future__ import annotations

import ipaddress
import re
import warnings
from collections.abc import Iterator

from exporter.detector_base import Detector, Span

__all__ = ["PII_DETECTORS", "PatternDetector", "parse_pattern"]

# what follows the last dot of a file name with an "@" in it (icon@2x.png), not a domain
# (not the country domains a file suffix shares: .py, .rs, .so, .md are places too)
_FILE_SUFFIXES = frozenset((
    "png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "js", "mjs", "cjs", "ts", "tsx", "jsx",
    "rb", "java", "kt", "css", "scss", "html", "htm", "json", "yaml", "yml", "toml", "txt",
    "lock", "log", "wasm", "dylib", "dll", "exe", "gz", "tar",
    # more images, fonts, media and packages (logo@2x.avif, pkg@1.2.3.tgz); not the ones
    # that are top-level domains too (zip, mov): kim@studio.mov is an address
    "avif", "heic", "bmp", "tif", "tiff", "woff", "woff2", "ttf", "otf", "eot", "mp3", "mp4",
    "webm", "wav", "pdf", "tgz", "whl", "jar", "deb", "rpm",
))  # fmt: skip
# addresses that name nobody: placeholders, machines, and git's own
_NOBODY = re.compile(  # the whole local part, or the whole domain (graeme@, birgit@ are people)
    r"^(?:no-?reply|donotreply|example|test|user|you|your[-_.]?name|name|foo|bar|me|git|root)@"
    r"|@(?:[\w-]+\.)*(?:example\.(?:com|org|net)|localhost|users\.noreply\.github\.com|test|invalid)$",
    re.IGNORECASE,
)


class EmailDetector(Detector):
    """``alice@customer-corp.com``: not git's ``git@github.com``, not ``icon@2x.png``."""

    name, summary = "email", "e-mail addresses (--pii)"
    triggers = ("@",)
    min_length = 6
    _address = re.compile(
        r"(?<![\w.%+\-])[A-Za-z0-9][A-Za-z0-9._%+\-]{0,63}@"
        r"(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}(?![\w\-])"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._address.finditer(text):
            address = match.group()
            if address.rsplit(".", 1)[1].lower() in _FILE_SUFFIXES or _NOBODY.search(address):
                continue
            yield match.span()


class PhoneDetector(Detector):
    """``+44 20 7946 0958``, ``+1 (415) 555-0132``, ``(415) 555-0132``, ``415-555-0132``:
    an international number (8 to 15 digits after ``+``) or a North American one. A date
    (``2024-01-15``), a version or a bare run of digits is not one."""

    name, summary = "phone", "phone numbers (--pii)"
    triggers = ("+", "(", "-")
    min_length = 10
    _number = re.compile(
        r"(?<![\w+\-.])(?:\+\d{1,3}(?:[ .\-]?\(?\d{1,4}\)?){2,5}"
        r"|\(\d{3}\)[ .\-]?\d{3}[ .\-]\d{4}|\d{3}-\d{3}-\d{4})(?![\w\-.]?\d)"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._number.finditer(text):
            digits = sum(c.isdigit() for c in match.group())
            if 10 <= digits <= 15 or (match.group()[0] == "+" and digits >= 8):
                yield match.span()


# `v1.2.3.4`, `Chrome/120.0.0.0` (a product's version), not `https://10.0.0.5`
_VERSION_BEFORE = re.compile(r"(?:\bv|[a-z]/)\Z")


class Ipv4Detector(Detector):
    """``203.0.113.42``: any IPv4 address but the unspecified, loopback and broadcast ones
    (``0.0.0.0``, ``127.x``, ``255.x``), and a version (``v1.2.3.4``, ``Chrome/120.0.0.0``,
    ``AssemblyVersion("1.0.0.0")``)."""

    name, summary = "ipv4", "IPv4 addresses (--pii)"
    triggers = (".",)
    min_length = 7
    _octet = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
    _address = re.compile(rf"(?<![\w.])(?:{_octet}\.){{3}}{_octet}(?![\w]|\.\d)")

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._address.finditer(text):
            first = match.group().split(".", 1)[0]
            before = lower[max(0, match.start() - 20) : match.start()]
            if first in ("0", "127", "255") or "version" in before:
                continue
            if _VERSION_BEFORE.search(before):
                continue
            yield match.span()


class Ipv6Detector(Detector):
    """``2001:db8:85a3::8a2e:370:7334``, ``fe80::1ff:fe23:4567:890a%eth0``: what Python's
    ``ipaddress`` takes for an IPv6 address, but the unspecified and loopback ones (``::``,
    ``::1``) and what looks like code: it needs a digit (``Abc::Def`` is a C++ or Rust
    path), a group of 3 or 4 characters, and a letter a-f or 4 groups (a Python slice,
    ``a[1::2]``, ``a[100::200]``, has neither). A time (``12:30:45``) or a MAC address has
    too few groups to be one."""

    name, summary = "ipv6", "IPv6 addresses (--pii)"
    triggers = (":",)
    min_length = 6
    _address = re.compile(
        r"(?<![\w:.])(?:[0-9A-Fa-f]{1,4}|(?=:))(?::[0-9A-Fa-f]{0,4}){2,7}(?:%[\w.\-]{1,16})?"
        r"(?![\w:.])"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._address.finditer(text):
            candidate = match.group().split("%", 1)[0]
            groups = [group for group in candidate.split(":") if group]
            if not (
                any(c.isdigit() for c in candidate)
                and any(len(group) >= 3 for group in groups)
                and (len(groups) >= 4 or any(c in "abcdefABCDEF" for c in candidate))
            ):
                continue
            try:
                address = ipaddress.IPv6Address(candidate)
            except ValueError:
                continue
            if not (address.is_unspecified or address.is_loopback):
                yield match.span()


PII_DETECTORS: tuple[Detector, ...] = (
    EmailDetector(),
    PhoneDetector(),
    Ipv4Detector(),
    Ipv6Detector(),
)

_NAME = re.compile(r"[a-z0-9][a-z0-9\-]{0,31}")


class PatternDetector(Detector):
    """One ``--redact-pattern NAME=REGEX``: every match of the regex, in every string."""

    always = True

    def __init__(self, name: str, pattern: re.Pattern[str]) -> None:
        self.name, self.summary, self.pattern = name, f"--redact-pattern {name}", pattern
        self.min_length = 1

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self.pattern.finditer(text):
            if match.end() > match.start():
                yield match.span()


def _unsupported_syntax(name: str, warning: str) -> str:
    """Why a regex Python warns about is refused: a POSIX class (``[[:alpha:]]``) is read
    as a set of the characters ``[:alph`` followed by ``]``, matching nothing meant."""
    if warning.startswith("Possible nested set"):
        return (
            f"{name}: a [ inside a set (a POSIX class such as [[:alpha:]]) is not supported: "
            "Python reads it as one more character of the set; write [A-Za-z] for letters, "
            "[0-9] for digits, \\s for spaces, \\[ for a ["
        )
    return f"{name}: the regex is ambiguous ({warning.lower()}); escape the character with \\"


def parse_pattern(spec: str) -> tuple[str, str]:
    """``NAME=REGEX`` as (name, regex); a ``ValueError`` says what is wrong with it. The
    name is the placeholder's kind, so it is lowercase letters, digits and dashes."""
    name, sep, regex = spec.partition("=")
    name = name.strip().lower()
    if not sep or not regex:
        raise ValueError(f"{spec!r}: give NAME=REGEX (e.g. customer-id='CUST-[0-9]{{6}}')")
    if not _NAME.fullmatch(name):
        raise ValueError(f"{name!r}: a name is 1-32 lowercase letters, digits and dashes")
    try:
        with warnings.catch_warnings():
            # Python's warning of a syntax it may read otherwise one day (`[[:alpha:]]`,
            # `[a--b]`) went to stderr with a source path, and the regex ran as it reads now
            warnings.simplefilter("error", FutureWarning)
            compiled = re.compile(regex)
    except re.error as error:
        raise ValueError(f"{name}: the regex does not compile: {error}") from None
    except FutureWarning as warning:
        raise ValueError(_unsupported_syntax(name, str(warning))) from None
    if compiled.fullmatch(""):
        raise ValueError(f"{name}: the regex matches empty text, so it would match everywhere")
    return name, regex
