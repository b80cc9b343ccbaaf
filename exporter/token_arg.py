"""``--token -``: a token read from stdin, or typed without echo at a terminal.

A token given as an argument sits in the process list (``ps``, ``/proc/<pid>/cmdline``) and
in the shell's history for as long as the command runs; one piped in or typed at a hidden
prompt does not, as with ``gh auth login --with-token`` or ``docker login --password-stdin``.
"""

from __future__ import annotations

import sys

import click

from exporter.cli import CliError

#: The ``--token`` value that means "read it from stdin".
FROM_STDIN = "-"

TOKEN_HELP = "; - reads it from stdin (or asks, hidden), keeping it out of the process list"


def token_argument(value: str | None, service: str, *, stdin_taken: bool = False) -> str | None:
    """The token ``--token`` stands for: itself, or (for ``-``) what stdin holds.

    ``stdin_taken``: another argument already reads stdin (SESSION ``-``), so it cannot
    carry the token too.
    """
    if value != FROM_STDIN:
        return value
    if stdin_taken:
        raise CliError("--token - and SESSION - both read stdin: pass the token another way", 1)
    if sys.stdin is None:
        raise CliError("--token - reads the token from stdin, and there is none", 1)
    if sys.stdin.isatty():  # asks again after an empty line; Ctrl-D or Ctrl-C gives up
        return str(click.prompt(f"{service} token", hide_input=True, err=True))
    piped = sys.stdin.read()
    if not piped.strip():
        raise CliError(f"--token -: nothing was piped in (expected the {service} token)", 1)
    return piped
