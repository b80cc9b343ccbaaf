"""Detectors: each one finds its format and nothing else; placeholders and code are not secrets;
10 MB adversarial strings stay linear; the reviewed hit list on the real fixtures holds."""

from __future__ import annotations

import base64
import functools
import json
import random
import string
import time
from pathlib import Path

import pytest

from exporter.decoded_view import decoded_view
from exporter.detectors import DETECTOR_NAMES, DETECTOR_VERSION, DETECTORS, Scanner, scan
from exporter.loader import load_session
from exporter.redact import RedactionPolicy, apply_policy
from exporter.secret_commands import reads_a_secret
from exporter.secret_heuristics import is_placeholder, name_strength
from tests.secret_corpus import TOKEN_KINDS, make_secret, rand
from tests.service_token_samples import SERVICE_TOKEN_SAMPLES

# Token kind of the corpus -> the detector that must name it.
TOKEN_DETECTOR = {
    "openai-project": "openai-key",
    "openai-legacy": "openai-key",
    "anthropic": "anthropic-key",
    "openrouter": "openrouter-key",
    "groq": "groq-key",
    "xai": "xai-key",
    "cerebras": "cerebras-key",
    "google": "google-api-key",
    "github-classic": "github-token",
    "github-fine-grained": "github-token",
    "gitlab": "gitlab-token",
    "huggingface": "huggingface-token",
    "aws-key-id": "aws-access-key-id",
    "slack": "slack-token",
    "stripe": "stripe-key",
    "npm": "npm-token",
    "pypi": "pypi-token",
    "jwt": "jwt",
    "discord-bot": "discord-bot-token",
}
R = random.Random(7)
AWS_SECRET = rand(R, 40, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/")
BEARER = rand(R, 40)
# (detector, text, the secret that must be covered)
# kubeconfig's client-key-data (a private key) and client-certificate-data (public)
PEM_B64 = base64.b64encode(
    b"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7Qm9\n-----END RSA PRIVATE KEY-----\n"
).decode()
PEM_B64_WRAPPED = (
    base64.encodebytes(  # 76 columns, as `base64` writes it
        b"-----BEGIN PRIVATE KEY-----\n"
        + b"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" * 8
        + b"\n-----END PRIVATE KEY-----\n"
    )
    .decode()
    .strip()
)
PEM_B64_UNPADDED = (
    base64.encodebytes(  # 375 bytes in all, a multiple of 3: no "=" at the end
        b"-----BEGIN PRIVATE KEY-----\n"
        + b"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" * 10
        + b"\n-----END PRIVATE KEY-----\n"
    )
    .decode()
    .strip()
)
CERT_B64 = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nMIIBkTCB+wIJAKHHIG\n-----END CERTIFICATE-----\n"
).decode()
# a Docker registry config as `base64` prints it: wrapped at 76 columns
_DOCKER_B64 = base64.b64encode(
    b'{"auths":{"registry.example.com:5050":{"username":"bob","password":"Tr0ub4dor3x-Pr0d",'
    b'"auth":"Ym9iOlRyMHViNGRvcjN4LVByMGQ="}}}'
).decode()
DOCKER_WRAPPED = "\n".join(_DOCKER_B64[i : i + 76] for i in range(0, len(_DOCKER_B64), 76))


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


