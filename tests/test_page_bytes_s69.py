"""Page bytes, session 69: the page of pi-large-session was 10 B under the product target
(our HTML at most 0.8 x the bytes of Pi's own export), so no change to page.js could land.

The inline scripts are now minified by a tokenizer (``assets.minify_js``) that drops every
space and line break the script reads the same without, and an entry no longer opens with
a line break before its header. Here: the room that made is kept, and the minified scripts
are checked against an independent JavaScript parser (esprima, installed with the pinned
Pi): the same tokens and the same syntax tree (so the same places for semicolons) as the
source, and ``node --check`` accepts them. esprima 4.0.1 reads ES2017: where it cannot parse
a source (``a?.b``, ``a ?? b``, ``{...a}``, class fields) the tree is left uncompared, with
a warning, and ``node --check`` and esprima's tokens (where it can read them) decide.

A minified script must also never hold more ``</script``, ``<script`` or ``<!--`` than its
source: it is inlined into HTML, where those end the element or change where it ends.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from exporter.render import asset_dir, assets
from exporter.render.assets import head_script, live_css_and_script, minify_js, shared_script
from tests.conftest import FIXTURES_DIR, unavailable

#: Bytes of Pi 0.73.1's own export of pi-large-session.jsonl (bench/RESULTS.md; Pi is not
#: run here).
PI_LARGE_SESSION_BYTES = 1_613_051
#: Room kept under the product target on that page: it was 10 B before session 69, 4,969 B
#: after it; a page change may spend the difference down to this.
KEPT_HEADROOM = 3_000

#: Reads JavaScript files named on its command line (source, then minified, in pairs) with
#: esprima and prints, per pair, whether their tokens and syntax trees are equal (null where
#: esprima cannot read the source: its age, not the minifier's doing; false where it reads
#: the source but not the minified text), why not, and how many tokens the minified file
#: has and how many bytes stand between them (null where esprima cannot tokenize it).
COMPARE_JS = r"""
const esprima = require(process.env.ESPRIMA);
const fs = require("fs");
const files = process.argv.slice(2), out = [];
const plain = (value) => JSON.stringify(value);
const attempt = (read) => {
  try {
    return { value: plain(read()) };
  } catch (error) {
    return { error: error.message };
  }
};
const same = (what, source, small, why) => {
  if (source.error !== undefined) {
    why.push(`esprima 4.0.1 cannot ${what} the source: ${source.error}`);
    return null;
  }
  if (small.error !== undefined) {
    why.push(`esprima cannot ${what} the minified script: ${small.error}`);
    return false;
  }
  return source.value === small.value;
};
for (let i = 0; i < files.length; i += 2) {
  const source = fs.readFileSync(files[i], "utf8"), small = fs.readFileSync(files[i + 1], "utf8");
  const words = (js) => () => esprima.tokenize(js).map((t) => t.type + " " + t.value);
  const tree = (js) => () => esprima.parseScript(js);
  const why = [];
  const verdict = {
    tokens: same("tokenize", attempt(words(source)), attempt(words(small)), why),
    tree: same("parse", attempt(tree(source)), attempt(tree(small)), why),
    why: why.join("; "), count: null, between: null,
  };
  try {
    const ranged = esprima.tokenize(small, { range: true });
    verdict.count = ranged.length;
    verdict.between = 0;
    for (let k = 1; k < ranged.length; k++) {
      verdict.between += ranged[k].range[0] - ranged[k - 1].range[1];
    }
  } catch (error) { /* counted by the minifier's own tokenizer instead */ }
  out.push(verdict);
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


def html_markup_gained(source: str, small: str) -> list[str]:
    """What ``small`` holds more of than ``source`` among ``</script``, ``<script`` and
    ``<!--`` (any case, as the HTML parser reads them)."""
    return [
        markup
        for markup in ("</script", "<script", "<!--")
        if small.lower().count(markup) > source.lower().count(markup)
    ]


def assert_same_program(label: str, source: str, small: str, verdict: dict, tmp_path: Path) -> None:
    """``small`` reads as ``source``: esprima's syntax tree where esprima can parse the
    source, else (a warning says so) esprima's tokens where it can read them, and node
    parses both. (esprima's tokenizer guesses a "/" without parsing, ``o.if (a) / 2`` as a
    regular expression: where its parser reads the same tree, a token difference only
    warns.)"""
    assert verdict["tree"] is not False, f"{label}: another program ({verdict['why']}): {small!r}"
    if verdict["tree"] is None:
        assert verdict["tokens"] is not False, f"{label}: tokens differ: {small!r}"
        warnings.warn(
            f"{label}: tree not compared, {verdict['why']}; checked by node --check"
            + (" and esprima's tokens" if verdict["tokens"] else ""),
            stacklevel=2,
        )
        read = node_accepts(source, tmp_path / "source.js")
        assert read.returncode == 0, f"{label}: node cannot parse the source: {read.stderr}"
    elif verdict["tokens"] is False:
        warnings.warn(f"{label}: esprima's tokens differ, its tree does not", stacklevel=2)
    checked = node_accepts(small, tmp_path / "min.js")
    assert checked.returncode == 0, f"{label}: {small!r}: {checked.stderr}"


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
def shipped(compare_js) -> dict[str, tuple[str, str, dict]]:
    """Each shipped script's source, minified text and esprima's verdict on them (read
    once)."""
    scripts = shipped_scripts()
    verdicts = compare_js(list(scripts.values()))
    return {
        name: (source, small, verdict)
        for (name, (source, small)), verdict in zip(scripts.items(), verdicts, strict=True)
    }


def test_shipped_scripts_read_as_their_source(shipped, node: str, tmp_path: Path) -> None:
    """Every inline script has its source's tokens and syntax tree, and node parses it."""
    for name, (source, small, verdict) in shipped.items():
        assert_same_program(name, source, small, verdict, tmp_path)


def test_shipped_scripts_gain_no_html_markup(shipped) -> None:
    """No inline script holds a ``</script``, ``<script`` or ``<!--`` its source did not:
    the page would end the script there, or read the rest of the page as script."""
    for name, (source, small, _) in shipped.items():
        assert not html_markup_gained(source, small), name


def test_shipped_scripts_keep_only_the_spaces_they_need(shipped) -> None:
    """Between the tokens of a shipped script stand only the spaces that keep two words
    apart and the line breaks that may decide where a statement ends: page.js had 4,792
    bytes there for its 10,960 tokens when only comments and indentation went, 502 now.
    (Counted by the minifier's own tokenizer where esprima cannot tokenize the script.)"""
    for name, (_, small, verdict) in shipped.items():
        count, between = verdict["count"], verdict["between"]
        if count is None:
            tokens = assets._js_tokens(small)
            count, between = len(tokens), len(small) - sum(len(text) for _, text, _ in tokens)
        assert between * 15 <= count, (name, count, between)


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
    # after the ")" of if/while/for/with a statement starts: "/" opens a regular expression
    'var r = 0, s = " "; if (s) /^ +$/.test(s) ? r = 1 : r = 2;\n',
    "while (r < 1) / a b/.test('a b') ? r += 2 : r += 3;\n",
    "for (k in o) / a b/.test(k) && f(k);\nwith (o) / a b/.test(s);\n",
    # "<" then "/", "!" or "script": the page would read an end tag or an escaped part
    "var a = 1; a << /script>/.source.length;\n",
    "a <<\n!--b;\n",
    "a < \nSCRIPT;\na < /b/.test(c);\n",
]


