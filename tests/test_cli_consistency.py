"""The same situation said the same way, with the same exit code, whichever command meets it
(the CLI review of v0.2.25, items 6, 10, 12, 16, 17, 18).

Every test runs the real command in a process of its own, in a fake home with Pi's
sessions folder; `publish` talks to the loopback fake Hub over real HTTP.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from exporter.discover import encode_cwd
from tests.conftest import REPO
from tests.fakes.hub import TOKEN, FakeHub

FIXTURES = Path(os.environ.get("PI_SHARED_DIR") or REPO.parent / "shared") / "fixtures"
FIXTURE = FIXTURES / "pi-branched-1.jsonl"  # header: 2026-11-30, /home/dev/projects/webapp
PROJECT = "/home/dev/projects/webapp"
PI_NAME = "2026-11-30T00-57-07-315Z_01a229f4-9ff2-7641-920f-f99cb5e24cb7.jsonl"
ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


@dataclass
class Home:
    """A fake home: Pi's sessions folder with one session of ``PROJECT``, a work folder."""

    base: Path
    sessions: Path
    session: Path
    work: Path
    env: dict[str, str]

    def run(self, *args: str, stdin: Path | None = None, timeout: float = 120) -> Result:
        """``pi-session ARGS`` in ``work``, as a process of its own."""
        with open(stdin or os.devnull, "rb") as source:
            done = subprocess.run(
                [sys.executable, "-m", "exporter", *args],
                cwd=self.work,
                env=self.env,
                stdin=source,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                timeout=timeout,
            )
        assert "Traceback" not in done.stderr, done.stderr
        return Result(done.returncode, done.stdout, done.stderr)


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


def _home(base: Path) -> Home:
    agent = base / "agent"
    sessions = agent / "sessions"
    folder = sessions / encode_cwd(PROJECT)
    folder.mkdir(parents=True)
    session = folder / PI_NAME
    shutil.copyfile(FIXTURE, session)
    work = base / "work"
    work.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("HF_", "HUGGING", "GH_", "GITHUB_", "PI_SESSION", "PYTEST"))
    }
    env.update(
        HOME=str(base / "home"),
        PI_CODING_AGENT_DIR=str(agent),
        XDG_CACHE_HOME=str(base / "cache"),
        XDG_CONFIG_HOME=str(base / "config"),
        XDG_STATE_HOME=str(base / "state"),
        HF_HOME=str(base / "hf"),
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        NO_PROXY="127.0.0.1,localhost",
        HTTPS_PROXY="http://127.0.0.1:9",  # anything not loopback fails fast
        HTTP_PROXY="http://127.0.0.1:9",
        PYTHONPATH=str(REPO),
        PI_SESSION_NO_LIST_CACHE="1",
    )
    return Home(base, sessions, session, work, env)


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return _home(tmp_path)


def _error(result: Result) -> str:
    """The one error line, checked to be one line with the usual prefix."""
    lines = result.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("pi-session: error: "), result.stderr
    return lines[-1].removeprefix("pi-session: error: ")


# --- 6: --report with --no-redact ---------------------------------------------------------