# Discord bot tokens: the bot's user id (17 to 20 digits) in base64, a timestamp, an HMAC
DISCORD = _b64("1176543210987654321") + ".GxR3kQ.aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zA1bC2dE"
DISCORD_OLD = _b64("80351110224678912") + ".Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"  # 17 digits
_S = random.Random(11)
_HEX = "0123456789abcdef"
# services' tokens, found bare (review 2026-12-01): detector -> a token of its format
SERVICE_TOKENS = [
    ("vault-token", "hvs.CAESI" + rand(_S, 40)),
    ("digitalocean-token", "dop_v1_" + rand(_S, 64, _HEX)),
    ("docker-hub-token", "dckr_pat_" + rand(_S, 27)),
    ("databricks-token", "dapi" + rand(_S, 32, _HEX)),
    ("linear-key", "lin_api_" + rand(_S, 40)),
    ("twilio-key", "SK" + rand(_S, 32, _HEX)),
    ("replicate-token", "r8_" + rand(_S, 37)),
    ("perplexity-key", "pplx-" + rand(_S, 48)),
    ("atlassian-token", "ATATT3" + rand(_S, 180)),
    ("postman-key", "PMAK-" + rand(_S, 24, _HEX) + "-" + rand(_S, 34, _HEX)),
    ("grafana-token", "glsa_" + rand(_S, 32) + "_" + rand(_S, 8, _HEX)),
    ("supabase-token", "sbp_" + rand(_S, 40, _HEX)),
    ("sentry-token", "sntrys_" + rand(_S, 60)),
    ("newrelic-key", "NRAK-" + rand(_S, 27, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")),
    ("pulumi-token", "pul-" + rand(_S, 40, _HEX)),
    ("doppler-token", "dp.st." + rand(_S, 44)),
    ("doppler-token", "dp.pt." + rand(_S, 43)),  # a personal token
    ("doppler-token", "dp.st.prd." + rand(_S, 43)),  # a service token with its environment
    ("terraform-token", rand(_S, 14) + ".atlasv1." + rand(_S, 67)),
    ("fly-token", "fo1_" + rand(_S, 43)),
    ("netlify-token", "nfp_" + rand(_S, 36)),
    ("bedrock-key", "ABSK" + rand(_S, 132)),
    # (secret review 2026-12-04)
    ("mailgun-key", "key-" + rand(_S, 32, _HEX + "ghijklmnopqrstuvwxyz")),
    ("square-token", "sq0atp-" + rand(_S, 22)),
    ("square-token", "sq0csp-" + rand(_S, 43)),
    ("meta-token", "EAAG" + rand(_S, 180)),
    ("meta-token", "EAAA" + rand(_S, 60)),  # a Square production token
]
WRAPPED_TAIL = "cF1hJ5sD0gA2eZ9u"
POSITIVES = [
    # `vault operator init` (its keys went out in clear, review 2026-12-07)
    ("vault-unseal-key",
     "Unseal Key 1: 4Jp7yV0Qn2kXs9Lm3Tb8Rc5Wd1Fg6Hh0Zq4Ae7Uo2Ix\nUnseal Key 2: x",
     "4Jp7yV0Qn2kXs9Lm3Tb8Rc5Wd1Fg6Hh0Zq4Ae7Uo2Ix"),
    ("vault-root-token", "Unseal Key 5: x\n\nInitial Root Token: s.Xk9mP2vQ7rT4wZ8sLm3Nv8Rt",
     "s.Xk9mP2vQ7rT4wZ8sLm3Nv8Rt"),
    ("azure-function-key", "curl 'https://my-app.azurewebsites.net/api/HttpTrigger?code="
     "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1hJ3kL5mNw==&name=x'",
     "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1hJ3kL5mNw=="),
    ("wrapped-token", f"\u2502 token ghp_R7kP2mQ9xL4vN8wT3yB6\u2502\n\u2502 {WRAPPED_TAIL}  \u2502",
     WRAPPED_TAIL),
    ("aws-secret-key", f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    ("aws-secret-key", f"AKIA{rand(R, 16, 'ABCDEFGHIJ0123456789')},{AWS_SECRET}", AWS_SECRET),
    ("auth-header", f"Authorization: Bearer {BEARER}", BEARER),
    ("auth-header", f'-H "authorization: token {BEARER}"', BEARER),
    ("auth-header", "Authorization: Basic ZGVwbG95Omh1bnRlcjI=", "ZGVwbG95Omh1bnRlcjI="),
    ("auth-header", f"bearer {BEARER}", BEARER),
    ("auth-header", f"Cookie: sid={BEARER}; theme=dark", f"sid={BEARER}; theme=dark"),
    ("private-key", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----",
     "MHcCAQEE"),
    ("private-key", "out: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk", "b3BlbnNzaC1rZXk"),
    ("url-credentials", "git clone https://bob:Pa55w0rd!x@git.example.com/r.git", "Pa55w0rd!x"),
    ("url-credentials", "redis://:s3cr3tValue@cache:6379/0", "s3cr3tValue"),
    ("slack-webhook", "https://hooks.slack.com/services/T0001/B0002/abcdefghijklmnopqrstuvwx",
     "T0001/B0002/abcdefghijklmnopqrstuvwx"),
    ("secret-assignment", "export DB_PASSWORD=hunter2hunter", "hunter2hunter"),
    ("secret-assignment", 'config = {"api_key": "k3y-Value-123456"}', "k3y-Value-123456"),
    ("secret-assignment", '{\\"password\\":\\"hunter22\\"}', "hunter22"),
    ("secret-assignment", "  password: n0t.a.var1able", "n0t.a.var1able"),
    ("secret-assignment", "deploy --api-key=Zx81kfjs0dkdf99 --verbose", "Zx81kfjs0dkdf99"),
    ("secret-assignment", "CLIENT_SECRET='abcDEF123456ghi'", "abcDEF123456ghi"),
    ("secret-assignment", "GITHUB_TOKEN_2=Qw3rty123456Asdfg", "Qw3rty123456Asdfg"),
    ("secret-assignment", "//registry.npmjs.org/:_authToken=0a1b2c3d-4e5f-6789-abcd-ef0123456789",
     "0a1b2c3d-4e5f-6789-abcd-ef0123456789"),
    # Found by an adversarial review (each leaked before): glued names, hex/UUID tokens under
    # a *_TOKEN name, Rails' SECRET_KEY_BASE, a second assignment inside a sed expression.
    ("secret-assignment", "PGPASSWORD=S3cretPassw0rd psql -h db", "S3cretPassw0rd"),
    ("secret-assignment", "export CONSUL_HTTP_TOKEN=3f6c2a9e-8b1d-4c7a-9e2f-5d4b1a0c7e93",
     "3f6c2a9e-8b1d-4c7a-9e2f-5d4b1a0c7e93"),
    ("secret-assignment", "SONAR_TOKEN=0123456789abcdef0123456789abcdef01234567",
     "0123456789abcdef0123456789abcdef01234567"),
    ("secret-assignment", "SECRET_KEY_BASE=a8f5f167f44f4964e6c998dee827110c3f2b8c7d9e1a2b3c",
     "a8f5f167f44f4964e6c998dee827110c3f2b8c7d9e1a2b3c"),
    ("secret-assignment", "sed -i 's/PASSWORD=.*/PASSWORD=Hunter2Hunter2/' .env", "Hunter2Hunter2"),
    ("secret-assignment", 'headers = {"Authorization": "Basic YWRtaW46UzNjcmV0UGFzc3cwcmQ="}',
     "YWRtaW46UzNjcmV0UGFzc3cwcmQ="),
    ("cli-secret", "mysql -u root -pS3cretPassw0rd -h db", "S3cretPassw0rd"),
    ("cli-secret", "mysqldump --single-transaction -p'Hunter2Hunter2' shop", "Hunter2Hunter2"),
    ("cli-secret", "curl -u admin:S3cretPassw0rd https://ci.example.com/api", "S3cretPassw0rd"),
    ("cli-secret", "docker login -u bob -p S3cretPassw0rd registry.example.com", "S3cretPassw0rd"),
    ("cli-secret", "./deploy.sh --password S3cretPassw0rd --env prod", "S3cretPassw0rd"),
    ("cli-secret", 'tool --client-secret "aB3dE5gH7jK9mN1p" run', "aB3dE5gH7jK9mN1p"),
    ("cli-secret", "vercel --token q8Zt3LmN9pR2sV5wX7yB4c deploy", "q8Zt3LmN9pR2sV5wX7yB4c"),
    ("cli-secret", "sshpass -p 'Hunter2Hunter2' ssh deploy@host", "Hunter2Hunter2"),
    ("cli-secret", 'curl -u "bob:Tr0ub4dor" https://api.example.com', "Tr0ub4dor"),
    ("cli-secret", "curl --user 'bob:Tr0ub4dor' https://api.example.com", "Tr0ub4dor"),
    ("cli-secret", "sshpass -p pw12 scp -P 8022 f host:", "pw12"),
    # Found by a secrets review (each leaked before): .netrc, env name/value pairs, Ruby/PHP
    # hashes, "&" in a .env value, URL passwords with "@" or "/", kubeconfig key data,
    # redis-cli/openssl passwords, token formats with no detector.
    ("netrc-password", "machine github.com login zoltan password Gh7!mK29qLxz", "Gh7!mK29qLxz"),
    ("netrc-password", "machine api.example.com\n  login me@x.io\n  password Pq9-vX2mWz7r\n",
     "Pq9-vX2mWz7r"),
    ("name-value-secret", "env:\n  - name: DB_PASSWORD\n    value: Pq9-vX2mWz7rT4sL",
     "Pq9-vX2mWz7rT4sL"),
    ("name-value-secret", '{"name":"DB_PASSWORD","value":"sunshine"}', "sunshine"),
    ("name-value-secret", 'set_sensitive {\n  name  = "auth.password"\n  value = "Hunter2Hun"\n}',
     "Hunter2Hun"),
    ("name-value-secret", '{ name = "db.password" value = "Hunter2Hunter2" }', "Hunter2Hunter2"),
    ("name-value-secret", '- name: API_TOKEN\n  value: "q8Zt3LmN9pR2sV5wX7yB4c"',
     "q8Zt3LmN9pR2sV5wX7yB4c"),
    ("secret-assignment", "'password' => 'Lm8#qWz2!Kp',", "Lm8#qWz2!Kp"),
    ("secret-assignment", ":api_key => \"Zx81kfjs0dkdf99\"", "Zx81kfjs0dkdf99"),
    ("secret-assignment", "ADMIN_PASSWORD=Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("secret-assignment", "redis:\n  host: cache\n  password: sunshine\n", "sunshine"),
    ("secret-assignment", "SMTP_PASSWORD=Yourself2024!", "Yourself2024!"),
    ("url-credentials", "mongodb://app:8f/Kq2+Lm9Wz@mongo.internal:27017/db", "8f/Kq2+Lm9Wz"),
    ("url-credentials", "postgres://app:p@ssW0rd99@db/shop", "p@ssW0rd99"),
    ("private-key-base64", "    client-key-data: " + PEM_B64, PEM_B64),
    # `base64 key.pem` wraps at 76 columns (a review: 76 of 2,302 characters were redacted)
    ("private-key-base64", "$ base64 key.pem\n" + PEM_B64_WRAPPED, PEM_B64_WRAPPED),
    ("url-credentials", "mysql://root:12345@localhost:3306/app", "12345"),  # digits, no port
    ("netrc-password", "machine build-machine-01.corp login ci password S3cretPw99", "S3cretPw99"),
    ("netrc-password", "machine h.example.com password S3cretPw99 login u", "S3cretPw99"),
    ("secret-assignment", "DB_PASSWORD=Your$ecretPass", "Your$ecretPass"),
    ("secret-assignment", "DB_PASSWORD=!Secret123", "!Secret123"),  # not a YAML tag
    ("secret-assignment", "POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-pgS3cretPass2024}",
     "pgS3cretPass2024"),  # a default in a shell expansion
    ("secret-assignment", 'password = "my...Secret9pass"', "my...Secret9pass"),  # no mask
    ("url-credentials", "postgres://admin:P@ssw0rd!@db.example.com:5432/app", "P@ssw0rd!"),
    ("url-credentials", "http://user:pass1234@[fe80::1%eth0]:80/", "pass1234"),
    ("cli-secret", "redis-cli -h cache -a Rz8#kQ2pLm9 ping", "Rz8#kQ2pLm9"),
    ("cli-secret", 'redis-cli -a "S3cret Pw99" ping', "S3cret Pw99"),  # quoted, with a space
    ("cli-secret", "smbclient //srv/share -U bob%Tr0ub4dor3x", "Tr0ub4dor3x"),
    ("password-hash", "admin:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/",
     "$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/"),
    ("password-hash", "root:$6$saltsalt$Wq9bC2vL8mN5kR3tY7uI1oP4aS6dF0gH2jK5lZ8xC1vB3:19000:0:::",
     "$6$saltsalt$Wq9bC2vL8mN5kR3tY7uI1oP4aS6dF0gH2jK5lZ8xC1vB3"),
    ("url-token", "SENTRY_DSN=https://abcdef0123456789abcdef0123456789@o1.ingest.sentry.io/4",
     "abcdef0123456789abcdef0123456789"),
    ("url-token", "git clone https://Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0Ja2Pq4Zq8X@github.com/o/r",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0Ja2Pq4Zq8X"),
    ("cli-secret", "openssl rsa -passin 'pass:S3cret Pw99' -in k.pem", "S3cret Pw99"),
    ("cli-secret", "openssl enc -aes-256-cbc -k Tr0ub4dor3xYZ -in f", "Tr0ub4dor3xYZ"),
    ("secret-assignment", "openssl rsa -passin pass:Hunter2Hunter2 -in k.pem", "Hunter2Hunter2"),
    ("google-oauth-secret", "client_secret GOCSPX-AbCdEf1234567890AbCdEf123456",
     "GOCSPX-AbCdEf1234567890AbCdEf123456"),
    ("google-oauth-token", "ya29.a0AfH6SMBx1234567890abcdefghijklmnopQRSTUV",
     "ya29.a0AfH6SMBx1234567890abcdefghijklmnopQRSTUV"),
    ("slack-token", "xapp-1-A0123456789-1234567890123-abcdef0123456789",
     "xapp-1-A0123456789-1234567890123-abcdef0123456789"),
    ("shopify-token", "shpat_0123456789abcdef0123456789abcdef",
     "shpat_0123456789abcdef0123456789abcdef"),
    ("gitlab-token", "glrt-AbCd1234EfGh5678IjKl", "glrt-AbCd1234EfGh5678IjKl"),
    ("age-secret-key", "AGE-SECRET-KEY-1QQPQZLD0RXGYS9EH4VW0L8CXMQ6E6ZP9QT6QZ3R0Z4W9G7SGKHVQ2RX9Q0",
     "AGE-SECRET-KEY-1QQPQZLD0RXGYS9EH4VW0L8CXMQ6E6ZP9QT6QZ3R0Z4W9G7SGKHVQ2RX9Q0"),
    ("github-token", "\x1b[32mghp_abcdefghijklmnopqrstuvwxyzABCDEF123456\x1b[0m",
     "ghp_abcdefghijklmnopqrstuvwxyzABCDEF123456"),
    ("sendgrid-key", "key SG.abcdefghijk1mnopqrstuv.abcdefghijklmnopqrstuvwxyzABCDEFGH1JKLMNOPQ",
     "SG.abcdefghijk1mnopqrstuv.abcdefghijklmnopqrstuvwxyzABCDEFGH1JKLMNOPQ"),
    # known by where they sit (placement_detectors)
    ("pgpass", "$ cat ~/.pgpass\ndb.internal:5432:prod:app:Pr0dPassw0rd-x9\n", "Pr0dPassw0rd-x9"),
    ("pgpass", "*:*:*:postgres:Tr0ub4dor3x", "Tr0ub4dor3x"),
    ("putty-key", "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 2\nAAAAIBeM3x0Yq9nV2Lk8J\n"
     "t7Rp5Wc1Ud5Ef6Gh7Ij8Kl9Mn0\nPrivate-MAC: 1a2b", "AAAAIBeM3x0Yq9nV2Lk8J\nt7Rp5Wc1Ud5Ef6Gh7"),
    ("docker-config",
     "  .dockerconfigjson: eyJhdXRocyI6eyJnaGNyLmlvIjp7ImF1dGgiOiJZbTlpT21kb2NGOUJRa05FIn19fQ==",
     "eyJhdXRocyI6eyJnaGNyLmlvIjp7ImF1dGgiOiJZbTlpT21kb2NGOUJRa05FIn19fQ=="),
    ("signed-url", "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&se=2026-01-01&"
     "sig=Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0Ja%2BQ%3D", "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0Ja%2BQ%3D"),
    ("signed-url", "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature="
     "3f1e2d4c5b6a79880123456789abcdef3f1e2d4c5b6a79880123456789abcdef",
     "3f1e2d4c5b6a79880123456789abcdef3f1e2d4c5b6a79880123456789abcdef"),
    ("command-argument", "htpasswd -b .htpasswd bob Tr0ub4dor3x", "Tr0ub4dor3x"),
    ("command-argument", "htpasswd -nbB admin 'S3cret99' > creds", "S3cret99"),
    ("command-argument", "gh secret set NPM_TOKEN --body Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("command-argument", "gh secret set DB_PASS -b 'Tr0ub 4dor3x'", "Tr0ub 4dor3x"),
    ("command-argument", "echo Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3 | vercel env add API_KEY production",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("command-argument", "printf '%s' 'Tr0ub4dor3x' | docker login -u bob --password-stdin",
     "Tr0ub4dor3x"),
    ("env-default", "os.environ.get('SECRET_KEY', 'Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3')",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("env-default", 'ENV.fetch("DB_PASSWORD", "Tr0ub4dor3x")', "Tr0ub4dor3x"),
    ("table-row", "| name | value |\n|---|---|\n| OPENAI_API_KEY | Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3 |",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("table-row", "| prod | `DB_PASSWORD` | `Tr0ub4dor3x` |", "Tr0ub4dor3x"),
    ("prose-secret", "The password is Tr0ub4dor&3 for the admin account", "Tr0ub4dor&3"),
    ("prose-secret", "my API key is Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3, use it", "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("github-token", "GH=ghp_Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0Ja2Pq4_old",
     "ghp_Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0Ja2Pq4"),
    # from the review of the placement detectors: wordings and forms first missed
    ("prose-secret", "The password is: Tr0ub4dor3x", "Tr0ub4dor3x"),
    ("prose-secret", "Your API key was Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3", "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("prose-secret", "The DB_PASSWORD is now Tr0ub4dor3x", "Tr0ub4dor3x"),
    ("prose-secret", '{"text":"the password is Tr0ub4dor3x\\nok"}', "Tr0ub4dor3x"),
    ("docker-config", "a: " + DOCKER_WRAPPED + "\nkind: Secret", DOCKER_WRAPPED),
    ("table-row", "| JWT_SECRET          | Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3                      |",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("table-row", "| API_KEY | prod | Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3 |", "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    # the box tables CLIs print (`doppler secrets`, `infisical secrets`): leak review F4
    ("table-row", "\u2502 DB_PASSWORD \u2502 Xa4Kt9Vq2Lm7Rz \u2502", "Xa4Kt9Vq2Lm7Rz"),
    ("table-row", "\u2503 API_KEY \u2503 prod \u2503 Rt4vN8qL2mZ6xK0p \u2503", "Rt4vN8qL2mZ6xK0p"),
    ("pgpass", "db.internal:5432:prod:app:Pr0dPassw0rd-x9\r\n", "Pr0dPassw0rd-x9"),
    ("pgpass", "echo 'db:5432:prod:app:Pr0dPassw0rd-x9' > ~/.pgpass", "Pr0dPassw0rd-x9"),
    ("command-argument", "htpasswd -bBC 10 /etc/nginx/.htpasswd alice2 Tr0ub4dor3x", "Tr0ub4dor3x"),
    ("command-argument", "docker run --entrypoint htpasswd httpd:2 -Bbn bob Tr0ub4dor3x > a",
     "Tr0ub4dor3x"),
    ("command-argument", "echo Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3 | tr -d '\\n' | gh secret set API_KEY",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("command-argument", "gh secret set X \\\n  --body Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("command-argument", "docker login -u bob --password-stdin <<< 'Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3'",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("command-argument", "echo Tr0ub4dor3x | sudo -S apt install foo", "Tr0ub4dor3x"),
    ("signed-url", "https://a.net/c?sv=2022&amp;sig=Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0Ja%2BQ%3D",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0Ja%2BQ%3D"),
    ("signed-url", "https://d1.cloudfront.net/x?Signature=aB3~dEfGhIjKlMnOpQrSt0123~abcd__&K=1",
     "aB3~dEfGhIjKlMnOpQrSt0123~abcd__"),
    ("env-default", "process.env.API_KEY || 'Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3'",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("env-default", "os.getenv('API_KEY', default='Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3')",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    # from the second review
    ("env-default", "os.environ.get('API_KEY') or 'Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3'",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("env-default", "env('API_KEY','Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3')", "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("env-default", "import.meta.env.VITE_API_KEY ?? 'Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3'",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("prose-secret", "The password is Blue42-ocean-tiger", "Blue42-ocean-tiger"),
    ("prose-secret", "The `DB_PASSWORD` is `Tr0ub4dor3x`", "Tr0ub4dor3x"),
    ("table-row", "| DB_PASSWORD | sulfur-Ryan7-tinsel-pilot |", "sulfur-Ryan7-tinsel-pilot"),
    ("command-argument", "echo Tr0ub4dor3x | sudo -u postgres -S psql", "Tr0ub4dor3x"),
    ("command-argument", "echo Tr0ub4dor3x | passwd --stdin bob", "Tr0ub4dor3x"),
    ("pgpass", "echo 'db:5432:prod:app:Pr0dPassw0rd-x9' > ~/.pgpass && chmod 600 ~/.pgpass",
     "Pr0dPassw0rd-x9"),
    ("telegram-bot-token",
     "https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw4/getMe",
     "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw4"),
    ("discord-webhook", "https://discord.com/api/webhooks/123456789012345678/"
     "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdef",
     "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdef"),
    # gaps closed in 2026.11-11: Discord bot tokens, Ruby's env defaults, expect scripts
    ("discord-bot-token", f'client.run("{DISCORD}")', DISCORD),
    ("discord-bot-token", f"Authorization: Bot {DISCORD}", DISCORD),
    ("discord-bot-token", f"token:\\n{DISCORD_OLD}", DISCORD_OLD),  # after a JSON escape
    ("env-default", "ENV.fetch('API_KEY') { 'Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3' }",
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("env-default", 'ENV.fetch("DB_PASSWORD") { |_name| "Tr0ub4dor3x" }', "Tr0ub4dor3x"),
    ("env-default", "ENV['API_KEY'] || 'Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3'", "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("env-default", 'ENV["STRIPE_SECRET_KEY"] || "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"',
     "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("env-default", "$_ENV['API_KEY'] ?? 'Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3'", "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ("table-row", "| password | 1Password123! |", "1Password123!"),
    ("expect-send", 'expect "*assword*"\nsend "hunter2Secret\\r"', "hunter2Secret"),
    ("expect-send", 'spawn ssh db\nexpect "Password:"\nsend -- "Pa55word!\\r"\nexpect eof',
     "Pa55word!"),
    ("expect-send", "expect -c 'spawn ssh bob@h; expect \"password:\"; send \"Tr0ub4dor3x\\r\"'",
     "Tr0ub4dor3x"),
    ("expect-send", 'expect {\n  "yes/no" { send "yes\\r"; exp_continue }\n'
     '  "*assword*" { send "Tr0ub4dor3x\\r" }\n}', "Tr0ub4dor3x"),
    ("expect-send", 'expect -exact "Enter passphrase for key: "\nsend -- "sunshine\\n"',
     "sunshine"),
    ("expect-send", 'EXPECT "PASSWORD:"\nsend {Tr0ub4dor3x}', "Tr0ub4dor3x"),
    # the AWS CLI's own ways to store a secret key, and one said in prose (review 2026-12-01)
    ("aws-secret-key", f"aws configure set aws_secret_access_key {AWS_SECRET} --profile p",
     AWS_SECRET),
    ("aws-secret-key", f"AWS Secret Access Key [None]: {AWS_SECRET}", AWS_SECRET),
    ("aws-secret-key", f"my secret access key is {AWS_SECRET}", AWS_SECRET),
    # a flag before the secret's flag no longer takes it as its value
    ("cli-secret", "npx vercel deploy --prod --token 7f3k9Qp2Lm8Xw4Rt6Yz1Vb5Nc0Hd",
     "7f3k9Qp2Lm8Xw4Rt6Yz1Vb5Nc0Hd"),
    ("cli-secret", "gpg --batch --passphrase Tr0ub4dor3xQ -d f.gpg", "Tr0ub4dor3xQ"),
    # a name with its deployment or version after the sensitive word
    ("secret-assignment", "DB_PASSWORD_PROD=Tr0ub4dor3xQz9", "Tr0ub4dor3xQz9"),
    ("secret-assignment", "DB_PASSWORD_REPLICA=Rt4vN8qL2mZ6xK0p", "Rt4vN8qL2mZ6xK0p"),
    ("secret-assignment", "export API_KEY_ADMIN=Rt4vN8qL2mZ6xK0q", "Rt4vN8qL2mZ6xK0q"),
    ("secret-assignment", "export SSHPASS=Rt4vN8qL2mZ6xK0r", "Rt4vN8qL2mZ6xK0r"),
    ("secret-assignment", "LDAP_BIND_PW=Rt4vN8qL2mZ6xK0s", "Rt4vN8qL2mZ6xK0s"),
    ("secret-assignment", "API_KEY_V2=q3Lk9Zp2Xw7Rt5Yb1Nc8Vd4Mf6Hg0Js2",
     "q3Lk9Zp2Xw7Rt5Yb1Nc8Vd4Mf6Hg0Js2"),
    ("secret-assignment", "JWT_SECRET_DEV=Zx8Cv7Bn6Mq5Wr4Et3Ry2Tu1", "Zx8Cv7Bn6Mq5Wr4Et3Ry2Tu1"),
    *[(name, f"here: {token} (bare)", token) for name, token in SERVICE_TOKENS],
    # typed declarations; code and config forms with no NAME=
    ("secret-assignment", 'const apiKey: string = "q3Lk9Zp2Xw7Rt5Yb1Nc8Vd4Mf6Hg0Js3";',
     "q3Lk9Zp2Xw7Rt5Yb1Nc8Vd4Mf6Hg0Js3"),
    ("secret-assignment", 'API_TOKEN: str = "Py3Tk6Nn9Bb2Vv5Cc8Xx1Zz4"',
     "Py3Tk6Nn9Bb2Vv5Cc8Xx1Zz4"),
    ("code-secret", "define( 'DB_PASSWORD', 'Wp9xLk2Mq7Rt' );", "Wp9xLk2Mq7Rt"),
    ("code-secret", "os.environ['OPENAI_API_KEY'] = 'q3Lk9Zp2Xw7Rt5Yb1Nc8Vd4Mf6Hg0Js5'",
     "q3Lk9Zp2Xw7Rt5Yb1Nc8Vd4Mf6Hg0Js5"),
    ("code-secret", "set -gx OPENAI_API_KEY q3Lk9Zp2Xw7Rt5Yb1Nc8Vd4Mf6Hg0Js4",
     "q3Lk9Zp2Xw7Rt5Yb1Nc8Vd4Mf6Hg0Js4"),
    ("code-secret", "<server><id>nexus</id><password>Mv9nPw2Rt5Yq</password></server>",
     "Mv9nPw2Rt5Yq"),
    ("code-secret", '<add key="ApiKey" value="q3Lk9Zp2Xw7Rt5Yb1Nc8Vd4" />',
     "q3Lk9Zp2Xw7Rt5Yb1Nc8Vd4"),
    ("code-secret", "psql -c \"CREATE USER app WITH PASSWORD 'Sq1Lp4Ss7Ww0';\"", "Sq1Lp4Ss7Ww0"),
    ("code-secret", "mysql -e \"CREATE USER 'app'@'%' IDENTIFIED BY 'My5Sq8Lp2Ww';\"",
     "My5Sq8Lp2Ww"),
    # a .env or YAML line's value is its whole word, punctuation and all
    ("secret-assignment", "DB_PASSWORD=Xy)9kL2(mNq", "Xy)9kL2(mNq"),
    ("secret-assignment", "REDIS_PASSWORD=Gx7=Lk2=Pq9z", "Gx7=Lk2=Pq9z"),
    ("secret-assignment", "SMTP_PASSWORD=Tr0ub;4dor3xQ", "Tr0ub;4dor3xQ"),
    ("secret-assignment", "  password: Hf2Lm}N0p]Rs7", "Hf2Lm}N0p]Rs7"),
    ("cli-secret", "mysql -uroot -p'Tr0ub4dor&3x' app", "Tr0ub4dor&3x"),
    # ... but a value still ends at the next query parameter or assignment of its line
    ("secret-assignment", "access_token=Xa9kL2mNq7Rt&token_type=bearer&expires_in=3600",
     "Xa9kL2mNq7Rt"),
    ("secret-assignment", "  token: Zq8Xw2Lm5Nc7Vb1T&token_type=bearer", "Zq8Xw2Lm5Nc7Vb1T"),
    ("secret-assignment", "API_KEY=Zq8Xw2Lm5Nc7Vb1T,SECRET_KEY=Hq7Lm2Np9Rs4Tv6W",
     "Zq8Xw2Lm5Nc7Vb1T"),
    # values that look like identifiers, but hold a token's randomness
    ("secret-assignment", "TOKEN=tok_8f3a9c2e1b7d4f60", "tok_8f3a9c2e1b7d4f60"),
    ("secret-assignment", "X_TOKEN=PROD_8F3A9C2E1B7D", "PROD_8F3A9C2E1B7D"),
    ("secret-assignment", "token: ABC123_DEF456_GHI789", "ABC123_DEF456_GHI789"),
    # widening only adds: a lowercase .properties line, a YAML value before a comment
    ("secret-assignment", "spring.datasource.password=S3cr3t)Pw9", "S3cr3t)Pw9"),
    ("secret-assignment", "api_key=Zq8Xw2Lm5Nc7Vb1T)Q", "Zq8Xw2Lm5Nc7Vb1T)Q"),
    ("secret-assignment", "  password: Tr0ub4dor)x # prod", "Tr0ub4dor)x"),
    ("secret-assignment", "TOKEN=Zq8Xw2Lm5Nc7Vb1T;token2", "Zq8Xw2Lm5Nc7Vb1T"),
    ("secret-assignment", "DB_PASSWORD=(Tr0ub4dor)x9", "(Tr0ub4dor)x9"),
    ("secret-assignment", 'apiKey: Base64String = "q3Lk9Zp2Xw7Rt5Yb1Nc8Vd4Mf6Hg0Js3"',
     "q3Lk9Zp2Xw7Rt5Yb1Nc8Vd4Mf6Hg0Js3"),
    ("secret-assignment", "DB_PASSWORD_RO=Tr0ub4dor3xQz9", "Tr0ub4dor3xQz9"),
    ("code-secret", "ALTER USER \"bob\" WITH PASSWORD 'Sq1Lp4Ss7Ww0'", "Sq1Lp4Ss7Ww0"),
    ("code-secret", "CREATE USER app\n  WITH LOGIN\n  PASSWORD 'Sq1Lp4Ss7Ww0';", "Sq1Lp4Ss7Ww0"),
    # said in Chinese, Japanese and Korean (leak review 2026-12-01, F9)
    ("prose-secret", "数据库密码是Qz7yOA0HNkIn3OIOn，请保管好", "Qz7yOA0HNkIn3OIOn"),
    ("prose-secret", "密碼為 Qz7yOA0HNkIn3", "Qz7yOA0HNkIn3"),
    ("prose-secret", "令牌：abcD1234efgH5678。", "abcD1234efgH5678"),
    ("prose-secret", "密码是「Qz7yOA0HNkIn3」", "Qz7yOA0HNkIn3"),
    ("prose-secret", "パスワードは Jp4kR8sT2vW6xY0z です", "Jp4kR8sT2vW6xY0z"),
    ("prose-secret", "パスワード：Jp4kR8sT2vW6xY0zです", "Jp4kR8sT2vW6xY0z"),
    ("prose-secret", "APIキーは ak93JdkL20dkQm です", "ak93JdkL20dkQm"),
    ("prose-secret", "비밀번호는 Kr7mN2pQ9sT4vX1z 입니다", "Kr7mN2pQ9sT4vX1z"),
    ("prose-secret", "API 키: sk9Lm2Np4Qr6St8Uv", "sk9Lm2Np4Qr6St8Uv"),
    # a libpq connection string's password, a word of letters too (F10)
    ("secret-assignment",
     "psql 'host=db.internal port=5432 user=app password=AbkkvNSFZKsxAsxV sslmode=require'",
     "AbkkvNSFZKsxAsxV"),
    ("secret-assignment", "DSN: dbname=app password=correcthorse", "correcthorse"),
    # headers that hold nothing but a key: GitLab's PRIVATE-TOKEN, X-Api-Key (F10)
    ("auth-header", "curl -H 'PRIVATE-TOKEN: AbkkvNSFZKsxAsxVqwer' https://gitlab.example.com/api",
     "AbkkvNSFZKsxAsxVqwer"),
    ("auth-header", '{"headers": {"X-Api-Key": "AbkkvNSFZKsxAsxVqwerTy"}}',
     "AbkkvNSFZKsxAsxVqwerTy"),
    # a quoted value holding the other quote or an escaped one ran only to it (secret review)
    ("secret-assignment", 'export DB_PASSWORD="ab\\"cd9Kq2!x"', 'ab\\"cd9Kq2!x'),
    ("secret-assignment", "DB_PASSWORD='it\"s-Xk29!q'", 'it"s-Xk29!q'),
    ("secret-assignment", 'PASSWORD="it\'s-Yk29!q" ./run.sh', "it's-Yk29!q"),
    ("secret-assignment", '{"password": "ab\\"cd9Kq2!z", "user": "x"}', 'ab\\"cd9Kq2!z'),
    ("secret-assignment", "api_key: 'Xk29\"Lm!a8Qz'", 'Xk29"Lm!a8Qz'),
    # "password" in other languages, and a full-width "＝" (secret review)
    ("secret-assignment", "Passwort: Geheim123!x", "Geheim123!x"),
    ("prose-secret", "mein Datenbankpasswort ist Geheim123!z", "Geheim123!z"),
    ("prose-secret", "le mot de passe est Secret8xq", "Secret8xq"),
    ("prose-secret", "la contraseña es Secreto8!xq", "Secreto8!xq"),
    ("secret-assignment", "senha: Segredo9!xq", "Segredo9!xq"),
    ("secret-assignment", "пароль: Parol9!xqa", "Parol9!xqa"),
    ("secret-assignment", "Hasło: Haslo9!xqab", "Haslo9!xqab"),
    ("secret-assignment", "password＝Hunter2xQ9!", "Hunter2xQ9!"),
    ("secret-assignment", "api_key：Xk29qLm!a8Qz", "Xk29qLm!a8Qz"),
    # (review of the above) foreign names as config keys and env names; more prose forms
    ("secret-assignment", '{"passwort": "Tr0ub4dor&3x"}', "Tr0ub4dor&3x"),
    ("secret-assignment", '"contraseña": "Tr0ub4dor&3"', "Tr0ub4dor&3"),
    ("secret-assignment", "passwort: sonnenschein", "sonnenschein"),
    ("secret-assignment", "DB_PASSWORT=sonnenschein", "sonnenschein"),
    ("secret-assignment", "KENNWORT=geheimnis", "geheimnis"),
    ("prose-secret", "Mot de passe\u00a0: Tr0ub4dor31", "Tr0ub4dor31"),
    ("prose-secret", "Lösenordet är Tr0ub4dor32", "Tr0ub4dor32"),
    ("prose-secret", "Adgangskoden er Tr0ub4dor36", "Tr0ub4dor36"),
    ("prose-secret", "Пароль - Tr0ub4dor34", "Tr0ub4dor34"),
    ("prose-secret", "**Passwort:** Tr0ub4dor35", "Tr0ub4dor35"),
    ("prose-secret", "le mot de passe est « Tr0ub4dor37 »", "Tr0ub4dor37"),
    # a value after a full-width separator stops at CJK punctuation
    ("secret-assignment", "用户名：admin，password：Tr0ub4dor33，端口：5432", "Tr0ub4dor33"),
    # a shell or .env line's quoted value is the password, words and all
    ("secret-assignment", 'DB_PASSWORD="my secret pass phrase 42"', "my secret pass phrase 42"),
    ("secret-assignment", "export SMTP_PASS='correct horse battery staple'",
     "correct horse battery staple"),
    ("secret-assignment", 'DB_PASSWORD="sunshine"\nDB_USER=app', "sunshine"),
    # ... after the words and numbers that set a variable (review)
    ("secret-assignment", 'ENV DB_PASSWORD="correct horse battery"', "correct horse battery"),
    ("secret-assignment", 'docker run --rm -e DB_PASSWORD="correct horse battery" img',
     "correct horse battery"),
    ("secret-assignment", 'sudo DB_PASSWORD="correct horse battery" ./run.sh',
     "correct horse battery"),
    ("secret-assignment", 'declare -x DB_PASSWORD="correct horse battery"',
     "correct horse battery"),
    ("secret-assignment", '$ DB_PASSWORD="correct horse battery" make deploy',
     "correct horse battery"),
    ("secret-assignment", '     1\tDB_PASSWORD="correct horse battery"', "correct horse battery"),
    ("secret-assignment", '.env:3:DB_PASSWORD="correct horse battery"', "correct horse battery"),
    ("secret-assignment", 'DB_PASSWORD="correct horse battery"# comment',
     "correct horse battery"),
    # Python's string prefixes (redaction hunt 2026-12-05)
    ("secret-assignment", 'DB_PASSWORD = r"Ty6hG2kLp9QwEr"', "Ty6hG2kLp9QwEr"),
    ("secret-assignment", "app.secret_key = b'Zm4nB7vC1xQ9wE3rT5yU'", "Zm4nB7vC1xQ9wE3rT5yU"),
    # a map's subscript, as os.environ's was (redaction hunt 2026-12-05)
    ("code-secret", "app.config['SECRET_KEY'] = 'Hq7iVpzz63FfkCkd83Jdk3k2'",
     "Hq7iVpzz63FfkCkd83Jdk3k2"),
    ("code-secret", 'config["password"] = "Pq8sLm2Zx0TnWv"', "Pq8sLm2Zx0TnWv"),
    ("code-secret", 'headers["X-API-Key"] = "Rk3vN9pQ2wXy7LmB5tZc8HdF"',
     "Rk3vN9pQ2wXy7LmB5tZc8HdF"),
    ("code-secret", 'st.secrets["api_key"] = b"Zm4nB7vC1xQ9wE3rT5yU"', "Zm4nB7vC1xQ9wE3rT5yU"),
    # ... where a command starts inside its line: after `&&`, `;`, `(`, a label (bug hunt)
    ("secret-assignment", 'cd app && DB_PASSWORD="Blue Sky 42 dancing" ./migrate',
     "Blue Sky 42 dancing"),
    ("secret-assignment", 'make build; DB_PASSWORD="Blue Sky 42 dancing" make run',
     "Blue Sky 42 dancing"),
    ("secret-assignment", '(DB_PASSWORD="Blue Sky 42 dancing" ./migrate)', "Blue Sky 42 dancing"),
    ("secret-assignment", 'Now run: DB_PASSWORD="Blue Sky 42 dancing" npm start',
     "Blue Sky 42 dancing"),
    ("secret-assignment", 'if true; then DB_PASSWORD="Blue Sky 42 dancing" ./x; fi',
     "Blue Sky 42 dancing"),
    # camelCase words that name no field are a secret, as before (review)
    ("secret-assignment", "TOKEN=purpleMonkeyDishwasher7", "purpleMonkeyDishwasher7"),
    ("secret-assignment", '{"token": "purpleMonkeyDishwasher7"}', "purpleMonkeyDishwasher7"),
    ("secret-assignment", '{"key": "hunterHunterHunter99"}', "hunterHunterHunter99"),
    # the quotes hold the whole NAME=value: docker-compose, `-e`, a JSON array (review s42)
    ("secret-assignment", '  - "DB_PASSWORD=correct horse battery"', "correct horse battery"),
    ("secret-assignment", 'docker run -e "DB_PASSWORD=correct horse battery" img',
     "correct horse battery"),
    ("secret-assignment", '"Env": ["DB_PASSWORD=correct horse battery", "X=1"]',
     "correct horse battery"),
    # a quote inside single quotes, as a shell and YAML write it
    ("secret-assignment", "PASSWORD='it'\\''s s3cret'", "it'\\''s s3cret"),
    ("secret-assignment", "password: 'it''s-a-s3cret'", "it''s-a-s3cret"),
    # a short passphrase may end in "!", and so may a password said in prose
    ("secret-assignment", 'DB_PASSWORD="sesame open!"', "sesame open!"),
    ("prose-secret", "The password is Tr0ub4dor3x!", "Tr0ub4dor3x!"),
    # Italian "è", Turkish capitals, plurals, and what the password is for
    ("prose-secret", "La password è Tr0ub4dor33", "Tr0ub4dor33"),
    ("prose-secret", "ŞİFRE: Tr0ub4dor33", "Tr0ub4dor33"),
    ("prose-secret", "Şifreniz: Tr0ub4dor33", "Tr0ub4dor33"),
    ("prose-secret", "Passwörter: Tr0ub4dor33", "Tr0ub4dor33"),
    ("prose-secret", "Пароли: Tr0ub4dor33", "Tr0ub4dor33"),
    ("prose-secret", "Das Passwort für die DB ist Tr0ub4dor33", "Tr0ub4dor33"),
    ("prose-secret", "Le mot de passe admin est Tr0ub4dor33", "Tr0ub4dor33"),
    ("prose-secret", "Пароль администратора: Tr0ub4dor33", "Tr0ub4dor33"),
    ("prose-secret", "The password for the DB is Tr0ub4dor33", "Tr0ub4dor33"),
    ("prose-secret", "Password for root: Tr0ub4dor33", "Tr0ub4dor33"),
    # realistic tool output (secret review s43): name/value pairs as CLIs print them
    ("name-value-secret",
     '{ "environment": [\n      { "name": "DB_PASSWORD",\n        "value": "pcXz#c5h9gtb" } ] }',
     "pcXz#c5h9gtb"),
    ("name-value-secret", '{"key":"DB_PASSWORD","value":"pcXz#c5h9gtb","protected":false}',
     "pcXz#c5h9gtb"),
    ("name-value-secret", '{"Name": "/prod/db/password", "Value": "pcXz#c5h9gtb"}',
     "pcXz#c5h9gtb"),
    ("name-value-secret", '{"value": "pcXz#c5h9gtb", "name": "DB_PASSWORD"}', "pcXz#c5h9gtb"),
    # Terraform says which outputs are secret
    ("sensitive-value",
     '{\n  "db_password": {\n    "sensitive": true,\n    "type": "string",\n'
     '    "value": "oqrz#MlY9kOT"\n  }\n}', "oqrz#MlY9kOT"),
    ("sensitive-value",
     '"outputs": {"admin_pw": {"value": "oqrz#MlY9kOT", "type": "string", "sensitive": true}}',
     "oqrz#MlY9kOT"),
    # passwords on other clients' command lines, and Redis's own
    ("cli-secret", "mongosh --host db -u admin -p 'wOix#IWD98CG'", "wOix#IWD98CG"),
    ("cli-secret", "sqlcmd -S db -U sa -P 'M1aK#kRb9JBa' -Q 'select 1'", "M1aK#kRb9JBa"),
    ("cli-secret", "az login --service-principal -u app -p bKt6#hRk9Hcy --tenant t",
     "bKt6#hRk9Hcy"),
    ("cli-secret", "oc login https://api:6443 -u developer -p Dev3l0perPw", "Dev3l0perPw"),
    ("cli-secret", 'ldapsearch -x -D "cn=admin,dc=x" -w 4nzD#G9j9j6N', "4nzD#G9j9j6N"),
    ("cli-secret", "keytool -importkeystore -srcstorepass Xk29qLm8 -noprompt", "Xk29qLm8"),
    ("cli-secret", "zip -P Zk29qLm8x secret.zip a.txt", "Zk29qLm8x"),
    ("cli-secret", "7z a -pQk29qLm8x out.7z dir", "Qk29qLm8x"),
    ("redis-password", "bind 127.0.0.1\nrequirepass H2My#gv49s86\n", "H2My#gv49s86"),
    ("redis-password", "127.0.0.1:6379> AUTH default Hq8#mQ2pLw7z\nOK", "Hq8#mQ2pLw7z"),
    # code: Rust's &str, setters, glued and symmetric-key names, INI lines, Django's key
    ("secret-assignment", 'pub const API_KEY: &str = "YP1cK9mQz2Lw8Xr4Tn6Vb";',
     "YP1cK9mQz2Lw8Xr4Tn6Vb"),
    ("code-secret", 'os.Setenv("GITHUB_TOKEN", "fqv6Xk29qLm8Tn4Rw2Yb")', "fqv6Xk29qLm8Tn4Rw2Yb"),
    ("code-secret", 'System.setProperty("javax.net.ssl.keyStorePassword", "Tr0ub4dor&3x");',
     "Tr0ub4dor&3x"),
    ("secret-assignment", "HMAC_KEY=" + "24238a0aa781ab2c5a0154af652a5c79" * 2,
     "24238a0aa781ab2c5a0154af652a5c79" * 2),
    ("secret-assignment", "DBPASS=nW4rKp9sYd", "nW4rKp9sYd"),
    ("secret-assignment", "[client]\nuser=root\npassword=Sunflower\nhost=db", "Sunflower"),
    ("secret-assignment", 'SECRET_KEY = "koug11vjgag-accebjwnp8y-zynuudftt1jxg"',
     "koug11vjgag-accebjwnp8y-zynuudftt1jxg"),
    # (second review s43) a "#" far before a directive; braces inside Terraform's values;
    # Azure's primary key; SSM's Type between name and value; a service account's key tail
    ("redis-password", "# Redis setup\ndocker run -d --name cache -p 6379:6379 redis:7 "
     "redis-server --appendonly yes --requirepass Hq8mQ2pLw7z", "Hq8mQ2pLw7z"),
    ("redis-password", "127.0.0.1:6379> auth Hq8mQ2pLw7z", "Hq8mQ2pLw7z"),
    ("sensitive-value",
     '{"db_password": {"value": "p{ss}W0rd-1234", "type": "string", "sensitive": true}}',
     "p{ss}W0rd-1234"),
    ("sensitive-value", '{"x": {"sensitive": true, "type": "string", "value": "ab}cd!W0rd-1234"}}',
     "ab}cd!W0rd-1234"),
    ("secret-assignment", '"primaryKey": "fqv6Xk29qLm8Tn4Rw2YbKlMnOp=="',
     "fqv6Xk29qLm8Tn4Rw2YbKlMnOp=="),
    ("secret-assignment", "k8s:secret:Xk29qLm8Tn4Rw2Yb", "Xk29qLm8Tn4Rw2Yb"),
    ("name-value-secret",
     '{"Name": "/prod/db/password", "Type": "SecureString", "Value": "pcXz#c5h9gtb"}',
     "pcXz#c5h9gtb"),
    ("code-secret", 'env::set_var("DB_PASSWORD", "Tr0ub4dor&3x");', "Tr0ub4dor&3x"),
    ("cli-secret", "docker exec -it db mongosh -u admin -p Mo9ngoPw12", "Mo9ngoPw12"),
    # (third review s43) the client run after sudo, a prompt, docker exec, ssh or a path;
    # a random value put in a map; AUTH in a heredoc; requirepass set by sed or echo
    ("cli-secret", "sudo -u x mongosh -p Mo9ngoPw12", "Mo9ngoPw12"),
    ("cli-secret", "docker compose exec mongo mongosh -u a -p Mo9ngoPw12", "Mo9ngoPw12"),
    ("cli-secret", "ssh db1 mongosh -p Mo9ngoPw12", "Mo9ngoPw12"),
    ("cli-secret", "$JAVA_HOME/bin/keytool -list -storepass Kt3vBn6Mx9Pw", "Kt3vBn6Mx9Pw"),
    ("cli-secret", "LANG=C zip -P Zk29qLm8x a.zip b", "Zk29qLm8x"),
    ("code-secret", 'props.put("password", "Tr0ub4dor&3x")', "Tr0ub4dor&3x"),
    ("redis-password", "redis-cli -h cache <<EOF\nAUTH Rh4cDf5Gt8Yu\nPING\nEOF", "Rh4cDf5Gt8Yu"),
    ("redis-password",
     "sed -i 's/^# requirepass foobared/requirepass Rs5eWq2Zx7Io/' /etc/redis/redis.conf",
     "Rs5eWq2Zx7Io"),
    ("redis-password", 'echo "requirepass Sunflower" >> redis.conf', "Sunflower"),
    ("name-value-secret", "- name: db_password\n  value: Sunflower", "Sunflower"),
    ("sensitive-value", '{"sensitive": true, "value": "(Xy7kqLm9<Tr2!"}', "(Xy7kqLm9<Tr2!"),
    ("secret-assignment", "password=correct_horse_battery_staple", "correct_horse_battery_staple"),
    # an INI file's spaced `key = value` lines under a section header (my.cnf, .pypirc)
    ("secret-assignment", "[client]\nuser = root\npassword = Sunflower\nhost = db", "Sunflower"),
    ("secret-assignment", "[pypi]\n  username = __token__\n  password = Marshmallow",
     "Marshmallow"),
    # Ruby's and Node's environment maps; a spaced --password= argument in a list
    ("code-secret", 'ENV["API_KEY"] = "Zq8Xw2Lm5Nc7Vb1TqQ"', "Zq8Xw2Lm5Nc7Vb1TqQ"),
    ("code-secret", 'process.env["DB_PASSWORD"] = "Tr0ub4dor&3x";', "Tr0ub4dor&3x"),
    ("secret-assignment", 'args: ["--password=correct horse battery", "--verbose"]',
     "correct horse battery"),
    # a capital İ anywhere in the text lowercased nothing else that was not ASCII
    ("secret-assignment", "İstanbul ofisi. Пароль: Tr0ub4dor34", "Tr0ub4dor34"),
]  # fmt: skip
NEGATIVES = [
    "hf_abc\nnot a token here",  # a prefix ending a line, prose after it
    "see eyJ\nfoo bar",
    "ghp_R7kP2mQ9xL4vN8wT3\nshort",  # joined, still too short for the format
    "AKIA\nEXAMPLE",
    "sk-learn is a package; task-management-system-component-v2",
    "sk-" + "a" * 19,
    "the flag is sk-abcdefghijklmnopqrstuvwxyzabcd (all lower case words)",
    "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "AKIA" + "A" * 16,
    "xAKIAABCDEFGHIJ0123456",
    "commit 3f2a9c1d5e7b8a0f1234567890abcdef12345678 and 3F2A9C1D5E7B8A0F1234567890ABCDEF12345678",
    "id: 550e8400-e29b-41d4-a716-446655440000",
    "hf_hub_download(repo_id, filename)",
    "https://github.com/badlogic/pi-mono and git@github.com:foo/bar.git",
    "http://localhost:8080/path@v2",
    "Bearer tokens are short-lived; Authorization: Bearer ${TOKEN}",
    "Authorization: Bearer $GITHUB_TOKEN",
    "Authorization: Basic <base64>",
    "cookie: string; cookies: req.headers.cookie",
    "xoxb-not-a-real-token-here",
    "eyJhbGciOiJIUzI1NiJ9 alone is only a header",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
]
ASSIGNMENT_NEGATIVES = [
    # commands, variables, formats, options, notes and messages, not passphrases (review)
    'export DB_PASSWORD="$(vault read -field=pw secret/db)"',
    'PASSWORD="$PW1 $PW2"',
    'PASSWORD="%s %s"',
    'PASSWORD="{0} {1}"',
    'PASSWD_OPTS="-l -m 5 -x 90"',
    'PASSWORD_TITLE="Sign in"',
    'PASSWORD_ERR="must contain a digit"',
    'DB_PASS_HELP="ask the DBA team"',
    'PASSWORD="TODO set me"',
    'PASSWORD="same as above"',
    'password: "don\'t"; next: "x"',
    'echo DB_PASSWORD="two words here" is wrong',
    'cd app && echo DB_PASSWORD="two words here" is wrong',
    # code, not values: TypeScript's non-null `!`, JSX, a map's rule or key (redaction hunt)
    "password: process.env.DB_PASSWORD!,",
    "const db = { password: config.db.password! };",
    '<input type="password" name="password" value={password} />',
    'rules["password"] = "required|min:8"',
    'cache["key"] = "user-42-session"',
    'row["name"] = "Alice Smith"',
    'echo "DB_PASSWORD=two words here"',  # a message, not a variable set
    # (second review s43) docs and other protocols, ports, maps, translations, hashes
    "The requirepass directive sets a password.",
    "requirepass should be long.",
    'env["mode"] = "development"',
    "def f():\n    password = hunter\n    return password",
    "[client]\npassword = config.password",
    "we reset requirepass tonight",
    "mongo-express -p 8081",
    'cache.set("session_token", "user-42-session")',
    "AUTH PLAIN\n334\nAUTH LOGIN",
    "docker run --name mongo -p 27017:27017 -d mongo:7",
    "rsync -e ssh backup.zip -P host:/x",
    '{"key": "password", "value": "Mot de passe"}',
    'rules.put("password", "required|min:8")',
    'fields.put("password", "VARCHAR(255)")',
    'DB_PASSWORD="Do not commit!"',
    "password=config.password",
    "password=hashed_pw",
    "=" * 64 + "\n-----END RSA PRIVATE KEY-----",
    '{"sensitive": true, "value": "(sensitive value)"}',
    # an ARN's fields, pagination and public keys, examples, other commands' -p/-P/-w
    '"Resource": "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-password-AbCdEf"',
    '{"nextPageToken": "CiAKGjBpNDd2Nmp2Zml2cXRsYmVnN3RsMTRwb3ZjGgIIAQ"}',
    'idempotencyKey: "a8f3k2m9x7q1w4e6"',
    "STRIPE_PUBLISHABLE_KEY=pk_live_51HxY2ZAbCdEfGh",
    '{"sensitive": false, "value": "https://example.com/x"}',
    "# requirepass foobared",
    "requirepass $REDIS_PASSWORD",
    "The AUTH command is documented",
    "zip -r -P $PW x.zip y",
    "ldapsearch -w 80 foo",
    "BYPASS=nW4rKp9sYd",
    'cache.set("user_name", "alice_smith")',
    "    password=password,",
    "CLIENT_SECRET=my-app-client-v2-production",
    'SECRET_KEY = "django-insecure-key-for-tests-only2"',
    '{"name": "replicas", "value": "3"}',
    "hello\nabcdefghijklmnopqrstu\n-----END RSA PRIVATE KEY-----",
    '  - "DB_PASSWORD=TODO set me"',
    'DB_PASSWORD="Please set this now!"',
    "password: 'don''t'",
    "name: 'O''Brien'",
    "The token for each request is refreshed",
    "The password for user1 is stored in vault",
    "the password for admin2 is hashed with bcrypt12",
    # code in another language is judged as code in English is (review)
    "passwort = base64.b64decode(enc)",
    "haslo = hashlib.sha512(haslo).hexdigest()",
    # key-<md5> is a cache key; UPPER_CASE constants and Square's public app id (review)
    "redis-cli GET cache:key-9dd4e461268c8034f5c8564e155c67a6",
    "EAAGAME_CONTROLLER_AXIS_LEFT_STICK_HORIZONTAL_DEADZONE_CONFIGURATION_V2",
    "const appId = 'sq0idp-" + rand(random.Random(5), 22) + "';",
    "sq0atp-AAAAAAAAAAAAAAAAAAAAAA",
    "Passwort vergessen? Klicken Sie hier123",
    "Das Passwort ist zurückgesetzt worden",
    "la contraseña es demasiado corta",
    "Passwort: ********",
    "Passwort: ${DB_PASSWORD}",
    "пароль: не менее 8 символов",
    "key-value-store-implementation-for-redis-cluster",
    'primaryKey: "userId2024"',  # a camelCase name under a weak name (secret review)
    '{"key": "orderItemId12", "token": "nextPageToken"}',
    "cache key-00000000000000000000000000000000",
    "EAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    # quoted words under a password name, but no shell or .env line's own value
    'password: "correct horse battery staple"',
    'DB_PASSWORD = "two words here"',
    'const PASSWORD_HINT="two words here"',
    'ERROR_PASSWORD="Wrong password, try again"',
    'echo "DB_PASSWORD=\\"$DB_PASSWORD\\""',
    'x = {"token": "it\'s", "apiKey": \'ab"c\'}',
    'password: "it\'s short"',
    "ANTHROPIC_API_KEY=sk-ant-...",
    "OPENAI_API_KEY=${OPENAI_API_KEY}",
    "OPENAI_API_KEY=$OPENAI_API_KEY",
    "API_KEY=<TOKEN>",
    "api_key: your-api-key-here",
    "password: xxx",
    "PASSWORD=********",
    "secret = 'changeme'",
    'token: ""',
    "GITHUB_TOKEN=[REDACTED:github-token:1]",
    "apiKey = await getApiKey()",
    "const token = options.token;",
    "apiKey: string",
    "pwd = process.cwd()",
    "PWD=/home/alice/project",
    "keyData === other",
    "max_tokens=4096",
    "author: Mario Zechner",
    "SSH_AUTH_SOCK=/tmp/ssh-abc/agent.1",
    "密码是 password 吗?",
    "密码为 SHA256-hashed",
    "主キーは user_id_2024 です",
    "密码是 ${DB_PASSWORD}",
    "密码是 src/config/settings.py",
    "psycopg2.connect(host=host, user=user, password=db_password)",
    "conn = psycopg2.connect(dbname='app', password=pw_value)",
    "host=db user=app password=${PGPASSWORD}",
    "curl -H 'PRIVATE-TOKEN: <your_access_token>'",
    "curl -H 'PRIVATE-TOKEN: $GITLAB_TOKEN'",
    "curl -H 'PRIVATE-TOKEN: personalaccesstoken'",
    "X-Api-Key: YourApiKeyHere",
    "headers = {'X-Api-Key': api_key}",
    # names in code after a key header (review 2026-12-02)
    '"x-api-key": opts.apiKey',
    "X-Api-Key: settings.OPENAI_API_KEY",
    "x-api-key: apiKeyFromEnv",
    "X-Vault-Token: vaultClient.token",
    "key: 'ArrowUp'",
    "storageKey = 'pi-session-tree-state'",
    "cacheKey: '3f2a9c1d5e7b8a0f1234567890abcdef'",
    '{"key": "550e8400-e29b-41d4-a716-446655440000"}',
    "token: '}'",
    "password_hint = 'first pet'",
    "SECRET_KEY_PATH=/etc/app/secret.key",
    # -p / -u / flags that are not secrets
    "ssh -p 2222 deploy@host",
    "mkdir -p src/components/forms",
    "docker login --password-stdin registry.example.com",
    "mysql -p shop_db",
    "curl -u $CI_USER:$CI_PASSWORD https://ci.example.com",
    "git log --author someone --since yesterday",
    "pi --token-file ~/.config/token",
    "deploy --password $DB_PASSWORD",
    'deploy --password "${DB_PASSWORD}"',
    "ssh-add --key ~/.ssh/id_ed25519",
    "aws secretsmanager get-secret-value --secret-id prod/db",
    "the --password flag reads the password from the prompt",
    "bypass=true compass=north",
    "PAGE_TOKEN=next",
    # false positives a review of the first version found
    "Use --password followed by your password",
    "run mysql with the --password option",
    "mysql --password --host db",
    "docker login -p flag is insecure",
    "The docker login -p option exposes it",
    "mysql -h db -P3306 -uroot -p mydb",
    "mysqldump -P3307 shop",
    "sshpass -p x ssh -p 8022 host",
    "sshpass -f pwfile ssh host mkdir -p /tmp/build",
    '"password": "must be 8+ chars"',
    'password: "at least 8 characters"',
    '{ pass: "3 of 4" }',
    # look like the new shapes, are not secrets
    "the machine asks for your password twice",
    "restart the machine then password reset",
    "- name: LOG_LEVEL\n  value: debug",
    "client-certificate-data: " + CERT_B64,
    "items.map(token => token.trim())",
    "interface User {\n  password: string\n}",
    "http://[::1]:8080/@scope/pkg",
    "ssh://git@github.com/org/repo and https://alice@example.com",
    "https://user_name_longer_than_twenty@host.com",
    "the price is $5$ per item",
    'set_sensitive {\n  name  = "auth.password"\n  value = var.db_password\n}',
    "https://build-agent-01-production-eu@host.com/x",
    "machine learning login page: password resets",
    "api_key: sk-****1234",
    "  password: !vault |\n    $ANSIBLE_VAULT;1.1;AES256",
    "  password: ${DB_PASSWORD}\n",
    "https://example.com:8443/api?email=a@b.com",
    "http://localhost:8080/path@v2",
    "postgres://user:password@localhost/db",
    # look like the placement shapes, are not secrets
    "the token is valid for 3600 seconds",
    "The password is stored in 1Password under prod-db",
    "the api key is loaded from settings.json",
    "| Name | Value |\n|---|---|\n| max_tokens | 4096 |\n| token_count | 12345678 |",
    "| API_KEY | `${API_KEY}` |",
    "| key_id | 2024-01-01T00:00:00Z |",
    "| password_min_length | 12345678 |",
    "echo $TOKEN | docker login -u bob --password-stdin",
    'gh secret set NPM_TOKEN --body "$NPM_TOKEN"',
    "htpasswd -B -C 10 /etc/nginx/.htpasswd alice",
    "os.getenv('API_TOKEN', 'changeme')",
    "os.environ.get('LOG_LEVEL', 'info123456')",
    "def verify(sig=signature): pass",
    "localhost:5432:*:postgres:*",
    "10.0.0.1:5432:mydb:admin:${PGPASS}",
    "2024-01-01 12:00:00:123:456:789",
    # schema and type tables, /etc/shadow and passwd lines, technical adjectives
    "| Column | Type | Nullable |\n|---|---|---|\n| password | VARCHAR(255) | no |",
    "| password | varchar(60) |\n| api_token | char(64) |\n| remember_token | varchar(100) |",
    "| password | Optional[str] |\n| password | user.password |\n| password | **required** |",
    "\u2502 password \u2502 VARCHAR(255) \u2502 no \u2502\n\u2502 api_token \u2502 char(64) \u2502",
    "| webhook_secret | HMAC-SHA256 |\n| auth_token | HttpOnly;Secure |",
    "| api_key | v1.2.3-beta4 |",
    "root:*:19000:0:99999:7:::\nnobody:*:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
    "The secret is SHA256-hashed. The token is UTF-16LE encoded. The api key is 40-characters",
    "The password is Argon2id-hashed, the password is bcrypt-12, the token is 1h-lived.",
    "Private-Lines: 3\nThanks\nfor\nreading\n",
    "| DB_PASSWORD | production | 2024-04-12T10:00:00Z |\n| password | min8,max128 |",
    "The key is AES-256-GCM, the secret is PBKDF2-HMAC-SHA256, the token is RS256/ES256",
    "Run `gh secret set API_KEY` and then `git checkout -b feature-2024`",
    "echo 'net.ipv4.ip_forward=1' | grep ip | sudo -S tee /etc/sysctl.conf",
    # look like the shapes added in 2026.11-11, are not secrets: dotted names, versions and
    # hosts whose first part is no user id in base64, placeholder defaults, password managers
    "MyApplicationConfigLoadr.Module.SomethingVeryLongIdentifierName",  # decodes to no digits
    _b64("12345678901234567a") + ".Module.SomethingVeryLongIdentifierName1",  # M…, not digits
    _b64("0123456789012345678") + ".GxR3kQ.aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zA",  # ids have no 0
    _b64("11765432109876543210") + "5.GxR3kQ.aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zA",  # 28: too long
    "MTIzNDU2Nzg5MDEyMzQ1Njc4.XXXXXX.XXXXXXXXXXXXXXXXXXXXXXXXXXX",  # the docs' dummy
    "x" + DISCORD + " and " + DISCORD + "_v2",  # glued to a word: part of something else
    "pip install pkg==1.2.3; see docs.python.org/3.12/library/base64.urlsafe_b64decode.html",
    "ENV.fetch('API_KEY') { 'changeme' }",
    "ENV['API_KEY'] || ''",
    "ENV['API_KEY'] || 'your-api-key-here'",
    'ENV.fetch("API_KEY") { "${API_KEY}" }',
    "ENV['LOG_LEVEL'] || 'info123456'",
    "ENV.fetch('API_KEY') { raise 'missing API_KEY' }",
    'ENV["API_KEY"] || "#{prefix}_a1b2c3d4e5"',  # Ruby interpolation: computed
    "| password | 1Password |\n| DB_PASSWORD | prod | 1Password |",
    "| DB_PASSWORD | HashiCorp-Vault |\n| password | KeePassXC |",
    "The password is 1Password",
    'expect "Username:"\nsend "admin2024x\\r"',
    'expect "Password:"\nsend "$password\\r"',
    'expect "Password:"\nsend -- "[lindex $argv 0]\\r"',
    'expect "*assword*"\nsend "changeme\\r"\nexpect "*assword*"\nsend "\\r"',
    'expect "Password:"\nsleep 1\nsend "Tr0ub4dor3x\\r"',  # not the prompt's answer
    'expect(screen.getByText("Password")).toBeVisible()\nsend("Tr0ub4dor3x")',
    "We expect the password prompt; send it by mail",
]


@pytest.mark.parametrize("kind", TOKEN_KINDS)
def test_each_token_format_is_found(kind: str) -> None:
    rng = random.Random(kind)
    for _ in range(5):
        planted = make_secret(kind, rng)
        findings = scan(planted.text)
        (secret,) = planted.secrets
        covering = [f for f in findings if f.start <= planted.text.index(secret) < f.end]
        assert covering, (kind, planted.text)
        f = covering[0]
        assert planted.text[f.start : f.end] == secret, (kind, planted.text)
        assert f.detector == TOKEN_DETECTOR[kind]


def test_a_token_in_a_url_s_user_part_keeps_the_host_and_path() -> None:
    """`x-access-token:` read as NAME: took the host, owner and repository with the token."""
    token = "ghs_" + rand(random.Random(3), 36)
    text = f"git clone https://x-access-token:{token}@github.com/acme/widgets.git"
    assert [text[f.start : f.end] for f in scan(text)] == [token]


@pytest.mark.parametrize(
    "text",
    [
        '{"token": "IDENTIFIER_42"}',
        '<Row key="row-3f9b2c1e" />',
        '"token": "HTTP_STATUS_404"',
        "VAPID_KEY_PUBLIC=BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA",  # public, not a qualifier
        # type annotations and notes where a .env value would be (delta review 2026-12-01)
        "    password: Optional[str]",
        "    api_key: Optional[str]",
        "Password: (optional)",
        "password: [REQUIRED]",
        "    password: NotRequired[Optional[str]]",
        '    auth_token: str = f"Bearer {tok}"',
        # the code and config forms leave code and shells alone
        "define('API_KEY', getenv('X'));",
        "<password>${DB_PASSWORD}</password>",
        "set -gx API_KEY $API_KEY",
        "ALTER USER app PASSWORD NULL; -- then set one",
    ],
)
def test_identifiers_under_a_weak_name_are_not_secrets(text: str) -> None:
    assert scan(text) == [], [(f.detector, text[f.start : f.end]) for f in scan(text)]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('{"api_key": "YiBU9VarkEyue8B5LrPKaiZO", "region": "eu-west-1"}',
         "YiBU9VarkEyue8B5LrPKaiZO"),
        ("client_secret = 'q8Zsecretq2Lm5Nc7Vb1Tr4'", "q8Zsecretq2Lm5Nc7Vb1Tr4"),
        ("AUTH_TOKEN=7fGtokenQ2wLm5Nc7Vb1", "7fGtokenQ2wLm5Nc7Vb1"),
    ],
)  # fmt: skip
def test_a_random_value_holding_its_name_s_word_by_chance_is_a_secret(
    text: str, secret: str
) -> None:
    """`"api_key": "…VarkEyue…"` was taken for `exports.Key = key` (the name's word coming
    back) because "key" is in "varkeyue": a random key went out in clear (the planted
    corpus caught it on one carrier in ~200; delta review 2026-12-01). The word must be one
    of the value's words."""
    found = [text[f.start : f.end] for f in scan(text)]
    assert secret in found, found


@pytest.mark.parametrize(
    "text",
    ["exports.Auth = Auth", "ClientSecrets = client_secrets_1", "api_key = self.api_key"],
)
def test_the_name_s_word_coming_back_as_a_word_is_still_code(text: str) -> None:
    assert scan(text) == [], [(f.detector, text[f.start : f.end]) for f in scan(text)]


def test_a_short_string_still_finds_a_service_token_that_fills_it() -> None:
    """Strings shorter than the shortest service token skip those checks: one that is
    exactly that long is still looked at."""
    from exporter.detectors import SERVICE_TOKEN_LENGTH

    token = "hvs." + rand(random.Random(5), SERVICE_TOKEN_LENGTH - 4)
    assert len(token) == SERVICE_TOKEN_LENGTH
    assert [(f.detector, f.start, f.end) for f in scan(token)] == [("vault-token", 0, len(token))]


@pytest.mark.parametrize("prefix", ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"])
def test_every_github_prefix(prefix: str) -> None:
    token = prefix + rand(random.Random(prefix), 36)
    assert [(f.detector, f.start, f.end) for f in scan(f"x {token}")] == [("github-token", 2, 42)]


@pytest.mark.parametrize(("detector", "text", "secret"), POSITIVES)
def test_other_detectors_find_their_secret(detector: str, text: str, secret: str) -> None:
    findings = scan(text)
    start = text.index(secret)
    covering = [f for f in findings if f.start <= start and start + len(secret) <= f.end]
    assert covering, (detector, findings)
    assert covering[0].detector == detector


@pytest.mark.parametrize("text", NEGATIVES + ASSIGNMENT_NEGATIVES)
def test_not_a_secret(text: str) -> None:
    assert scan(text) == [], [(f.detector, text[f.start : f.end]) for f in scan(text)]


def test_every_detector_is_named_and_tested() -> None:
    assert len(set(DETECTOR_NAMES)) == len(DETECTOR_NAMES) >= 20
    assert all(d.summary for d in DETECTORS)
    tested = set(TOKEN_DETECTOR.values()) | {d for d, _, _ in POSITIVES}
    tested |= set(SERVICE_TOKEN_SAMPLES)  # (tests/test_detectors_s56.py)
    assert tested == set(DETECTOR_NAMES)
    assert isinstance(DETECTOR_VERSION, str) and DETECTOR_VERSION


@pytest.mark.parametrize(
    ("name", "strength"),
    [
        ("password", "password"), ("DB_PASS", "password"), ("pwd", "password"),
        ("apiKey", "strong"), ("OPENAI_API_KEY", "strong"), ("x-api-key", "strong"),
        ("GITHUB_TOKEN", "strong"), ("client_secret", "strong"), ("Cookie", "strong"),
        ("secretAccessKey", "strong"), ("apiKeyValue", "strong"), ("API_KEY_2", "strong"),
        ("token", "weak"), ("cacheKey", "weak"), ("auth", "weak"),
        ("keyData", None), ("max_tokens", None), ("tokensBefore", None), ("author", None),
        ("SSH_AUTH_SOCK", None), ("OLDPWD", None), ("passwordHint", None), ("keys", None),
        ("DB_PASSWORD_PROD", "password"), ("API_KEY_V2", "strong"), ("JWT_SECRET_DEV", "strong"),
        ("OPENAI_API_KEY_BACKUP", "strong"), ("max_tokens_prod", None), ("PROD", None),
        # any one word after the secret's name, not only listed ones (leak review F5) ...
        ("DB_PASSWORD_REPLICA", "password"), ("DB_PASSWORD_ROOT", "password"),
        ("API_KEY_ADMIN", "strong"), ("STRIPE_SECRET_EU", "strong"),
        # ... unless it makes the name name something else
        ("PASSWORD_FILE", None), ("TOKEN_URL", None), ("SECRET_NAME", None),
        ("PASSWORD_MIN_LENGTH", None), ("TOKEN_EXPIRY", None), ("API_KEY_HEADER", None),
        ("PASSWORD_RESET", None), ("KEY_ADMIN", None), ("VAPID_KEY_PUBLIC", None),
        ("SSHPASS", "password"), ("ADMIN_PW", "password"), ("LDAP_BIND_PW", "password"),
    ],
)  # fmt: skip
def test_name_strength(name: str, strength: str | None) -> None:
    assert name_strength(name) == strength


@pytest.mark.parametrize(
    "value",
    ["", "your-key-here", "xxx", "<TOKEN>", "${VAR}", "$VAR", "***", "changeme", "%APPDATA%",
     "[REDACTED:jwt:3]", "sk-ant-...", "{api_key}", "process.env.KEY", "none", "dummy-token"],
)  # fmt: skip
def test_placeholders(value: str) -> None:
    assert is_placeholder(value)


def test_real_values_are_not_placeholders() -> None:
    real = ("hunter2hunter", "Zx81kfjs0dkdf99", "p%40ss:w0rd", "$ecret-Pa55")
    # a placeholder word inside a password does not make it one (each leaked before)
    real += ("Yourself2024!", "NotYourBusiness9", "Replace-Me-9x", "Fake1234Zz", "sampleR8t#2")
    for value in real:
        assert not is_placeholder(value), value


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("pip install git+https://bob:Pw9xYz12@github.com/org/repo.git@v1.2.0", "Pw9xYz12"),
        ("postgres://app:p@ssW0rd99@db/shop", "p@ssW0rd99"),
        ("export API_TOKEN=abc123def456&& npm publish", "abc123def456"),
        ("TOKEN=abc123xyz9;export OTHER=1", "abc123xyz9"),  # a shell's next command
        ("password=hunter22&client_id=myapp&scope=read", "hunter22"),
        ("REDIS_PASSWORD=Gx7=Lk2=Pq9z  # redis", "Gx7=Lk2=Pq9z"),
        ("PASSWORD=Tr0ub4dor & sleep 1", "Tr0ub4dor"),
        ("x://u:p@ss/w0rd@db/x", "p@ss/w0rd"),
        ("password=${PASS:-hunter2real}", "hunter2real"),
        # a key wrapped at 76 columns, not padded: the line after it is not key
        ("client-key-data: " + PEM_B64_UNPADDED + "\nkind: Config", PEM_B64_UNPADDED),
        # one unwrapped line: the heredoc's end word is not its last line
        (
            "cat <<EOF\n" + PEM_B64_UNPADDED.replace("\n", "") + "\nEOF",
            PEM_B64_UNPADDED.replace("\n", ""),
        ),
        ("The password is Tr0ub4dor3x.", "Tr0ub4dor3x"),
        ("| API_KEY | Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3 | rotated |", "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3"),
    ],
)
def test_a_secret_is_redacted_to_its_end_and_no_further(text: str, secret: str) -> None:
    """A pinned pip URL lost its host and path to the password (the URL's last "@"), and
    `&&` after a value went into the redaction."""
    assert [text[f.start : f.end] for f in scan(text)] == [secret]


def _key_lines(seed: int) -> list[str]:
    body = base64.b64encode(random.Random(seed).randbytes(600)).decode()
    return [body[i : i + 64] for i in range(0, len(body), 64)]


@pytest.mark.parametrize(
    "shape",
    [
        "tail",  # `tail -n 5 id_rsa`, or Pi's bash tool keeping a long output's end
        "cat-n",
        "pgp-armor-headers",
        "truncation-note",
        "json-escaped-note",
    ],
)
def test_no_line_of_a_private_key_shown_in_part_is_left(shape: str) -> None:
    """Key lines with no BEGIN before them, and a cut-off block going on past an armor
    header or a tool's note, were left in the clear (secret review s43)."""
    lines = _key_lines(7)
    text = {
        "tail": "\n".join(lines[-4:]) + "\n-----END RSA PRIVATE KEY-----\n$ ls",
        "cat-n": "\n".join(f"    {20 + i}\t{line}" for i, line in enumerate(lines[-4:]))
        + "\n    24\t-----END RSA PRIVATE KEY-----",
        "pgp-armor-headers": "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2.0.22 "
        "(GNU/Linux)\nComment: https://keys.example/a.asc\n\n" + "\n".join(lines[:5]) + "\n",
        "truncation-note": "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines[:3])
        + "\n... [output truncated] ...\n" + "\n".join(lines[4:7]),
        "json-escaped-note": '{"k": "-----BEGIN PRIVATE KEY-----\\n' + "\\n".join(lines[:3])
        + "\\n(truncated)\\n" + "\\n".join(lines[4:6]) + '"}',
    }[shape]  # fmt: skip
    kept = text
    for found in sorted(scan(text), key=lambda f: -f.start):  # (everything found, masked)
        kept = kept[: found.start] + "#" * (found.end - found.start) + kept[found.end :]
    assert not [line for line in lines if line in kept]
    assert "$ ls" in kept or shape != "tail"


def test_a_cut_off_key_does_not_take_the_hashes_a_later_command_printed() -> None:
    """A cut-off block went on over any line starting with 40 base64 characters within four
    lines: `git rev-parse HEAD`'s hash and `sha1sum`'s lines went into the redaction
    (second review s43)."""
    lines = _key_lines(9)
    text = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines[:2])
    text += "\n$ git rev-parse HEAD\n3f2a9c1d5e7b8a0f1234567890abcdef12345678\nnext"
    (found,) = scan(text)
    assert text[found.end :].lstrip().startswith("$ git rev-parse HEAD")


def test_a_service_account_key_shown_from_its_middle_loses_every_line() -> None:
    """A JSON-escaped key's last lines before its END (no BEGIN in view) kept all but the
    first, which only an assignment took (second review s43)."""
    lines = _key_lines(11)
    text = '{"private_key": "' + "\\n".join(lines[-5:]) + '\\n-----END PRIVATE KEY-----\\n"}'
    kept = text
    for found in sorted(scan(text), key=lambda f: -f.start):
        kept = kept[: found.start] + "#" * (found.end - found.start) + kept[found.end :]
    assert not [line for line in lines[-5:] if line[:20] in kept]


def test_boundaries_and_json_escapes() -> None:
    token = "ghp_" + rand(random.Random(1), 36)
    assert scan("x" + token) == []  # glued onto a word: part of something else
    # a distinctive prefix keeps its token even with a "_old" glued after it
    assert [(f.start, f.end) for f in scan(token + "_suffix")] == [(0, len(token))]
    escaped = json.dumps({"out": f"token:\n{token}"})  # JSON text inside a string
    assert [escaped[f.start : f.end] for f in scan(escaped)] == [token]


def test_tokens_after_url_escapes_and_separators() -> None:
    """A review planted these and they were uploaded: a token after a URL escape (``%3D``,
    ``%20``) or joined to a name by ``-``/``_``; only prefixes with their own separator
    may be joined (``AKIA`` inside a word is still no key)."""
    rng = random.Random(5)
    github = "ghp_" + rand(rng, 36)
    gitlab = "glpat-" + rand(rng, 20)
    anthropic = "sk-ant-api03-" + rand(rng, 40)
    for text, secret in [
        (f"https://x.example/cb?access_token%3D{github}", github),
        (f"Authorization%3A%20Bearer%20{github}", github),
        (f"app-{github} and GH_TOKEN_{github}", github),
        (f"ext-{gitlab}", gitlab),
        (f"claude-{anthropic}", anthropic),
    ]:
        found = [text[f.start : f.end] for f in scan(text)]
        assert found and set(found) == {secret}, text
    doubled = f"access_token%253D{github}"  # the % itself URL-encoded
    assert [doubled[f.start : f.end] for f in scan(doubled)] == [github]
    aws = "AKIA" + rand(rng, 16, string.ascii_uppercase + string.digits)
    assert scan("key_" + aws) == [] and scan("x" + github) == []
    # short or bare prefixes joined to a name are identifiers, not keys (a review's cases)
    for name in ("load_hf_TransformersConfigurationLoaderV2", "test_hf_downloadsTheModelWeights2",
                 "prefix-sk-abcdefghij1234567890XYZ"):  # fmt: skip
        assert scan(name) == [], name


def test_overlaps_merge_and_keep_the_specific_name() -> None:
    token = "ghp_" + rand(random.Random(2), 36)
    text = f"GITHUB_TOKEN={token}"
    (finding,) = scan(text)
    assert (text[finding.start : finding.end], finding.detector) == (token, "github-token")
    scanner = Scanner([("abc-literal-1", "literal-secret"), ("abc-literal-12", "literal-secret")])
    (finding,) = scanner.find("x abc-literal-123 y")
    assert "x abc-literal-123 y"[finding.start : finding.end] == "abc-literal-12"


N = 3_000_000  # a backtracking pattern takes hours on this; linear code, about a second
FAST_SHAPES = {
    "a-run": lambda: "a" * N,
    "sk-repeated": lambda: "sk-" * (N // 3),
    "equals-chain": lambda: "=" * N,
    "a=-chain": lambda: "a=" * (N // 2),
    "base64-blob": lambda: base64.b64encode(random.Random(1).randbytes(N * 3 // 4)).decode(),
    "base64url-lines": lambda: (
        "\n".join(
            base64.urlsafe_b64encode(random.Random(2).randbytes(57 * 1000)).decode()[i : i + 76]
            for i in range(0, 76 * 1000, 76)
        )
        * (N // 77_000)
    ),
    # wrapped base64 that decodes to text: one block too long to read whole (each of its
    # lines once, not each walking the rest of the block), and blocks read whole
    "base64-text-block": lambda: base64.encodebytes(b"word " * (N * 3 // 20)).decode(),
    "base64-text-blocks": lambda: (
        (base64.encodebytes(b"word " * 9_000).decode() + "\n") * (N // 60_800 + 1)
    ),
    "eyJ-repeated": lambda: "eyJ" * (N // 6) + "." + "eyJ" * (N // 6),
    "wrapped-heads": lambda: " eyJ\n" * (N // 5),  # every line a head and a tail to join
    "wrapped-long-heads": lambda: (" ghp_" + "a" * 2000 + "\n") * (N // 2006),
    # every line of a block wide enough to wrap a token is a head: each joins up to 11 lines
    "wrapped-wide-heads": lambda: (" eyJ" + "a" * 16 + "\n") * (N // 21),
    # spaces after a head, not ending at a line break: each run was split every way
    "wrapped-head-then-spaces": lambda: ("ghp_abc" + " " * 40_000 + "x\n") * (N // 40_009),
    "pem-begin-repeated": lambda: "-----BEGIN RSA PRIVATE KEY-----" * (N // 31),
    "pem-end-repeated": lambda: "-----END RSA PRIVATE KEY-----\n" * (N // 30),
    # key lines before each END: each run is walked back once, 200 lines at most
    "key-lines-then-end": lambda: (
        (("A" * 64 + "\n") * 250 + "-----END PRIVATE KEY-----\n") * (N // 16_276)
    ),
    "pgp-headers-cut-off": lambda: (
        ("-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: x (y)\n" + ("A" * 64 + "\n(x)\n") * 50)
        * (N // 3_600)
    ),
    "url-repeated": lambda: "://a:" * (N // 5),
    "mysql-then-p-run": lambda: "mysql " + "-p" * (N // 2),  # one command, endless flags
    "mysql-then-pa-run": lambda: "mysql " + "-pa" * (N // 3),
    "curl-then-u-run": lambda: "curl " + "-u" * (N // 2),
    "backslashes": lambda: "\\" * N,
    "json-nesting": lambda: '{"a":' * (N // 5),
    # a cut-off key quoted line by line: each "> " is stepped over, 1,000 lines at most
    "quoted-key-cut-off": lambda: (
        "> -----BEGIN RSA PRIVATE KEY-----\n" + ("> " + "Ab1" * 21 + "x\n") * (N // 67)
    ),
    "quoted-empty-lines": lambda: "-----BEGIN RSA PRIVATE KEY-----\n" + ">\n" * (N // 2),
    # (s44, second pass) quoted cut-off keys, each one line of data and a quoted reply
    "quoted-keys-and-replies": lambda: (
        ("> -----BEGIN RSA PRIVATE KEY-----\n> " + "Ab1" * 21 + "x\n> ok a1\n") * (N // 110)
    ),
    "quoted-short-lines": lambda: "> -----BEGIN RSA PRIVATE KEY-----\n" + "> a1\n" * (N // 5),
}
DENSE_SHAPES = {  # every few bytes a (rejected) candidate: linear, about 1 µs per candidate
    "wrapped-token": " ghp_a\n" + "b" * 20 + " ",  # a head and a tail long enough to check
    "key=": "key=",
    "password=": "password=",
    "akia": "AKIA" + "A" * 16 + " ",
    "authorization": "Authorization: Bearer ",
    "cookie": "cookie: ",
    "json-key": '"key": "',
    "cli-flag": "--password ",
    "markdown-escape": "a\\_",  # each one decoded for the scanner's view of the page
    "cli-command": "curl ",
    "cli-mysql-flag": "mysql -p x ",
    "url-userinfo": "://a:",
    "netrc": "machine a login b password cdef ",
    "netrc-glued-keywords": "machinemachine password abcd ",
    "url-many-at": "://a:@b@c@",
    "name-value": "- name: DB_PASSWORD\n  value: x\n",
    "name-value-reversed": '"value": "abcdefgh",\n  "key": "DB_PASSWORD", ',
    "sensitive-flag": '"sensitive": true, ',  # no braces near: each looks 2 KB both ways
    "sensitive-output": '{"sensitive": true, "value": "abcdefgh"} ',
    "requirepass-after-a-hash": "# x requirepass ",  # the comment check read from 0
    "redis-prompt": "127.0.0.1:6379> AUTH abcdefgh\n",
    "redis-auth-lines": "redis\nAUTH abcdefgh\n",
    "sensitive-flags-between": '"sensitive": true, "type": "value", ',
    "arn-fields": "x:secret:abcdefgh ",
    "ini-section": "[a]\npassword = abcdefg\n",
    "redis-cli": "redis-cli -a x ",
    "redis-cli-quote": 'redis-cli -a "x ',
    "openssl-quote": "openssl -passin 'pass:",
    "colon-one-long-line": "password: abcdefg ",  # the YAML check looked back to line start
    "crypt-hash": "$6$a$",
    "url-token": "://aaaaaaaaaaaaaaaaaaaa1@",
    "smb-user": "smbclient -U a%",
    "env-ampersand": "PASSWORD=abcdefg&",
    "base64-pem": "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQp ",
    "pgpass": "a:5432:b:c:\n",
    "putty": "Private-Lines: 999\nAAAA\n",
    "signed-url": "?sig=aaaaaaaaaaaaaaaa ",
    "htpasswd": "htpasswd -b a b ",
    "gh-secret": "gh secret set A --body $x ",
    "echo-pipe": "echo abcdef | ",
    "env-default": "getenv('TOKEN', 'abc') ",
    "table-row": "| API_KEY | abcdefgh |",
    "table-pipes": "|a",
    "prose": "the password is abcdefgh ",
    "prose-identifier": "a_" * 40 + "token is ",
    "prose-cjk": "密码是abcdefgh ",
    "libpq": "host=a password=abcdefgh ",
    # one long line: the libpq check looked back to the text's start (quadratic, 15 s for
    # a 300 KB access log; review 2026-12-02)
    "libpq-one-line": " password=abcdefgh1",
    "key-header": "x-api-key: abcdefgh ",
    "gh-secret-set": "gh secret set ",
    "herestring": "vercel env add <<< 'abcd' ",
    # full-width base64 lines that each open a block: a block's wrapped lines were searched
    # again from every line (quadratic: 400 KB took 5 s)
    "base64-pem-lines": "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB"
    + "A" * 16
    + "\n",
    "docker-config-lines": "eyJhdXRocyI6" + "A" * 64 + "\n",
    "prose-blank-run": "token is" + " " * 200,  # a blank run split every way was quadratic
    "env-call": "env('TOKEN') or 'abcdef' ",
    "dot-env": ".env .env process.env.A || ",
    "discord-dots": "a.bcdefg.",  # every dot tries the token's tail
    "discord-candidate": "M" + "A" * 23 + ".AAAAAA." + "A" * 27 + " ",  # decodes to no digits
    "discord-long-tail": ".abcdef." + "a" * 40,  # a tail too long for one
    "ruby-env-index": "ENV['API_KEY'] || 'abc' ",
    "ruby-env-block": "ENV.fetch('TOKEN') { |k| 'abc' } ",
    "expect-send": 'expect "*assword*"\nsend "$pw\\r"\n',
    "expect-arm": '"*assword*" { send $x expect ',
    "expect-open-quote": 'expect "' + "a" * 150,
    # (secret review s44) INI lines with no header: each candidate reads three lines each way
    "ini-lines": "user = root\npassword = abcdefg\n",
    "ini-comment": "password = abcdefg # c\n",
    "ini-no-neighbours": "password = abcdefg\n\n",
    "ini-one-line-comments": "password = abcdefg # ",
    "ini-long-neighbour": "a = " + "b" * 250 + "\n  password = abcdefg\n",
    "redis-list-item": '"--requirepass", "abcd", ',
    "redis-yaml-item": "- --requirepass\n- abcd\n",
    "sentinel-auth-pass": "sentinel auth-pass m abcdefg\n",
    "acl-user": "user a on >abcdefgh ~* +@all\n",
    "acl-setuser-one-line": "acl setuser a on >abcd ",
    "acl-many-rules": "user a" + " on" * 100 + " >abcdefgh\n",
    "diff-key-end": "+" + "A" * 64 + "\n+-----END PRIVATE KEY-----\n",
    "quoted-key-end": "> " + "Ab1" * 21 + "x\n> -----END PRIVATE KEY-----\n",
    "nested-quote-cli": "mysql -p'\"'\"'abc ",
    "nested-quote-in-value": "mysql -p'a'\"'\"'",
    "nested-quote-assign": "PASSWORD='\"'\"'abcdefg ",
    "nested-quote-assign-value": "PASSWORD='ab'\"'\"'",
    "prose-two-word-qualifier": "the password for the a b is abcdefg1 ",
    # (secret review s44, second pass) a bare flag's comma, its list's `[`, sentinel prose,
    # header-less INI placeholders
    "redis-comma-prose": "--requirepass, abcd ",
    "redis-flow-list-open": "[--requirepass, abcd, ",
    "redis-flow-list-closed": "[a] --requirepass, abcd ",
    "sentinel-prose": "sentinel auth-pass for abcdefg ",
    "sentinel-sed": "s/sentinel auth-pass m .*/",
    "ini-placeholder": "host = __HOST__\npassword = __PASSWORD__\n",
    "ini-identifier": "host = HOST\npassword = SecretField\n",
    # (secret review s44, third pass) block edges, code lines, indented headers, Redis
    "ini-fenced": "```ini\nuser = a\npassword = abcdefg\n```\n",
    "ini-prose-edge": "Done:\nuser = a b, 'c' [d]\npassword = abcdefg\n",
    "ini-code-veto": "x += 1\npassword = abcdefg\n",
    "ini-grep-context": "f.cnf-3-user = a\nf.cnf:password = abcdefg\n",
    "ini-indented-header": "  [a]\n  password = abcdefg\n",
    "ini-indented-no-header": "  x\n  password = abcdefg\n",
    "ini-diff-marker": "+user = a\n+password = abcdefg\n",
    "redis-pretty-json": '"--requirepass",\n   "abcd",\n',
    "acl-echo": 'echo "user a on >abcdefgh ~* +@all" ',
    "acl-setuser-password-only": "acl setuser a >abcdefgh\n",
    "redis-py-acl": "acl_setuser('a', passwords=['+abcdefg', ",
    "redis-py-execute": '"acl", "setuser", ">abcdefg", ',
    "sentinel-pass": "sentinel sentinel-pass abcdefg\n",
    # (review s46) config lines in JSON strings, SET pairs, CONFIG GET replies, nested
    # sensitive values
    "json-escaped-ini": '"\\npassword = abcdefg\\n',
    "json-escaped-no-quote": "\\npassword = abcdefg",
    "json-escaped-backslashes": "\\" * 40 + '"\\npass = abcdefg',
    "sentinel-set-pairs": "sentinel config set auth-pass abcd ",
    "sentinel-set-many": "sentinel set m " + "quorum 2 " * 20,
    "config-get-reply": '1) "requirepass"\n2) "abcdefg"\n',
    "config-get-json": '"requirepass", "abcdefg", ',
    "config-set-pairs": "config set a b requirepass abcd ",
    "sensitive-nested": '{"sensitive": true, "type": ["list", "string"], "value": ["abcdefgh"]} ',
    "sensitive-open": '"sensitive": true, "value": [[[[',
}


def _cpu_seconds(text: str) -> float:
    start = time.process_time()
    scan(text)
    return time.process_time() - start


@functools.cache
def _prose_seconds() -> float:
    """CPU time this machine takes, now, to scan N characters of ordinary words: what the
    adversarial shapes are measured against (a fixed 6 s failed at 6.05 s on a slower
    machine, where prose took 0.9 s and the slowest shape 4 s)."""
    rng = random.Random(3)
    words = ["the", "config", "value", "returns", "a", "token", "path", "user", "=", "\n"]
    return _cpu_seconds(" ".join(rng.choice(words) for _ in range(N // 5))[:N])


@pytest.mark.parametrize("shape", FAST_SHAPES)
def test_adversarial_megabytes_are_scanned_about_as_fast_as_prose(shape: str) -> None:
    text = FAST_SHAPES[shape]()
    assert len(text) >= N * 0.97  # (whole repeats of a long unit)
    # a backtracking pattern takes hours on 3 MB. The slowest shape (wrapped-wide-heads:
    # 140,000 heads, each joined to up to 11 lines) takes 3-4.5 times as long as prose
    # (2026-12-02), so the bound leaves a busy machine room; how fast the scan is, is
    # bench_redact.py's to measure
    assert _cpu_seconds(text) < 12 * _prose_seconds()


#: CPU time the smaller of the two texts should take: long enough to time, and a quadratic
#: scan of ten times the text would take ~100 times as long, far above the bound below.
DENSE_SMALL_SECONDS = 0.03


@pytest.mark.parametrize("shape", DENSE_SHAPES)
def test_dense_candidates_stay_linear(shape: str) -> None:
    unit = DENSE_SHAPES[shape]
    floor = max(1, 100_000 // len(unit))  # the smaller text: 100,000 characters at least
    # (the probe only sizes the texts: a tenth of the floor times the scan as well, and a
    # probe of the floor's size cost 8% of this test's time)
    probe = max(1, 10_000 // len(unit))
    per_unit = max(_cpu_seconds(unit * probe) / probe, 1e-9)
    count = min(1_000_000 // len(unit), max(floor, int(DENSE_SMALL_SECONDS / per_unit)))
    small = _cpu_seconds(unit * count)
    big = _cpu_seconds(unit * (10 * count))
    # ten times the text may take at most 15 times as long: linear, not quadratic. (An
    # absolute cap of 4 s CPU failed a clean CI run at 4.25 s: several shapes take ~3.2 s
    # on a quiet machine; how fast the scan is, is bench_redact.py's to measure.)
    assert big < 15 * small + 0.3, (small, big)


# Reviewed list of what the detectors hit in ../shared/fixtures: (file, entry id, JSON path,
# detector). The only hit is the fixture's deliberately planted custom-entry token.
EXPECTED_FIXTURE_HITS = [("every-entry-type.jsonl", "e19", "$.data.token", "secret-assignment")]


@pytest.mark.parametrize(
    ("text", "halves"),
    [
        # a box-drawn table 30 columns wide: the token goes on after the border
        (
            "\u2502 ghp_R7kP2mQ9xL4vN8wT3yB6\u2502\n\u2502        cF1hJ5sD0gA2eZ9u       \u2502",
            ["ghp_R7kP2mQ9xL4vN8wT3yB6", "cF1hJ5sD0gA2eZ9u"],
        ),
        # a fine-grained PAT matched up to the break: its tail goes too, and no further
        (
            "github_pat_11ABCDEFG0123456789abc_defGHIJ\r\n"
            "klmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXab and more",
            [
                "github_pat_11ABCDEFG0123456789abc_defGHIJ",
                "klmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXab",
            ],
        ),
        # a JWT broken inside its payload
        (
            "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIi\n"
            "OiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U\nnext",
            [
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIi",
                "OiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            ],
        ),
        (
            "key sk-proj-abcdefghijklmnopqrstuvwxyz0123\n  456789ABCDEFxyz rest",
            ["sk-proj-abcdefghijklmnopqrstuvwxyz0123", "456789ABCDEFxyz"],
        ),
        # a whole token at a line's end: the next line's words are not taken
        (
            "export GH=ghp_R7kP2mQ9xL4vN8wT3yB6cF1hJ5sD0gA2eZ9u\nStep2 is next",
            ["ghp_R7kP2mQ9xL4vN8wT3yB6cF1hJ5sD0gA2eZ9u"],
        ),
        (
            "key sk-proj-abcdefghijklmnopqrstuvwxyz0123\nThe next line",
            ["sk-proj-abcdefghijklmnopqrstuvwxyz0123"],
        ),
        # a word with a digit is not more of a whole token (v2, x86_64, md5sum were taken)
        (
            "tok eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sigsigsig\nv2 is next",
            ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sigsigsig"],
        ),
        ("glpat-abcdefghij1234567890XY\nx86_64 build", ["glpat-abcdefghij1234567890XY"]),
    ],
    ids=[
        "box-table",
        "github-pat",
        "jwt",
        "openai-project-key",
        "ghp-whole",
        "sk-whole",
        "jwt-then-v2",
        "glpat-then-x86_64",
    ],
)
def test_a_token_wrapped_over_two_lines_loses_both_halves(text: str, halves: list[str]) -> None:
    """Terminals and tables wrap long tokens: each half alone was too short for its format,
    or the format took the first line and the rest leaked."""
    found = [text[f.start : f.end].rstrip("\u2502") for f in scan(text)]
    assert found == halves


_PAT = (
    "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"
)
_JWT = (  # (not jwt.io's sample: a documented example, kept)
    "eyJhbGciOiJSUzI1NiIsImtpZCI6IjNmNzg2ODUwIn0.eyJzdWIiOiJ1c2VyLTQyIiwiZXhwIjoxOTAwMDAwMDAw"
    "LCJzY29wZSI6ImFkbWluIn0.Zk2mQ7vL4pX8sT1wR6yB3nF5hJ0cZ2aE7uG4iO1Xk9mP2vQ7rT4wZ8sLm3Nv8"
)
_ANT = (
    "sk-ant-api03-3M1XS0DRdJuPnBIKpi99lSi0tcL21pffWQJEeNajnez0LHtfROUrWW6XnI3EM3HMRb1OcWrhQ7TTJ-chc"
)


def _wrap(text: str, width: int) -> list[str]:
    return [text[i : i + width] for i in range(0, len(text), width)]


def _boxed(lines: list[str], width: int) -> str:
    return "\n".join(f"\u2502 {line.ljust(width)} \u2502" for line in lines)


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        # a fine-grained GitHub token (93 characters) in a 36-column table: three lines
        (_boxed(["token:", *_wrap(_PAT, 36)], 36), _wrap(_PAT, 36)),
        # a JWT in a 50-column terminal: four lines, the last short; the next line is words
        ("\n".join(_wrap("token: " + _JWT, 50)) + "\nDone here", _wrap("token: " + _JWT, 50)),
        # an Anthropic key printed 40 characters a line, then a blank line
        ("\n".join(_wrap(_ANT, 40)) + "\n\nnext", _wrap(_ANT, 40)),
        # a NAME | VALUE box (leak review F3: lines 2 and 3 went out); the next row's cells
        # start in other columns and are not taken
        (
            "\n".join(
                f"\u2502 {name.ljust(12)} \u2502 {part.ljust(40)} \u2502"
                for name, part in zip(
                    ["GITHUB_TOKEN", "", "", "NEXT_NAME"],
                    [*_wrap(_PAT, 40), "plain value"],
                    strict=True,
                )
            ),
            _wrap(_PAT, 40),
        ),
    ],
    ids=["github-pat-in-a-box", "jwt-in-a-terminal", "anthropic-key", "pat-in-a-two-column-box"],
)
def test_a_token_wrapped_over_more_lines_loses_every_part(text: str, parts: list[str]) -> None:
    """Only the first two lines were joined: the third and later lines of a long token
    (a JWT, a fine-grained GitHub token in a narrow table) went out in clear."""
    found = [text[f.start : f.end] for f in scan(text)]
    assert found == [part.removeprefix("token: ") for part in parts]


@pytest.mark.parametrize(
    "text",
    [
        # the second line is as long as the head's but ends elsewhere: not a wrap
        "key sk-proj-abcdefghijklmnopqrstuvwxyz0123\n  456789ABCDEFxyz\nNextWordHere",
        # a short line ends the token: the line after it is not taken
        "\n".join(_wrap(_ANT, 40)) + "\nFollowingWords",
    ],
    ids=["other-column", "after-the-short-line"],
)
def test_a_wrapped_token_stops_at_its_last_line(text: str) -> None:
    """A join that took the next line's word would redact it; it must not take more."""
    found = [text[f.start : f.end] for f in scan(text)]
    assert all(word not in part for part in found for word in ("NextWordHere", "Following"))
    assert found, "the token itself is found"


_GHP_A = "ghp_Xq7Lm2Rt9Kp4Zs8Vn3Wb6Yc1Hd5Jf0Ga2Ue7"
_GHP_B = "ghp_Pm3Qz8Lw1Ns6Tr4Vy9Kb2Hx7Cd5Fg0Je3Ua8"
_HF = "hf_RUVayXlhta6qjF9NYJuoH4MWu6IUghEHkn"


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        # two keys in a 20-column box: the first join ran on over the second's lines
        (
            "\n".join(f"\u2502 {p} \u2502" for p in _wrap(_GHP_A, 20) + _wrap(_GHP_B, 20)),
            _wrap(_GHP_A, 20) + _wrap(_GHP_B, 20),
        ),
        # a whole token filling its line, then a key wrapped over three lines
        (
            f"{_HF}\n sk-proj-QHCttmKiBFkwjP8DawbZtjI4fKzv\n814e0u00yfHfftjPyEg8\nend\n",
            [_HF, "sk-proj-QHCttmKiBFkwjP8DawbZtjI4fKzv", "814e0u00yfHfftjPyEg8"],
        ),
    ],
    ids=["two-keys-in-a-box", "whole-token-then-wrapped-key"],
)
def test_the_lines_a_failed_or_shorter_join_looked_at_are_still_heads(
    text: str, parts: list[str]
) -> None:
    """Lines a join looked at were skipped as heads even when it found no token there, or
    a shorter one: the second token went out in clear (delta review 2026-12-01)."""
    assert [text[f.start : f.end] for f in scan(text)] == parts


def test_every_wrapped_prefix_has_a_pre_check_and_a_format() -> None:
    """A prefix without a pre-check inside it would never be looked at; one without a format
    could never be confirmed."""
    from exporter.wrapped_tokens import _PREFIXES, WrappedTokenDetector

    (wrapped,) = [d for d in DETECTORS if isinstance(d, WrappedTokenDetector)]
    for prefix in _PREFIXES:
        assert any(t in prefix for t in wrapped.triggers), prefix
        assert wrapped.formats_of[prefix], prefix


def test_fixture_false_positives_match_the_reviewed_list(fixtures_dir: Path) -> None:
    policy = RedactionPolicy(keep_paths=True, env_secrets=False)
    hits = []
    for path in sorted(fixtures_dir.glob("*.jsonl")):
        _, report = apply_policy(load_session(path), policy, environ={})
        hits += [(path.name, h.entry_id, h.json_path, h.detector) for h in report.hits]
    assert hits == EXPECTED_FIXTURE_HITS


def test_many_literals_are_found_as_the_finds_found_them() -> None:
    """Past a few dozen literals the scanner searches them as one trie-shaped regex (a second
    pass over 8,000 found values took 26 s): the same spans, overlapping ones included."""
    rng = random.Random(9)
    values = [rand(rng, 12) for _ in range(200)] + ["abcdef12", "def12345", "abcdef12345x"]
    text = f"x {values[3]} y {values[150]}{values[151]} abcdef12345 z {values[3][:-1]}"
    many = Scanner([(v, "literal-secret") for v in values])
    few = Scanner([(v, "literal-secret") for v in values])
    few._many, few._few = None, few.literals  # the str.find path, for comparison
    assert many._many is not None

    def literal_hits(scanner: Scanner) -> list[tuple[int, int, str]]:
        return sorted(h for h in scanner.raw_hits(text) if h[2] == "literal-secret")

    assert literal_hits(many) == literal_hits(few)
    found = [text[f.start : f.end] for f in many.find(text)]
    assert found == [values[3], values[150], values[151], "abcdef12345"]  # overlaps merged


def test_literals_that_do_not_compile_as_one_regex_are_found_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nested prefixes make a deep pattern; should it not compile, the finds still work."""
    import exporter.detectors

    monkeypatch.setattr(exporter.detectors, "_trie_pattern", lambda words: "(")
    values = [f"Ab1{'x' * n}" for n in range(5, 60)]
    scanner = Scanner([(v, "literal-secret") for v in values])
    assert scanner._many is None
    text = f"zz {values[10]} zz"
    assert [text[f.start : f.end] for f in scanner.find(text)] == [values[10]]


def test_the_decoded_view_maps_back_to_the_text_as_written() -> None:
    """The scanner's view of text as the page shows it, and each find's raw span."""
    assert decoded_view("plain words, C:\\Users\\dev and 100% sure") is None
    written = 'x ghp\\_AB&#67;D\u200bE%46 y &bogus; \\\\ \\* \\"'
    view = decoded_view(written)
    assert view is not None and view.text == 'x ghp_ABCDEF y &bogus; \\\\ * \\"'  # \" as written
    start = view.text.index("ghp")
    raw_start, raw_end = view.raw_span(start, start + len("ghp_ABCDEF"))
    assert written[raw_start:raw_end] == "ghp\\_AB&#67;D\u200bE%46"
    tail = view.text.index("y &bogus")
    assert written[slice(*view.raw_span(tail, tail + 8))] == "y &bogus"
    tags = "".join(chr(0xE0000 + ord(c)) for c in "hi")
    assert decoded_view(f"a{tags}\U000e007fb").text == "ahib"


def test_only_the_text_around_a_decoded_character_is_scanned_again() -> None:
    """A long output with one escape is not scanned twice whole, and a token next to an
    escape far into it is still found."""
    token = "ghp_" + "Q7mZk2LrX9vT4bN8cW1pY6hJ3sD5fG0aE2uR"
    text = "a\\. " + "words " * 2_000 + token.replace("_", "\\_") + " end " + "x" * 5_000
    view = decoded_view(text)
    assert view is not None
    spans = view.around_changes()
    assert len(spans) == 2 and spans[0] == (0, 1025)
    assert sum(end - start for start, end in spans) < len(view.text) // 5
    found = [text[f.start : f.end] for f in scan(text)]
    assert found == [token.replace("_", "\\_")]


# --- base64-encoded text ------------------------------------------------------------------


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


@pytest.mark.parametrize("kind", ["github-classic", "stripe", "aws-key-id", "jwt", "anthropic"])
def test_a_secret_in_base64_encoded_text_is_found_as_the_whole_run(kind: str) -> None:
    """`echo Z2hwX… | base64 -d` and a Kubernetes Secret's `data:` under a plain key name
    showed a token anyone can decode; the encoded run holding it is now replaced whole."""
    secret = make_secret(kind, random.Random(kind)).secrets[0]
    for encoded, text in (
        (_b64(f"token={secret}"), "echo {} | base64 -d"),
        (_b64(secret), "data:\n  upstream: {}\n  region: ZXUtd2VzdC0x\n"),
        (_b64(f"中文 {secret} 😀\n"), "({})"),  # non-ASCII text around it
        # a review: after "=" and next to a "\n" escape it was passed over
        (_b64(f"token={secret}"), "export CONFIG={}; docker run -e X=1 app"),
        (_b64(f"T={secret}"), '{{"content": "IyBlbnYK\\n{}\\n", "encoding": "base64"}}'),
        (_b64(f"T={secret}"), "printf '{}\\n' | base64 -d"),
    ):
        written = text.format(encoded)
        found = [(f.detector, written[f.start : f.end]) for f in scan(written)]
        assert ("base64-secret", encoded) in found, (kind, written, found)
        assert all(value != "ZXUtd2VzdC0x" for _, value in found)  # "eu-west-1" stays


@pytest.mark.parametrize("width", [76, 64])
def test_a_secret_across_a_wrapped_base64_line_break_is_found(width: int) -> None:
    """`base64` wraps at 76 columns (`openssl base64` at 64): a token split by a break was
    in no one line's decoded text, and both halves stayed (diff review). The wrapped block
    is read as one run now."""
    token = make_secret("github-classic", random.Random(width)).secrets[0]
    for shift in range(0, 40, 3):  # the token starts at every place around the break
        plain = "x" * (width * 3 // 4 - 20 + shift) + f"\ntoken: {token}\nend\n"
        encoded = _b64(plain)
        block = "\n".join(encoded[i : i + width] for i in range(0, len(encoded), width))
        text = f"$ base64 config\n{block}\n$ echo done"
        found = [(f.detector, text[f.start : f.end]) for f in scan(text)]
        assert found == [("base64-secret", block)], (shift, found)


@pytest.mark.parametrize(
    "text",
    [
        _b64('{"host": "db.internal", "port": 5432, "user": "app"}'),  # text, no secret
        _b64("The quick brown fox jumps over the lazy dog"),
        base64.b64encode(bytes(range(40))).decode(),  # bytes, not text
        "src/components/Button/index/styles/theme",  # a path read as base64
        "3f786850e387550fdab836ed7e6dc881de23001b",  # a git SHA
        "ThisIsAVeryLongIdentifierNameInCamelCase",
    ],
)
def test_base64_that_holds_no_secret_is_left_alone(text: str) -> None:
    assert scan(f"value: {text}") == []


def test_a_given_secret_is_found_base64_encoded_too() -> None:
    """`--secret` values (literals) are looked for in decoded runs as well."""
    scanner = Scanner([("correct-horse-battery", "given-secret")])
    text = f"echo {_b64('pw=correct-horse-battery')} | base64 -d"
    assert [f.detector for f in scanner.find(text)] == ["base64-secret"]


def test_redact_replaces_a_base64_encoded_secret_in_a_session(tmp_path: Path) -> None:
    """End to end: the redacted copy holds neither the token nor its encoding; the
    session still loads with the same entries."""
    token = make_secret("github-classic", random.Random(3)).secrets[0]
    encoded = _b64(f"GH={token}")
    lines = [
        {"type": "session", "version": 3, "id": "b", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/w"},
        {"type": "message", "id": "u", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": f"decode {encoded} please"}},
    ]  # fmt: skip
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    session, report = apply_policy(load_session(path), RedactionPolicy())
    text = session.by_id["u"].text  # type: ignore[attr-defined]
    assert encoded not in text and token not in text
    assert text == "decode [REDACTED:base64-secret:1] please"
    assert report.counts == {"base64-secret": 1}


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("SMTP_PASSWORD=93847561", "93847561"),
        ('{"db_password": "938475610238"}', "938475610238"),
        ("api_key: 2221686489", "2221686489"),
        ("export ADMIN_PIN_PASSWORD=482913", "482913"),
    ],
)
def test_an_all_digit_password_or_key_is_a_secret(text: str, secret: str) -> None:
    """A review: numeric passwords, PINs and keys were never redacted, even under a
    password name (24 of 24 variants), nor from an --env-file."""
    assert [text[f.start : f.end] for f in scan(text)] == [secret]
    from exporter.redact import sensitive_env_values

    assert sensitive_env_values([("SMTP_PASSWORD", "93847561")]) == ["93847561"]


@pytest.mark.parametrize(
    "text",
    ["DB_PORT=5432", '"password": "12345"', "SESSION_SECRET_TTL=86400", "token: 20240101",
     '"max_tokens": 100000000', "password: 2024-01-01", "PASSWORD_MIN_LENGTH=12345678",
     "api_key: 1234567"],
)  # fmt: skip
def test_numbers_that_are_no_secret_stay(text: str) -> None:
    assert scan(text) == [], [(f.detector, text[f.start : f.end]) for f in scan(text)]


# Secret review s44: each leaked before (detector, text, the secret, exactly as redacted)
_KEY_64 = "MIIEowIBAAKCAQEAx7Qm9Lk2J3h4G5f6D7s8A9q0W1e2R3t4Y5u6I7o8P9a0S1d2"
_KEY_64B = "F3g4H5j6K7l8Z9x0C1v2B3n4M5q6W7e8R9t0Y1u2I3o4P5a6S7d8F9g0H1j2K3l4"
S44_LEAKS = [
    # an INI fragment shown from its middle (no [section] header), a trailing comment
    ("secret-assignment", "  user = root\n  password = Sunflower\n  host = db", "Sunflower"),
    ("secret-assignment", "user = root\npassword = Sunflower\nhost = db", "Sunflower"),
    ("secret-assignment", "socket = /tmp/m.sock\npassword = Marshmallow\n", "Marshmallow"),
    ("secret-assignment", "[client]\npassword = Sunflower  # the old one", "Sunflower"),
    ("secret-assignment", "[client]\npassword = Sunflower ; the old one", "Sunflower"),
    ("secret-assignment", "[client]\npassword=Sunflower # note", "Sunflower"),
    ("secret-assignment", "user = root\npassword = Sunflower # note\n", "Sunflower"),
    ("secret-assignment", "[client]\npassword = Sunflower   \nhost = db", "Sunflower"),
    ("secret-assignment", "     4\tuser = root\n     5\tpassword = Sunflower\n", "Sunflower"),
    ("secret-assignment", "my.cnf:4:user = root\nmy.cnf:5:password = Sunflower", "Sunflower"),
    # Redis: a compose list, sentinel's auth-pass, ACL rules
    ("redis-password", 'command: ["redis-server", "--requirepass", "Rq7pLm2Xc9"]',
     "Rq7pLm2Xc9"),
    ("redis-password", 'command: ["redis-server", "--requirepass", "Sunflower"]', "Sunflower"),
    ("redis-password", "command:\n  - redis-server\n  - --requirepass\n  - Rq7pLm2Xc9\n",
     "Rq7pLm2Xc9"),
    ("redis-password",
     '    command:\n      - redis-server\n      - "--requirepass"\n      - "Sunflower"\n',
     "Sunflower"),
    ("redis-password", "sentinel auth-pass mymaster Rq7pLm2Xc9", "Rq7pLm2Xc9"),
    ("redis-password", "sentinel auth-pass mymaster Sunflower", "Sunflower"),
    ("redis-password", "127.0.0.1:26379> SENTINEL SET mymaster auth-pass Rq7pLm2Xc9",
     "Rq7pLm2Xc9"),
    ("redis-password", "user default on >Rq7pLm2Xc9 ~* +@all", "Rq7pLm2Xc9"),
    ("redis-password", "user alice on >Sunflower ~cached:* +get", "Sunflower"),
    ("redis-password", "ACL SETUSER alice on >Rq7pLm2Xc9 ~* +@all", "Rq7pLm2Xc9"),
    ("redis-password", "127.0.0.1:6379> acl setuser bob on >Sunflower &* +@all", "Sunflower"),
    ("redis-password", "redis-cli ACL SETUSER bob on '>Rq7pLm2Xc9' +@read", "Rq7pLm2Xc9"),
    # a private key in a diff or quoted, with no BEGIN line
    ("private-key", f"+{_KEY_64}\n+{_KEY_64B}\n+-----END RSA PRIVATE KEY-----\n",
     f"{_KEY_64}\n+{_KEY_64B}\n+-----END RSA PRIVATE KEY-----"),
    ("private-key", f"-{_KEY_64}\n-{_KEY_64B}\n------END RSA PRIVATE KEY-----\n",
     f"{_KEY_64}\n-{_KEY_64B}\n------END RSA PRIVATE KEY-----"),
    ("private-key", f"> {_KEY_64}\n> {_KEY_64B}\n> -----END RSA PRIVATE KEY-----",
     f"{_KEY_64}\n> {_KEY_64B}\n> -----END RSA PRIVATE KEY-----"),
    # a shell's '"'"' inside single quotes: one value
    ("cli-secret", "mysql -p'pa'\"'\"'ss9Xq' -u root", "pa'\"'\"'ss9Xq"),
    ("cli-secret", "bash -c 'mysql -p'\"'\"'Tr0ub4dor&3x'\"'\"' db'", "Tr0ub4dor&3x"),
    ("secret-assignment", "PASSWORD='ab'\"'\"'cd9Xq12'", "ab'\"'\"'cd9Xq12"),
    ("secret-assignment", "bash -c 'export DB_PASSWORD='\"'\"'Tr0ub4dor&3x'\"'\"''",
     "Tr0ub4dor&3x"),
    ("secret-assignment", "ssh h 'export DB_PASSWORD='\"'\"'Sunflower'\"'\"'; ./run'",
     "Sunflower"),
    # two words of what the password is for
    ("prose-secret", "the admin password for the staging DB is Tr0ub4dor3x", "Tr0ub4dor3x"),
    ("prose-secret", "The API key for our prod account: Zq8Xw2Lm5Nc7Vb1Tr4", "Zq8Xw2Lm5Nc7Vb1Tr4"),
]  # fmt: skip
S44_CLEAN = [
    # code that looks like `key = value` lines: not an INI file
    "def f():\n    password = hunter\n    return password",
    "    user = request.user\n    password = form.password\n",
    "x = 1\npassword = PasswordInput\nform = Form(password)",
    "    password = Sunflower\n    login(user, password)\n",
    "password = Sunflower  # TODO: read from env\nconnect(password)",
    "user = root\npassword = see vault\nhost = db",
    "user = root\npassword = ; set by the CI\nhost = db",
    "  password = required  # validation rule\n  user = required",
    "[client]\npassword = config.password  # from the app",
    "  count = 1\n  password = data.aws_ssm_parameter.db.value\n  port = 5432\n",
    "    12\t    password = Sunflower\n    13\t    return password\n",
    # Redis words, not passwords
    'DIRECTIVES = ["requirepass", "masterauth", "bind"]',
    'command: ["redis-server", "--requirepass", "$REDIS_PASSWORD"]',
    "command:\n  - redis-server\n  - --requirepass\n  - --appendonly\n",
    "redis-server --requirepass --appendonly yes",
    "sentinel auth-pass mymaster $SENTINEL_PASSWORD",
    "Use sentinel auth-pass to set it.",
    "user default on nopass ~* +@all",
    "user alice on #e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 ~* +@all",
    "the user alice on >3 servers",
    "user www-data;",
    "ACL SETUSER alice on >$ALICE_PW ~* +@all",
    # diff and quote markers on lines that are no key
    "+" + "=" * 64 + "\n+-----END RSA PRIVATE KEY-----",
    "> hello world\n> -----END RSA PRIVATE KEY-----",
    "+import os\n+-----END PRIVATE KEY-----",
    # '"'"' around words that are no secret
    "bash -c 'echo '\"'\"'hello world'\"'\"''",
    "bash -c 'export GREETING='\"'\"'Sunflower'\"'\"''",
    # prose with a two-word qualifier and no value
    "the admin password for the staging DB is rotated weekly",
    "the token for each new request is valid for 3600s",
    "the password for the staging DB is stored in vault",
    "the password for the first user is SHA256-hashed",
]


@pytest.mark.parametrize(("detector", "text", "secret"), S44_LEAKS)
def test_review_s44_leaks_are_redacted_exactly(detector: str, text: str, secret: str) -> None:
    """Secret review s44: INI lines with no section header or with a trailing comment,
    Redis compose lists, sentinel and ACL passwords, keys in diffs and quotes, the shell's
    ``'"'"'`` and a two-word prose qualifier left their secret in the clear."""
    found = [(text[f.start : f.end], f.detector) for f in scan(text)]
    assert found == [(secret, detector)], found


def test_review_s44_a_quoted_key_cut_off_loses_every_line() -> None:
    """A key quoted line by line (`> `) with no END: the cut-off block stopped at the first
    quoted line, and the lines after it stayed (a 4096-bit key has about 50)."""
    body = base64.b64encode(random.Random(11).randbytes(2400)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    text = "> -----BEGIN RSA PRIVATE KEY-----\n" + "".join(f"> {line}\n" for line in lines)
    findings = scan(text)
    left = [ln for ln in lines if not any(f.start <= text.index(ln) < f.end for f in findings)]
    assert left == []


@pytest.mark.parametrize("text", S44_CLEAN)
def test_review_s44_near_misses_stay(text: str) -> None:
    assert scan(text) == [], [(f.detector, text[f.start : f.end]) for f in scan(text)]


@pytest.mark.parametrize(
    ("command", "reads"),
    [
        ("oc extract secret/db --to=-", True),
        ("oc extract -n prod secret/db --keys=password --to=-", True),
        ("oc extract secret/db --to=/tmp/db", False),
        ("oc extract configmap/app --to=-", False),
        ("kubectl get secret db --template='{{.data.password}}'", True),
        ("kubectl -n prod get secret db --template={{.data.pw}} | base64 -d", True),
        ("kubectl get cm,secret -o yaml", True),
        ("kubectl get configmaps,secrets -n prod -o json", True),
        ("kubectl get cm,pods -o yaml", False),
        ("kubectl get pods,secrets", False),
        ("terraform output -json | jq -r .db_password.value", True),
        ("terraform output -json | jq -r '.db_password.value'", True),
        ("tofu output -json | jq -r '.[\"admin_password\"].value'", True),
        ("terraform output -json | jq -r .vpc_id.value", False),
        ("terraform output -json | jq .", False),
        ("terraform output db_password", True),
    ],
)
def test_review_s44_commands_that_print_a_secret(command: str, reads: bool) -> None:
    """Secret review s44: these print a secret's value with nothing in the output to say so."""
    from exporter.secret_commands import reads_a_secret

    assert reads_a_secret(command) is reads


#: Commands of a megabyte on one line, dense with what the secret-reading patterns look for
SECRET_COMMAND_SHAPES = {
    "oc-extract": lambda: "oc extract " * (N // 33) + "secret/x --to=-",
    "k-words": lambda: "k " * (N // 6) + "secret",  # (was 3 s per MB)
    "kubectl-get-list": lambda: "kubectl get " + "a," * (N // 6) + "secret -o yaml",
    "kubectl-get-repeated": lambda: "kubectl get " * (N // 36) + "secret",
    "kubectl-get-secret-repeated": lambda: "kubectl get secret " * (N // 57),
    "terraform-jq-fields": lambda: "terraform output -json | jq " + ".a" * (N // 9),
    "terraform-jq-repeated": lambda: "terraform output -json | jq .a " * (N // 93),
    # (secret review s44, third pass: names then values, created secrets, the state, jq)
    "kubectl-names-repeated": lambda: "kubectl get secret -o name " * (N // 27),
    "kubectl-create-repeated": lambda: "kubectl create secret generic x -o name " * (N // 40),
    "terraform-state-repeated": lambda: "terraform state pull >f " * (N // 24),
    "terraform-state-quote": lambda: "terraform state pull | jq '" * (N // 27),
    "terraform-jq-quoted-pipes": lambda: "terraform output -json | jq '.a | " * (N // 34),
    "continued-lines": lambda: "kubectl get \\\n" * (N // 14),
}


@pytest.mark.parametrize("shape", SECRET_COMMAND_SHAPES)
def test_a_megabyte_command_is_judged_about_as_fast_as_prose_is_scanned(shape: str) -> None:
    """`reads_a_secret` on one long command line: linear, about as fast as a scan of prose
    of the same size (secret review s44: `oc extract` and kubectl's look-ahead)."""
    from exporter.secret_commands import reads_a_secret

    command = SECRET_COMMAND_SHAPES[shape]()
    start = time.process_time()
    reads_a_secret(command)
    seconds = time.process_time() - start
    assert seconds < 12 * _prose_seconds() * len(command) / N + 0.05


# Secret review s44, second pass: what the rules of 2026.12-19 took that is no secret
S44B_CLEAN = [
    # F3: an INI block with no [section]: template placeholders, code names, config words
    "host = __HOST__\npassword = __PASSWORD__\n",
    "host = __HOST__\npassword = __DB_PASSWORD__\n",
    "host = __HOST__\npassword = <<PASSWORD>>\n",
    "host = __HOST__\npassword = $$PASSWORD\n",
    "host = __HOST__\npassword = SET_ME\n",
    "    host = HOST\n    password = DB_PASSWORD\n",
    "    username = USERNAME\n    password = DEFAULT_PASSWORD\n",
    "pool_size = 5\npassword = PGPASSWORD\n",
    "    username = row\n    password = hashed\n    active = True\n",
    "    user = settings\n    password = getpass\n",
    "    salt = generate\n    password = hashpw\n",
    "    name = first\n    password = plaintext\n",
    "    user = kwargs\n    password = credentials\n",
    "  password = SecretField\n  user = CharField\n",
    "user = alice\npassword = NotSet\n",
    "auth = basic\npassword = vault\n",
    "auth = basic\npassword = keychain\n",
    "user = alice\npassword = prompt\n",
    "user = alice\npassword = keyring\n",
    "user = alice\npassword = inherit\n",
    "user = alice\npassword = disabled\n",
    "user = alice\npassword = encrypted\n",
    "user = alice\npassword = masked\n",
    "user = alice\npassword = plain\n",
    "ssl = true\npassword = sslmode\n",
    # F1: --requirepass in a sentence, a comma after it
    "Use --requirepass, which sets the password.",
    "Set --requirepass, then restart.",
    "--requirepass, masterauth and bind are redis options",
    "redis options (--requirepass, requirepass in redis.conf)",
    # F2: sentinel auth-pass in a sentence
    "sentinel auth-pass is used to authenticate",
    "configure sentinel auth-pass for each master in sentinel.conf",
    "the sentinel auth-pass option must be set for every monitored master",
]
S44B_FOUND = [
    # F3: the block rule still finds a password among key = value lines
    ("secret-assignment", "user = app\npassword = Sunflower\n", "Sunflower"),
    ("secret-assignment", "user = app\npassword = Sunflower42\nhost = db\n", "Sunflower42"),
    ("secret-assignment", "host = db\npassword = hunter22\n", "hunter22"),
    ("secret-assignment", "user = app\npassword = SunFlower\n", "SunFlower"),
    ("secret-assignment", "host = db\npassword = S3CR3T_PW\n", "S3CR3T_PW"),
    ("secret-assignment", "host = db\npassword = correct_horse_battery_staple\n",
     "correct_horse_battery_staple"),
    # (the column-0 and [section] rules are as they were)
    ("secret-assignment", "password=vault\n", "vault"),
    ("secret-assignment", "[client]\npassword = PROD_PW\n", "PROD_PW"),  # (SET_ME: a placeholder)
    # F1: a list's item is the value, the list's `]` not
    ("redis-password", "command: [redis-server, --requirepass, Sunflower42x]", "Sunflower42x"),
    ("redis-password", "command: [redis-server, --requirepass, Sunflower42x, --port, 1]",
     "Sunflower42x"),
    ("redis-password", 'command: ["redis-server", "--requirepass", "Rq7pLm2Xc9"]',
     "Rq7pLm2Xc9"),
    ("redis-password", 'args: ["--requirepass", "Sunflower"]', "Sunflower"),
    # F2: the password, not its escaped line end; in sed, the replacement's password
    ("redis-password", '"sentinel.conf": "sentinel auth-pass mymaster Zq8vRt3Lm9Kw\\n"',
     "Zq8vRt3Lm9Kw"),
    ("redis-password",
     "sed -i 's/sentinel auth-pass mymaster .*/sentinel auth-pass mymaster Zq8vRt3Lm9Kx/' "
     "sentinel.conf", "Zq8vRt3Lm9Kx"),
    ("redis-password",
     "sed -i 's/.*sentinel auth-pass.*/sentinel auth-pass mymaster Xy7pLm2Qw9/' sentinel.conf",
     "Xy7pLm2Qw9"),
    ("redis-password", "sentinel auth-pass my-master.1 Sunflower", "Sunflower"),
]  # fmt: skip


@pytest.mark.parametrize("text", S44B_CLEAN)
def test_review_s44b_no_secret_is_found(text: str) -> None:
    """Secret review s44, second pass: placeholders, code names and config words in an INI
    block with no header; `--requirepass,` and `sentinel auth-pass` in sentences."""
    assert scan(text) == [], [(f.detector, text[f.start : f.end]) for f in scan(text)]


@pytest.mark.parametrize(("detector", "text", "secret"), S44B_FOUND)
def test_review_s44b_the_secret_is_found_exactly(detector: str, text: str, secret: str) -> None:
    found = [(text[f.start : f.end], f.detector) for f in scan(text)]
    assert found == [(secret, detector)], found


def test_review_s44b_a_template_placeholder_is_not_removed_elsewhere() -> None:
    """`__PASSWORD__` in a header-less INI template was redacted, then removed from every
    other message of the session: an unrelated sed command lost it."""
    template = "host = __HOST__\npassword = __PASSWORD__\n"
    deploy = 'sed -i "s/__PASSWORD__/$DB_PASSWORD/" template.ini  # replace __PASSWORD__\n'
    assert scan(template) == [] and scan(deploy) == []


@pytest.mark.parametrize(
    "after",
    [
        "\n>\n> Thanks Bob\n> see you at the meeting about the budget\n> Alice\n\nMy reply",
        "\n> Thanks Bob\n> Alice\n\nMy reply here: ok",
        "\n>\n> Alice\n",
    ],
)
def test_review_s44b_a_quoted_cut_off_key_leaves_the_quoted_reply(after: str) -> None:
    """A key quoted line by line (`> `) with no END is taken to its last line of key data:
    the quoted prose after it, and the reply after a blank line, stay (the cut-off block ran
    to the end of the text, 530 of 532 characters)."""
    body = base64.b64encode(random.Random(12).randbytes(288)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    key = "> -----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(f"> {ln}" for ln in lines)
    text = key + after
    found = [(f.start, f.end, f.detector) for f in scan(text)]
    assert found == [(2, len(key), "private-key")], [text[s:e] for s, e, _ in found]


# Secret review s44, third pass (the review of 2026.12-19's INI, Redis and command rules)
S44C_FOUND = [
    # L1: an INI block's edges are a fence, a prompt, a header or prose, not a veto
    ("secret-assignment", "```ini\nuser = app\npassword = Sunflower\n```", "Sunflower"),
    ("secret-assignment", "```\nuser = app\npassword = Sunflower\n```\n", "Sunflower"),
    ("secret-assignment", "~~~\nuser = app\npassword = Sunflower\n~~~\n", "Sunflower"),
    ("secret-assignment", "    ```ini\n    user = app\n    password = Sunflower\n    ```",
     "Sunflower"),
    ("secret-assignment", "```ini\npassword = Sunflower\n```", "Sunflower"),
    ("secret-assignment", "==> my.cnf <==\nuser = app\npassword = Sunflower\n", "Sunflower"),
    ("secret-assignment", "$ cat my.cnf\nuser = app\npassword = Sunflower\n", "Sunflower"),
    ("secret-assignment", "Updated the config:\nuser = app\npassword = Sunflower\n",
     "Sunflower"),
    ("secret-assignment", "user = app\npassword = Sunflower\nOK, now restart the service.",
     "Sunflower"),
    ("secret-assignment", "<pre>\nuser = app\npassword = Sunflower\n</pre>", "Sunflower"),
    # neighbours whose values hold spaces, commas, quotes, brackets
    ("secret-assignment", "init-command = SET NAMES utf8mb4\npassword = Sunflower\n",
     "Sunflower"),
    ("secret-assignment", "user = app\npassword = Sunflower\nsql_mode = STRICT,NO_ZERO_DATE\n",
     "Sunflower"),
    ("secret-assignment", "user = app\npassword = Sunflower\ninit_connect = 'SET NAMES utf8'\n",
     "Sunflower"),
    ("secret-assignment", 'user = "app"\npassword = Sunflower\n', "Sunflower"),
    ("secret-assignment", "user = app\npassword = Sunflower\nlog_line_prefix = %m [%p]\n",
     "Sunflower"),
    # grep's context lines and file prefixes
    ("secret-assignment", "3-user = app\n4:password = Sunflower\n", "Sunflower"),
    ("secret-assignment", "my.cnf:user = app\nmy.cnf:password = Sunflower\n", "Sunflower"),
    # an indented [section] (a k8s ConfigMap's `|` block), a diff, a quote
    ("secret-assignment", "stringData:\n  .my.cnf: |\n    [client]\n    password = Sunflower\n",
     "Sunflower"),
    ("secret-assignment", "    [client]\n    password = Sunflower\n", "Sunflower"),
    ("secret-assignment", "+[client]\n+password = Sunflower\n", "Sunflower"),
    ("secret-assignment", "+user = app\n+password = Sunflower\n", "Sunflower"),
    ("secret-assignment", "> user = app\n> password = Sunflower\n", "Sunflower"),
    ("secret-assignment", " user = app\n-password = Sunflower\n", "Sunflower"),
    # L2: Redis
    ("redis-password", '"Args": [\n                "--requirepass",\n                '
     '"Zq8vRt3Lm9Kw"\n            ],', "Zq8vRt3Lm9Kw"),
    ("redis-password", 'command: ["redis-server", "--requirepass=Sunflower42x"]',
     "Sunflower42x"),
    ("redis-password", 'echo "user alice on >Zq8vRt3Lm9Kz ~* +@all" >> users.acl',
     "Zq8vRt3Lm9Kz"),
    ("redis-password", "printf 'user alice on >Zq8vRt3Lm9Kz ~* +@all\\n' > users.acl",
     "Zq8vRt3Lm9Kz"),
    ("redis-password",
     "sed -i 's/^user alice .*/user alice on >Zq8vRt3Lm9Kz ~* +@all/' users.acl",
     "Zq8vRt3Lm9Kz"),
    ("redis-password", "127.0.0.1:6379> ACL SETUSER alice >Sunflower42x", "Sunflower42x"),
    ("redis-password", "redis-cli ACL SETUSER bob >Zq8vRt3Lm9Ka", "Zq8vRt3Lm9Ka"),
    ("redis-password",
     "r.acl_setuser('alice', enabled=True, passwords=['+Sunflower42x'], keys=['*'])",
     "Sunflower42x"),
    ("redis-password",
     'r.execute_command("ACL", "SETUSER", "alice", "on", ">Sunflower42x", "~*", "+@all")',
     "Sunflower42x"),
    ("redis-password", "sentinel sentinel-pass Zq8vRt3Lm9Ky", "Zq8vRt3Lm9Ky"),
    ("redis-password", "SENTINEL CONFIG SET sentinel-pass Zq8vRt3Lm9Ky", "Zq8vRt3Lm9Ky"),
]  # fmt: skip
S44C_CLEAN = [
    # L1: code near key = value lines still says "code", whatever else is around it
    "    i = 0\n    password = candidate\n    i += 1\n",
    "    if ok:\n        user = candidate\n        password = attempt\n    else:\n",
    "for user, pw in pairs:\n    user = name\n    password = attempt\n",
    "class Config:\n    user = admin\n    password = Sunflower\n",
    'def login():\n    """Log in."""\n    password = Sunflower\n',
    "    user = app\n    password = Sunflower\n    print(user)\n",
    "    user = app\n    password = Sunflower\nend\n",
    "@app.route('/x')\n    user = app\n    password = Sunflower\n",
    "    items = [a, b]\n    password = Sunflower\n",
    "    user = app\n    password = Sunflower\n  }\n",
    "$ python -c 'print(1)'\npassword = Sunflower\n",
    # an edge alone is no INI block: one line with no neighbour that is an assignment
    "Updated the config:\npassword = Sunflower\nDone.",
    "```\npassword = Sunflower\n```",
    "==> my.cnf <==\npassword = Sunflower\n",
    # a key whose word is a keyword is still a key (`use = x`), but prose is not INI
    "In the form, enter your name and password = the one you chose",
    # placeholders: never redacted, by the column-0, [section] or block rules
    "password=__PASSWORD__\n",
    "[client]\npassword = __PASSWORD__\n",
    "password=<<PASSWORD>>\n",
    "password=@DB_PASS@\n",
    "user = app\npassword = @DB_PASS@\n",
    "user = app\npassword = !!PW!!\n",
    "password=$$PASSWORD\n",
    "password=SET_ME\n",
    "[client]\npassword = SET_ME\n",
    "password=#{db_password}\n",
    "password=%(password)s\n",
    "[client]\npassword = __DB_PASSWORD__\n",
    "password=<password>\n",
    "password=${DB_PASSWORD}\n",
    "password=changeme\n",
    # L2/F6: Redis shapes that hold no password
    'r.acl_setuser("alice", enabled=True, passwords=["+$PW"])',
    "r.acl_setuser('alice', enabled=True, hashed_passwords=['+5e884898da28047151d0'])",
    'r.execute_command("ACL", "SETUSER", "alice", "on", "~*", "+@all")',
    "sentinel sentinel-pass $SENTINEL_PASSWORD",
    "user list --all >users.txt",
    "the --requirepass=option flag",
    "requirepass=Sunflower42x",
    '"Args": [\n  "--requirepass",\n  "$REDIS_PASSWORD"\n]',
]


@pytest.mark.parametrize(("detector", "text", "secret"), S44C_FOUND)
def test_review_s44c_the_secret_is_found_exactly(detector: str, text: str, secret: str) -> None:
    """Secret review s44, third pass: INI lines next to a fence, a prompt, prose, grep's
    prefixes, an indented header, a diff or a quote; Redis passwords in pretty-printed
    JSON, echo/printf/sed-written ACL lines, `ACL SETUSER` with only a password, redis-py,
    Sentinel's own password."""
    found = [(text[f.start : f.end], f.detector) for f in scan(text)]
    assert found == [(secret, detector)], found


@pytest.mark.parametrize("text", S44C_CLEAN)
def test_review_s44c_no_secret_is_found(text: str) -> None:
    assert scan(text) == [], [(f.detector, text[f.start : f.end]) for f in scan(text)]


@pytest.mark.parametrize(
    "value", ["__PASSWORD__", "<<PASSWORD>>", "@DB_PASS@", "$$PASSWORD", "#{db_password}",
              "%(password)s", "SET_ME", "{{ db_password }}", "!!PW!!"],
)  # fmt: skip
def test_a_template_placeholder_is_a_placeholder(value: str) -> None:
    from exporter.secret_heuristics import is_placeholder

    assert is_placeholder(value)


@pytest.mark.parametrize(
    "value", ["@Sunflower42@", "__init", "Sunflower42x", "__Zq8vRt3Lm9__", "$$Zq8v3"]
)
def test_a_password_with_marks_is_no_placeholder(value: str) -> None:
    from exporter.secret_heuristics import is_placeholder

    assert not is_placeholder(value)


@pytest.mark.parametrize(
    ("command", "reads"),
    [
        # L3: kubectl and oc
        ("oc -n prod extract secret/db --to=-", True),
        ("oc --namespace=prod extract secret/db --to=-", True),
        ("oc extract secret/db --to=-|grep pass", True),
        ("oc extract secret/db --to=-;echo", True),
        ('oc extract secret/db --to="-"', True),
        ("oc extract secret/db --to=/dev/stdout", True),
        ("oc extract secret/db --to /dev/stdout", True),
        ("oc extract secret/db --to=/tmp/out", False),
        ("oc -n prod extract configmap/db --to=-", False),
        ("kubectl -n a --context b --kubeconfig c --as d --as-group e get secret db -o yaml",
         True),
        ("kubectl get po,svc,deploy,rs,sts,ds,cm,ing,pvc,sa,secret -o yaml", True),
        ("kubectl get Secret db -o yaml", True),
        ("kubectl get -o yaml secret db", True),
        ("kubectl get \\\n  secret db -o yaml", True),
        ("kubectl get secrets -o name | xargs kubectl get -o yaml", True),
        ("for s in $(kubectl get secrets -o name); do kubectl get $s -o yaml; done", True),
        ("kubectl get secrets -o name | xargs kubectl describe", False),
        ("kubectl get secret db && kubectl get pods -o yaml", False),
        ("kubectl view-secret db -a", True),
        ("kubectl create secret generic db --from-file=pw.txt --dry-run=client -o yaml", True),
        ("kubectl create secret generic db --from-file=pw.txt --dry-run=client -o yaml"
         " | kubeseal -o yaml > sealed.yaml", False),
        ("kubectl create secret generic db --from-file=pw.txt", False),
        # F6
        ("kubectl get secrets --template-file x.tmpl", False),
        ("kubectl get secret db # -o yaml", False),
        ("kubectl get secret-store -o yaml", False),
        # L4: terraform
        ("terraform output -json | jq -r '.[] | select(.sensitive) | .value'", True),
        ("terraform output -json | jq 'map_values(.value)'", True),
        ("terraform output -json | jq -r --arg k db_password '.[$k].value'", True),
        ("terraform output -json | gojq -r .db_password.value", True),
        ("terraform output -json | yq .db_password.value", True),
        ("terraform output -json \\\n  | jq -r .db_password.value", True),
        ("terraform state pull | jq '.outputs.db_password.value'", True),
        ("terraform state pull", True),
        ("terraform show -json | jq -r '.values.root_module.resources[]"
         " | select(.type==\"random_password\") | .values.result'", True),
        ("terraform state pull > state.json", False),
        ("terraform state pull | jq '.resources[].type'", False),
        ("terraform state list", False),
        ("terraform show", False),
        ("terraform output -json | jq -r '.[] | select(.sensitive | not) | .value'", False),
        # F5: a filter that only tests a secret output
        ("terraform output -json | jq -r '.db_password.type'", False),
        ("terraform output -json | jq -r '.password.sensitive'", False),
        ("terraform output -json | jq -r '.db_password != null'", False),
        ("terraform output -json | jq -e '.db_password' >/dev/null && echo present", False),
        ("terraform output -json | jq -r .db_password.value", True),
    ],
)  # fmt: skip
def test_review_s44c_commands_that_print_a_secret(command: str, reads: bool) -> None:
    """Secret review s44, third pass: flags before `oc extract`, `--to=/dev/stdout`, many
    kubectl flags and kinds, `view-secret`, `create secret -o yaml`, names then values; jq
    filters that print every sensitive output, or only test one; the Terraform state."""
    from exporter.secret_commands import reads_a_secret

    assert reads_a_secret(command) is reads


# --- Secret review s45 (of 6e1b000): ---------------------------------------------------
S45_FOUND = [
    # P1/F3: the items of the list, the arguments of the call, one after another
    ("redis-password",
     "r.acl_setuser('alice', enabled=True, passwords=['+Zq8vRt3Lm9Kw'], commands=['+@all'])",
     "Zq8vRt3Lm9Kw"),
    ("redis-password",
     'r.execute_command("ACL", "SETUSER", name, "on", ">Zq8vRt3Lm9Kw", "~*")\nlog(">done")',
     "Zq8vRt3Lm9Kw"),
    ("redis-password", "r.acl_setuser('a', passwords=[  pw ,  '+Zq8vRt3Lm9Kw'  ])",
     "Zq8vRt3Lm9Kw"),
    # L5: black's one argument a line; a tuple
    ("redis-password",
     "r.acl_setuser(\n    'alice',\n    enabled=True,\n    passwords=['+Zq8vRt3Lm9Kw'],\n)",
     "Zq8vRt3Lm9Kw"),
    ("redis-password", "r.acl_setuser('alice', passwords=('+Zq8vRt3Lm9Kw',))", "Zq8vRt3Lm9Kw"),
    # L5: a YAML list's item
    ("redis-password", "  - user alice on >Zq8vRt3Lm9Kw ~* +@all\n", "Zq8vRt3Lm9Kw"),
    # another review's: a password said with no "is" or colon; a live Stripe key cut short
    ("prose-secret", "login ok with password pa55w0rd!", "pa55w0rd!"),
    ("prose-secret", "pw pa55w0rd!", "pa55w0rd!"),
    ("prose-secret", "use password Hunter2Sun to log in", "Hunter2Sun"),
    ("stripe-key", "debug sk_live_51HqLyjWDarj session", "sk_live_51HqLyjWDarj"),
    # L4: a trailing comment (on the line or a neighbour) is no code
    ("secret-assignment", "user = app\npassword = Sunflower  ; set by puppet(1)\n", "Sunflower"),
    ("secret-assignment", "user = app  # see mysql(1)\npassword = Sunflower\n", "Sunflower"),
    ("secret-assignment", "socket = /tmp/mysql.sock  # see mysqld(8)\npassword = Sunflower\n",
     "Sunflower"),
    ("secret-assignment", "user = app\npassword = Sunflower\nenvironment = prod ; {staging}\n",
     "Sunflower"),
    ("secret-assignment", "# see mysqld(8)\nuser = app\npassword = Sunflower\n", "Sunflower"),
    # F1: a password next to quoted values is still one; a value with symbols or digits too
    ("secret-assignment", 'user = "app"\npassword = Sunflower\n', "Sunflower"),
    ("secret-assignment", 'user = "app"\npassword = Zq8v_Rt3Lm\n', "Zq8v_Rt3Lm"),
    ("secret-assignment", "user = app\npassword = pw_from_vault\n", "pw_from_vault"),
]  # fmt: skip
S45_CLEAN = [
    # F1: code made of plain assignments is no INI block (botocore, moto and crafted)
    '        self.status = "available"\n        self.master_user_password = master_user_'
    'password\n        self.db_name = db_name if db_name else "dev"\n',
    "        region = final_args['region_name']\n        s3_disable_express_session_auth = "
    "config_kwargs[\n            's3_disable_express_session_auth'\n        ]\n",
    '    username = "alice"\n    password = hashedPassword\n',
    '    username = "alice"\n    password = pw_from_env_var\n',
    '\turl = "https://x"\n\tpassword = dbPassword',
    'USERNAME = "admin"\nPASSWORD = adminPassword\n',
    '# Arrange\nuser = "alice"\npassword = plaintextPw\n# Act\n',
    '    user = "alice"\n    password = plaintextPw\n\n    resp = client.post(...)',
    '  script: |\n    user = "a"\n    password = pw_from_vault\n',
    '  user.email = "a@b.c"\n  user.password = generated_password_value\n',
    "user = app\npassword = password\n",
    "    user = app\n    password = db_password if db_password else default\n",
    "    user = app\n    password = secrets[\n        'db'\n    ]\n",
    "    cfg.user = app\n    self.password = Sunflower\n",
    "r.acl_setuser(\n    'alice',\n    passwords=[pw],\n    commands=['+@all'],\n)",
    # a name, then a word that is no password
    "login with password reset flow",
    "password hashing with bcrypt2b",
    "pw reset done",
    "pwd /home/user/x",
    "password $DB_PASSWORD1",
    "passwords md5sum12",
    '<span class="hljs-string">`Password &#x3C;<span class="hljs-subst">${<span>',
    "sk_live_abcdefghijkl",
    "sk_test_51HqLyjWDarj",
    # F3: quoted strings after the list (the call) are not its items
    "r.acl_setuser(name, enabled=True, passwords=[pw], commands=['+@read', '+@write'])",
    "r.acl_setuser(name, passwords=[pw], keys=['*'])\nexpected = ['+@all', '+Sunflower42']",
    'r.execute_command("ACL", "SETUSER", name, *rules)\nlog(">>> done")\nprint(">cleanup")',
    'r.execute_command("ACL", "SETUSER", name, "on", pw_rule)\nassert out == ">ok_done"',
]


@pytest.mark.parametrize(("detector", "text", "secret"), S45_FOUND)
def test_review_s45_the_secret_is_found_exactly(detector: str, text: str, secret: str) -> None:
    found = [(text[f.start : f.end], f.detector) for f in scan(text)]
    assert found == [(secret, detector)], found


@pytest.mark.parametrize("text", S45_CLEAN)
def test_review_s45_no_secret_is_found(text: str) -> None:
    assert scan(text) == [], [(f.detector, text[f.start : f.end]) for f in scan(text)]


S45_BLANK_RUNS = {
    "raw-command": lambda n: '"acl","setuser"' + " " * n,
    "raw-command-quote": lambda n: '"acl","setuser", \'' + " " * n,
    "redis-py": lambda n: "acl_setuser(passwords=[" + " " * n,
    "redis-py-item": lambda n: "acl_setuser(passwords=['+abcdefg'" + " " * n,
}


@pytest.mark.parametrize("shape", S45_BLANK_RUNS)
def test_review_s45_blank_runs_after_a_client_acl_stay_linear(shape: str) -> None:
    """(P1) `[ \\t]*,?[ \\t]*` tried at every position of a 1 KB window was cubic in a run
    of blanks: 800 of them took a second or more. Four times the run, four times the text:
    linear time, about four times as long."""
    unit = S45_BLANK_RUNS[shape]
    small = _cpu_seconds(unit(200) * 8)
    big = _cpu_seconds(unit(800) * 8)
    assert big < 8 * small + 0.1, (small, big)


@pytest.mark.parametrize(
    ("command", "reads"),
    [
        # F2: another get after `;`, `&&` or a new line is not the names' get
        ("kubectl get secrets -o name && kubectl get pods -o yaml",False),
        ("kubectl get secrets -o name\nkubectl get deploy api -o yaml",False),
        ("oc get secret -o name; oc get route -o yaml",False),
        ("kubectl get secrets -o name | wc -l; kubectl get configmap app -o yaml",False),
        ("kubectl get secrets -o name | xargs kubectl get -o yaml",True),
        ("for s in $(kubectl get secrets -o name); do kubectl get $s -o yaml; done",True),
        ("grep -rn 'terraform state pull' docs/",False),
        ("git commit -m 'terraform state pull works now'",False),
        ("echo 'run terraform state pull to inspect'",False),
        ("cd infra && terraform state pull",True),
        ("TF_LOG=debug terraform state pull",True),
        ("sudo terraform state pull",True),
        ("x=$(terraform state pull)",True),
        ("terraform output -json | jq 'to_entries | map(.key)'",False),
        ("terraform output -json | jq -r 'to_entries[] | .key'",False),
        ("terraform output -json | jq 'with_entries(.value |= .type)'",False),
        ("terraform output -json | jq -r '.[] | select(.sensitive) | .type'",False),
        ("terraform state pull | jq -r '.resources[] | select(.type =="
         " \"random_password\") | .name'",False),
        ("terraform show -json | jq '.values.root_module.resources[] |"
         " select(.type==\"aws_secretsmanager_secret\") | .address'",False),
        ("terraform show -json | jq '.values.outputs | map_values(.sensitive)'",False),
        ("terraform state pull | jq .",True),
        ("terraform state pull | jq",True),
        ("terraform show -json | jq .",True),
        ("terraform show -json | jq -C . | less -R",True),
        ("terraform state pull | jq '.resources[]'",True),
        ("terraform show -json | jq '.values'",True),
        ("terraform state pull | jq '.outputs'",True),
        ("terraform state pull 2>/dev/null",True),
        ("terraform state pull 2>&1",True),
        ("terraform state pull 2>&1 | jq '.resources[].type'",False),
        ("terraform state pull &>/dev/null",False),
        ("terraform state pull &> state.json",False),
        ("terraform state pull 2>&1 | jq '.resources[].instances[].attributes.result'",True),
        ("terraform output -json | jq -r .db_password.value 2>/dev/null",True),
        ("terraform output -json | jq -r '.db_password.value' 2> /dev/null || true",True),
        ("terraform output -json | jq -r .db_password.value >/dev/null",False),
        ("terraform output -json | jq -r 'if .db_password != null then"
         " .db_password.value else empty end'",True),
        ("terraform output -json | jq '.db_password.value | length'",False),
        ("terraform output -json | jq -r '.[] | select(.sensitive == true) | .value'",True),
        ("terraform output -json | jq -r 'to_entries[] | select(.value.sensitive==true)"
         " | \"\\(.key)=\\(.value.value)\"'",True),
        ("terraform output -json | jq -r '.[] | select(.type == \"string\") | .value'",True),
        ("terraform state pull > backup.tfstate && ls -la",False),
        ("terraform state pull >backup.tfstate; terraform state list",False),
        ("terraform state pull | jq '.serial'",False),
        ("terraform state pull | jq '.lineage'",False),
        ("terraform state pull | jq '.resources[].type'",False),
        ("terraform show -json | jq -r '.values.root_module.resources[].address'",False),
        ("terraform show -json | jq '.values.root_module.resources | length'",False),
        ("terraform show -json | jq '.values.outputs | keys'",False),
        ("terraform output -json | jq -r '.vpc_id.value'",False),
        ("terraform state pull | jq '.resources[] | select(.mode == \"managed\") |"
         " .type' | sort | uniq -c",False),
        ("terraform state pull | jq '.outputs.db_password.value'",True),
        ("terraform show -json | jq -r '.values.root_module.resources[] |"
         " select(.type==\"random_password\") | .values.result'",True),
        ("terraform output -json | jq -r '.[] | select(.sensitive | not) | .value'",False),
        ("terraform output -json | jq 'map_values(.value)'",True),
        ("terraform output -json | jq -r '.[].value'",True),
        ("terraform output -json | jq -r '.[] | .value'",True),
    ],
)  # fmt: skip
def test_review_s45_commands_that_print_a_secret(command: str, reads: bool) -> None:
    """Secret review s45: the names' own pipeline or loop; terraform at a command's start,
    not quoted in grep/git/echo; a jq filter's last step judged (names, tests, `.value`);
    the state printed whole by `jq .`; `2>/dev/null` is no redirect of the output."""
    from exporter.secret_commands import reads_a_secret

    assert reads_a_secret(command) is reads


S45_WRAPPED_PASSWORDS = [
    ("secret-assignment", "DB_PASSWORD=!!qwerty!!", "!!qwerty!!"),
    ("secret-assignment", 'password: "@@letmein@@"', "@@letmein@@"),
    ("secret-assignment", 'export DB_PASSWORD="__hunter_two__"', "__hunter_two__"),
    ("cli-secret", "mysql -p'!!dragon!!'", "!!dragon!!"),
    ("cli-secret", 'redis-cli -a "!!qwerty!!"', "!!qwerty!!"),
    ("url-credentials", "postgres://app:!!qwerty!!@db/app", "!!qwerty!!"),
    ("redis-password", "requirepass @@letmein@@", "@@letmein@@"),
    ("secret-assignment", "password = @sunflower@", "@sunflower@"),
    ("secret-assignment", '{"password": "<<dragon>>"}', "<<dragon>>"),
    ("secret-assignment", "SECRET_KEY=__thisisthedjangosecretkey__",
     "__thisisthedjangosecretkey__"),
    ("secret-assignment", 'POSTGRES_PASSWORD: "$$ecretpass"', "$$ecretpass"),
    ("secret-assignment", "PGPASSWORD=$$money", "$$money"),
    ("secret-assignment", 'password: "{{Zq8vRt3Lm9KwXy7Pq2}}"', "{{Zq8vRt3Lm9KwXy7Pq2}}"),
]  # fmt: skip


@pytest.mark.parametrize(("detector", "text", "secret"), S45_WRAPPED_PASSWORDS)
def test_review_s45_a_password_in_marks_is_found(detector: str, text: str, secret: str) -> None:
    """(L1) One word in a template's marks (`!!qwerty!!`, `@sunflower@`) is a password;
    `$$` is docker-compose's escaped `$`; `{{ }}` around random characters holds no name."""
    found = [(text[f.start : f.end], f.detector) for f in scan(text)]
    assert found == [(secret, detector)], found


@pytest.mark.parametrize(
    ("value", "placeholder"),
    [
        ("!!qwerty!!", False), ("@@letmein@@", False), ("__hunter_two__", False),
        ("<<dragon>>", False), ("@sunflower@", False), ("{{Zq8vRt3Lm9KwXy7Pq2}}", False),
        ("{{ Zq8vRt3Lm9Kw }}", False), ("#{Zq8vRt3Lm9Kw}", False), ("$$ecretpass", False),
        ("$$money", False), ("__thisisthedjangosecretkey__", False), ("@Sunflower@", False),
        ("__Zq8v__", False),
        # 6e1b000's placeholders stay placeholders
        ("__PASSWORD__", True), ("<<PASSWORD>>", True), ("@DB_PASS@", True),
        ("$$PASSWORD", True), ("#{db_password}", True), ("%(password)s", True),
        ("SET_ME", True), ("{{ db_password }}", True), ("!!PW!!", True),
        ("__DB_PASSWORD__", True), ("__db_password__", True), ("@@DB_PASS@@", True),
        ("{{ .Values.db.password }}", True), ("{{db_password}}", True),
        ("{{ db_password | default }}", True), ("#{ db.password }", True),
    ],
)  # fmt: skip
def test_review_s45_wrapped_placeholders(value: str, placeholder: bool) -> None:
    assert is_placeholder(value) is placeholder


@pytest.mark.parametrize(
    "text",
    [
        'echo "user alice on >Zq8vRt3Lm9Kw ~* +@all" >> users.acl && echo "user bob on '
        '>Xy7Pq2Lm9KwZq ~* +@all" >> users.acl\n',
        "printf 'user alice on >Zq8vRt3Lm9Kw ~* +@all\\nuser bob on >Xy7Pq2Lm9KwZq ~* +@all\\n'"
        " > users.acl\n",
        '"users.acl": "user alice on >Zq8vRt3Lm9Kw ~* +@all\\nuser bob on >Xy7Pq2Lm9KwZq ~* +@all"',
    ],
)
def test_review_s45_every_acl_user_of_a_line_is_read(text: str) -> None:
    """(L5) The first user's rules no longer swallow the second user's line."""
    found = [(text[f.start : f.end], f.detector) for f in scan(text)]
    assert found == [("Zq8vRt3Lm9Kw", "redis-password"), ("Xy7Pq2Lm9KwZq", "redis-password")]


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("__hunter_two__", True),  # a password in marks: no placeholder's name inside
        ("<<dragon>>", True),
        ("!!qwerty!!", True),
        ("__PASSWORD__", False),  # template placeholders stay
        ("%DB_PASSWORD%", False),
        ("@DB_PASS@", False),
        ("$$PASSWORD", False),
        ("#{pw}", False),
    ],
)
def test_an_ini_block_skips_the_same_placeholders_as_is_placeholder(
    value: str, found: bool
) -> None:
    """The INI rule had its own, looser copy of the wrapped-placeholder pattern: round 22
    narrowed ``is_placeholder``'s, but ``password = __hunter_two__`` among INI lines still
    went out as a placeholder. Both now ask ``is_wrapped_placeholder``."""
    text = f"user = app\npassword = {value}\nport = 3306\n"
    assert [text[f.start : f.end] for f in scan(text)] == ([value] if found else [])


# Review s46 (fix 144): config files inside JSON strings, Redis's multi-parameter SET and
# CONFIG GET replies, Terraform outputs whose value is an object or a list
S46_FOUND = [
    # 1: a my.cnf or redis.conf as a JSON string's escapes (tool output that is JSON)
    ("secret-assignment", '{"content": "[client]\\nuser = app\\npassword = Sunflower\\n"}',
     ["Sunflower"]),
    ("secret-assignment", '"my.cnf": "[client]\\nuser = app\\npassword = Sunflower\\n"',
     ["Sunflower"]),
    ("secret-assignment", '{"content": "[client]\\nuser=app\\npassword=S3cretPw!\\n"}',
     ["S3cretPw!"]),
    ("secret-assignment",
     '{"files": {"app.ini": "[db]\\r\\nhost = db\\r\\npass = Tulipfield\\r\\n"}}',
     ["Tulipfield"]),
    ("redis-password",
     '{"redis.conf": "bind 127.0.0.1\\nport 6379\\nrequirepass Sunflower42\\nmasterauth Tulip\\n"}',
     ["Sunflower42", "Tulip"]),
    ("redis-password", '{"x": "requirepass Sunflower42\\nport 6379"}', ["Sunflower42"]),
    ("redis-password", '{"out": "sentinel auth-pass mymaster Sunflower\\nOK"}', ["Sunflower"]),
    # 2: every password of a multi-parameter SENTINEL (CONFIG) SET, and CONFIG SET
    ("redis-password", "SENTINEL CONFIG SET auth-pass pw1xyzab sentinel-pass pw2abcde",
     ["pw1xyzab", "pw2abcde"]),
    ("redis-password", "redis-cli -p 26379 SENTINEL CONFIG SET sentinel-user admin "
     "sentinel-pass Zq8vRt3Lm9Kw", ["Zq8vRt3Lm9Kw"]),
    ("redis-password", "SENTINEL SET mymaster down-after-milliseconds 5000 auth-pass Sunflower "
     "quorum 2", ["Sunflower"]),
    ("redis-password", "CONFIG SET requirepass Sunflower masterauth Tulipfield",
     ["Sunflower", "Tulipfield"]),
    ("redis-password", "CONFIG SET maxmemory 100mb requirepass Sunflower", ["Sunflower"]),
    # 3: what CONFIG GET printed: redis-cli's numbered replies, RESP, raw, JSON
    ("redis-password", '1) "requirepass"\n2) "S3cretPw"\n', ["S3cretPw"]),
    ("redis-password", '127.0.0.1:6379> CONFIG GET *pass*\n1) "masterauth"\n2) "Tulipfield"\n'
     '3) "masteruser"\n4) ""\n5) "requirepass"\n6) "Sunflower"\n', ["Tulipfield", "Sunflower"]),
    ("redis-password", "*2\r\n$11\r\nrequirepass\r\n$9\r\nSunflower\r\n", ["Sunflower"]),
    ("redis-password", "requirepass\nSunflower\n", ["Sunflower"]),
    ("redis-password", "$ redis-cli CONFIG GET requirepass\nrequirepass\nSunflower\n",
     ["Sunflower"]),
    ("redis-password", '["requirepass","sunflower"]', ["sunflower"]),
    ("redis-password", '{"requirepass": "Sunflower"}', ["Sunflower"]),
    ("redis-password", "{'masterauth': 'Sunflower'}", ["Sunflower"]),
]  # fmt: skip
S46_CLEAN = [
    # 1: the same shapes, no secret
    '{"content": "[client]\\nuser = app\\nport = 3306\\n"}',
    '{"content": "[client]\\nuser = app\\npassword = __PASSWORD__\\n"}',
    '{"redis.conf": "bind 127.0.0.1\\n# requirepass foobared\\nport 6379\\n"}',
    '{"msg": "def f():\\n    password = get_password()\\n    return password\\n"}',
    '"print(\\"a\\\\npassword = \\" + x)"',
    # 2: prose about the commands
    "Use SENTINEL CONFIG SET sentinel-pass to set the password",
    "SENTINEL SET mymaster is how you change auth-pass settings",
    "# SENTINEL CONFIG SET sentinel-pass Sunflower",
    "SENTINEL CONFIG SET sentinel-pass $SENTINEL_PW",
    "SENTINEL CONFIG SET resolve-hostnames yes announce-hostnames yes",
    # 3: lists of names, empty values, prose
    '["requirepass", "masterauth"]',
    "requirepass\nmasterauth\n",
    '1) "requirepass"\n2) ""\n',
    '1) "maxmemory"\n2) "104857600"\n',
    '{"requirepass": ""}',
    "The requirepass\nsetting is important.",
    "redis.conf has requirepass and masterauth directives",
]


@pytest.mark.parametrize(("detector", "text", "secrets"), S46_FOUND)
def test_review_s46_the_secrets_are_found(detector: str, text: str, secrets: list[str]) -> None:
    """(1) The INI and redis.conf rules read a JSON string's escaped lines as lines; (2)
    every `*-pass` of a multi-parameter SET; (3) the value of a CONFIG GET reply."""
    found = [(text[f.start : f.end], f.detector) for f in scan(text)]
    assert found == [(secret, detector) for secret in secrets], found


@pytest.mark.parametrize("text", S46_CLEAN)
def test_review_s46_no_secret_is_found(text: str) -> None:
    assert scan(text) == [], [(f.detector, text[f.start : f.end]) for f in scan(text)]


S46_TERRAFORM_OUTPUT = """{
  "db_creds": {
    "sensitive": true,
    "type": [
      "object",
      {
        "password": "string",
        "username": "string"
      }
    ],
    "value": {
      "password": "Xq8mZ2vLp4Rw",
      "username": "svc_reporting"
    }
  },
  "db_password": {
    "sensitive": true,
    "type": "string",
    "value": "Sunflower"
  },
  "hosts": {
    "sensitive": true,
    "type": [
      "list",
      "string"
    ],
    "value": [
      "db-a.internal",
      "db-b.internal"
    ]
  },
  "settings": {
    "sensitive": false,
    "type": [
      "object",
      {
        "value": "string"
      }
    ],
    "value": {
      "value": "https://example.com/health"
    }
  },
  "vpc_id": {
    "sensitive": false,
    "type": "string",
    "value": "vpc-0abc123def456"
  }
}
"""


def test_review_s46_terraform_output_json_sensitive_values_of_any_type() -> None:
    """(4) `terraform output -json` with no jq: an output whose `type` is a list (an object's
    or a list's) has its value after braces of its own; that value was "another object's"
    and printed in the clear. Each string of a sensitive value goes; the rest stays."""
    text = S46_TERRAFORM_OUTPUT
    found = {text[f.start : f.end] for f in scan(text)}
    assert found == {"Xq8mZ2vLp4Rw", "svc_reporting", "Sunflower", "db-a.internal",
                     "db-b.internal"}  # fmt: skip


def test_review_s46_a_state_file_s_sensitive_object_output() -> None:
    """The state's order: the value first, its type (with braces) between it and the flag."""
    text = json.dumps({
        "outputs": {
            "creds": {"value": {"password": "Kq9mW2pLx7vR", "user": "reporting"},
                      "type": ["object", {"password": "string", "user": "string"}],
                      "sensitive": True},
            "name": {"value": "public-name", "type": "string"},
        }
    })  # fmt: skip
    assert {text[f.start : f.end] for f in scan(text)} == {"Kq9mW2pLx7vR", "reporting"}


@pytest.mark.parametrize(
    "text",
    [
        '{"a": {"value": "zzzzzzzzzz"}, "sensitive": true}',  # the value of another object
        '{"value": "keepme12345", "x": {"sensitive": true}}',
        '{"out": {"sensitive": true, "type": "string"}, "v": {"value": "keepme12345"}}',
        '{"sensitive": true, "type": ["list", "string"], "value": ["(sensitive value)"]}',
    ],
)
def test_review_s46_a_value_beside_no_flag_stays(text: str) -> None:
    assert scan(text) == [], [text[f.start : f.end] for f in scan(text)]


@pytest.mark.parametrize(
    ("command", "reads"),
    [
        ("redis-cli CONFIG GET requirepass", True),
        ('redis-cli -a "$PW" config get "*pass*"', True),
        ("docker exec cache redis-cli CONFIG GET '*'", True),
        ("redis-cli config get master*", True),
        ("redis-cli CONFIG GET maxmemory", False),
        ("redis-cli CONFIG GET maxmemory save", False),
        ("redis-cli CONFIG SET requirepass x", False),
        ('grep -n "config get requirepass" notes.md', False),
    ],
)
def test_review_s46_redis_cli_config_get_prints_a_password(command: str, reads: bool) -> None:
    """(3) Not at a terminal, redis-cli prints `requirepass` and the password each alone on a
    line (`*pass*`: among other names): nothing in the output says which line is which."""
    from exporter.secret_commands import reads_a_secret

    assert reads_a_secret(command) is reads


# Review 143 of detectors 2026.12-22/-23 (fix helper 149)


def _covered(text: str, secret: str) -> bool:
    """Every occurrence of ``secret`` lies whole inside one finding (a part is a leak)."""
    spans = [(f.start, f.end) for f in scan(text)]
    at = text.find(secret)
    assert at >= 0, (text, secret)
    while at >= 0:
        if not any(s <= at and at + len(secret) <= e for s, e in spans):
            return False
        at = text.find(secret, at + 1)
    return True


def _template_json(values: int, length: int) -> str:
    """Terraform output JSON whose sensitive values are `{{ a_a_a…A }}`, each different."""
    lines = []
    for i in range(values):
        tag = "".join("abcdefghij"[int(c)] for c in str(i))
        body = "a_" * (length // 2) + tag + "A"
        lines.append('{"sensitive": true, "value": "{{ ' + body + ' }}"}\n')
    return "".join(lines)


def test_review_s47_a_template_name_is_read_in_linear_time() -> None:
    """(P1) `[a-z_][a-z_]*…(?:_[a-z0-9]+)*` split a run of `a_a_a…` every way: 4 kB took a
    second. Eight times the value, about eight times the time (not 64)."""
    from exporter.secret_heuristics import is_wrapped_placeholder

    def seconds(n: int) -> float:
        start = time.process_time()
        for i in range(20):
            is_wrapped_placeholder("{{ " + "a_" * n + "b" * i + "A }}")
        return time.process_time() - start

    small, big = seconds(500), seconds(4000)
    assert big < 20 * small + 0.05, (small, big)
    small = _cpu_seconds(_template_json(5, 500))
    big = _cpu_seconds(_template_json(5, 4000))
    assert big < 20 * small + 0.1, (small, big)


S47_PLACEHOLDERS = [
    # (H1) digits inside a word, or a number: a password in marks
    ("@@ZQ8VRT3LM9KW@@", False),
    ("__S3CR3T42__", False),
    ("$$X7K9P2QM4R", False),
    ("@HUNTER2@", False),
    ("__SUNFLOWER42__", False),
    ("__my_secret_2024__", False),
    ("@db_pass_42@", False),
    # (M7) `%word%` is a password in marks as `__word__` is
    ("%dragon%", False),
    ("%Zq8vRt3Lm9Kw%", False),
    # a template's placeholders, Windows' variables
    ("__DB_PASSWORD__", True),
    ("@PW@", True),
    ("{{ db.password }}", True),
    ("$$PASSWORD", True),
    ("$$DB_PASSWORD", True),
    ("%DB_PASS%", True),
    ("%APPDATA%", True),
    ("%appdata%", True),
    ("%ProgramFiles%", True),
    ("__OAUTH2_SECRET__", True),
    ("__PASSWORD_2__", True),
    ("{{ pw_2024 }}", True),
    ("{{ .Values.db.password }}", True),
]


@pytest.mark.parametrize(("value", "placeholder"), S47_PLACEHOLDERS)
def test_review_s47_digits_in_marks(value: str, placeholder: bool) -> None:
    assert is_placeholder(value) is placeholder


S47_FOUND = [
    # H1: upper-case passwords with digits in a template's marks
    ("DB_PASSWORD=@@ZQ8VRT3LM9KW@@\n", "ZQ8VRT3LM9KW"),
    ("REDIS_PASSWORD=__S3CR3T42__\n", "S3CR3T42"),
    ("POSTGRES_PASSWORD=$$X7K9P2QM4R\n", "X7K9P2QM4R"),
    # M7
    ("user = app\npassword = %dragon%\n", "dragon"),
    ("API_SECRET=%Zq8vRt3Lm9Kw%\n", "Zq8vRt3Lm9Kw"),
    # M1: an item not read (an expression, an f-string) or a comment before the next
    ('r.acl_setuser("svc", enabled=True, passwords=["+" + pw, "+Hq4tPz8WnR2k"])', "Hq4tPz8WnR2k"),
    ('r.acl_setuser("svc", passwords=[f"+{pw}", "+Hq4tPz8WnR2k"])', "Hq4tPz8WnR2k"),
    (
        'r.acl_setuser(\n    "alice",\n    passwords=[\n        "+Zq8vRt3Lm9Kw",  # primary\n'
        '        "+Xy7Pq2Lm9KwZq",\n    ],\n)\n',
        "Xy7Pq2Lm9KwZq",
    ),
    # M2: a passphrase of snake_case or camelCase words beside quoted lines
    ('host = "db.internal"\nuser = "app"\npassword = correct_horse_battery_staple\n',
     "correct_horse_battery_staple"),
    ('host = "db.internal"\npassword = letMeIn\n', "letMeIn"),
    # M3: the whole word after `password`, quoted too
    ("Admin login works with password Zq8v-Rt3L:m9x!\n", "Zq8v-Rt3L:m9x!"),
    ("root pw P@ssw0rd.2024x\n", "P@ssw0rd.2024x"),
    ("try password Tr0ub.4dor&3 now", "Tr0ub.4dor&3"),
    ('use password "Tr0ub4dor&3" to log in', "Tr0ub4dor&3"),
    # M4: the last ACL rule before the quote that opened the line
    ('echo "user alice on ~* +@all >Zq8vRt3Lm9Kw" >> users.acl', "Zq8vRt3Lm9Kw"),
    ('r.execute_command("ACL SETUSER alice on ~* +@all >Zq8vRt3Lm9Kw")', "Zq8vRt3Lm9Kw"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "secret"), S47_FOUND)
def test_review_s47_the_secret_is_covered_whole(text: str, secret: str) -> None:
    found = [(f.detector, text[f.start : f.end]) for f in scan(text)]
    assert _covered(text, secret), found


S47_CLEAN = [
    "DB_PASSWORD=__DB_PASSWORD__\n",
    "password = %DB_PASS%\n",
    "set PASSWORD=%APPDATA%\n",
    "POSTGRES_PASSWORD=$$PASSWORD\n",
    "PW=@PW@\n",
    'user = "app"\npassword = new_password\n',
    '    username = "alice"\n    password = hashedPassword\n',
    'user = "app"\npassword = secretFromVault\nsecretFromVault = 1\n',
    "password hashing uses bcrypt.",
    "reset the password at https://x.com/Reset1!",
    "the password foo=Bar1!x",
    'password "$DB_PASSWORD"',
    "password user1@example.com",
    "password db.internal:5432",
    "password ./scripts/Gen1!.sh",
    'echo "user alice on ~* +@all" >> users.acl',
    'echo "user alice on >Zq8vRt3Lm9Kw\' is a typo"',
    'r.acl_setuser("a", passwords=["+" + pw, other])',
    'r.acl_setuser("a", passwords=[  # the first\n    "+" + pw,\n])',
]


@pytest.mark.parametrize("text", S47_CLEAN)
def test_review_s47_no_secret_is_found(text: str) -> None:
    assert scan(text) == [], [(f.detector, text[f.start : f.end]) for f in scan(text)]


@pytest.mark.parametrize(
    ("command", "reads"),
    [
        # H2: the state read behind a runner
        ("timeout 60 terraform state pull", True),
        ("timeout -k 5 60 terraform state pull", True),
        ("sudo -u deploy terraform state pull", True),
        ("aws-vault exec prod -- terraform state pull", True),
        ("doppler run -- terraform show -json", True),
        ("op run --env-file=.env -- terraform state pull", True),
        ("bash -c 'terraform state pull'", True),
        ("bash -lc 'cd infra; terraform state pull'", True),
        ("ssh bastion 'terraform state pull'", True),
        ("ssh -i k.pem ubuntu@10.0.0.1 'terraform state pull'", True),
        ("su deploy -c 'terraform state pull'", True),
        ("nice -n 10 terraform show -json", True),
        ("docker run --rm -v $PWD:/w -w /w hashicorp/terraform state pull", True),
        ("/usr/local/bin/terraform state pull", True),
        ('echo "$(terraform state pull)"', True),
        # ... not a word in another command's arguments
        ("grep -rn 'terraform state pull' docs/", False),
        ("git commit -m 'terraform state pull works'", False),
        ("rg 'terraform state pull'", False),
        ("grep -e terraform state pull", False),
        ("echo 60 terraform state pull", False),
        ("ls ./terraform state pull", False),
        ('git log --grep="terraform state pull"', False),
        ("timeout 60 terraform state pull > state.json", False),
        # H3: a bare transform after the secret's path
        ("terraform output -json | jq -r '.db_password.value | @sh'", True),
        ("terraform output -json | jq -r '.db_password.value | @base64'", True),
        ("terraform output -json | jq -r '.db_password.value | tostring'", True),
        ("terraform output -json | jq -r '.db_password.value | ascii_downcase | @json'", True),
        ("terraform output -json | jq '.db_password.value | length'", False),
        ("terraform output -json | jq '.db_password.value | length | tostring'", False),
        ("terraform output -json | jq -r '.db_host.value | @sh'", False),
        ("terraform state pull | jq -r '.resources[] | [.type, .name] | @tsv'", False),
        # M6: a pipe continued on the next line
        ("kubectl get secrets -o name |\n  xargs kubectl get -o yaml", True),
        ("kubectl get secrets -o name |\n  wc -l", False),
        ("kubectl get secrets -o name\nkubectl get deploy api -o yaml", False),
    ],
)
def test_review_s47_commands_that_print_a_secret(command: str, reads: bool) -> None:
    assert reads_a_secret(command) is reads


@pytest.mark.parametrize(
    "unit",
    [
        "timeout 1 ",
        "sudo -u x ",
        "-- ",
        "bash -c '",
        "ssh h '",
        "a/",
        "terraform state pull | jq '. | @sh | ",
        "kubectl get secrets -o name |\n",
    ],
)
def test_review_s47_command_checks_stay_linear(unit: str) -> None:
    """Runs of the pieces the command checks read back over or step through."""

    def seconds(n: int) -> float:
        text = unit * (n // len(unit)) + "terraform state pull"
        start = time.process_time()
        reads_a_secret(text)
        return time.process_time() - start

    small, big = seconds(25_000), seconds(200_000)
    assert big < 20 * small + 0.1, (small, big)


@pytest.mark.parametrize(
    "unit",
    [
        'r.acl_setuser("a", passwords=["+" + pw, ',
        '"acl","setuser",(',
        "acl_setuser(passwords=[  # c\n",
        "password Zq8v-Rt3L:m9x!",
        "password ",
        'echo "user alice on >Zq8vRt3Lm9Kw" ',
        'user = "a"\npassword = a_b_c\n',
        "%a_b%",
        "__A1_B2__ ",
    ],
)
def test_review_s47_detectors_stay_linear(unit: str) -> None:
    """Runs of each touched detector's own pieces: eight times the text, not 64 times the
    time."""
    small = _cpu_seconds(unit * (25_000 // len(unit)))
    big = _cpu_seconds(unit * (200_000 // len(unit)))
    assert big < 20 * small + 0.2, (small, big)


def test_a_sensitive_object_whose_type_has_a_value_attribute() -> None:
    """Pretty-printed `terraform output -json` of an object with an attribute named
    `value`: the type's `{"value": "string"}` is one level down from the flag (the blanks
    after its `{` once hid that), so the output's own value is the one that goes."""
    text = json.dumps(
        {
            "db": {
                "sensitive": True,
                "type": ["object", {"value": "string"}],
                "value": {"value": "Hq7vLm2xPz9Rk4"},
            }
        },
        indent=2,
    )
    assert {text[f.start : f.end] for f in scan(text)} == {"Hq7vLm2xPz9Rk4"}
