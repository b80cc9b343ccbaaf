"""Detectors that judge a value by what names it: ``NAME=value`` assignments and secrets
passed as command-line arguments (``--password X``, ``mysql -pX``, ``curl -u user:X``).

The value alone would not say "secret"; the name or flag before it does, and
`secret_heuristics` decides whether the pair is one. Patterns stay linear as in `detectors`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import ClassVar

from exporter.detector_base import Detector, Span
from exporter.secret_heuristics import (
    ANOTHER_THING,
    FOREIGN_PASSWORD_NAMES,
    PLAIN_WORD,
    is_placeholder,
    is_secret_assignment,
    is_type_name,
    is_wrapped_placeholder,
    name_strength,
)

_STOP = frozenset(" \t\r\n\"'`,;&)]}")  # what may follow an unquoted value
_REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_][\w\-]*|\[[^\]]{1,64}\])+")
_YAML_TAG = re.compile(r"!{1,2}[A-Za-z]+")  # !vault, !!binary, !Ref: YAML reads a tag there
# `*name`: a YAML alias, the value is set elsewhere (not Markdown's `*hunter2x*`)
_YAML_ALIAS = re.compile(r"\*[A-Za-z_][\w.\-]{0,127}")
# `name: &anchor value`: a YAML line whose value an anchor names (the value pattern cannot
# start with `&`, which ends a query parameter's value)
_YAML_ANCHORED = re.compile(
    r"^[ \t]{0,32}(?:-[ \t]{1,8})?(?P<name>[A-Za-z_][\w.\-]{0,63})[ \t]{0,8}:[ \t]{1,8}"
    r"&[A-Za-z_][\w.\-]{0,127}[ \t]{1,8}"
    r"(?:(?P<q>[\"'])(?P<qv>[^\"'\n]{1,256})(?P=q)|(?P<v>[^\s#\"']{1,256}))"
    r"[ \t]{0,8}(?=$|\n|\r|#)",
    re.M,
)
# `password:` then the value alone on the next, deeper line (YAML's plain scalar, or a `|`/`>`
# block of one line): from the colon, so the regex engine skips ahead to it; the name before
# it is read back from the line (YAML indents with spaces only: a Makefile's tab is a recipe)
_NEXT_LINE_VALUE = re.compile(
    r":(?=[ \t]{0,8}(?:[|>](?:[1-9][+\-]?|[+\-][1-9]?)?[ \t]{0,8})?\r?\n(?P<inner> {1,48})"
    r"(?:(?P<q>[\"'])(?P<qv>[^\"'\r\n]{1,256})(?P=q)|(?P<v>[^\s#\"'][^\s#]{0,255}))"
    r"(?P<end>[ \t]{0,8}\r?)(?:\n|\Z))"
)  # (all of it a look-ahead: `db:` then `  password:` on the next line is tried in turn)
_NEXT_LINE_NAME = re.compile(r"(?P<indent> {0,32})(?:-[ \t]{1,8})?(?P<name>[A-Za-z_][\w.\-]{0,63})")
_NEXT_LINE_NOT_A_VALUE = re.compile(r".*[,;:(){}\[\]]|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
# Composer's auth.json (and COMPOSER_AUTH): a token per host under the service's key,
# `"github-oauth": {"github.com": "TOKEN"}`; the host names the value, so no name rule sees it
_COMPOSER_AUTH = re.compile(
    r"\\{0,3}\"(?:github-oauth|gitlab-oauth|gitlab-token|bearer)\\{0,3}\"[ \t\r\n]{0,32}:"
    r"[ \t\r\n]{0,32}\{(?P<hosts>[^{}]{1,4096})\}"
)
_COMPOSER_HOST_TOKEN = re.compile(
    r"\"[ \t\r\n]{0,32}:[ \t\r\n]{0,32}\\{0,3}\"(?P<v>[^\"\\\r\n]{8,512})\\{0,3}\""
)
# `"passwords": ["X", "Y"]` (JSON, a Python or JS literal): a list of secrets under one name,
# which the NAME=value pattern (a value right after the separator) never reaches
_LISTED_VALUES = re.compile(
    r"(?P<nq>\\{0,3}[\"'])(?P<name>[A-Za-z_][\w.\-]{0,63})(?P=nq)[ \t]{0,8}:[ \t\r\n]{0,32}"
    r"\[(?P<items>[^\[\]{}]{1,4096})\]"
)
# an item in double quotes may hold a single one (`"don't-know"`) or an escape (`"Xy7\"kLm9"`),
# read over so the items after it pair their quotes right (an item holding an escape is not
# judged: its text is not its value); one whose quotes are escaped (JSON inside a JSON
# string) is read up to the same escape, and a single-quoted one up to its quote
_LISTED_ITEM = re.compile(
    r"(?<!\\)\"(?P<v>(?:[^\"\\\r\n]|\\[^\r\n]){1,512})\""
    r"|(?P<e>\\{1,3})\"(?P<ev>[^\"\\\r\n]{1,512})(?P=e)\""
    r"|'(?P<sv>(?:[^'\\\r\n]|\\[^\r\n]){1,512})'"
)
_COOKIE_NAME = re.compile(r"[\w.\-]{1,64}=")
# `&` and what follows it, up to a space or "=" (`&page=` is the next query parameter)
_AMPERSAND_TAIL = re.compile(r"&[^\s\"'`,;=\\)\]}&]{1,256}")  # not `&&` or a lone `&`


def _compile_each(words: dict[str, tuple[str, int]]) -> dict[str, re.Pattern[str]]:
    """The name must end in the word (plus a value/number suffix): ``keyData`` never matches."""
    # one more word of any kind (DB_PASSWORD_PROD, DB_PASSWORD_REPLICA, API_KEY_ADMIN):
    # name_strength, given the whole name, says whether it still names the secret
    suffix = (
        r"(?:[_.\-]?(?:value|b64|base64|hex|raw|plaintext|str|string|base))?"
        r"(?:[_\-](?:[a-z]{1,16}|v(?=[0-9])))?(?:[_\-]?[0-9]{1,3})?"
    )
    return {
        word: re.compile(
            rf"{word}(?P<tail>{tail}{suffix})(?P<close>\\{{0,3}}[\"'])?(?P<sp1>[ \t]{{0,8}})"
            # a type annotation before "=": `apiKey: string = "…"`, `API_TOKEN: str = "…"`
            # (Rust's `&str`, `&'static str`)
            r"(?P<type>:[ \t]{0,8}(?:&'?)?[a-z_][a-z0-9_.<>\[\]|?, ]{0,40}?[ \t]{0,8}"
            r"(?==(?![=>~])))?"
            r"(?P<sep>:=|=>|=(?![=>~])|:(?![:/])|＝|：)(?P<sp2>[ \t]{0,8})"
            # (Python's raw, bytes and unicode prefixes: `DB_PASSWORD = r"…"`, `b'…'`)
            rf"(?:(?P<open>(?:[rbu]{{1,2}}(?=[\"']))?\\{{0,3}}(?P<oq>[\"'`]))"
            rf"(?P<qv>[^\"'`\\\r\n]{{{least},512}}"
            # shorter, when the other quote or an escape stops it (`"it's-X"`, `"ab\"c"`)
            # (or a single quote's escape: a shell's `'it'\''s X'`, YAML's `'it''s X'`)
            rf"|[^\"'`\\\r\n]{{0,{least - 1}}}(?=\\|(?!(?P=oq))[\"'`]|'(?:\\')?'|'\"'\"'))"
            # (a full-width separator or CJK punctuation ends it too: `X；DB_PORT＝5432`)
            rf"|(?P<uv>[^\s\"'`,;&=\\)\]}}，；。、＝：）】」』]{{1,512}}={{0,2}}))"
        )
        for word, (tail, least) in words.items()
    }


class AssignmentDetector(Detector):
    """``NAME=value``, ``name: "value"``, ``--name=value`` where NAME looks sensitive.

    One literal-anchored regex per sensitive word runs over the lowercased text; the full
    name is recovered by scanning left, then `is_secret_assignment` decides.
    """

    name, summary = "secret-assignment", 'NAME=value / "name": "value" with a sensitive name'
    # word -> (what may follow it inside the name, shortest value worth a look)
    _words: ClassVar[dict[str, tuple[str, int]]] = {
        "key": ("", 8),
        "token": ("", 8),
        "secret": ("s?", 8),
        "pass": ("(?:word|wd|phrase|code|wort|ord)?", 5),  # (German Passwort, Norwegian passord)
        "pwd": ("", 5),
        "pw": ("", 5),
        "cookie": ("s?", 8),
        "credential": ("s?", 8),
        "auth": ("(?:orization)?", 8),
        # "password" in other languages (see _FOREIGN_NAME): config keys and env names too
        "kennwort": ("", 5),
        "contrase": ("(?:ña|na)", 5),
        "senha": ("", 5),
        "wachtwoord": ("", 5),
        "пароль": ("", 5),
        "hasło": ("", 5),
        "haslo": ("", 5),
        "senord": ("", 5),  # lösenord, losenord
        "salasana": ("", 5),
        "heslo": ("", 5),
    }
    lower_triggers = tuple(_words)
    _patterns = _compile_each(_words)
    _name_chars = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")

    def find(self, text: str, lower: str) -> Iterator[Span]:
        if ": &" in text:  # `password: &pw hunter2x` (YAML): the value after its anchor
            yield from _anchored_values(text)
        if "\n " in text:  # `password:` and on the next line, indented, the value
            yield from _next_line_values(text)
        if "-oauth" in lower or "gitlab-token" in lower:
            yield from _composer_tokens(text)
        if '": [' in text or '":[' in text or "': [" in text or "':[" in text:
            yield from _listed_values(text)
        seen: set[int] = set()
        for word, pattern in self._patterns.items():
            if word not in lower:
                continue
            # A rejected match resumes at its value: in `s/PASSWORD=.*/PASSWORD=hunter2/` the
            # first "value" swallows the second, real assignment.
            match = pattern.search(lower)
            least = self._words[word][1]
            while match:
                span = self._check(text, match, seen, least)
                if span:
                    yield span
                group = "qv" if match.group("open") is not None else "uv"
                match = pattern.search(lower, span[1] if span else match.start(group))

    def _check(self, text: str, match: re.Match[str], seen: set[int], least: int) -> Span | None:
        start = match.start()
        limit = max(0, start - 64)
        while start > limit and text[start - 1] in self._name_chars:
            start -= 1
        if start in seen:
            return None
        seen.add(start)
        name = _in_english(text[start : match.end("tail")])
        quoted = match.group("open") is not None
        group = "qv" if quoted else "uv"
        value = text[match.start(group) : match.end(group)]  # the match ran over lowercase
        if _another_kind_in_prose(text, match, start, name):
            return None  # "sort key: 2024-01-01#7f3c", "next token: CiAK…", "cache key: …"
        if _psql_variable(text, match, start, name, value):
            return None  # psql's `ALTER USER app WITH PASSWORD :'app_password'`: a reference
        if text[max(0, start - 3) : start] == "://":
            # `https://x-access-token:TOKEN@github.com/o/r`: a URL's user and password, which
            # url-credentials takes without the host and path after them
            return None
        if text[start - 1 : start] == ":" and _sep(match) == ":" and _in_an_arn(text, start):
            # `arn:aws:secretsmanager:…:secret:prod/db-AbCdEf`: fields of an ARN (a name)
            return None
        if text[max(0, start - 2) : start] == "${":  # `${DB_PASS:-default}`: the default
            if quoted or _sep(match) != ":" or value[:1] not in ("-", "="):
                return None
            value = value[1:].rstrip("}")
            first = match.start(group) + 1
            if is_secret_assignment(name, value, quoted=False, env_style=True):
                return first, first + len(value)
            return None
        if (
            not quoted
            and _COOKIE_NAME.fullmatch(value)
            and name.lower().endswith(("cookie", "cookies"))
        ):
            return None  # `Set-Cookie: session=; Path=/`: the cookie's name (its value is
            # auth-header's, and here it is empty)
        if _sep(match) == "=>" and not quoted:
            return None  # `token => token.trim()` is code; `'password' => 'x'` is a hash entry
        if name == "PASS" and _sep(match) == ":" and _a_test_result(text, start, match, group):
            return None  # `--- PASS: TestParse (0.00s)`, `PASS: test_hash`: a test runner's
        if not quoted and _sep(match) == ":" and _YAML_TAG.fullmatch(value):
            return None  # `password: !vault |`: the encrypted value follows the tag
        if (
            not quoted
            and _sep(match) == ":"
            and _YAML_ALIAS.fullmatch(value)
            and _starts_line(text, start)
        ):
            return None  # `password: *db_password`: YAML's alias of a value set elsewhere
        after = match.end(group)
        if quoted and text.startswith(_SHELL_QUOTE, match.start("oq")):
            # `bash -c 'export DB_PASSWORD='"'"'X'"'"''`: inside single quotes, the value is
            # quoted with '"'"' (close, a quoted quote, open) on both sides
            return _nested_quoted(text, name, match.start("oq") + len(_SHELL_QUOTE))
        if quoted and text[after : after + 1] != match.group("open")[-1]:
            # it stopped at the other quote or an escape: `PASSWORD="it's-X"`, `'pa"ss'`,
            # `"ab\"cd"` hold them; read on to the quote that closes it (after Python's
            # prefix too: `PASSWORD_RE = r"^(?=.*\d).{12,}$"` was cut at its backslash)
            opener = match.group("open")
            literal = opener[:1] in _STRING_PREFIXES
            closing = _closing_quote(
                text, opener.lstrip(_STRING_PREFIXES), after, match.start(group), python=literal
            )
            if closing is not None:
                value, after = text[match.start(group) : closing], closing
                if _CONTRACTION.fullmatch(value):
                    return None  # `password: "don't"`: a word, not a password
        if (
            quoted
            and match.group("open") == "'"
            and text[after + 1 : after + 2] in ("'", "\\", '"')
        ):
            # `'it'\''s s3cret'` (a shell), `'pa'"'"'ss'` (a shell's other way) and
            # `'it''s-s3cret'` (YAML): one value, judged with its quotes as read
            closing = _single_quoted_end(text, after, match.start(group))
            if closing != after:
                raw = text[match.start(group) : closing]
                value = raw.replace(_SHELL_QUOTE, "'").replace("'\\''", "'").replace("''", "'")
                after = closing
                if _CONTRACTION.fullmatch(value):
                    return None  # `'don''t'`: a word
        if quoted and len(value) < least:
            return None
        spaced = text[after : after + 1] in (" ", "\t")
        if not quoted and spaced and _quoted_whole(text, match, start):
            # `- "DB_PASSWORD=correct horse battery"` (docker-compose), `-e "NAME=x y"`: the
            # quotes hold the whole assignment, so the value runs to the closing one
            closing = _closing_quote(text, text[start - 1], after, match.start(group))
            whole = text[match.start(group) : closing] if closing is not None else ""
            if (
                closing is not None
                and text[closing + 1 : closing + 2] in ("", "\n", "\r", " ", "\t", ",", "]")
                and is_secret_assignment(name, whole, quoted=False, env_style=True)
            ):
                return match.start(group), closing
        in_query = start > 0 and text[start - 1] in "?&"
        unwidened, widened = (value, after), False
        if (
            not quoted
            and match.group("close") is None
            and match.group("type") is None
            # NAME=value with no blanks (a .env or .properties line), or YAML's `name: value`
            and (
                (_sep(match) == "=" and not match.group("sp1") and not match.group("sp2"))
                or (_sep(match) == ":" and not match.group("sp1"))
            )
            and (text[after : after + 1] in _PUNCTUATION_STOPS or value.endswith("="))
            and _starts_line(text, start)
        ):
            # a .env or YAML line's value is all of its word: `PASSWORD=Xy)9kL2(mNq` and
            # `password: Hf2Lm}N0p]Rs7` were skipped, `Tr0ub;4dor3x` lost only its head;
            # but `password: Optional[str]` is a type and `(required)` a note
            end = _word_end(text, match.start(group))
            if (
                end > after
                and not _type_or_note(text[match.start(group) : end])
                # code (`password: z.string().min(8),`), unless a NAME=value line's word
                and not (
                    _code(text, match.start(group), end)
                    and not text[start : match.end("tail")].isupper()
                )
            ):
                value, after, widened = text[match.start(group) : end], end, True
        if not quoted and not in_query and text[after : after + 1] == "&":
            # `&` is part of a password in a .env line (`PASSWORD=Tr0ub4dor&3`), but between
            # query parameters (`?token=abc&page=2`) it ends the value.
            tail = _AMPERSAND_TAIL.match(text, after)
            if tail and text[tail.end() : tail.end() + 1] != "=":
                value, after = value + tail.group(), tail.end()
        if not quoted and value.endswith("=") and after < len(text) and text[after] not in _STOP:
            return None  # `.*/PASSWORD=` in `s/PASSWORD=.*/PASSWORD=x/`: another NAME=, no value
        if not quoted and _code_value(text, match, start, value, after):
            return None  # `password: z.string().min(8)`, `key=itemgetter(1),`: code
        # a widened value is a config line's (.env, YAML, .properties): judged as one; when it
        # is no secret, the value as it stopped is judged as before (widening only adds)
        env_style = widened or self._env_style(text, match, name, start, value, after, quoted)
        if is_secret_assignment(name, value, quoted=quoted, env_style=env_style):
            return match.start(group), after
        if widened:
            value, after = unwidened
            env_style = self._env_style(text, match, name, start, value, after, quoted)
            if is_secret_assignment(name, value, quoted=quoted, env_style=env_style):
                return match.start(group), after
        return None

    @staticmethod
    def _env_style(
        text: str, match: re.Match[str], name: str, start: int, value: str, after: int, quoted: bool
    ) -> bool:
        """``NAME=value`` of a shell or .env file, or a YAML line's value: a bare word there
        is the value itself, not a variable."""
        bare = name.lstrip("-")
        env_style = (
            not quoted
            and _sep(match) == "="
            and not match.group("sp1")
            and not match.group("sp2")
            and match.group("close") is None
            and (bare.upper() == bare or name.startswith("--"))
        )
        if (
            not env_style
            and not quoted
            and _sep(match) == "="
            and match.group("close") is None
            and _ends_config_line(text, after)
            and not _CODE_VALUE.fullmatch(value)
            and (
                (
                    text[start - 1 : start] in ("", "\n")
                    and not match.group("sp1")
                    and not match.group("sp2")
                )
                or (not _not_an_ini_value(value) and _in_ini_block(text, start, value))
                or _in_ini_section(text, start)
            )
        ):
            # a config line's value, to its end or a `# comment`: `password=Sunflower` alone
            # on its line from its first column (~/.my.cnf, .properties, git-credential
            # output; code is indented, or goes on after the value), or `password =
            # Sunflower` spaced or indented under a `[client]` header (my.cnf, .pypirc) or
            # among other `key = value` lines (a my.cnf shown from its middle)
            env_style = True
        if (
            not env_style
            and not quoted
            and len(value) >= 5  # (what a password needs: most candidates are not one)
            and name.lower() == "password"
            and _sep(match) == "="
            and not match.group("sp1")
            and not match.group("sp2")
            and _in_libpq_dsn(text, start, after)
        ):
            env_style = True  # `host=db dbname=app password=X`: libpq's values are bare words
        if (
            not env_style
            and not quoted
            and len(value) >= 5
            and name.lower() in ("password", "pwd")
            and _sep(match) == "="
            and _in_connection_string(text, start, after)
        ):
            # `Server=db;User ID=sa;Password=X;` (ADO.NET, ODBC, JDBC's SQL Server form):
            # the value runs to the `;`, a bare word as the .env line's is
            env_style = True
        if (
            not env_style
            and quoted
            and match.group("open") in ('"', "'")
            and _sep(match) == "="
            and not match.group("sp1")
            and not match.group("sp2")
            and match.group("close") is None
            and bare.upper() == bare
            and text[after + 1 : after + 2] in ("", "\n", "\r", " ", "\t", ";", "#", ")", "&", "|")
            and _leads_an_assignment(text, start)
        ):
            env_style = True  # `DB_PASSWORD="two words"`: a shell or .env line's own value
        if not env_style and not quoted and _sep(match) == ":":
            # A YAML line `  password: sunshine` (the name starts the line, the value ends it)
            # is a config value, as NAME=value is; a word there is the password itself.
            # (looked for 64 characters back at most: a long line is no YAML, and scanning
            # back to its start for every candidate made dense text quadratic)
            line_start = text.rfind("\n", max(0, start - 64), start) + 1
            env_style = (
                match.group("close") is None
                and (line_start > 0 or start <= 64)
                and not text[line_start:start].strip(" \t-")
                and text[after : after + 1] in ("", "\n", "\r")
                and value[:1] not in ("!", "&", "*")  # a YAML tag, anchor or alias
                and not _type_or_note(value)  # `password: Annotated[` (Python)
            )
        return env_style


# A command-line value, bare or quoted, never a $VARIABLE; bare, it ends at whitespace or
# ; & | < > ).
# (?=(...))\1 takes the longest run once and never backtracks into it (Python 3.10 has no
# possessive quantifiers), and a match consumes its run: "-p-p-p..." or "-pa-pa-pa..." after
# "mysql" would otherwise cost up to 512 steps per "-p".
_CLI_VALUE = (  # quoted, it is all up to the closing quote: mysql -p'Tr0ub4dor&3x'
    # (a shell's quote in single quotes, '"'"': inside `bash -c '…'`, the value quoted so on
    # both sides, `-p'"'"'X'"'"'`; or a quote in the value, `-p'pa'"'"'ss'`)
    r"(?:'\"'\"'(?P<cn>[^'\"\r\n]{1,512})'\"'\"'"
    r"|'(?P<cs>[^'\r\n]{0,512}(?:'\"'\"'[^'\r\n]{0,512}){1,8})'"
    r"|(?P<q>[\"'])(?P<cq>[^\"'\r\n]{4,512})(?P=q)"
    r"|(?=(?P<run>[^\-\s\"'`;&|<>()][^\s\"'`;&|<>()]{3,511}))(?P<v>(?P=run)))"
)
# A quoted value may hold spaces (`redis-cli -a "S3cret Pw99"`); else as _CLI_VALUE.
_QUOTED_OR_CLI_VALUE = (
    r"(?:(?P<sq>[\"'])(?P<sv>[^\"'\r\n]{4,512})(?P=sq)(?![\"'])|" + _CLI_VALUE + ")"
)
_SEGMENT_ENDS = ("\n", "|", ";", "&")
# An option whose value names a container, network or host, not the command run
_NAMING_OPTIONS = ("--name", "--network", "--net", "--hostname", "--link", "-n", "--container")


def _runs(client: re.Pattern[str], line: str) -> bool:
    """The client (``mongosh``, ``zip``) is a word of its own in the command ``line``, as
    the program run (after ``sudo -u x``, a prompt, ``docker exec C``, ``ssh host``, a
    path...), not part of another word (``backup.zip``, ``mongo-express``, an image's
    ``mongo:7``) nor the value of a naming option (``docker run --name mongo -p 27017:27017``)."""
    for match in client.finditer(line):
        at, end = match.start(), match.end()
        if at > 0 and line[at - 1] not in " \t/\"'`(=":
            continue
        if end < len(line) and line[end] not in " \t\"'`);":
            continue
        words = line[:at].split()
        if words and words[-1] in _NAMING_OPTIONS:
            continue
        return True
    return False


_COMMAND_WINDOW = 300  # how far back a flag's command may start


# `host=db.internal`, `dbname=app`: another key of a libpq connection string, a word on its
# own (`connect(host=h, password=pw)` is a Python call, not one)
_LIBPQ_KEYS = ("host", "hostaddr", "dbname", "user", "port", "sslmode", "connect_timeout",
               "application_name")  # fmt: skip
_LIBPQ_WORDS = tuple(f"{key}=" for key in _LIBPQ_KEYS)  # what the pre-check looks for
_LIBPQ_KEY = re.compile(rf"(?<![^\s'\"])(?:{'|'.join(_LIBPQ_KEYS)})=[^\s,()'\"]+(?=[\s'\"]|$)")


def _line_around(text: str, start: int, after: int) -> tuple[int, int]:
    """The line holding ``text[start:after]``, at most 256 characters either side of it
    (not from the text's start: a long line was quadratic)."""
    window = max(0, start - 256)
    left = max(window, text.rfind("\n", window, start) + 1)
    right = text.find("\n", after, after + 256)
    return left, right if right >= 0 else min(len(text), after + 256)


def _key_beside(key: re.Pattern[str], text: str, start: int, after: int) -> bool:
    """Another ``key=`` on the line of ``text[start:after]``, before it or after it."""
    left, right = _line_around(text, start, after)
    return bool(key.search(text, left, start) or key.search(text, after, right))


def _in_libpq_dsn(text: str, start: int, after: int) -> bool:
    """Another libpq key on the same line, within 256 characters of ``password=``."""
    left, right = _line_around(text, start, after)
    near = text[left:right].lower()
    if not any(key in near for key in _LIBPQ_WORDS):  # most candidates: no regex at all
        return False
    return _key_beside(_LIBPQ_KEY, text, start, after)


# The keys beside a password in a `;`-separated connection string (ADO.NET, ODBC, OLE DB)
_CONNECTION_KEY = re.compile(
    r"(?:^|[;\s\"'])(?:server|data source|host|database|initial catalog|user id|uid|username|"
    r"user|driver|provider|dsn|port|encrypt|trustservercertificate|sslmode)[ \t]*=[^;\r\n]*;?",
    re.IGNORECASE,
)


def _in_connection_string(text: str, start: int, after: int) -> bool:
    """``Password=`` among other keys of a ``;``-separated connection string on its line:
    a `;` right before the name or right after the value, and another key within 256
    characters."""
    before = text[max(0, start - 4) : start].rstrip(" \t")[-1:]
    if before != ";" and text[after : after + 1] != ";":
        return False
    return _key_beside(_CONNECTION_KEY, text, start, after)


_TEST_ID = re.compile(r"(?:Test|test_?|gdb\.)\w|[\w.\-]*[/:.][\w./:\-]*(?:[\s:]|$)")


def _a_test_result(text: str, start: int, match: re.Match[str], group: str) -> bool:
    """``PASS:`` as go test, automake's ``make check`` and DejaGnu print it: a test passed.
    The line starts with it (or Go's ``--- ``), and a test's id follows: ``TestX``,
    ``test_x``, a path or dotted name, or an id with its time ``(0.00s)``."""
    line_start = text.rfind("\n", max(0, start - 80), start) + 1
    lead = text[line_start:start].strip(" \t")
    if lead not in ("", "---") or (line_start == 0 and start > 80):
        return False
    value_start, value_end = match.span(group)
    after = text[value_end : value_end + 2]
    return bool(_TEST_ID.match(text, value_start)) or after == " ("


_CALL_VALUE = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\(")
_SCHEMA_LIBRARIES = frozenset(("z", "yup", "Joi", "v", "t", "s", "Type", "schema", "fields"))
_TYPE_NAME = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+")  # Uint8Array, SecretString


def _code_value(text: str, match: re.Match[str], start: int, value: str, after: int) -> bool:
    """A call (``z.string().min(8)``, ``get_password_hash(p)``, ``nanoid(32)``) as the value
    of an object's key or a keyword argument, or a type (``secretKey: Uint8Array;``): code.
    A .env line's ``API_KEY=abc(def)`` stays a value."""
    env_line = _sep(match) == "=" and text[start : match.end("tail")].isupper()
    call = _CALL_VALUE.match(value)
    if call and not env_line:
        # a function's name (`getpass(`, `nanoid(32)`, `get_password_hash(p.x)`), or a
        # method chain or an argument that is code (`z.string().min(8)`, `str(uuid.uuid4())`):
        # not `password: john.doe(1987)`, which the reviews named as a password
        callee, rest = call.group()[:-1], value[call.end() :]
        plain_call = "." not in callee and callee[:1].islower()
        code_args = rest.startswith(")") or ")." in rest or "." in rest or "(" in rest
        if plain_call or code_args or callee.split(".")[0] in _SCHEMA_LIBRARIES:
            return True
    return (
        _sep(match) == ":"
        and bool(_TYPE_NAME.fullmatch(value))
        and text[after : after + 1] in (";", ",", ")")
    )


def _sep(match: re.Match[str]) -> str:
    """The separator, full-width ``＝``/``：`` (typed with a CJK input method) as ASCII."""
    sep = match.group("sep")
    return _FULL_WIDTH_SEPARATORS.get(sep, sep)


_FULL_WIDTH_SEPARATORS = {"＝": "=", "：": ":"}


_CONTRACTION = re.compile(r"[A-Za-z]+'[A-Za-z]{1,2}")
# `config.password`, `hashed_pw`, `make_password`: a top-level script's variable or
# attribute, not an INI value (two parts: `correct_horse_battery_staple` is a password)
_CODE_VALUE = re.compile(r"[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*|[a-z][a-z0-9]*_[a-z0-9]+")
#: How far a quoted value is read on past the other quote or an escape: a password is
#: shorter, and each candidate reading far made dense quotes slow (`pw="a'` repeated).
_QUOTED_MAX = 160
# `Passwort`, `DB_PASSWORT`, `contraseña`: the name judged as the English one it means
_FOREIGN_NAME = re.compile("|".join(FOREIGN_PASSWORD_NAMES), re.IGNORECASE)


def _in_english(name: str) -> str:
    """``DB_PASSWORT`` -> ``DB_PASSWORD``, ``senha`` -> ``password``: the strength of a name
    and its env style are then read as for English ones."""
    return _FOREIGN_NAME.sub(lambda m: "PASSWORD" if m.group().isupper() else "password", name)


def _closing_quote(
    text: str, opener: str, at: int, value_start: int, *, python: bool = False
) -> int | None:
    """Where a value quoted by ``opener`` really ends, reading from ``at`` (the other quote
    or a backslash): escapes count inside double quotes only, as in a shell and JSON, and
    in both after a Python prefix (``python``: ``r'…\\'…'``). None when it is not closed on
    its line within _QUOTED_MAX characters, or opened by an escaped quote."""
    if opener not in ('"', "'"):
        return None
    escapes = python or opener == '"'
    limit = min(len(text), value_start + _QUOTED_MAX)
    while at < limit:
        char = text[at]
        if char == opener:
            return at
        if char in "\r\n":
            return None
        at += 2 if char == "\\" and escapes else 1
    return None


#: The letters of Python's string prefixes (`r"…"`, `b'…'`, `rb"…"`), as the pattern's
#: lowercase match holds them
_STRING_PREFIXES = "rbu"
#: The word right before a name in prose (`sort key:`, `Next token:`), a whole word
_WORD_BEFORE = re.compile(r"(?<![\w.\-])([A-Za-z]{2,24})[ \t]{1,4}\Z")


#: The pairs of words in prose that name a key or a token of no secret: a sort order's key,
#: a page cursor (only these: "next key:" in a rotation log is the next secret, review
#: 2026-12-07)
_PROSE_KINDS = frozenset({("sort", "key"), ("partition", "key"), ("next", "token"),
                          ("page", "token"), ("continuation", "token")})  # fmt: skip


def _another_kind_in_prose(text: str, match: re.Match[str], start: int, name: str) -> bool:
    """A bare ``key`` or ``token`` whose word before it in prose names another kind, as
    ``sortKey`` or ``nextPageToken`` would: ``sort key: 2024-01-01#7f3c9a2b``, ``next
    token: CiAK…`` (see ``_PROSE_KINDS``; ``api key: X`` is judged as before)."""
    if _sep(match) != ":" or match.group("close") is not None or not name.isalpha():
        return False
    before = _WORD_BEFORE.search(text, max(0, start - 32), start)
    return before is not None and (before.group(1).lower(), name.lower()) in _PROSE_KINDS


#: psql's interpolation of a variable, quoted as a literal (`:'pw'`) or an identifier (`:"pw"`)
_PSQL_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
#: The role statement the PASSWORD option belongs to, on the same line before it
_ROLE_STATEMENT = re.compile(r"(?i)\b(?:create|alter)[ \t]+(?:user|role)\b")


def _psql_variable(text: str, match: re.Match[str], start: int, name: str, value: str) -> bool:
    """``CREATE ROLE app WITH LOGIN PASSWORD :'app_password'`` (a psql script): the value is
    the psql variable ``app_password``'s, interpolated, not a password. Only this shape: a
    space before the colon and none after, the variable's name in quotes, a role statement
    before it on its line (a password in quotes, ``PASSWORD 'R4nd0m!s3cr3t'``, is one)."""
    if (
        name.lower() != "password"
        or _sep(match) != ":"
        or not match.group("sp1")
        or match.group("sp2")
        or match.group("close") is not None
        or match.group("open") not in ("'", '"')
        or not _PSQL_VARIABLE.fullmatch(value)
        or text[match.end("qv") : match.end("qv") + 1] != match.group("open")
    ):
        return False
    line_start = text.rfind("\n", max(0, start - 256), start) + 1
    return _ROLE_STATEMENT.search(text, line_start, start) is not None


#: A single quote inside single quotes, as shells write it: close, `"'"`, open again
_SHELL_QUOTE = "'\"'\"'"


def _nested_quoted(text: str, name: str, start: int) -> Span | None:
    """The value from ``start`` to the next ``'"'"'``, quoted so inside a single-quoted
    command (``bash -c '… PASSWORD='"'"'X'"'"' …'``), on its line, if it is a secret: as
    the inner shell reads it, a quoted value; a shell variable's (an upper-case name) even
    when it is a word."""
    end = text.find(_SHELL_QUOTE, start, start + _QUOTED_MAX)
    if end <= start or any(c in "'\r\n" for c in text[start:end]):
        return None
    bare = name.lstrip("-")
    if is_secret_assignment(name, text[start:end], quoted=True, env_style=bare.upper() == bare):
        return start, end
    return None


def _single_quoted_end(text: str, at: int, value_start: int) -> int:
    """Where a single-quoted value closed at ``at`` really ends when a shell's ``'\\''`` or
    YAML's ``''`` goes on from there; ``at`` itself when neither does, or when the value is
    not closed on its line within _QUOTED_MAX characters."""
    limit = min(len(text), value_start + _QUOTED_MAX)
    end = at
    while True:
        if text.startswith("'\\''", end):
            step = 4
        elif text.startswith(_SHELL_QUOTE, end):
            step = 5
        elif text.startswith("''", end) and not text.startswith("'''", end):
            step = 2
        else:
            return end
        closing = text.find("'", end + step, limit)
        if closing < 0 or "\n" in text[end + step : closing] or "\r" in text[end:closing]:
            return at
        end = closing


# What may stand before NAME="value" on a shell or .env line: `cat -n`'s or `grep -n`'s
# numbers, then words that set a variable (Dockerfile `ENV`, `env`, `sudo`, `readonly`,
# `declare -x`), flags, a prompt or a YAML dash; or a command ending in `-e`/`--env`
# (`docker run --rm -e`). Tokens, not one regex: its nested choices backtracked without end.
_LINE_NUMBER = re.compile(r"[ \t]*(?:[0-9]+[ \t:]+|[\w./-]{1,100}:[0-9]+:)?")
_SETTERS = frozenset(
    ("export", "env", "sudo", "ENV", "ARG", "readonly", "declare", "local", "typeset",
     "setenv", "set", "$", "#", ">", "-")
)  # fmt: skip


#: Where a new shell command starts on a line: after `&&`, `||`, `;`, `|`, `&`, `(`, `$(`,
#: a backquote, `{`, `then`, `do` or `else`, or after a label (`Now run: NAME="…" cmd`).
_COMMAND_BREAK = re.compile(r"&&|\|\||[;|&(`{]|\$\(|\b(?:then|do|else)\b|\S:(?=[ \t])")


def _leads_an_assignment(text: str, start: int) -> bool:
    """The name sets a variable: only what is said above stands before it on its line, or
    in its command on that line (`cd app && DB_PASSWORD="…" ./migrate` leaked its
    passphrase; looked for 160 characters back at most)."""
    line_start = _line_start(text, start, 160)
    if line_start is None or (start > line_start and text[start - 1] not in " \t:;|&(`{"):
        return False
    lead_text = text[_LINE_NUMBER.match(text, line_start, start).end() : start]
    command_start = 0
    for found in _COMMAND_BREAK.finditer(lead_text):
        command_start = found.end()
    lead = lead_text[command_start:].split()
    if lead and lead[-1] in ("-e", "--env"):
        return len(lead) <= 8
    return all(token in _SETTERS or token.startswith("-") for token in lead)


_INI_SECTION = re.compile(r"\[[A-Za-z0-9_ .:\-]{1,64}\][ \t]*\r?(?=\n|$)")
#: What may stand before a section's header and its keys alike: indentation (an INI file in
#: a k8s ConfigMap's `|` block), or a diff's or a quote's marker
_SECTION_LEAD = re.compile(r"(?:[+\-]|>[ \t]?)?[ \t]{0,16}")


def _in_ini_section(text: str, start: int) -> bool:
    """The line at ``start`` sits under an INI section header (``[client]``, ``[pypi]``)
    indented as it is (or with the same diff or quote marker), with only ``key = value``
    lines between (looked for 1 KB back at most)."""
    line_start = _line_start(text, start, 64)
    if line_start is None:
        return False
    if start == line_start and text.startswith("-", start) and not text.startswith("--", start):
        start += 1  # `-password = x`, a diff's removed line: the name took the marker
    lead = text[line_start:start]
    if not _SECTION_LEAD.fullmatch(lead):  # more before the name
        return False
    # the last line before it that opens with its lead and "[" (one search, not a regex over
    # the 1 KB for every candidate): a header, or no section holds the line
    low = max(0, line_start - 1024)
    opening = -1
    # (indented keys may sit under a header in the first column too)
    for indent in {lead, ""} if not lead.strip() else (lead,):
        found = text.rfind("\n" + indent + "[", low, line_start)
        if found >= 0:
            found += 1 + len(indent)
        elif low == 0 and text.startswith(indent + "["):
            found = len(indent)
        opening = max(opening, found)
    header = _INI_SECTION.match(text, opening, line_start) if opening >= 0 else None
    if header is None:
        return False
    between = text[header.end() : line_start].splitlines()
    return all(
        not line.strip() or "=" in line or line.lstrip(" \t+->")[:1] in "#;" for line in between
    )


#: What may end a config line after its value: blanks, then a `# comment` or `; comment`
#: (read no further than its start: many candidates on one long line stay linear)
_CONFIG_LINE_END = re.compile(r"[ \t]{0,64}(?:\r?\n|\Z)|[ \t]{1,64}[#;]")
#: What stands before a line's key: a diff's or a quote's marker, indentation, and the
#: number `cat -n` or `grep -n` puts there (grep's context lines: `3-`, `my.cnf-3-`; with
#: files and no numbers: `my.cnf:`)
_INI_NUMBER = (
    r"(?:[+\-](?![+\-])|>[ \t]?)?[ \t]{0,16}"
    r"(?:[0-9]{1,6}(?:\t|[ \t]*[:|][ \t]*|-)|[\w./\-]{1,100}(?::[0-9]{1,6}:|-[0-9]{1,6}-|:))?"
)
_INI_LINE_NUMBER = re.compile(_INI_NUMBER)
#: An INI line: `key = value` (any value INI allows: words, commas, quotes, `[%p]`; code is
#: told apart by `_CODE_LINE` first), a comment line, a `[section]` header
_INI_LINE = re.compile(
    _INI_NUMBER + r"(?:[A-Za-z_][\w.\-]{0,63}[ \t]{0,8}=(?:[ \t]{0,8}[^\s(\[{][^\r\n]{0,256})?"
    r"|[#;][^\r\n]{0,256}|\[[A-Za-z0-9_ .:\-]{1,64}\])[ \t]{0,64}\r?"
)
#: A line of code, not of a config file: a keyword starting it (`def`, `return`, `if`,
#: `let`, `end`…), a call, a brace, a `;` ending it, an arrow, a docstring, a decorator, a
#: list or tuple assigned (`x = [1, 2]`)
_CODE_LINE = re.compile(
    r"[ \t]*(?:(?:def|class|return|if|elif|else|for|while|with|try|except|finally|import|from"
    r"|raise|yield|async|await|assert|lambda|pass|break|continue|end|begin|do|done|fi|then|esac"
    r"|let|const|var|fn|func|function|local|my|our|public|private|protected|static|package|use"
    r"|module|require|print|puts|switch|case|unless|until|val|struct|impl|enum|interface"
    r"|export|typedef|namespace|catch|throw|defer|go)(?=[ \t(:]|\r?$)(?![ \t]*=)"
    r"|@\w|\"\"\"|\'\'\'|\$\w|(?:self|this|cls)\.\w)"
    r"|[^\r\n]*?(?:[\w\])]\(|[{}]|=>|;[ \t]*\r?$|=[ \t]*[\[(]|\w[ \t]*[+\-*/%|&^]="
    r"|[\[(][ \t]*\r?$)"
)
#: Where a line's trailing comment starts (` # see mysqld(8)`, ` ; set by puppet(1)`): what
#: a comment says is never code
_TRAILING_COMMENT = re.compile(r"[ \t][#;]")
#: A value that names a variable, not a password: `hashedPassword`, `pw_from_env_var`,
#: `DEFAULT_PW`, `form.password` (judged so only next to a line of code's quoted strings)
_VARIABLE_VALUE = re.compile(
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+_?"
    r"|_?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+_?|[a-z]+(?:[A-Z][a-z]+)+"
)


#: The words of a variable's name that holds a password (`hashedPassword`, `pw_from_env`,
#: `new_password`), which a passphrase's words (`correct_horse_battery_staple`) are not
_VARIABLE_WORDS = frozenset((
    "hashed", "hash", "password", "passwd", "pw", "pwd", "pass", "passphrase", "secret",
    "env", "var", "from", "form", "input", "new", "old", "default", "user", "db", "config",
    "get", "value", "val", "str", "string", "encoded", "encrypted", "plain", "raw", "tmp",
    "temp", "args", "kwargs", "self", "request", "params", "data", "cfg", "settings", "opts",
    "options", "salt", "salted", "current", "stored", "expected", "actual", "given", "admin",
    "root", "my", "the", "auth", "token", "key", "creds", "cred", "credentials", "arg", "field",
))  # fmt: skip
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _names_a_variable(value: str, before: str, after: str) -> bool:
    """``value`` is a variable's name (`_VARIABLE_VALUE`) that says so: dotted, a word of
    one that holds a password (``hashedPassword``, ``pw_from_env``), or a name the lines
    around define or use; not any snake_case or camelCase words, which a passphrase
    (``correct_horse_battery_staple``, ``letMeIn``) is as well (review 143 M2)."""
    if _VARIABLE_VALUE.fullmatch(value) is None:
        return False
    if "." in value or any(w.lower() in _VARIABLE_WORDS for w in _NAME_WORDS.findall(value)):
        return True
    return re.search(rf"\b{re.escape(value)}\b", before + "\n" + after) is not None


def _code_line(line: str, pos: int = 0, endpos: int | None = None) -> bool:
    """``line[pos:endpos]`` is a line of code (``_CODE_LINE``, or ``x if y else z``), its
    trailing comment left out."""
    end = len(line) if endpos is None else endpos
    comment = _TRAILING_COMMENT.search(line, pos, end)
    if comment is not None:
        end = comment.start()
    if _CODE_LINE.match(line, pos, end):
        return True
    body = line[pos:end]
    return " if " in body and " else " in body


#: Where a block of INI lines shown in a message ends without a blank line: a Markdown
#: fence, `head`'s `==> file <==`, a shell prompt and its command, an HTML `<pre>`, and
#: prose (a line that is neither INI nor code); a fence opening INI (```` ```ini ````)
#: counts as an INI line
#: A JSON key and the quote opening its string value, `  "content": "`
_JSON_STRING_OPENING = re.compile(r"[ \t]{0,64}\"[\w.\-]{1,64}\"[ \t]{0,8}:[ \t]{0,8}\"")
_INI_FENCE = re.compile(r"[ \t]{0,16}(?:```|~~~)[ \t]*(?:ini|cfg|conf|cnf|dosini|properties)\b")
_INI_EDGE = re.compile(
    r"[ \t]{0,16}(?:```|~~~|==> [^\r\n]{1,256} <==|</?(?:pre|code)>"
    r"|[$%][ \t]|[\w.\-]{1,64}@[\w.\-]{1,64}(?::[^\s$#]{0,256})?[$#%][ \t])"
)


#: `data.aws_ssm_parameter.db.value`, `each.value`: a reference (Terraform's, whose blocks
#: hold `count = 1` lines as INI does), never taken as a value without a `[section]` header
_DOTTED = re.compile(r"[A-Za-z_][\w\-]*(?:\.[A-Za-z_][\w\-]*)+")
#: A constant's or a class's name: `DB_PASSWORD`, `SET_ME`, `PGPASSWORD`, `SecretField`,
#: `NotSet` (no digits: `S3CR3T_PW` or `Sunflower42` are passwords; nor `SunFlower`, whose
#: last word names no kind of class)
_IDENTIFIER_VALUE = re.compile(
    r"[A-Z]{2,}(?:_[A-Z]+)*|_?(?:[A-Z][a-z]+)+(?:Field|Input|Type|Set|Form|Model|Class|Error"
    r"|Hasher|Manager|Provider|Store|Str|String|Value|Widget|Column|Secret|Password|Config)"
)
#: What a config's password line names instead of a password (where it is kept, how it is
#: asked for), or what code assigns to `password` (a module, a function, a variable)
_NOT_A_PASSWORD_WORDS = ANOTHER_THING | frozenset((
    "vault", "keychain", "keyring", "keystore", "inherit", "inherited", "encrypted",
    "plain", "plaintext", "sslmode", "none", "null", "nil", "true", "false", "yes", "no",
    "on", "off", "default", "auto", "ask", "stdin", "environ", "environment", "unset", "empty",
    "random", "generate", "generated", "getpass", "hashpw", "hashed", "credentials",
    "credential", "creds", "secret", "secrets", "password", "passwd", "kwargs", "args",
    "settings", "config", "conf", "request", "form", "data", "self", "cls", "params",
))  # fmt: skip


def _not_an_ini_value(value: str) -> bool:
    """What an INI line with no ``[section]`` above it does not hold as its password: a
    reference (``data.aws_ssm_parameter.db.value``), a template's placeholder, a constant's
    or class's name, a word for where the password is kept or how it is asked for, or a
    name code assigns (``getpass``, ``hashed``). Code and templates have such lines too."""
    return bool(
        _DOTTED.fullmatch(value)
        or is_wrapped_placeholder(value)
        or _IDENTIFIER_VALUE.fullmatch(value)
        or value.lower() in _NOT_A_PASSWORD_WORDS
    )


_INI_NEIGHBOURS = 3  # lines looked at each way
_INI_WINDOW = 1024  # characters looked at each way (an INI line is shorter)


def _ends_config_line(text: str, after: int) -> bool:
    """The value at ``after`` ends its line, but for trailing blanks or a comment."""
    return after >= len(text) or text[after] in "\r\n" or bool(_CONFIG_LINE_END.match(text, after))


def _in_ini_block(text: str, start: int, value: str = "") -> bool:
    """The line at ``start`` (indentation, then the name) sits among other INI lines, as in
    an INI file shown from its middle (``sed -n 3,6p my.cnf``, ``cat -n``, ``grep -n -C2``,
    a diff, a quote, a Markdown block): up to three lines each way, to a blank line or an
    edge of the block (a fence, a prompt, a header, prose), are ``key = value`` lines,
    comments or headers, one at least an assignment. A line of code among them (a call, a
    ``return``, a brace) says it is code; Terraform's references are left out before this
    is asked (``_DOTTED``). A value that names a variable (``hashedPassword``, ``x = x``)
    next to quoted strings (``user = "alice"``) is code's too; a comment says nothing."""
    line_start = _line_start(text, start, 128)
    if line_start is None or not _INI_LINE_NUMBER.fullmatch(text, line_start, start):
        return False
    line_end = text.find("\n", start, start + 1024)
    if line_end < 0 and len(text) - start > 1024:
        return False
    own_end = line_end if line_end >= 0 else len(text)
    if _code_line(text, start, own_end):
        return False
    equals = text.find("=", start, own_end)
    name = text[start:equals].strip() if equals >= 0 else ""
    if value and (value == name or name.endswith("." + value)):
        return False  # `password = password`, `self.password = password`: code
    low = max(0, line_start - _INI_WINDOW)
    identifier = bool(value) and _names_a_variable(
        value, text[low:line_start], text[own_end : own_end + _INI_WINDOW]
    )
    before = text[low : max(low, line_start - 1)].rsplit("\n", _INI_NEIGHBOURS)[::-1]
    high = min(len(text), line_end + 1 + _INI_WINDOW)
    after = text[line_end + 1 : high].split("\n", _INI_NEIGHBOURS) if line_end >= 0 else []
    # (a line cut by the window is too long for INI)
    cut_before, cut_after = len(before) if low > 0 else 0, len(after) if high < len(text) else 0
    assignments = 0
    for lines, cut in ((before if line_start else [], cut_before), (after, cut_after)):
        for number, line in enumerate(lines[:_INI_NEIGHBOURS], 1):
            if not line.strip():
                break
            if number == cut:
                return False
            if _INI_EDGE.match(line):
                assignments += bool(_INI_FENCE.match(line))
                break  # the block's edge
            prefix = _INI_LINE_NUMBER.match(line).end()
            if line[prefix : prefix + 1] in ("#", ";"):
                continue  # (a comment may say anything)
            if _code_line(line, prefix):
                return False
            if not _INI_LINE.fullmatch(line):
                # a JSON string shown decoded (`"content": "host = db` and the string's
                # next lines): its first line is the block's edge, and an INI line itself
                opening = _JSON_STRING_OPENING.match(line) if lines is before else None
                if opening is not None and _INI_LINE.fullmatch(line, opening.end()):
                    assignments += "=" in line[opening.end() :]
                break  # the block's edge: prose
            if identifier and ("'" in line or '"' in line):
                return False  # `user = "alice"` by `password = hashedPassword`: code
            assignments += "=" in line
    return assignments > 0


def _in_an_arn(text: str, start: int) -> bool:
    """The name at ``start`` is a field of an AWS ARN: its ``:``-joined word starts with
    ``arn:`` (looked for 160 characters back at most)."""
    low = max(0, start - 160)
    arn = text.rfind("arn:", low, start)
    if arn < 0:  # (most candidates: one search, not one per separator)
        return False
    word_start = max(text.rfind(c, arn, start) for c in " \t\r\n\"'`=(,[{") + 1
    return word_start <= arn


def _quoted_whole(text: str, match: re.Match[str], start: int) -> bool:
    """``"NAME=value"`` quoted whole, as a docker-compose list item, ``-e`` argument or
    JSON array element: a quote before the upper-case name, which sets a variable there
    (or before ``--password=``, an argument in a list: ``args: ["--password=a b c"]``)."""
    name = text[start : match.end("tail")]
    if (
        start == 0
        or text[start - 1] not in "\"'"
        or _sep(match) != "="
        or match.group("sp1")
        or match.group("sp2")
        or match.group("close") is not None
        or match.group("type") is not None
        or not (name.upper() == name or name.startswith("--"))
    ):
        return False
    before = text[max(0, start - 3) : start - 1].rstrip(" \t")
    return before.endswith(("[", ",")) or _leads_an_assignment(text, start - 1)


def _anchored_values(text: str) -> Iterator[Span]:
    """The values YAML anchors name on lines whose key is a secret's (`password: &pw X`),
    judged as a config line's."""
    for found in _YAML_ANCHORED.finditer(text):
        group = "qv" if found.group("q") else "v"
        name = _in_english(found.group("name"))
        if is_secret_assignment(name, found.group(group), quoted=group == "qv", env_style=True):
            yield found.span(group)


def _next_line_values(text: str) -> Iterator[Span]:
    """YAML's value on the line after its secret's key (``password:`` or ``password: |``,
    then the value indented below): one line only (a longer block is a key or a
    certificate, which their own detectors know), and no code (``process.env.X,``)."""
    for found in _NEXT_LINE_VALUE.finditer(text):
        colon = found.start()
        line_start = _line_start(text, colon, 100)
        key = None if line_start is None else _NEXT_LINE_NAME.fullmatch(text, line_start, colon)
        if key is None or len(key["indent"]) >= len(found["inner"]):
            continue
        after = found.end("end")
        following = text[after + 1 : after + 1 + len(found["inner"]) + 1].lstrip("\r")
        if following.startswith(found["inner"]) and following[len(found["inner"]) :].strip():
            continue  # the next line goes on at the value's depth: a longer block
        group = "qv" if found["q"] else "v"
        value = found[group]
        if group == "v" and _NEXT_LINE_NOT_A_VALUE.match(value):
            continue  # `name:` (a mapping), `f(x),`, `process.env.DB_PASSWORD`: no value
        name = _in_english(key["name"])
        if is_secret_assignment(name, value, quoted=group == "qv", env_style=True):
            yield found.span(group)


def _composer_tokens(text: str) -> Iterator[Span]:
    """The tokens of Composer's auth.json, one per host under the service's key."""
    for found in _COMPOSER_AUTH.finditer(text):
        for pair in _COMPOSER_HOST_TOKEN.finditer(text, *found.span("hosts")):
            if is_secret_assignment("token", pair["v"], quoted=True, env_style=False):
                yield pair.span("v")


def _listed_values(text: str) -> Iterator[Span]:
    """The strings of a list under a secret's name, each judged as that name's value; a
    plural name is read as its singular (`passwords`, `api_keys`), as a list names its items."""
    for found in _LISTED_VALUES.finditer(text):
        name = _in_english(found["name"])
        if name_strength(name) is None and name[-1:] == "s" and name[-2:-1] not in ("s", "S"):
            name = name[:-1]
        # a password's or a qualified key's name only: `keys`, `tokens` and `cookies` list
        # ids, UUIDs and cookie names as often as secrets (`"keys": ["order_id_9x8"]`)
        if name_strength(name) not in ("password", "strong") or _cookie_names(name):
            continue
        for item in _LISTED_ITEM.finditer(text, *found.span("items")):
            group = next(g for g in ("v", "ev", "sv") if item[g] is not None)
            value = item[group]
            if "\\" not in value and is_secret_assignment(
                name, value, quoted=True, env_style=False
            ):
                yield item.span(group)


def _cookie_names(name: str) -> bool:
    """A list of cookies (``secure_cookies``, ``cookie_keys``) names them as often as it
    holds their values (``"__Host-session"``); a cookie's secrets or passwords are secrets."""
    lower = name.lower()
    return "cookie" in lower and not any(word in lower for word in ("secret", "pass", "pwd"))


def _starts_line(text: str, start: int) -> bool:
    """The name begins its line (after indentation, ``export`` or a YAML list dash); looked
    for 64 characters back at most, so dense text stays linear."""
    line_start = _line_start(text, start, 64)
    if line_start is None:
        return False
    return text[line_start:start].strip(" \t-").removeprefix("export").strip() == ""


def _line_start(text: str, at: int, back: int) -> int | None:
    """Where the line holding ``at`` starts, when that is at most ``back`` characters before
    it (None: further, as a long line is no shell or config line; the bound keeps dense text
    linear)."""
    line_start = text.rfind("\n", max(0, at - back), at) + 1
    return None if line_start == 0 and at > back else line_start


_CLOSERS = {")": "(", "]": "[", "}": "{"}


#: What stops an unquoted value that a .env or YAML password may hold; `&` is the query
#: parameter rule's (`_AMPERSAND_TAIL`), quotes and spaces always end a value.
_PUNCTUATION_STOPS = frozenset(")]}=;,")
#: Generic types a value's name may open (`Optional[str]`, `Record<string, string>`,
#: `Annotated[`), compared in lower case: a type whatever it holds
_GENERIC_TYPES = frozenset(
    re.split(
        r"\s+",
        "optional list dict set frozenset tuple union annotated literal sequence mapping"
        " mutablemapping mutablesequence iterable iterator callable type classvar final"
        " required notrequired readonly awaitable coroutine generator asyncgenerator"
        " asynciterator asynciterable defaultdict ordereddict counter deque typeddict array"
        " map record promise partial readonlyarray pick omit vec option result box hashmap"
        " btreemap hashset ndarray tensor series",
    )
)
#: What a type may name inside its brackets: the usual builtins and modules, in lower case
_TYPE_WORDS = frozenset(
    re.split(
        r"\s+",
        "str int float bool bytes complex object none any string number boolean bigint"
        " unknown null undefined void never symbol typing t np numpy npt torch jnp"
        " int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 u8 u16"
        " u32 u64 u128 i8 i16 i32 i64 i128 f32 f64 usize isize char",
    )
)
# a name and its brackets: `Optional[str]`, `typing.Optional[_X]`, `string[]`, `Dict[str, int]`
_TYPE_SHAPE = re.compile(
    r"(?P<outer>[A-Za-z_][A-Za-z_.]*)[\[<](?P<inner>[A-Za-z_][\w.\[\]<>, |]*)?[\]>]"
)
# a generic type opening a line (`Annotated[`, `typing.Dict[`), its items on the next lines
_TYPE_OPENING = re.compile(r"(?:[a-z_]+\.)*(?P<outer>[A-Za-z]+)\[")
# `(required)`, `[REQUIRED]`: a note where the value would be
_NOTE = re.compile(r"[(\[][A-Za-z ,/_\-]*[)\]]")
_TYPE_ITEM_SEPARATORS = re.compile(r"[\s,|.\[\]<>]+")


def _type_or_note(value: str) -> bool:
    """Whether a config value is a type or a note, not a password: a type's name
    (`SecretStr`, see `is_type_name`), a known generic (`Optional[str]`,
    `typing.Optional[_ALLOWED_PKCS12_TYPES]`, `Annotated[`), empty brackets (`string[]`),
    another name holding only types (`Queue[bytes]`, `Generic[T]`, `Model[SecretStr]`), or a
    note (`(required)`). A name with a word or a digit inside
    its brackets is a password (`Pass[w0rd]`, `Summer[x2024]`, `Monkey<baseball4>`,
    `Secret[2024]`), and so is a word opening brackets (`Qwerty[`)."""
    if _NOTE.fullmatch(value) or is_type_name(value):  # `password: SecretStr` (pydantic)
        return True
    opening = _TYPE_OPENING.fullmatch(value)
    if opening is not None:
        return opening["outer"].lower() in _GENERIC_TYPES
    shape = _TYPE_SHAPE.fullmatch(value)
    if shape is None:
        return False
    if shape["inner"] is None or shape["outer"].rsplit(".", 1)[-1].lower() in _GENERIC_TYPES:
        return True
    items = [item for item in _TYPE_ITEM_SEPARATORS.split(shape["inner"]) if item]
    return all(item in _TYPE_WORDS or _type_name(item) for item in items)


def _type_name(item: str) -> bool:
    """A class's or a constant's name: `SecretStr`, `T`, `_ALLOWED_PKCS12_TYPES`."""
    return item.lstrip("_")[:1].isupper() and (item.isalpha() or item.upper() == item)


# Code in an object literal or a call's keywords, not a config line's word: a whole call
# chain on a lower-case dotted name or an index of a lower-case name, and nothing after it
# (`Hello.World(1)`, `a.b(c)Q9z!`, `Mypass[1]!`, `s3cr3t[1]` are passwords); see `_code`
_CALL = r"\((?:[^()\n]|\([^()\n]*\)){0,200}\)"
_MEMBER = r"\.[a-z_$][\w$]{0,63}"
_CODE_CALLS = re.compile(
    rf"[a-z_$][A-Za-z_$]{{0,63}}(?:{_MEMBER})*(?P<m>{_MEMBER}){_CALL}(?P<more>(?:{_MEMBER}{_CALL})*)"
)
_CODE_INDEX = re.compile(rf"[a-z_$][A-Za-z_$]{{0,63}}(?:{_MEMBER})*(?P<i>(?:\[[0-9]{{1,4}}\])+)")
#: a method's name as code writes it: camelCase or snake_case (`readStringNT`, `get_secret`)
_CODE_NAME = re.compile(r"\.[a-z$][a-z0-9$]*(?:[A-Z_][\w$]*)")


def _code(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]``, a config line's word, is code in an object literal or a
    call's keywords: a call chain (`z.string().min(8)`, `hashlib.sha256(data).hexdigest()`,
    `reader.readStringNT()`) or indexes (`certs[0][2]`), each only when code is all it can
    be: two calls, a method named as code names them, or the next key after it. Alone,
    `prod.secret(42)`, `admin[63]` or `love[0][7]` end a line as a password may, and so
    does `summer[2024]` before a config line's next field (`, user: root`)."""
    next_key = _next_key(text, start, end)
    calls = _CODE_CALLS.fullmatch(text, start, end)
    if calls is not None:
        return bool(calls["more"]) or bool(_CODE_NAME.fullmatch(calls["m"])) or next_key
    return next_key and _CODE_INDEX.fullmatch(text, start, end) is not None


#: Code in the rest of a line: an index or a call (`creds[1]`, `get(`)
_CODE_IN_REST = re.compile(r"[\w$\])]\[[0-9]{1,4}\]|[A-Za-z_$][\w$.]*\(")


def _next_key(text: str, start: int, end: int) -> bool:
    """Whether a `,` or `;` after the value is code's: a `{` or `(` the line opened
    before the value is still open (`{password: match[1], user}`), or the rest of the line
    is code's too: it ends with a `,` or a bracket (an object literal or a call's keywords
    over many lines) or holds an index or a call (`password=creds[0], user=creds[1]`).
    Not a config line's next field: `password: summer[2024], user: root`."""
    if text[end : end + 1] not in (",", ";"):
        return False
    line_end = text.find("\n", end, end + 512)
    rest = text[end + 1 : line_end if line_end >= 0 else end + 512].rstrip()
    if not rest or rest[-1] in ",;([{)" or _CODE_IN_REST.search(rest):
        return True
    line_start = _line_start(text, start, 512)  # (a longer line: its last 512 characters)
    before = text[start - 512 if line_start is None else line_start : start]
    return before.count("{") + before.count("(") > before.count("}") + before.count(")")


# `,NAME=` or `;NAME=`: the next assignment of a line (`API_KEY=x,SECRET_KEY=y`)
_NEXT_ASSIGNMENT = re.compile(r"[,;][ \t]*[A-Za-z_][\w.\-]{0,63}[ \t]*=")
# `;export OTHER=1`, `;echo ok`: a shell's next command, a word of letters
_NEXT_COMMAND = re.compile(r";[ \t]*[A-Za-z]+(?=\s|$)")


def _word_end(text: str, at: int) -> int:
    """Where the word starting at ``at`` ends: at whitespace, a quote, ``&``/``|`` (query
    parameters, shell operators), the next ``,NAME=``, or after 512 characters; less a
    trailing ``;`` or ``,`` or a closing bracket the word did not open."""
    end, limit = at, min(len(text), at + 512)
    while end < limit:
        char = text[end]
        if char.isspace() or char in "\"'`&|<>":
            break
        if char in ",;" and (_NEXT_ASSIGNMENT.match(text, end) or _NEXT_COMMAND.match(text, end)):
            break
        end += 1
    while end > at:
        last = text[end - 1]
        if last in ";," or (last in _CLOSERS and _CLOSERS[last] not in text[at : end - 1]):
            end -= 1
            continue
        break
    return end


def prose_or_flag(value: str) -> bool:
    """A plain word or the next option, not a secret: ``--password option``, ``-p flag``,
    ``mkdir -p /tmp/build``. Real passwords and tokens mix in digits or symbols."""
    return value[0] in "-/~." or bool(PLAIN_WORD.fullmatch(value))


_METAVAR = re.compile(r"[A-Z][A-Z0-9_\-]*[\]),]*|\{[\w\-]+(?:,[\w\-]+)+\}[\]),]*")


def _a_metavar_or_word(value: str) -> bool:
    """A --help's placeholder for the value (``PASSWORD``, ``DB_PASSWORD]``, ``{prompt,env}``)
    or a word of prose ending a sentence (``instead.``), not a password."""
    if _METAVAR.fullmatch(value) and not any(c.isdigit() for c in value):
        return True
    return bool(PLAIN_WORD.fullmatch(value.rstrip(".,;:)]")))


def _flag_start(text: str, at: int) -> bool:
    """A flag (or keyword) starts a word: ``-p`` in ``mysql -p`` counts, in ``re-parse`` or
    ``---p`` not."""
    return at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_-")


class CommandLineDetector(Detector):
    """Secrets given as their own command-line argument: ``--password VALUE``, ``--token
    VALUE`` (any flag whose name looks sensitive), ``mysql -pVALUE``, ``docker login -p
    VALUE``, ``curl -u user:VALUE``, ``sshpass -p VALUE``.

    ``-p``/``-u`` only count after the commands that use them for passwords: elsewhere they
    are ports, parents and users (``ssh -p 2222``, ``mkdir -p``). The flag is found first
    and its command looked up in the text before it (same command, bounded window), so
    text full of command names or flags stays linear.
    """

    name, summary = "cli-secret", "secrets passed as command-line arguments (--password X, -pX)"
    lower_triggers = ("--", "-p", "-u", "redis-cli", "openssl", "ldap", "keytool", "jarsigner",
                      "config", "authtoken", "wandb")  # fmt: skip
    _flag = re.compile(
        r"--(?P<name>[a-z][a-z0-9]*(?:[\-_][a-z0-9]+){0,5})[ \t]+"
        # a value never starts with "-": `--prod --token X` would take `--token` as --prod's
        r"(?:(?P<fq>[\"'])(?P<fv>[^\"'\r\n]{5,512})(?P=fq)|(?P<uv>(?!-)[^\s\"'`;&|<>()$]{5,512}))"
    )
    # Each pattern starts with its literal so the regex engine can skip ahead to it (a leading
    # look-behind would make it try every position); "not glued to a word" is checked after.
    # Both run over the text itself, not lowercased: mysql's -P3306 is a port, -p3306 a password.
    _password = re.compile(r"-p(?P<sp>[ \t]*)" + _CLI_VALUE)
    _user = re.compile(  # curl -u user:pass, -u 'user:pass', --user "user:pass"
        r"-(?:u|-user)[ \t]*(?P<q>[\"']?)[^\-\s:\"'@][^\s:\"'@]{0,127}:"
        # (the password quoted on its own: `-u user:'X'`, `-u 'user:'"'"'X'"'"''` read as
        # the shell runs it)
        r"(?P<iq>'?)(?=(?P<run>[^\s\"'@;&|<>()]{4,512}))(?P<v>(?P=run))(?P=iq)(?P=q)"
    )
    _mysql = re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mariadb)\b")
    _login = re.compile(r"\b(?:docker|podman|buildah|skopeo|nerdctl|helm|az|oc|cf)\b.*\blogin\b")
    _sshpass = re.compile(r"\bsshpass(?:[ \t]+-[a-oq-z][^ \t]*)*[ \t]*\Z")  # its own -p
    _curl = re.compile(r"\bcurl\b")
    _redis_auth = re.compile(r"-a[ \t]+" + _QUOTED_OR_CLI_VALUE)  # redis-cli -a PASSWORD
    _redis = re.compile(r"\bredis-cli\b")
    _openssl_pass = re.compile(  # -k X, -pass pass:X, -passin 'pass:X Y'
        r"-(?:pass(?:in|out)?[ \t]+(?P<oq>[\"'])pass:(?P<ov>[^\"'\r\n]{4,512})(?P=oq)"
        r"|(?:k|pass(?:in|out)?[ \t]+pass:)[ \t]*" + _QUOTED_OR_CLI_VALUE + ")"
    )
    _openssl = re.compile(r"\bopenssl\b")
    _smb_user = re.compile(r"-U[ \t]+(?:[\"']?)[^\s%\"']{1,128}%" + _CLI_VALUE)  # -U user%pw
    _smb = re.compile(r"\b(?:smbclient|rpcclient|smbmap|net)\b")
    # the password flags of other clients, each after its own command (elsewhere -P, -w, -p
    # are ports, widths and paths): mongosh -p X, sqlcmd -P X, ldapsearch -w X, zip -P X,
    # 7z -pX, keytool -storepass X
    _spaced_p = re.compile(r"-p[ \t]+" + _QUOTED_OR_CLI_VALUE)
    _mongo = re.compile(r"\bmongo(?:sh|dump|restore|export|import|stat|top)?\b")
    _capital_p = re.compile(r"-P[ \t]+" + _QUOTED_OR_CLI_VALUE)
    _sqlcmd_or_zip = re.compile(r"\b(?:sqlcmd|bcp|osql|zip|unzip|zipcloak)\b")
    _ldap_pass = re.compile(r"-w[ \t]+" + _QUOTED_OR_CLI_VALUE)
    _ldap = re.compile(r"\bldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn|exop)\b")
    _glued_p = re.compile(r"-p" + _CLI_VALUE)
    _seven_zip = re.compile(r"\b7z[a-z]?\b")
    _store_pass = re.compile(
        r"-(?:src|dest|new)?(?:store|key)pass[ \t]+(?!:)" + _QUOTED_OR_CLI_VALUE
    )
    _keytool = re.compile(r"\b(?:keytool|jarsigner)\b")
    # A package manager's or tool's config setter: `npm config set //registry…/:_authToken X`,
    # `yarn config set npmAuthToken X`, `git config --global github.token X`, `poetry config
    # pypi-token.pypi X`, `ngrok config add-authtoken X` (and ngrok's older `authtoken X`)
    # (each starts with its literal, so the regex engine skips ahead to it)
    _config_set = re.compile(
        r"config[ \t]+(?:--?[a-z][\w\-]{0,30}[ \t]+){0,3}(?:set[ \t]+)?"
        r"(?:--?[a-z][\w\-]{0,30}[ \t]+){0,3}(?P<name>[^\s=\"'\-][^\s=\"']{0,199})[ \t]+"
        + _QUOTED_OR_CLI_VALUE
    )
    _ngrok_set = re.compile(r"(?P<name>authtoken)[ \t]+" + _QUOTED_OR_CLI_VALUE)
    # `wandb login [--relogin] [--host=URL] KEY`: the key as an argument (40 hex)
    _wandb_login = re.compile(
        r"wandb[ \t]+login[ \t]+"
        r"(?:--?[a-z][\w\-]{0,30}(?:=[^\s=]{1,300}|[ \t]+https?://[^\s]{1,300})?[ \t]+){0,3}"
        + _QUOTED_OR_CLI_VALUE
    )
    _configure_words = (
        "npm", "pnpm", "yarn", "bun", "git", "poetry", "ngrok", "pip", "conda", "composer"
    )  # fmt: skip
    # Composer's settings that hold a token per host: `github-oauth.github.com TOKEN`
    _composer_token_settings = ("github-oauth", "gitlab-oauth", "gitlab-token", "bearer")
    _configures = re.compile(rf"\b(?:{'|'.join(_configure_words)})\b")

    @staticmethod
    def _command(lower: str, at: int) -> str:
        """The command line ``at`` belongs to, from its start (or the window's) to ``at``."""
        low = max(0, at - _COMMAND_WINDOW)
        start = max(lower.rfind(end, low, at) for end in _SEGMENT_ENDS)
        return lower[max(start + 1, low) : at]

    def find(self, text: str, lower: str) -> Iterator[Span]:
        if "--" in lower:
            for match in self._flag.finditer(lower):
                if not _flag_start(lower, match.start()):
                    continue
                group = "fv" if match.group("fq") else "uv"
                start, end = match.span(group)
                value, quoted = text[start:end], group == "fv"
                if prose_or_flag(value):  # "--password followed by", "--password --host db"
                    continue
                if not quoted and text[end : end + 1] in ("$", "`"):
                    continue  # `--password pypi-$PYPI_TOKEN`: the rest is a variable's
                if not quoted and _a_metavar_or_word(value):
                    continue  # `--password PASSWORD]` (a --help's usage), "… instead."
                if is_secret_assignment(
                    match.group("name"), value, quoted=quoted, env_style=not quoted
                ):
                    yield start, end
        commands = (
            ("mysql" in lower or "mariadb" in lower, "sshpass" in lower, "login" in lower)
            if "-p" in lower
            else (False, False, False)
        )
        if any(commands):
            mysql, sshpass, login = commands
            for match in self._password.finditer(text):
                if not _flag_start(text, match.start()):
                    continue
                line = self._command(lower, match.start())
                glued = not match.group("sp")
                # (a substring test first: the regexes only run where the command is)
                if mysql and glued and "m" in line and self._mysql.search(line):
                    # mysql's only -p option: glued, even a plain word is the password
                    yield from self._value(text, match, word_ok=True)
                elif (sshpass and "sshpass" in line and self._sshpass.search(line)) or (
                    login and not glued and "login" in line and self._login.search(line)
                ):
                    yield from self._value(text, match)
        if "curl" in lower:
            for match in self._user.finditer(text):
                at = match.start()
                if not _flag_start(text, at):
                    continue
                line = self._command(lower, at)
                if "curl" in line and self._curl.search(line):
                    yield from self._value(text, match)
        if "wandb" in lower:
            for match in self._wandb_login.finditer(text):
                if _flag_start(text, match.start()):
                    for start, end in self._value(text, match):
                        value = text[start:end]
                        if is_secret_assignment("api_key", value, quoted=False, env_style=True):
                            yield start, end
        if ("config" in lower or "authtoken" in lower) and any(
            word in lower for word in self._configure_words
        ):
            yield from self._config_values(text, lower)
        for word, flag, command, first in (
            ("redis-cli", self._redis_auth, self._redis, False),
            ("openssl", self._openssl_pass, self._openssl, False),
            ("-u", self._smb_user, self._smb, False),
            # the command itself, not a word before the flag (`docker run --name mongo -p
            # 27017:27017`, `rsync backup.zip -P host:/x`)
            ("mongo", self._spaced_p, self._mongo, True),
            ("-p", self._capital_p, self._sqlcmd_or_zip, True),
            ("ldap", self._ldap_pass, self._ldap, True),
            ("7z", self._glued_p, self._seven_zip, True),
            ("pass", self._store_pass, self._keytool, True),
        ):
            if word not in lower:
                continue
            for match in flag.finditer(text):
                if not _flag_start(text, match.start()):
                    continue
                line = self._command(lower, match.start())
                if _runs(command, line) if first else command.search(line):
                    yield from self._value(text, match)

    def _config_values(self, text: str, lower: str) -> Iterator[Span]:
        """The values a tool's config setter is given under a sensitive name."""
        matches = [
            *(self._config_set.finditer(text) if "config" in lower else ()),
            *(self._ngrok_set.finditer(text) if "authtoken" in lower else ()),
        ]
        for match in matches:
            at = match.start()
            if not _flag_start(text, at) or not self._configures.search(self._command(lower, at)):
                continue
            name = match["name"]
            if name.startswith(self._composer_token_settings):
                name = "token"  # `github-oauth.github.com`: the host names the token
            elif not name_strength(name):  # `pypi-token.pypi`: the setting, then its repository
                name = re.split(r"[.:]", name)[0]
            for start, end in self._value(text, match, word_ok=True):
                if is_secret_assignment(name, text[start:end], quoted=False, env_style=True):
                    yield start, end

    @staticmethod
    def _value(text: str, match: re.Match[str], word_ok: bool = False) -> Iterator[Span]:
        """The match's value unless a placeholder, a variable, or (unless ``word_ok``) a
        plain word or the next option."""
        group = next(
            g
            for g in ("ov", "sv", "cn", "cs", "cq", "v")
            if g in match.re.groupindex and match.group(g)
        )
        start, end = match.span(group)
        value = text[start:end]
        wordy = value[0] in "-/~." if word_ok else prose_or_flag(value)
        if not is_placeholder(value) and not wordy and value[0] not in "$%":
            yield start, end