def test_a_report_without_redaction_follows_one_rule_in_export_and_redact(home: Home) -> None:
    """Without redaction a report lists what was left out: export refused it even with
    --exclude (which leaves entries out), and said "nothing is" where redact wrote one."""
    source = home.session.read_bytes()
    excluded = home.run(
        "export", str(home.session), "--no-redact", "--exclude", "218377f3",
        "--report", "r1.jsonl", "-o", "p1.html",
    )  # fmt: skip
    assert excluded.code == 0, excluded.stderr
    summary = json.loads((home.work / "r1.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert summary["actions"] == {"entries_excluded": 1} and summary["redacted"] is False
    for args in (
        ("export", str(home.session), "--no-redact", "--report", "r2.jsonl", "-o", "p2.html"),
        ("redact", str(home.session), "--no-redact", "--keep-hidden", "--report", "r3.jsonl",
         "-o", "c3.jsonl"),
    ):  # fmt: skip
        refused = home.run(*args)
        assert refused.code == 1, refused.stderr
        message = _error(refused)
        assert "--report" in message and "--no-redact" in message
        assert "--drop-hidden" in message and "--exclude" in message  # what would give one
        assert not (home.work / args[-3]).exists()
    # redact drops hidden entries by default: its report lists them
    dropped = home.run("redact", str(home.session), "--no-redact", "--report", "r4.jsonl",
                       "-o", "c4.jsonl")  # fmt: skip
    assert dropped.code == 0 and (home.work / "r4.jsonl").is_file(), dropped.stderr
    assert home.session.read_bytes() == source


# --- 10 and 17: no sessions here; --sessions-dir ------------------------------------------


def test_a_sessions_dir_that_is_a_file_is_said_as_a_missing_one_is(home: Home) -> None:
    """A missing --sessions-dir was exit 2 in our words, a file exit 1 in click's."""
    for command in (["list"], ["stats"], ["search", "x"], ["export", "--all", "-o", "site"]):
        for given, said in ((str(home.session), "is a file, not a folder"),
                            (str(home.base / "nowhere"), "does not exist")):  # fmt: skip
            result = home.run(*command, "--sessions-dir", given)
            assert result.code == 2, (command, result.stderr)
            assert _error(result) == f"--sessions-dir: {given} {said}", command


def test_no_sessions_here_is_said_the_same_way_by_every_command(home: Home) -> None:
    """`list` answers "which sessions are there?", and none is an answer (exit 0, no
    "error:"); the commands that work on sessions stop (exit 2). All say it in one form,
    with the other projects' sessions that are there."""
    elsewhere = str(home.base / "other-project")
    root = str(home.sessions)
    listed = home.run("list", "--cwd", elsewhere)
    assert listed.code == 0 and listed.stdout == ""
    assert "error" not in listed.stderr
    assert listed.stderr.strip() == (
        f"pi-session: no Pi sessions for {elsewhere} under {root}; 1 session of another "
        "project is there: --all lists it"
    )
    for command, then in (
        (["stats", "--all"], "drop --cwd to count it"),
        (["export", "--all", "-o", "site"], "drop --cwd to include it"),
        (["search", "x"], "--all searches it"),
    ):
        result = home.run(*command, "--cwd", elsewhere)
        assert result.code == 2, (command, result.stderr)
        assert _error(result) == (
            f"no Pi sessions for {elsewhere} under {root}; 1 session of another project is "
            f"there: {then}"
        ), command
    assert not (home.work / "site").exists()


def test_list_since_says_the_moment_it_means(home: Home) -> None:
    """`list --since 0d` said "active since 0d"; the others print the moment."""
    result = home.run("list", "--since", "0d")
    assert result.code == 0 and result.stdout == ""
    assert "since 0d" not in result.stderr
    assert re.search(r"active since \d{4}-\d\d-\d\d \d\d:\d\d\b", result.stderr), result.stderr


# --- 12: publish and gzip ------------------------------------------------------------------


@pytest.fixture
def fake_hub() -> Iterator[FakeHub]:
    with FakeHub() as fake:
        yield fake


def _published(fake: FakeHub, repo: str) -> set[str]:
    return {path for path in fake.files(repo) if path.startswith("sessions/")}


def test_publish_takes_a_gzip_session_named_or_found_and_files_it_by_its_header(
    home: Home, fake_hub: FakeHub
) -> None:
    """A gzip session was refused when named ("gunzip it first") but published when found
    in the sessions folder, filed there by its file's mtime (a month it has nothing to do
    with), and, its header unread, given a new path on every run."""
    packed = gzip.compress(FIXTURE.read_bytes())
    found = home.session  # gzip data under Pi's own name, modified years after its start
    found.write_bytes(packed)
    os.utime(found, (1_600_000_000, 1_600_000_000))  # 2020-09
    hub = ("--endpoint", fake_hub.url, "--token", TOKEN, "-j", "1")
    first = home.run("publish", "alice/found", "--all", *hub)
    assert first.code == 0, first.stderr
    assert _published(fake_hub, "alice/found") == {f"sessions/2026-11/{PI_NAME}"}
    again = home.run("publish", "alice/found", "--all", *hub)
    assert again.code == 0 and "0 added, 0 updated, 0 removed, 1 unchanged" in again.stdout
    assert _published(fake_hub, "alice/found") == {f"sessions/2026-11/{PI_NAME}"}

    named = home.work / "copy.jsonl.gz"  # the page's own download is a .jsonl.gz
    named.write_bytes(packed)
    for _ in range(2):
        result = home.run("publish", "alice/named", str(named), *hub)
        assert result.code == 0, result.stderr
        assert _published(fake_hub, "alice/named") == {"sessions/2026-11/copy.jsonl"}
    rows = fake_hub.files("alice/named")["index.jsonl"].decode().splitlines()
    assert [json.loads(row)["id"] for row in rows] == ["01a229f4-9ff2-7641-920f-f99cb5e24cb7"]
    assert found.read_bytes() == named.read_bytes() == packed  # inputs untouched


# --- 16: export --all -o ----------------------------------------------------------------------


def test_export_all_says_a_file_one_way(home: Home) -> None:
    """`-o exist.html` and `-o afile`, both files, gave two different messages."""
    messages = []
    for name in ("exist.html", "afile"):
        (home.work / name).write_text("mine", encoding="utf-8")
        result = home.run("export", "--all", "-o", name)
        assert result.code == 1, result.stderr
        messages.append(_error(result).replace(name, "NAME"))
        assert (home.work / name).read_text(encoding="utf-8") == "mine"
    assert messages[0] == messages[1]
    assert messages[0] == (
        "-o NAME is a file; --all writes a site, a folder with an index and a page per "
        "session: give a folder (-o site/)"
    )


def _as_nobody() -> list[str]:
    """The prefix that runs a command as an ordinary user, for a root test run (root
    writes in every folder); empty when the tests run as one already."""
    if not ROOT_USER:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: no folder is read-only")
    prefix = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    check = subprocess.run([*prefix, sys.executable, "-c", "import exporter"], capture_output=True)
    if check.returncode != 0:  # a checkout under a private folder (mktemp -d): see below
        pytest.skip("the package cannot be read by an ordinary user here")
    return prefix


def test_export_all_names_the_folder_that_cannot_be_written() -> None:
    """`-o ro/site` with ``ro`` read-only said "ro/site: cannot write in this folder": it
    is ``ro`` that cannot be written, and ``site`` does not exist."""
    prefix = _as_nobody()
    base = Path(tempfile.mkdtemp(prefix="pi-session-ro-"))  # readable by that user too
    try:
        os.chmod(base, 0o755)
        home = _home(base)
        for folder, _dirs, files in os.walk(base):
            os.chmod(folder, 0o777)
            for name in files:
                os.chmod(Path(folder) / name, 0o644)
        (base / "work" / "ro").mkdir(mode=0o555)
        os.chmod(base / "work" / "ro", 0o555)
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "exporter", "export", "--all", "-o", "ro/site"],
            cwd=home.work,
            env=home.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "Traceback" not in done.stderr
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().splitlines()[-1] == (
            "pi-session: error: -o ro/site: cannot make the folder: cannot write in ro"
        )
        assert not (base / "work" / "ro" / "site").exists()
    finally:
        os.chmod(base / "work" / "ro", 0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_a_site_folder_whose_parent_cannot_be_written_names_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same message where no ordinary user can run the package (a root run in a private
    folder): the parent is taken as read-only."""
    from exporter.cli import CliError
    from exporter.export_cli import _check_site_folder

    (tmp_path / "ro").mkdir()
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != tmp_path / "ro")
    with pytest.raises(CliError) as raised:
        _check_site_folder(tmp_path / "ro" / "site")
    said = f"-o {tmp_path}/ro/site: cannot make the folder: cannot write in {tmp_path}/ro"
    assert raised.value.format_message() == said
    assert raised.value.exit_code == 2
    _check_site_folder(tmp_path / "site")  # a writable parent: no error


# --- 18: options with no effect; watch - ---------------------------------------------------


def test_options_that_need_redaction_warn_without_it(home: Home) -> None:
    """`--keep-paths` and `--no-env-secrets` were accepted silently where nothing is
    redacted (export's default, --no-redact)."""
    for option in ("--keep-paths", "--no-env-secrets"):
        plain = home.run("export", str(home.session), option, "-o", "p.html")
        assert plain.code == 0, plain.stderr
        assert (
            f"pi-session: warning: {option} has no effect without redaction (--redact)"
            in plain.stderr
        )
        redacted = home.run("export", str(home.session), option, "--redact", "-o", "p.html")
        assert redacted.code == 0 and "no effect" not in redacted.stderr


def test_watch_refuses_stdin(home: Home) -> None:
    """`watch -` said "watching /dev/stdin" and served a page that could never change."""
    result = home.run("watch", "-", stdin=home.session, timeout=30)
    assert result.code == 1, result.stderr
    assert _error(result) == (
        "watch follows a session file as it grows; - (stdin) never changes: name the file, "
        "or use `pi-session export -`"
    )
    assert result.stdout == ""


# --- 13 and 17: option names across commands; the style of errors -----------------------


def test_the_api_root_option_of_the_other_command_is_suggested(home: Home) -> None:
    """`share --endpoint` (publish's name for the API root) was asked "did you mean
    --report?"; the option is not renamed, the right one is suggested."""
    for command, typed, meant in (
        (["share", "--dry-run"], "--endpoint", "--api-url"),
        (["publish", "alice/x", "--dry-run"], "--api-url", "--endpoint"),
    ):
        result = home.run(*command, typed, "http://127.0.0.1:9")
        assert result.code == 1, result.stderr
        assert _error(result) == (
            f"no such option '{typed}'. Did you mean '{meant}'? "
            f"(see: pi-session {command[0]} --help)"
        )


def test_usage_errors_start_lower_case_as_the_others_do(home: Home) -> None:
    """click's own messages ("No such option", "Invalid value for …") began with a capital
    after "error:", every other error with a lower-case letter; names in capitals stay."""
    for args, start in (
        (["export", "--no-such-option"], "no such option '--no-such-option'"),
        (["export", "--theme", "pink"], "invalid value for '--theme'"),
        (["exprot"], "no such command 'exprot'"),
        (["search", ""], "PATTERN is empty"),
    ):
        result = home.run(*args)
        assert result.code == 1, result.stderr
        assert _error(result).startswith(start), result.stderr


# --- helper 133: one "no Pi sessions"; publish and UTF-16; --cwd read one way ------------------


#: The commands that read one session, SESSION left out: this folder's latest.
ONE_SESSION_COMMANDS = (["stats"], ["export"], ["redact"], ["share", "--dry-run"], ["watch"])


def test_a_command_without_session_says_no_sessions_as_the_others_do(
    home: Home, fake_hub: FakeHub
) -> None:
    """SESSION left out in a folder without sessions built its own line (the hint to pass a
    SESSION in the middle, "(it does not exist)" never said), and `publish` said "no
    sessions of DIR in FOLDER to publish": one helper's words now, then what to do."""
    here, root = str(home.work.resolve()), str(home.sessions)
    for command in ONE_SESSION_COMMANDS:
        result = home.run(*command, timeout=60)
        assert result.code == 2, (command, result.stderr)
        assert _error(result) == (
            f"no Pi sessions for {here} under {root}; 1 session of another project is there: "
            "`pi-session list --all` shows it; pass a SESSION file or id, or --demo"
        ), command
    hub = ("--endpoint", fake_hub.url, "--token", TOKEN, "--dry-run")
    published = home.run("publish", "alice/none", *hub)
    assert published.code == 2, published.stderr
    assert _error(published) == (
        f"no Pi sessions for {here} under {root}; 1 session of another project is there: "
        "--all publishes it; nothing sent"
    )
    everywhere = home.run("publish", "alice/none", "--all", "--sessions-dir", str(home.work), *hub)
    assert _error(everywhere) == f"no Pi sessions for any project under {home.work}; nothing sent"
    assert fake_hub.requests == [] and not list(home.work.iterdir())
    # no sessions folder yet (Pi installed, never run): said so, by every command alike
    (home.base / "fresh-agent").mkdir()
    home.env["PI_CODING_AGENT_DIR"] = str(home.base / "fresh-agent")
    gone = str(home.base / "fresh-agent" / "sessions")
    for command in [*ONE_SESSION_COMMANDS, ["export", "--pick"]]:
        result = home.run(*command, timeout=60)
        assert result.code == 2, (command, result.stderr)
        said = _error(result)
        assert said.startswith("no Pi sessions for "), (command, said)
        assert f"under {gone} (it does not exist)" in said, (command, said)
    listed = home.run("list")
    assert listed.code == 0 and f"under {gone} (it does not exist)" in listed.stderr


def test_since_emptying_a_batch_is_said_as_list_says_it(home: Home, fake_hub: FakeHub) -> None:
    """`export --all` and `publish` said "no sessions active since ..." in words of their
    own (publish: in UTC's format, without the relative value given); `list` says where."""
    root = str(home.sessions)
    hub = ("--endpoint", fake_hub.url, "--token", TOKEN, "--dry-run")
    pattern = (
        rf"no Pi sessions for any project under {re.escape(root)} active since "
        r"\d{4}-\d\d-\d\d \d\d:\d\d\b"
    )
    older = "; 1 session there is older"  # in every command's words (stop 58)
    for command, then in (
        (["list", "--all"], None),
        (["export", "--all", "-o", "site"], f"{older}; the site was left as it is"),
        (["publish", "alice/late", "--all", *hub], f"{older}; nothing sent"),
        (["search", "x", "--all"], older),
    ):
        result = home.run(*command, "--since", "1d")
        said = result.stderr.strip() if then is None else _error(result)
        assert re.fullmatch(
            ("pi-session: " if then is None else "")
            + pattern
            + r"(?: \(1d\))?"
            + re.escape(then or older),
            said,
        ), (command, result.stderr)
        assert result.code == (0 if then is None else 2), command
    named = home.run("publish", "alice/late", str(home.session), *hub, "--since", "2999-01-01")
    assert named.code == 2
    assert _error(named) == "the session named is not active since 2999-01-01 00:00; nothing sent"
    assert fake_hub.requests == [] and not (home.work / "site").exists()


#: What `publish` uploads for the fixture saved as UTF-8 (the same for every encoding below).
_UTF8_UPLOADS: dict[str, bytes] = {}


def _utf8_upload(home: Home, fake_hub: FakeHub, text: str) -> bytes:
    """The dataset file `publish plain.jsonl` makes of ``text`` as UTF-8, by a real publish
    once per process: each encoding's test published the same file again (a subprocess of
    ~1.2 s CPU) to compare its upload with."""
    if text not in _UTF8_UPLOADS:
        hub = ("--endpoint", fake_hub.url, "--token", TOKEN, "-j", "1")
        plain = home.work / "plain.jsonl"
        plain.write_text(text, encoding="utf-8")
        assert home.run("publish", "alice/plain", str(plain), *hub).code == 0
        _UTF8_UPLOADS[text] = fake_hub.files("alice/plain")["sessions/2026-11/plain.jsonl"]
    return _UTF8_UPLOADS[text]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-32-be"])
def test_publish_takes_a_utf16_or_utf32_session_and_uploads_it_as_utf8(
    home: Home, fake_hub: FakeHub, encoding: str
) -> None:
    """`publish wide.jsonl` was refused ("publish needs session files as Pi writes them")
    while export and stats read the file, and one found in the sessions folder was filed by
    its mtime with no id. The dataset gets UTF-8 JSONL as Pi writes it, filed by its header,
    the same bytes as the UTF-8 file gives; the input stays as it was."""
    text = FIXTURE.read_text(encoding="utf-8")
    wide_bytes = ("\ufeff" + text).encode(encoding)  # -be codecs write no mark of their own
    assert wide_bytes[:2] in (b"\xff\xfe", b"\xfe\xff") or wide_bytes[:4] == b"\x00\x00\xfe\xff"
    hub = ("--endpoint", fake_hub.url, "--token", TOKEN, "-j", "1")
    expected = _utf8_upload(home, fake_hub, text)

    named = home.work / "plain-wide" / "plain.jsonl"  # its dataset name as the UTF-8 copy's
    named.parent.mkdir()
    named.write_bytes(wide_bytes)
    for run in range(2):
        result = home.run("publish", "alice/named", str(named), *hub)
        assert result.code == 0, result.stderr
        assert _published(fake_hub, "alice/named") == {"sessions/2026-11/plain.jsonl"}
        if run:
            assert "0 added, 0 updated, 0 removed, 1 unchanged" in result.stdout
    uploaded = fake_hub.files("alice/named")["sessions/2026-11/plain.jsonl"]
    assert uploaded == expected and not uploaded.startswith(b"\xef\xbb\xbf")
    rows = fake_hub.files("alice/named")["index.jsonl"].decode("utf-8").splitlines()
    assert [json.loads(row)["id"] for row in rows] == ["01a229f4-9ff2-7641-920f-f99cb5e24cb7"]
    assert named.read_bytes() == wide_bytes  # never rewritten

    found = home.session  # saved again as UTF-16 in Pi's own folder, its mtime years later
    found.write_bytes(wide_bytes)
    os.utime(found, (1_600_000_000, 1_600_000_000))  # 2020-09
    for _ in range(2):
        result = home.run("publish", "alice/found", "--all", *hub)
        assert result.code == 0, result.stderr
        assert _published(fake_hub, "alice/found") == {f"sessions/2026-11/{PI_NAME}"}
    assert found.read_bytes() == wide_bytes


def _project_home(home: Home) -> tuple[Path, Path]:
    """A session of a project in the fake home, ``~/proj``, and a symbolic link to it."""
    project = home.base / "home" / "proj"
    project.mkdir(parents=True)
    folder = home.sessions / encode_cwd(str(project))
    folder.mkdir()
    shutil.copyfile(FIXTURE, folder / PI_NAME.replace("01a229f4", "02b229f4"))
    link = home.base / "link-to-proj"
    link.symlink_to(project, target_is_directory=True)
    return project, link


def _cwd_commands(fake_hub: FakeHub) -> list[list[str]]:
    hub = ["--endpoint", fake_hub.url, "--token", TOKEN, "--dry-run", "-j", "1"]
    return [
        ["list"],
        ["search", "dimgray"],
        ["stats", "--all"],
        ["export", "--all", "-o", "site"],
        ["publish", "alice/cwd", *hub],
    ]


def test_cwd_takes_a_tilde_and_a_symbolic_link_in_every_command(
    home: Home, fake_hub: FakeHub
) -> None:
    """`--cwd=~/proj` (no shell expands that `~`) looked for <here>/~/proj, though
    --sessions-dir expands it; `--cwd LINK` to the project found none of the sessions Pi
    filed under its real path (running from LINK found them: the working folder is real)."""
    project, link = _project_home(home)
    for given in ("--cwd=~/proj", f"--cwd={link}", f"--cwd={link}/"):
        for command in _cwd_commands(fake_hub):
            result = home.run(*command, given)
            assert result.code == 0, (given, command, result.stderr)
            assert "no Pi sessions" not in result.stderr, (given, command)
        shutil.rmtree(home.work / "site")
    report = home.run("stats", "--all", "--cwd=~/proj", "--json")
    assert json.loads(report.stdout)["cwd"] == str(project)
    assert json.loads(report.stdout)["sessions_read"] == 1


def test_an_empty_cwd_or_a_file_is_a_usage_error_in_every_command(
    home: Home, fake_hub: FakeHub
) -> None:
    """`--cwd ""` (a script's unset variable) meant every project to `stats --all` and
    `export --all`, this folder to `list`, `search` and `publish`; a file was click's
    message. Both are one usage error now (exit 1), the same in every command."""
    for command in _cwd_commands(fake_hub):
        empty = home.run(*command, "--cwd", "")
        assert empty.code == 1, (command, empty.stderr)
        assert _error(empty) == "--cwd is empty: give a project folder", command
        a_file = home.run(*command, "--cwd", str(home.session))
        assert a_file.code == 1, (command, a_file.stderr)
        assert _error(a_file) == f"--cwd: {home.session} is a file, not a project folder"
    assert not (home.work / "site").exists() and fake_hub.requests == []
