"""Redaction review s60: the home folder inside URLs and longer names, type names and
mechanisms taken as passwords (and spread), WordPress salts, tokens split by Markdown's
breaks, and one-time login secrets in URLs (a user name that is also a command is still
replaced everywhere: the review found leaving it leaked the name)."""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from exporter.detectors import scan
from exporter.loader import load_session
from exporter.redact import RedactionPolicy, _worth_repeating, apply_policy

R = random.Random(60)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def header(cwd: str) -> dict[str, Any]:
    return {"type": "session", "version": 3, "id": "s60", "timestamp": "2025-01-01T00:00:00Z",
            "cwd": cwd}  # fmt: skip


def user_msg(text: str, i: int) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"m{i}",
        "parentId": f"m{i - 1}" if i > 1 else None,
        "timestamp": f"2025-01-01T00:00:{i:02d}Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0},
    }


def redacted_texts(
    write_session: Callable[..., Path], texts: list[str], cwd: str, environ: dict[str, str]
) -> list[str]:
    """Each text as a user message of one session, redacted under ``environ``."""
    path = write_session([header(cwd), *(user_msg(t, i) for i, t in enumerate(texts, 1))])
    policy = RedactionPolicy(env_secrets=False)
    redacted, _ = apply_policy(load_session(path), policy, environ=environ)
    by_id = {e.id: e for e in redacted.entries}
    out = []
    for i in range(1, len(texts) + 1):
        content = by_id[f"m{i}"].raw["message"]["content"]
        out.append(content[0]["text"])
    return out


def found(text: str) -> list[tuple[str, str]]:
    return [(f.detector, text[f.start : f.end]) for f in scan(text)]


# --- 1. the home folder: a path's start, not a URL's user name or a longer name -----------


URLS_WITH_ROOT = [
    "mysql://root:secretpw@127.0.0.1:3306/shop",
    "postgres://root@localhost/db",
    "redis://root@cache",
    "sftp://root@host/srv",
    "smb://root@nas/share",
    "amqp://root:root@mq:5672//",
    '{"url": "ws://root@localhost:9000/socket"}',
]
NOT_THE_HOME = ["/root.txt", "~/root", "C:/root/x", "/root-ca.pem", "/rootfs/etc", "./root/x"]


@pytest.mark.parametrize(
    "environ",
    [{"HOME": "/root", "USER": "root"}, {"HOME": "/home/alice", "USER": "alice"}],
    ids=["home-root", "home-alice-cwd-root"],
)
def test_the_home_folder_rule_keeps_urls_and_longer_names(
    write_session: Callable[..., Path], environ: dict[str, str]
) -> None:
    """`mysql://root:pw@db` became `mysql:/~:…@db` (the `/root` after `//` read as the home),
    `/root.txt` became `~.txt`, `~/root` `~~`, `C:/root/x` `C:~/x` (review s60)."""
    texts = [*URLS_WITH_ROOT, *NOT_THE_HOME]
    out = redacted_texts(write_session, texts, "/root/proj", environ)
    assert out[0] == "mysql://root:[REDACTED:url-credentials:1]@127.0.0.1:3306/shop"
    assert out[1:] == texts[1:]


def test_the_home_folder_is_still_replaced_where_it_is_one(
    write_session: Callable[..., Path],
) -> None:
    """A path's start, after `:` in a PATH or a volume, before `/`, punctuation or a quote;
    a `file://` URL keeps its three slashes: `file:///~/x`, still a file URL."""
    texts = [
        "cd /root/proj && ls /root",
        "PATH=/usr/bin:/root/.local/bin",
        "docker run -v /root/.aws:/root/.aws:ro img",
        "saved to '/root/out.txt', then (/root).",
        "file:///root/proj/index.html",
        # after one letter and a colon: a path's or a host's, not a drive (review of s60)
        "-v /data/a:/root/a; PATH=/a/b:/root/bin; scp f h:/root/x",
        "open file:///home/alice/x.html and /home/alice.txt, /home/alice/y",
    ]
    root = redacted_texts(write_session, texts[:6], "/root/proj", {"HOME": "/root"})
    assert root == [
        "cd ~/proj && ls ~",
        "PATH=/usr/bin:~/.local/bin",
        "docker run -v ~/.aws:~/.aws:ro img",
        "saved to '~/out.txt', then (~).",
        "file:///~/proj/index.html",
        "-v /data/a:~/a; PATH=/a/b:~/bin; scp f h:~/x",
    ]
    (alice,) = redacted_texts(
        write_session, texts[6:], "/home/alice/p", {"HOME": "/home/alice", "USER": "alice"}
    )
    assert alice == "open file:///~/x.html and /home/<user>.txt, ~/y"