class NetrcDetector(Detector):
    """``password VALUE`` in a .netrc (``machine HOST login USER password VALUE``, on one line
    or several, login before or after): a space, not ``=`` or ``:``, separates the name from
    the value there."""

    name, summary = "netrc-password", "password VALUE in .netrc entries (machine ... login ...)"
    lower_triggers = ("machine",)
    _password = re.compile(r"password[ \t]+(?P<v>[^\s\"'`]{4,512})")
    # From the entry's "machine" (or "default") keyword to "password": netrc tokens only, and
    # names that do not end like a word of prose ("machine learning login page: password").
    _head = r"(?:machine[ \t]+\S*[^\s:,;.]|default)(?:\s+(?:account|port)[ \t]+\S+)*"
    _entry = re.compile(_head + r"\s+login[ \t]+\S*[^\s:,;.](?:\s+(?:account|port)[ \t]+\S+)*\s+")
    _entry_login_after = re.compile(_head + r"\s+")
    _login_after = re.compile(r"\s+login[ \t]+\S")
    window = 400

    def find(self, text: str, lower: str) -> Iterator[Span]:
        if "password" not in lower:
            return
        for match in self._password.finditer(lower):
            at = match.start()
            if not _flag_start(lower, at):  # "mypassword 1234" is not the netrc keyword
                continue
            entry = self._keyword_before(lower, max(0, at - self.window), at)
            start, end = match.span("v")
            if entry < 0 or not (
                self._entry.fullmatch(lower, entry, at)
                or (
                    self._entry_login_after.fullmatch(lower, entry, at)
                    and self._login_after.match(lower, end)
                )
            ):
                continue
            if not is_placeholder(text[start:end]):
                yield start, end

    @staticmethod
    def _keyword_before(lower: str, low: int, at: int) -> int:
        """Where the nearest "machine"/"default" token before ``at`` starts (a whole word:
        not the "machine" of build-machine-01), or -1."""
        best = -1
        for word in ("machine", "default"):
            i = lower.rfind(word, low, at)
            while i >= 0 and not (
                (i == 0 or lower[i - 1].isspace())
                and lower[i + len(word) : i + len(word) + 1].isspace()
            ):
                i = lower.rfind(word, low, i)
            best = max(best, i)
        return best


