"""`exporter` used as a Python library (session 67): what a program passes by mistake is
refused with a clear error of the documented kind, and the library leaves the calling
process's global state (multiprocessing, the GC, Python's integer-digit limit) as it was.

Scenarios that depend on a process's global state run in a fresh interpreter: the test
process's has been changed by other tests (the CLI raises the digit limit for good)."""

from __future__ import annotations

import gc
import importlib.resources
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import exporter
from exporter import SessionFormatError, load_session, parse_session_bytes
from exporter.cli import cli
from exporter.policy import RedactionPolicy
from exporter.prepare import prepare_session
from exporter.redact import apply_policy
from exporter.render import RenderOptions, _session_frozen, render_session
from exporter.search import Pattern, search_file
from tests.browser_util import embedded_jsonl
from tests.conftest import FIXTURES_DIR

REPO = Path(__file__).resolve().parents[1]
BRANCHED = FIXTURES_DIR / "pi-branched-1.jsonl"


def _fresh_python(code: str, cwd: Path) -> str:
    """Run ``code`` in a new interpreter (this checkout first on its path); its stdout."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


# --- 1: a policy's fields, checked when it is made ----------------------------------------


def test_a_bare_string_where_a_tuple_of_secrets_belongs_is_refused() -> None:
    """``secrets="webapp"`` was read one character at a time, each under MIN_LITERAL: the
    value went out in clear and the report said no secret was found."""
    with pytest.raises(TypeError, match=r"secrets=.*tuple of strings, not one str") as caught:
        RedactionPolicy(secrets="webapp")
    assert "webapp" not in str(caught.value)  # (a secret is never said back)
    for name in ("exclude", "auth_tokens", "env_values"):
        with pytest.raises(TypeError, match=name):
            RedactionPolicy(**{name: "abcdef"})
    with pytest.raises(TypeError, match=r"secrets=\.\.\.\): item 1 is bytes, not a str"):
        RedactionPolicy(secrets=("webapp-secret", b"other"))
    with pytest.raises(TypeError, match="patterns"):
        RedactionPolicy(patterns=("cust", "CUST-[0-9]+"))  # one pair, not pairs


def test_a_list_of_secrets_is_taken_and_redacted() -> None:
    """A list (or any iterable) of strings is what a tuple is: kept as a tuple, and each
    value is replaced in the copy."""
    session = load_session(BRANCHED)
    policy = RedactionPolicy(secrets=["webapp"], env_secrets=False)
    assert policy.secrets == ("webapp",)
    copy, report = apply_policy(session, policy)
    assert "webapp" in render_session(session, RenderOptions(embed_jsonl=False))
    assert "webapp" not in render_session(copy, RenderOptions(embed_jsonl=False))
    assert report.counts.get("literal-secret", 0) > 0


def test_a_regex_that_does_not_compile_is_a_value_error_naming_its_pattern() -> None:
    """It failed late, in apply_policy, as a bare ``re.error``; now the policy is refused
    in the words of the CLI's ``--redact-pattern NAME=REGEX`` check."""
    with pytest.raises(ValueError, match="cust: the regex does not compile"):
        RedactionPolicy(patterns=(("cust", "("),))
    with pytest.raises(ValueError, match="cust: the regex matches empty text"):
        RedactionPolicy(patterns=(("cust", "x*"),))
    with pytest.raises(ValueError, match="a name is 1-32 lowercase letters"):
        RedactionPolicy(patterns=(("Customer ID", "CUST-[0-9]+"),))
    good = RedactionPolicy(patterns=[("cust", "CUST-[0-9]+")])
    assert good.patterns == (("cust", "CUST-[0-9]+"),)


