"""More services' token formats, each a fixed prefix and a documented shape: AI and search
APIs, developer platforms, package registries, payments and mail. The shapes are the
vendors' own (or, where a vendor does not publish one, what secret scanners agree on); each
is tight (exact length, alphabet, separators) and checked for randomness, so names in code
that share a prefix (``napi_create_function``, ``re_compile``, ``fw_cdev_event``) stay.

A change here changes what gets redacted: bump ``detectors.DETECTOR_VERSION``.
"""

from __future__ import annotations

from collections.abc import Callable

from exporter.secret_heuristics import DIGIT, LOWER, UPPER, is_dummy, looks_random

__all__ = ["LONG_SERVICE_TOKENS", "SHORT_SERVICE_TOKENS", "three_classes"]

#: name, what it catches, pattern, prefix literals, check, the group that holds the secret
TokenFormat = tuple[str, str, str, tuple[str, ...], Callable[[str], bool], int]

_W = r"[A-Za-z0-9_\-]"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def three_classes(body: str) -> bool:
    """Lower and upper case letters and digits: what a prefix common in names needs."""
    return all(p.search(body) for p in (LOWER, UPPER, DIGIT)) and not is_dummy(body)


def _hex_random(body: str) -> bool:
    """Hex with letters and digits both (not ``0000…`` or a word of a-f)."""
    return looks_random(body) or (bool(DIGIT.search(body)) and not is_dummy(body))


def _brave_shape(token: str) -> bool:
    """Random, and not words joined by ``-``/``_`` (``BSA-Report-2024-Q3-final-draft1``:
    the Bank Secrecy Act in a bank's file names)."""
    return three_classes(token) and sum(token.count(c) for c in "-_") <= 1