class NameValueDetector(Detector):
    """Environment variables written as a name/value pair, as Kubernetes, Docker Compose,
    ECS and GitHub Actions files do: ``- name: DB_PASSWORD`` then ``value: X`` (YAML),
    ``{"name": "DB_PASSWORD", "value": "X"}`` (JSON), or Terraform/Helm's ``set_sensitive {
    name = "auth.password" value = "X" }``. The name says it is a secret."""

    name, summary = "name-value-secret", "name: SECRET_NAME / value: X pairs (k8s, compose, ECS)"
    lower_triggers = ("value",)
    _q = r"\\{0,3}[\"']?"
    # the name's own key: name (k8s, ECS), key (GitLab variables, Postman), Name (AWS)
    _name = (
        rf"(?:name|key){_q}[ \t]*[:=][ \t]*(?P<q1>{_q})"
        r"(?P<name>/?[a-z_][a-z0-9_./\-]{1,100})(?P=q1)"
    )
    # between the two: a comma, a line break or both (pretty-printed JSON), indentation
    _between = r"[ \t]*(?:[,;][ \t]*)?(?:\r?\n)?[ \t\-]{0,40}"
    _value = rf"{_q}value{_q}[ \t]*[:=][ \t]*"
    # (AWS SSM's `"Type": "SecureString"` may stand between them)
    _type = rf"(?:{_q}type{_q}[ \t]*[:=][ \t]*{_q}[\w.\-]{{1,40}}{_q}{_between})?"
    _pair = re.compile(
        rf"{_name}{_between}{_type}{_value}"
        r"(?:(?P<q2>\\{0,3}[\"'])(?P<qv>[^\"'\\\r\n]{1,512})(?P=q2)|(?P<uv>[^\s\"'`,}]{1,512}))"
    )
    # the other order, quoted: {"value": "X", "name": "DB_PASSWORD"}
    _reversed = re.compile(
        rf"{_value}(?P<q2>\\{{0,3}}[\"'])(?P<qv>[^\"'\\\r\n]{{1,512}})(?P=q2){_between}{_q}{_name}"
    )

    def find(self, text: str, lower: str) -> Iterator[Span]:
        if "name" not in lower and "key" not in lower:
            return
        for pattern in (self._pair, self._reversed):
            for match in pattern.finditer(lower):
                if not _flag_start(lower, match.start()):
                    continue  # "hostname: x" / "filename:" are other fields
                if lower.startswith("key=", match.start("name") - 5):
                    continue  # `<add key="ApiKey" value="X"/>`: code-secret's .NET setting
                group = "qv" if match.group("qv") is not None else "uv"
                start, end = match.span(group)
                name = text[match.start("name") : match.end("name")]
                if group == "uv" and _REFERENCE.fullmatch(text[start:end]):
                    continue  # `value = var.db_password`: a Terraform reference, not the value
                if group == "uv" and text[start] in "{$([":
                    continue  # JSX's `value={password}`, `${…}`: an expression, not the value
                value = text[start:end]
                if " " in value and name.upper() != name and lower.startswith("key", match.start()):
                    continue  # `"key": "password", "value": "Mot de passe"`: a translation
                if is_secret_assignment(name, value, quoted=False, env_style=True):
                    yield start, end