# --- 2. a type's or a mechanism's name is no password, and is not spread -------------------


PYDANTIC = (
    "from pydantic import BaseModel, SecretStr\n\n"
    "class Settings(BaseModel):\n"
    "    password: SecretStr\n"
    "    api_key: SecretStr = Field(...)\n"
    "    token: SecretStr | None = None\n"
)


@pytest.mark.parametrize(
    "text",
    [
        PYDANTIC,
        "password: SecretStr",
        "    db_password: SecretBytes\n",
        "password: SecureString\n",
        "            capabilities = 'LOGINDISABLED AUTH=CRAM-MD5'\n",
        "* CAPABILITY IMAP4rev1 AUTH=XOAUTH2 AUTH=PLAIN",
    ],
    ids=["pydantic", "annotation", "indented", "aws-type", "imap", "imap2"],
)
def test_type_names_and_mechanisms_are_no_secrets(text: str) -> None:
    assert found(text) == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("password: HunterTwo\n", "HunterTwo"),
        ("password: ProdDbPass\n", "ProdDbPass"),
        ("AUTH_TOKEN=Xk9mQ2vLp7RtZw4AbCdE\n", "Xk9mQ2vLp7RtZw4AbCdE"),
        ('"RequestSecret": "Xk9mQ2vLp7RtZw4AbCdE"', "Xk9mQ2vLp7RtZw4AbCdE"),
    ],
)
def test_camel_case_passwords_are_still_found(text: str, secret: str) -> None:
    assert ("secret-assignment", secret) in found(text)


@pytest.mark.parametrize(
    "text",
    [
        "password: MyCompanyString\n",
        "password: HunterTwoMap\n",
        "password_change_token: Xk9mQ2vLp7RtZw4AbCdE\n",
        "PASSWORD_CHANGE_TOKEN=Xk9mQ2vLp7RtZw4AbCdE\n",
        "oauth_request_token=Xk9mQ2vLp7RtZw4AbCdE\n",
        '"request_token": "Xk9mQ2vLp7RtZw4AbCdE"',
    ],
)
def test_passwords_shaped_like_types_and_change_or_request_tokens_are_found(text: str) -> None:
    """The review of this stop's first fix: any CamelCase words ending in a type's word
    were a type's name (`HunterTwoMap`), and a request or change token no secret."""
    assert any(value in text and len(value) >= 9 for _, value in found(text)), found(text)


def test_passwords_that_only_look_like_names_are_still_replaced_where_they_repeat(
    write_session: Callable[..., Path],
) -> None:
    """`Summer2024Value` read as a type's name and `ACME-PROD-2024` as an algorithm's: found
    in `DB_PASSWORD=…`, each was left in clear where the session said it again."""
    for chosen in ("Summer2024Value", "Passw0rdStr", "Admin123Field", "ACME-PROD-2024",
                   "HUNTER-2024", "2024-1234-99"):  # fmt: skip
        assert _worth_repeating(chosen), chosen
    texts = ["DB_PASSWORD=Summer2024Value\nADMIN_PASSWORD=ACME-PROD-2024",
             "psql -U app -W Summer2024Value; mysql -p ACME-PROD-2024 shop"]  # fmt: skip
    out = redacted_texts(write_session, texts, "/home/dev/p", {})
    assert not any(secret in text for text in out for secret in ("Summer2024", "ACME-PROD"))


