"""`pi-session pi-extension`: the bundled Pi package's folder, and `--install` through `pi`.

The extension itself is tested inside the real Pi by tests/node/extension.test.mjs (CI runs it
with `node --test`); here a fake `pi` on PATH records what the command asks of it.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from exporter import cli as cli_module
from exporter.pi_extension_cli import extension_dir

# The fake records its arguments (one JSON list per call), keeps the installed folders in
# $FAKE_PI_LOG.state (not when $FAKE_PI_FORGET is set: Pi with a broken settings.json still
# says "Installed"), lists them like `pi list` and exits with $FAKE_PI_EXIT.
FAKE_PI = """#!{python}
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_PI_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(args) + "\\n")
state_file = os.environ["FAKE_PI_LOG"] + ".state"
state = json.load(open(state_file)) if os.path.exists(state_file) else []
if args[0] == "list":
    print("User packages:" if state else "No packages installed.")
    for folder in state:
        print("  " + folder)
    sys.exit(0)
if args[0] == "install" and not os.environ.get("FAKE_PI_FORGET"):
    state = sorted(set(state) | {{args[1]}})
if args[0] == "remove":
    state = [f for f in state if f != args[1]]
json.dump(state, open(state_file, "w"))
print("Installed" if args[0] == "install" else "Removed", args[1])
sys.exit(int(os.environ.get("FAKE_PI_EXIT", "0")))
"""


@pytest.fixture
def fake_pi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `pi` executable alone on PATH; its calls go to the log file next to it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pi = bin_dir / "pi"
    pi.write_text(FAKE_PI.format(python=sys.executable), encoding="utf-8")
    pi.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("FAKE_PI_LOG", str(tmp_path / "pi-calls.jsonl"))
    return pi


def calls(fake_pi: Path) -> list[list[str]]:
    log = fake_pi.parent.parent / "pi-calls.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli_module.cli, ["pi-extension", *args])


def test_prints_the_package_folder_with_a_pi_manifest() -> None:
    result = run()
    assert result.exit_code == 0, result.output
    folder = Path(result.stdout.strip())
    assert folder == Path(str(resources.files("exporter") / "pi_extension")) == extension_dir()
    manifest = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    assert "pi-package" in manifest["keywords"]
    extensions = manifest["pi"]["extensions"]
    assert extensions, manifest
    for entry in extensions:
        source = (folder / entry).resolve()
        assert source.is_file() and source.is_relative_to(folder)
        text = source.read_text(encoding="utf-8")
        assert 'registerCommand("export-html"' in text
        assert 'registerCommand("share-html"' in text
        assert 'registerCommand("live-html"' in text


def test_install_runs_pi_install_with_the_folder(fake_pi: Path) -> None:
    result = run("--install")
    assert result.exit_code == 0, result.output
    assert calls(fake_pi) == [["install", str(extension_dir())], ["list"]]
    assert "/export-html" in result.stderr


def test_install_local_and_an_explicit_pi(fake_pi: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")  # found only through --pi
    result = run("--install", "--local", "--pi", str(fake_pi))
    assert result.exit_code == 0, result.output
    assert calls(fake_pi) == [["install", str(extension_dir()), "-l"], ["list"]]


def test_a_failing_pi_install_is_one_error_line(
    fake_pi: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PI_EXIT", "4")
    result = run("--install")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"pi-session: error: `pi install {extension_dir()}` failed (exit code 4)"
    ]


def test_missing_pi_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = run("--install")
    assert result.exit_code == 2
    assert result.stderr.startswith("pi-session: error: Pi not found: 'pi'")
    assert "--pi PATH" in result.stderr


@pytest.mark.parametrize("args", [["--local"], ["--pi", "/opt/pi"]])
def test_install_options_without_install_are_a_usage_error(args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == 1
    assert "only apply with --install" in result.stderr


def test_install_that_pi_did_not_save_is_an_error(
    fake_pi: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pi prints "Installed" even when its settings.json is broken and nothing was saved."""
    monkeypatch.setenv("FAKE_PI_FORGET", "1")
    result = run("--install")
    assert result.exit_code == 2
    assert "Pi does not list" in result.stderr and "settings.json" in result.stderr
    assert "/reload" not in result.stderr


