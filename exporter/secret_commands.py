"""Shell commands whose output is a secret: a secret manager or keychain asked for a value.

``vault kv get -field=password db`` prints the bare password; nothing in the output says
what it is, so no detector can know it. The command says it: the whole output of such a
command (a tool result of a ``bash`` call, or Pi's ``!cmd``) is redacted, and its value is
then removed wherever the agent repeats it.
"""

from __future__ import annotations

import re

from exporter.secret_heuristics import name_strength

__all__ = ["SECRET_OUTPUT", "reads_a_secret"]

#: The placeholder kind of such an output.
SECRET_OUTPUT = "secret-command-output"

_READS = re.compile(
    r"""
    \bvault\s+(?:kv\s+get|read)\b
    | \bop\s+read\b | \bop\s+item\s+get\b[^\n|;&]*--(?:fields|reveal)\b
    | \bgcloud\s+secrets\s+versions\s+access\b
    | \baws\s+secretsmanager\s+get-secret-value\b
    | \baws\s+ssm\s+get-parameters?(?:-by-path)?\b[^\n|;&]*--with-decryption\b
    | \boc\s+extract\s+  (?# --to=-: printed, not written to files; after the secret or before)
      (?:(?:-{1,2}[a-z\-]+(?:[\s=][^\s\-][^\s]*)?\s+){0,4}secrets?[/\s](?=[^\n|;&]{0,300}\s--to[\s=]-(?:\s|$))
      | (?:-{1,2}[a-z\-]+(?:[\s=][^\s\-][^\s]*)?\s+){0,3}--to[\s=]-\s+
        (?:-{1,2}[a-z\-]+(?:[\s=][^\s\-][^\s]*)?\s+){0,3}secrets?[/\s])
    | (?:^|[;&|(]|\bsudo)\s*g?pass\s+show\b  # where a command starts: "pass" is a word
    | \bsecurity\s+find-(?:generic|internet)-password\b[^\n|;&]*\s-w\b
    | \bdoppler\s+secrets\s+(?:get|download)\b | \binfisical\s+secrets\s+get\b
    | \bgh\s+auth\s+token\b | \bgh\s+auth\s+status\b[^\n|;&]*(?:\s-t\b|--show-token)
    | \baz\s+keyvault\s+secret\s+show\b
    | \bbw\s+get\s+(?:password|item|notes)\b
    | \bsops\s+(?:-d|--decrypt|decrypt)\b
    | \bheroku\s+config(?::get)?\b
    | \bcredstash\s+get\b | \bchamber\s+(?:read|export)\b
    | \bheroku\s+auth:token\b | \blpass\s+show\b[^\n|;&]*--password\b
    | \bsecret-tool\s+lookup\b | \baws\s+ecr\s+get-login-password\b
    """,
    re.VERBOSE | re.MULTILINE,
)


#: `kubectl get secret db -o yaml` (flags before `get` or `secret`, the `k` alias, `oc`, a
#: list of kinds: `get cm,secret`): prints the values when `_PRINTS_VALUES` follows `get`.
#: Two steps, not one look-ahead from every `kubectl`: a long line of them stays linear.
_KUBECTL_GET_SECRET = re.compile(
    r"""\b(?:kubectl|oc|k)\s+(?:-{1,2}[a-z\-]+(?:[\s=][^\s\-][^\s]*)?\s+){0,4}(?P<get>get)\s+
    (?:-{1,2}[a-z\-]+(?:[\s=][^\s\-][^\s]*)?\s+){0,4}(?:[a-z.\-]{1,40},){0,8}secrets?\b""",
    re.VERBOSE,
)
#: An output format that holds the data (not `-o name` or `-o wide`), or a template
_PRINTS_VALUES = re.compile(
    r"(?:\s-o|--output)[\s=]*(?:json|yaml|jsonpath|go-template|template|custom-columns)"
    r"|--template\b"
)


