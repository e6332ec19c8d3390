"""``memhost recall search|list|show|forget|export|import`` on real stores (sqlite; postgres
against the real server, skipped without one and failed under CI)."""

from __future__ import annotations

import io
import json
import stat
from pathlib import Path
from typing import Any

import pytest

from memhost.cli import main
from postgres_server import drop_run_schemas, new_schema, require_postgres
from recall_helpers import configure, manager

CHATS = [
    {"messages": [{"role": "system", "content": "Be brief."},
                  {"role": "user", "content": "Our release codename is Bluefin."},
                  {"role": "assistant", "content": "Bluefin, noted."},
                  {"role": "user", "content": "The staging host is falcon-9."},
                  {"role": "tool", "content": "TOOL NOISE"},
                  {"role": "assistant", "content": "falcon-9 for staging."}]},
    {"user": "My cat is called Pixel.", "assistant": "Hello Pixel!",
     "session_id": "pets", "time": "2024-05-01T10:00:00Z"},
]
# A ChatGPT data export: messages in a mapping, the shown branch ending at current_node.
CHATGPT = [{"title": "Garden", "id": "conv-garden", "create_time": 1714557600,
            "current_node": "c", "mapping": {
                "root": {"message": None, "parent": None, "children": ["a"]},
                "a": {"parent": "root", "children": ["b", "x"], "message": {
                    "author": {"role": "user"}, "create_time": 1714557600,
                    "content": {"content_type": "text", "parts": ["The tomatoes need shade."]}}},
                "x": {"parent": "a", "children": [], "message": {
                    "author": {"role": "assistant"},
                    "content": {"content_type": "text", "parts": ["An abandoned branch."]}}},
                "b": {"parent": "a", "children": ["c"], "message": {
                    "author": {"role": "assistant"},
                    "content": {"content_type": "text", "parts": ["Use a shade cloth."]}}},
                "c": {"parent": "b", "children": [], "message": {
                    "author": {"role": "user"},
                    "content": {"content_type": "text", "parts": ["Thanks!"]}}}}}]


def run(home: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["--home", str(home), "recall", *args])
    out, err = capsys.readouterr()
    return code, out, err


