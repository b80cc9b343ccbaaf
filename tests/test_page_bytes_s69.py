"""Page bytes, session 69: the page of pi-large-session was 10 B under the product target
(our HTML at most 0.8 x the bytes of Pi's own export), so no change to page.js could land.

The inline scripts are now minified by a tokenizer (``assets.minify_js``) that drops every
space and line break the script reads the same without, and an entry no longer opens with
a line break before its header. Here: the room that made is kept, and the minified scripts
are checked against an independent JavaScript parser (esprima, installed with the pinned
Pi): the same tokens and the same syntax tree (so the same places for semicolons) as the
source, and ``node --check`` accepts them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from exporter.render import asset_dir
from exporter.render.assets import head_script, live_css_and_script, minify_js, shared_script
from tests.conftest import FIXTURES_DIR, unavailable

#: Bytes of Pi 0.73.1's own export of pi-large-session.jsonl (bench/RESULTS.md; Pi is not
#: run here).
PI_LARGE_SESSION_BYTES = 1_613_051
#: Room kept under the product target on that page: it was 10 B before session 69, 4,969 B
#: after it; a page change may spend the difference down to this.
KEPT_HEADROOM = 3_000

#: Reads JavaScript files named on its command line (source, then minified, in pairs) with
#: esprima and prints, per pair, whether their tokens and syntax trees are equal, and how
#: many tokens the minified file has and how many bytes stand between them.
COMPARE_JS = r"""
const esprima = require(process.env.ESPRIMA);
const fs = require("fs");
const files = process.argv.slice(2), out = [];
const plain = (node) => JSON.stringify(node);
for (let i = 0; i < files.length; i += 2) {
  const source = fs.readFileSync(files[i], "utf8"), small = fs.readFileSync(files[i + 1], "utf8");
  const words = (js) => esprima.tokenize(js).map((t) => t.type + " " + t.value);
  const ranged = esprima.tokenize(small, { range: true });
  let between = 0;
  for (let k = 1; k < ranged.length; k++) between += ranged[k].range[0] - ranged[k - 1].range[1];
  out.push({
    tokens: plain(words(source)) === plain(words(small)),
    tree: plain(esprima.parseScript(source)) === plain(esprima.parseScript(small)),
    count: ranged.length,
    between: between,
  });
}
console.log(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def compare_js(pi_home: Path, tmp_path_factory: pytest.TempPathFactory):
    """``compare(pairs)``: esprima's verdict on (source, minified) pairs of scripts."""
    esprima = pi_home / "node_modules" / "esprima"
    if not (esprima / "package.json").is_file():
        unavailable(f"esprima is missing from the pinned Pi install ({esprima})")
    folder = tmp_path_factory.mktemp("compare-js")
    script = folder / "compare.js"
    script.write_text(COMPARE_JS, encoding="utf-8")

    def compare(pairs: list[tuple[str, str]]) -> list[dict]:
        paths = []
        for number, pair in enumerate(pairs):
            for side, text in zip(("source", "min"), pair, strict=True):
                path = folder / f"{number}-{side}.js"
                path.write_text(text, encoding="utf-8")
                paths.append(str(path))
        done = subprocess.run(
            ["node", str(script), *paths],
            capture_output=True,
            text=True,
            encoding="utf-8",
            env={**os.environ, "ESPRIMA": str(esprima)},
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout)

    return compare


def shipped_scripts() -> dict[str, tuple[str, str]]:
    """Each inline script a page or index carries: (its source, what ships)."""
    folder = asset_dir("static")

    def read(name: str) -> str:
        return (folder / name).read_text(encoding="utf-8")

    with_theme = {
        name: ("\n".join((read("theme.js"), read(name))), shared_script(folder, name))
        for name in ("page.js", "index.js")
    }
    return {
        **with_theme,
        "live.js": (read("live.js"), live_css_and_script()[1]),
        "theme-head.js": (read("theme-head.js"), head_script()),
    }


def node_accepts(js: str, path: Path) -> subprocess.CompletedProcess[str]:
    """``node --check`` on ``js`` (a syntax check, nothing runs)."""
    path.write_text(js, encoding="utf-8")
    return subprocess.run(
        ["node", "--check", str(path)], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture(scope="module")
def shipped(compare_js) -> dict[str, tuple[str, dict]]:
    """Each shipped script's minified text and esprima's verdict on it (read once)."""
    scripts = shipped_scripts()
    verdicts = compare_js(list(scripts.values()))
    return {
        name: (small, verdict)
        for (name, (_, small)), verdict in zip(scripts.items(), verdicts, strict=True)
    }


def test_shipped_scripts_read_as_their_source(shipped, node: str, tmp_path: Path) -> None:
    """Every inline script has its source's tokens and syntax tree, and node parses it."""
    for name, (small, verdict) in shipped.items():
        assert verdict["tokens"], f"{name}: the minified script's tokens differ"
        assert verdict["tree"], f"{name}: the minified script parses to another program"
        checked = node_accepts(small, tmp_path / name)
        assert checked.returncode == 0, f"{name}: {checked.stderr}"


def test_shipped_scripts_keep_only_the_spaces_they_need(shipped) -> None:
    """Between the tokens of a shipped script stand only the spaces that keep two words
    apart and the line breaks that may decide where a statement ends: page.js had 4,792
    bytes there for its 10,960 tokens when only comments and indentation went, 502 now."""
    for name, (_, verdict) in shipped.items():
        assert verdict["between"] * 15 <= verdict["count"], (name, verdict)


#: Snippets whose whitespace a careless minifier gets wrong: operators and "//" in strings,
#: regular expressions (with / in a class, spaces, after a keyword, after a line break where
#: a / divides), template literals, and line breaks that decide where a statement ends.
TRICKY_SCRIPTS = [
    "var s = \"a + b // c\", t = 'x = /y/ ; z';\nf(s, t);\n",
    "var r = /[/]\\/ +x/g, ok = / characters/.test(s);\nif (r.test(s)) g();\n",
    "function f(s) {\n  return /^a b$/.test(s) || typeof /x/ === 'object';\n}\n",
    "var q = a\n/re/g.exec(s);\nvar d = a / b / c;\n",
    "var u = `http://${ host + '/x' }//${ { a: 1 }.a } ${ `in ${ n }` }` + `\ntwo lines`;\n",
    "a\n++b\nc\n--\nd\n",
    "function g() {\n  return\n  x + 1;\n}\n",
    "for (;;) {\n  break\n  label;\n}\n",
    "var v = w\n(function () { return 1; })();\nvar k = m\n[0];\n",
    "x = a + +b - -c + ++d - --e;\ny = a-- > b && i < !c;\nz = 1 .toString() + (p ? .5 : 1);\n",
    "var o = { a: 1,\n  b: 2 }\nvar p = [1,\n  2]\nvar n = o\n.a\n",
    'var tag = "</scr" + "ipt>", cmt = "<!-- x -->";\ndone()\n',
]


def test_tricky_scripts_keep_their_meaning(compare_js, node: str, tmp_path: Path) -> None:
    """Strings, regular expressions, template literals and statement-ending line breaks
    (``a\\n++b``, ``return\\nx``) read the same after minifying."""
    pairs = [(source, minify_js(source)) for source in TRICKY_SCRIPTS]
    for (source, small), verdict in zip(pairs, compare_js(pairs), strict=True):
        assert verdict["tokens"] and verdict["tree"], (source, small)
        assert len(small) <= len(source)
        checked = node_accepts(small, tmp_path / "tricky.js")
        assert checked.returncode == 0, (small, checked.stderr)


def test_a_script_the_minifier_cannot_read_is_shipped_as_written() -> None:
    """Where a "/" after "}" may divide or start a regular expression, the minifier cannot
    tell without parsing: it changes nothing rather than guess (nor where a string never
    ends)."""
    for source in ("x = {} / 2;", "if (a) {}\n/b/.test(c);", "var s = 'open;"):
        assert minify_js(source).rstrip("\n") == source


def test_the_large_session_keeps_room_under_the_bytes_target(tmp_path: Path) -> None:
    """pi-large-session's page (the one nearest the target) stays ``KEPT_HEADROOM`` bytes
    under 0.8 x Pi's export of it, and no entry opens with a line break (645 B there)."""
    source = FIXTURES_DIR / "pi-large-session.jsonl"
    if not source.is_file():
        pytest.fail(f"fixture missing: {source} (set PI_SHARED_DIR)")
    out = tmp_path / "large.html"
    done = subprocess.run(
        [sys.executable, "-m", "exporter", "export", str(source), "-o", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    page = out.read_bytes()
    limit = 0.8 * PI_LARGE_SESSION_BYTES - KEPT_HEADROOM
    assert len(page) <= limit, f"{len(page):,} B > {limit:,.0f} B"
    assert not re.search(rb"<article [^>]*>\s+<header>", page)
