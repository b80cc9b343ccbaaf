"""Detectors that know a secret by where it sits rather than by its name or format.

A `.pgpass` line's fifth field, a PuTTY key's private lines, a Docker registry config sent as
base64, the signature of a signed URL (Azure SAS, S3/GCS presigned, CloudFront), the password
of ``htpasswd -b``, a value piped into a command that stores secrets (``echo X | vercel env
add``), ``gh secret set --body X``, the default of ``os.getenv("API_TOKEN", "X")``, a
``| API_KEY | X |`` table row, "the password is X" in prose and what an ``expect`` script
sends at a password prompt. Each is anchored on a literal so that text without it costs one
substring test, and each pattern is bounded so that dense input stays linear.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import ClassVar

from exporter.context_detectors import _flag_start, prose_or_flag
from exporter.detector_base import Detector, Span, wrapped_base64_end
from exporter.secret_heuristics import (
    DIGIT,
    FOREIGN_PASSWORD_NAMES,
    LOWER,
    PLAIN_WORD,
    UPPER,
    is_placeholder,
    is_secret_assignment,
    is_variable_name,
    looks_random,
    name_strength,
)

# What ends an unquoted shell word.
_WORD_END = r"[^\s\"'`;&|<>()]"
_ARG = rf"(?:'[^'\r\n]{{1,512}}'|\"[^\"\r\n]{{1,512}}\"|{_WORD_END}{{1,512}})"  # one argument
# A value after a command: quoted (may hold spaces and the other quote) or one shell word.
_VALUE = (
    rf"(?:'(?P<sv>[^'\r\n]{{4,512}})'|\"(?P<dv>(?:[^\"\\\r\n]|\\.){{4,512}})\""
    rf"|(?P<v>{_WORD_END}{{4,512}}))"
)


def _literal(value: str) -> bool:
    """A value written out, not a variable, a flag, a path or a plain word (the command-line
    detector's check, plus markup and template openers)."""
    return value[0] not in "$%<{*_" and not prose_or_flag(value) and not is_placeholder(value)


# "SHA256-hashed", "40-characters", "UTF-16LE", "HMAC-SHA256", "bcrypt-12", "v1.2.3-beta4":
# descriptions and versions, not values
_DESCRIPTION = re.compile(
    r".*-(?:[a-z]+ed|long|lived|bits?|bytes?|chars?|characters|digits?|hex|safe|only|like|style"
    r"|based|compliant|format|encoding)(?:-[a-z]+)*"
    r"|[A-Z0-9]{1,8}-[A-Z0-9]{1,8}|[0-9]{3}[A-Za-z]+|[0-9]+-[0-9]+[a-z]*|v?[0-9]+(?:\.[0-9]+)+(?:-\w+)?"
    r"|(?i:bcrypt|scrypt|argon2(?:id|i|d)?|sha|aes|rsa|hmac|md)[0-9]?-[0-9]{1,4}"
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9:.]{5,15}Z?)?|\w+(?:,\w+)+"
)
# algorithm names: "AES-256-GCM", "PBKDF2-HMAC-SHA256", "ChaCha20-Poly1305", "RS256/ES256"
_CRYPTO_WORDS = frozenset(
    re.split(
        r"\s+",
        "aes rsa ecdsa ecdh ed25519 x25519 sha sha1 sha2 sha3 sha256 sha384 sha512 hmac pbkdf2"
        " hkdf chacha20 poly1305 xchacha20 gcm cbc ctr oaep pss pkcs1 pkcs8 base64 base64url"
        " hex utf utf8 argon2 argon2id bcrypt scrypt md5 jwt jws jwe rs256 rs384 rs512 es256"
        " es384 es512 hs256 hs384 hs512 ps256 eddsa kdf",
    )
)


# where a secret is kept, not the secret: `| password | 1Password |`, `| token | AWS-Secrets-
# Manager |` (compared without case and separators; "1Password123!" is a password)
_SECRET_STORES = frozenset(
    re.split(
        r"\s+",
        "1password bitwarden vaultwarden lastpass keepass keepassx keepassxc keepassium dashlane"
        " nordpass protonpass enpass roboform keeper passbolt psono gopass vault hashicorpvault"
        " openbao keychain macoskeychain icloudkeychain keychainaccess awssecretsmanager"
        " secretsmanager awsssm ssmparameterstore parameterstore azurekeyvault keyvault"
        " gcpsecretmanager googlesecretmanager secretmanager doppler infisical akeyless cyberark"
        " conjur sops sealedsecrets",
    )
)
_STORE_SEPARATORS = re.compile(r"[\s_.\-]")


def _described(value: str) -> bool:
    """A description or a name of something (an algorithm, a date, a version, the password
    manager that holds it), not a value."""
    if _DESCRIPTION.fullmatch(value):
        return True
    if _STORE_SEPARATORS.sub("", value.lower()) in _SECRET_STORES:
        return True
    parts = [part for part in re.split(r"[-/_(),]", value.lower()) if part]
    return all(part in _CRYPTO_WORDS or part.isdigit() for part in parts)


#: A port: 0 to 65535 (`sommer.com:69288` is no host and its port)
_PORT = r"(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})"
#: Services' well-known ports (HTTP, databases, caches, brokers, dev servers)
_KNOWN_PORTS = (
    r"(?:22|80|443|3000|3001|4000|4200|5000|5173|5432|5672|6379|6443|8000|8080|8081|8443"
    r"|8888|9000|9090|9092|9200|9443|1433|1521|2379|3306|11211|27017)\b"
)

#: A host and its port where a secret would be said: "the token is db.example.com:5432",
#: "the password is redis.internal:6379", "localhost:8080". Only in lower case, with its
#: port, under a common or a private network's top-level domain: `Summer2024.Beach`,
#: `P@ssw0rd.com`, `x7Gk2pQ9.zLmNoP`, `paris.abc:9677` are what people pick as passwords
_LABELS = r"(?:[a-z0-9\-]{1,63}\.){1,8}"
_HOST = re.compile(
    rf"{_LABELS}(?:com|net|org|io|uk|fr|eu|nl|ch|se|dk|fi|pl|cz|ru|jp|cn|kr|br|ca|au|nz"
    rf"|local|localdomain|internal|intranet|lan|corp|arpa|example|invalid|svc|cluster):{_PORT}"
    # a top-level domain that is also a word (`sweet.home:2024`, `love.me:143` are what
    # people pick as passwords) only with a service's well-known port
    rf"|{_LABELS}(?:dev|app|ai|co|cloud|info|biz|me|us|de|at|no|it|es|in|home|test)"
    rf":{_KNOWN_PORTS}|localhost:{_PORT}"
)

#: A digest named by its algorithm (`sha256:0d17b5…`, npm's `sha512-xs1b…`): a hash of
#: something, said where a secret would be; the whole value hex or base64 after the name
_DIGEST = re.compile(
    r"(?i:sha(?:1|224|256|384|512)|md5|blake2[bs]?|sha3-(?:256|512))[:\-]"
    r"(?:[0-9a-f]{32,128}|[A-Za-z0-9+/]{40,100}={0,2})"
)

_PASS_THROUGH = re.compile(r"[ \t\\\r\n]*(?:tr|head|tail|cat|tee|base64|sed)\b")


def _value_span(match: re.Match[str]) -> Span:
    group = next(g for g in ("sv", "dv", "v") if match.group(g) is not None)
    return match.span(group)


