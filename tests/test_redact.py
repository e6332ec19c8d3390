"""Egress redaction: secrets are masked in everything handed to a provider, and nothing else."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest

from memhost.security.redact import MASK, find_secrets, redact, redact_many

# Real keys are random: the detector ignores low-entropy stand-ins such as "hf_cccc…".
SECRETS = {
    "openai_key": "sk-proj-abcdefghijklmnopqrstuv",
    "github_token": "ghp_Q5rT8wLm2ZpX7cV1bN4kJ9hG3fD6sA0yE2uI",
    "aws_access_key": "AKIAABCDEFGHIJKLMNOP",
    "slack_token": "xoxb-263594206564-2343314145-m3Vx8QzK1pLr7TnW2yB9cJ4d",
    "google_api_key": "AIzaSyD8kQ2mP7xR4vL9nT1wB6cJ3hF0gZ5yE8u",
    "gitlab_token": "glpat-abcdefghijklmnopqrst",
    "huggingface_token": "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",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlc2ln",
}


@pytest.mark.parametrize(("kind", "secret"), sorted(SECRETS.items()))
def test_key_shapes_are_masked(kind: str, secret: str) -> None:
    assert redact(f"use {secret} for the api") == f"use {MASK} for the api"


@pytest.mark.parametrize(("text", "kept"), [
    ("Authorization: Bearer abcdefghijklmnop123", "Authorization: Bearer "),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic "),
    ("db at postgres://app:hunter22@db.internal/app", "postgres://app:"),
    ("password = correct-horse-battery", "password = "),
    ('{"api_key": "q1w2e3r4t5y6"}', '{"api_key": "'),
    ("AUTH_TOKEN=Zq8r2LmW0pXv", "AUTH_TOKEN="),
])
def test_labelled_secrets_keep_their_label(text: str, kept: str) -> None:
    out = redact(text)
    assert kept in out and MASK in out
    assert not find_secrets(out)


def test_pem_blocks_are_masked_whole() -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\ndef\n-----END RSA PRIVATE KEY-----"
    out = redact(f"key:\n{pem}\nend")
    assert "MIIEabc" not in out and "def" not in out and MASK in out
    assert out.startswith("key:\n-----BEGIN RSA PRIVATE KEY-----")


@pytest.mark.parametrize("text", [
    "User prefers dark mode",
    "author: Jane Austen wrote Persuasion",
    "The authority: Ministry of Transport",
    "Basic understanding of Kubernetes is enough",
    "password rotation happens monthly",
    "max_tokens: 4096",
    # A stand-in for a key, in backticks: the detector's finding carries the closing backtick.
    "Every repo has a .env.example with `STRIPE_SECRET_KEY=sk_test_xxx`; the real .env is ignored.",
    "Set `API_TOKEN='<token>'` in your shell before running the examples.",
    "Keeps placeholders like API_KEY=changeme; the real values live in the vault.",
    "token=your_token_here and password=example in the sample config.",
    # The words everyone writes in an example address: memhost's own advice says so.
    "DATABASE_URL=postgres://user:pass@localhost:5432/app is the .env.example default.",
    "use the form postgresql://user:password@host:5432/dbname",
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) is text


def test_a_password_in_an_address_is_masked_unless_it_is_the_word_itself() -> None:
    out = redact("DATABASE_URL=postgres://app:Hq7vLp2xZr@db.internal:5432/app")
    assert "Hq7vLp2xZr" not in out and MASK in out
    out = redact("mysql://root:passw0rd-prod@10.0.0.3/db")
    assert "passw0rd-prod" not in out


def test_nested_structures_are_masked_without_mutating_the_input() -> None:
    key = SECRETS["github_token"]
    payload = {
        "messages": [{"role": "tool", "content": f"token={key}"}, ("tuple", key)],
        key: "secret as a key",
        "tags": {f"t:{key}", "plain"},
        "count": 3,
    }
    original = copy.deepcopy(payload)
    out = redact(payload)
    assert payload == original
    assert key not in repr(out)
    assert out["messages"][0]["content"] == f"token={MASK}"
    assert out["messages"][1] == ("tuple", MASK) and isinstance(out["messages"][1], tuple)
    assert out[MASK] == "secret as a key"
    assert out["tags"] == {f"t:{MASK}", "plain"}
    assert out["count"] == 3


def test_unchanged_values_come_back_as_the_same_objects() -> None:
    clean = {"a": ["x", {"b": "y"}]}
    assert redact(clean) is clean
    mixed = {"clean": ["x"], "dirty": SECRETS["openai_key"]}
    out = redact(mixed)
    assert out is not mixed and out["clean"] is mixed["clean"]


def test_a_secret_found_once_is_masked_everywhere_in_the_hand_off() -> None:
    value = "q1w2e3r4t5y6u7"
    out = redact({"config": f"password: {value}", "later": f"the model repeated {value} bare"})
    assert out == {"config": f"password: {MASK}", "later": f"the model repeated {MASK} bare"}
    user, reply = redact_many(f"my api_key={value}", f"ok, stored {value}")
    assert value not in user and value not in reply


def test_a_longer_secret_is_masked_whole() -> None:
    out = redact(f"token={SECRETS['openai_key']}xyz and {SECRETS['openai_key']}")
    assert "xyz" not in out and "sk-" not in out


def test_the_detectors_version_is_named_without_loading_its_engine() -> None:
    # A session start whose verdicts were saved checks them against this version; loading the
    # engine's Go library for it cost more than the rest of that start.
    script = ("import sys\n"
              "from memhost.security import detector\n"
              "named = detector.version()\n"
              "assert 'betterleaks' not in sys.modules, 'the engine was imported'\n"
              "import betterleaks\n"
              "print(named, betterleaks.__version__, betterleaks.__upstream_version__)\n")
    named, version, upstream = _fresh_process(script).split()
    assert f"betterleaks-{version}/{upstream}:" in named


def test_a_session_start_builds_the_engine_beside_its_own_work_only_when_a_note_needs_it() -> None:
    # detector.prepare starts the engine's rule-set build on another thread for notes that will
    # reach it; notes that never reach the engine must not load it at all.
    script = ("import sys, threading\n"
              "from memhost.security import detector\n"
              "assert detector.prepare(['The user prefers tea.', 'Deploys run on Fridays.']) == set()\n"
              "assert detector._warming is None and 'betterleaks' not in sys.modules\n"
              "notes = ['Staging uses token sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2 + "', 'Tea.']\n"
              "assert detector.prepare(notes) == {notes[0]}  # what waits for the build\n"
              "assert detector._warming is not None\n"
              "detector._warming.join(60)\n"
              "assert detector._engine is not None and detector.prepare(notes) == set()\n"
              "print(sorted(detector.scan(notes[0])))\n")
    assert "sk-proj-" in _fresh_process(script)


def test_without_the_engine_installed_a_session_start_goes_on_and_the_scan_reports_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from memhost.errors import MemhostError
    from memhost.security import detector

    def missing() -> None:
        raise MemhostError("memhost's secret detector needs betterleaks")

    monkeypatch.setattr(detector, "_engine", None)
    monkeypatch.setattr(detector, "_warming", None)
    monkeypatch.setattr(detector, "_load", missing)
    note = "Staging uses the deploy token kept in the vault."
    detector.clear_cache()
    assert detector.prepare([note]) == {note}  # no build started, nothing raised here
    assert detector._warming is None
    with pytest.raises(MemhostError, match="needs betterleaks"):
        detector.scan(note)
    detector.clear_cache()


def _fresh_process(script: str) -> str:
    """What ``script`` prints, run in a new interpreter (what it loads is what it asks for)."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(("text", "secret"), [
    ("mysql -uroot -pS3cretpw app", "S3cretpw"),
    ("mysqldump -h db.internal -pQw3rty99 --all-databases", "Qw3rty99"),
    ("mariadb -u app -pHunter22x shop", "Hunter22x"),
    ("redis-cli -h cache.internal -a Wq8zLr2Tx ping", "Wq8zLr2Tx"),
])
def test_a_password_on_a_database_command_line_is_masked(text: str, secret: str) -> None:
    assert secret not in redact(text) and MASK in redact(text)