def test_a_type_or_mechanism_name_is_not_searched_for_elsewhere(
    write_session: Callable[..., Path],
) -> None:
    """`password: SecretStr` made every `SecretStr` of the session a secret, and
    `AUTH=CRAM-MD5` every `CRAM-MD5` (19 lines of imaplib's tests)."""
    for value in ("SecretStr", "SecretBytes", "CRAM-MD5", "SCRAM-SHA-256", "AES-256-GCM"):
        assert not _worth_repeating(value), value
    for chosen in ("ProdDbPass", "s3cr3t-pa55", "Pg7fQx2LmZ9kWt4R", "HunterTwo99"):
        assert _worth_repeating(chosen), chosen
    texts = [PYDANTIC, "Use SecretStr for it; CRAM-MD5 is a SASL mechanism."]
    out = redacted_texts(write_session, texts, "/home/dev/p", {})
    assert out == texts


# --- 3. WordPress's keys and salts ---------------------------------------------------------


WP_NAMES = ("AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY", "AUTH_SALT",
            "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT")  # fmt: skip
WP_ALPHABET = ALNUM + "!@#$%^&*()-_ []{}<>~`+=,.;:/?|"


@pytest.mark.parametrize("spaced", [False, True], ids=["define(", "define( "])
def test_every_wordpress_key_and_salt_is_found(spaced: bool) -> None:
    """Only SECURE_AUTH_KEY and LOGGED_IN_KEY were: the `*_SALT` names are no secret's
    names, a key with a blank was read as prose, and the padding before the value (9
    blanks after `'AUTH_KEY',`) was longer than the pattern allowed."""
    values = [rand(64, WP_ALPHABET) for _ in WP_NAMES]
    values[0] = ">GT/=^d7F=guoV8FW*n_FbB0JxXujr>>4qqaaABvvLOz*;~Ax/zXMcU1vsHiQM}]"
    values[3] = "Rxl!I$(#UiT/],eNU)|.J!H/ LR=w[b8(GP.J7K#+;TSJ+S0Sw/5UQ%s^vzU9K/k"
    values[4] = ".1v<[%.1M>(`Idzu]4>=xC:x~ f8CvgroOx9y(e17SW,<j]AE VaSZJ0o/(Ve(<M"
    space = " " if spaced else ""
    lines = [
        f"define({space}'{name}',{' ' * (17 - len(name))}'{value}'{space});"
        for name, value in zip(WP_NAMES, values, strict=True)
    ]
    text = "<?php\n" + "\n".join(lines) + "\n"
    assert [value for _, value in found(text)] == values


def test_the_wordpress_sample_phrase_is_no_secret() -> None:
    text = "define( 'AUTH_KEY',         'put your unique phrase here' );\n"
    text += "define( 'NONCE_SALT', 'Set this to 64 random characters, please, okay.' );\n"
    assert found(text) == []


# --- 4. a token split by Markdown's breaks -------------------------------------------------


OPENAI = "sk-proj-" + rand(74) + "T3BlbkFJ" + rand(74)  # 164 characters
GHP = "ghp_" + rand(36)


@pytest.mark.parametrize(
    "text",
    [
        f"| key | value |\n|---|---|\n| OPENAI | {OPENAI[:60]}<br>{OPENAI[60:]} |",
        f"| OPENAI | {OPENAI[:60]}<br/>\n{OPENAI[60:]} |",
        f"Your key:\\\n{OPENAI[:60]}\\\n{OPENAI[60:]}",
        f"> {OPENAI[:60]}\n> {OPENAI[60:]}",
        f"> > {OPENAI[:56]}\n> > {OPENAI[56:112]}\n> > {OPENAI[112:]}\n",
        f"token:\\\n{GHP[:20]}\\\n{GHP[20:]}\n",
        f"| GH | {GHP[:20]}<br />{GHP[20:]} |",
    ],
    ids=["br", "br-newline", "backslash", "quote", "quote-3-lines", "ghp-backslash", "ghp-br"],
)
def test_a_token_split_by_a_markdown_break_goes_whole(text: str) -> None:
    """The part after a `<br>`, a hard break's `\\` or a quote's `> ` stayed in clear (52
    characters of a 164-character project key; a `ghp_` token split 20/20 stayed whole)."""
    left = text
    for finding in reversed(scan(text)):
        left = left[: finding.start] + "#" + left[finding.end :]
    token = OPENAI if "sk-proj" in text else GHP
    pieces = [token[i : i + 12] for i in range(0, len(token) - 12, 6)]
    assert [piece for piece in pieces if piece in left] == [], left


