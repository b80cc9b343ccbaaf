"""Stop 56: credentials written in forms the detectors missed (a connection string's
letters-only password, mysql's glued plain word, setters and builders, a password as the
second argument of a login, a browser test typing into a password field, a Dockerfile's
``ENV NAME value``, Spring's ``<property>``, tool config setters), and the code and prose
in those same shapes that must stay."""

from __future__ import annotations

import pytest

from exporter.detectors import scan
from tests.service_token_samples import SERVICE_TOKEN_SAMPLES, WIDENED_SAMPLES
from tests.test_detectors import _covered


def _found(text: str) -> list[tuple[str, str]]:
    return [(f.detector, text[f.start : f.end]) for f in scan(text)]


MISSED = [
    # connection strings (ADO.NET, ODBC): `;`-separated keys, a bare word is the password
    ("Server=tcp:db.example.net,1433;Database=app;User ID=sa;Password=AmwufUxbvJDCTb;"
     "Encrypt=True", "AmwufUxbvJDCTb"),
    ("Host=localhost;Username=postgres;Password=sunshinebeach;Database=app", "sunshinebeach"),
    ("Driver={ODBC Driver 18};Server=x;Uid=sa;Pwd=qwertyasdf;", "qwertyasdf"),
    ('"ConnectionStrings": {"Db": "Data Source=db;Initial Catalog=x;User Id=app;'
     'Password=bluehorizon"}', "bluehorizon"),
    # mysql's -p glued: whatever follows is the password
    ("mysql -u root -pAmwufUxbvJDCTbq -h 127.0.0.1 app", "AmwufUxbvJDCTbq"),
    ("mysqldump -psunshine app > dump.sql", "sunshine"),
    # setters and builders
    ('cfg.setPassword("Jv4pL8mQ2zXc6N");', "Jv4pL8mQ2zXc6N"),
    ('client.setApiKey("Rk3vN9pQ2wXy7LmB5tZc8HdF")', "Rk3vN9pQ2wXy7LmB5tZc8HdF"),
    ('DataSource.builder().username("app").password("Bd7nQ2kLm9Zx").build()', "Bd7nQ2kLm9Zx"),
    ('Auth.withClientSecret("Cs8kP3mLq2Zx9VbN4tRw")', "Cs8kP3mLq2Zx9VbN4tRw"),
    # a password as a login's second argument
    ("server.login('me@gmail.com', 'Sm7tP2kLm9QzXc')", "Sm7tP2kLm9QzXc"),
    ("ftp.login(user, 'Ft7pL2kQm9Zx')", "Ft7pL2kQm9Zx"),
    ("r = requests.get(url, auth=('admin', 'Au5tH2kLm9QzXc'))", "Au5tH2kLm9QzXc"),
    ('es = Elasticsearch(url, basic_auth=("elastic", "El4sT2kLm9Qz"))', "El4sT2kLm9Qz"),
    ("HTTPBasicAuth('admin', 'Hb4sT2kLm9Qz')", "Hb4sT2kLm9Qz"),
    # a browser test typing a password
    ('await page.fill("#password", "Pw7yT3kLm9QzXc");', "Pw7yT3kLm9QzXc"),
    ("await page.getByLabel('Password').fill('Gl7yT3kLm9Qz');", "Gl7yT3kLm9Qz"),
    ('driver.find_element(By.ID, "password").send_keys("Se7yT3kLm9Qz")', "Se7yT3kLm9Qz"),
    ("cy.get('input[name=pwd]').type('Cy7yT3kLm9Qz')", "Cy7yT3kLm9Qz"),
    # a Dockerfile's one-variable ENV
    ("FROM postgres:16\nENV POSTGRES_PASSWORD Wd5sKq8Lz2XnPc\n", "Wd5sKq8Lz2XnPc"),
    ("ENV DB_PASSWORD sunshinebeach", "sunshinebeach"),
    # Spring and Hibernate XML
    ('<property name="password" value="Sp7rN2kLm9Qz"/>', "Sp7rN2kLm9Qz"),
    ('<property name="hibernate.connection.password">Hb8rN2kLm9QzXc</property>',
     "Hb8rN2kLm9QzXc"),
    # tools' config setters
    ("npm config set //registry.npmjs.org/:_authToken Np3kL9mQ2zXc6NvB8tRw5Yh1",
     "Np3kL9mQ2zXc6NvB8tRw5Yh1"),
    ('yarn config set npmAuthToken "Ya3kL9mQ2zXc6NvB8tRw5Yh1"', "Ya3kL9mQ2zXc6NvB8tRw5Yh1"),
    ("poetry config pypi-token.pypi Pk3l9QmZ2xVb7NcR4tWy8", "Pk3l9QmZ2xVb7NcR4tWy8"),
    ("git config --global github.token 4f8a9c2b1e7d6f3a0b5c8e2d1f4a7b9c3e6d0f2a",
     "4f8a9c2b1e7d6f3a0b5c8e2d1f4a7b9c3e6d0f2a"),
    ("ngrok config add-authtoken 2jc01T5GOBUSZGi6HWGK10Zb0RL_Z5TR9SPofbciOx9gy1CJd",
     "2jc01T5GOBUSZGi6HWGK10Zb0RL_Z5TR9SPofbciOx9gy1CJd"),
    ("ngrok authtoken 2jc01T5GOBUSZGi6HWGK10Zb0RL_Z5TR9SPofbciOx9gy1CJd",
     "2jc01T5GOBUSZGi6HWGK10Zb0RL_Z5TR9SPofbciOx9gy1CJd"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "secret"), MISSED)
