"""Base64 runs in a text that decode to text, for the secret scanner.

An agent that runs ``echo Z2hwX… | base64 -d``, reads a Kubernetes Secret's ``data:`` or a
CI variable stored encoded shows a secret no detector sees in its encoded form, and any
reader can decode it. The scanner also reads each such run decoded; a run whose text holds
a secret is replaced whole. Runs that decode to bytes which are not text (hashes, ids,
images, paths read as base64) are passed over after one decode.
"""

from __future__ import annotations

import base64
import binascii
import re
import string
from collections.abc import Iterator

from exporter.detector_base import wrapped_base64_end

NAME = "base64-secret"
SUMMARY = "base64-encoded text that holds a secret (echo …| base64 -d, k8s Secret data)"

MIN_RUN = 20  # 15 bytes of text: shorter encodings hold no secret worth the decode
MAX_RUN = 1 << 16  # longer runs are data (an image, an archive), not a value someone typed
#: A run of base64 characters, found greedily (each run once); what touches its two ends is
#: checked after. The search reads every character of every scanned text: ~20 ns each.
_RUN = re.compile(rf"[A-Za-z0-9+/]{{{MIN_RUN},}}={{0,2}}")
_BEFORE = frozenset("_-")  # a run right after one of these is the tail of a longer token
#: ... or right before one ("ab==cd" is one token); "NAME=<run>" and "<run>\n" are not
_AFTER = frozenset("=_-" + string.ascii_letters + string.digits + "+/")
_ESCAPE_LETTERS = frozenset("nrtbf")  # JSON's and printf's "\n": its letter is no base64
_HAS_SIGNAL = re.compile(r"[0-9+/]|[a-z][A-Z]|[A-Z][a-z]")  # not one plain word
_WRAP_WIDTH = 60  # a line this long may go on over a break (as wrapped_base64_end reads it)
_LINE_BREAKS = re.compile(r"\s+")  # a wrapped block's breaks and a YAML block's indentation


def base64_texts(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, decoded)`` for each base64 run in ``text`` that decodes to text."""
    if len(text) < MIN_RUN:
        return
    size = len(text)
    block_end = 0  # where the last wrapped block found ends
    match = _RUN.search(text)
    while match is not None:
        start, end = match.span()
        match = _RUN.search(text, end)
        if start and text[start - 1] == "\\" and text[start] in _ESCAPE_LETTERS:
            start += 1  # "…\nZ2hw…": the run starts after the escape's letter
        elif start and text[start - 1] in _BEFORE:
            continue
        if end < size and text[end] in _AFTER:
            continue
        run = text[start:end]
        if end > block_end and end - start >= _WRAP_WIDTH and text[end : end + 1] in ("\n", "\r"):
            # `base64` wraps at 76 columns: a secret across a line break was in no one line
            block_end = wrapped_base64_end(text, end, start)
            if end < block_end <= start + MAX_RUN + MAX_RUN // 32:  # (a break per 64 or 76)
                end = block_end
                match = _RUN.search(text, end)
                run = _LINE_BREAKS.sub("", text[start:end])  # (a run alone holds no blank)
            # (a longer block is data: read line by line, without walking it again per line)
        body = run.rstrip("=")
        if len(body) > MAX_RUN or len(body) % 4 == 1 or not _HAS_SIGNAL.search(body):
            continue
        try:
            raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if _reads_as_text(decoded):
            yield start, end, decoded


def _reads_as_text(decoded: str) -> bool:
    """Printable text (line breaks and tabs allowed): not bytes that happen to be UTF-8."""
    shown = sum(1 for char in decoded if char.isprintable() or char in "\n\r\t")
    return shown >= 0.95 * len(decoded) and any(char.isalnum() for char in decoded)


def decoded_size(data: str) -> int:
    """How many bytes base64 ``data`` holds, read from its length (it may not decode):
    whitespace and ``=`` padding are no bytes. The page's and the Markdown's notes of an
    image or a document left out say it (one count for both)."""
    return len("".join(data.split()).rstrip("=")) * 3 // 4