def test_a_break_after_a_whole_token_does_not_take_the_next_word() -> None:
    text = f"export GH={GHP} \\\n  --flag value\n> {OPENAI}\n> Thanks, that works"
    assert [value for _, value in found(text)] == [GHP, OPENAI]


# --- 5. a user name is replaced wherever it stands -------------------------------------------


def test_a_user_name_is_replaced_where_a_package_or_a_command_also_uses_it(
    write_session: Callable[..., Path],
) -> None:
    """This stop first left a user name in clear in the whole session once one command or
    package used it (`docker pull alice/webapp`): too easily done with one's own namespace.
    A name stays `<user>` everywhere (a command named like the user is mangled, which
    leaks nothing)."""
    environ = {"HOME": "/home/alice", "USER": "alice"}
    texts = [
        "docker pull alice/webapp:latest",
        "alice approved the PR",
        "git clone https://github.com/alice/dotfiles",
        "| alice | admin |",
        "Signed-off-by: alice",
    ]
    out = redacted_texts(write_session, texts, "/home/alice/p", environ)
    assert not any("alice" in text for text in out), out
    assert out[1] == "<user> approved the PR"


def test_a_user_name_not_used_as_a_word_is_replaced_everywhere(
    write_session: Callable[..., Path],
) -> None:
    environ = {"HOME": "/home/alice", "USER": "alice"}
    texts = ["alice approved it", "| alice | admin |", "sudo -u alice ls; `alice`", "alice-laptop"]
    out = redacted_texts(write_session, texts, "/home/alice/p", environ)
    assert out == ["<user> approved it", "| <user> | admin |", "sudo -u <user> ls; `<user>`",
                   "<user>-laptop"]  # fmt: skip


# --- 6. one-time login secrets in URLs -----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"Redirected to http://localhost:3000/callback?code={(c := rand(40))}&state=abc", c),
        (f"GET /cb?x=1 https://app.io/oauth/cb?code={(c2 := '4%2F0A' + rand(30))}", c2),
        (f"Your login link: https://app.acme.io/auth/magic?t={(m := rand(43, ALNUM + '-_'))}", m),
        (f"https://acme.io/reset-password/{(p := rand(40))}", p),
        (f"https://acme.io/reset/MQ/{(d := 'c4s5gf-' + rand(32, '0123456789abcdef'))}/", d),
        (f"https://acme.io/invite/{(u := '7f1c2a9e-4b3d-4e2f-9a1b-0c8d7e6f5a4b')}", u),
        ('network={\n    ssid="HomeNet"\n    psk="correct-horse-42"\n}', "correct-horse-42"),
        (f'network={{\n\tssid="x"\n\tpsk={(h := rand(64, "0123456789abcdef"))}\n}}', h),
        ("[wifi-security]\nkey-mgmt=wpa-psk\npsk=MyWifiPass99\n", "MyWifiPass99"),
    ],
    ids=[
        "oauth-code",
        "google-code",
        "magic",
        "reset",
        "django-reset",
        "invite",
        "psk",
        "psk-hex",
        "networkmanager",
    ],
)
def test_one_time_login_secrets_in_urls_are_found(text: str, secret: str) -> None:
    assert secret in [value for _, value in found(text)], found(text)


@pytest.mark.parametrize(
    "text",
    [
        "https://x.io/?code=SUMMER2024SALE",
        "https://x.io/lookup?code=US&lang=en",
        "https://play.rust-lang.org/?version=stable&code=fn%20main()%20%7B%20println!(%22hi%22)",
        "https://accounts.google.com/o/oauth2/auth?code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8"
        "URWbuGJSstw-cM&state=af0ifjsldkj",
        "https://example.com/blog/confirm/order-2024-05-summary-and-more",
        "https://github.com/org/verify/commit/a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0",
        "https://app.io/docs?t=Getting-Started-With-The-Login-Page",
        'psk="correct-horse-42" (no network block)',
        'network={\n    psk="your-password"\n}',
    ],
)
def test_ordinary_urls_and_psk_words_stay(text: str) -> None:
    assert found(text) == []