@pytest.mark.parametrize("source", TRICKY_SCRIPTS)
def test_tricky_scripts_keep_their_meaning(
    source: str, compare_js, node: str, tmp_path: Path
) -> None:
    """Strings, regular expressions, template literals and statement-ending line breaks
    (``a\\n++b``, ``return\\nx``) read the same after minifying, and no ``</script``,
    ``<script`` or ``<!--`` appears."""
    small = minify_js(source)
    [verdict] = compare_js([(source, small)])
    assert_same_program(repr(source), source, small, verdict, tmp_path)
    assert len(small) <= len(source)
    assert not html_markup_gained(source, small), small


#: Runs each script of a JSON list (the file named on the command line) in a fresh node
#: context and prints, per script, its completion value as JSON or the error it threw.
RUN_JS = r"""
const vm = require("vm");
const scripts = JSON.parse(require("fs").readFileSync(process.argv[2], "utf8"));
const results = scripts.map((script) => {
  try {
    return { value: JSON.stringify(vm.runInNewContext(script, {}, { timeout: 2000 })) };
  } catch (error) {
    return { error: `${error.name}: ${error.message}` };
  }
});
console.log(JSON.stringify(results));
"""

#: Scripts whose value tells a division from a regular expression, run before and after
#: minifying: esprima's tokenizer itself takes the "/" after ``o.in`` or ``o.if (a)`` for a
#: regular expression, so only running them tells.
EVALUATED_SCRIPTS = [
    'var r = 0, s = " "; if (s) /^ +$/.test(s) ? r = 1 : r = 2; r\n',
    "var r = 0; while (r < 1) / a b/.test('a b') ? r += 2 : r += 3; r\n",
    # after a word that is a property name (a keyword elsewhere), "/" divides
    'var o = {in: 8}; var t = o.in / 2 + "/  x  "; // "\nt\n',
    'var o = {of: 6}; var t = o?.of / 2 + "/  y  "; // "\nt\n',
    'var q = {return: 4}; var t = q.return / 2 + "/  z  "; // "\nt\n',
    # the ")" of a call to a method named "if" is no if's: "/" divides
    'var o = {if: (a) => a * 4}; var t = o.if (2) / 2 + "/  w  "; // "\nt\n',
    "class A { x\n*g() { yield 1; } }\n[...new A().g()]\n",
]


