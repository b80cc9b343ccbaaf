"""The isolated environment the `share` tests run in: its own state folder and token, no
`gh` on the PATH, no proxies between the client and the loopback fake GitHub."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from tests.fakes.github import FakeGitHub


def isolated_share_env(
    tmp_path: Path, token: str, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """Set it up under ``tmp_path`` (also the working folder) and return the variables set."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("PI_SHARE_VIEWER_URL", raising=False)
    values = {
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "GH_ENTERPRISE_TOKEN": token,  # a loopback API is not github.com
        "NO_PROXY": "127.0.0.1,localhost",
        "PATH": str(tmp_path / "empty-bin"),
    }
    (tmp_path / "empty-bin").mkdir()
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    return values


def share(fake: FakeGitHub, *args: str) -> Result:
    """`pi-session share ARGS` against the loopback fake GitHub ``fake``."""
    return CliRunner().invoke(cli, ["share", *args, "--api-url", fake.base_url])
