"""Names and values: which field or variable names are sensitive, which values are only
placeholders or dummies, and when ``name = value`` is a secret rather than code or prose.

The detectors (``detectors.py``) and the structured redaction (``redact.py``) both ask these
questions; a change here changes what gets redacted, so bump ``detectors.DETECTOR_VERSION``.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "DIGIT",
    "ENV_QUALIFIERS",
    "KNOWN_PREFIXES",
    "LOWER",
    "PLAIN_WORD",
    "UPPER",
    "WORDLIKE",
    "is_documented_example",
    "is_dummy",
    "is_placeholder",
    "is_secret_assignment",
    "is_type_name",
    "is_variable_name",
    "looks_random",
    "name_strength",
    "not_dummy",
]

LOWER, UPPER, DIGIT = re.compile("[a-z]"), re.compile("[A-Z]"), re.compile("[0-9]")


def is_dummy(body: str) -> bool:
    """``xxxx``, ``****``, ``0000000`` or too few distinct characters to be a real key."""
    low = body.lower()
    return len(set(low)) < 5 or "xxxx" in low or "****" in body or "0000000" in body


def looks_random(body: str) -> bool:
    """Random-looking: two of lower/upper/digit and not a ``xxxx`` dummy."""
    classes = sum(1 for p in (LOWER, UPPER, DIGIT) if p.search(body))
    return classes >= 2 and not is_dummy(body)


def not_dummy(body: str) -> bool:
    return not is_dummy(body)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


KNOWN_PREFIXES = (
    "sk-", "sk_", "rk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "hf_",
    "xox", "AKIA", "ASIA", "AIza", "gsk_", "xai-", "csk-", "npm_", "pypi-", "eyJ", "whsec_",
)  # fmt: skip
_PLACEHOLDER_EXACT = _words(
    "none null nil undefined true false string number boolean bool any unknown object "
    "required optional secret secrets password passwd pass token key apikey api_key auth "
    "bearer basic value values env empty default hidden unset changeit admin root test "
    "testing foo bar baz example sample dummy fake mock todo tbd n/a na guest anonymous "
    "set_me setme set-me fill_me fillme fill-me fixme"
)
_PLACEHOLDER_PARTS = (
    "your", "placeholder", "example", "changeme", "change_me", "change-me", "replace", "redacted",
    "dummy", "fake", "sample", "xxxx", "****", "...", "…", "{{", "${", "$(", "-here", "_here",
    "insert", "process.env", "os.environ", "secrets.",
    # a value that says it is none: `DUMMY_PASSWORD = "not-a-real-password"`
    "not-a-real", "not_a_real", "notareal",
)  # fmt: skip


# $VAR, ${VAR}, ${VAR:-default}, $1, %APPDATA%, <TOKEN>, {token}, %s
# (`%NAME%` is is_wrapped_placeholder's: `%dragon%` is a password in marks, review 143 M7)
_VARIABLE = re.compile(r"\$\{?\w+\}?|\$\{\w+:?[-=?+][^{}]*\}|<[^<>]*>|\{[\w.\s]*\}|%s")
# A template's placeholder: `__PASSWORD__`, `@DB_PASS@`, `<<PASSWORD>>`, `!!PW!!` around a
# constant's name, or a snake_case name made of placeholder words (`__db_password__`; not
# `__hunter_two__`, `@@letmein@@`, `@sunflower@`: one word in marks is a password);
# `$$PASSWORD` (docker-compose's escaped `$PASSWORD`, a variable, never `$$ecretpass`);
# `#{db_password}`, `%(password)s`, `{{ pw }}`, `{{ .Values.db.password }}` around a name
_WRAPPED = re.compile(
    r"(?P<o>__|@@?|<<|!!|%)(?P<n>[A-Za-z][A-Za-z0-9_]*?)(?:__|@@?|>>|!!|%)"
    r"|\$\$[A-Z][A-Z0-9_]*"
    r"|(?:#\{|\{\{)[ \t]*(?P<t>\.?[A-Za-z_][\w.]*)[ \t]*(?:\|[ \t]*\w+[ \t]*)?\}\}?"
    r"|%\([A-Za-z_]\w*\)[sdr]"
)
_WRAPPERS = {"__": "__", "@": "@", "@@": "@@", "<<": ">>", "!!": "!!", "%": "%"}
#: A constant's name, `DB_PASSWORD`, `PASSWORD_2`, `OAUTH2_SECRET` (digits judged apart)
_CONSTANT = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
#: The words of a snake_case placeholder's name
_PLACEHOLDER_NAME_WORDS = frozenset((
    "password", "passwd", "pass", "pw", "pwd", "secret", "token", "key", "api", "apikey", "db",
    "database", "user", "username", "host", "value", "name", "port", "auth", "cred", "creds",
    "credential", "credentials", "private", "access", "client", "id", "app", "admin", "root",
    "redis", "mysql", "postgres", "smtp", "aws", "vault", "env", "var", "your", "my", "the",
))  # fmt: skip
#: Windows' own variables, which cmd writes in any case (`%appdata%`)
_WINDOWS_VARIABLES = frozenset((
    "appdata", "localappdata", "programdata", "programfiles", "userprofile", "username",
    "userdomain", "computername", "homedrive", "homepath", "systemroot", "systemdrive", "windir",
    "temp", "tmp", "path", "pathext", "comspec", "public", "allusersprofile", "cd", "date",
    "time", "random", "errorlevel", "onedrive",
))  # fmt: skip
#: A word of a name that holds a digit: one digit closing it (`OAUTH2`, `S3`, `PASSWORD_2`),
#: not a digit inside (`S3CR3T42`, `ZQ8VRT3LM9KW`) nor a number (`2024`: a password's year)
_DIGIT_WORD = re.compile(r"[A-Za-z]*[0-9]")
#: CamelCase words, `ProgramFiles`
_CAMEL_WORDS = re.compile(r"(?:[A-Z][a-z]+){2,}")
#: One part of a template variable's dotted path, `Values`, `DB_PASSWORD`, `dbPassword`
#: (snake_case ones: _snake_part). No two ways to split a run: `a_a_a…A` stays linear.
_TEMPLATE_PART = re.compile(
    r"[A-Z][A-Z0-9_]*|[a-z]+(?:[A-Z][a-z]+)+[0-9]{0,2}|[A-Z][a-z]+(?:[A-Z][a-z]+)*"
)
_LOWER_RUN = re.compile(r"[a-z_]+")
#: After a snake_case name's letters: up to two digits, then `_` words (`pw2`, `db1_host`)
_DIGITS_THEN_WORDS = re.compile(r"[0-9]{1,2}(?:_[a-z0-9]+)*")
#: After `name_` or `name_x`: a word's digits and letters, then `_` words (`pw_2024`)
_WORD_THEN_WORDS = re.compile(r"[0-9][a-z0-9]*(?:_[a-z0-9]+)*")


def _snake_part(part: str) -> bool:
    """A snake_case template name (`db_password`, `pw2`, `pw_2024`, `_private`), not random
    letters and digits (`zq8vrt3lm9kw`). Read in steps, each with one way to match:
    the single pattern for it took quadratic time on `a_a_a…A` (review 143 P1)."""
    head = _LOWER_RUN.match(part)
    if head is None:
        return False
    rest = part[head.end() :]
    if not rest:
        return True
    if _DIGITS_THEN_WORDS.fullmatch(rest):
        return True
    # the digits begin a `_` word of their own (`ab_c12345`: `_c12345`)
    return "_" in head.group()[1:] and _WORD_THEN_WORDS.fullmatch(rest) is not None


def _template_part(part: str) -> bool:
    """One part of a template variable's path: a name, not random (`Zq8vRt3Lm9Kw`)."""
    return _snake_part(part) or _TEMPLATE_PART.fullmatch(part) is not None


