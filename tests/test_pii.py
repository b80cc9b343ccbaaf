"""Opt-in redaction: --pii (e-mail addresses, phone numbers, IPv4 and IPv6 addresses) and the user's
own --redact-pattern NAME=REGEX, from the detectors to the page, a share and a dataset."""

from __future__ import annotations

import gc
import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.detectors import DETECTORS, Scanner
from exporter.loader import load_session
from exporter.pii_detectors import PII_DETECTORS, PatternDetector, parse_pattern
from exporter.policy import RedactionPolicy
from exporter.redact import apply_policy
from tests.browser_util import embedded_jsonl
from tests.conftest import FIXTURES_DIR

SCANNER = Scanner(
    (), (*DETECTORS, *PII_DETECTORS, PatternDetector("cust", re.compile(r"CUST-\d{6}")))
)


def finds(text: str) -> list[tuple[str, str]]:
    return [(text[f.start : f.end], f.detector) for f in SCANNER.find(text)]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (
            "write to alice.smith@customer-corp.com today",
            [("alice.smith@customer-corp.com", "email")],
        ),
        (
            "cc: Bob.Jones+billing@mail.acme.co.uk.",
            [("Bob.Jones+billing@mail.acme.co.uk", "email")],
        ),
        ("call +44 20 7946 0958 now", [("+44 20 7946 0958", "phone")]),
        ("phone: +1 (415) 555-0132", [("+1 (415) 555-0132", "phone")]),
        (
            "(415) 555-0132 or 415-555-0132",
            [("(415) 555-0132", "phone"), ("415-555-0132", "phone")],
        ),
        ("ssh deploy@203.0.113.42 -p 22", [("203.0.113.42", "ipv4")]),
        ("db at 10.0.0.5:5432", [("10.0.0.5", "ipv4")]),
        ("order CUST-123456 shipped", [("CUST-123456", "cust")]),
        ("CUST-654321", [("CUST-654321", "cust")]),  # shorter than the built-ins ever look
        # (review 2026-12-02) names that end like a placeholder's, country domains that
        # are file suffixes too, and whole values shorter than 8 characters
        (
            "graeme@acme.com, birgit@firma.de",
            [("graeme@acme.com", "email"), ("birgit@firma.de", "email")],
        ),
        (
            "alice.test@acme.com akbar@acme.com",
            [("alice.test@acme.com", "email"), ("akbar@acme.com", "email")],
        ),
        (
            "anna@notion.so petar@firma.rs",
            [("anna@notion.so", "email"), ("petar@firma.rs", "email")],
        ),
        ("jo@x.de", [("jo@x.de", "email")]),
        ("8.8.8.8", [("8.8.8.8", "ipv4")]),
        ("https://10.0.0.5/x", [("10.0.0.5", "ipv4")]),
        ("ssh to 2001:db8:85a3::8a2e:370:7334 now", [("2001:db8:85a3::8a2e:370:7334", "ipv6")]),
        ("http://[2001:db8::1]:8080/", [("2001:db8::1", "ipv6")]),
        ("fe80::1ff:fe23:4567:890a%eth0 up", [("fe80::1ff:fe23:4567:890a%eth0", "ipv6")]),
        ("dns 2001:4860:4860::8888", [("2001:4860:4860::8888", "ipv6")]),
        ("2001:0db8:0:0:0:ff00:42:8329", [("2001:0db8:0:0:0:ff00:42:8329", "ipv6")]),
        ("::ffff:10.0.0.5", [("10.0.0.5", "ipv4")]),
    ],
)
def test_personal_data_and_patterns_are_found(text: str, found: list[tuple[str, str]]) -> None:
    assert finds(text) == found


@pytest.mark.parametrize(
    "text",
    [
        "git clone git@github.com:org/repo.git",  # git's own address
        "icon@2x.png and logo@3x.svg",  # file names
        "noreply@github.com, user@example.com, 1234+bot@users.noreply.github.com",
        "released 2024-01-15, build 2024-01-15T10:00:00Z",  # dates
        "version 1.2.3.4, v10.0.0.1, Chromium 156.0.8078.114",  # versions
        "listen on 127.0.0.1 and 0.0.0.0, mask 255.255.255.0",
        "commit 3f2a9c1, port range 8080-8090, pid 12345678901234",
        "order CUST-12345 (five digits)",
        'AssemblyVersion("1.0.0.0"), Version=4.0.0.0, Chrome/120.0.0.0 Safari/537.36',
        "me@x.com",
        "listen on ::1 and ::, ::ffff",  # loopback, unspecified
        "std::vector<int> a::b Abc::Def, Foo::bar::baz",  # C++ and Rust paths
        "a[1::2] a[100::200] x[::123] 1:2:3:4:5:6:7:8",  # Python slices, counts
        "at 12:30:45, 12:00:00:000, mac 00:1a:2b:3c:4d:5e, 10:00::",  # times, a MAC
    ],
)
def test_what_is_not_personal_data(text: str) -> None:
    assert finds(text) == []


