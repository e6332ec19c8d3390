"""Semantic recall through an OpenAI-compatible embeddings endpoint (a fake server speaking the
real protocol over a socket), on both stores: vectors stored beside the items, fused with the
lexical ranking, gone when an item is forgotten, and lexical recall when the endpoint fails."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from fake_embeddings import FakeEmbeddings
from memhost.recall import embedding
from memhost.testing import load_folder_provider
from postgres_server import drop_run_schemas, execute, new_schema, require_postgres
from recall_helpers import PLUGINS, configure, manager

# Both share the query's words ("needs", "service"); only the first means the same thing
# ("sedan" and "automobile" are one word to the fake model). Stored first, so lexical recall
# alone puts it second (ties go to the newer item).
CAR = ("My sedan needs a service before the trip.", "Book the service for Monday.")
GARDEN = ("My garden needs a service before the trip.", "Book the service for Friday.")
QUERY = "Does the automobile need a service?"


def _first_user_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("U: "))


@pytest.fixture
def server() -> Any:
    with FakeEmbeddings(api_key="sk-test-embed") as made:
        yield made


def _sqlite(home: Path, server: FakeEmbeddings, **extra: Any) -> Any:
    made = load_folder_provider(PLUGINS / "sqlite")
    made.initialize(session_id="now", home=home, context="primary", config={
        "embedder": "openai", "embedder_model": "fake-embed", "embedder_url": server.url,
        "embedder_key": "sk-test-embed", **extra}, user_id="")
    return made


def _feed(provider: Any) -> None:
    # Two sessions, so the recall's groups come in the order of their best item.
    for session, (user, reply) in (("car", CAR), ("garden", GARDEN)):
        provider.sync_turn(user_content=user, assistant_content=reply, session_id=session,
                           messages=[])


def test_vectors_are_stored_and_fused_with_the_words(home: Path, server: FakeEmbeddings) -> None:
    lexical = load_folder_provider(PLUGINS / "sqlite")
    lexical.initialize(session_id="now", home=home / "words", config={}, context="primary",
                       user_id="")
    hybrid = _sqlite(home / "meaning", server)
    try:
        _feed(lexical)
        _feed(hybrid)
        assert _first_user_line(lexical.prefetch(query=QUERY, session_id="now")) == \
            f"U: {GARDEN[0]}"
        assert _first_user_line(hybrid.prefetch(query=QUERY, session_id="now")) == f"U: {CAR[0]}"
        rows = sqlite3.connect(home / "meaning" / "recall.db").execute(
            "SELECT item_id, model, length(vector) FROM vectors ORDER BY item_id").fetchall()
        assert [(model, size) for _, model, size in rows] == [("openai:fake-embed", 64 * 4)] * 4
        # The real protocol: the model, the texts, the key as a bearer token.
        first = server.requests[0]
        assert first["body"] == {"model": "fake-embed", "input": list(CAR)}
        assert first["headers"]["authorization"] == "Bearer sk-test-embed"
        found = json.loads(hybrid.handle_tool_call(tool_name="recall_search",
                                                   arguments={"query": QUERY}))["results"]
        assert found[0]["text"] == CAR[0] and found[0]["semantic"] > found[1]["semantic"]
        # A forgotten item's vector goes with its text.
        hybrid.handle_tool_call(tool_name="recall_forget", arguments={"id": found[0]["id"]})
        left = sqlite3.connect(home / "meaning" / "recall.db").execute(
            "SELECT item_id FROM vectors").fetchall()
        assert (found[0]["id"],) not in left and len(left) == 3
    finally:
        lexical.shutdown()
        hybrid.shutdown()


def test_an_unreachable_endpoint_leaves_recall_lexical(home: Path, server: FakeEmbeddings,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    made = _sqlite(home, server)
    try:
        server.fail_next = 10
        with caplog.at_level(logging.WARNING, logger="memhost.recall"):
            _feed(made)
            text = made.prefetch(query=QUERY, session_id="now")
        assert _first_user_line(text) == f"U: {GARDEN[0]}"  # words only, still recalled
        assert "stored without vectors" in caplog.text and "503" in caplog.text
        assert "skipped for this turn" in caplog.text
        assert sqlite3.connect(home / "recall.db").execute(
            "SELECT count(*) FROM vectors").fetchone() == (0,)
    finally:
        made.shutdown()


def test_the_embedder_settings_go_through_the_settings_service(home: Path,
                                                              server: FakeEmbeddings) -> None:
    configure(home, "sqlite", {"embedder": "openai", "embedder_model": "fake-embed",
                               "embedder_url": server.url, "embedder_key": "sk-test-embed"})
    assert "sk-test-embed" not in (home / "config.toml").read_text(encoding="utf-8")
    assert "sk-test-embed" in (home / ".env").read_text(encoding="utf-8")
    made = manager(home, "first")
    try:
        made.finish_turn(*CAR)
        made.finish_turn(*GARDEN)
        assert made.flush(30)
        made.start_session("second")
        assert CAR[0] in _first_user_line(made.begin_turn(QUERY).context)
    finally:
        made.shutdown()


def test_a_search_from_the_settings_page_or_the_cli_masks_its_query(
        home: Path, server: FakeEmbeddings, capsys: pytest.CaptureFixture[str]) -> None:
    """A secret pasted into a recall search reaches neither the embedding server nor the
    answer: the query is masked as every other text handed to a provider is."""
    from memhost.cli import main
    from memhost.web.recall_api import recall_search
    from memhost.web.request import Request

    configure(home, "sqlite", {"embedder": "openai", "embedder_model": "fake-embed",
                               "embedder_url": server.url, "embedder_key": "sk-test-embed"})
    made = manager(home, "first")
    try:
        made.finish_turn(*CAR)
        assert made.flush(30)
    finally:
        made.shutdown()
    secret = "ghp_" + "R7xQ2mVb9LkP4sTz8WcN1yHd6FgJ3aEu5KoX"
    query = f"Does the automobile need a service? token {secret}"
    server.requests.clear()
    answer = recall_search(Request(home, query={"query": query}))
    assert answer["results"] and CAR[0] in answer["results"][0]["text"]
    sent = json.dumps([request["body"] for request in server.requests])
    assert "automobile" in sent, "the query was not embedded at all"
    assert secret not in sent and secret not in json.dumps(answer)

    assert main(["--home", str(home), "recall", "search", query, "--json"]) == 0
    out = capsys.readouterr().out
    assert secret not in out and json.loads(out)["count"] >= 1

def test_bad_embedder_settings_say_what_to_set() -> None:
    with pytest.raises(embedding.EmbedderError, match="embedder_model"):
        embedding.from_settings({"embedder": "openai"})
    with pytest.raises(embedding.EmbedderError, match="embedder_url"):
        embedding.from_settings({"embedder": "openai", "embedder_model": "m", "embedder_url": "x"})
    with pytest.raises(embedding.EmbedderError, match="not one of"):
        embedding.from_settings({"embedder": "word2vec", "embedder_model": "m"})
    assert embedding.from_settings({}) is None


@pytest.mark.postgres
def test_postgres_keeps_float_arrays_and_reranks_the_same(home: Path,
                                                          server: FakeEmbeddings) -> None:
    schema = new_schema("sem")
    made = load_folder_provider(PLUGINS / "postgres")
    made.initialize(session_id="now", home=home, context="primary", config={
        "dsn": require_postgres(), "schema": schema, "user_id": "sem",
        "embedder": "openai", "embedder_model": "fake-embed", "embedder_url": server.url,
        "embedder_key": "sk-test-embed"}, user_id="")
    lite = _sqlite(home / "lite", server)
    try:
        _feed(made)
        _feed(lite)
        assert not made.store.pgvector  # not installable here: the float-array path runs
        assert execute(f'SELECT model, array_length(vector, 1) FROM "{schema}".vectors') == [
            ("openai:fake-embed", 64)] * 4
        text = made.prefetch(query=QUERY, session_id="now")
        assert _first_user_line(text) == f"U: {CAR[0]}"
        assert text == lite.prefetch(query=QUERY, session_id="now")
    finally:
        made.shutdown()
        lite.shutdown()
        drop_run_schemas()
