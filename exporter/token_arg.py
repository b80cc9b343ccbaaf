"""``--token -``: a token read from stdin, or typed without echo at a terminal.

A token given as an argument sits in the process list (``ps``, ``/proc/<pid>/cmdline``) and
in the shell's history for as long as the command runs; one piped in or typed at a hidden
prompt does not, as with ``gh auth login --with-token`` or ``docker login --password-stdin``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import click

from exporter.cli import CliError
from exporter.fsutil import expand_user

#: The ``--token`` value that means "read it from stdin".
FROM_STDIN = "-"

TOKEN_HELP = "; - reads it from stdin (or asks, hidden), keeping it out of the process list"


#: Names a file argument reads stdin by.
STDIN_NAMES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


def stdin_reader(session: str | None, options: Mapping[str, Any]) -> str | None:
    """Which other argument reads stdin (SESSION ``-`` or ``/dev/stdin``, a ``--secret`` or
    ``--env-file`` file), if one does: the same names count for each."""
    if session in STDIN_NAMES:  # `-`, or a name of stdin itself
        return f"SESSION {session}"
    for option in ("secret", "env_file"):
        for value in options.get(option) or ():
            if str(value) in STDIN_NAMES:
                return f"--{option.replace('_', '-')} {value}"
    return None


def token_argument(
    value: str | None, service: str, *, stdin_taken: str | None = None
) -> str | None:
    """The token ``--token`` stands for: itself, or (for ``-``) what stdin holds.

    ``stdin_taken``: the other argument that reads stdin (``stdin_reader``), which the
    token cannot share.
    """
    if value is not None and not value.strip():  # `--token "$UNSET"`: another account's
        raise CliError(  # token would go from the environment instead, without a word
            "--token: the value is empty (an unset variable?); give the token, or leave "
            "--token out to use the environment's",
            1,
        )
    if value != FROM_STDIN:
        if value is not None and _is_file(value):  # `--token ~/.hf_token`: went as the token
            raise CliError(
                f"--token {value}: that names a file; give the token itself, or read it "
                f"from the file with --token - < {value}",
                1,
            )
        return value
    if stdin_taken:
        raise CliError(
            f"--token - and {stdin_taken} both read stdin: pass the token another way", 1
        )
    if sys.stdin is None:
        raise CliError("--token - reads the token from stdin, and there is none", 1)
    if sys.stdin.isatty():  # asks again after an empty line; Ctrl-D or Ctrl-C gives up
        try:
            return str(click.prompt(f"{service} token", hide_input=True, err=True))
        except click.Abort as stop:  # click's "Aborted!" and exit 1 for Ctrl-C and Ctrl-D
            if isinstance(stop.__context__, EOFError):  # Ctrl-D: nothing typed
                raise CliError(f"--token -: no {service} token was typed", 1) from None
            raise KeyboardInterrupt from None  # Ctrl-C: an interrupt, 130
    piped = sys.stdin.read()
    if not piped.strip():
        raise CliError(f"--token -: nothing was piped in (expected the {service} token)", 1)
    return piped


def _is_file(value: str) -> bool:
    """A ``--token`` value that is a file's name (a token is never one)."""
    try:
        return expand_user(value).is_file()
    except (OSError, ValueError):  # too long a name, a NUL in it
        return False