class SensitiveOutputDetector(Detector):
    """Terraform marks a secret output itself: ``"sensitive": true`` beside its ``"value"``
    in ``terraform output -json`` and a state file's ``outputs``. The name one level up
    (``"db_password": {…}``) is out of any pattern's reach, and need not say "password".
    The value may be an object or a list (``"type": ["object", {…}]``): its strings and
    numbers go."""

    name, summary = "sensitive-value", '"sensitive": true beside a "value" (Terraform outputs)'
    lower_triggers = ('"sensitive"',)
    _flag = re.compile(r"\"sensitive\"[ \t]*:[ \t]*true\b")
    _key = re.compile(r"\"value\"\s{0,64}:\s{0,64}")
    _reach = 4096  # how far from the flag its "value" is looked for, either way
    _tries = 4  # "value" keys looked at each way (a nested value may hold its own)

    def find(self, text: str, lower: str) -> Iterator[Span]:
        done: set[int] = set()  # values judged in their own object: each once
        for flag in self._flag.finditer(lower):
            # the "value" key nearest before the flag and the one after in the flag's own
            # object: only whole JSON values (strings, objects, lists) between them
            # (Terraform's random passwords hold braces, its types are lists)
            low, high = max(0, flag.start() - self._reach), flag.end() + self._reach
            for backward in (True, False):
                at = flag.start() if backward else flag.end()
                for _ in range(self._tries):
                    at = (
                        lower.rfind('"value"', low, at)
                        if backward
                        else lower.find('"value"', at, high)
                    )
                    if at < 0:
                        break
                    spans = self._value(text, at, flag, backward)
                    if spans is None:
                        if not backward:
                            at += 1
                        continue
                    if at not in done:
                        done.add(at)
                        yield from spans
                    break

    def _value(self, text: str, at: int, flag: re.Match[str], backward: bool) -> list[Span] | None:
        """The secret spans of the ``"value"`` key at ``at`` when it is the flag's
        sibling (None: it is not, or no value follows it)."""
        key = self._key.match(text, at)
        if key is None:
            return None
        value = _json_value(text, key.end(), at + self._reach * 2)
        if value is None:
            return None
        end, strings = value
        gap = (end, flag.start()) if backward else (flag.end(), at)
        if gap[0] > gap[1] or not _json_siblings(text, *gap):
            return None  # another object's "value" (or the flag is inside the value)
        nested = text[key.end()] in "{["
        # (a number, whole or within: 4 characters and more, a PIN; a string: 6 characters,
        # 4 within an object or a list)
        shortest = 4 if nested or text[key.end()] != '"' else 6
        return [
            (start, stop)
            for start, stop in strings
            if (stop - start >= shortest)
            and not is_placeholder(secret := text[start:stop])
            and secret not in _TERRAFORM_MASKS
        ]


