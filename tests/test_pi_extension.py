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

# The fake records its arguments (one JSON list per call) and exits with $FAKE_PI_EXIT.
FAKE_PI = """#!{python}
import json, os, sys
with open(os.environ["FAKE_PI_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
print("Installed", sys.argv[-1])
sys.exit(int(os.environ.get("FAKE_PI_EXIT", "0")))
"""


@pytest.fixture(autouse=True)
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run through the real `pi-session` group, whether or not cli.py registers us yet."""
    monkeypatch.setitem(
        cli_module.LAZY_COMMANDS,
        "pi-extension",
        ("exporter.pi_extension_cli", "pi_extension_command"),
    )


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


def test_install_runs_pi_install_with_the_folder(fake_pi: Path) -> None:
    result = run("--install")
    assert result.exit_code == 0, result.output
    assert calls(fake_pi) == [["install", str(extension_dir())]]
    assert "/export-html" in result.stderr


def test_install_local_and_an_explicit_pi(fake_pi: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")  # found only through --pi
    result = run("--install", "--local", "--pi", str(fake_pi))
    assert result.exit_code == 0, result.output
    assert calls(fake_pi) == [["install", str(extension_dir()), "-l"]]


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
