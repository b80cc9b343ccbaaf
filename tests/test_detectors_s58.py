"""Stop 58: credentials in forms a helper's sweep of vendors' formats found missed (a key
after ``wandb login``, Datadog's application-key and Azure's function-key headers, Azure API
Management's ``subscription-key``, a token in Markdown emphasis or glued to a constant's
name by a prefix with its own separator), and documentation's example keys that are nobody's
secret."""

from __future__ import annotations

import pytest

from exporter.detectors import scan
from tests.test_detectors import _covered


def _found(text: str) -> list[tuple[str, str]]:
    return [(f.detector, text[f.start : f.end]) for f in scan(text)]


HEX40 = "06b40928b5b7a767c76fb008f86bebb2737f6a6f"
HF = "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"  # hf_ and 34 letters
SENDGRID = "SG.xK9mQ2vLp7RtZw4AbCdEfG.Hb8rN2kLm9QzXcVb5nM1aS3dF6gH8jK0lP2oI4uY7tR"
GOOGLE = "AIzaSyD4kL9mQ2vLp7RtZw4AbCdEfGhJkLmNoPq"
STRIPE = "sk_live_51HqLyjWDarjtT1zdp7dcXk9mQ2vLp7RtZw4"

MISSED = [
    # Weights & Biases: the key as `wandb login`'s argument
    (f"wandb login {HEX40}", HEX40),
    (f"$ wandb login --relogin {HEX40}", HEX40),
    (f"wandb login --host=https://wandb.example.com '{HEX40}'", HEX40),
    (f"wandb login --relogin --host https://api.wandb.ai {HEX40}", HEX40),
    # headers that hold only a key
    (f'curl -H "DD-API-KEY: 3f9c2a7b1e8d4f6a0c5b9e2d7a1f4c8b" -H "DD-APPLICATION-KEY: {HEX40}"',
     HEX40),
    ("x-functions-key: Xk9mQ2vLp7RtZw4AbCdEfGhJkLmNoPq1", "Xk9mQ2vLp7RtZw4AbCdEfGhJkLmNoPq1"),
    # Azure API Management's key in the query
    ("GET https://my.azure-api.net/echo/resource?subscription-key=5c3146e80a9c222670bbe4f4c5497765",
     "5c3146e80a9c222670bbe4f4c5497765"),
    # Markdown emphasis around a token: the page shows it in italics, whole
    (f"the key is _{HF}_ for now", HF),
    (f"use _{SENDGRID}_", SENDGRID),
    (f"_{GOOGLE}_", GOOGLE),
    # glued to a constant's name after `_`: prefixes with a separator of their own
    (f"SENDGRID_{SENDGRID}", SENDGRID),
    (f"STRIPE_{STRIPE}", STRIPE),
]  # fmt: skip


@pytest.mark.parametrize(("text", "secret"), MISSED)
def test_a_credential_in_these_forms_goes(text: str, secret: str) -> None:
    assert _covered(text, secret), _found(text)


KEPT = [
    # vendors' documentation keys, printed for every reader
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "stripe.api_key = 'sk_test_4eC39HqLyjWDarjtT1zdp7dc'",
    # a name in code that starts with hf_
    "- (id)hf_requiredCharacteristicTypesForDisplayMetadata;",
    # `wandb login` without a key, or with a placeholder
    "wandb login --relogin",
    "wandb login $WANDB_API_KEY",
    "wandb login YOUR_API_KEY",
    # emphasis that ends inside a longer name is no token's end
    "_hf_load_TransformersConfigurationFromPretrained_",
    # an Azure Functions URL with a short or placeholder code
    "https://my-app.azurewebsites.net/api/HttpTrigger?code=<your-function-key>",
    "https://myapp.azurewebsites.net/api/HttpTrigger1?code=YOUR_FUNCTION_KEY_GOES_HERE_1234",
    # BSA as the Bank Secrecy Act in a file's name, not a Brave key (review)
    "BSA-Report-2024-Q3-final-draft1.pdf",
]


@pytest.mark.parametrize("text", KEPT)
def test_these_forms_without_a_credential_stay(text: str) -> None:
    assert not scan(text), _found(text)


STILL_SECRETS = [
    # the documentation allowance is for those exact keys only
    ("aws_access_key_id = AKIA4KQ7ZRTM2XWB5NPC", "AKIA4KQ7ZRTM2XWB5NPC"),
    ("stripe.api_key = 'sk_test_4eC39HqLyjWDarjtT1zdp7dQ'", "sk_test_4eC39HqLyjWDarjtT1zdp7dQ"),
    # a Hugging Face token of letters that read as words is still one (34 letters)
    ("token = hf_abcDefGhiJklMnoPqrStuVwxYzaBcdEfgHij", "hf_abcDefGhiJklMnoPqrStuVwxYzaBcdEfgHij"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "secret"), STILL_SECRETS)
def test_the_narrowing_keeps_these(text: str, secret: str) -> None:
    assert _covered(text, secret), _found(text)