def as_json(home: Path, capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    code, out, err = run(home, capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.fixture
def chats(tmp_path: Path) -> Path:
    path = tmp_path / "chats.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in CHATS) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def recall_home(home: Path) -> Path:
    configure(home, "sqlite")
    return home


def test_nothing_to_list_before_the_store_exists(recall_home: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(recall_home, capsys, "list")
    assert code == 2 and "has nothing yet" in err and "memhost recall import" in err
    assert not (recall_home / "recall.db").exists()


def test_import_reads_chats_and_turns_once(recall_home: Path, chats: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    first = as_json(recall_home, capsys, "import", str(chats))
    assert first == {"file": str(chats), "conversations": 2, "items": 6, "added": 6,
                     "already_stored": 0}
    assert as_json(recall_home, capsys, "import", str(chats))["added"] == 0
    listed = as_json(recall_home, capsys, "list")["results"]
    assert [(h["role"], h["text"]) for h in listed] == [
        ("assistant", "Hello Pixel!"), ("user", "My cat is called Pixel."),
        ("assistant", "falcon-9 for staging."), ("user", "The staging host is falcon-9."),
        ("assistant", "Bluefin, noted."), ("user", "Our release codename is Bluefin.")]
    pets = as_json(recall_home, capsys, "list", "--session", "pets")["results"]
    assert {h["date"] for h in pets} == {"2024-05-01"} and len(pets) == 2
    dated = as_json(recall_home, capsys, "list", "--since", "2024-05-01", "--until",
                    "2024-05-01")["results"]
    assert [h["text"] for h in dated] == ["Hello Pixel!", "My cat is called Pixel."]

    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(CHATGPT), encoding="utf-8")
    assert as_json(recall_home, capsys, "import", str(export))["added"] == 2
    garden = as_json(recall_home, capsys, "list", "--session", "conv-garden")["results"]
    assert [h["text"] for h in garden] == ["Use a shade cloth.", "The tomatoes need shade."]


def test_an_imported_file_reaches_the_store_with_its_secrets_masked(
        recall_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What a file holds goes to the provider's store as a live turn does: a token masked (the
    store itself is read here, not a listing, which masks on its own), half a character read as
    U+FFFD, and the file imported twice still stored once."""
    import sqlite3

    token = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    path = tmp_path / "turns.jsonl"
    path.write_text(json.dumps({"user": f"my token is {token}, keep it",
                                "assistant": "noted \udcff ok"}) + "\n", encoding="utf-8")
    assert as_json(recall_home, capsys, "import", str(path))["added"] == 2
    assert as_json(recall_home, capsys, "import", str(path))["added"] == 0
    with sqlite3.connect(recall_home / "recall.db") as conn:
        bodies = sorted(row[0] for row in conn.execute("SELECT body FROM items"))
    assert bodies == ["my token is [redacted], keep it", "noted \ufffd ok"]


def test_a_file_that_is_no_chat_is_refused_with_its_line(recall_home: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"user": "hi", "assistant": "hello"}\n{"colour": "blue"}\n', encoding="utf-8")
    code, _, err = run(recall_home, capsys, "import", str(bad))
    assert code == 2 and "bad.jsonl line 2" in err
    assert as_json(recall_home, capsys, "list")["count"] == 0  # nothing half-imported


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000,
                                  '{"user": ' + "[" * 100_000 + "]" * 100_000 + "}\n{}\n"],
                         ids=["a document", "a line"])
def test_a_file_nested_too_deeply_is_refused_as_not_json(
        recall_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(text, encoding="utf-8")
    code, _, err = run(recall_home, capsys, "import", str(deep))
    assert code == 2 and "not JSON (it nests too deeply)" in err, err


def test_a_file_in_another_encoding_is_refused_with_the_byte(
        recall_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"user": "Café at nine?", "assistant": "Yes."}\n'.encode("latin-1"))
    code, _, err = run(recall_home, capsys, "import", str(latin))
    assert code == 2 and "latin.jsonl is not UTF-8 text (the byte 0xE9 at offset 13)" in err, err
    assert "save it as UTF-8" in err


def test_search_show_and_the_text_view(recall_home: Path, chats: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    as_json(recall_home, capsys, "import", str(chats))
    found = as_json(recall_home, capsys, "search", "release codename")["results"]
    assert found[0]["text"] == "Our release codename is Bluefin."
    assert found[1]["text"] == "Bluefin, noted."  # the reply, found beside its message
    code, out, _ = run(recall_home, capsys, "search", "release codename")
    assert code == 0 and out.splitlines()[0].startswith(f"#{found[0]['id']} ")
    shown = as_json(recall_home, capsys, "show", str(found[1]["id"]))
    assert shown["item"]["body"] == "Bluefin, noted." and shown["item"]["status"] == "active"
    assert [h["text"] for h in shown["around"]] == ["Our release codename is Bluefin.",
                                                    "The staging host is falcon-9."]
    code, out, _ = run(recall_home, capsys, "show", str(found[1]["id"]))
    assert "Bluefin, noted." in out and "before: #" in out and "after: #" in out
    code, _, err = run(recall_home, capsys, "show", "999")
    assert code == 2 and "no stored item has id 999" in err


def test_forget_asks_first_and_what_is_forgotten_is_never_recalled(
        recall_home: Path, chats: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    as_json(recall_home, capsys, "import", str(chats))
    # Not at a terminal and no --yes: nothing happens.
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    code, _, err = run(recall_home, capsys, "forget", "--match", "PIXEL")
    assert code == 2 and "--yes" in err
    assert as_json(recall_home, capsys, "list", "--session", "pets")["count"] == 2
    # At a terminal, answered no: nothing happens either.
    monkeypatch.setattr("sys.stdin", _Terminal("n\n"))
    code, out, _ = run(recall_home, capsys, "forget", "--match", "PIXEL")
    assert code == 1 and "nothing forgotten" in out and "My cat is called Pixel." in out
    monkeypatch.setattr("sys.stdin", _Terminal("y\n"))
    code, out, _ = run(recall_home, capsys, "forget", "--match", "PIXEL")
    assert code == 0 and "forgot 2 item(s)" in out
    assert as_json(recall_home, capsys, "list", "--session", "pets")["count"] == 0

    one = as_json(recall_home, capsys, "search", "falcon staging")["results"][0]["id"]
    assert as_json(recall_home, capsys, "forget", str(one), "--yes") == {"forgotten": 1,
                                                                          "ids": [one]}
    gone = as_json(recall_home, capsys, "show", str(one))["item"]
    assert gone["status"] == "forgotten" and gone["body"] == ""
    session = as_json(recall_home, capsys, "list")["results"][0]["session_id"]
    assert as_json(recall_home, capsys, "forget", "--session", session, "--yes")["forgotten"] == 3
    made = manager(recall_home, "later")
    try:
        assert made.begin_turn("What is the release codename?").context == ""
    finally:
        made.shutdown()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_export_is_private_and_imports_back(recall_home: Path, chats: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    as_json(recall_home, capsys, "import", str(chats))
    as_json(recall_home, capsys, "forget", "--match", "falcon", "--yes")
    code, out, _ = run(recall_home, capsys, "export")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [r["text"] for r in lines] == [
        "Our release codename is Bluefin.", "Bluefin, noted.", "My cat is called Pixel.",
        "Hello Pixel!"]
    saved = tmp_path / "out" / "recall.jsonl"
    saved.parent.mkdir()
    assert as_json(recall_home, capsys, "export", "--output", str(saved))["exported"] == 4
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    other = tmp_path / "other"
    configure(other, "sqlite")
    assert as_json(other, capsys, "import", str(saved))["added"] == 4
    again = as_json(other, capsys, "list")["results"]
    assert sorted(h["text"] for h in again) == sorted(r["text"] for r in lines)


@pytest.mark.postgres
def test_the_same_commands_on_postgres(home: Path, chats: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    configure(home, "postgres", {"dsn": require_postgres(), "schema": new_schema("cli"),
                                 "user_id": "cli-user"})
    try:
        assert as_json(home, capsys, "import", str(chats))["added"] == 6
        found = as_json(home, capsys, "search", "release codename")["results"]
        assert found[0]["text"] == "Our release codename is Bluefin."
        shown = as_json(home, capsys, "show", str(found[0]["id"]))
        assert [h["text"] for h in shown["around"]] == ["Bluefin, noted."]
        assert as_json(home, capsys, "forget", "--match", "pixel", "--yes")["forgotten"] == 2
        assert as_json(home, capsys, "list", "--session", "pets")["count"] == 0
        code, out, _ = run(home, capsys, "export")
        assert code == 0 and len(out.splitlines()) == 4
    finally:
        drop_run_schemas()
