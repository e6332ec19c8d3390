"""MemoryHub: one manager per user under <home>/users/<id>/, a bound on open managers, user ids
that cannot name anything but a user's folder."""

from __future__ import annotations

import json
import logging
import stat
import threading
import time
from pathlib import Path

import pytest

from descriptors import needs_proc, open_files_under
from memhost import MemoryHub, MemoryManager
from memhost.users import UserIdError, check_user_id
from providers_for_tests import Recorder, wait_for
from recall_helpers import configure


def add(memory: MemoryManager, text: str) -> None:
    answer = json.loads(memory.call_tool("memory", {"action": "add", "target": "user",
                                                    "content": text}))
    assert answer["success"], answer


@pytest.mark.parametrize("bad", [
    "", "..", ".", "../alice", "alice/../bob", "a/b", "a\\b", "/etc", "al ice", "Alice",
    "alice\n", "al\x00ice", "al\x1bice", "a..b", "-alice", ".hidden", "x" * 65, "ålice", 42, None,
])
def test_user_ids_that_could_name_anything_else_are_refused(home: Path, bad: object) -> None:
    with MemoryHub(home) as hub:
        with pytest.raises(UserIdError) as caught:
            hub.manager(bad)  # type: ignore[arg-type]
    assert "lower-case letters, digits" in str(caught.value)
    assert "\n" not in str(caught.value) and "\x00" not in str(caught.value)
    assert not (home / "users").exists() or not any((home / "users").iterdir())


@pytest.mark.parametrize("good", ["alice", "user-042", "a.b_c-d", "bob@example.com", "7", "x" * 64])
def test_user_ids_allowed(good: str) -> None:
    assert check_user_id(good) == good


