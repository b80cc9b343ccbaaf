"""A synthetic token of each format in exporter/service_tokens.py (and the widened ones in
detectors.py), random in the vendor's shape: never a real credential."""

from __future__ import annotations

import random

from tests.secret_corpus import ALNUM, DIGITS, LOWER, UPPER, rand

_R = random.Random(56)
HEX = "0123456789abcdef"
W = ALNUM + "_-"


def _uuid() -> str:
    return "-".join(rand(_R, n, HEX) for n in (8, 4, 4, 4, 12))


#: detector name -> a token it must find whole
SERVICE_TOKEN_SAMPLES: dict[str, str] = {
    "langsmith-key": f"lsv2_pt_{rand(_R, 32, HEX)}_{rand(_R, 10, HEX)}",
    "tavily-key": f"tvly-dev-{rand(_R, 32)}",
    "pinecone-key": f"pcsk_{rand(_R, 5)}_{rand(_R, 63)}",
    "together-key": f"tgp_v1_{rand(_R, 43, W)}",
    "nvidia-key": f"nvapi-{rand(_R, 64, W)}",
    "elevenlabs-key": f"sk_{rand(_R, 48, HEX)}",
    "langfuse-key": f"sk-lf-{_uuid()}",
    "e2b-key": f"e2b_{rand(_R, 40, HEX)}",
    "firecrawl-key": f"fc-{rand(_R, 32, HEX)}",
    "huggingface-org-token": f"api_org_{rand(_R, 34, LOWER + UPPER)}",
    "neon-key": f"napi_{rand(_R, 64, LOWER + DIGITS)}",
    "supabase-secret-key": f"sb_secret_{rand(_R, 31, W)}",
    "vercel-token": f"vcp_{rand(_R, 56)}",
    "render-key": f"rnd_{rand(_R, 32)}",
    "heroku-key": f"HRKU-AA{rand(_R, 58, W)}",
    "deno-token": f"ddp_{rand(_R, 36)}",
    "prefect-key": f"pnu_{rand(_R, 36)}",
    "planetscale-token": f"pscale_pw_{rand(_R, 43, W)}",
    "1password-token": f"ops_eyJ{rand(_R, 300, ALNUM + '+/')}",
    "figma-token": f"figd_{rand(_R, 40, W)}",
    "notion-token": f"ntn_{rand(_R, 11, DIGITS)}{rand(_R, 35)}",
    "bitbucket-token": f"ATBB{rand(_R, 32)}",
    "sourcegraph-token": f"sgp_{rand(_R, 16, HEX)}_{rand(_R, 40, HEX)}",
    "sonarqube-token": f"squ_{rand(_R, 40, HEX)}",
    "buildkite-token": f"bkua_{rand(_R, 40, HEX)}",
    "circleci-token": f"CCIPAT_{rand(_R, 22)}_{rand(_R, 40, HEX)}",
    "tailscale-key": f"tskey-api-{rand(_R, 16)}-{rand(_R, 32)}",
    "cloudflare-token": f"cfut_{rand(_R, 48)}",
    "artifactory-key": f"AKCp{rand(_R, 69)}",
    "openshift-token": f"sha256~{rand(_R, 43, W)}",
    "dynatrace-token": f"dt0c01.{rand(_R, 24, UPPER + DIGITS)}.{rand(_R, 64, UPPER + DIGITS)}",
    "contentful-token": f"CFPAT-{rand(_R, 43, W)}",
    "dropbox-token": f"sl.{rand(_R, 140, W)}",
    "posthog-key": f"phx_{rand(_R, 43)}",
    "airtable-token": f"pat{rand(_R, 14)}.{rand(_R, 64, HEX)}",
    "rubygems-key": f"rubygems_{rand(_R, 48, HEX)}",
    "azure-ad-secret": f"{rand(_R, 3)}8Q~{rand(_R, 32, ALNUM + '_~.-')}",
    "mailchimp-key": f"{rand(_R, 32, HEX)}-us16",
    "brevo-key": f"xkeysib-{rand(_R, 64, HEX)}-{rand(_R, 16)}",
    "resend-key": f"re_{rand(_R, 8)}_{rand(_R, 24)}",
    "shippo-token": f"shippo_live_{rand(_R, 40, HEX)}",
    "plaid-token": f"access-production-{_uuid()}",
    "braintree-token": "access_token$production$"
    + f"{rand(_R, 16, LOWER + DIGITS)}${rand(_R, 32, HEX)}",
    "mapbox-secret-token": f"sk.eyJ{rand(_R, 60, W)}.{rand(_R, 22, W)}",
    "fireworks-key": f"fw_{rand(_R, 24)}",
    "alibaba-key-id": f"LTAI{rand(_R, 20)}",
    "adafruit-key": f"aio_{rand(_R, 28)}",
    # stop 58 (their own generator: the samples above stay as they were)
    "wandb-key": f"wandb_v1_{rand(random.Random(581), 77, ALNUM + '_')}",
    "brave-key": "BSAZWzwDFrlGXl-z1BVXBt7wRkl8OZf",
    "google-refresh-token": f"1//0g{rand(random.Random(582), 98, W)}",
}

#: tokens of known formats in shapes the patterns did not take: detector -> token
WIDENED_SAMPLES: list[tuple[str, str]] = [
    ("xai-key", f"xai-{rand(_R, 40)}_{rand(_R, 39)}"),
    ("replicate-token", f"r8_{rand(_R, 18)}-{rand(_R, 9)}_{rand(_R, 8)}"),
    ("postman-key", f"PMAK-{rand(_R, 24, HEX.upper())}-{rand(_R, 34, HEX.upper())}"),
    ("gitlab-token", f"glpat-{rand(_R, 36, W)}.01.{rand(_R, 9, LOWER + DIGITS)}"),
    ("gitlab-token", f"glimt-{rand(_R, 25, W)}"),
    ("telegram-bot-token", f"5790200:AA{rand(_R, 33, W)}"),
    ("newrelic-key", f"NRII-{rand(_R, 32, W)}"),
]