#: Words one of those commands holds: most commands (a heredoc writing a whole file) hold
#: none and are not searched with the pattern (~20 µs each, 4% of a redaction).
_WORDS = ("vault", "op ", "gcloud", "aws", "kubectl", "pass", "security", "doppler",
          "infisical", "gh ", "az ", "bw ", "sops", "heroku", "credstash", "chamber",
          "secret-tool", "secret")  # fmt: skip

#: `echo $OPENAI_API_KEY`, `printf '%s' "${DB_PASSWORD}"`, `printenv GITHUB_TOKEN`: the
#: output is the variable's value; the variable's name says whether that is a secret (piped
#: into another command, the output is that command's: `echo $T | gh auth login`).
_PRINTS_VARIABLE = re.compile(
    r"""(?:^|[;&|(]|\bsudo)\s*
    (?:echo(?:\s+-[neE]+)*|printf(?:\s+(?:'[^']*'|"[^"]*"))?)\s+["']?\$\{?([A-Za-z_]\w*)\}?["']?\s*(?:$|[;&)]|\|\|)
    | (?:^|[;&|(])\s*printenv\s+([A-Za-z_]\w*)\s*(?:$|[;&)]|\|\|)""",
    re.VERBOSE | re.MULTILINE,
)


#: `terraform output -raw db_password` (also -json or no flag with a name, and OpenTofu's,
#: Terragrunt's): the value of one output, shown even when sensitive; whether it is a
#: secret, its name says.
_TERRAFORM_OUTPUT = re.compile(
    r"\b(?:terraform|tofu|terragrunt)[ \t]+(?:-\S+[ \t]+){0,3}output[ \t]+(?:-\S+[ \t]+){0,4}?"
    r"(?:-(?:raw|json)(?:=true)?[ \t]+(?:-\S+[ \t]+){0,3})?[\"']?(?P<name>[A-Za-z_][\w\-]{0,127})"
)


#: `terraform output -json | jq -r .db_password.value`: all outputs, one picked by jq's
#: filter, whose field names say whether it is a secret.
_TERRAFORM_JSON_JQ = re.compile(
    r"\b(?:terraform|tofu|terragrunt)[ \t]+(?:-\S+[ \t]+){0,3}output[ \t]+(?:-\S+[ \t]+){0,4}?"
    r"-json(?:=true)?[ \t]*\|[ \t]*jq\b(?P<filter>[^\n|;&]{1,300})"
)
_JQ_FIELD = re.compile(r"\.\[?[\"']?([A-Za-z_][\w\-]{0,127})")


def _names_a_secret(name: str) -> bool:
    """An output's or a variable's name that says its value is a secret (a password, an
    API key; not a bare ``key`` or ``token``, which name ids as often)."""
    return name_strength(name) in ("password", "strong")


def reads_a_secret(command: str) -> bool:
    """Whether a shell command (any part of a pipeline or list) reads a secret's value."""
    if "output" in command:
        for match in _TERRAFORM_OUTPUT.finditer(command):
            if _names_a_secret(match["name"]):
                return True
        if "jq" in command:
            for match in _TERRAFORM_JSON_JQ.finditer(command):
                if any(_names_a_secret(f) for f in _JQ_FIELD.findall(match["filter"])):
                    return True
    if "$" in command or "printenv" in command:
        for match in _PRINTS_VARIABLE.finditer(command):
            name = match.group(1) or match.group(2)
            if _names_a_secret(name):
                return True
    if not any(word in command for word in _WORDS):
        return False
    if "secret" in command:
        for match in _KUBECTL_GET_SECRET.finditer(command):
            get = match.end("get")
            line_end = min(
                (i for i in (command.find(c, get, get + 300) for c in "\n|;&") if i >= 0),
                default=get + 300,
            )
            if _PRINTS_VALUES.search(command, get, line_end):
                return True
    return _READS.search(command) is not None