def _placeholder_name(name: str, opener: str = "") -> bool:
    """A name a template's marks hold: a constant's, or snake_case words of a placeholder
    (`db_password`), not one word (`letmein`, `hunter_two`). Digits only as one closing a
    word of a name that holds a placeholder's word (`OAUTH2_SECRET`, `PASSWORD_2`), never
    inside a word or as a number: `S3CR3T42`, `ZQ8VRT3LM9KW`, `HUNTER2`, `my_secret_2024`
    are passwords in marks (review 143 H1). `%name%` is also a Windows variable's."""
    parts = name.split("_")
    if any(c.isdigit() for c in name):
        words = [p for p in parts if p]
        if not all(_DIGIT_WORD.fullmatch(w) or w.isalpha() for w in words):
            return False
        if not (name.isupper() or name.islower()):
            return False
        return any(w.lower().rstrip("0123456789") in _PLACEHOLDER_NAME_WORDS for w in words)
    if _CONSTANT.fullmatch(name):
        return True
    if opener == "%" and (name.lower() in _WINDOWS_VARIABLES or _CAMEL_WORDS.fullmatch(name)):
        return True
    return name.islower() and any(p in _PLACEHOLDER_NAME_WORDS for p in parts)


#: A dotted path of names where a value would be: `config.db.password`, `process.env.PW2`
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w{0,63}(?:\.[A-Za-z_]\w{0,63}){1,8}")
#: camelCase words, `dbPassword2`, `getPw`: a name when one of them is a secret's word
_CAMEL_NAME = re.compile(r"[a-z]+(?:[A-Z][a-z0-9]*)+")