def test_each_user_has_their_own_memory_folder(home: Path) -> None:
    with MemoryHub(home) as hub:
        for user in ("alice", "bob"):
            memory = hub.manager(user)
            memory.start_session(f"chat-{user}")
            add(memory, f"User's name is {user.title()}.")
        assert hub.manager("alice") is hub.manager("alice")
        assert hub.users() == ["alice", "bob"]
        assert hub.manager("alice").home == home / "users" / "alice"
        assert hub.manager("alice").status()["user_id"] == "alice"
    for user in ("alice", "bob"):
        text = (home / "users" / user / "memories" / "USER.md").read_text(encoding="utf-8")
        assert text == f"User's name is {user.title()}."
    for folder in (home / "users", home / "users" / "alice"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert not (home / "memories" / "USER.md").exists()


def test_a_home_without_users_is_as_before(home: Path) -> None:
    with MemoryManager.from_home(home) as memory:
        memory.start_session("chat-1")
        add(memory, "User's name is Ada.")
        assert memory.home == memory.settings_home == home
        assert memory.status()["user_id"] is None
    assert (home / "memories" / "USER.md").read_text(encoding="utf-8") == "User's name is Ada."
    assert not (home / "users").exists()


def test_users_share_the_config_and_its_secrets(home: Path) -> None:
    configure(home, "sqlite", memory={"user_char_limit": 100})
    with MemoryHub(home) as hub:
        memory = hub.manager("alice")
        memory.start_session("chat-1")
        assert memory.status()["external_provider"] == "sqlite"
        assert memory.store.limits["user"] == 100
        add(memory, "User likes green tea.")
        memory.begin_turn("What tea does the user like?")
        memory.finish_turn("What tea does the user like?", "Green tea.")
        assert memory.flush(10)
    # The sqlite provider got the user's folder as its home: one database per user.
    assert (home / "users" / "alice" / "recall.db").exists()
    assert not (home / "recall.db").exists()


def test_the_least_recently_used_idle_manager_is_closed_to_make_room(home: Path) -> None:
    recorders: dict[str, Recorder] = {}
    with MemoryHub(home, max_open=2) as hub:
        hub.min_idle = 0.0

        def open_user(user: str) -> MemoryManager:
            memory = hub.manager(user)
            if user not in recorders:
                recorders[user] = Recorder()
                memory.register_provider(recorders[user], name="recorder")
                memory.start_session(f"chat-{user}")
            return memory

        alice = open_user("alice")
        open_user("bob")
        alice.begin_turn("A turn that is still open.")  # alice is mid-turn: never closed
        hub.manager("bob")  # bob is now more recent than alice, but alice is busy
        carol = open_user("carol")
        assert hub.status()["open"] == ["alice", "carol"]
        assert hub.closed_to_make_room == 1
        assert "shutdown" in recorders["bob"].hooks() and "shutdown" not in recorders["alice"].hooks()
        alice.finish_turn("A turn that is still open.", "Done.")
        assert alice.flush(5) and recorders["alice"].of("sync_turn")

        # bob comes back: a new manager, with the session bob had, started again.
        bob = hub.manager("bob")
        assert bob.session_id == "chat-bob" and not bob.closed
        assert hub.status()["open"] == ["carol", "bob"]  # alice (idle, least recent) closed
        assert carol is hub.manager("carol")


def test_the_sessions_of_closed_users_kept_are_bounded(home: Path) -> None:
    """A hub remembers the session of each user it closed, for that user's next manager; a
    process meeting users by the million must not keep one record each for ever."""
    with MemoryHub(home, max_open=1) as hub:
        hub.min_idle = 0.0
        hub.sessions_kept = 3
        for number in range(8):
            hub.manager(f"user-{number}").start_session(f"chat-{number}")
        assert hub.closed_to_make_room == 7
        assert len(hub._sessions) == 3  # user-4 to user-6; user-7 is open
        # The most recently closed come back with their session; one further back without.
        assert hub.manager("user-6").session_id == "chat-6"
        assert hub.manager("user-5").session_id == "chat-5"
        assert hub.manager("user-1").session_id == ""


def test_closing_managers_ends_the_threads_they_started(home: Path) -> None:
    """A hub opens and closes managers all day; each closed one must leave no thread behind
    (its provider's call thread included), or a long-lived host runs out of threads."""
    import threading

    configure(home, "sqlite")
    before = set(threading.enumerate())
    with MemoryHub(home, max_open=2) as hub:
        hub.min_idle = 0.0
        for number in range(12):
            memory = hub.manager(f"user-{number}")
            memory.start_session(f"chat-{number}")
            memory.begin_turn("Which port does the api use?")
            memory.finish_turn("Which port does the api use?", "8080.")
        assert hub.closed_to_make_room == 10
    started = [t for t in threading.enumerate() if t not in before]
    for thread in started:
        thread.join(5)
    assert [t.name for t in started if t.is_alive()] == []


@needs_proc
def test_closing_managers_closes_the_files_they_kept_open(home: Path) -> None:
    """Each user's memory journal stays open between writes; once the user's manager is
    closed, nothing under their folder may stay open, or a host serving many users runs out
    of descriptors."""
    configure(home, "sqlite")
    with MemoryHub(home, max_open=2) as hub:
        hub.min_idle = 0.0
        for number in range(8):
            memory = hub.manager(f"user-{number}")
            memory.start_session(f"chat-{number}")
            answer = json.loads(memory.call_tool("memory", {
                "action": "add", "target": "user", "content": f"Works on project {number}."}))
            assert answer["success"], answer
        still_open = {path.split("/users/")[1].split("/")[0] for path in open_files_under(home)}
        assert still_open <= {"user-6", "user-7"}, still_open  # only the two open managers
    assert open_files_under(home) == []
    # Nor does the process keep a lock object per file it ever wrote.
    from memhost import files

    assert [name for name in list(files._PATH_LOCKS) if name.startswith(str(home))] == []


def test_a_closed_manager_keeps_its_queued_writes_in_the_outbox(home: Path) -> None:
    from providers_for_tests import WedgedSync

    wedged = WedgedSync()
    with MemoryHub(home, max_open=1, shutdown_timeout=0.3) as hub:
        hub.min_idle = 0.0
        alice = hub.manager("alice")
        alice.register_provider(wedged, name="wedged")
        alice.start_session("chat-alice")
        alice.begin_turn("Remember the blue door.")
        alice.finish_turn("Remember the blue door.", "Noted.")
        alice.finish_turn("Remember the red door.", "Noted.", interrupted=True)
        alice.begin_turn("And the green door.")
        alice.finish_turn("And the green door.", "Noted.")
        assert wedged.entered.wait(5)
        hub.manager("bob")  # alice is idle: closed, within its bound, her writes kept
        report = alice.status()["shutdown"]
        assert report["status"] == "timed_out" and report["kept_in_outbox"] >= 1
        wedged.release.set()
    journals = list((home / "users" / "alice" / "outbox" / "wedged").glob("*.jsonl"))
    assert journals, "the writes alice's manager could not deliver are not in her outbox"


def test_the_manager_being_handed_out_is_never_the_one_closed(home: Path) -> None:
    """With every other open manager mid-turn, the bound is passed rather than closing the
    manager the host just asked for, even with ``min_idle`` 0."""
    with MemoryHub(home, max_open=1) as hub:
        hub.min_idle = 0.0
        alice = hub.manager("alice")
        alice.start_session("chat-alice")
        alice.begin_turn("A turn that is still open.")
        bob = hub.manager("bob")
        assert not bob.closed and hub.status()["open"] == ["alice", "bob"]
        bob.start_session("chat-bob")
        add(bob, "Bob's manager was usable.")
        alice.finish_turn("A turn that is still open.", "Done.")
    assert "usable" in (home / "users" / "bob" / "memories" / "USER.md").read_text()


def test_a_turn_never_finished_does_not_keep_its_manager_open_for_ever(
        home: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A host whose model call failed may never call ``finish_turn``. Such a turn pins its
    manager open only until it has been quiet for ``hub.abandoned_after``; the turn's sync,
    if the host does finish it later, goes to that user's outbox and reaches the provider
    through the user's next manager."""
    configure(home, "sqlite")
    question = "Which port does the zqvok service listen on?"
    with MemoryHub(home, max_open=1) as hub:
        hub.min_idle = 0.0
        alice = hub.manager("alice")
        alice.start_session("chat-alice")
        alice.begin_turn(question)  # and the host's model call fails
        hub.manager("bob").start_session("chat-bob")
        assert "alice" in hub.status()["open"] and not alice.closed  # mid-turn: kept open
        hub.abandoned_after = 0.2  # instead of waiting 15 minutes
        time.sleep(0.3)
        with caplog.at_level(logging.WARNING, logger="memhost.hub"):
            hub.manager("carol")
        assert "alice" not in hub.status()["open"] and alice.closed
        assert any("abandoned" in r.getMessage() and "'alice'" in r.getMessage()
                   for r in caplog.records)

        late = json.loads(alice.call_tool("recall_search", {"query": "zqvok"}))
        assert late["success"] is False and "shut down" in late["error"], late
        alice.finish_turn(question, "It listens on port 9431.")  # later after all
        assert list((home / "users" / "alice" / "outbox" / "sqlite").glob("*.jsonl"))
        again = hub.manager("alice")
        assert again is not alice and again.session_id == "chat-alice"
        assert again.flush(10)
        found = json.loads(again.call_tool("recall_search", {"query": "zqvok port"}))
        assert "9431" in json.dumps(found), found


def test_a_manager_the_host_shut_down_is_replaced(home: Path) -> None:
    with MemoryHub(home) as hub:
        first = hub.manager("alice")
        first.start_session("chat-1")
        first.shutdown()
        second = hub.manager("alice")
        assert second is not first and not second.closed


def test_a_closed_hub_refuses_new_managers(home: Path) -> None:
    hub = MemoryHub(home)
    memory = hub.manager("alice")
    reports = hub.close()
    assert memory.closed and reports["alice"].status == "drained"
    with pytest.raises(RuntimeError, match="closed"):
        hub.manager("alice")


def test_a_manager_opening_while_the_hub_closes_is_shut_down_too(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """close() shuts down the managers it finds open; one still being opened then is shut
    down by its opening, which raises as any opening after close() does."""
    made: list[MemoryManager] = []
    may_finish = threading.Event()
    real = MemoryManager.from_config.__func__

    def slow_open(cls: type[MemoryManager], *args: object, **kwargs: object) -> MemoryManager:
        made.append(real(cls, *args, **kwargs))
        may_finish.wait(10)
        return made[-1]

    monkeypatch.setattr(MemoryManager, "from_config", classmethod(slow_open))
    hub = MemoryHub(home)
    outcome: dict[str, object] = {}

    def open_alice() -> None:
        try:
            outcome["manager"] = hub.manager("alice")
        except RuntimeError as exc:
            outcome["error"] = exc

    opening = threading.Thread(target=open_alice)
    opening.start()
    wait_for(lambda: made)
    assert hub.close() == {}
    may_finish.set()
    opening.join(10)
    assert "closed" in str(outcome.get("error")), outcome
    assert made[0].closed and hub.status()["open"] == []


def test_max_open_must_be_positive(home: Path) -> None:
    with pytest.raises(ValueError, match="max_open"):
        MemoryHub(home, max_open=0)


def test_close_shuts_wedged_managers_down_together(home: Path) -> None:
    import time

    from providers_for_tests import WedgedSync

    providers = [WedgedSync() for _ in range(8)]
    hub = MemoryHub(home, shutdown_timeout=0.5)
    for index, provider in enumerate(providers):
        memory = hub.manager(f"user-{index}")
        memory.register_provider(provider, name="wedged")
        memory.start_session("chat")
        memory.begin_turn("Remember the orange door.")
        memory.finish_turn("Remember the orange door.", "Noted.")
    for provider in providers:
        assert provider.entered.wait(5)
    started = time.monotonic()
    reports = hub.close()
    elapsed = time.monotonic() - started
    for provider in providers:
        provider.release.set()
    assert {r.status for r in reports.values()} == {"timed_out"}
    assert all(r.kept_in_outbox == 1 for r in reports.values())
    # One after another this would take 8 bounds (4 s); together it takes about one.
    assert elapsed < 3.0, elapsed


# -- what users share is read once -----------------------------------------------------------

SHARED_PROVIDER = """\
from memhost import hookimpl


class Shared:
    def __init__(self):
        self.configs = []

    @hookimpl
    def initialize(self, session_id, home, config):
        self.configs.append(dict(config))
        config["region"] = "changed by the provider"  # a provider may change what it is given
"""

SHARED_SCHEMA = """\
from memhost.schema import ConfigField, ProviderConfigSchema

CONFIG_SCHEMA = ProviderConfigSchema(
    name="shared",
    label="Shared",
    fields=[ConfigField("region", default="eu-west"),
            ConfigField("token", kind="secret", env_key="SHARED_TOKEN")],
)
"""


def write_shared_provider(home: Path) -> None:
    folder = home / "plugins" / "shared"
    folder.mkdir(parents=True)
    (folder / "plugin.toml").write_text(
        'name = "shared"\nversion = "0.1.0"\ndescription = "records its config"\n'
        'entry = "provider:Shared"\n', encoding="utf-8")
    (folder / "provider.py").write_text(SHARED_PROVIDER, encoding="utf-8")
    (folder / "config_schema.py").write_text(SHARED_SCHEMA, encoding="utf-8")


def counting(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[str]:
    """Record each call of ``module.name`` (by its first argument) and let it through."""
    calls: list[str] = []
    real = getattr(module, name)

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(str(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_users_provider_is_found_and_configured_once(home: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from memhost.discovery import scan, shared

    write_shared_provider(home)
    configure(home, "shared", {"region": "ap-south", "token": "tok-one"})
    scans = counting(monkeypatch, scan, "discover")
    reads = counting(monkeypatch, shared, "runtime_config")
    with MemoryHub(home) as hub:
        managers = [hub.manager("alice")]
        managers[0].start_session("chat-alice")
        first = len(scans)
        managers += [hub.manager(user) for user in ("bob", "carol")]
        for memory in managers:
            memory.start_session(f"chat-{memory.user_id}-2")
            if memory.user_id != "alice":
                memory.start_session(f"chat-{memory.user_id}-3")
        plugins = [memory._external.plugin for memory in managers]  # type: ignore[union-attr]
    assert first > 0 and len(scans) == first, "the provider's folders were scanned again"
    assert reads == ["shared"]
    # Each user has a provider object of their own, and a config of their own: what one
    # provider did to its config reached no other, nor that provider's next session.
    assert len({id(plugin) for plugin in plugins}) == 3
    for plugin in plugins:
        assert [(c["region"], c["token"]) for c in plugin.configs] == [("ap-south", "tok-one")] * 2


def test_a_provider_not_found_is_looked_for_again_at_the_next_opening(home: Path) -> None:
    configure(home, "shared")
    with MemoryHub(home) as hub:
        first = hub.manager("alice")
        assert first.status()["external_provider"] is None
        assert "no memory provider is named 'shared'" in first.problems[0]["problem"]
        write_shared_provider(home)
        second = hub.manager("bob")
        assert second.status()["external_provider"] == "shared"
        assert second.problems == []


def test_a_manager_on_its_own_reads_its_providers_config_at_each_session_start(
        home: Path) -> None:
    write_shared_provider(home)
    configure(home, "shared", {"region": "ap-south"})
    with MemoryManager.from_home(home) as memory:
        memory.start_session("chat-1")
        configure(home, "shared", {"region": "us-east"})
        memory.start_session("chat-2")
        plugin = memory._external.plugin  # type: ignore[union-attr]
    assert [c["region"] for c in plugin.configs] == ["ap-south", "us-east"]
