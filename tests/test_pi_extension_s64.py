"""`pi-session pi-extension --uninstall` when the package is installed in both of Pi's scopes.

Against the pinned Pi (a scratch home and project): `pi list` then names the package under
"User packages:" and "Project packages:", and removing it from one scope left it listed in the
other, which the command took for a failed removal (exit 2, "try -l" even when -l was given).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from exporter import cli as cli_module
from exporter.pi_extension_cli import extension_dir


def run(*args: str) -> Result:
    return CliRunner().invoke(cli_module.cli, ["pi-extension", *args])


def _installed(settings: Path) -> list[Path]:
    """The packages a Pi settings file holds, resolved (Pi may store them relative to it)."""
    if not settings.is_file():
        return []
    packages = json.loads(settings.read_text(encoding="utf-8")).get("packages", [])
    return [(settings.parent / p).resolve() for p in packages if isinstance(p, str)]


@pytest.fixture
def both_scopes(
    pi_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path, Path]:
    """The real Pi with a scratch home, run in a project: (pi, user settings, project settings)."""
    pi = next(pi_home.rglob("node_modules/.bin/pi"), None)
    assert pi is not None, f"no pi under {pi_home}"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return (
        pi,
        tmp_path / "home" / ".pi" / "agent" / "settings.json",
        project / ".pi" / "settings.json",
    )


@pytest.mark.parametrize("local", [True, False], ids=["project", "user"])
def test_uninstall_from_one_scope_succeeds_while_the_other_keeps_it(
    both_scopes: tuple[Path, Path, Path], local: bool
) -> None:
    pi, user_settings, project_settings = both_scopes
    ours = extension_dir().resolve()
    assert run("--install", "--pi", str(pi)).exit_code == 0
    assert run("--install", "-l", "--pi", str(pi)).exit_code == 0
    assert _installed(user_settings) == [ours] and _installed(project_settings) == [ours]

    result = run("--uninstall", *(["-l"] if local else []), "--pi", str(pi))

    assert result.exit_code == 0, result.output
    assert "Pi still lists" not in result.stderr
    removed, kept = (project_settings, user_settings)
    if not local:
        removed, kept = kept, removed
    assert _installed(removed) == [] and _installed(kept) == [ours]
    # says where it is still installed, and the flag that removes it there
    if local:
        assert "Removed from Pi for this project." in result.stderr, result.stderr
        assert "still installed for all projects" in result.stderr
        assert "`pi-session pi-extension --uninstall` removes it there too" in result.stderr
    else:
        assert "Removed from Pi for all projects." in result.stderr, result.stderr
        assert "still installed for this project" in result.stderr
        assert "`pi-session pi-extension --uninstall -l` removes it there too" in result.stderr

    # and that flag does: the other scope empties, with the plain "Removed" message
    last = run("--uninstall", *([] if local else ["-l"]), "--pi", str(pi))
    assert last.exit_code == 0, last.output
    assert "gone after /reload" in last.stderr
    assert _installed(user_settings) == [] and _installed(project_settings) == []


# A Pi whose `remove` says it worked and changed nothing (a settings file it could not write):
# `list` names the package in both scopes whatever was asked.
STUCK_PI = """#!/bin/sh
if [ "$1" = list ]; then
  printf 'User packages:\\n  {folder}\\n\\nProject packages:\\n  {folder}\\n'
else
  echo "Removed $2"
fi
"""


@pytest.mark.parametrize("local", [True, False], ids=["project", "user"])
def test_uninstall_that_leaves_it_in_the_scope_asked_for_is_still_an_error(
    tmp_path: Path, local: bool
) -> None:
    pi = tmp_path / "pi"
    pi.write_text(STUCK_PI.format(folder=extension_dir()), encoding="utf-8")
    pi.chmod(0o755)
    result = run("--uninstall", *(["-l"] if local else []), "--pi", str(pi))
    assert result.exit_code == 2, result.output
    assert "Pi still lists" in result.stderr
    assert "Removed from Pi for" not in result.stderr


def test_a_scope_listing_another_folder_that_starts_like_ours_does_not_hold_it() -> None:
    """`pi list` naming /x/pi_extension-old counted as ours at /x/pi_extension (review, s64)."""
    from exporter.pi_extension_cli import _scopes_listing

    listing = "User packages:\n  /x/pi_extension-old\nProject packages:\n  /x/pi_extension\n"
    assert _scopes_listing(listing, Path("/x/pi_extension")) == {"project"}
    assert _scopes_listing("User packages:\n  (/x/pi_extension)\n", Path("/x/pi_extension")) == {
        "user"
    }