def test_an_exclude_that_names_no_entry_is_refused_by_the_library() -> None:
    """``exclude=("nope",)`` was ignored by apply_policy and prepare_session: a typo shared
    the entry it meant to leave out. The CLI refuses it before any work, in its own words."""
    from exporter.share_cuts import UnknownExclusionError  # (new: imported here)

    session = load_session(BRANCHED)
    known = session.active_path[-1]
    for prepare in (apply_policy, prepare_session):
        with pytest.raises(UnknownExclusionError, match="exclude: no entry 'nope' in this"):
            prepare(session, RedactionPolicy(exclude=(known, "nope"), env_secrets=False))
    with pytest.raises(ValueError):  # (one of ValueError's kind, for a caller catching that)
        prepare_session(session, RedactionPolicy(redact=False, exclude=("nope/",)))
    copy, _ = prepare_session(session, RedactionPolicy(redact=False, exclude=(known,)))
    assert known not in copy.by_id


def test_the_cli_still_refuses_an_unknown_exclude_in_its_own_words(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["redact", str(BRANCHED), "-o", str(tmp_path / "out.jsonl"), "--exclude", "zz99"]
    )
    assert result.exit_code == 1
    assert "--exclude: no entry zz99 in this session; nothing was written" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "out.jsonl").exists()


# --- 2: multiprocessing's global state ----------------------------------------------------


def test_a_site_build_in_a_threaded_program_leaves_multiprocessing_as_it_was(
    tmp_path: Path,
) -> None:
    """With a thread running, the build uses a forkserver; starting it (and its workers)
    fixed the start method ("fork") and left the preload list changed: the program's own
    ``set_start_method("spawn")`` then raised "context has already been set"."""
    files = [str(FIXTURES_DIR / f"pi-branched-{n}.jsonl") for n in (1, 2, 3)]
    out = _fresh_python(
        f"""
        import json, multiprocessing, threading
        from multiprocessing import forkserver
        from pathlib import Path
        from exporter.site import build_site

        stop = threading.Event()
        threading.Thread(target=stop.wait, daemon=True).start()  # a threaded program
        forkserver.set_forkserver_preload(["json"])  # the program's own choice
        before = (multiprocessing.get_start_method(allow_none=True),
                  list(forkserver._forkserver._preload_modules))
        report = build_site([Path(f) for f in {files!r}], Path("site"), jobs=2)
        after = (multiprocessing.get_start_method(allow_none=True),
                 list(forkserver._forkserver._preload_modules))
        multiprocessing.set_start_method("spawn")  # raised RuntimeError
        print(json.dumps({{"before": before, "after": after, "failed": len(report.failed),
                          "pages": len(list(Path("site").rglob("*.html")))}}))
        """,
        tmp_path,
    )
    said = json.loads(out.strip().splitlines()[-1])
    assert said["failed"] == 0 and said["pages"] >= 4  # the three pages and the index
    assert said["before"] == [None, ["json"]]
    assert said["after"] == said["before"]


# --- 3: the GC -----------------------------------------------------------------------------


def test_rendering_keeps_the_caller_s_frozen_objects_and_threshold(tmp_path: Path) -> None:
    """``gc.freeze()`` before a render was undone by it (``gc.unfreeze()`` thaws all)."""
    out = _fresh_python(
        f"""
        import gc, json, threading
        from exporter import load_session
        from exporter.render import RenderOptions, render_session

        session = load_session({str(BRANCHED)!r})
        kept = [[n] for n in range(5000)]  # the caller's long-lived objects
        gc.freeze()
        frozen = gc.get_freeze_count()
        render_session(session, RenderOptions(jobs=1))
        after_one = gc.get_freeze_count()
        threads = [threading.Thread(target=render_session, args=(session,)) for _ in range(4)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print(json.dumps({{"frozen": frozen, "after_one": after_one,
                          "after_threads": gc.get_freeze_count(),
                          "threshold": gc.get_threshold()}}))
        """,
        tmp_path,
    )
    said = json.loads(out.strip().splitlines()[-1])
    assert said["frozen"] > 5000
    # (frozen objects that die leave the count: a few, not all of them)
    assert said["after_one"] > 0.9 * said["frozen"]
    assert said["after_threads"] > 0.9 * said["frozen"]
    assert said["threshold"] == list(gc.get_threshold())