#: One JSON token: a string (and whether a `:` makes it a key), a bracket, a scalar, or a
#: separator; anything else ends the walk
_JSON_TOKEN = re.compile(
    r"\s{0,64}(?:\"(?P<s>(?:[^\"\\\r\n]|\\.){0,4096})\"(?P<key>\s{0,64}:)?"
    r"|(?P<open>[{\[])|(?P<close>[}\]])|(?P<other>[A-Za-z0-9.+\-]{1,64})|(?P<sep>[,:]))"
)


_JSON_MAX_TOKENS = 2048  # a value longer than this is not read (nor its strings redacted)


def _json_tokens(
    text: str, at: int, end: int, *, clipped: bool
) -> Iterator[tuple[re.Match[str] | None, int]]:
    """Each JSON token from ``at`` with the depth after it, for at most _JSON_MAX_TOKENS
    tokens starting before ``end`` (``clipped``: none runs past it). A token that ends
    every walk, another output's ``"sensitive"`` key or a bracket closing more than was
    opened, comes as None. Text that is no token ends the walk quietly."""
    depth = 0
    for _ in range(_JSON_MAX_TOKENS):
        if at >= end:
            return
        token = _JSON_TOKEN.match(text, at, end if clipped else len(text))
        if token is None:
            return
        at = token.end()
        if token["open"] is not None:
            depth += 1
        elif token["close"] is not None:
            depth -= 1
        if depth < 0 or (token["key"] is not None and token["s"] == "sensitive"):
            yield None, depth
            return
        yield token, depth