@pytest.mark.parametrize("source", EVALUATED_SCRIPTS)
def test_evaluated_scripts_keep_their_value(source: str, node: str, tmp_path: Path) -> None:
    """The script computes the same value minified (not an error, nor another string)."""
    small = minify_js(source)
    script, listed = tmp_path / "run.js", tmp_path / "scripts.json"
    script.write_text(RUN_JS, encoding="utf-8")
    listed.write_text(json.dumps([source, small]), encoding="utf-8")
    done = subprocess.run(
        [node, str(script), str(listed)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = json.loads(done.stdout)
    assert "value" in before, before
    assert after == before, small


#: Newer syntax than esprima 4.0.1 reads: optional chaining, ``??``, object spread, class
#: fields.
NEWER_SCRIPTS = [
    "var a = o?.b?.[0] ?? d;\nvar c = { ...a, e: 1 };\n",
    "class Box {\n  size = 1\n  static count = 0\n}\nx ||= y ?? z;\n",
]


def test_scripts_esprima_cannot_parse_are_checked_by_node(
    compare_js, node: str, tmp_path: Path
) -> None:
    """A script in syntax newer than esprima 4.0.1 is not failed for the parser's age:
    esprima's tree is skipped (with a warning) and node and esprima's tokens decide."""
    pairs = [(source, minify_js(source)) for source in NEWER_SCRIPTS]
    verdicts = compare_js(pairs)
    for (source, small), verdict in zip(pairs, verdicts, strict=True):
        assert verdict["tree"] is None, verdict  # esprima could not parse it: the fallback ran
        with pytest.warns(UserWarning, match="cannot parse the source"):
            assert_same_program(repr(source), source, small, verdict, tmp_path)
        assert len(small) < len(source)


def test_a_script_the_minifier_cannot_read_is_shipped_as_written() -> None:
    """Where a "/" after "}" may divide or start a regular expression, the minifier cannot
    tell without parsing: it changes nothing rather than guess (nor where a string never
    ends)."""
    for source in (
        "x = {} / 2;",
        "if (a) {}\n/b/.test(c);",
        "var s = 'open;",
    ):
        assert minify_js(source).rstrip("\n") == source


@pytest.mark.parametrize(
    "source",
    [
        'var of = 8, t = of / 2 + "/  x  "; // "\nt',
        'var await = 8, t = await / 2 + "/  x  "; // "\nt',
        'var yield = 8, t = yield / 2 + "/  x  "; // "\nt',
        "x = ++/ a/.lastIndex;",
    ],
)
def test_a_slash_after_a_word_that_may_be_a_keyword_ships_as_written(source: str) -> None:
    """``of``, ``await`` and ``yield`` are keywords in one place and names in another (``for
    (x of /re/…)``, ``of / 2``), and ``++``/``--`` may end an expression or start one
    (``a++ / 2`` divides, ``++/ a/.lastIndex`` does not): a "/" after one ships as written
    rather than be guessed."""
    assert minify_js(source) == source


def test_a_minified_script_that_would_gain_html_markup_is_shipped_as_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The safety net behind the spacing rules: should they ever write ``</script``,
    ``<script`` or ``<!--`` where the source had none (here: a rule that never spaces),
    the script ships as written."""
    monkeypatch.setattr(assets, "_js_gap", lambda before, after: "")
    for source in ("a < /script>/.test(b);", "a < script;", "a < !--b;"):
        assert minify_js(source) == source
    assert minify_js("a = b + c;") == "a=b+c;"


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
