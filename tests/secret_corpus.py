"""A planted-secret corpus: realistic fake secrets of many kinds and every place to hide them.

`make_secret(kind, rng)` builds one fake secret (random, in the provider's real format) and
the text that carries it; `FIELDS` plant a text into one field kind of a session's records
(header, messages, tool calls and results, diffs, bash, custom data, labels, summaries...),
creating a suitable entry when the carrier has none. `plant_corpus` spreads many secrets
over a list of carriers. Nothing here is a real credential.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"
PASSWORD = ALNUM + "!@#%^*-_+.:"
URL_PASSWORD = ALNUM + "!%^*-_+.~"


def rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    """Random text that uses every class (lower/upper/digit) its alphabet offers."""
    wanted = [c for c in (LOWER, UPPER, DIGITS) if set(c) & set(alphabet)]
    while True:
        text = "".join(rng.choice(alphabet) for _ in range(n))
        # "xxxx" and "..." read as placeholders (``sk-ant-...``), which redaction keeps.
        if all(set(text) & set(c) for c in wanted) and not {"xxxx", "..."} & _runs(text):
            return text


def _runs(text: str) -> set[str]:
    low = text.lower()
    return {run for run in ("xxxx", "...") if run in low}


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": rand(rng, 12), "iat": rng.randrange(10**9, 2 * 10**9), "name": "dev"}
    return f"{header}.{_b64url(json.dumps(claims).encode())}.{rand(rng, 43, URLSAFE)}"


def _discord_bot(rng: random.Random) -> str:
    """<the bot's user id, 17 to 19 digits, in base64>.<timestamp>.<HMAC, 27 or 38>."""
    user_id = _b64url(str(rng.randrange(10**16, 10**19)).encode())
    return f"{user_id}.{rand(rng, 6, URLSAFE)}.{rand(rng, rng.choice((27, 38)), URLSAFE)}"


def _pem(rng: random.Random) -> tuple[str, list[str]]:
    label = rng.choice(["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY"])
    lines = [rand(rng, 64, B64) for _ in range(rng.randrange(4, 9))]
    block = f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"
    return block, lines


@dataclass(frozen=True)
class Planted:
    """One planted secret: ``secrets`` are the strings that must vanish from the output."""

    kind: str
    secrets: tuple[str, ...]
    text: str
    field: str = ""
    carrier: int = 0


def _token(kind: str, rng: random.Random) -> str:
    makers: dict[str, Callable[[], str]] = {
        "openai-project": lambda: "sk-proj-" + rand(rng, 156, URLSAFE),
        "openai-legacy": lambda: "sk-" + rand(rng, 20) + "T3BlbkFJ" + rand(rng, 20),
        "anthropic": lambda: "sk-ant-api03-" + rand(rng, 93, URLSAFE) + "AA",
        "openrouter": lambda: "sk-or-v1-" + rand(rng, 64, "0123456789abcdef"),
        "groq": lambda: "gsk_" + rand(rng, 52),
        "xai": lambda: "xai-" + rand(rng, 80),
        "cerebras": lambda: "csk-" + rand(rng, 48, LOWER + DIGITS),
        "google": lambda: "AIza" + rand(rng, 35, URLSAFE),
        "github-classic": lambda: (
            rng.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + rand(rng, 36)
        ),
        "github-fine-grained": lambda: "github_pat_" + rand(rng, 22) + "_" + rand(rng, 59),
        "gitlab": lambda: "glpat-" + rand(rng, 20, URLSAFE),
        "huggingface": lambda: "hf_" + rand(rng, 34, LOWER + UPPER),
        "aws-key-id": lambda: rng.choice(["AKIA", "ASIA"]) + rand(rng, 16, UPPER + DIGITS),
        "slack": lambda: (
            f"xox{rng.choice('bpa')}-{rand(rng, 11, DIGITS)}-"
            f"{rand(rng, 13, DIGITS)}-{rand(rng, 24)}"
        ),
        "stripe": lambda: rng.choice(["sk_live_", "rk_live_"]) + rand(rng, 99),
        "npm": lambda: "npm_" + rand(rng, 36),
        "pypi": lambda: "pypi-AgEIcHlwaS5vcmc" + rand(rng, 150, URLSAFE),
        "jwt": lambda: _jwt(rng),
        "discord-bot": lambda: _discord_bot(rng),
    }
    return makers[kind]()