def test_a_credential_in_these_forms_goes(text: str, secret: str) -> None:
    assert _covered(text, secret), _found(text)


KEPT = [
    # connection strings without a password, or naming one elsewhere
    "Data Source=.;Initial Catalog=x;Integrated Security=True",
    "Server=x;Database=app;Password=Password;",
    "if password=input; then",
    # mysql's -p alone prompts; a variable is no password
    "mysql -u root -p db",
    "mysql -u root -p$MYSQL_PWD app",
    "mysql -uroot -pPASSWORD app",
    # setters with names, rules and plain words
    'cache.setKey("user-session-42")',
    'cfg.setPassword(System.getenv("DB_PASSWORD"));',
    'builder.password("changeme")',
    'validator.setPasswordRule("min:8")',
    'form.setPasswordLabel("Your password")',
    'client.getSecret("prod/db/password")',
    # logins and auth tuples whose password is a variable
    "server.login(user, password)",
    "auth=(username, os.environ['PW'])",
    "self.client.login(username='bob', password=pw)",
    # typing into fields that are not a password's
    'await page.fill("#email", "alice2024@example.com");',
    "cy.get('#search').type('Tr0ub4dor3x')",
    'await page.fill("#password", password);',
    # a Dockerfile's ENV of a variable, a path, or not a Dockerfile's instruction
    "ENV DB_PASSWORD_FILE /run/secrets/db_password",
    "ENV POSTGRES_PASSWORD ${DB_PASSWORD}",
    "env POSTGRES_PASSWORD Wd5sKq8Lz2XnPc",
    "Set the ENV var DB_PASSWORD first",
    # XML that names a password's setting without giving one
    '<property name="password" value="${db.password}"/>',
    '<property name="passwordEncoder" ref="encoder"/>',
    # config commands without a secret
    'git config --global user.name "John Smith"',
    "git config credential.helper store",
    "npm config set registry https://registry.npmjs.org/",
    "see the config authtoken section",
]


@pytest.mark.parametrize("text", KEPT)
def test_these_forms_without_a_credential_stay(text: str) -> None:
    assert not scan(text), _found(text)


# --- services' token formats -------------------------------------------------------------------

PLACES = [
    "{}",  # bare, as a tool prints it
    "X={}",  # a .env line under a name that says nothing
    "GET https://api.example.com/v1/items?q={}&page=2",
    '{{"x": "{}"}}',
    "use {} for now",
]


@pytest.mark.parametrize(("detector", "token"), sorted(SERVICE_TOKEN_SAMPLES.items()))
def test_a_service_token_is_found_whole_wherever_it_sits(detector: str, token: str) -> None:
    for place in PLACES:
        text = place.format(token)
        found = _found(text)
        assert (detector, token) in found or _covered(text, token), (place, found)
    assert _found(token) == [(detector, token)]  # by its own format's name


@pytest.mark.parametrize(("detector", "token"), WIDENED_SAMPLES)
def test_known_formats_in_their_other_documented_shapes(detector: str, token: str) -> None:
    assert _found(f"token: {token} ok") == [(detector, token)] or _covered(f"x {token}", token)
    assert [name for name, _ in _found(f"x {token} y")] == [detector]


SHARED_PREFIXES = [
    # names in code that start with a token's prefix
    "napi_create_threadsafe_function(env, napi_value_abcdefghijklmnopqrstuvwxyz0123456789)",
    "sk_ACCESS_DESCRIPTION_deep_copy",
    "re_compile_fastmap(pattern_buffer_with_long_name)",
    "fw_cdev_allocate_iso_resource fw_cdev_event_request2",
    "secret_password_clearv_sync(schema, cancellable_error_callback_data)",
    "patchFrameInfoForObject(frameInfoObjectWithLongName)",
    "vcr_cassette_dir = 'tests/cassettes/integration_suite_v2'",
    "phx_click phx_submit phx_change_handler_for_form_elements",
    "aio_client_session_manager_for_requests",
    '<div class="fc-daygrid-day-frame fc-scrollgrid-sync-inner">',
    "access-control-allow-origin-header-value",
    "sha256~ is how the docs write it",
    "d41d8cd98f00b204e9800998ecf8427e-user",  # an md5 then a word
    "sl.com/a/b sl.ReadLine()",
]