def is_variable_name(value: str) -> bool:
    """Where prose names the place a password is kept, not the password: a constant's or a
    variable's name (`PASSWORD_ENV`, `db_password2`, `dbPassword`), a dotted setting
    (`config.db.password`). One word with digits in it (`HUNTER2`, `hunter_2`, `admin123`)
    is none: digits make a name only beside a `_`."""
    if _DOTTED_NAME.fullmatch(value):
        return True
    if ("_" in value or not DIGIT.search(value)) and _placeholder_name(value):
        return True
    if _CAMEL_NAME.fullmatch(value) is None:
        return False
    return any(
        w.lower().rstrip("0123456789") in _PLACEHOLDER_NAME_WORDS for w in _SPLIT.findall(value)
    )


def is_wrapped_placeholder(value: str) -> bool:
    """A template's placeholder, its opening and closing marks matching (`__PASSWORD__`,
    `@@PW@@`, `%DB_PASS%`, `$$PASSWORD`; not `__init`, nor a password in marks:
    `!!qwerty!!`). Also what the INI rule skips as a value (context_detectors)."""
    match = _WRAPPED.fullmatch(value)
    if match is None:
        return False
    opener = match["o"]
    if opener is not None:
        closer = _WRAPPERS[opener]
        inner = value[len(opener) : len(value) - len(closer)]
        return value.endswith(closer) and inner == match["n"] and _placeholder_name(inner, opener)
    if match["t"] is not None:
        if value.endswith("}}") != value.startswith("{{"):
            return False  # `#{name}` or `{{ name }}`, not `#{name}}`
        parts = match["t"].lstrip(".").split(".")
        return all(_template_part(p) for p in parts)
    if value.startswith("$$"):
        return _placeholder_name(value[2:])  # `$$PASSWORD`, not `$$X7K9P2QM4R`
    return True


# What a real password or key has and a placeholder's words do not: digits and symbols.
_REAL_VALUE_CHARS = re.compile(r"[0-9!@#$%^&*+=?~|\\;,]")
_MASKS = ("****", "…", "...")  # a value shown masked is not there to leak


def _masked(low: str) -> bool:
    """``sk-****1234``, ``sk-ant-...``, ``ab12…yz``: a mask with a few characters around it
    (``my...Secret9pass`` shows too much to be a mask)."""
    if not any(m in low for m in _MASKS):
        return False
    shown = low
    for mask in _MASKS:
        shown = shown.replace(mask, "")
    return len(shown.replace("*", "")) <= 12


#: Keys printed in vendors' documentation for every reader to paste: no account's secret.
#: (jwt.io's sample tokens, the older and the current one, are signed with the secrets the
#: page prints beside them, "your-256-bit-secret" and "a-string-secret-at-least-256-bits-long")
DOCUMENTED_EXAMPLES = frozenset({
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "sk_test_BQokikJOvBiI2HlWgH4olfQ2",  # Stripe's docs
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
    "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
    "YWRtaW4iOnRydWUsImlhdCI6MTUxNjIzOTAyMn0.KMUFsIDTnFmyG3nMiGM6H9FNFUROf3wh7SmqJp-QV30",
})  # fmt: skip


def is_documented_example(value: str) -> bool:
    """A key from a vendor's documentation: Stripe's test key, jwt.io's sample token, or
    AWS's ``…EXAMPLE`` id and ``…EXAMPLEKEY`` secret (20 and 40 characters, as real ones
    are)."""
    return value in DOCUMENTED_EXAMPLES or (
        len(value) in (20, 40) and value.endswith(("EXAMPLE", "EXAMPLEKEY"))
    )