@pytest.mark.parametrize("text", [
    "The data pipeline is tested with PostgreSQL 16 on port 5433.",
    "Unit tests run on SQLite in memory; psql is on the path for the rest.",
    "Sessions are cached in Redis, and the queue is on Redis streams.",
])
def test_naming_a_database_does_not_send_a_text_to_the_engine(text: str) -> None:
    """A rule's literals are what its pattern cannot match without: the MySQL command-line
    rule's are "mysql" and "mariadb", not "sql", which every mention of PostgreSQL or SQLite
    holds and which sent each such text (most of a developer's turns) through the engine; the
    redis-cli rule's is "redis-cli", not "redis"."""
    from memhost.security import detector

    assert not detector._candidate(text)


def test_a_text_holding_half_a_character_is_read_like_any_other() -> None:
    """A lone surrogate (JSON's "\\ud800" decodes to one) cannot be written as UTF-8, which the
    engine and the keyword automatons read: the text is still scanned and its secret masked."""
    from memhost.security import detector, secret_rules

    token = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    for text in ("password=hunter2hunter2 \ud800 and more", f"\udcff token {token}"):
        secret = "hunter2hunter2" if "hunter2" in text else token
        assert detector.scan(text) == {secret}
        masked = redact(text)
        assert secret not in masked and MASK in masked
        assert "\ufffd" in masked
        assert secret_rules.has_literal(text.lower())


