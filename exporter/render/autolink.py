"""Bare web addresses in Markdown prose become links, as GitHub's Markdown (and Pi's page)
makes them: ``https://…``, ``http://…`` and ``www.…`` after a space or an opening mark.

A markdown-it core rule over the parsed inline text, not the ``linkify`` option: that needs
another package and a test of every text for every top-level domain; here a text without
``://`` or ``www.`` costs one substring check. The address ends where GitHub ends it:
trailing ``?!.,:;*_'"~`` are punctuation of the sentence, a closing bracket without its
opening one belongs to the text around, so does an ``&entity;``. The link still goes through
the renderer's ``validateLink`` (http(s) only here) and ``link_open`` rule.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = ["use_bare_links"]

_CANDIDATE = re.compile(r"(?<![^\s*_~(\[\"'])(?:[Hh][Tt][Tt][Pp][Ss]?://|www\.)[^\W_][^\s<>]*")
_TRAILING_PUNCTUATION = "?!.,:;*_'\"~"
_ENTITY_END = re.compile(r"&[A-Za-z0-9]+;\Z")
_CLOSERS = {")": "(", "]": "["}


def _trimmed(url: str) -> str:
    """The address without what GitHub leaves to the sentence around it."""
    while url:
        last = url[-1]
        if last == ";" and (entity := _ENTITY_END.search(url)):
            url = url[: entity.start()]
        elif last in _TRAILING_PUNCTUATION or (
            last in _CLOSERS and url.count(last) > url.count(_CLOSERS[last])
        ):
            url = url[:-1]
        else:
            break
    return url


def _linked(token: Token, md: MarkdownIt) -> list[Token] | None:
    """``token`` (a text) split around its bare addresses, or None when it has none."""
    text, parts, position = token.content, [], 0
    for match in _CANDIDATE.finditer(text):
        if match.start() < position:
            continue
        url = _trimmed(match.group())
        if "." not in url and "://" not in url:  # "www" and nothing after the dot
            continue
        href = md.normalizeLink(url if "://" in url else f"http://{url}")
        if not md.validateLink(href):
            continue
        if match.start() > position:
            parts.append(_text(text[position : match.start()], token.level))
        link_open = Token("link_open", "a", 1, level=token.level, markup="linkify", info="auto")
        link_open.attrs = {"href": href}
        parts += [
            link_open,
            _text(md.normalizeLinkText(url), token.level + 1),
            Token("link_close", "a", -1, level=token.level, markup="linkify", info="auto"),
        ]
        position = match.start() + len(url)
    if not parts:
        return None
    if position < len(text):
        parts.append(_text(text[position:], token.level))
    return parts


def _text(content: str, level: int) -> Token:
    return Token("text", "", 0, level=level, content=content)


def _bare_links(state: Any) -> None:
    md = state.md
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = block.children
        if not any(
            t.type == "text" and ("://" in t.content or "www." in t.content) for t in children
        ):
            continue
        out: list[Token] = []
        depth = 0  # inside a link already: its text stays as written
        for child in children:
            if child.type == "link_open":
                depth += 1
            elif child.type == "link_close":
                depth -= 1
            split = _linked(child, md) if child.type == "text" and not depth else None
            out.extend(split or (child,))
        block.children = out


def use_bare_links(md: MarkdownIt) -> None:
    """Link bare addresses once the inline text is parsed and joined."""
    md.core.ruler.push("bare_links", _bare_links)