@functools.lru_cache(maxsize=4096)  # names and values repeat a lot
def is_placeholder(value: str) -> bool:
    """``your-key-here``, ``xxx``, ``<TOKEN>``, ``${VAR}``, ``$VAR``, ``***``, ``changeme``…

    A placeholder word inside a value counts only when what is left is words as well:
    ``Yourself2024!``, ``Fake1234Zz`` or ``NotYourBusiness9`` are passwords that happen to
    contain one, and skipping them leaked them."""
    stripped = value.strip().strip("\"'`=")
    low = stripped.lower()
    if not low or low in _PLACEHOLDER_EXACT or _VARIABLE.fullmatch(stripped):
        return True
    if is_documented_example(stripped):
        return True
    if _REFERENCE_FORM.match(stripped) or _NOT_A_VALUE.fullmatch(stripped):
        return True
    if is_wrapped_placeholder(stripped):
        return True
    if len(set(low)) <= 2 or low.startswith("[redacted:") or _masked(low):
        return True
    vendor = _VENDOR_PREFIX.match(low)
    if vendor is not None and _vendor_placeholder(low[vendor.end() :]):
        return True
    rest, found = low, False
    for part in _PLACEHOLDER_PARTS:
        if part in rest:
            rest, found = rest.replace(part, " "), True
    return found and not _REAL_VALUE_CHARS.search(rest)


# Where a value will come from, written in a config's templating: an f-string's or C#'s
# `{password}`, Symfony's `%env(DB_PASSWORD)%`, Concourse's `((db_password))`, Octopus's
# `#{DbPassword}#`, Ruby's `#{ENV.fetch(…)}`, Azure Key Vault and Vault references, GCP
# Secret Manager's `${sm://…}`, SSM's `${ssm:…}`, CloudFormation's `{{resolve:…}}`
_REFERENCE_FORM = re.compile(
    r"\{[A-Za-z_][\w.]*(?:\(\))?\}?$|\{[0-9]{1,2}\}|%env\(|\(\([\w.\-]+\)\)"
    r"|#\{[A-Za-z_]+\}#|#\{ENV\b|@Microsoft\.KeyVault\("
    r"|vault:[\w/]|\$\{(?:sm|ssm|vault|secretsmanager):|\{\{resolve:"
)
# Not a value at all: a debugger's pointer (`password=0x7fffffffe3c0`), a SQL parameter
# (`Password=@Password`), an RST role (`pass :meth:`), a connection string's documented
# placeholder (`Password=myPassword`), a type with `?` (`"password": "string?"`), a
# bracketed placeholder (`-p[password]`)
_NOT_A_VALUE = re.compile(
    r"0x[0-9a-fA-F]{4,16}|[A-Za-z_]\w*@entry=?(?:0x[0-9a-fA-F]+)?|@[A-Za-z_]+"
    r"|:?(?:meth|func|class|attr|data|mod|obj|exc|ref|doc|term|const|param|type):`?"
    r"|my(?:Password|Pwd|Pass|Secret|Username|User|ServerAddress|Server|DataBase|Database)"
    r"|(?:string|number|boolean|object|any)\?|\[[A-Za-z_ ]+\]"
)
#: Stripe's key prefixes, which documentation writes before a made-up rest
_VENDOR_PREFIX = re.compile(r"(?:sk|rk|pk)_(?:live|test)_")
#: A run of filler in a key's place (`51Hxxxxxxxxxxxxxxxx`, `0000…`, `****…`): never 8 in a
#: row in a random key
_FILLER_RUN = re.compile(r"([x0*.\-])\1{7}")


def _vendor_placeholder(rest: str) -> bool:
    """What follows ``sk_live_`` in documentation: a placeholder (``your_key_here``), a
    stub cut with an ellipsis (``abc123...``), or a run of filler (``51Hxxxxxxxx…``)."""
    if not rest or is_placeholder(rest):
        return True
    if rest.endswith(("...", "…")) and len(rest.rstrip(".…")) <= 12:
        return True
    return _FILLER_RUN.search(rest) is not None