def test_install_warns_of_another_copy_pi_lists(fake_pi: Path, tmp_path: Path) -> None:
    """With a copy installed from another checkout (or a wheel's), Pi renamed one set of
    commands (/export-html:1) and a typed /export-html went to the model as a prompt;
    --install only checked that its own folder was listed."""
    other = "/opt/old-checkout/exporter/pi_extension"
    state = tmp_path / "pi-calls.jsonl.state"  # the fake's installed folders
    state.write_text(json.dumps([other]), encoding="utf-8")
    result = run("--install")
    assert result.exit_code == 0, result.output
    assert (
        f"pi-session: warning: Pi also lists another copy of this package, {other}" in result.stderr
    )
    assert f"`pi remove {other}`" in result.stderr and "/reload" in result.stderr
    state.write_text(json.dumps([]), encoding="utf-8")  # its own folder alone: no warning
    assert "another copy" not in run("--install").stderr


def test_uninstall_runs_pi_remove_and_checks_it(fake_pi: Path) -> None:
    assert run("--install").exit_code == 0
    result = run("--uninstall")
    assert result.exit_code == 0, result.output
    assert calls(fake_pi)[-2:] == [["remove", str(extension_dir())], ["list"]]
    assert "Removed" in result.stderr
    assert run("--install", "--uninstall").exit_code == 1


def _real_pi_at_home(pi_home: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The pinned Pi's executable, with ``home`` as the home folder Pi keeps its settings in."""
    pi = next(pi_home.rglob("node_modules/.bin/pi"), None)
    assert pi is not None, f"no pi under {pi_home}"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    return pi


def test_install_and_uninstall_with_the_real_pi(
    pi_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Against the pinned Pi, in a scratch home: install, a broken settings file, remove."""
    pi = _real_pi_at_home(pi_home, tmp_path, monkeypatch)
    assert run("--install", "--pi", str(pi)).exit_code == 0
    settings = tmp_path / ".pi" / "agent" / "settings.json"

    def installed() -> list[Path]:  # Pi may store the folder relative to its settings file
        packages = json.loads(settings.read_text(encoding="utf-8")).get("packages", [])
        return [(settings.parent / p).resolve() for p in packages if isinstance(p, str)]

    assert installed() == [extension_dir().resolve()]
    result = run("--uninstall", "--pi", str(pi))
    assert result.exit_code == 0, result.output
    assert installed() == []
    settings.write_text("{ broken", encoding="utf-8")
    result = run("--install", "--pi", str(pi))
    assert result.exit_code == 2 and "Pi does not list" in result.stderr


def test_uninstall_from_the_wrong_scope_says_which_one_to_try(
    pi_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed for a project (-l), `--uninstall` said only that `pi remove` failed."""
    pi = _real_pi_at_home(pi_home, tmp_path, monkeypatch)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    assert run("--install", "-l", "--pi", str(pi)).exit_code == 0
    result = run("--uninstall", "--pi", str(pi))
    assert result.exit_code == 2
    assert "Pi lists it in the other scope: try -l" in result.stderr, result.stderr
    assert run("--uninstall", "-l", "--pi", str(pi)).exit_code == 0


def test_install_from_a_checkout_says_how_pi_finds_this_cli(
    fake_pi: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From an editable install the extension found no `pi-session` unless its virtualenv
    was on Pi's PATH: `/export-html` then said the CLI was missing."""
    import exporter.pi_extension_cli as module

    venv_bin = fake_pi.parent.parent / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    ours = venv_bin / "pi-session"
    ours.write_text("#!/bin/sh\n", encoding="utf-8")
    ours.chmod(0o755)
    monkeypatch.setattr(module.sys, "executable", str(venv_bin / "python"))
    checkout = fake_pi.parent.parent / "checkout" / "exporter" / "pi_extension"
    checkout.mkdir(parents=True)
    (checkout / "package.json").write_text("{}", encoding="utf-8")
    monkeypatch.setattr(module, "extension_dir", lambda: checkout)
    result = run("--install")
    assert result.exit_code == 0, result.output
    assert f"set PI_SESSION_BIN={ours} where Pi runs" in result.stderr
    assert "there is none on PATH" in result.stderr
    monkeypatch.setenv("PATH", f"{fake_pi.parent}:{venv_bin}")  # now Pi finds it
    assert "PI_SESSION_BIN" not in run("--install").stderr
    # an installed package finds the CLI beside it
    site = fake_pi.parent.parent / "lib" / "site-packages" / "exporter" / "pi_extension"
    site.mkdir(parents=True)
    (site / "package.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv("PATH", str(fake_pi.parent))
    monkeypatch.setattr(module, "extension_dir", lambda: site)
    assert "PI_SESSION_BIN" not in run("--install").stderr