def test_half_a_character_leaves_as_a_replacement_character() -> None:
    """A provider's database or wire cannot carry a lone surrogate; a value holding one is
    masked whole, and text without one comes back as the same object."""
    value = {"user": "fine \udcff reply", "tool": ["password=abc\ud800defgh", "plain"]}
    assert redact(value) == {"user": "fine \ufffd reply", "tool": [f"password={MASK}", "plain"]}
    assert value["user"] == "fine \udcff reply"  # the caller's object is not changed
    kept = {"a": ["plain", "ünïcode"]}
    assert redact(kept) is kept


# -- texts built to make a rule retry at every literal ----------------------------------------
# How long they take is the benchmark's (redaction[worst-case growth]); here, what is found.

def test_a_run_of_keyed_literals_is_one_value_not_one_per_literal() -> None:
    from memhost.security import secret_rules

    text = "token=" * 2000
    found = secret_rules.find(text)
    # One value, the rest of the run after the first key: every later literal lies inside it.
    assert found == {text[len("token="):]}
    assert MASK in redact(text)


def test_a_secret_inside_a_value_that_reads_as_code_is_still_found() -> None:
    """A value refused as code (``x(token=…``) does not hide a keyed secret inside it."""
    from memhost.security import secret_rules

    assert "Sup3rS3cretVal" in secret_rules.find("password=x(token=Sup3rS3cretVal")


def test_a_value_longer_than_a_rule_reads_at_once_is_masked_whole() -> None:
    from memhost.security.secret_rules import LONGEST_VALUE

    value = "Zq9x" * (LONGEST_VALUE // 2)  # twice as long as one reading
    assert redact(f"api_key={value} and more") == f"api_key={MASK} and more"


def test_a_password_flag_far_along_a_command_line_is_still_found() -> None:
    options = " ".join(f"--opt{i}=v" for i in range(60))  # ~600 characters before -p
    assert redact(f"mysql {options} -pS3cr3tPw db") == f"mysql {options} -p{MASK} db"
