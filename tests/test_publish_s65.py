"""Stop 65: a run refused for removing less (--no-thinking left off) said nothing of the
--secret it also lacked; the user fixed the options and was refused again, one run later,
for the secret. Where the dataset's marks tell, both are said in one refusal."""

from __future__ import annotations

import pytest

from tests.fakes.hub import FakeHub, fake_hub_fixture
from tests.test_publish import Corpus, hub_env, publish, small

__all__ = ["fake_hub_fixture", "hub_env", "small"]  # fixtures, by name


def test_a_weaker_policy_refusal_also_names_the_missing_secret(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    codename = "internal-codename-BLUEFALCON"
    target = small.files[1]
    text = target.read_text(encoding="utf-8").replace("question 1", f"the {codename} plan")
    target.write_text(text, encoding="utf-8")
    first = publish(fake_hub, small, "--secret", codename, "--no-thinking")
    assert first.exit_code == 0, first.output
    commits = len(fake_hub.commits)

    both = publish(fake_hub, small)  # neither --no-thinking nor the --secret
    assert both.exit_code == 1, both.output
    assert "with --no-thinking" in both.stderr
    assert "Also: 1 session would be published again without replacing 1 secret" in both.stderr
    assert codename not in both.output

    cuts_only = publish(fake_hub, small, "--secret", codename)  # the secret given: cuts only
    assert cuts_only.exit_code == 1, cuts_only.output
    assert "with --no-thinking" in cuts_only.stderr and "Also:" not in cuts_only.stderr

    secret_only = publish(fake_hub, small, "--no-thinking")  # as before: the secret alone
    assert secret_only.exit_code == 1, secret_only.output
    assert "without replacing 1 secret" in secret_only.stderr
    assert "more removed" not in secret_only.stderr
    assert len(fake_hub.commits) == commits  # nothing sent
