"""Shell commands whose output is a secret: a secret manager or keychain asked for a value.

``vault kv get -field=password db`` prints the bare password; nothing in the output says
what it is, so no detector can know it. The command says it: the whole output of such a
command (a tool result of a ``bash`` call, or Pi's ``!cmd``) is redacted, and its value is
then removed wherever the agent repeats it.
"""

from __future__ import annotations

import fnmatch
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
    | \boc\s+(?:-{1,2}[a-z\-]+(?:[\s=][^\s\-][^\s]*)?\s+){0,4}extract\s+
      (?# --to=- or /dev/stdout: printed, not written to files; after the secret or before)
      (?:(?:-{1,2}[a-z\-]+(?:[\s=][^\s\-][^\s]*)?\s+){0,4}(?i:secrets?)[/\s]
         (?=[^\n|;&]{0,300}\s--to[\s=](?:["']?-["']?|/dev/stdout)(?=[\s|;&)]|$))
      | (?:-{1,2}[a-z\-]+(?:[\s=][^\s\-][^\s]*)?\s+){0,3}--to[\s=](?:["']?-["']?|/dev/stdout)\s+
        (?:-{1,2}[a-z\-]+(?:[\s=][^\s\-][^\s]*)?\s+){0,3}(?i:secrets?)[/\s])
    | \b(?:kubectl|oc)\s+(?:-{1,2}[a-z\-]+(?:[\s=][^\s\-][^\s]*)?\s+){0,8}view-secret\b
      (?# a krew plugin: decodes the secret's values)
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
    r"""\b(?:kubectl|oc|k)\s+(?:-{1,2}[a-z\-]+(?:[\s=][^\s\-][^\s]*)?\s+){0,8}
    (?:(?P<get>get)|(?P<create>create))\s+
    (?:-{1,2}[a-z\-]+(?:[\s=][^\s\-][^\s]*)?\s+){0,8}(?:[A-Za-z.\-]{1,40},){0,16}
    (?i:secrets?)(?![\w\-])""",
    re.VERBOSE,
)
#: An output format that holds the data (not `-o name` or `-o wide`), or a template
_PRINTS_VALUES = re.compile(
    r"(?:\s-o|--output)[\s=]*(?:json|yaml|jsonpath|go-template|template|custom-columns)"
    r"|--template(?![\w\-])"
)
_NAMES_ONLY = re.compile(r"(?:\s-o|--output)[\s=]*name\b")
#: `kubectl get secrets -o name | xargs kubectl get -o yaml`, or a loop over those names:
#: another kubectl get of the command prints them
_KUBECTL_GET_PRINTS = re.compile(
    r"\b(?:kubectl|oc)\s[^\n|;&]{0,200}?\bget(?=\s)[^\n|;&]{0,200}?"
    r"(?:(?:\s-o|--output)[\s=]*(?:json|yaml|jsonpath|go-template|template)|--template(?![\w\-]))"
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
#: filter (gojq's, yq's), whose field names say whether it is a secret.
_TERRAFORM_JSON_JQ = re.compile(
    r"\b(?:terraform|tofu|terragrunt)[ \t]+(?:-\S+[ \t]+){0,3}output[ \t]+(?:-\S+[ \t]+){0,4}?"
    r"-json(?:=true)?[ \t]*\|[ \t]*(?:go)?[jy]q\b(?P<filter>[^\n]{1,300})"
)
#: `terraform state pull`, `terraform show -json`: the state, whose resources hold their
#: secrets in the clear (`random_password`'s `result`)
_TERRAFORM_STATE = re.compile(
    r"\b(?:terraform|tofu|terragrunt)[ \t]+(?:-\S+[ \t]+){0,3}"
    r"(?:state[ \t]+pull|show[ \t]+(?:-\S+[ \t]+){0,3}?-json(?:=true)?)(?![\w\-])"
    r"(?P<rest>[^\n]{0,300})"
)
#: One path of a jq filter, `.db_password.value`, `.["admin_password"].value`
_JQ_PATH = re.compile(r"(?:\.\[?[\"']?[A-Za-z_][\w\-]{0,127}[\"']?\]?)+")
_JQ_FIELD = re.compile(r"\.\[?[\"']?([A-Za-z_][\w\-]{0,127})")
#: A path that goes on through arrays: `.resources[].type`, `.items[0].name`
_JQ_ARRAY_PATH = re.compile(r"(?:\.\[?[\"']?[A-Za-z_][\w\-]{0,127}[\"']?\]?(?:\[[0-9]{0,9}\])*)+")
#: What a filter asks of an output without printing it: its type, whether it is sensitive
_JQ_NOT_THE_VALUE = frozenset(("type", "sensitive"))
#: A filter that prints every output's value, or the sensitive ones'
_JQ_ALL_VALUES = re.compile(
    r"select\(\s*\.sensitive\s*\)|\.\[\][^|]{0,40}\|\s*\.value\b|\.\[\]\.value\b"
    r"|map_values\(\s*\.value|to_entries|with_entries"
)
#: A filter that prints a test (`!= null`, `has(…)`, `length`), or output sent nowhere
_JQ_TEST = re.compile(r"[!=]=|\bhas\(|\blength\b|\bkeys\b")
#: Standard output sent to a file or nowhere (`> f`, `>>f`, `1>/dev/null`, `&>/dev/null`),
#: not standard error (`2>/dev/null`, `2>&1`)
_STDOUT_REDIRECT = re.compile(r"(?:^|[\s;])[1&]?>>?(?!&)")
_FD_DUPLICATE = re.compile(r"[0-9]?>&[0-9]")
_STDOUT_TO_NULL = re.compile(r"(?:^|[\s;])[1&]?>>?[ \t]*/dev/null\b")
#: What a filter's last step tests or counts instead of printing it: a comparison, `has`,
#: `length`, `keys` (a `select(…)`'s or an `if … then`'s own test is not the output)
_JQ_CONDITION = re.compile(r"select\([^()]{0,200}\)|\bif\b[^|]{0,200}?\bthen\b")
#: Fields that name or describe a resource or an output, never hold its secret
_JQ_NAME_FIELDS = frozenset((
    "type", "sensitive", "name", "address", "key", "mode", "provider", "module", "serial",
    "lineage", "version", "terraform_version", "format_version", "index_key", "each",
    "schema_version", "resource_changes", "actions", "arn",
))  # fmt: skip


def _names_a_secret(name: str) -> bool:
    """An output's or a variable's name that says its value is a secret (a password, an
    API key; not a bare ``key`` or ``token``, which name ids as often)."""
    return name_strength(name) in ("password", "strong")


#: One stage of a pipeline: up to a `|`, `;` or `&` outside quotes (or a quote not closed)
_STAGE = re.compile(r"(?:'[^'\n]*'|\"[^\"\n]*\"|[^'\"|;&\n])*")


def _pipeline_stage(text: str) -> str:
    """``text`` up to the first ``|``, ``;`` or ``&`` outside quotes: one stage of a
    pipeline (a jq filter's own ``|`` is quoted)."""
    return _STAGE.match(text).group()


def _jq_last_step(stage: str) -> str | None:
    """The last step of a jq filter that picks (after its last ``|`` but bare transforms
    such as ``@sh`` or ``tostring``; the whole stage with its arguments when it has none),
    its ``select(…)`` and ``if … then`` tests left out; None when it only tests or counts,
    or its output is sent nowhere."""
    if _STDOUT_TO_NULL.search(stage):
        return None
    steps = stage.split("|")
    for i in range(len(steps) - 1, -1, -1):
        step = _JQ_CONDITION.sub(" ", steps[i])
        if _JQ_TEST.search(step):
            return None
        if i == 0 or _JQ_PATH.search(step) or "$" in step:
            return step
        # a bare transform (`@sh`, `@base64`, `tostring`) prints what the step before
        # picked: that one is judged (review 143 H3)
    return None


def _jq_names_only(last: str) -> bool:
    """The step picks only fields that name or describe (``.name``, ``map(.key)``,
    ``.resources[].type``)."""
    paths = [_JQ_FIELD.findall(p.group()) for p in _JQ_ARRAY_PATH.finditer(last)]
    return bool(paths) and all(f and f[-1] in _JQ_NAME_FIELDS for f in paths)


def _jq_prints_a_secret(stage: str) -> bool:
    """A jq filter (and its arguments) of `terraform output -json` that prints a secret
    output's value: a path naming one (not only its ``.type`` or ``.sensitive``, nor a test
    of it), or every (sensitive) output's ``.value``. Its last step is judged: what comes
    before it only picks (``select(.sensitive == true) | .value``)."""
    last = _jq_last_step(stage)
    if last is None or _jq_names_only(last):
        return False
    if re.search(r"select\(\s*\.sensitive\s*(?:\|\s*not\b|==\s*false|!=\s*true)", stage):
        return False  # only the outputs that are not sensitive
    if _JQ_ALL_VALUES.search(stage) and not _JQ_PATH.search(last):
        return True  # `map_values(.value)`, `.[] | .value` ended by a bare step
    if "--arg" in stage and any(_names_a_secret(w.strip("'\"")) for w in stage.split()):
        return True  # `jq --arg k db_password '.[$k].value'`
    for path in _JQ_PATH.finditer(last):
        fields = _JQ_FIELD.findall(path.group())
        if not fields or fields[-1] in _JQ_NOT_THE_VALUE:
            continue
        if all(f == "value" for f in fields) or any(_names_a_secret(f) for f in fields):
            return True  # `.value` of every output picked, or a secret one's
    return False


def _state_read(rest: str) -> bool:
    """What follows `terraform state pull` prints its secrets: nothing (the state shown
    whole), a pager or copy, or a jq filter naming a secret, a `random_password`'s
    ``result`` or the sensitive values; not a redirect to a file, a count or a hash."""
    # `2>&1` joins the streams (its `&` ends no command); `&>f` sends both to a file
    rest = _FD_DUPLICATE.sub(" ", rest).replace("&>", " >")
    stage = _pipeline_stage(rest)
    if _STDOUT_REDIRECT.search(stage):
        return False  # written to a file (`2>/dev/null` and `2>&1` are not)
    pipe = rest[len(stage) : len(stage) + 2]
    if not pipe.startswith("|") or pipe == "||":
        return True  # printed whole
    after = rest[len(stage) + 1 :].lstrip("& \t")
    tool = after.split(None, 1)[0] if after.strip() else ""
    if tool in ("jq", "gojq", "yq"):
        # the state printed unless the filter's last step narrows to names or a test:
        # `jq .`, `jq '.resources[]'`, `jq .values` print every secret of it
        last = _jq_last_step(_pipeline_stage(after))
        return last is not None and not _jq_names_only(last)
    return tool not in ("wc", "sha256sum", "md5sum", "shasum", "grep") or bool(
        _STATE_SECRET.search(_pipeline_stage(after))
    )


#: What a filter of the state names when it picks secrets
_STATE_SECRET = re.compile(r"random_password|\.result\b|sensitive|password|secret", re.I)


#: `redis-cli … CONFIG GET requirepass` (or `*pass*`, `*`): redis-cli prints names and
#: values on lines of their own when its output is no terminal, nothing saying which is which
_REDIS_CONFIG_GET = re.compile(
    r"\bredis-cli\b[^\n|;&]{0,300}?\b(?i:config)[ \t]+(?i:get)[ \t]+"
    r"(?P<patterns>(?:[\"']?[^\s\"';|&<>]{1,128}[\"']?[ \t]*){1,16})"
)
#: The directives that hold Redis's passwords
_REDIS_PASSWORDS = ("requirepass", "masterauth")


def _gets_a_redis_password(patterns: str) -> bool:
    """One of ``CONFIG GET``'s glob patterns matches a password directive."""
    return any(
        fnmatch.fnmatchcase(name, pattern.strip("\"'").lower())
        for pattern in patterns.split()
        for name in _REDIS_PASSWORDS
    )


#: Words that may stand before a command's name: a wrapper, a loop's or a test's keyword
_COMMAND_WRAPPERS = frozenset((
    "sudo", "time", "exec", "env", "then", "do", "else", "xargs", "watch", "nohup", "command",
    "!", "timeout", "nice", "ionice", "doas", "eval", "unbuffer", "chronic", "runuser",
    "stdbuf", "caffeinate", "builtin",
))  # fmt: skip
#: Options of those wrappers that take the next word (`sudo -u deploy`, `timeout -k 5 60`,
#: `nice -n 10`, `runuser -u app --`)
_OPTION_TAKES_WORD = frozenset((
    "-u", "-g", "-U", "-C", "-D", "-h", "-p", "-r", "-t", "-k", "-s", "-n", "-c", "--user",
    "--group", "--signal", "--kill-after", "--adjustment", "-i", "-o", "-e",
))  # fmt: skip
_SETS_VARIABLE = re.compile(r"[A-Za-z_]\w*=\S*")
#: `timeout`'s duration, `60`, `5m`, `1.5s`
_DURATION = re.compile(r"[0-9]+(?:\.[0-9]+)?[smhd]?")
#: Commands whose quoted argument is a command they run: `bash -c '…'`, `ssh host '…'`,
#: `su deploy -c '…'`, `watch '…'`
_RUNS_ITS_ARGUMENT = re.compile(
    r"(?:^|[\s;&|(`])(?P<runner>(?:ba|z|k|da|fi)?sh[ \t]+(?:-[a-z]+[ \t]+)*-[a-z]*c"
    r"|su[ \t]+(?:\S+[ \t]+){0,3}-c|ssh[ \t]+(?:\S+[ \t]+){0,8}?[\w.@\-]+"
    r"|eval|watch(?:[ \t]+-\S+(?:[ \t]+[0-9.]+)?)*|xargs(?:[ \t]+-\S+)*[ \t]+(?:ba)?sh[ \t]+-c)"
    r"[ \t]*[\"']?$"
)
#: How many runners in a row (`bash -c 'ssh h '…`) are followed back to their own start
_RUNNER_DEPTH = 4
#: `docker run … hashicorp/terraform state pull`: the image's own command
_CONTAINER_RUN = re.compile(r"\b(?:docker|podman|nerdctl)[ \t]+(?:container[ \t]+)?run\b")


def _at_command_start(command: str, at: int, depth: int = 0) -> bool:
    """``at`` starts a command (after a line's start, ``;``, ``&&``, ``|``, ``$(``, a
    wrapper and its options, variables set, ``--`` as in ``aws-vault exec prod --``, or a
    quote opened by ``bash -c``, ``ssh host``), not a word quoted in another's arguments
    (``grep 'terraform state pull'``, ``git commit -m '…'``). 160 characters are read back
    at most. The runner of a quoted command must start one itself (``echo ssh h '…'``
    prints the words)."""
    line_start = command.rfind("\n", max(0, at - 160), at) + 1
    low = max(line_start, at - 160)
    before = command[low:at]
    if before and not before[-1].isspace() and before[-1] not in "\"'":
        if before[-1] in ";&|(`{":
            return True  # `a;terraform …`, `"$(terraform …)"`
        if before[-1] != "/":
            return False
        # `/usr/local/bin/terraform`, or a container's image `hashicorp/terraform`
        if _CONTAINER_RUN.search(before):
            return True
    words = before.split()
    if words and words[-1][-1] in "\"'":
        # a quoted command: `bash -c 'terraform …'`, not `grep 'terraform …'`
        if words[-1].strip("\"'"):
            return False
        runner = _RUNS_ITS_ARGUMENT.search(before.rstrip())
        return (
            runner is not None
            and depth < _RUNNER_DEPTH
            and _at_command_start(command, low + runner.start("runner"), depth + 1)
        )
    if words and "/" in words[-1] and not before[-1].isspace():
        words.pop()  # the program's path: judged by what stands before it
    for _ in range(10):
        if not words:
            return low == line_start
        word = words.pop()
        if word[-1] in ";&|(`{" or word == "--":
            return True
        if word in _COMMAND_WRAPPERS or word[0] == "-" or _SETS_VARIABLE.fullmatch(word):
            continue
        if words and words[-1] in _OPTION_TAKES_WORD:
            words.pop()  # `sudo -u deploy`: the option's value
            continue
        if _DURATION.fullmatch(word) and "timeout" in words:
            continue  # `timeout 60`
        return False
    return False


#: `… -o name |` ending its line: the pipeline goes on on the next (review 143 M6)
_PIPE_AT_LINE_END = re.compile(r"\|[ \t]*\r?\n")


def _piped_to_names(command: str, at: int) -> bool:
    """The command at ``at`` is piped into a jq (gojq, yq) filter that prints only key names,
    a count or a test (``jq 'keys'``, ``jq -r '.data | keys[]'``, ``jq 'to_entries |
    map(.key)'``, ``jq .metadata.name``): its secret values are not printed."""
    rest = command[at : at + 1200]
    stage = _pipeline_stage(rest)
    pipe = rest[len(stage) : len(stage) + 2]
    if not pipe.startswith("|") or pipe == "||":
        return False
    after = rest[len(stage) + 1 :].lstrip(" \t")
    if after.split(None, 1)[:1] not in (["jq"], ["gojq"], ["yq"]):
        return False
    jq = _pipeline_stage(after)
    if "," in jq:
        return False  # `keys, .password`: more than the names
    last = _jq_last_step(jq)
    return last is None or _jq_names_only(last)


def reads_a_secret(command: str) -> bool:
    """Whether a shell command (any part of a pipeline or list) reads a secret's value."""
    if "\\\n" in command:  # a command continued on the next line: one line
        command = command.replace("\\\r\n", " ").replace("\\\n", " ")
    if "|" in command and "\n" in command:  # a pipe continued on the next line: one line
        command = _PIPE_AT_LINE_END.sub("| ", command)
    if "output" in command:
        for match in _TERRAFORM_OUTPUT.finditer(command):
            if _names_a_secret(match["name"]):
                return True
        if "jq" in command or "yq" in command:
            for match in _TERRAFORM_JSON_JQ.finditer(command):
                if _jq_prints_a_secret(_pipeline_stage(match["filter"])):
                    return True
    if "state" in command or "show" in command:
        for match in _TERRAFORM_STATE.finditer(command):
            if _at_command_start(command, match.start()) and _state_read(match["rest"]):
                return True
    if "$" in command or "printenv" in command:
        for match in _PRINTS_VARIABLE.finditer(command):
            name = match.group(1) or match.group(2)
            if _names_a_secret(name):
                return True
    if "redis-cli" in command:
        for match in _REDIS_CONFIG_GET.finditer(command):
            if _gets_a_redis_password(match["patterns"]):
                return True
    if not any(word in command for word in _WORDS):
        return False
    if "secret" in command or "Secret" in command or "SECRET" in command:
        names_only = 4  # (looked after a few `-o name` lists only: a long line stays linear)
        for match in _KUBECTL_GET_SECRET.finditer(command):
            get = match.end("get") if match["get"] is not None else match.end("create")
            line_end = min(
                (i for i in (command.find(c, get, get + 300) for c in "\n|;&#") if i >= 0),
                default=get + 300,
            )
            if _PRINTS_VALUES.search(command, get, line_end):
                if match["get"] is not None:
                    if _piped_to_names(command, match.start()):
                        continue  # `-o json | jq '.data | keys'`: the names
                    return True
                # `create secret … --dry-run -o yaml`: printed, unless sealed on the way
                if "kubeseal" not in command[line_end : line_end + 300]:
                    return True
            elif (
                match["get"] is not None
                and names_only > 0
                and _NAMES_ONLY.search(command, get, line_end)
            ):
                names_only -= 1
                for later in _KUBECTL_GET_PRINTS.finditer(command, line_end, line_end + 600):
                    # the names, then each one printed: a later stage of the pipeline
                    # (`| xargs kubectl get -o yaml`) or a get of a loop's `$s`, not any
                    # other get after `;`, `&&` or on the next line
                    between = command[line_end : later.start()]
                    if not any(c in between for c in ";&\n") or "$" in later.group():
                        return True
    # (`… | jq 'keys'`: the names of the secret's fields, not their values)
    return any(not _piped_to_names(command, m.start()) for m in _READS.finditer(command))