def test_renders_whose_ends_cross_restore_the_threshold_and_stay_frozen_to_the_end() -> None:
    """Two renders in threads, the first to start ending first: the second saved the first's
    raised threshold and put it back last (left at 100,000 for good), and the first one's
    end unfroze the session under the second. The renders' order is made here as the
    threads made it."""
    if gc.get_freeze_count():  # (this test process freezes nothing of its own)
        pytest.skip("objects are frozen in this process")
    threshold = gc.get_threshold()
    first, second = _session_frozen(), _session_frozen()
    try:
        first.__enter__()
        second.__enter__()
        first.__exit__(None, None, None)
        between = (gc.get_freeze_count(), gc.get_threshold())
        second.__exit__(None, None, None)
        after = (gc.get_freeze_count(), gc.get_threshold())
    finally:  # this process's GC as it was, whatever happened
        gc.set_threshold(*threshold)
        gc.unfreeze()
    assert between[0] > 0  # the second render's session is still frozen
    assert between[1][0] >= 100_000
    assert after == (0, threshold)


# --- 4: integers of more than 4,300 digits -------------------------------------------------


def _long_int_session(path: Path) -> str:
    """pi-branched-1 with a 5,000-digit integer in a user entry that also holds a token."""
    token = "ghp_" + "A1b2C3d4E5" * 3 + "ABCDEF"
    lines = BRANCHED.read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(lines):
        value = json.loads(line)
        if value.get("type") == "message" and value["message"].get("role") == "user":
            content = value["message"]["content"]
            said = {"type": "text", "text": f"my token {token}"}
            if isinstance(content, list):
                content.append(said)
            else:
                value["message"]["content"] = f"{content} my token {token}"
            lines[index] = json.dumps(value)[:-1] + ', "big": ' + "7" * 5000 + "}"
            break
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return token


def test_what_the_loader_reads_the_writers_write_in_library_use(tmp_path: Path) -> None:
    """load_session reads a 5,000-digit integer (raising Python's limit around the parse);
    the redacted page (its embedded copy) and session_to_jsonl raised a bare ValueError from
    json.encoder outside the CLI, which alone raised the limit. The process's limit stays."""
    source = tmp_path / "long.jsonl"
    token = _long_int_session(source)
    out = _fresh_python(
        f"""
        import json, sys
        from exporter import load_session
        from exporter.jsonl_out import session_to_jsonl
        from exporter.policy import RedactionPolicy
        from exporter.redact import apply_policy
        from exporter.render import RenderOptions, render_session

        session = load_session({str(source)!r})
        redacted, _ = apply_policy(session, RedactionPolicy(env_secrets=False))
        page = render_session(redacted, RenderOptions(pi_session_data=True))
        open("page.html", "w", encoding="utf-8").write(page)
        open("copy.jsonl", "w", encoding="utf-8").write(session_to_jsonl(session))
        print(json.dumps({{"damaged": len(session.damaged),
                          "limit": sys.get_int_max_str_digits()}}))
        """,
        tmp_path,
    )
    said = json.loads(out.strip().splitlines()[-1])
    assert said == {"damaged": 0, "limit": 4300}
    embedded = b"".join(embedded_jsonl((tmp_path / "page.html").read_text(encoding="utf-8")))
    assert b'"big":' + b"7" * 5000 in embedded
    assert token.encode() not in embedded
    copy = (tmp_path / "copy.jsonl").read_text(encoding="utf-8")
    assert '"big":' + "7" * 5000 in copy
    # what was written reads back as the same records
    again = parse_session_bytes(copy.encode("utf-8"))
    assert [e.raw for e in again.entries] == [e.raw for e in load_session(source).entries]