class RedisPasswordDetector(Detector):
    """Redis's password: ``requirepass X`` / ``masterauth X`` in redis.conf (or ``CONFIG SET
    requirepass X``, ``--requirepass X`` also as items of a docker-compose command list, an
    ``echo`` or ``sed`` writing the line), Sentinel's ``sentinel auth-pass MASTER X``, an ACL
    user's ``>X`` rule (``user alice on >X ~* +@all``, ``ACL SETUSER alice on >X``), and
    ``AUTH [user] X`` sent to Redis: at a redis-cli prompt, or on a line of its own near a
    redis command (a heredoc, a pipe). A space, not ``=``, separates them, so no assignment
    pattern sees them."""

    name = "redis-password"
    summary = "requirepass/masterauth/sentinel auth-pass X, ACL >X rules, AUTH X to redis"
    lower_triggers = (
        "requirepass", "masterauth", "auth ", "auth-pass", "sentinel-pass", "user ", "setuser"
    )  # fmt: skip
    # `SENTINEL CONFIG SET p v [p v …]` (7.2+) and `SENTINEL SET <master> p v [p v …]`: each
    # parameter and value after it (`_SENTINEL_PAIR`); those of a `*-pass` are passwords
    _sentinel_set = re.compile(
        r"\bsentinel[ \t]+(?:config[ \t]+set|set[ \t]+(?P<m>[A-Za-z0-9_.\-]{1,128}))(?=[ \t])",
        re.IGNORECASE,
    )
    # what `CONFIG GET requirepass` (or `*pass*`, `*`) prints: redis-cli's numbered replies
    # (`1) "requirepass"` then `2) "X"`), RESP's bulk strings (`$11` lines), redis-cli's
    # raw output right after the command (`requirepass` then `X` alone on their lines), or a
    # JSON array of names and values (`["requirepass","X"]`, `redis-cli --json`)
    _config_reply = re.compile(
        r"^[ \t]*[0-9]{1,6}\)[ \t]+\"(?P<n>requirepass|masterauth)\"[ \t]*\r?\n"
        r"[ \t]*[0-9]{1,6}\)[ \t]+\"(?P<v>(?:[^\"\\\r\n]|\\.){1,512})\"[ \t]*\r?$"
        r"|^\$11\r?\n(?P<rn>requirepass)\r?\n\$[0-9]{1,3}\r?\n(?P<rv>[^\r\n]{1,512})\r?$"
        r"|^\$10\r?\n(?P<mn>masterauth)\r?\n\$[0-9]{1,3}\r?\n(?P<mv>[^\r\n]{1,512})\r?$"
        r"|(?:\A|\bconfig[ \t]+get\b[^\r\n]{0,128}\n)[ \t]*(?P<bn>requirepass|masterauth)\r?\n"
        r"(?P<bv>[^\s\"']{1,512})\r?$"
        r"|\"(?P<jn>requirepass|masterauth)\"[ \t]*,[ \t]*\"(?P<jv>(?:[^\"\\\r\n]|\\.){1,512})\""
        r"(?=[ \t]*[,\]])"
        # a map (`redis-cli --json` over RESP3, redis-py's `config_get()` dict)
        r"|(?P<o>[\"'])(?P<kn>requirepass|masterauth)(?P=o)[ \t]*:[ \t]*(?P=o)"
        r"(?P<kv>(?:[^\"'\\\r\n]|\\.){1,512})(?P=o)",
        re.IGNORECASE | re.MULTILINE,
    )
    _directive = re.compile(
        r"\b(?P<word>requirepass|masterauth)"
        # a blank; or, after `--requirepass`, the next item of a list: `", "` in a JSON or
        # YAML flow list (or `",` and the next line, pretty-printed JSON: `docker inspect`),
        # a line break and `- ` in a YAML block list (docker-compose command)
        r"(?:[ \t]+|(?P<eq>=)|(?P<item>[\"']?(?:[ \t]*,[ \t]*(?:\r?\n[ \t]{0,64})?"
        r"|[ \t]*\r?\n[ \t]*-[ \t]+)))"
        r"(?P<q>[\"']?)(?P<v>[^\s\"'/]{4,512})(?P=q)",
        re.IGNORECASE,
    )
    # Sentinel's `sentinel auth-pass <master> <password>` (sentinel.conf), and the command
    # that sets it, `SENTINEL SET <master> auth-pass <password>`; Sentinel's own password
    # (6.2+), `sentinel sentinel-pass <password>`, `SENTINEL CONFIG SET sentinel-pass <pw>`
    _sentinel = re.compile(
        r"\bsentinel[ \t]+(?:auth-pass[ \t]+(?P<m>[A-Za-z0-9_.\-]{1,128})"
        r"|set[ \t]+(?P<sm>[A-Za-z0-9_.\-]{1,128})[ \t]+auth-pass"
        r"|(?P<own>(?:config[ \t]+set[ \t]+)?sentinel-pass))[ \t]+"
        # (not a sed pattern's `.*/…`, nor a JSON string's `\n` after it)
        r"(?P<q>[\"']?)(?P<v>[^\s\"'\\/*]{4,512})(?P=q)",
        re.IGNORECASE,
    )
    # An ACL user and its rules, `>password` among them: an aclfile's or redis.conf's
    # `user alice on >X ~* +@all` (also written by `echo "user …"`, `printf 'user …'` or
    # sed's `s/…/user …/`), or `ACL SETUSER alice on >X` (the rules to the line's end)
    _acl = re.compile(
        r"(?:\b(?P<setuser>acl[ \t]+setuser)"
        r"|(?:^[ \t]*(?:[0-9]{1,6}[ \t:|]+|-[ \t]+)?|(?<=[\"'/])|(?<=\\n))user)"
        r"[ \t]+[^\s>]{1,128}(?=[ \t]+\S)",
        re.MULTILINE,
    )
    # where a line of redis.conf starts: nothing, a line number, a quote (`echo "…"`), a
    # flag's dashes, `CONFIG SET`
    _config_lead = re.compile(
        r"(?:[ \t]*[0-9]{0,6}[ \t:|]*|.*[\"'=\-/]|.*\b(?i:set)"
        # `CONFIG SET maxmemory 100mb requirepass X` (7.0+: many pairs in one command)
        r"|.*\b(?i:config[ \t]+set)(?:[ \t]+[^\s]{1,128}[ \t]+[^\s]{1,512}){1,16})[ \t]*"
    )
    # after a redis-cli prompt (`127.0.0.1:6379> AUTH X`), or alone at a line's start or a
    # string's (`<<EOF` / `echo -e "AUTH X\nPING" | redis-cli`); not SMTP's AUTH PLAIN
    _auth = re.compile(
        r"(?:[\w.\-\]\[/]:?[0-9]{0,5}(?:\[[0-9]{1,2}\])?> ?|^[ \t]*|(?<=[\"']))(?i:auth)[ \t]+"
        r"(?:[A-Za-z0-9_.\-]{1,64}[ \t]+)?(?P<q>[\"']?)(?P<v>[^\s\"'\\]{4,512})(?P=q)"
        r"(?=[ \t]*(?:#|\\n|[\"']|\r?$))",
        re.MULTILINE,
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        if "requirepass" in lower or "masterauth" in lower:
            for match in self._directive.finditer(text):
                value, at = match["v"], match.start()
                if (match["item"] or match["eq"]) is not None and not text.startswith("--", at - 2):
                    continue  # `["requirepass", "masterauth"]`: a list of directive names
                    # (`--requirepass=X` is the flag's; `requirepass=X` no redis.conf line)
                end = match.end("v")
                escape = _JSON_ESCAPE.search(text, match.start("v"), end)
                if escape is not None:  # `requirepass X\nport 6379` in a JSON string
                    end = escape.start()
                    value = text[match.start("v") : end]
                    if len(value) < 4:
                        continue
                if match["item"] is not None and "," in match["item"]:
                    # `"--requirepass", "X"` or `[redis-server, --requirepass, X]`: a flow
                    # list's next item; a comma after a bare flag outside `[` is a sentence's
                    # ("Use --requirepass, which …"). The item ends at `,` or `]`.
                    if not self._in_flow_list(text, at - 2):
                        continue
                    if not match["q"]:
                        cut = _ITEM_END.search(text, match.start("v"), end)
                        end = cut.start() if cut else end
                        value = text[match.start("v") : end]
                        if len(value) < 4:
                            continue
                if value[0] == "-":
                    continue  # `--requirepass --appendonly yes`: the next flag
                before = _line_before(text, at)
                if before.lstrip().startswith("#"):
                    continue  # redis.conf's own example, `# requirepass foobared`
                config = self._config_lead.fullmatch(before) is not None
                # in a sentence ("requirepass should be long") a plain word is prose
                prose = not config or value.lower() in _PROSE_WORDS
                if (prose and PLAIN_WORD.fullmatch(value)) or value[0] in "$%<{":
                    continue
                if not is_placeholder(value):
                    yield match.start("v"), end
        if "auth-pass" in lower or "sentinel-pass" in lower:
            for match in self._sentinel.finditer(text):
                value = match["v"]
                if _line_before(text, match.start()).lstrip().startswith("#"):
                    continue  # sentinel.conf's own example
                master = (match["m"] or match["sm"] or "").lower()
                if master in _PROSE_WORDS or master in _DETERMINERS:
                    continue  # "sentinel auth-pass is used to …": a sentence
                if value.lower() in _PROSE_WORDS or value[0] in "$%<{-":
                    continue
                if not is_placeholder(value):
                    yield match.span("v")
        if "sentinel" in lower and (
            "config" in lower or "auth-pass" in lower or "sentinel-pass" in lower
        ):
            yield from self._sentinel_set_passwords(text, lower)
        if ("requirepass" in lower or "masterauth" in lower) and (
            '"' in text or "'" in text or "\n" in text
        ):
            yield from self._config_get_replies(text)
        if ">" in text and "user" in lower:
            yield from self._acl_passwords(text, lower)
        if "setuser" in lower:  # redis-py: acl_setuser(passwords=[…]), execute_command
            yield from self._client_acl_passwords(text, lower)
        if "auth " in lower and ("redis" in lower or "> auth " in lower or ">auth " in lower):
            for match in self._auth.finditer(text):
                value = match["v"]
                if value.upper() in _SASL_MECHANISMS or value[0] in "$%<{":
                    continue
                if value.endswith(":"):
                    continue  # `> auth time: 3 ms`: a label, not AUTH's argument
                if not is_placeholder(value):
                    yield match.span("v")

    def _sentinel_set_passwords(self, text: str, lower: str) -> Iterator[Span]:
        """The values of ``auth-pass`` and ``sentinel-pass`` among ``SENTINEL CONFIG SET`` or
        ``SENTINEL SET <master>`` parameters, read pair by pair to the first that is not one
        (a sentence: "SENTINEL SET mymaster is how …")."""
        for match in self._sentinel_set.finditer(lower):
            if _line_before(text, match.start()).lstrip().startswith("#"):
                continue
            if (match["m"] or "") in _PROSE_WORDS or (match["m"] or "") in _DETERMINERS:
                continue
            at = match.end()
            for _ in range(_SENTINEL_MAX_PAIRS):
                pair = _SENTINEL_PAIR.match(text, at)
                if pair is None:
                    break
                at, value, parameter = pair.end(), pair["v"], pair["p"].lower()
                if parameter not in _SENTINEL_PARAMETERS:
                    break  # a sentence, not parameters
                if not parameter.endswith("-pass"):
                    continue
                if len(value) < 4 or value.lower() in _PROSE_WORDS or value[0] in "$%<{-":
                    continue
                if not is_placeholder(value):
                    yield pair.span("v")

    def _config_get_replies(self, text: str) -> Iterator[Span]:
        """The value beside ``requirepass``/``masterauth`` in what ``CONFIG GET`` printed
        (a JSON array's value is no other directive's name: ``["requirepass",
        "masterauth"]`` lists names)."""
        for match in self._config_reply.finditer(text):
            group = next(g for g in ("v", "rv", "mv", "bv", "jv", "kv") if match[g] is not None)
            value = match[group]
            if value.lower() in _REDIS_DIRECTIVES:
                continue
            if value[0] in "$%<{" or is_placeholder(value):
                continue
            yield match.span(group)

    @staticmethod
    def _in_flow_list(text: str, flag: int) -> bool:
        """The flag at ``flag`` (its ``--``) is an item of a list: quoted, or after a ``[``
        that nothing closes before it on its line (looked for 256 characters back)."""
        if text[flag - 1 : flag] in ('"', "'"):
            return True
        low = max(0, flag - 256)
        line_start = text.rfind("\n", low, flag) + 1
        opening = text.rfind("[", max(low, line_start), flag)
        return opening >= 0 and "]" not in text[opening:flag]

    def _acl_passwords(self, text: str, lower: str) -> Iterator[Span]:
        """The ``>password`` rules of an ACL user's rules: the rules are read in order up to
        the first word that is no ACL rule, and one rule besides a password must be there
        (``user alice on >3 servers`` is a sentence; after ``ACL SETUSER`` a command)."""
        for match in self._acl.finditer(lower):
            passwords: list[Span] = []
            other_rule = match["setuser"] is not None
            # (the rules read from the name on, 64 at most: a second user's line after the
            # first, `… +@all" && echo "user bob on >Y`, is matched on its own)
            at = match.end()
            for _ in range(_ACL_MAX_RULES):
                token = _ACL_TOKEN.match(lower, at)
                if token is None:
                    break
                at, word = token.end(), token["w"]
                closing = token["close"]
                if closing is not None and closing not in _line_before(text, match.start()):
                    break  # a quote this line did not open
                if word.startswith(">"):
                    start = token.start("w") + 1
                    value = text[start : token.end("w")].split("\\", 1)[0]
                    if len(value) >= 4 and value[0] not in "$%<{" and not is_placeholder(value):
                        passwords.append((start, start + len(value)))
                elif word in _ACL_WORDS or (word[0] in _ACL_RULE_STARTS and word[:2] != "--"):
                    other_rule = True  # (`--all` is an option: `user list --all >users.txt`)
                else:
                    break
                if closing is not None:
                    break  # the quoted rules end
            if other_rule:
                yield from passwords

    def _client_acl_passwords(self, text: str, lower: str) -> Iterator[Span]:
        """redis-py's ``acl_setuser(…, passwords=['+X'])`` and ``execute_command("ACL",
        "SETUSER", "alice", ">X", …)``, ioredis's ``acl("SETUSER", …)``, node-redis's and
        Jedis's ``aclSetUser("bob", [">X"])`` and ``.addPass("X")``: the passwords a client
        sets."""
        budget = len(lower)
        for match in _CLIENT_ACL.finditer(lower):
            want = "+" if match["py"] is not None else ">"
            at = match.end()
            if match["py"] is None and match["js"] is None:
                # `"ACL", "SETUSER"`: its own arguments follow a comma
                comma = _CLIENT_COMMA.match(lower, at)
                if comma is None:
                    continue
                at = comma.end()
            # the list's (the call's) items one after another from its start, up to its
            # `]` (`)`): nothing quoted after it, on this line or the next, is read
            limit = min(len(lower), at + _CLIENT_MAX_SCAN)
            for _ in range(_CLIENT_MAX_ITEMS):
                item = _CLIENT_ITEM.match(lower, at, limit)
                if item is not None:
                    body = item["body"]
                    if body is not None and body[:1] == want and _CLIENT_VALUE.fullmatch(body, 1):
                        start, end = item.start("body") + 1, item.end("body")
                        value = text[start:end]
                        if value[0] not in "$%<{" and not is_placeholder(value):
                            yield start, end
                    if item["next"] == ",":
                        at = item.end()
                        continue
                    if item["next"] is not None:
                        break  # `]`/`)`: the list (call) is closed
                # an item not read (`"+" + pw`, `f"+{pw}"`): passed over to the next comma
                # (review 143 M1), the list's end ends the walk
                skip_from = item.end() if item is not None else at
                stop = max(skip_from, min(limit, skip_from + _SKIP_MAX, skip_from + budget))
                at, comma = _skip_item(lower, skip_from, stop)
                budget -= at - skip_from  # (all skips of a text: as long as it at most)
                if not comma:
                    break
        if "addpass" in lower:
            for match in _CLIENT_ADD_PASS.finditer(lower):
                start, end = match.span("v")
                value = text[start:end]
                if value[0] not in "$%<{" and not is_placeholder(value):
                    yield start, end


#: A JSON string's escape that ends a value read from it (a line break, a tab, a quote)
_JSON_ESCAPE = re.compile(r"\\[nrt\"]")
#: One parameter of `SENTINEL [CONFIG] SET` and its value (quoted, or a word)
_SENTINEL_PAIR = re.compile(
    r"[ \t]+(?P<p>[A-Za-z][A-Za-z0-9\-]{0,63})[ \t]+(?P<q>[\"']?)(?P<v>[^\s\"'\\]{1,512})(?P=q)"
    r"(?=[ \t;|&)\"']|\\n|\r?$)",
    re.MULTILINE,
)
_SENTINEL_MAX_PAIRS = 16
_SENTINEL_PARAMETERS = frozenset((
    "auth-pass", "auth-user", "sentinel-pass", "sentinel-user", "quorum",
    "down-after-milliseconds", "failover-timeout", "parallel-syncs", "notification-script",
    "client-reconfig-script", "rename-command", "master-reboot-down-after-period",
    "resolve-hostnames", "announce-hostnames", "announce-ip", "announce-port", "loglevel",
))  # fmt: skip
#: redis.conf's directives: what a list of names holds beside `requirepass` (not a value)
_REDIS_DIRECTIVES = frozenset((
    "requirepass", "masterauth", "masteruser", "bind", "port", "save", "appendonly", "dir",
    "dbfilename", "maxmemory", "maxmemory-policy", "maxclients", "timeout", "tcp-keepalive",
    "loglevel", "logfile", "databases", "daemonize", "protected-mode", "replicaof", "slaveof",
    "rename-command", "aclfile", "user", "tls-port", "unixsocket", "appendfsync",
    "notify-keyspace-events", "cluster-enabled", "io-threads", "supervised", "pidfile",
))  # fmt: skip
#: redis-py's `acl_setuser(` up to its `passwords=[` (or a tuple's `(`; black puts each
#: argument on its own line), or `"ACL", "SETUSER"` of a raw command
_CLIENT_ACL = re.compile(
    r"\bacl_setuser\([^)]{0,512}?\bpasswords\s{0,64}=\s{0,64}(?P<py>[\[(])"
    r"|[\"']acl[\"'][ \t]*,[ \t]*[\"']setuser[\"']"
    # ioredis's `redis.acl('SETUSER', 'bob', …)`; node-redis's `aclSetUser('bob', ['on',
    # '>X'])` and Jedis's `aclSetUser("bob", "on", ">X")`: the rules after the user's name
    r"|\bacl\([ \t]*[\"']setuser[\"']"
    r"|\baclsetuser\([ \t]*(?:[\"'][^\"'\r\n]{1,128}[\"']|[a-z_][a-z0-9_.]{0,127})"
    r"[ \t]*,[ \t]*(?P<js>\[?)"
)
#: Jedis's / Lettuce's builders: `….addPass("X")` / `.addPassword("X")` of a user's rules
_CLIENT_ADD_PASS = re.compile(
    r"\.addpass(?:word)?\([ \t]*(?P<q>[\"'])(?P<v>[^\s\"']{4,512})(?P=q)[ \t]*\)"
)
#: The comma before a raw command's next argument
_CLIENT_COMMA = re.compile(r"\s*,")
#: One item of the list (argument of the call): a quoted string or a bare name (`name`,
#: `*rules`, `enabled=True`), then the comma before the next or the closing bracket.
#: Comments before it (`"+X",  # primary`) are passed over.
#: The blanks and comments before it are taken whole (a lookahead and its backreference: an
#: atomic group that Python 3.10 can read, which has no possessive quantifiers), so a run of
#: them is walked once, never split between two quantifiers.
_CLIENT_ITEM = re.compile(
    r"(?=(?P<lead>(?:\s*#[^\n]*)*\s*))(?P=lead)"
    r"(?:(?P<q>[\"'])(?P<body>[^\"'\r\n]{0,512})(?P=q)|[^\s,()\[\]\"']{1,128})"
    r"\s*(?P<next>[,\])])?"
)
#: A password after its `+`/`>`: 4 characters or more, no blank
_CLIENT_VALUE = re.compile(r"[^\s\"']{4,512}")
_CLIENT_MAX_ITEMS = 64
_CLIENT_MAX_SCAN = 8192  # characters of one call's arguments read at most
_SKIP_MAX = 512  # characters of one item not read that are passed over at most
#: Up to the next character _skip_item looks at
_SKIP_PLAIN = re.compile(r"[^\"'#()\[\]{},]*")


def _skip_item(lower: str, at: int, limit: int) -> tuple[int, bool]:
    """Past the rest of an item that was not read (an expression, a call, an f-string) to
    just after the ``,`` that ends it: quotes, brackets and ``#`` comments are stepped over.
    ``(end, False)`` at the list's closing bracket or ``limit``."""
    depth = 0
    while at < limit:
        at = _SKIP_PLAIN.match(lower, at, limit).end()
        if at >= limit:
            break
        char = lower[at]
        if char in "\"'":
            close = lower.find(char, at + 1, limit)
            line_end = lower.find("\n", at + 1, limit)
            if close < 0 or 0 <= line_end < close:
                return limit, False  # a quote not closed on its line: not read on
            at = close + 1
            continue
        if char == "#":
            line_end = lower.find("\n", at, limit)
            at = limit if line_end < 0 else line_end
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return at + 1, False
            depth -= 1
        elif char == "," and depth == 0:
            return at + 1, True
        at += 1
    return limit, False


#: The words of a Redis ACL's rules, and the characters other rules start with (key and
#: channel patterns, commands, categories, passwords and their hashes, selectors)
_ACL_WORDS = frozenset((
    "on", "off", "nopass", "resetpass", "reset", "allkeys", "allchannels", "allcommands",
    "nocommands", "resetkeys", "resetchannels", "skip-sanitize-payload", "sanitize-payload",
    "clearselectors",
))  # fmt: skip
_ACL_RULE_STARTS = frozenset("~%&+-<#!(")
_ACL_MAX_RULES = 64
#: One rule, its quotes apart (`'>p@ss'` given to redis-cli)
#: (or the last one before the quote that opened the line or argument: `echo "user alice on
#: >X" >> users.acl`; _acl_passwords checks that quote)
_ACL_TOKEN = re.compile(
    r"[ \t]+([\"']?)(?P<w>[^\s\"']+)\1(?:(?=\s|$)|(?P<close>[\"'])(?=[\s);,]|$))"
)


def _line_before(text: str, at: int) -> str:
    """What stands before ``at`` on its line, 80 characters at most: a line with no break
    is not read back to the text's start for every candidate (that was quadratic)."""
    line_start = text.rfind("\n", max(0, at - 80), at) + 1
    return text[max(line_start, at - 80) : at]


#: Where an unquoted flow list's item ends: `[redis-server, --requirepass, X]`
_ITEM_END = re.compile(r"[,\]]")
#: Words that open a noun phrase: "for each master", "every master", "your master"
_DETERMINERS = frozenset(("each", "every", "all", "any", "your", "my", "our", "this", "that"))
#: Words of a sentence about the directives, not a password set with one.
_PROSE_WORDS = frozenset((
    "should", "must", "is", "are", "was", "be", "the", "a", "an", "to", "of", "for", "and",
    "or", "with", "without", "directive", "option", "setting", "flag", "value", "parameter",
    "tonight", "now", "here", "there", "too", "also", "only",
))  # fmt: skip
#: SMTP/IMAP AUTH mechanisms: `AUTH PLAIN` is no password.
_SASL_MECHANISMS = frozenset((
    "PLAIN", "LOGIN", "CRAM-MD5", "DIGEST-MD5", "NTLM", "GSSAPI", "EXTERNAL", "OAUTHBEARER",
    "XOAUTH2", "ANONYMOUS", "SCRAM-SHA-1", "SCRAM-SHA-256", "SCRAM-SHA-1-PLUS",
    "SCRAM-SHA-256-PLUS",
))  # fmt: skip


class PgpassDetector(Detector):
    """``host:port:database:user:password`` lines (``~/.pgpass``, ``pgpass.conf``): the fifth
    field, also when written with ``echo '…' > ~/.pgpass``. A ``:`` inside a pgpass field is
    escaped (``\\:``), so a fifth field with a bare ``:`` is some other file (/etc/shadow)."""

    name, summary = "pgpass", "the password field of .pgpass lines (host:port:db:user:password)"
    triggers = (":5432:", ":*:", "pgpass")
    _line = re.compile(
        r"^[ \t]*(?:-[ \t]+|echo[ \t]+(?:-e[ \t]+)?)?(?P<q>[\"']?)"
        r"(?:[A-Za-z0-9_.\-*]{1,253}|\[[0-9A-Fa-f:.]{2,64}\]):(?:[0-9]{1,5}|\*)"
        r":(?:[^:\s\\]|\\.){1,128}:(?:[^:\s\\]|\\.){1,128}:"
        r"(?P<pw>(?:[^\s:\\\"']|\\.){4,512})(?P=q)"
        r"(?:[ \t]*(?:>>?|\|[ \t]*tee(?:[ \t]+-a)?)[ \t]*\S{1,256}(?:[ \t]*&&[^\r\n]{0,256})?"
        r"|[ \t]+#[^\r\n]{0,512})?[ \t]*\r?$",
        re.M,
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._line.finditer(text):
            value = match.group("pw")
            if value != "*" and not is_placeholder(value):
                yield match.span("pw")


class PuttyKeyDetector(Detector):
    """The private lines of a PuTTY key file (``.ppk``): ``Private-Lines: N`` and the N
    base64 lines after it (PEM and OpenSSH keys are the private-key detector's)."""

    name, summary = "putty-key", "the private part of PuTTY .ppk key files"
    triggers = ("Private-Lines:",)
    _head = re.compile(r"Private-Lines:[ \t]*(?P<n>[0-9]{1,3})[ \t]*\r?\n")
    _line = re.compile(r"[ \t]*(?P<b>[A-Za-z0-9+/]{1,256}={0,2})[ \t]*(?:\r?\n|\Z)")

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for head in self._head.finditer(text):
            start = end = position = head.end()
            for n in range(int(head["n"])):
                line = self._line.match(text, position)
                # key lines are 64 columns of base64 but the last: words are not a key
                if line is None or (n == 0 and not _base64ish(line["b"])):
                    break
                end, position = line.end("b"), line.end()
            if end > start:
                yield start, end


def _base64ish(line: str) -> bool:
    return len(line) >= 16 and bool(
        DIGIT.search(line) or (UPPER.search(line) and LOWER.search(line))
    )


class DockerConfigDetector(Detector):
    """A Docker registry config (``{"auths": …}``, user:password inside) sent as base64:
    a Kubernetes ``.dockerconfigjson`` secret, ``DOCKER_AUTH_CONFIG``. Its base64 opens
    with the encoding of ``{"auths"`` (compact or pretty-printed), and may be wrapped."""

    name, summary = "docker-config", 'base64 Docker registry configs ({"auths": …})'
    triggers = ("eyJ", "ewo")  # "eyJ" is the JWT detector's too: one shared pre-check
    _blob = re.compile(
        r"(?:eyJhdXRocyI|ewogICJhdXRocyI|ewogICAgImF1dGhzIj|ewoJImF1dGhzIj)[A-Za-z0-9+/]{8,65536}=*"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        covered = 0  # a block's wrapped lines are not searched again (linear on many lines)
        for match in self._blob.finditer(text):
            if match.start() >= covered:
                covered = wrapped_base64_end(text, match.end(), match.start())
                yield match.start(), covered


#: What a one-time login link's secret part is: random letters and digits (`-`, `_`, `.`
#: and `~` of base64url), or a UUID; not a slug of words (`order-2024-05-summary`)
_UUID = re.compile(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}", re.IGNORECASE)


def _link_secret(value: str, least: int) -> bool:
    """``value`` (``least`` characters or more) is a link's secret, not a word or a slug."""
    if is_placeholder(value):
        return False
    if _UUID.fullmatch(value):
        return True
    if len(value) < least:
        return False
    # (words in one case, and numbers: `order-2024-05-summary`, `YOUR_KEY_GOES_HERE_1234`)
    words = [part for part in re.split(r"[-_.~]", value) if part]
    slug = all(
        part.isdigit() or (part.isalpha() and (part.islower() or part.isupper() or part.istitle()))
        for part in words
    )
    return looks_random(value) and bool(DIGIT.search(value)) and not slug


class _LoginLinks:
    """One-time login secrets in a URL, which sign in whoever opens it: an OAuth
    authorization code (``/callback?code=X``), the token of a magic sign-in link
    (``/auth/magic?t=X``) and of a password-reset, e-mail confirmation or invitation link
    (``/reset-password/X``, ``/invite/X``). Only long random values count: a country's
    ``?code=US``, an article's slug or a playground's URL-encoded code are no secrets."""

    _code = re.compile(
        r"[?&#](?:code|auth_code|authorization_code)=(?P<v>[a-z0-9_\-.~%]{20,512})"
        r"(?![a-z0-9_\-.~%])"
    )
    # (what may be percent-encoded in a code: base64's `/`, `+` and `=`)
    _encoded = re.compile(r"%(?!2f|2b|3d)[0-9a-f]{2}")
    _words = (
        "magic", "reset", "verif", "confirm", "invit", "activat", "login", "signin", "sign-in",
        "sign_in", "log-in", "unlock", "passwordless",
    )  # fmt: skip
    # a link word in the URL's path, then the query's secret (`/auth/magic?t=…`)
    _param = re.compile(
        r"[?&](?:t|tk|k|h|s|otp|hash|ticket|magic|login|signin|link|code)="
        r"(?P<v>[a-z0-9_\-.~]{24,512})(?![a-z0-9_\-.~%])"
    )
    # a path segment after a link word (Django's `/reset/<uid>/<token>/`: after a short one)
    _path = re.compile(
        r"/(?:reset[-_]?password|password[-_]?reset|reset|magic(?:[-_]?link)?|invite|invitations?"
        r"|verify(?:[-_]?email)?|verification|confirm(?:[-_]?email)?|confirmation|activate"
        r"|activation|unlock|accept[-_]?invite|login|signin|sign-in)"
        # (not a repository's: `github.com/org/verify/commit/<sha>`)
        r"(?:/(?!commit|blob|tree|pull|compare|raw|src|tag|releases|issues)[a-z0-9_\-]{1,16})?"
        r"/(?P<v>[a-z0-9_\-.~]{24,512})(?=[/?#\s\"'<>)\]]|$)"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        if "code=" in lower:
            for match in self._code.finditer(lower):
                start, end = match.span("v")
                value = text[start:end]
                if self._encoded.search(lower, start, end) or not self._in_url(lower, start):
                    continue
                if _link_secret(value.replace("%2F", "/").replace("%2f", "/"), 20):
                    yield start, end
        if not any(word in lower for word in self._words):
            return
        for pattern in (self._param, self._path):
            for match in pattern.finditer(lower):
                start, end = match.span("v")
                if not self._in_url(lower, start):
                    continue
                if pattern is self._param and not any(
                    word in lower[self._url_from(lower, start) : match.start()]
                    for word in self._words
                ):
                    continue
                if _link_secret(text[start:end], 24):
                    yield start, end

    def _url_from(self, lower: str, at: int) -> int:
        """Where the URL holding ``at`` starts (its scheme's ``://``), or ``at``."""
        found = lower.rfind("://", max(0, at - 1024), at)
        return at if found < 0 else found

    def _in_url(self, lower: str, at: int) -> bool:
        """``at`` is in a URL: a ``scheme://`` starts its word, with no blank between."""
        found = self._url_from(lower, at)
        if found == at:
            return False
        return not any(char in lower[found:at] for char in " \t\r\n\"'<>")


class _WifiPsk:
    """A Wi-Fi network's passphrase: ``psk="X"`` (or its 64 hex digits, as
    ``wpa_passphrase`` prints them) in a ``wpa_supplicant.conf`` ``network={…}`` block, or
    ``psk=X`` under a NetworkManager profile's ``[wifi-security]``."""

    _psk = re.compile(
        # (from a `#` or the word itself: blanks before it, tried at each of them, took
        # quadratic time on a long run of blanks)
        r"(?<![\w\-#])(?:#[ \t]*)?psk[ \t]*=[ \t]*(?:\\?\"(?P<qv>[^\"\\\r\n]{8,63})\\?\"|"
        r"(?P<hex>[0-9a-f]{64})(?![0-9a-z])|(?P<v>[^\s\"'#]{8,63})(?=[ \t]*(?:\r?\n|$)))"
    )
    _reach = 2048  # how far before the value its block's opening is looked for

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._psk.finditer(lower):
            group = next(g for g in ("qv", "hex", "v") if match[g] is not None)
            before = lower[max(0, match.start() - self._reach) : match.start()]
            if group == "v":
                if "[wifi-security]" not in before:
                    continue
            elif "network={" not in before.replace(" ", "") and "ssid=" not in before:
                continue
            start, end = match.span(group)
            if not is_placeholder(text[start:end]):
                yield start, end


_LOGIN_LINKS, _WIFI_PSK = _LoginLinks(), _WifiPsk()


class SignedUrlDetector(Detector):
    """The signature (and session token) in a signed URL's query: Azure SAS ``sig=``,
    S3 ``X-Amz-Signature=`` / ``X-Amz-Security-Token=``, GCS ``X-Goog-Signature=``,
    CloudFront ``Signature=``. Anyone holding the URL has the access it grants. The
    separator may be escaped (``&amp;``, ``\\u0026``, ``%26sig%3D``). So do a one-time
    login link's secrets (:class:`_LoginLinks`: ``?code=``, magic, reset and invitation
    links)."""

    name, summary = (
        "signed-url",
        "signatures in signed URLs (SAS sig=, X-Amz-Signature=, …), OAuth ?code=, login links",
    )
    # few and shared substring checks: each distinct trigger is a pass over every string
    # (`://`, which login links need, is the URL detectors' own)
    triggers = ("://",)
    lower_triggers = ("sig=", "signature=", "token=", "%3d", "appid=")
    _param = re.compile(
        r"(?:[?&;]|\\u0026|%26)"
        r"(?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token)(?:=|%3d)"
        r"(?P<v>[a-z0-9%+/=_.~\-]{16,4096})"
    )
    # OpenWeatherMap's key is the query's `appid=`: 32 hex digits (Steam's and Facebook's
    # appid are numbers, public)
    _appid = re.compile(r"(?:[?&;]|\\u0026|%26)appid=(?P<v>[0-9a-f]{32})(?![0-9a-z])")

    def find(self, text: str, lower: str) -> Iterator[Span]:
        # (woken by a URL alone, the signatures' pass is skipped: most URLs have none)
        signed = "sig=" in lower or "signature=" in lower or "token=" in lower or "%3d" in lower
        for match in self._param.finditer(lower) if signed else ():
            start, end = match.span("v")
            value = text[start:end]
            if DIGIT.search(value) and not is_placeholder(value):
                yield start, end
        if "appid=" in lower:
            for match in self._appid.finditer(lower):
                if looks_random(match["v"]):
                    yield match.span("v")
        if "://" in text:
            yield from _LOGIN_LINKS.find(text, lower)


class CommandArgumentDetector(Detector):
    """Secrets a command takes as a plain argument: ``htpasswd -b[c] FILE USER PASSWORD``
    (``-nb USER PASSWORD``), ``gh secret set NAME --body VALUE`` / ``-b VALUE``, and a value
    piped or given as a here-string to a command that stores it (``echo X | vercel env add``,
    ``… | gh secret set``, ``… | docker login --password-stdin``, ``sudo -S``)."""

    name, summary = "command-argument", "htpasswd -b, gh secret set --body, echo X | … env add"
    lower_triggers = ("htpasswd", "secret", "echo", "printf", "<<<")
    _htpasswd = re.compile(
        r"\bhtpasswd(?:[ \t]+httpd[\w.:\-]{0,64})?"  # docker run --entrypoint htpasswd httpd:2
        r"(?P<flags>(?:[ \t]+-[A-Za-z]{1,6}(?:[ \t]+[0-9]{1,2}\b)?)+)"  # -C 12: bcrypt cost
        rf"(?P<args>(?:[ \t]+{_ARG}){{2,3}})"
    )
    _arg = re.compile(r"'(?P<sq>[^']*)'|\"(?P<dq>[^\"]*)\"|(?P<w>\S+)")
    _body = re.compile(r"(?<![\w\-])(?:--body|-b)(?:[ \t]+|=)" + _VALUE)
    _gh_secret_set = re.compile(r"\bgh[ \t]+secret[ \t]+set[ \t]")
    _piped = re.compile(
        r"\b(?:echo|printf)(?:[ \t]+-[neE]{1,3})*(?:[ \t]+(?:'%s[^']{0,4}'|\"%s[^\"]{0,4}\"|%s))?"
        rf"[ \t]+{_VALUE}[ \t]*\|(?P<rest>(?:\\\r?\n|[^\n;&`]){{1,300}})"
    )
    _herestring = re.compile(r"<<<[ \t]*" + _VALUE)
    _stores = re.compile(
        r"\b(?:vercel[ \t]+env[ \t]+add|gh[ \t]+secret[ \t]+set|wrangler[ \t]+secret[ \t]+put"
        r"|netlify[ \t]+env:set|fly[ \t]+secrets[ \t]+set|firebase[ \t]+functions:secrets:set"
        r"|gcloud[ \t]+secrets[ \t]+(?:create|versions[ \t]+add)|chpasswd|passwd[ \t]+--stdin"
        r"|sudo\b[^\n]{0,80}?[ \t]-[A-Za-z]*S[A-Za-z]*)\b|--password-stdin\b"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        if "htpasswd" in lower:
            yield from self._htpasswd_password(text)
        if "secret set" in lower:
            for match in self._body.finditer(text):
                if self._gh_secret_set.search(self._command(text, match.start())):
                    yield from self._literal_value(text, match)
        if "|" in text and ("echo" in lower or "printf" in lower):
            for match in self._piped.finditer(text):
                if self._stores_input(match["rest"]):
                    yield from self._literal_value(text, match)
        if "<<<" in text:
            for match in self._herestring.finditer(text):
                if self._stores.search(self._command(text, match.start())):
                    yield from self._literal_value(text, match)

    def _htpasswd_password(self, text: str) -> Iterator[Span]:
        for match in self._htpasswd.finditer(text):
            flags = match["flags"]  # -b is batch mode (password given), -B bcrypt
            if "b" not in re.sub(r"[ \t]+[0-9]+", "", flags):
                continue
            args = list(self._arg.finditer(match["args"]))
            wanted = 2 if "n" in flags else 3  # -n prints instead of writing a file
            if len(args) >= wanted:
                word = args[wanted - 1]
                group = next(g for g in ("sq", "dq", "w") if word.group(g) is not None)
                start = match.start("args") + word.start(group)
                value = word.group(group)
                if value and _literal(value):
                    yield start, start + len(value)

    def _stores_input(self, pipeline: str) -> bool:
        """The piped value reaches a secret store: its first stage, or the one after filters
        that pass it on (``| tr -d '\\n' | gh secret set``), not ``| grep x | sudo -S``."""
        for stage in pipeline.split("|")[:4]:
            if self._stores.search(stage):
                return True
            if not _PASS_THROUGH.match(stage):
                return False
        return False

    @staticmethod
    def _command(text: str, at: int) -> str:
        """The command ``at`` is an argument of: back to the line's start (over ``\\``
        continuations), a ``;``/``&``/``|`` or a backtick, at most 200 characters."""
        low = max(0, at - 200)
        start = max(text.rfind(end, low, at) for end in (";", "&", "|", "`"))
        line = text.rfind("\n", low, at)
        while line > low and text[line - 1] == "\\":
            line = text.rfind("\n", low, line - 1)
        return text[max(start, line, low - 1) + 1 : at]

    @staticmethod
    def _literal_value(text: str, match: re.Match[str]) -> Iterator[Span]:
        start, end = _value_span(match)
        if _literal(text[start:end]):
            yield start, end


class ExpectSendDetector(Detector):
    """What an ``expect`` script types at a password or passphrase prompt: the ``send "X\\r"``
    (``send -- "X\\r"``, ``send {X}``) right after ``expect "*assword*"``, on the next line,
    after a ``;`` (``expect -c '…; expect "Password:"; send "X\\r"'``) or as the action of a
    ``"*assword*" { send "X\\r" }`` arm. A ``send`` after any other prompt is not a secret."""

    name, summary = "expect-send", 'send "X\\r" after expect "*assword*" in expect scripts'
    lower_triggers = ("expect",)
    _said = re.compile(  # runs over the lowercased text: "Password:" and "*assword*" alike
        r"(?:expect(?:[ \t]+-[a-z]{1,8}){0,3}[ \t]+"  # expect "Password:" then ";" or a newline
        r"(?P<pat>\"[^\"\r\n]{1,200}\"|\{[^{}\r\n]{1,200}\})[ \t]*(?:;|\r?\n)"
        r"|\"(?P<arm>[^\"\r\n]{1,200})\"[ \t]*\{)"  # or an arm: "*assword*" { send … }
        r"[ \t\r\n]{0,200}send(?:[ \t]+-[a-z\-]{1,6}){0,3}[ \t]+"  # send -- "X\r", {X}, X
        r"(?:\"(?P<dv>(?:[^\"\\\r\n]|\\.){1,512})\"|\{(?P<bv>[^{}\r\n]{1,512})\}"
        r"|(?P<v>[^\s\"{};$\[\-][^\s\"{};]{0,511}))"
    )
    _prompt = re.compile(r"ass(?:word|phrase)|passwd")
    _line_end = re.compile(r"(?:\\[rn])+\Z")  # the Enter key send types: "X\r", "X\n"

    def find(self, text: str, lower: str) -> Iterator[Span]:
        if "send" not in lower:
            return
        for match in self._said.finditer(lower):
            if not self._prompt.search(match["pat"] or match["arm"]):
                continue
            group = next(g for g in ("dv", "bv", "v") if match.group(g) is not None)
            start, end = match.span(group)
            value = self._line_end.sub("", text[start:end])
            if value[:1] not in ("", "$", "[") and is_secret_assignment(
                "password", value, quoted=False, env_style=True
            ):  # a $variable or [command] is not written out; a plain word is the password
                yield start, start + len(value)


class EnvDefaultDetector(Detector):
    """The default of an environment lookup under a sensitive name:
    ``os.getenv("API_TOKEN", "X")``, ``os.environ.get('SECRET_KEY', default='X')``,
    ``os.environ.setdefault(…)``, ``ENV.fetch("DB_PASSWORD", "X")``, Ruby's block and
    ``||`` forms ``ENV.fetch("API_KEY") { "X" }`` and ``ENV["API_KEY"] || "X"`` (PHP's
    ``$_ENV['API_KEY'] ?? 'X'``), ``os.environ.get("API_KEY") or "X"``, PHP's
    ``env('API_KEY', 'X')``, ``process.env.API_KEY || 'X'`` (or ``??``, ``import.meta.env``):
    the fallback is the secret, written in the code."""

    name, summary = "env-default", 'defaults of getenv("SECRET_NAME", "value") lookups'
    lower_triggers = ("env",)
    _call = re.compile(
        r"(?:getenv|environ\.get|environ\.setdefault|env\.fetch|getordefault|(?<![\w.])env)"
        r"\(\s{0,8}[ur]?(?P<nq>[\"'])(?P<name>[A-Za-z_][\w.\-]{0,127})(?P=nq)\s{0,8}"
        r"(?:,\s{0,8}(?:default\s{0,4}=\s{0,4})?"
        r"|\)\s{0,8}(?:or|\|\||\?\?|\{(?:\s{0,8}\|\w{1,32}\|)?)\s{0,8})"  # { |key| "X" }: a block
        r"[ur]?(?P<q>[\"'])(?P<v>[^\"'\r\n]{5,512})(?P=q)",
        re.I,
    )
    _index = re.compile(  # Ruby's ENV["API_KEY"] || "X", PHP's $_ENV['API_KEY'] ?? 'X'
        r"(?:(?<![\w.$])env|\$_env)\[\s{0,8}(?P<nq>[\"'])(?P<name>[A-Za-z_][\w.\-]{0,127})(?P=nq)"
        r"\s{0,8}\]\s{0,8}(?:\|\||\?\?|or\b)\s{0,8}(?P<q>[\"'])(?P<v>[^\"'\r\n]{5,512})(?P=q)",
        re.I,
    )
    _js = re.compile(
        r"(?:process|import\.meta)\.env"
        r"(?:\.(?P<name>[A-Za-z_]\w{0,127})|\[(?P<bq>[\"'])(?P<bname>[\w.\-]{1,128})(?P=bq)\])"
        r"\s{0,8}(?:\|\||\?\?)\s{0,8}(?P<q>[\"'`])(?P<v>[^\"'`\r\n]{5,512})(?P=q)"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        calls = any(word in lower for word in ("getenv", "environ.", "env.fetch", "env("))
        matches = [*self._call.finditer(text)] if calls else []
        if "env[" in lower:
            matches += self._index.finditer(text)
        if "process.env" in lower or "import.meta.env" in lower:
            matches += self._js.finditer(text)
        for match in matches:
            name = match["name"] or match.groupdict().get("bname") or ""
            value = match["v"]  # "#{…}" is Ruby interpolation: computed, not written out
            if "#{" not in value and is_secret_assignment(
                name, value, quoted=True, env_style=False
            ):
                yield match.span("v")


# A map value that is a rule, a column type or a message key: `required|min:8`,
# `VARCHAR(255)`, `too_short`, `user-42-session`, words
_A_RULE = re.compile(r"[|:()\s]|\A[A-Za-z]+(?:[-_][A-Za-z0-9]+)*\Z")
_PASSWORD_FIELD = re.compile(r"pass|pwd")


def _a_password_field(lower: str, match: re.Match[str]) -> bool:
    """The field a browser test types into is a password's: its selector names one, or,
    with no selector, the locator before the call on its line does."""
    if match["sel"] is not None:
        return bool(_PASSWORD_FIELD.search(match["sel"]))
    line_start = lower.rfind("\n", max(0, match.start() - 200), match.start()) + 1
    return bool(_PASSWORD_FIELD.search(lower, max(line_start, match.start() - 200), match.start()))


#: second arguments of a login that are documented fixed words, not passwords: GitHub's
#: `auth=(token, 'x-oauth-basic')`, Toggl's `auth=(API_TOKEN, 'api_token')`
_FIXED_PASSWORDS = frozenset(("x-oauth-basic", "api_token", "x-oauth-token", "x"))


def _a_public_login(lower: str, match: re.Match[str], value: str) -> bool:
    """An anonymous FTP login (`ftp.login('anonymous', 'guest@example.com')`), or a token
    given as the user with a service's fixed word as the password."""
    first = lower[match.start() : match.start("q")]
    return value.lower() in _FIXED_PASSWORDS or "anonymous" in first or "'ftp'" in first


def _dockerfile_value(text: str, match: re.Match[str]) -> Span | None:
    """``ENV NAME value`` on its own line, written ``ENV`` (a Dockerfile's instruction), whose
    name is sensitive: the value is the rest of the line, judged as a .env line's."""
    at = match.start()
    line_start = text.rfind("\n", max(0, at - 64), at) + 1
    if text[at : at + 3] != "ENV" or text[line_start:at].strip(" \t"):
        return None
    start, end = match.span("v")
    value = text[start:end].rstrip(" \t\r")
    if value[0] in "$%" or is_placeholder(value):
        return None
    if is_secret_assignment(match["name"], value, quoted=False, env_style=True):
        return start, start + len(value)
    return None


class CodeFormDetector(Detector):
    """A named secret in code or config forms that have no ``NAME=``: PHP's
    ``define('DB_PASSWORD', 'X')``, ``os.environ['API_KEY'] = 'X'``, fish's ``set -gx
    API_KEY X``, XML's ``<password>X</password>`` and ``<add key="ApiKey" value="X"/>``,
    SQL's ``PASSWORD 'X'`` / ``IDENTIFIED BY 'X'`` (``CREATE USER``, ``ALTER ROLE``), and a
    Wi-Fi passphrase, ``psk="X"`` in a ``wpa_supplicant.conf`` network block
    (:class:`_WifiPsk`)."""

    name, summary = (
        "code-secret",
        "define('NAME', 'X'), environ['NAME'] = 'X', <password>X<, SQL, wpa_supplicant psk=",
    )
    # "env" and "pass" are other detectors' triggers too: one substring test serves both
    lower_triggers = ("define", "env", "set -", "</", "value=", "pass", "identified", "put(",
                      "set(", "] =", "]=", "key(", "token(", "secret(", "auth=(", "auth =",
                      "auth(", ".login(", ".fill(", ".type(", "send_keys(", "sendkeys(",
                      "setvalue(", "sequentially(", "<property", "psk=")  # fmt: skip
    min_length = 25  # `<pass>abcde</pass>` alone is shorter: a string of only that is rare
    # Each runs over the lowercased text (same offsets) from its literal, so the regex engine
    # skips ahead to it; names and values are then read from the text itself.
    # (wp-config.php pads the value into a column: `define( 'AUTH_KEY',         '…' );`)
    _define = re.compile(
        r"define\(\s{0,8}(?P<nq>[\"'])(?P<name>[a-z_][\w.\-]{0,127})(?P=nq)\s{0,8},\s{0,32}"
        r"(?P<q>[\"'])(?P<v>[^\"'\r\n]{5,512})(?P=q)"
    )
    # os.Setenv("GITHUB_TOKEN", "X") (Go), os.putenv, env::set_var (Rust),
    # System.setProperty("…password", "X") (Java), props.put("mail.smtp.password", "X")
    _setter = re.compile(
        r"(?P<fn>setenv|putenv|set_var|setenvironmentvariable|setproperty|put|set)\(\s{0,8}"
        r"(?P<nq>[\"'])(?P<name>[a-z_][\w.\-]{0,127})(?P=nq)"
        r"\s{0,8},\s{0,8}(?P<q>[\"'])(?P<v>[^\"'\r\n]{5,512})(?P=q)"
    )
    _environ = re.compile(
        # (and Ruby's `ENV["API_KEY"] = "X"`, Node's `process.env["API_KEY"] = "X"`; any
        # map's too: Flask's `app.config['SECRET_KEY'] = 'X'`, `headers["X-API-Key"] = "X"`)
        r"(?:env(?:iron)?)?(?<=[\w)\]])\[\s{0,8}(?P<nq>[\"'])(?P<name>[a-z_][\w.\-]{0,127})(?P=nq)"
        r"\s{0,8}\]\s{0,8}=(?!=)\s{0,8}[ubr]{0,2}(?P<q>[\"'])(?P<v>[^\"'\r\n]{5,512})(?P=q)"
    )
    _fish = re.compile(
        r"set(?:[ \t]+-[a-z]{1,4})+[ \t]+(?P<name>[a-z_]\w{0,127})[ \t]+"
        r"(?:(?P<q>[\"'])(?P<qv>[^\"'\r\n]{5,512})(?P=q)|(?P<v>[^\s\"'`;&|<>()$]{5,512}))"
    )
    _element = re.compile(  # <password>X</password>: the same name closes it
        r"<(?P<name>[a-z_][\w.\-]{0,63})>(?P<v>[^<>\s]{5,512})</(?P=name)>"
    )
    _add = re.compile(  # .NET appSettings: <add key="ApiKey" value="X" />
        r"key=(?P<nq>[\"'])(?P<name>[a-z_][\w.:\-]{0,127})(?P=nq)\s{1,8}"
        r"value=(?P<q>[\"'])(?P<v>[^\"'\r\n<>]{5,512})(?P=q)"
    )
    # Java's and Kotlin's setters and builders: `cfg.setPassword("X")`, `.withApiKey("X")`,
    # `DataSource.builder().password("X")` (the name is judged, so `.setKey("row-3")` stays)
    _setter_call = re.compile(
        r"\.(?P<name>(?:set|with)_?[a-z][a-z0-9_]{1,63}|password|passwd|passphrase|secret"
        r"|api_?key|secret_?key|client_?secret|access_?token|auth_?token)"
        r"\(\s{0,8}(?P<q>[\"'])(?P<v>[^\"'\r\n]{5,512})(?P=q)\s{0,8}\)"
    )
    # A password as the second of two arguments: `smtp.login(user, 'X')` (smtplib, ftplib,
    # imaplib and most clients), `auth=('user', 'X')` (requests, httpx, elasticsearch's
    # basic_auth), `HTTPBasicAuth('user', 'X')`, aiohttp's `BasicAuth('user', 'X')`
    _positional = re.compile(
        r"(?:auth[ \t]{0,8}=[ \t]{0,8}\(|basicauth\(|digestauth\(|\.login\()\s{0,8}"
        r"(?:(?P<uq>[\"'])[^\"'\r\n]{1,128}(?P=uq)|[\w.\[\]]{1,128})\s{0,8},\s{0,8}"
        r"(?P<q>[\"'])(?P<v>[^\"'\r\n]{5,512})(?P=q)\s{0,8}\)"
    )
    # A browser test typing into a password field: Playwright's `page.fill("#password",
    # "X")` and `getByLabel("Password").fill("X")`, Selenium's `send_keys`, Cypress's `type`
    _form_fill = re.compile(
        r"\.(?:fill|type|send_keys|sendkeys|setvalue|press_?sequentially)\(\s{0,8}"
        r"(?:(?P<sq>[\"'])(?P<sel>[^\"'\r\n]{1,200})(?P=sq)\s{0,8},\s{0,8})?"
        r"(?P<q>[\"'])(?P<v>[^\"'\r\n]{5,512})(?P=q)\s{0,8}[,)]"
    )
    # A Dockerfile's older `ENV NAME value` (one variable, its value the rest of the line)
    _dockerfile_env = re.compile(
        r"env[ \t]+(?P<name>[a-z_][a-z0-9_]{0,127})[ \t]+(?P<v>[^\s\"'=\\][^\r\n]{4,511})"
    )
    # Spring's and Hibernate's `<property name="…password" value="X"/>` and
    # `<property name="hibernate.connection.password">X</property>`
    _property = re.compile(
        r"<property\s{1,8}name=(?P<nq>[\"'])(?P<name>[a-z_][\w.:\-]{0,127})(?P=nq)\s{0,8}"
        r"(?:value=(?P<q>[\"'])(?P<v>[^\"'\r\n<>]{5,512})(?P=q)"
        r"|>(?P<qv>[^<>\s]{5,512})</property>)"
    )
    # CREATE/ALTER USER or ROLE ... PASSWORD 'X' (not "the password 'x'" in prose or a comment)
    _sql_password = re.compile(
        r"(?:user|role)\b[^;]{0,160}?\bpassword[ \t]+(?P<q>')(?P<v>[^'\r\n]{5,512})'"
    )
    _sql_identified = re.compile(
        r"identified(?:[ \t]+with[ \t]+\w{1,64})?[ \t]+by[ \t]+(?P<q>')(?P<v>[^'\r\n]{5,512})'"
    )
    _after_any_name = (_setter_call, _positional, _form_fill)
    _patterns = (
        (("define",), _define),
        (("password(", "passwd(", "phrase(", "secret(", "key(", "token("), _setter_call),
        (("auth=(", "auth =", "auth(", ".login("), _positional),
        ((".fill(", ".type(", "send_keys(", "sendkeys(", "setvalue(", "sequentially("), _form_fill),
        (("env ", "env\t"), _dockerfile_env),
        (("<property",), _property),
        (("env(", "set_var(", "variable(", "setproperty(", "put(", "set("), _setter),
        (("'] =", '"] =', "']=", '"]='), _environ),
        (("set -",), _fish),
        (("</",), _element),
        (("value=",), _add),
        (("password",), _sql_password),
        (("identified",), _sql_identified),
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        if "psk=" in lower:
            yield from _WIFI_PSK.find(text, lower)
        for literals, pattern in self._patterns:
            if not any(literal in lower for literal in literals):
                continue
            for match in pattern.finditer(lower):
                subscript = lower[match.start()] == "["  # a map's: it follows any name
                # (a method call and `auth=(` follow any name too: `cfg.setPassword(`)
                anywhere = subscript or pattern in self._after_any_name
                if not anywhere and not _flag_start(lower, match.start()):
                    continue  # `offset`, `mindefine(`
                group = "qv" if "qv" in pattern.groupindex and match["qv"] else "v"
                start, end = match.span(group)
                value = text[start:end]
                name = text[slice(*match.span("name"))] if "name" in pattern.groupindex else ""
                if pattern is self._dockerfile_env:
                    span = _dockerfile_value(text, match)
                    if span:
                        yield span
                    continue
                if pattern is self._form_fill and not _a_password_field(lower, match):
                    continue
                if pattern is self._positional and _a_public_login(lower, match, value):
                    continue
                if pattern is self._setter_call and name_strength(name) == "weak":
                    continue  # `cache.setKey("user-session-42")`: a key of a map, not a secret
                if pattern is self._element and name.lower() == "key":
                    continue  # a plist's <key>NAME</key>: the name of the next value
                if pattern is self._define and name.upper() in _WORDPRESS_KEYS:
                    if _wordpress_key(value):
                        yield start, end
                    continue
                # any map's put/set under a lower-case name: a rule, a type or a message
                # (`rules.put("password", "required|min:8")`) is no password; a random
                # value still is (`props.put("password", "Tr0ub4dor&3x")`, JDBC's way)
                a_map = (pattern is self._setter and match["fn"] in ("put", "set")) or (
                    subscript  # `rules["password"] = "required|min:8"`
                )
                if a_map and name.upper() != name and "." not in name and _A_RULE.search(value):
                    continue
                if _literal(value) and is_secret_assignment(
                    name or "password", value, quoted=True, env_style=False
                ):
                    yield start, end


#: wp-config.php's authentication keys and salts (its `define()`s)
_WORDPRESS_KEYS = frozenset(
    f"{kind}_{part}" for kind in ("AUTH", "SECURE_AUTH", "LOGGED_IN", "NONCE")
    for part in ("KEY", "SALT")
)  # fmt: skip


def _wordpress_key(value: str) -> bool:
    """A WordPress key or salt as its secret-key service makes them: 64 characters of letters,
    digits, punctuation and spaces (``>GT/=^d7F=gu…``, ``Rxl!I$(#UiT/],eNU)|.J!H/ LR=w…``);
    not the sample's ``put your unique phrase here``, which is words."""
    if len(value) < 32 or is_placeholder(value) or not looks_random(value):
        return False
    symbols = sum(1 for char in value if not char.isalpha() and char != " ")
    return symbols >= len(value) // 8 and len(value.split()) <= len(value) // 12 + 1


class TableRowDetector(Detector):
    """A table row that names a secret and gives it: ``| OPENAI_API_KEY | sk… |`` (an
    agent's Markdown summary of an environment), also padded to align its columns, with the
    name in bold or backticks, or with a column between (``| API_KEY | prod | X |``).
    Values are judged as code is: ``| password | VARCHAR(255) |`` is a schema, not a secret."""

    name, summary = "table-row", "| SECRET_NAME | value | rows of Markdown and box tables"
    # Markdown's bar, and the box-drawing bars of tables that CLIs print (`doppler secrets`)
    triggers = ("|", "\u2502", "\u2503", "\u2551")
    # All in a look-ahead: each "|" is tried once and none is consumed, so the cell after a
    # non-matching one ("| DB | API_KEY | x |") can still start a row.
    _bar = "[|\u2502\u2503\u2551]"
    _row = re.compile(
        _bar
        + r"(?=[ \t]{0,80}(?:\*\*|`)?(?P<name>[A-Za-z_][\w.\-]{1,127})(?:\*\*|`)?[ \t]{0,80}"
        + _bar
        + r"(?:[ \t]{0,80}[\w.\-]{1,32}[ \t]{0,80}"  # an environment or scope column
        + _bar
        + r")?[ \t]{0,80}`?(?P<v>[^\s|\u2502\u2503\u2551`*;]{8,512})`?[ \t]{0,80}"
        + _bar
        + ")"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        for match in self._row.finditer(text):
            value = match["v"]
            if (
                _literal(value)
                and not _described(value)
                and is_secret_assignment(match["name"], value, quoted=False, env_style=False)
            ):
                yield match.span("v")


#: What another language says a password is like, an adjective glued on with a hyphen:
#: "8-stellig", "SHA256-gehasht", "UTF-8-kodiert", "2FA-geschützt", "AES-chiffré", only
#: these words and their endings (English ones are `_DESCRIPTION`'s); any other word is a
#: password's (`787-secret`, `99-schalke`, `XK29-geheim`), and so is a "!" (`88-john!`)
_FOREIGN_ADJECTIVE = re.compile(
    r"(?:stellig|zeichen|gehasht|gehascht|kodiert|codiert|verschlüsselt|verschluesselt"
    r"|geschützt|geschuetzt|gesichert|gesalzen|haché|hache|chiffré|chiffre|codé|code|salé"
    r"|protégé|protege|cifrad|hashead|codificad|protegid|criptografad|encriptad|cifrat"
    r"|versleuteld|gecodeerd|beveiligd|zaszyfrowan|zakodowan|chroniony|krypterad|krypteret"
    r"|kryptert|salasattu|šifrovan|sifrovan|titkosított|şifrelenmiş|sifrelenmis"
    r"|cijfer|znak|caract|caráct)[^\W\d_]{0,6}[.,;:?)\]]*"
)
#: what such an adjective describes: a small number (8, 12, 256) or a name in capitals
#: (SHA256, UTF-8, 2FA, AES-256); `28839-windows` is a password
_FOREIGN_DESCRIBED = re.compile(r"[0-9]{1,3}|(?=[^a-z]*[A-Z])[A-Z0-9\-]{2,8}")


def _foreign_description(value: str) -> bool:
    """A description said in another language ("das Passwort ist 8-stellig"), no value:
    what comes before the adjective is a small number, a name in capitals (`SHA256`,
    `UTF-8`, `2FA`) or an algorithm's (`base64-kodiert`), never another word
    (`Sommer2024-strand`) or a long number (`28839-windows`)."""
    head, dash, tail = value.rpartition("-")
    return (
        bool(dash and head)
        and bool(_FOREIGN_DESCRIBED.fullmatch(head) or head.lower() in _CRYPTO_WORDS)
        and tail[:1].islower()
        and bool(_FOREIGN_ADJECTIVE.fullmatch(tail))
    )


#: "Password" in the languages of Europe and around it, lowercase, with and without accents
#: (a German compound ends in it: Datenbankpasswort): the names, and what a sentence says.
#: Not Italian "parola" (a word).
_FOREIGN_PASSWORD_WORDS = (
    *FOREIGN_PASSWORD_NAMES, "mot de passe", "adgangskode", "jelszó", "jelszo", "şifre",
    "sifre", "parolă", "geslo", "lozinka", "lozinku", "lösenordet", "losenordet", "passordet",
    "adgangskoden",
    # plurals: "Passwörter: X", "Пароли: X"
    "passwörter", "passwoerter", "пароли", "contraseñas", "contrasenas", "senhas",
    "mots de passe", "şifreniz", "sifreniz",
)  # fmt: skip
_FOREIGN_ASCII_TRIGGERS = tuple(
    w for w in _FOREIGN_PASSWORD_WORDS if w.isascii() and "pass" not in w
)
#: "is" (and "was") in those languages: ist, est, es, é, is, это, to, är, er, on, je, ...
_FOREIGN_COPULAS = (
    "ist", "war", "lautet", "est", "était", "etait", "es", "era", "é", "is", "was",
    "это", "—", "-", "to", "är", "var", "er", "on", "oli", "je", "bylo", "az", "volt", "este",
)  # fmt: skip


# What a password is for, between its name and "is": "for the DB", "of root", "admin",
# "for the staging DB" (two words at most); one short phrase, so a sentence that goes on
# ("the token for each request is ...") has to say a value that looks like one to count
_ENGLISH_QUALIFIER = (
    r"[ \t]+(?:for|of|on|to)(?:[ \t]+(?:the|my|our|your|this|that|an?))?"
    r"[ \t]+[a-z0-9][\w.@\-]{0,31}(?::[0-9]{1,5})?"
    r"(?:[ \t]+(?!is\b|was\b)[a-z0-9][\w.@\-]{0,31}(?::[0-9]{1,5})?)?"
)
#: "is" as a sentence says it before a password: "is now", "is still", "will be", "has
#: been reset to" (every blank bounded, so runs of blanks stay linear)
_ENGLISH_IS = (
    r"(?:is|was|(?:has|had)[ \t]{1,8}been|(?:will|should)[ \t]{1,8}be)"
    r"(?:[ \t]{1,8}(?:now|still|just|simply"
    r"|(?:set|changed|reset|updated)[ \t]{1,8}to))?"
)
_FOREIGN_QUALIFIER = (
    r"[ \t]+(?:für|fuer|von|des|der|de|du|pour|para|del|da|do|per|för|til|for|av|dla|для|от)"
    r"(?:[ \t]+(?:die|der|das|den|dem|la|le|les|el|los|las|a|o|det))?[ \t]+[^\s:：\"'`*]{1,32}"
    r"|[ \t]+(?:admin\w{0,12}|root|db|wlan|wifi|администратора|пользователя|сервера)"
)


def _foreign_statement(word: str, some: str, few: str, value: str) -> re.Pattern[str]:
    """A European language's "the password (for X) is: V" (Passwort ist, mot de passe est,
    contraseña es, пароль —), or the name and a colon: ``word`` wraps the names' group,
    ``some``/``few`` quantify the blank runs before and around "is" and the colon, and
    ``value`` is what follows (blanks, a quote, the value's group ``v``)."""
    blank = "[ \\t\\u00a0\\u202f]"
    return re.compile(
        word.format("|".join(_FOREIGN_PASSWORD_WORDS))
        + rf"(?:{_FOREIGN_QUALIFIER})?(?:\*\*|__)?"
        + rf"(?:{blank}{some}(?:"
        + "|".join(_FOREIGN_COPULAS)
        + ")"
        + rf"(?:{blank}{few}[:：])?|{blank}{few}[:：])(?:\*\*|__)?"
        + value
    )


#: The nouns that, right after "password X", make X the name of a thing about passwords (a
#: rule, a flow, a page of docs), not a password: "the password C0mplexity! rule requires…"
_ABOUT_PASSWORD_NOUNS = frozenset((
    "rule", "rules", "policy", "policies", "requirement", "requirements", "flow", "flows",
    "doc", "docs", "documentation", "page", "pages", "guide", "spec", "feature", "features",
    "check", "checks", "checker", "validation", "validator", "regex", "pattern", "format",
    "field", "form", "screen", "endpoint", "module", "component", "ticket", "issue", "bug",
    "test", "tests", "setting", "settings", "option", "options", "constraint", "constraints",
))  # fmt: skip


class ProseSecretDetector(Detector):
    """A secret said in a sentence: "the password is Tr0ub4dor&3", "my API key was X",
    "The DB_PASSWORD is: X". Only values that mix letters and digits count ("the token is
    valid" is prose), and not technical adjectives ("SHA256-hashed", "UTF-16LE")."""

    name, summary = "prose-secret", '"the password is X" / "my API key is X" in sentences'
    # the names (" is" is in most text), and other languages' words for a password
    lower_triggers = ("pass", "pw", "token", "secret", "api", *_FOREIGN_ASCII_TRIGGERS)
    # the same said in Chinese, Japanese and Korean: 密码是X, パスワードは X, 비밀번호는 X
    non_ascii = True
    # (one regex over a long text, not a substring search per word)
    _cjk_word = re.compile(
        "密码|密碼|口令|令牌|密钥|密鑰|秘钥|パスワード|トークン|秘密鍵|キー|비밀번호|암호|토큰|키"
    )
    _cjk_names: ClassVar[dict[str, str]] = {
        "密码": "password", "密碼": "password", "口令": "password", "パスワード": "password",
        "비밀번호": "password", "암호": "password", "令牌": "token", "トークン": "token",
        "토큰": "token", "密钥": "secret_key", "密鑰": "secret_key", "秘钥": "secret_key",
        "秘密鍵": "secret_key", "apiキー": "api_key", "アクセスキー": "secret_key",
        "api 키": "api_key", "api키": "api_key", "비밀 키": "secret_key", "비밀키": "secret_key",
    }  # fmt: skip
    # the name, then "is" (是/为, は/が, 는/은/이/가) or a colon; the value is what follows, up
    # to a blank, a quote or the next CJK character (…Qz7yOA0HNkIn3OIOn，或者 / …です)
    _said_cjk = re.compile(
        r"(?P<word>" + "|".join(sorted(_cjk_names, key=len, reverse=True)) + r")"
        r"[ \t]*(?:是|为|為|は|が|는|은|이|가|[:：=])[ \t]*(?:[:：][ \t]*)?"
        r"[「『“\"'`(（]?"
        r"(?P<v>[^\s\"'`*()「」『』“”\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]{8,256})"
    )
    _said = re.compile(
        r"(?P<word>password|passphrase|passwd|api[ _\-]?key|access[ _\-]?token|secret[ _\-]?key"
        r"|token|secret)(?:`|\*\*|[\"'])?"
        # "is" (Italian "è"), after what it is for ("the password for the DB is X"); or a
        # colon after that ("password for root: X"; "password: X" is an assignment's)
        rf"(?:(?:{_ENGLISH_QUALIFIER})?[ \t]+(?:{_ENGLISH_IS}|è|era)"
        # one way through a run of blanks: "[ \t]*:?[ \t]+" split long runs every way
        r"(?:[ \t]*:)?[ \t\r\n]+"
        rf"|{_ENGLISH_QUALIFIER}[ \t]*:[ \t]+)"
        r"(?P<open>\*\*|[\"'`(]?)(?P<v>[^\s\"'`*()]{8,256})"
    )
    # Passwort: X, le mot de passe est X, la contraseña es X, пароль: X; the name, then "is"
    # in its language or a colon (a name alone before a word is a sentence going on)
    _foreign_word = re.compile("|".join(_FOREIGN_PASSWORD_WORDS))
    _said_foreign = _foreign_statement(
        "(?P<word>{})",
        "+",
        "*",
        r"[ \t\u00a0\u202f]*[\"'`«„“(]?[ \t\u00a0\u202f]?(?P<v>[^\s\"'`*()«»„“”]{8,256})",
    )
    # "login ok with password pa55w0rd!", "pw pa55w0rd!": the name, a blank, then a value
    # no word is (a symbol among its letters and digits, or all three kinds of them), not a
    # path, a host or an assignment
    # (the whole blank-delimited word, or a quoted one: cut at `:` or `.` it went out in
    # part, `Zq8v-Rt3L:m9x!` as `[REDACTED]:m9x!`; review 143 M3)
    _bare = re.compile(
        r"\b(?:password|passwd|pw|pwd)[ \t]+(?P<q>[\"'`]?)(?P<v>[^\s\"'`*()<>\[\]{}|\\]{8,64})"
        r"(?:(?P=q)(?<=[\"'`])|(?<![\"'`])(?=\s|$)|(?<![\"'`])(?=[)\"'`]))"
    )
    #: What the bare word is when it is no password: a path, an assignment, a URL, a host
    #: or an e-mail address (a top-level domain of letters), a host's port
    _bare_not_a_value = re.compile(
        r"[^/=]*[/=].*|[\w.+\-]*@?[\w\-]+(?:\.[\w\-]+)*\.[A-Za-z]{2,}[.,;:)]*|[\w.\-]+:[0-9]+[.,;:)]*"
    )
    _bare_symbol = re.compile(r"[!@#$%^&*+?~]")
    _next_word = re.compile(r"[\"'`]?[ \t]{1,8}(?P<w>[a-z]{2,16})\b")
    _identifier = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")

    def find(self, text: str, lower: str) -> Iterator[Span]:
        if "pw" in lower or "pass" in lower:
            for match in self._bare.finditer(lower):
                value = text[match.start("v") : match.end("v")]
                if (
                    value[0] in "-$%<{[#"
                    or not (
                        self._bare_symbol.search(value)
                        or (LOWER.search(value) and UPPER.search(value))
                    )
                    or self._bare_not_a_value.fullmatch(value)
                ):
                    continue
                after = self._next_word.match(lower, match.end())
                if after is not None and after["w"] in _ABOUT_PASSWORD_NOUNS:
                    continue  # "the password C0mplexity! rule": a rule's name, not a value
                yield from self._value(text, match, "password")
        # (a text that is not all ASCII may come here for the CJK words alone)
        said = any(verb in lower for verb in (" is", " was", " è", " be")) or (
            ":" in lower and any(f" {word} " in lower for word in ("for", "of", "on", "to"))
        )
        if said and (text.isascii() or any(word in lower for word in self.lower_triggers)):
            for match in self._said.finditer(lower):
                name = self._name(lower, match.start("word"), match["word"].replace(" ", "_"))
                yield from self._value(text, match, name)
        foreign = self._foreign_word.search(lower)  # (one search: long texts cost it)
        if foreign is not None:
            yield from self._said_in_foreign(text, lower, foreign.start())
        first = None if text.isascii() else self._cjk_word.search(lower)
        if first is not None:
            # (from a little before the word: "apiキー" and "api 키" are names it ends)
            yield from self._said_in_cjk(text, lower, max(0, first.start() - 8))

    def _said_in_foreign(self, text: str, lower: str, at: int) -> Iterator[Span]:
        """What a European language's sentence says a password is, from ``at``."""
        for match in self._said_foreign.finditer(lower, at):
            if not _foreign_description(text[match.start("v") : match.end("v")]):
                yield from self._value(text, match, "password")

    def _said_in_cjk(self, text: str, lower: str, at: int) -> Iterator[Span]:
        """What a Chinese, Japanese or Korean sentence says a secret is, from ``at``."""
        for match in self._said_cjk.finditer(lower, at):
            yield from self._value(text, match, self._cjk_names[match["word"]])

    def _value(self, text: str, match: re.Match[str], name: str) -> Iterator[Span]:
        """The said value, if it is one: letters and digits, written out, not described."""
        start, end = match.span("v")
        # sentence punctuation; not "!", which ends passwords as often ("P@ssw0rd!")
        while end > start and text[end - 1] in ".,;:?)]":
            end -= 1
        escape = text.find("\\", start, end)  # "…is X\nok" in JSON-escaped text
        if escape >= 0:
            end = escape
        value = text[start:end]
        if (
            len(value) >= 8
            and DIGIT.search(value)
            and (LOWER.search(value) or UPPER.search(value))
            and not _described(value)
            and name_strength(name) is not None
            and _literal(value)
            and not _HOST.fullmatch(value)
            and not _DIGEST.fullmatch(value)
            and is_secret_assignment(name, value, quoted=True, env_style=False)
        ):
            yield start, end

    def _name(self, lower: str, at: int, word: str) -> str:
        """The whole identifier the word ends (``db_password``, ``OPENAI_API_KEY``), at most
        64 characters back, so text dense with ``a_a_a_`` stays linear."""
        start = at
        while start > max(0, at - 64) and lower[start - 1] in self._identifier:
            start -= 1
        return lower[start:at] + word


#: A length or a time said where a password would be: "12chars", "8+chars", "90days"
_MEASURE = re.compile(
    r"[0-9]{1,4}\+?(?:chars?|characters|bits?|bytes?|digits?|letters?|symbols?|words?|secs?"
    r"|seconds?|mins?|minutes?|hours?|hrs?|days?|weeks?|months?|years?|yrs?)"
)
#: A lower-case dotted name and its index, whole: `sys.argv[1]`, `process.argv[2]` (code)
_DOTTED_INDEX = re.compile(
    r"[a-z_]\w{0,31}(?:\.[a-z_]\w{0,31})+(?:\[[0-9]{1,4}\])+(?=[\s.,;:)]|\Z)"
)
#: An HTML entity (`&quot;`, `&#39;`) where escaped markup holds the sentence
_ENTITY = re.compile(r"&(?:[a-z]{2,8}|#[0-9]{1,6}|#x[0-9a-f]{1,5});")
#: What a password may hold, said as a regex's ranges: "a-z0-9", "A-Z_0-9"
_CHARSET = re.compile(r"a-z|A-Z|0-9")
#: Letters that are no word of prose, in quotes: a capital after the first (`LetMeIn`)
_INNER_CAPITAL = re.compile(r".[A-Z]")


class ProsePasswordDetector(ProseSecretDetector):
    """The prose rule, and short passwords it leaves (it reads eight characters and more
    with a digit): "the password is hunter2", "my password is: dr4gon!", "use password
    `abc123x`". Five characters and more after a password's name and "is"/"was" (or a
    quote), mixing letters with digits or symbols, six digits and more (a PIN), or in quotes
    letters with a capital inside (`LetMeIn`). Also "is still X", "will be X", "set the
    password to X", "log in with password X", and in other languages ("das Passwort ist
    X", "密码是X"). Prose stays: a word ("wrong", "required"), a name ("PASSWORD_ENV",
    "config.db.password"), a path, a size ("12chars"), a description ("UTF-8",
    "SHA256-hashed", "8-stellig"), a host with its port (`db.example.com:5432`).
    One rule's name, so it reports as the prose rule."""

    # the name, then "is"/"was" (after what it is for), a colon after what it is for, or a
    # quote; every run of blanks bounded, so "password is" and blanks repeated stay linear
    _short = re.compile(
        r"(?:password|passphrase|passwd|passcode)(?:`|\*\*|[\"'])?"
        rf"(?:(?:{_ENGLISH_QUALIFIER})?[ \t]{{1,8}}{_ENGLISH_IS}(?:[ \t]{{0,8}}:)?[ \t]{{1,8}}"
        # (before "to X": "the password to grafana: X" names what it is for)
        rf"|{_ENGLISH_QUALIFIER}[ \t]{{0,8}}:[ \t]{{1,8}}"
        # "set the password to X" (a verb before it, `_set_to`)
        r"|[ \t]{1,8}(?P<to>to)[ \t]{1,8}"
        r"|[ \t]{1,8}(?=[\"'`])"
        # "log in with password X", "use the admin password X" (a verb before it, `_use`)
        r"|(?P<plain>[ \t]{1,8}))"
        r"(?P<open>\*{1,2}|[\"'`(]?)(?P<v>[^\s\"'`*()]{5,512})"
    )
    # a verb that sets the password, just before "password to X": "set the password to X",
    # "changed my root password to X" (not "the password to the server")
    _set_to = re.compile(
        r"\b(?:set|sets|setting|change|changes|changed|changing|reset|resets|resetting|update"
        r"|updates|updated|updating)[ \t]{1,8}(?:(?:the|my|your|our|its|their|his|her|a|an)"
        r"[ \t]{1,8})?(?:[\w.@\-]{1,32}[ \t]{1,8})?(?:[\w\-]{0,32})\Z"
    )
    # a verb that uses the password, just before "password X": "log in with password X",
    # "use the root password X", "enter password X" (not "password X" alone: a heading, a
    # field's label, "password hashing")
    _use = re.compile(
        r"\b(?:use|uses|using|used|with|try|tried|enter|entered|type|typed)[ \t]{1,8}"
        r"(?:(?:the|a|my|your|our|its|their)[ \t]{1,8})?(?:[\w.@\-]{1,32}[ \t]{1,8})?"
        r"(?:[\w\-]{0,32})\Z"
    )
    # the same said in another language ("das Passwort ist X", "le mot de passe est X", "la
    # contraseña es X", "пароль — X"), five characters and more; every blank run bounded
    _short_foreign = _foreign_statement(
        "(?:{})",
        "{1,8}",
        "{0,8}",
        r"[ \t\u00a0\u202f]{1,8}(?P<open>[\"'`«„“(]?)(?P<v>[^\s\"'`*()«»„“”]{5,512})",
    )
    # and in Chinese, Japanese, Korean: パスワードは hunter2, 密码是hunter2, 비밀번호는 hunter2
    _short_cjk = re.compile(
        r"(?:密码|密碼|口令|パスワード|비밀번호|암호)"
        r"[ \t]{0,8}(?:是|为|為|は|が|는|은|이|가|[:：=])[ \t]{0,8}(?:[:：][ \t]{0,8})?"
        r"(?P<open>[「『“\"'`(（]?)"
        r"(?P<v>[^\s\"'`*()「」『』“”\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]{5,512})"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        yield from super().find(text, lower)
        if "pass" in lower:
            # (a match turned down resumes at its value: in "Password password is X" the
            # first "value" is the next sentence's name)
            match = self._short.search(lower)
            while match is not None:
                span = None
                if match["to"] is not None and not self._set_to.search(
                    lower, max(0, match.start() - 80), match.start()
                ):
                    pass  # "the password to the server": no verb sets it
                elif match["plain"] is not None and not self._use.search(
                    lower, max(0, match.start() - 80), match.start()
                ):
                    pass  # "password X" with no verb that uses it
                else:
                    span = self._short_value(text, lower, match)
                if span is not None:
                    yield span
                match = self._short.search(lower, match.end() if span else match.start("v"))

    def _said_in_foreign(self, text: str, lower: str, at: int) -> Iterator[Span]:
        yield from super()._said_in_foreign(text, lower, at)
        for match in self._short_foreign.finditer(lower, at):
            if _foreign_description(text[match.start("v") : match.end("v")]):
                continue
            span = self._short_value(text, lower, match)
            if span is not None:
                yield span

    def _said_in_cjk(self, text: str, lower: str, at: int) -> Iterator[Span]:
        yield from super()._said_in_cjk(text, lower, at)
        for match in self._short_cjk.finditer(lower, at):
            span = self._short_value(text, lower, match)
            if span is not None:
                yield span

    def _short_value(self, text: str, lower: str, match: re.Match[str]) -> Span | None:
        """The said value's span, if it is a password, not a word of the sentence."""
        start, end = match.span("v")
        if _DOTTED_INDEX.match(text, start):
            return None  # "set the password to sys.argv[1]": code names where it comes from
        opened = match["open"]
        quoted = opened in ("'", '"', "`") and text.startswith(opened, end)
        escape = text.find("\\", start, end)  # "…is X\nok" in JSON-escaped text
        if escape >= 0:
            end, quoted = escape, False
        entity = _ENTITY.search(text, start, end)  # HTML: `"Password is ok1.&quot;);`
        if entity is not None:
            end, quoted = entity.start(), False
        if not quoted:  # sentence punctuation; not "!", which ends passwords as often
            while end > start and text[end - 1] in ".,;:?)]":
                end -= 1
        value = text[start:end]
        core = value.rstrip("!")  # "the password is wrong!": judged without it
        if len(core) < 5 or value[0] in "$%<{[^*_-/~." or is_placeholder(value):
            return None
        if _HOST.fullmatch(core) or _DIGEST.fullmatch(core):
            return None  # a host and its port, a digest: what the prose rule leaves
        after = self._next_word.match(lower, match.end())
        if after is not None and after["w"] in _ABOUT_PASSWORD_NOUNS:
            return None  # "the password `Abc12!` rule": a rule's name
        if core.isascii() and core.isdigit():  # a PIN
            return (start, end) if len(core) >= 6 else None
        if quoted and core.isalpha():  # the quotes say it; a capital inside, no name
            named = not _INNER_CAPITAL.search(core) or is_variable_name(core)
            return None if named or _described(core) else (start, end)
        letters = LOWER.search(core) or UPPER.search(core)
        if (
            not (letters and (DIGIT.search(core) or self._bare_symbol.search(core)))
            or not _literal(value)
            or _described(core)
            or _MEASURE.fullmatch(core.lower())
            or _CHARSET.search(core)
            or is_variable_name(core)
            or self._bare_not_a_value.fullmatch(core)
            or not is_secret_assignment("password", value, quoted=True, env_style=False)
        ):
            return None
        return start, end