_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_PASSWORD_WORDS = frozenset(
    {"password", "passwd", "pwd", "pw", "passphrase", "pass", "passcode", "sshpass"}
)  # ADMIN_PW, LDAP_BIND_PW; SSHPASS is sshpass's environment variable
#: "Password" as other languages name it in a config key or a variable (Passwort,
#: DB_PASSWORT, contraseña): judged as the English name; prose says more (placement_detectors)
FOREIGN_PASSWORD_NAMES = (
    "passwort", "passord", "kennwort", "contraseña", "contrasena", "senha", "wachtwoord",
    "пароль", "hasło", "haslo", "lösenord", "losenord", "salasana", "heslo",
)  # fmt: skip
_STRONG_WORDS = _words(
    "secret secrets credential credentials cookie cookies apikey privatekey accesskey "
    "secretkey authtoken accesstoken refreshtoken sessiontoken clientsecret authorization"
)
_WEAK_WORDS = frozenset({"key", "token", "auth"})
_QUALIFIERS = _words(
    "api access secret private auth refresh session bearer client master signing encryption "
    "oauth personal bot app deploy admin service account id csrf xsrf webhook license "
    "registry ssh gpg jwt github gh gitlab npm pypi hf huggingface openai anthropic slack "
    "stripe aws azure gcp groq xai cerebras openrouter gemini google discord telegram twilio "
    "sendgrid mailgun hmac aes cipher subscription function functions"
)
_VALUE_SUFFIXES = frozenset(
    {"value", "b64", "base64", "hex", "raw", "plaintext", "str", "string", "base"}
)  # SECRET_KEY_BASE is Rails' secret key
# Names glued into one word, like PGPASSWORD or JWTSECRET: only unambiguous endings count
# ("pass" alone would make "bypass" and "compass" passwords).
_GLUED_PASSWORD = ("password", "passwd", "passphrase", "passcode")
#: `DBPASS`, `SMTPPASS`: "pass" glued to what it opens (not any word ending in it: bypass,
#: compass, impass)
_GLUED_PASS = frozenset(
    f"{what}pass" for what in ("db", "smtp", "mail", "admin", "root", "user", "ftp", "ldap",
                               "redis", "mysql", "pg", "mongo", "rabbit", "amqp", "imap", "vnc")
)  # fmt: skip
_GLUED_STRONG = ("secret", "secrets")


# What names the deployment or the version after the secret's word (DB_PASSWORD_PROD,
# API_KEY_V2, JWT_SECRET_DEV): the word before it is the one that counts. Not "public":
# VAPID_KEY_PUBLIC is a public key.
ENV_QUALIFIERS = (
    "prod", "production", "dev", "development", "staging", "stage", "stg", "test", "testing",
    "qa", "uat", "live", "sandbox", "old", "new", "next", "prev", "previous", "backup",
    "primary", "secondary", "local", "ci", "internal", "external", "ro", "rw",
)  # fmt: skip
_QUALIFIER_WORDS = frozenset(ENV_QUALIFIERS) | {"v"}  # "V2" splits into "v", "2"


@functools.lru_cache(maxsize=4096)  # names and values repeat a lot
def _name_words(name: str) -> tuple[str, ...]:
    words = [w.lower() for w in _SPLIT.findall(name.rsplit(".", 1)[-1])]
    while len(words) > 1 and (
        words[-1] in _VALUE_SUFFIXES or words[-1].isdigit() or words[-1] in _QUALIFIER_WORDS
    ):
        words.pop()
    return tuple(words)


def name_strength(name: str) -> str | None:
    """How sensitive a field/variable name is: "password", "strong", "weak" or None.

    Only the last word counts (``apiKey``, ``GITHUB_TOKEN`` yes; ``keyData``, ``max_tokens``,
    ``SSH_AUTH_SOCK``, ``author`` no), before a deployment or version (``_PROD``, ``_V2``);
    ``key``/``token``/``auth`` alone are "weak" unless a qualifier such as
    ``api``/``access``/a provider name comes right before.
    """
    words = _name_words(name)
    strength = _strength(words)
    if strength is None and len(words) > 1 and words[-1] not in ANOTHER_THING:
        # one more word of any kind after a secret's name (DB_PASSWORD_REPLICA, API_KEY_ADMIN,
        # STRIPE_SECRET_EU): the qualifiers above are not all there are
        before = _strength(words[:-1])
        if before in ("password", "strong"):
            return before
    return strength


def _strength(words: tuple[str, ...]) -> str | None:
    last = words[-1] if words else ""
    if last in _PASSWORD_WORDS:
        return "password"
    if last in _STRONG_WORDS:
        return "strong"
    if last in _WEAK_WORDS:
        if len(words) > 1 and words[-2] in _NOT_A_SECRET_KIND:
            return None  # nextPageToken, NextToken, sortKey, publicKey: not a secret's name
        return "strong" if len(words) > 1 and words[-2] in _QUALIFIERS else "weak"
    if last.endswith(_GLUED_PASSWORD) or last in _GLUED_PASS:
        return "password"
    if last.endswith(_GLUED_STRONG):
        return "strong"
    return None


# A word before "key" or "token" that makes it a key or token of another kind: a page's,
# a sort order's, a public one (not "primary": Azure's primaryKey is its account key)
# ("request" and "change" are not: an OAuth request token, a password-change token; nor
# "sync" or "resume": SYNC_KEY, RESUME_TOKEN hold secrets too, review 2026-12-07)
_NOT_A_SECRET_KIND = _words(
    "next page continuation cursor pagination idempotency sort partition foreign composite "
    "row public publishable"
)


