"""`pi-session export`: one session -> one self-contained HTML page."""

from __future__ import annotations

import sys
import webbrowser
from pathlib import Path
from typing import Any

import click

from exporter.cli import CliError, open_session, session_argument
from exporter.fsutil import atomic_write_text
from exporter.redact import RedactionPolicy, RedactionReport, apply_policy
from exporter.redact_cli import finish_report, policy_from_options, policy_options
from exporter.render import RenderOptions, render_session
from exporter.session import Session


def policy_changes_nothing(policy: RedactionPolicy) -> bool:
    """True when the policy would copy the session unchanged (plain local export)."""
    return not (
        policy.redact
        or policy.active_branch_only
        or policy.no_thinking
        or policy.no_tool_output
        or policy.no_images
        or policy.drop_hidden
    )


def prepare_session(
    session: Session, policy: RedactionPolicy
) -> tuple[Session, RedactionReport | None]:
    """Apply the share policy (keeping the chosen leaf); skip the copy when it is a no-op."""
    if policy_changes_nothing(policy):
        return session, None
    prepared, report = apply_policy(session, policy)
    if session.leaf_id and session.leaf_id in prepared.by_id:
        prepared.set_leaf(session.leaf_id)
    return prepared, report


def default_output_name(session_path: str | None) -> str:
    """Pi's convention: ``pi-session-<input basename>.html`` in the current folder."""
    stem = Path(session_path).stem if session_path else "session"
    return f"pi-session-{stem}.html"


@click.command("export")
@session_argument
@click.option(
    "-o", "--output", "output", help="Output file (default: pi-session-<name>.html; - for stdout)."
)
@click.option("--leaf", help="Entry id (or unique prefix) whose branch is the main transcript.")
@click.option(
    "--theme",
    type=click.Choice(["auto", "light", "dark"]),
    default="auto",
    show_default=True,
    help="Initial theme; auto follows the reader's system setting.",
)
@click.option("--no-embed", is_flag=True, help="Do not embed the session for the JSONL download.")
@click.option("--open", "open_page", is_flag=True, help="Open the page in a browser afterwards.")
@policy_options(redact_default=False)
def export_command(
    session: str | None,
    demo: bool,
    sessions_dir: str | None,
    output: str | None,
    leaf: str | None,
    theme: str,
    no_embed: bool,
    open_page: bool,
    **policy_values: Any,
) -> None:
    """Render SESSION (default: the latest session of this folder) to one HTML file."""
    policy = policy_from_options(**policy_values)
    loaded = open_session(session, demo, sessions_dir, leaf)
    prepared, report = prepare_session(loaded, policy)
    options = RenderOptions(theme=theme, embed_jsonl=not no_embed)
    html = render_session(prepared, options)
    if report is not None:
        finish_report(report, policy_values.get("report"))
    if output == "-":
        sys.stdout.buffer.write(html.encode("utf-8"))
        sys.stdout.flush()
        return
    target = Path(output or default_output_name(loaded.path))
    if target.is_dir():
        raise CliError(f"{target} is a folder; give a file name with -o", 1)
    atomic_write_text(target, html)
    click.echo(str(target))
    if open_page:
        webbrowser.open(target.resolve().as_uri())