def _json_value(text: str, at: int, limit: int) -> tuple[int, list[Span]] | None:
    """Where the JSON value at ``at`` ends and the spans of its strings that are values
    (not keys) and of its numbers, whole or within; None when none is whole before
    ``limit``, or when another output's ``"sensitive"`` key comes first (the value ran on:
    each walk ends at the next flag)."""
    strings: list[Span] = []
    for token, depth in _json_tokens(text, at, limit, clipped=False):
        if token is None:
            return None
        if token["s"] is not None and token["key"] is None:
            strings.append(token.span("s"))
        elif token["other"] is not None and _JSON_NUMBER.fullmatch(token["other"]):
            # a number, the whole value or one inside it (`{"pin": 123456}`), is a secret
            # (a PIN, an account number); `true`/`false`/`null` tell nothing
            strings.append(token.span("other"))
        elif token["sep"] is not None and depth == 0:
            return None  # `"value": ,`
        if depth == 0 and token["sep"] is None and token["key"] is None:
            return token.end(), strings
    return None


#: A JSON number (what a scalar value holds besides `true`, `false` and `null`)
_JSON_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+\-]?[0-9]+)?")


def _json_siblings(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` holds only whole JSON values, keys and separators: what stands
    between two keys of one object. (An open bracket before trailing blanks is not: the
    key after it is one level down, as `"type": ["object", {\n "value": "string"}]`.)"""
    depth, at = 0, start
    for token, depth_after in _json_tokens(text, start, end, clipped=True):
        if token is None:
            return False
        depth, at = depth_after, token.end()
    return depth == 0 and not text[at:end].strip()


#: What Terraform prints in a sensitive output's place: no value.
_TERRAFORM_MASKS = frozenset(("(sensitive value)", "(sensitive)"))
