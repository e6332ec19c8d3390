"""Which texts the secret detector hands its engine (memhost.security.detector._wanted), and the
table of the engine's keywords that decides it (memhost.security.engine_keywords)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memhost.security import detector, engine_keywords, secret_rules

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "redaction"


def reaches_engine(text: str) -> bool:
    return bool(detector._wanted(text, text.lower()) & detector.ENGINE)


def test_the_shipped_table_is_the_installed_engines() -> None:
    assert engine_keywords.main(["--check"]) == 0, "run: python -m memhost.security.engine_keywords"
    keywords = engine_keywords.for_engine(detector.engine_version())
    assert keywords and {"ghp_", "akia", "xoxb", "-----begin", "key"} <= keywords


def _corpus_texts() -> list[str]:
    texts: list[str] = []
    for name in ("secrets_tuning", "secrets_holdout1", "secrets_holdout2", "benign_tuning",
                 "benign_holdout"):
        for item in json.loads((DATA / f"{name}.json").read_text(encoding="utf-8")):
            texts.append(item["text"])
    return texts


def test_every_text_the_engine_reports_a_value_in_is_handed_to_it() -> None:
    import betterleaks

    texts = _corpus_texts()
    reported = [text for text in texts
                if any((value := (f.secret or "").strip()) and len(value) >= 3 and value in text
                       for f in betterleaks.scan_string(text))]
    assert len(reported) > 100  # the corpus holds the vendor shapes the engine knows
    missed = [text for text in reported if not reaches_engine(text)]
    assert not missed, missed[:5]
    # What the keywords save: most texts holding a long token run or one of memhost's
    # literals hold none of the engine's keywords.
    old_gate = [t for t in texts
                if secret_rules.has_literal(t.lower()) or secret_rules.has_long_token(t)]
    handed = [t for t in texts if reaches_engine(t)]
    assert set(handed) <= set(old_gate)
    assert len(handed) < len(old_gate) / 2, (len(handed), len(old_gate))


@pytest.mark.parametrize("text", [
    "  /home/someone/.memhost/memories/MEMORY.md",            # a long token run, no keyword
    "Run scripts/deploy_production_cluster.sh on Fridays.",
    "The user prefers tea.",                                   # a keyword, but nothing long
])
def test_a_text_that_cannot_hold_a_reported_value_skips_the_engine(text: str) -> None:
    assert not reaches_engine(text)


@pytest.mark.parametrize("text", [
    # Each holds a value shaped for a rule that reports only as a part of another rule's
    # finding (skipReport), and no keyword of a rule that reports on its own: the engine finds
    # nothing in it, so it is not handed over.
    "username: bob_the_builder_1987",
    "  user_profile_enabled    = true  (default)",
    "login = alice.wonderland@example.org",
    "account_id: 123456789012345678",
    "tenant: 8f14e45f-ceea-467f-a8ad-0123456789ab",
    "Artifacts live at acme.jfrog.io/artifactory/libs-release-local",
    "LTAI5tQ3mZx8Yb2Kd9Vw1RsP",
])
def test_a_part_of_a_two_part_rule_alone_skips_the_engine(text: str) -> None:
    import betterleaks

    assert not [f.rule_id for f in betterleaks.scan_string(text)], text
    assert not reaches_engine(text)


def test_the_table_holds_only_the_keywords_of_rules_that_report() -> None:
    keywords = engine_keywords.for_engine(detector.engine_version())
    assert keywords is not None
    assert not {"user", "client", "login", "tenant"} & keywords
    assert {"passw", "api", "token"} <= keywords  # the rules those parts belong to


@pytest.mark.parametrize("text", [
    # The engine decodes %-escapes before it looks for its words: "p%61ssword" is "password".
    "p%61ssword=Hunter2Hunter2xyzzy",
    "config \\u0074oken: Zq81Kd02Lm93Nb74Vc",
])
def test_an_escape_the_engine_decodes_sends_the_text_to_it(text: str) -> None:
    assert reaches_engine(text)


@pytest.fixture
def no_table(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(engine_keywords, "for_engine", lambda version: None)
    detector._gate.cache_clear()
    yield
    monkeypatch.undo()
    detector._gate.cache_clear()


def test_without_a_table_of_the_installed_engine_a_long_token_run_reaches_it(
        no_table: None) -> None:
    # Another engine version may look for other words: every text with a long run of token
    # characters or one of memhost's literals goes to it, as before the table.
    assert reaches_engine("  /home/someone/.memhost/memories/MEMORY.md")
    assert reaches_engine("the password is in the vault")
    assert not reaches_engine("The user prefers tea.")


def test_a_table_of_another_engine_version_is_not_used(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "engine_keywords.json"
    table.write_text(json.dumps({"engine": "0.1/0.1", "keywords": ["ghp_"]}), encoding="utf-8")
    monkeypatch.setattr(engine_keywords, "TABLE", table)
    assert engine_keywords.for_engine("0.1/0.1") == frozenset({"ghp_"})
    assert engine_keywords.for_engine(detector.engine_version()) is None
    table.write_text("{not json", encoding="utf-8")
    assert engine_keywords.for_engine("0.1/0.1") is None


def test_a_rule_set_with_a_rule_that_reads_every_text_cannot_be_gated(tmp_path: Path) -> None:
    library = tmp_path / "libengine.so"
    library.write_bytes(b"\x7fELF...\x00" + b'title = "betterleaks config"\n[[rules]]\nid = "a"\n'
                        b'regex = "a+"\nkeywords = ["Aa"]\n[[rules]]\nid = "any"\nregex = "b+"\n'
                        b"\x00more")
    with pytest.raises(engine_keywords.StaleTable, match="any"):
        engine_keywords.extract(library)
    library.write_bytes(b"\x7fELF...\x00" + b'title = "betterleaks config"\n[[rules]]\nid = "a"\n'
                        b'regex = "a+"\nkeywords = ["Aa", "b"]\n[[rules]]\nid = "file"\n'
                        b'path = "\\\\.p12$"\n\x00')
    assert engine_keywords.extract(library) == ["aa", "b"]  # a rule on file names reads no text
    library.write_bytes(b"\x7fELF no rule set here")
    with pytest.raises(engine_keywords.StaleTable, match="no embedded rule set"):
        engine_keywords.extract(library)
