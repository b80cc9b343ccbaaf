"""The fast path for texts of plain paragraphs (``markup._plain_paragraphs``) writes what
markdown-it writes for them, byte for byte: it skips the parser for most short answers and
prompts, and must never change a page. Checked on every text of the fixtures and on seeded
random texts built from the characters that matter to it."""

from __future__ import annotations

import json
import random

from conftest import FIXTURE_FILES

from exporter.render.markup import _plain_paragraphs, markdown, parse_markdown, render_tokens

#: The characters and runs the fast path must judge right: block openers, escapes, spaces
#: of every kind, digits of other scripts, RTL letters, line ends.
ALPHABET = [*"ab cd  \n\n>\"'1.)#-+=|:%$@^{}]!?,;/()0123456789xyzABC", "\u00e9", "\u05d0",
            "\u0661", " \n", "  \n", "    ", "\n   ", "www", ":/", "1. ", "2) ", "\u00a0",
            "\t", "&", "<", "*", "_", "`", "~", "[", "\\", "\r", "\0", "e\u0301"]  # fmt: skip


def _parsed(text: str) -> str:
    parsed = parse_markdown(text)
    assert not isinstance(parsed, str), parsed
    return str(render_tokens(*parsed))


def _texts_of(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts_of(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts_of(v)]
    return []


def test_random_texts_take_the_fast_path_only_when_it_writes_the_same() -> None:
    rng = random.Random(67)
    fired = 0
    for _ in range(30_000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 40)))
        fast = _plain_paragraphs(text)
        if fast is not None:
            fired += 1
            assert fast == _parsed(text), repr(text)
    assert fired > 2_000  # the path is taken: the check above compared something


def test_every_fixture_text_is_written_as_markdown_it_writes_it() -> None:
    texts = set()
    for path in FIXTURE_FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                texts.update(_texts_of(json.loads(line)))
            except ValueError:
                continue
    fired = 0
    for text in texts:
        fast = _plain_paragraphs(text)
        if fast is not None and text:
            fired += 1
            assert fast == _parsed(text), repr(text)
            assert str(markdown(text)) == fast
    assert fired > 50