@pytest.mark.parametrize("text", SHARED_PREFIXES)
def test_names_that_share_a_token_s_prefix_stay(text: str) -> None:
    assert not scan(text), _found(text)


# --- false positives a hunt over ~600 MB of real text found (helper 191) ----------------------

NOT_SECRETS = [
    # test runners' results (98k hits in one gdb log)
    "    --- PASS: TestParseConfig/empty_input (0.00s)",
    "--- PASS: TestE2E (3.21s)",
    "PASS: test_hash_table",
    "PASS: gdb.base/break.exp: break main",
    # code: calls and types as an object's value or a keyword argument
    '  password: z.string().min(8, "Password must be at least 8 characters"),',
    "  OPENAI_API_KEY: z.string().min(1),",
    "  password: yup.string().required('Password is required').min(8),",
    "    hashed_password=get_password_hash(user_in.password),",
    "            key=itemgetter(1),",
    "    password=getpass(),",
    "  token: nanoid(32),",
    "  secret: randomUUID(),",
    "  secretKey: Uint8Array;",
    "    key=str(uuid.uuid4()),",
    # a token's prefix naming a variable
    "model = AutoModel.from_pretrained(model_id, token=hf_token)",
    "client(token=ghp_token)",
    "openai.api_key = sk_secret",
    # interpolation and secret references
    'conn_str = f"Server={host};Database={db};User Id={user};Password={password};"',
    'string cs = $"Host={host};Username={user};Password={pass}";',
    'f.write(f"DB_PASSWORD={password}\\n")',
    'password: "%env(DATABASE_PASSWORD)%"',
    "password: ((db_password))",
    "password: '#{DbPassword}#'",
    "password: '@Microsoft.KeyVault(SecretUri=https://myvault.vault.azure.net/secrets/db/)'",
    'password: "${sm://projects/123/secrets/db-pass/versions/latest}"',
    # a --help's usage and prose about a flag
    "usage: app [-h] [--api-key API_KEY] [--token TOKEN] [--password PASSWORD]",
    "  --db-password DB_PASSWORD\n                        Postgres password (default: None)",
    "  --password {prompt,env,file}",
    "Note: --password is deprecated, use --password-stdin instead.",
    # public keys' ids, algorithms, pointers, placeholders
    "ENV GPG_KEY A035C8C19219BA821ECEA86B64E628F8D684696D",
    "GPG_KEY=A035C8C19219BA821ECEA86B64E628F8D684696D",
    "git config --global user.signingKey 3AA5C34371567BD2",
    "host_key: SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s",
    "password_encryption = scram-sha-256",
    "#0  verify_key (key=0x7ffff7fb8010, keylen=32) at crypto.c:117",
    '    password=password@entry=0x7fffffffe3c0 "", timeout=30) at net.c:210',
    "Server=myServerAddress;Database=myDataBase;User Id=myUsername;Password=myPassword;",
    '"Server=db;Database=app;User Id=sa;Password=@Password;"',
    "    Pass :meth:`peek` a default value to return that instead of raising",
    '"password": "string?",',
    "mysql -u root -p[password]",
    # logins whose second argument is a documented fixed word
    "r = requests.get(url, auth=(token, 'x-oauth-basic'))",
    "ftp.login('anonymous', 'guest@example.com')",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_what_real_sessions_hold_that_is_no_secret_stays(text: str) -> None:
    assert not scan(text), _found(text)


STILL_SECRETS = [
    ("PASS: Tr0ub4dor3x9", "Tr0ub4dor3x9"),  # not a test's id
    ("environment:\n  PASS: s3cr3tPw9\n", "s3cr3tPw9"),
    ("API_KEY=abc(def)Xy9", "abc(def)Xy9"),  # a .env line's value, brackets and all
    ("password: john.doe(1987), user: root", "john.doe(1987)"),
    ('{"token": "sk-secret"}', "sk-secret"),
    ("mycli --password Tr0ub4dor3x", "Tr0ub4dor3x"),
    (
        "API_KEY=A035C8C19219BA821ECEA86B64E628F8D684696D",
        "A035C8C19219BA821ECEA86B64E628F8D684696D",
    ),
    ("password: '#{Zq8vRt3Lm9Kw}'", "#{Zq8vRt3Lm9Kw}"),
    ("server.login('me@gmail.com', 'Sm7tP2kLm9QzXc')", "Sm7tP2kLm9QzXc"),
    ("PASSWORD=@dmin2024x", "@dmin2024x"),  # an "@" first, digits after: no SQL parameter
    ("DB_PASSWORD=myDogRex", "myDogRex"),  # "my" and words: not the documented placeholder
]


@pytest.mark.parametrize(("text", "secret"), STILL_SECRETS)
def test_the_same_shapes_holding_a_secret_still_go(text: str, secret: str) -> None:
    assert _covered(text, secret), _found(text)