def test_loads_in_threads_whose_ends_cross_leave_the_digit_limit_as_it_was(
    tmp_path: Path,
) -> None:
    """Each thread raised the limit around its line and put back what it found: the second
    one in found the first's raised limit, put that back last, and the limit stayed raised
    for good (and the first one out lowered it under the second). The threads' order is
    made here: the first one's line ends while the second one's is being read."""
    out = _fresh_python(
        """
        import json, sys, threading
        from exporter.jsonl_in import _with_long_ints

        line = '{"n": ' + "7" * 5000 + "}"
        second_in, first_out = threading.Event(), threading.Event()
        read = {}

        def first(text):
            assert second_in.wait(60)
            return json.loads(text)

        def second(text):
            second_in.set()
            assert first_out.wait(60)
            return json.loads(text)  # read while the first one has left

        def run(name, parse):
            read[name] = _with_long_ints(parse, line)
            if name == "first":
                first_out.set()

        threads = [threading.Thread(target=run, args=("first", first))]
        threads[0].start()
        threads.append(threading.Thread(target=run, args=("second", second)))
        threads[1].start()
        [t.join() for t in threads]
        print(json.dumps({"read": sorted(name for name, value in read.items()
                                         if isinstance(value, dict)),
                          "limit": sys.get_int_max_str_digits()}))
        """,
        tmp_path,
    )
    assert json.loads(out.strip().splitlines()[-1]) == {
        "read": ["first", "second"],
        "limit": 4300,
    }


# --- 5, 6: paths and inputs as a program passes them -----------------------------------------


def test_a_bytes_path_loads_as_a_str_path_and_renders(tmp_path: Path) -> None:
    """``load_session(b"/path/file.jsonl")`` kept the path as bytes, and render_session
    then failed in the page's footer (a TypeError from pathlib)."""
    odd = tmp_path / os.fsdecode(b"caf\xe9-session.jsonl")  # not UTF-8: kept as a surrogate
    odd.write_bytes(BRANCHED.read_bytes())
    session = load_session(os.fsencode(odd))
    assert isinstance(session.path, str) and session.path == str(odd)
    page = render_session(session, RenderOptions(embed_jsonl=False))
    assert "-session.jsonl" in page and "b&#39;" not in page


def test_an_unknown_leaf_is_a_session_format_error_with_the_same_message() -> None:
    """A KeyError (outside load_session's documented SessionFormatError and OSError),
    whose str() quoted the message once more."""
    with pytest.raises(SessionFormatError) as caught:
        load_session(BRANCHED, leaf_id="nope")
    assert str(caught.value) == "no entry with id 'nope' in this session"
    with pytest.raises(SessionFormatError, match="no entry with id 'nope'"):
        parse_session_bytes(BRANCHED.read_bytes(), leaf_id="nope")
    inner = load_session(BRANCHED).entries[3].id
    assert load_session(BRANCHED, leaf_id=inner).leaf_id == inner


def test_session_bytes_may_be_a_memoryview_but_not_text() -> None:
    data = BRANCHED.read_bytes()
    expected = [e.raw for e in parse_session_bytes(data).entries]
    assert [e.raw for e in parse_session_bytes(memoryview(data)).entries] == expected
    buffer = bytearray(data)
    session = parse_session_bytes(buffer)
    buffer[:] = b"x" * len(buffer)  # the caller's buffer changes: the session's bytes do not
    assert session.source_data == data
    with pytest.raises(TypeError, match="takes the session's bytes, not a str"):
        parse_session_bytes(data.decode("utf-8"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not int"):
        parse_session_bytes(3)  # type: ignore[arg-type]


def test_search_file_takes_a_str_path() -> None:
    """A str path failed with AttributeError where the sub-agents' folder is looked for."""
    by_path = search_file(BRANCHED, Pattern("hello"))
    by_str = search_file(str(BRANCHED), Pattern("hello"))
    assert by_str == by_path and by_str["matches"]


# --- 7: the package -------------------------------------------------------------------------


def test_dir_of_the_package_shows_its_public_names_and_it_says_it_is_typed() -> None:
    """Its names load lazily (``__getattr__``), so ``dir(exporter)`` showed only private
    ones; ``py.typed`` tells type checkers the package's hints are meant for them."""
    names = dir(exporter)
    for name in ("load_session", "parse_session_bytes", "Session", "SessionFormatError"):
        assert name in names
        assert getattr(exporter, name) is not None
    assert not [name for name in names if name.startswith("_") and name != "__version__"]
    assert importlib.resources.files("exporter").joinpath("py.typed").is_file()