# A word after a secret's name that makes it name something else: where the secret is kept,
# how it is checked or shown, when it expires (PASSWORD_FILE, TOKEN_URL, SECRET_NAME; not
# "re": `password_re` is a form's retyped password as often as a regex, review 2026-12-07).
ANOTHER_THING = _words(
    "file files path paths dir folder location length len min max policy policies hash hashed "
    "hasher salt rounds iterations id ids name names type kind format url uri endpoint host "
    "header headers field fields prompt hint label regex pattern enabled enable disabled "
    "required expiry expires expiration expire ttl timeout count size algorithm algo mode env "
    "var column validator validators encoder manager provider store source ref arn command cmd "
    "helper reset rotation rotate changed updated created at date time age lifetime strength "
    "complexity rule rules chars charset scope scopes prefix suffix index mask masked input "
    "placeholder text message msg error errors hint lookup sha md5 bcrypt argon crypt digest "
    "public pub cert certificate sock socket agent pid port err title help description desc "
    "opts options args flags parameter parameters param params attribute attr"
)


_SPACE = re.compile(r"\s")
_PATHLIKE = re.compile(r"(?:[A-Za-z]:[\\/]|~/|\.{0,2}/)\S*|[a-z0-9._\-]+(?:/[a-z0-9._\-]+)+/?")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{1,20}://")
_NUMBERISH = re.compile(r"[-+]?[0-9][0-9_.,:\-]*[a-zA-Z]{0,3}")
_CODE = re.compile(r"[A-Za-z_$#][\w$]*(?:(?:\?\.|\.|::|->)[A-Za-z_$#][\w$]*)*")
_BRACKETS = re.compile(r"[()\[\]{}<>]")
PLAIN_WORD = re.compile(r"[A-Za-z]+")  # "email", "option": words, not passwords
WORDLIKE = re.compile(r"[A-Za-z]+(?:[-_.][A-Za-z]+)*|[a-z][a-z0-9]*(?:[-_.:/][a-z][a-z0-9]*)+")
_HEXISH = re.compile(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|[0-9a-f]{7,}|[0-9A-F]{7,}", re.I)
# A UUID or 32+ hex digits: how Consul, Snyk, Sonar, CircleCI, Heroku, Postmark... tokens look.
_TOKEN_HEX = re.compile(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|[0-9a-f]{32,}", re.I)
# `Authorization: Basic dXNlcjpwYXNz`: the scheme word, then the credential.
_AUTH_SCHEME = re.compile(
    r"(?i:basic|bearer|token|bot|digest|negotiate|apikey|api-key|sso-key)[ \t]+(\S{8,1024})"
)
_MAX_PASSPHRASE_WORDS = 8
# Under a weak name (key, token): a CONSTANT_NAME, or a word and a short hex id
# (words, a short number last: IDENTIFIER_42, HTTP_STATUS_404; 8 hex digits at most, as a
# UI key has: `tok_8f3a9c2e1b7d4f60` or `PROD_8F3A9C2E1B7D` is a token)
_IDENTIFIER = re.compile(
    r"[A-Z]{2,}(?:_[A-Z]{2,})*_(?:[A-Z]{2,}|[A-Z]{0,12}[0-9]{1,3})|[a-z]+[-_][0-9a-f]{6,8}"
)
# In code, a camelCase name of a field, with a short number (`primaryKey: "userId2024"`,
# `key: "rowKey3"`); not any camelCase words (`TOKEN=purpleMonkeyDishwasher7` is one)
_FIELD_NAME = re.compile(
    r"[a-z]{2,}(?:[A-Z][a-z]+)*(?:Id|Key|Name|Ref|Index|Type|Field|Column|Token|Label|Path)"
    r"[0-9]{0,4}"
)


@functools.lru_cache(maxsize=4096)
def is_secret_assignment(name: str, value: str, *, quoted: bool, env_style: bool) -> bool:
    """Is ``name = value`` a secret rather than code, prose, a label or a placeholder?

    ``quoted``: a string literal or a JSON value. ``env_style``: ``NAME=value`` with no spaces
    (shell, .env, ``--flag=value``), where a bare word is a literal, not a variable.
    """
    strength = name_strength(name)
    if strength is None or not (5 if strength == "password" else 8) <= len(value) <= 1024:
        return False
    if _SPACE.search(value):
        return _spaced_secret(name, value, strength, env_style=env_style)
    if is_placeholder(value):
        return False
    if _PUBLIC_KEY_NAME.search(name) and _KEY_ID.fullmatch(value):
        return False  # `GPG_KEY=A035C8C1…` (Python's images), a host key's fingerprint
    if _ALGORITHM.fullmatch(value):
        return False  # `password_encryption = scram-sha-256`: how, not what
    if _NUMBERISH.fullmatch(value):  # a port, a size, a date: unless all digits and long
        return _numeric_secret(value, strength)
    if _PATHLIKE.fullmatch(value) or _URL.match(value):
        return False
    if value.startswith(KNOWN_PREFIXES) and (quoted or env_style or _random_after_prefix(value)):
        return True  # (bare in code, `token=hf_token` and `api_key = sk_secret` are names)
    if not quoted and not env_style:  # `token = options.token`, `apiKey: getKey()`, `Array<T>`
        # (TypeScript's non-null `!`: `password: process.env.DB_PASSWORD!,` is code)
        chain = _CODE.fullmatch(value.removesuffix("!"))
        dotted = strength != "password" and any(sep in value for sep in (".", "::", "->"))
        if _BRACKETS.search(value) or (chain and (dotted or not DIGIT.search(value))):
            return False
    if strength == "password":
        # In code and JSON a plain word is a label ("password": "email" in a schema's list of
        # required fields); in NAME=value lines of a shell or .env file it is the password.
        return env_style or not PLAIN_WORD.fullmatch(value)
    # `exports.Auth = Auth`, `ClientSecrets = client_secrets_1...`: the name's word comes back,
    # as a word of the value (a random key holding "key" by chance, as "VarkEyue", is a key)
    # (words with digits in them, long and random, under a strong name are a key:
    # Django's `SECRET_KEY = "koug11vjgag-accebjwnp8y-…"`)
    if (WORDLIKE.fullmatch(value) and not (strength == "strong" and _random_words(value))) or (
        _name_words(name)[-1].rstrip("s") in _value_words(value)
    ):
        return False
    if strength == "strong":
        return True
    if _name_words(name)[-1] == "token" and _TOKEN_HEX.fullmatch(value):
        return True  # hex under a *key* name is more often a hash, a cache or idempotency key
    if _IDENTIFIER.fullmatch(value) or (not env_style and _FIELD_NAME.fullmatch(value)):
        return False  # a lexer's `"token": "IDENTIFIER_42"`, React's `key="row-3f9b2c1e"`
    if _word_path(value):
        return False  # `cache_key = "user:1234:profile:v2"`: a cache's or a store's key
    return looks_random(value) and bool(DIGIT.search(value)) and not _HEXISH.fullmatch(value)


#: All-digit values this long under a password name (a PIN, a numeric password) or a
#: strong one (``API_KEY=2221686489``) are secrets; shorter ones are too often a port, a
#: length or a count, and a weak name (``key: 20240101``) more often holds an id.
_NUMERIC_SECRET_DIGITS = {"password": 6, "strong": 8}


# Names of public keys' ids and fingerprints, and those values: a GPG key id (8, 16 or 40
# hex digits), an SSH host key's SHA256 fingerprint, colon-separated hex
_PUBLIC_KEY_NAME = re.compile(
    r"gpg|pgp|gnupg|fingerprint|signingkey|host_?key|sig_?key|key_?id", re.IGNORECASE
)
_KEY_ID = re.compile(
    r"(?:0x)?(?:[0-9A-Fa-f]{8}|[0-9A-Fa-f]{16}|[0-9A-Fa-f]{40})|SHA256:[A-Za-z0-9+/]{43}=?"
    r"|(?:[0-9A-Fa-f]{2}:){15,31}[0-9A-Fa-f]{2}"
)
_ALGORITHM = re.compile(
    r"scram-sha-(?:1|256|512)|md5|sha-?(?:1|256|384|512)|argon2(?:id|i|d)?|bcrypt|scrypt"
    r"|pbkdf2(?:[_-]sha(?:1|256|512))?|aes-?(?:128|192|256)(?:-[a-z]{3})?"
    # request signing schemes: `Authorization: AWS4-HMAC-SHA256 Credential=…`
    r"|[a-z0-9]{2,8}-hmac-sha[0-9]{1,3}|goog4-rsa-sha256"
    # SASL mechanisms: an IMAP or SMTP server's `AUTH=CRAM-MD5` capability
    r"|(?:cram|digest)-md5|scram-sha-(?:1|256|512)-plus|xoauth2?|oauthbearer|gssapi|ntlm",
    re.IGNORECASE,
)
#: The name of a type, not a value: a secret's word and a type's (pydantic's `SecretStr`,
#: `SecretBytes`, AWS's `SecureString`, `PasswordField`), or a typed array (`Uint8Array`), as
#: a Python or TypeScript annotation gives it (`password: SecretStr`). Only these: any
#: CamelCase words ending in a type's word took passwords (`Summer2024Value`, `HunterTwoMap`).
_TYPE_NAME = re.compile(
    r"(?:Secret|Secure|Sensitive|Masked|Encrypted|Password|Passwd|Token|Credentials?|Key"
    r"|Private|Api)(?:[A-Z][a-z]+)?(?:Str|String|Bytes|Field|Input|Type|Value|Ref)"
    r"|(?:Big)?U?[Ii]nt(?:8|16|32|64)(?:Clamped)?Array|Float(?:32|64)Array"
)


def is_type_name(value: str) -> bool:
    """``SecretStr``, ``SecureString``: a type's name (see ``_TYPE_NAME``), no value."""
    return len(value) <= 64 and _TYPE_NAME.fullmatch(value) is not None


_PATH_PART = re.compile(r"[a-z]+|[0-9]+|[a-z0-9]{1,3}")


def _word_path(value: str) -> bool:
    """Lowercase words and numbers joined by ``:``, ``/`` or ``.`` (``user:1234:profile:v2``,
    ``sessions/42/avatar``): a key naming where something is stored, not a secret."""
    parts = re.split(r"[:/.]", value)
    return len(parts) > 2 and all(
        piece and _PATH_PART.fullmatch(piece) for part in parts for piece in re.split(r"[-_]", part)
    )


def _random_after_prefix(value: str) -> bool:
    """A known prefix followed by a key's characters, not by a word (``hf_token``)."""
    prefix = next(p for p in KNOWN_PREFIXES if value.startswith(p))
    rest = value[len(prefix) :]
    return len(rest) >= 8 and (looks_random(rest) or bool(DIGIT.search(rest)))


def _random_words(value: str) -> bool:
    """Lowercase "words" that are a key's characters (Django's ``SECRET_KEY =
    "koug11vjgag-accebjwnp8y-…"``): long, and two or more parts mixing letters and digits
    (``my-app-client-v2`` has one)."""
    parts = re.split(r"[-_.:/]", value)
    mixed = sum(1 for part in parts if DIGIT.search(part) and not part.isdigit() and len(part) > 3)
    return len(value) >= 20 and mixed >= 2 and looks_random(value)


def _numeric_secret(value: str, strength: str) -> bool:
    least = _NUMERIC_SECRET_DIGITS.get(strength)
    return least is not None and value.isascii() and value.isdigit() and len(value) >= least


def _value_words(value: str) -> frozenset[str]:
    """The words of a value as a name splits into them (``client_secrets_1``: client,
    secret, 1), singular."""
    return frozenset(w.lower().rstrip("s") for w in _SPLIT.findall(value))


def _spaced_secret(name: str, value: str, strength: str, *, env_style: bool) -> bool:
    """A value with spaces: an auth header (``Basic dXNl…``), or a passphrase, but only as
    the value of an environment variable or .env line: in code and JSON, words under a
    password name are far more often a message ("must be 8+ chars") than a passphrase."""
    scheme = _AUTH_SCHEME.fullmatch(value.strip())
    if scheme:
        credential = scheme.group(1)
        return not is_placeholder(credential) and not WORDLIKE.fullmatch(credential)
    if strength != "password" or not env_style or is_placeholder(value):
        return False
    words = value.split()
    # (a short one may end in "!", as passwords do: "sesame open!"; a sentence is longer)
    ending = value.rstrip()[-1:]
    prose = (
        len(words) > _MAX_PASSPHRASE_WORDS
        or ending in (".", ":", "?")
        or (ending == "!" and len(words) > 3)
    )
    # not a command, variables, a format, options or a note where the value will go
    code = _NOT_A_PASSPHRASE.search(value) or value.lstrip().startswith("-")
    note = words[0].lower() in _NOTE_WORDS
    return (
        not prose
        and not code
        and not note
        and "\n" not in value
        and _name_words(name)[-1] not in value.lower()
    )


# `"$(vault read …)"`, `"$PW1 $PW2"`, `` `cmd` ``, `"%s %s"`, `"{0} {1}"`
_NOT_A_PASSPHRASE = re.compile(r"[$`]|%[-0-9.]*[sdif]\b|\{[0-9a-z_]*\}")
# `"TODO set me"`, `"see vault"`, `"ask admin"`, `"same as above"`, `"not set"`, `"change me"`
_NOTE_WORDS = _words(
    "todo tbd fixme see ask same not change set use enter insert put your none do dont don't "
    "required fill"
)
