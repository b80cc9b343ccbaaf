"""`pi-session pi-extension`: the Pi package with `/export-html`, `/share-html` and `/live-html`.

The package (``exporter/pi_extension``: a ``package.json`` with a ``pi`` key and one TypeScript
extension) ships inside this Python distribution, so the extension and the CLI it calls always
come from the same install. Without options the command prints the package folder (for
``pi install <folder>`` or ``pi -e <folder>``); ``--install`` runs ``pi install`` itself and
checks that Pi lists the package afterwards; ``--uninstall`` runs ``pi remove``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import click

from exporter.cli import CliError
from exporter.formatting import terminal_text

PI_INSTALL_HINT = "npm install -g @mariozechner/pi-coding-agent"
# Pi's two scopes, as `pi list` heads them, and the option that picks each
SCOPE_WORDS = {"user": "for all projects", "project": "for this project"}
SCOPE_UNINSTALL = {"user": "--uninstall", "project": "--uninstall -l"}


def extension_dir() -> Path:
    """The installed package folder, from the wheel as from a source checkout.

    Pi needs a real folder on disk (it stores the path in its settings and loads files from
    it), so a zipped install, where ``resources.files`` is not a ``Path``, cannot be used.
    """
    folder = resources.files("exporter") / "pi_extension"
    if not isinstance(folder, Path) or not (folder / "package.json").is_file():
        raise CliError(f"the Pi package is missing from this installation ({folder})", 2)
    return folder


@click.command("pi-extension")
@click.option(
    "--install",
    is_flag=True,
    help="Run `pi install FOLDER`: Pi then offers /export-html, /share-html and /live-html.",
)
@click.option(
    "--uninstall",
    is_flag=True,
    help="Run `pi remove FOLDER` (do it before uninstalling pi-session-export).",
)
@click.option(
    "-l",
    "--local",
    is_flag=True,
    help="With --install/--uninstall: this project's .pi/settings.json, not the global one.",
)
@click.option(
    "--pi",
    "pi_binary",
    default="pi",
    show_default=True,
    metavar="PATH",
    help="The Pi executable that --install and --uninstall run.",
)
def pi_extension_command(install: bool, uninstall: bool, local: bool, pi_binary: str) -> None:
    """Print the folder of the Pi package with /export-html, /share-html and /live-html, or
    (un)install it."""
    folder = extension_dir()
    if install and uninstall:
        raise CliError("--install or --uninstall, not both", 1)
    if not (install or uninstall):
        if local or pi_binary != "pi":
            raise CliError("--local and --pi only apply with --install or --uninstall", 1)
        click.echo(str(folder))
        return
    executable = shutil.which(pi_binary)
    if executable is None:
        raise CliError(
            f"Pi not found: {pi_binary!r} (install it with `{PI_INSTALL_HINT}` or pass --pi PATH)",
            2,
        )
    scope = ["-l"] if local else []
    verb = "install" if install else "remove"
    # Pi prints its own progress and errors; let them through unchanged.
    done = _run([executable, verb, str(folder), *scope])
    if done.returncode != 0:
        hint = ""
        if uninstall:  # Pi says only that it is not installed: in which scope, we can tell
            listed = str(folder) in _run([executable, "list"], capture=True).stdout
            other = "without -l (installed for all projects?)" if local else "-l (a project's?)"
            hint = f"; Pi lists it in the other scope: try {other}" if listed else ""
        raise CliError(f"`pi {verb} {folder}` failed (exit code {done.returncode}){hint}", 2)
    # Pi says "Installed" even when it could not save its settings (e.g. a settings.json that
    # is not valid JSON): trust what it lists afterwards.
    packages = _run([executable, "list"], capture=True).stdout
    listed = str(folder) in packages
    if install and not listed:
        raise CliError(
            f"`pi install` ran, but Pi does not list {folder}: check Pi's settings.json "
            "(is it valid JSON?) and try again",
            2,
        )
    if install:
        for other in _other_copies(packages, folder):
            # Pi keeps both and renames one's commands (/export-html:1): a typed
            # /export-html could then be the other copy's, or go to the model as a prompt
            click.echo(
                terminal_text(
                    f"pi-session: warning: Pi also lists another copy of this package, {other}: "
                    f"its commands clash with these; `pi remove {other}` (add -l for a "
                    "project's) leaves one"
                ),
                err=True,
            )
        hint = _cli_hint(folder)
        if hint:
            click.echo(terminal_text(f"pi-session: warning: {hint}"), err=True)
        click.echo(
            "In Pi, run /reload (or restart Pi), then /export-html, /share-html or /live-html.",
            err=True,
        )
    elif listed:
        # Pi lists a package once per scope it is installed in (user: all projects, and this
        # project's -l): still listed in the other one only is a removal done as asked
        scopes = _scopes_listing(packages, folder)
        asked, other = ("project", "user") if local else ("user", "project")
        if asked in scopes or not scopes:
            raise CliError(f"Pi still lists {folder} (installed in another scope? try -l)", 2)
        click.echo(
            f"Removed from Pi {SCOPE_WORDS[asked]}. It is still installed {SCOPE_WORDS[other]}: "
            f"`pi-session pi-extension {SCOPE_UNINSTALL[other]}` removes it there too.",
            err=True,
        )
    else:
        click.echo(
            "Removed from Pi: /export-html, /share-html and /live-html are gone after /reload.",
            err=True,
        )


def _cli_hint(folder: Path) -> str | None:
    """What to do when the extension will not find this install's CLI: it runs
    ``PI_SESSION_BIN``, else the ``pi-session`` beside an installed package
    (``<prefix>/lib/…/site-packages``), else the one on PATH; an editable install (a
    checkout) has no such layout, and its virtualenv is rarely on the PATH Pi runs with."""
    if folder.parent.parent.name in ("site-packages", "dist-packages"):
        return None
    ours = Path(sys.executable).parent / "pi-session"
    if not ours.is_file():
        return None
    found = shutil.which("pi-session")
    if found and Path(found).resolve() == ours.resolve():
        return None
    instead = f"the one on PATH, {found}" if found else "none: there is none on PATH"
    return (
        f"from a checkout (an editable install) the extension runs PI_SESSION_BIN or the "
        f"`pi-session` on Pi's PATH ({instead}), not this one: set "
        f"PI_SESSION_BIN={ours} where Pi runs, or put {ours.parent} on PATH"
    )


def _scopes_listing(packages: str, folder: Path) -> set[str]:
    """The scopes ("user", "project") under whose heading `pi list` names ``folder``: Pi
    prints "User packages:" and "Project packages:", each followed by its packages."""
    # the folder whole, not the start of another one's path (/x/pi_extension-old)
    ours = re.compile(r"(?:^|[\s(])" + re.escape(str(folder)) + r"(?=$|[\s)])")
    found: set[str] = set()
    scope: str | None = None
    for line in packages.splitlines():
        heading = line.strip().lower()
        if heading.endswith("packages:"):
            scope = {"user packages:": "user", "project packages:": "project"}.get(heading)
        elif scope is not None and ours.search(line):
            found.add(scope)
    return found


def _other_copies(packages: str, folder: Path) -> list[str]:
    """Folders of this package (another checkout, another wheel's copy) in `pi list`'s
    output, other than ``folder``: Pi prints each package's resolved path on a line."""
    ours = str(folder)
    found = []
    for line in packages.splitlines():
        path = line.strip()
        if path.startswith("/") and path != ours and path.endswith("/exporter/pi_extension"):
            found.append(path)
    return sorted(set(found))


def _run(command: list[str], capture: bool = False) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            command, check=False, text=True, capture_output=capture, encoding="utf-8",
            errors="replace",
        )  # fmt: skip
    except OSError as error:
        raise CliError(f"could not run {command[0]}: {error.strerror or error}", 2) from None
