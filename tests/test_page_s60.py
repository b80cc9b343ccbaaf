"""Stop 60 (helper hunt: `share` end to end): gisthost, the viewer `share` links to, writes
the page into its own document with ``document.write`` and never closes it, so the page
stays "loading" and no load event comes: the Copy buttons, put off until load, never came."""

from __future__ import annotations

from typing import Any

from tests.browser_util import PageServer, render_fixture

pytest_plugins = ["tests.browser_util"]

#: What gisthost does with a gist's HTML file, in our own words: fetch it, then write it
#: over the viewer's document, which is left open.
HOST = """<!doctype html><html><head><meta charset="utf-8"><title>host</title></head>
<body><p>loading the gist</p><script>
fetch("written.html").then(function (r) { return r.text(); })
  .then(function (html) { document.open(); document.write(html); });
</script></body></html>"""


def _copy_buttons(page: Any) -> int:
    return page.evaluate("() => document.querySelectorAll('.copy-btn').length")


def test_a_page_written_into_a_viewers_open_document_gets_its_copy_buttons(
    pw_browser: Any, page_server: PageServer
) -> None:
    html = render_fixture("pi-branched-1.jsonl")
    direct_url = page_server.publish("direct.html", html)
    page_server.publish("written.html", html)
    host_url = page_server.publish("host.html", HOST)
    context = pw_browser.new_context()
    try:
        direct = context.new_page()
        direct.goto(direct_url, wait_until="load")
        direct.wait_for_function("() => document.querySelectorAll('.copy-btn').length > 0")
        expected = _copy_buttons(direct)
        hosted = context.new_page()
        hosted.goto(host_url, wait_until="load")
        hosted.wait_for_function("() => document.querySelector('article.entry') !== null")
        assert hosted.evaluate("() => document.readyState") == "loading"  # never closed
        hosted.wait_for_function(
            "n => document.querySelectorAll('.copy-btn').length === n", arg=expected
        )
        assert _copy_buttons(hosted) == expected > 0
    finally:
        context.close()