def test_personal_data_is_not_redacted_by_default() -> None:
    assert [
        f for f in Scanner().find("alice@customer-corp.com +44 20 7946 0958 203.0.113.42")
    ] == []


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("cust", "give NAME=REGEX"),
        ("Bad Name=x", "a name is 1-32 lowercase letters"),
        ("c=(a|", "the regex does not compile"),
        ("c=a*", "matches empty text"),
        ("c=", "give NAME=REGEX"),
    ],
)
def test_bad_patterns_are_refused(spec: str, error: str) -> None:
    with pytest.raises(ValueError, match=re.escape(error)):
        parse_pattern(spec)
    result = CliRunner().invoke(cli, ["redact", "--demo", "-o", "-", "--redact-pattern", spec])
    assert result.exit_code == 1 and error in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize(
    "unit",
    ["a@b.cd ", "+1 2", "1.1.1.", "(415) 555-", "@", "a" * 70 + "@", "1:", "::", "abcd:" * 9 + " "],
)
def test_dense_personal_data_candidates_stay_linear(unit: str) -> None:
    def cpu(text: str) -> float:
        # the scanner's own time: a cyclic collection walks the whole worker's heap, more
        # often for the big text's findings (a clean CI run measured 20x for 10x, stop 73)
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            SCANNER.find(text)
            return time.process_time() - start
        finally:
            gc.enable()

    small = cpu(unit * (100_000 // len(unit)))
    big = cpu(unit * (1_000_000 // len(unit)))
    assert big < 15 * small + 0.3, (small, big)


PLANTED = FIXTURES_DIR / "pi-branched-1.jsonl"
EMAIL, PHONE, ORDER = "alice.smith@customer-corp.com", "+44 20 7946 0958", "CUST-123456"


def _planted(tmp_path: Path) -> Path:
    text = PLANTED.read_text(encoding="utf-8").replace(
        '"role":"user","content":[{"type":"text","text":"',
        f'"role":"user","content":[{{"type":"text","text":"mail {EMAIL} ({ORDER}), call {PHONE}. ',
        1,
    )
    assert EMAIL in text
    path = tmp_path / "planted.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_page_and_its_embedded_copy_hold_no_personal_data(tmp_path: Path) -> None:
    source = _planted(tmp_path)
    page, report = tmp_path / "p.html", tmp_path / "r.jsonl"
    args = ["export", str(source), "-o", str(page), "--pii", "--redact-pattern", r"cust=CUST-\d{6}"]
    result = CliRunner().invoke(cli, [*args, "--report", str(report)])
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    (embedded,) = embedded_jsonl(html)
    for value in (EMAIL, PHONE, ORDER):
        assert value not in html and value.encode() not in embedded
    summary = json.loads(report.read_text(encoding="utf-8").splitlines()[0])
    assert summary["counts"] == {"cust": 1, "email": 1, "phone": 1}
    assert "[REDACTED:email:1]" in html and "[REDACTED:cust:1]" in html
    plain = tmp_path / "plain.html"
    assert CliRunner().invoke(cli, ["export", str(source), "-o", str(plain)]).exit_code == 0
    assert EMAIL in plain.read_text(encoding="utf-8")  # opt-in: a plain export keeps it


def test_the_policy_key_changes_with_each_option() -> None:
    """Published copies and site pages are keyed on the policy: another pattern, or --pii,
    must redact them again."""
    keys = {
        RedactionPolicy(env_secrets=False).key({}),
        RedactionPolicy(env_secrets=False, pii=True).key({}),
        RedactionPolicy(env_secrets=False, patterns=(("a", "x+"),)).key({}),
        RedactionPolicy(env_secrets=False, patterns=(("a", "y+"),)).key({}),
    }
    assert len(keys) == 4


def test_the_fixtures_hold_no_personal_data_to_find() -> None:
    """What --pii finds in the real sessions (their addresses are git's and loopback's):
    nothing, so a false positive shows here."""
    for path in sorted(FIXTURES_DIR.glob("*.jsonl")):
        policy = RedactionPolicy(env_secrets=False, pii=True)
        _, report = apply_policy(load_session(path), policy, environ={})
        kinds = {k for k in report.counts if k in ("email", "phone", "ipv4", "ipv6")}
        assert kinds == set(), (path.name, report.counts)