# Formats of 28 characters or more (shorter strings skip their checks).
# fmt: off
LONG_SERVICE_TOKENS: tuple[TokenFormat, ...] = (
    # AI, search and agent services
    ("langsmith-key", "lsv2_pt_/lsv2_sk_ LangSmith keys",
     r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", ("lsv2_",), _hex_random, 0),
    ("tavily-key", "tvly-… Tavily keys", r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}", ("tvly-",),
     looks_random, 0),
    ("pinecone-key", "pcsk_… Pinecone keys", r"pcsk_[A-Za-z0-9]{5,6}_[A-Za-z0-9]{63}",
     ("pcsk_",), looks_random, 0),
    ("together-key", "tgp_v1_… Together AI keys", rf"tgp_v1_{_W}{{43}}", ("tgp_v1_",),
     looks_random, 0),
    ("nvidia-key", "nvapi-… NVIDIA API keys", rf"nvapi-{_W}{{64}}", ("nvapi-",), looks_random, 0),
    ("wandb-key", "wandb_v1_… Weights & Biases keys", rf"wandb_v1_{_W}{{60,120}}",
     ("wandb_v1_",), looks_random, 0),
    # Brave publishes no shape; scanners agree on BSA and 28 more
    ("brave-key", "BSA… Brave Search API keys", r"BSA[A-Za-z0-9_\-]{28}", ("BSA",),
     _brave_shape, 0),
    ("elevenlabs-key", "sk_<48 hex> ElevenLabs keys", r"sk_[a-f0-9]{48}", ("sk_",),
     _hex_random, 0),
    ("langfuse-key", "sk-lf-… Langfuse secret keys", rf"sk-lf-{_UUID}", ("sk-lf-",),
     _hex_random, 0),
    ("e2b-key", "e2b_… E2B keys", r"e2b_[a-f0-9]{40}", ("e2b_",), _hex_random, 0),
    ("firecrawl-key", "fc-… Firecrawl keys", r"fc-[a-f0-9]{32}", ("fc-",), _hex_random, 0),
    ("huggingface-org-token", "api_org_… Hugging Face organisation tokens",
     r"api_org_[A-Za-z]{34}", ("api_org_",), looks_random, 0),
    # developer platforms and clouds
    ("neon-key", "napi_… Neon API keys", r"napi_[a-z0-9]{64}", ("napi_",), looks_random, 0),
    ("supabase-secret-key", "sb_secret_… Supabase secret keys", rf"sb_secret_{_W}{{31,60}}",
     ("sb_secret_",), looks_random, 0),
    ("vercel-token", "vcp_/vci_/vca_/vcr_/vck_ Vercel tokens", r"vc[pikar]_[A-Za-z0-9]{40,80}",
     ("vcp_", "vci_", "vca_", "vcr_", "vck_"), looks_random, 0),
    ("render-key", "rnd_… Render API keys", r"rnd_[A-Za-z0-9]{32}", ("rnd_",), looks_random, 0),
    ("heroku-key", "HRKU-AA… Heroku API keys", rf"HRKU-AA{_W}{{58}}", ("HRKU-",),
     looks_random, 0),
    ("deno-token", "ddp_/ddw_ Deno Deploy tokens", r"dd[pw]_[A-Za-z0-9]{36}", ("ddp_", "ddw_"),
     looks_random, 0),
    ("prefect-key", "pnu_… Prefect API keys", r"pnu_[A-Za-z0-9]{36}", ("pnu_",), looks_random, 0),
    ("planetscale-token", "pscale_pw_/pscale_tkn_/pscale_oauth_ PlanetScale secrets",
     r"pscale_(?:pw|tkn|oauth)_[\w=.\-]{32,64}", ("pscale_",), looks_random, 0),
    ("1password-token", "ops_eyJ… 1Password service account tokens",
     r"ops_eyJ[A-Za-z0-9+/_\-]{250,}={0,3}", ("ops_eyJ",), looks_random, 0),
    ("figma-token", "figd_/figu_/figo_/figp_ Figma tokens", rf"fig(?:d|ur?|or?|p)_{_W}{{40,54}}",
     ("figd_", "figu_", "figo_", "figur_", "figor_", "figp_"), looks_random, 0),
    ("notion-token", "secret_…/ntn_… Notion tokens",
     r"secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35}", ("secret_", "ntn_"),
     looks_random, 0),
    ("bitbucket-token", "ATBB… Bitbucket app passwords", r"ATBB[A-Za-z0-9_=.\-]{32,100}",
     ("ATBB",), looks_random, 0),
    ("sourcegraph-token", "sgp_… Sourcegraph tokens",
     r"sgp_(?:[a-f0-9]{16}_|local_)?[a-f0-9]{40}", ("sgp_",), _hex_random, 0),
    ("sonarqube-token", "squ_/sqp_/sqa_ SonarQube and sqco_ SonarCloud tokens",
     r"sq[pua]_[a-f0-9]{40}|sqco_[A-Za-z0-9]{59}", ("squ_", "sqp_", "sqa_", "sqco_"),
     looks_random, 0),
    ("buildkite-token", "bkua_… Buildkite tokens", r"bkua_[a-f0-9]{40}", ("bkua_",),
     _hex_random, 0),
    ("circleci-token", "CCIPAT_… CircleCI tokens", r"CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}",
     ("CCIPAT_",), looks_random, 0),
    ("tailscale-key", "tskey-… Tailscale keys",
     r"tskey-[a-z]+-[A-Za-z0-9]{6,40}-[A-Za-z0-9]{20,80}", ("tskey-",), looks_random, 0),
    ("cloudflare-token", "cfut_/cfat_ Cloudflare API tokens", r"cf[ua]t_[A-Za-z0-9]{40,48}",
     ("cfut_", "cfat_"), looks_random, 0),
    ("artifactory-key", "AKCp… JFrog Artifactory keys", r"AKCp[A-Za-z0-9]{69}", ("AKCp",),
     looks_random, 0),
    ("openshift-token", "sha256~… OpenShift tokens", rf"sha256~{_W}{{43}}", ("sha256~",),
     looks_random, 0),
    ("dynatrace-token", "dt0c01.… Dynatrace tokens", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}",
     ("dt0c01.",), looks_random, 0),
    ("contentful-token", "CFPAT-… Contentful tokens", rf"CFPAT-{_W}{{43}}", ("CFPAT-",),
     looks_random, 0),
    ("dropbox-token", "sl.… Dropbox access tokens", rf"sl\.(?:u\.)?{_W}{{130,1200}}", ("sl.",),
     three_classes, 0),
    ("posthog-key", "phx_… PostHog personal keys", r"phx_[A-Za-z0-9]{43,48}", ("phx_",),
     looks_random, 0),
    ("airtable-token", "pat….… Airtable personal access tokens",
     r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", ("pat",), looks_random, 0),
    ("rubygems-key", "rubygems_… RubyGems keys", r"rubygems_[a-f0-9]{48}", ("rubygems_",),
     _hex_random, 0),
    ("google-refresh-token", "1//0… Google OAuth refresh tokens (firebase login:ci, gcloud)",
     rf"1//0{_W}{{40,512}}", ("1//0",), looks_random, 0),
    ("azure-ad-secret", "…Q~… Microsoft Entra (Azure AD) client secrets",
     r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}", ("Q~",), looks_random, 0),
    # payments, mail, maps
    ("mailchimp-key", "<32 hex>-us<N> Mailchimp keys", r"[a-f0-9]{32}-us[0-9]{1,2}", ("-us",),
     _hex_random, 0),
    ("brevo-key", "xkeysib-… Brevo (Sendinblue) keys", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}",
     ("xkeysib-",), looks_random, 0),
    ("resend-key", "re_… Resend keys", r"re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}", ("re_",),
     three_classes, 0),
    ("shippo-token", "shippo_live_/shippo_test_ tokens", r"shippo_(?:live|test)_[a-f0-9]{40}",
     ("shippo_",), _hex_random, 0),
    ("plaid-token", "access-production-… Plaid access tokens",
     rf"access-(?:sandbox|development|production)-{_UUID}", ("access-",), _hex_random, 0),
    ("braintree-token", "access_token$production$… Braintree tokens",
     r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}", ("access_token$",),
     _hex_random, 0),
    ("mapbox-secret-token", "sk.eyJ… Mapbox secret tokens",
     rf"sk\.eyJ{_W}{{30,120}}\.{_W}{{20,30}}", ("sk.eyJ",), looks_random, 0),
)
# Formats that may be shorter than 28 characters.
SHORT_SERVICE_TOKENS: tuple[TokenFormat, ...] = (
    ("fireworks-key", "fw_… Fireworks AI keys", r"fw_[A-Za-z0-9]{20,40}", ("fw_",),
     three_classes, 0),
    ("alibaba-key-id", "LTAI… Alibaba Cloud access key ids", r"LTAI[A-Za-z0-9]{20}", ("LTAI",),
     looks_random, 0),
    ("adafruit-key", "aio_… Adafruit IO keys", r"aio_[A-Za-z0-9]{28}", ("aio_",),
     three_classes, 0),
)
# fmt: on
