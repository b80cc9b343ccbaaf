"""Session 69: a deep link's highlight ran out before the page was there to see.

Opening ``page.html#entry`` marks the entry (an accent outline) for 2 s. The 2 s were
counted from when page.js first ran, while a big page was still loading: on a slow
machine the mark was gone, or nearly, by the time the page was shown (a test measured up
to 3.6 s between the mark and the first look after the load event). The 2 s now start
once the page has loaded (page.js ``afterLoad``, which also knows gisthost's pages).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from tests.conftest import FIXTURES_DIR

pytest_plugins = ["tests.browser_util"]
pytestmark = pytest.mark.browser

#: Records, for each 2-second timer the page sets, how far the document had loaded.
RECORD_TIMERS = """
window.__twoSecondTimers = [];
const setTimer = window.setTimeout;
window.setTimeout = function (fn, ms, ...rest) {
  if (ms === 2000) window.__twoSecondTimers.push(document.readyState);
  return setTimer.call(window, fn, ms, ...rest);
};
"""


@pytest.fixture(name="page")
def page_fixture(pw_browser: Any) -> Iterator[Any]:
    context = pw_browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(RECORD_TIMERS)
    try:
        yield context.new_page()
    finally:
        context.close()


def test_a_deep_link_s_highlight_counts_its_seconds_from_the_loaded_page(
    tmp_path: Path, page: Any
) -> None:
    out = tmp_path / "large.html"
    source = FIXTURES_DIR / "pi-large-session.jsonl"
    result = CliRunner().invoke(cli, ["export", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    anchors = re.findall(
        r'<article data-entry-id="[^"]*" class="[^"]*" id="([^"]+)"', out.read_text("utf-8")
    )
    target = anchors[len(anchors) // 2]  # deep in the page
    page.goto(f"{out.as_uri()}#{target}", wait_until="load")
    page.wait_for_function("() => window.__twoSecondTimers.length > 0")
    assert page.evaluate(f"document.getElementById({target!r}).classList.contains('highlight')")
    assert set(page.evaluate("window.__twoSecondTimers")) == {"complete"}
    # ...and then it goes (the page's CSP allows no eval: a function, not an expression)
    page.wait_for_function(
        "id => !document.getElementById(id).classList.contains('highlight')", arg=target
    )
