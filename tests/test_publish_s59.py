"""Stop 59: a file renamed by its user in another script went up under the ASCII left of
its name (``Привет мир (copy).jsonl`` as ``copy.jsonl``, ``日本語.jsonl`` as
``session.jsonl``), or as a Windows device name; a token GitHub echoed across the cut of
its message kept its head."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from exporter.discover import encode_cwd
from exporter.publish.errors import PublishError
from exporter.publish.gist import GistClient
from exporter.publish.hub_plan import repo_stem
from tests.fakes.github import FakeGitHub
from tests.fakes.hub import FakeHub, fake_hub_fixture
from tests.test_publish import Corpus, assert_consistent, hub_env, publish, session_paths

__all__ = ["fake_hub_fixture", "hub_env"]  # fixtures, used by name


def _session(session_id: str, text: str) -> str:
    header = {"type": "session", "version": 3, "id": session_id,
              "timestamp": "2026-03-03T10:00:00.000Z", "cwd": "/home/bob/x"}  # fmt: skip
    prompt = {"type": "message", "id": "m1", "parentId": None,
              "timestamp": "2026-03-03T10:00:01.000Z",
              "message": {"role": "user", "content": text, "timestamp": 1}}  # fmt: skip
    return "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in (header, prompt))


def test_names_in_other_scripts_keep_their_letters(fake_hub: FakeHub, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    folder = root / encode_cwd("/home/bob/x")
    folder.mkdir(parents=True)
    names = ["Привет мир (copy).jsonl", "日本語.jsonl", "\u0065\u0301t\u00e9.jsonl"]
    files = []
    for n, name in enumerate(names):
        path = folder / name
        path.write_text(_session(f"{n}1111111-1111-4111-8111-111111111111", name), "utf-8")
        files.append(path)
    result = publish(fake_hub, Corpus(root, files, []))
    assert result.exit_code == 0, result.output
    assert {p.rpartition("/")[2] for p in session_paths(fake_hub)} == {
        "Привет-мир-copy.jsonl",
        "日本語.jsonl",
        "\u00e9t\u00e9.jsonl",  # one form (NFC), whichever the file system gave
    }
    assert_consistent(fake_hub)
    again = publish(fake_hub, Corpus(root, files, []))
    assert again.exit_code == 0 and "no commit" in again.stdout, again.output


def test_a_long_name_is_cut_on_a_character_boundary() -> None:
    stem = repo_stem("é" * 300 + ".jsonl", lambda name: name)
    assert stem == "é" * 75 and len(stem.encode("utf-8")) == 150
    assert repo_stem("\udc80.jsonl", lambda name: name) == "session"


def test_no_dataset_file_takes_a_windows_device_name() -> None:
    assert repo_stem("AUX.jsonl", lambda name: name) == "AUX_"
    assert repo_stem("com1.backup.jsonl.gz", lambda name: name) == "com1_.backup"
    assert repo_stem("auxiliary.jsonl", lambda name: name) == "auxiliary"


def test_a_token_github_echoes_across_the_cut_of_its_message_is_hidden() -> None:
    """GitHub's message is cut at 300 characters before the token was hidden: an echo
    across the cut left its head (the Hub's messages had the same flaw)."""
    token = "ghp_" + "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0Ja2Pq4"
    with FakeGitHub() as github:
        github.fail(400, body={"message": "x" * 280 + f" Bearer {token}"})
        client = GistClient(github.base_url, token, sleep=lambda _s: None)
        with pytest.raises(PublishError) as err:
            client.create({"session.html": "<p>hi</p>"}, "d")
    assert token[:12] not in str(err.value) and "***" in str(err.value)


def test_letters_keep_their_marks() -> None:
    assert repo_stem("नमस्ते दुनिया.jsonl", lambda name: name) == "नमस्ते-दुनिया"
    assert repo_stem("שָׁלוֹם.jsonl", lambda name: name) == "שָׁלוֹם"


def test_prune_keeps_the_copy_of_a_file_now_unreadable_under_its_old_name(
    fake_hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy published before 0.2.42 has the ASCII name (``copy.jsonl``); once its file
    is unreadable, only its name protects it from --prune, and that was the new one (review)."""
    import re

    from exporter.publish import hub_plan

    root = tmp_path / "sessions"
    folder = root / encode_cwd("/home/bob/x")
    folder.mkdir(parents=True)
    mine = folder / "Привет мир (copy).jsonl"
    mine.write_text(_session("71111111-1111-4111-8111-111111111111", "mine"), "utf-8")
    other = folder / "other.jsonl"
    other.write_text(_session("81111111-1111-4111-8111-111111111111", "other"), "utf-8")
    corpus = Corpus(root, [mine, other], [])

    def ascii_stem(name: str, public_name: object) -> str:  # the rule before 0.2.42
        stem = name.removesuffix(".gz").removesuffix(".jsonl")
        return re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.") or "session"

    with monkeypatch.context() as patch:
        patch.setattr(hub_plan, "repo_stem", ascii_stem)
        assert publish(fake_hub, corpus).exit_code == 0
    assert {p.rpartition("/")[2] for p in session_paths(fake_hub)} == {"copy.jsonl", "other.jsonl"}
    mine.write_bytes(b"\x00\x01 not a session\n")
    pruned = publish(fake_hub, corpus, "--prune")
    assert pruned.exit_code == 0, pruned.output
    assert {p.rpartition("/")[2] for p in session_paths(fake_hub)} == {"copy.jsonl", "other.jsonl"}
