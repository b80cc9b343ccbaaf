"""Stop 57: credentials in forms the detectors missed (YAML's value on the line below its
key, Composer's per-host tokens, OpenWeatherMap's ``appid=``), and text in secret-like
shapes that holds none (an emptied cookie, a signing scheme's name, a parameter's name, a
value cut at a variable, a label after AUTH, fsspec's ``github://org:repo@``, a cache key)."""

from __future__ import annotations

import pytest

from exporter.detectors import scan
from tests.test_detectors import _covered


def _found(text: str) -> list[tuple[str, str]]:
    return [(f.detector, text[f.start : f.end]) for f in scan(text)]


MISSED = [
    # YAML: the value alone on the next, deeper line (a plain scalar, or a one-line block)
    ("database:\n  password:\n    Xk9mQ2vLp7RtZw4\n  port: 5432", "Xk9mQ2vLp7RtZw4"),
    ("db:\n  password: |\n    Wd5sKq8Lz2XnPc\n", "Wd5sKq8Lz2XnPc"),
    ("spring:\n  datasource:\n    password: >-\n      Hb8rN2kLm9QzXc\n    url: jdbc:x",
     "Hb8rN2kLm9QzXc"),
    ('api_key:\n  "Rk3vN9pQ2wXy7LmB5tZc"', "Rk3vN9pQ2wXy7LmB5tZc"),
    ("- password:\r\n    sunshinebeach\r\n", "sunshinebeach"),
    # Composer's auth.json, COMPOSER_AUTH and `composer config`: the host names the token
    ('{"github-oauth": {"github.com": "4f8a9c2b1e7d6f3a0b5c8e2d1f4a7b9c3e6d0f2a"}}',
     "4f8a9c2b1e7d6f3a0b5c8e2d1f4a7b9c3e6d0f2a"),
    ('{\n    "github-oauth": {\n        "github.com": "4f8a9c2b1e7d6f3a0b5c8e2d1f4a7b9c3e6d0f2a",'
     '\n        "ghe.example.com": "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d"\n    }\n}',
     "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d"),
    ("export COMPOSER_AUTH='{\"gitlab-token\": {\"gitlab.example.com\": \"Xk9mQ2vLp7RtZw4AbCd\"}}'",
     "Xk9mQ2vLp7RtZw4AbCd"),
    ('"{\\"github-oauth\\": {\\"github.com\\": \\"4f8a9c2b1e7d6f3a0b5c8e2d1f4a7b9c3e6d0f2a\\"}}"',
     "4f8a9c2b1e7d6f3a0b5c8e2d1f4a7b9c3e6d0f2a"),
    ("composer config -g github-oauth.github.com 4f8a9c2b1e7d6f3a0b5c8e2d1f4a7b9c3e6d0f2a",
     "4f8a9c2b1e7d6f3a0b5c8e2d1f4a7b9c3e6d0f2a"),
    ("composer config --global --auth gitlab-token.gitlab.com Xk9mQ2vLp7RtZw4AbCdE",
     "Xk9mQ2vLp7RtZw4AbCdE"),
    # OpenWeatherMap's key is the query's appid
    ('curl "https://api.openweathermap.org/data/2.5/weather?q=London&appid='
     '3f9c2a7b1e8d4f6a0c5b9e2d7a1f4c8b"', "3f9c2a7b1e8d4f6a0c5b9e2d7a1f4c8b"),
    # a signed request's signature, after its scheme's name
    ("Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/"
     "aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature="
     "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
     "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "secret"), MISSED)
def test_a_credential_in_these_forms_goes(text: str, secret: str) -> None:
    assert _covered(text, secret), _found(text)


KEPT = [
    # YAML's next line that is no value: a mapping, a list, code, a variable, a placeholder
    "password:\n  first: Xk9mQ2vLp7RtZw4",
    "tokens:\n  - abc\n  - def",
    "const cfg = {\n  password:\n    process.env.DB_PASSWORD,\n  apiKey:\n    getKey(),\n}",
    "def check(password):\n    return verify(password)",
    "secret:\n\tdocker build --secret id=x .",  # a Makefile's recipe (YAML indents with spaces)
    "password:\n  ${DB_PASSWORD}\n",
    "password:\n  changeme\n",
    "api_key: |\n  Xk9mQ2vLp7RtZw4\n  Rk3vN9pQ2wXy7LmB\n",  # a longer block: no one-line value
    # Composer's placeholders and its settings that hold no token
    '{"github-oauth": {"github.com": "your-github-token"}}',
    "composer config -g github-oauth.github.com YOUR_TOKEN",
    '"config": {"github-protocols": ["https"], "gitlab-domains": ["gitlab.example.com"]}',
    # numeric app ids (Steam, Facebook) are public
    "https://store.steampowered.com/api/appdetails?appid=730",
    # an emptied cookie: only its name is there
    "Set-Cookie: session=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
    # the signing scheme's name
    "Authorization: AWS4-HMAC-SHA256 SignedHeaders=host;x-amz-date",
    "Authorization: GOOG4-RSA-SHA256 SignedHeaders=host",
    # a parameter's name, not its value
    '<property name="passwordParameter" value="j_password"/>',
    '<property name="usernameParameter" value="j_username"/>',
    # a value cut at a variable
    "twine upload --username __token__ --password pypi-$PYPI_TOKEN dist/*",
    "deploy --token abc-`cat token.txt`",
    # a label after AUTH
    "127.0.0.1:6379> auth time:",
    # fsspec's GitHub file system: an org and a repository, then a commit
    'fs.open("github://org:repo@3f9c2a7b1e8d4f6a0c5b9e2d7a1f4c8b3f9c2a7b/README.md")',
    # a cache's or a store's key
    'cache_key = "user:1234:profile:v2"',
    'redis_key = "sessions:42:avatar"',
    'object_key = "tenants/7/uploads/2026/report-v2"',
]


@pytest.mark.parametrize("text", KEPT)
def test_these_forms_without_a_credential_stay(text: str) -> None:
    assert not scan(text), _found(text)


STILL_SECRETS = [
    # the narrowing above must not let these go
    ("Set-Cookie: sid=Xk9mQ2vLp7RtZw4AbCdEf; Path=/; HttpOnly", "Xk9mQ2vLp7RtZw4AbCdEf"),
    ("mysql --password Xk9mQ2vLp7RtZw4 app", "Xk9mQ2vLp7RtZw4"),
    ("127.0.0.1:6379> auth Xk9mQ2vLp7RtZw4", "Xk9mQ2vLp7RtZw4"),
    ("pip install git+https://user:Xk9mQ2vLp7RtZw4@github.com/o/r", "Xk9mQ2vLp7RtZw4"),
    ("git clone https://org:Xk9mQ2vLp7RtZw4@mygithub.example/o/r", "Xk9mQ2vLp7RtZw4"),
    ('<property name="password" value="Sp7rN2kLm9Qz"/>', "Sp7rN2kLm9Qz"),
    ('API_KEY = "user:Xk9mQ2vLp7RtZw4AbCd"', "Xk9mQ2vLp7RtZw4AbCd"),
    ('cache_key = "Xk9mQ2vLp7RtZw4AbCd42"', "Xk9mQ2vLp7RtZw4AbCd42"),
]


@pytest.mark.parametrize(("text", "secret"), STILL_SECRETS)
def test_the_narrowing_keeps_these(text: str, secret: str) -> None:
    assert _covered(text, secret), _found(text)