TOKEN_KINDS = (
    "openai-project", "openai-legacy", "anthropic", "openrouter", "groq", "xai", "cerebras",
    "google", "github-classic", "github-fine-grained", "gitlab", "huggingface", "aws-key-id",
    "slack", "stripe", "npm", "pypi", "jwt", "discord-bot",
)  # fmt: skip
OTHER_KINDS = (
    "aws-secret-named", "aws-secret-near-id", "bearer", "basic", "cookie", "private-key",
    "url-credentials", "slack-webhook", "env-assignment", "json-assignment", "yaml-password",
    "cli-flag", "literal-secret", "env-secret",
)  # fmt: skip
KINDS = TOKEN_KINDS + OTHER_KINDS
_TOKEN_CONTEXTS = (
    "{s}",
    "my key is {s}, please keep it safe",
    "export SOME_VAR={s}\n",
    'const client = new Client("{s}");',
    "token: '{s}'",
    "curl https://api.example.com -d key={s} -s",
    "`{s}`",
    "(see {s})",
)
_ASSIGN_NAMES = ("DB_PASSWORD", "API_SECRET", "STRIPE_CLIENT_SECRET", "MY_SERVICE_API_KEY")


def make_secret(kind: str, rng: random.Random) -> Planted:
    """One fake secret of ``kind`` inside a realistic carrier text."""
    if kind in TOKEN_KINDS:
        token = _token(kind, rng)
        return Planted(kind, (token,), rng.choice(_TOKEN_CONTEXTS).format(s=token))
    value = rand(rng, rng.randrange(14, 28), PASSWORD)
    if kind == "aws-secret-named":
        secret = rand(rng, 40, B64)
        text = f"[default]\naws_access_key_id = AKIA{rand(rng, 16, UPPER + DIGITS)}\n"
        return Planted(kind, (secret,), text + f"aws_secret_access_key = {secret}\n")
    if kind == "aws-secret-near-id":
        key_id, secret = "AKIA" + rand(rng, 16, UPPER + DIGITS), rand(rng, 40, B64)
        return Planted(kind, (key_id, secret), f"User,Key,Secret\nci-bot,{key_id},{secret}\n")
    if kind == "bearer":
        secret = rand(rng, 40, URLSAFE)
        return Planted(kind, (secret,), f'curl -H "Authorization: Bearer {secret}" https://x.io')
    if kind == "basic":
        secret = base64.b64encode(f"deploy:{value}".encode()).decode()
        return Planted(kind, (secret, value), f"Authorization: Basic {secret}\r\nAccept: */*")
    if kind == "cookie":
        secret = rand(rng, 32)
        return Planted(kind, (secret,), f"Cookie: sessionid={secret}; theme=dark")
    if kind == "private-key":
        block, lines = _pem(rng)
        return Planted(kind, (block, *lines), f"$ cat ~/.ssh/id_rsa\n{block}\n")
    if kind == "url-credentials":
        secret = rand(rng, 18, URL_PASSWORD)
        return Planted(kind, (secret,), f"DATABASE_URL=postgres://app:{secret}@db.internal:5432/x")
    if kind == "slack-webhook":
        path = f"T{rand(rng, 8, UPPER + DIGITS)}/B{rand(rng, 8, UPPER + DIGITS)}/{rand(rng, 24)}"
        return Planted(kind, (path,), f"webhook: https://hooks.slack.com/services/{path}")
    if kind == "env-assignment":
        return Planted(kind, (value,), f"export {rng.choice(_ASSIGN_NAMES)}={value}\necho ok")
    if kind == "json-assignment":
        secret = rand(rng, 24)
        name = rng.choice(["api_key", "apiKey", "client_secret", "password", "accessToken"])
        return Planted(kind, (secret,), json.dumps({name: secret, "region": "eu-west-1"}))
    if kind == "yaml-password":
        return Planted(kind, (value,), f"database:\n  user: app\n  password: {value}\n")
    if kind == "cli-flag":
        return Planted(kind, (value,), f"deploy-tool --api-key={value} --verbose")
    if kind == "literal-secret":
        secret = "correct-horse-" + rand(rng, 10, LOWER + DIGITS)
        return Planted(kind, (secret,), f"the vault passphrase is {secret} (do not share)")
    if kind == "env-secret":
        secret = rand(rng, 32)
        return Planted(kind, (secret,), f"VENDOR said: use {secret} for the staging box")
    raise ValueError(kind)


