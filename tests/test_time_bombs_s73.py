"""Stop 73 (a reviewer's question): a message of many bare web addresses took minutes to
render (1 MB: over 100 s). Each address is a link whose words markdown-it gives as its
tokens, and the check "does this link show any words?" walked the message's tokens from
the first one to the link (``itertools.islice``): quadratic in the links."""

from __future__ import annotations

from typing import Any

from exporter.loader import load_session
from exporter.render import RenderOptions, render_session
from tests.conftest import Build, cpu_time_limit

#: 60,000 addresses (840 KB): about 3 s of CPU, where the quadratic walk took ~30 s.
ADDRESSES = 60_000


def test_a_message_of_many_bare_addresses_renders_in_linear_time(write_session: Any) -> None:
    text = "http://a.b/<x " * ADDRESSES
    lines = [Build.header(), Build.user("u1", None, text), Build.assistant("a1", "u1")]
    path = write_session(lines)
    session = load_session(path)
    with cpu_time_limit(15):
        page = render_session(session, RenderOptions())
    assert page.count('href="http://a.b/"') == ADDRESSES  # each address a link, none lost