# --- where to plant -----------------------------------------------------------------------


class Carrier:
    """The JSON records of one session (header first), editable, with fresh-id helpers."""

    def __init__(self, records: list[dict[str, Any]], rng: random.Random) -> None:
        self.records, self.rng = records, rng
        self.ids = {r.get("id") for r in records}
        self.counter = 0

    def new_id(self) -> str:
        while True:
            candidate = "".join(self.rng.choice("0123456789abcdef") for _ in range(8))
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def find(self, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
        matches = [r for r in self.records[1:] if test(r)]
        return self.rng.choice(matches) if matches else None

    def message(self, role: str, test: Callable[[dict[str, Any]], bool] | None = None):
        def wanted(r: dict[str, Any]) -> bool:
            m = r.get("message")
            return r.get("type") == "message" and isinstance(m, dict) and m.get("role") == role

        return self.find(lambda r: wanted(r) and (test is None or test(r["message"])))

    def append(self, entry: dict[str, Any]) -> dict[str, Any]:
        parent = self.records[-1].get("id") if len(self.records) > 1 else None
        entry.update(id=self.new_id(), parentId=parent, timestamp="2026-01-01T00:00:00.000Z")
        self.records.append(entry)
        return entry

    def assistant(self) -> dict[str, Any]:
        found = self.message("assistant", lambda m: isinstance(m.get("content"), list))
        if found is None:
            message = {"role": "assistant", "content": [], "stopReason": "stop", "timestamp": 0}
            found = self.append({"type": "message", "message": message})
        return found["message"]

    def tool_result(self) -> dict[str, Any]:
        found = self.message("toolResult", lambda m: isinstance(m.get("content"), list))
        if found is None:
            message = {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                       "content": [], "isError": False, "timestamp": 0}  # fmt: skip
            found = self.append({"type": "message", "message": message})
        return found["message"]

    def bash(self) -> dict[str, Any]:
        found = self.message("bashExecution")
        if found is None:
            message = {"role": "bashExecution", "command": "env", "output": "", "exitCode": 0,
                       "cancelled": False, "truncated": False, "timestamp": 0}  # fmt: skip
            found = self.append({"type": "message", "message": message})
        return found["message"]

    def typed(self, kind: str, **defaults: Any) -> dict[str, Any]:
        found = self.find(lambda r: r.get("type") == kind)
        return found if found is not None else self.append({"type": kind, **defaults})

    def some_id(self) -> str:
        return str(self.rng.choice(self.records[1:])["id"]) if len(self.records) > 1 else "root"


def _add_text(holder: dict[str, Any], key: str, text: str) -> None:
    value = holder.get(key)
    if isinstance(value, list):
        value.append({"type": "text", "text": text})
    else:
        holder[key] = f"{value}\n{text}" if isinstance(value, str) and value else text


def _user(c: Carrier, text: str) -> None:
    found = c.message("user")
    if found is None:
        found = c.append({"type": "message", "message": {"role": "user", "content": ""}})
    _add_text(found["message"], "content", text)


def _thinking(c: Carrier, text: str, signature: bool = False) -> None:
    block = {"type": "thinking", "thinking": "Let me check the config.", "thinkingSignature": ""}
    block["thinkingSignature" if signature else "thinking"] = text
    c.assistant()["content"].insert(0, block)


def _tool_call(c: Carrier, text: str, as_json_string: bool = False) -> None:
    c.counter += 1
    arguments: Any = {"command": text, "timeout": 30}
    if as_json_string:
        arguments = json.dumps(arguments)
    call = {"type": "toolCall", "id": f"planted{c.counter}", "name": "bash", "arguments": arguments}
    c.assistant()["content"].append(call)


def _details(holder: dict[str, Any], key: str, text: str) -> None:
    details = holder.get("details") if isinstance(holder.get("details"), dict) else {}
    holder["details"] = {**details, key: [*details.get(key, []), text]}


def _diff(c: Carrier, text: str) -> None:
    result = c.tool_result()
    details = result.get("details") if isinstance(result.get("details"), dict) else {}
    old = details.get("diff", "") if isinstance(details.get("diff"), str) else ""
    lines = "\n".join(f"+{i} {line}" for i, line in enumerate(text.splitlines(), 10))
    result["details"] = {**details, "diff": f"{old}\n- 9 old = 1\n{lines}"}


def _custom_data(c: Carrier, text: str) -> None:
    entry = c.typed("custom", customType="vault-sync", data={})
    entry["data"] = {"previous": entry.get("data"), "env": {"vars": [{"raw": text}]}}


def _summary(kind: str) -> Callable[[Carrier, str], None]:
    def plant(c: Carrier, text: str) -> None:
        if kind == "branch_summary":
            c.append({"type": kind, "fromId": c.some_id(), "summary": text})
        else:
            details = {"readFiles": [], "modifiedFiles": []}
            c.append({"type": kind, "summary": text, "firstKeptEntryId": c.some_id(),
                      "tokensBefore": 120000, "details": details})  # fmt: skip

    return plant


def _summary_details(kind: str) -> Callable[[Carrier, str], None]:
    def plant(c: Carrier, text: str) -> None:
        _summary(kind)(c, "Tried the config loader.")
        _details(c.records[-1], "modifiedFiles" if kind == "compaction" else "readFiles", text)

    return plant


FIELDS: dict[str, Callable[[Carrier, str], None]] = {
    "header.cwd": lambda c, t: c.records[0].update(cwd=f"{c.records[0].get('cwd', '')} {t}"),
    "header.parentSession": lambda c, t: c.records[0].update(parentSession=f"/tmp/x.jsonl {t}"),
    "user.text": _user,
    "assistant.text": lambda c, t: c.assistant()["content"].append({"type": "text", "text": t}),
    "assistant.errorMessage": lambda c, t: c.assistant().update(errorMessage=t),
    "thinking": _thinking,
    "thinking.signature": lambda c, t: _thinking(c, t, signature=True),
    "toolCall.arguments": _tool_call,
    "toolCall.arguments-json-string": lambda c, t: _tool_call(c, t, as_json_string=True),
    "toolResult.text": lambda c, t: _add_text(c.tool_result(), "content", t),
    "toolResult.details.diff": _diff,
    "bash.command": lambda c, t: _add_text(c.bash(), "command", t),
    "bash.output": lambda c, t: _add_text(c.bash(), "output", t),
    "custom.data": _custom_data,
    "custom_message.content": lambda c, t: _add_text(
        c.typed("custom_message", customType="notes", content="", display=True), "content", t
    ),
    "custom_message.details": lambda c, t: _details(
        c.typed("custom_message", customType="notes", content="n", display=False), "notes", t
    ),
    "label": lambda c, t: c.append({"type": "label", "targetId": c.some_id(), "label": t}),
    "session_info.name": lambda c, t: c.append({"type": "session_info", "name": t}),
    "branch_summary.summary": _summary("branch_summary"),
    "branch_summary.details": _summary_details("branch_summary"),
    "compaction.summary": _summary("compaction"),
    "compaction.details": _summary_details("compaction"),
    "unknown-entry-type": lambda c, t: c.append({"type": "future_kind", "payload": {"note": t}}),
}


@dataclass
class Corpus:
    """Carriers (records per session) and what was planted where."""

    carriers: list[list[dict[str, Any]]]
    planted: list[Planted] = field(default_factory=list)

    def literal_secrets(self) -> tuple[str, ...]:
        return tuple(s for p in self.planted if p.kind == "literal-secret" for s in p.secrets)

    def env(self) -> dict[str, str]:
        """An environment whose sensitive variables hold the env-secret kind's values."""
        values = [s for p in self.planted if p.kind == "env-secret" for s in p.secrets]
        return {f"VENDOR_{i}_API_TOKEN": value for i, value in enumerate(values)}


def plant_corpus(carriers: list[list[dict[str, Any]]], count: int, seed: int) -> Corpus:
    """Plant ``count`` secrets, cycling through every kind and every field kind."""
    rng = random.Random(seed)
    corpus = Corpus(carriers)
    editors = [Carrier(records, rng) for records in carriers]
    fields = list(FIELDS)
    for index in range(count):
        kind = KINDS[index % len(KINDS)]
        where = fields[(index * 5 + index // len(KINDS)) % len(fields)]
        carrier = index % len(carriers)
        planted = make_secret(kind, rng)
        FIELDS[where](editors[carrier], planted.text)
        corpus.planted.append(Planted(kind, planted.secrets, planted.text, where, carrier))
    return corpus
