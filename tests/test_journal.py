"""The write-ahead journal of a memory file: checkpoints, growth, torn records, other readers."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memhost.builtin_providers import entrymeta, journal, journal_records
from memhost.builtin_providers.entries import DELIMITER
from memhost.builtin_providers.store import MemoryStore


def test_a_full_journal_is_checkpointed_and_grown_to_the_records_it_holds(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "home", memory_char_limit=1_000_000)
    path = journal.path_for(store.path("memory"))
    texts = [f"fact {i}: " + "a long and detailed entry " * 40 for i in range(40)]
    for text in texts:
        assert store.add("memory", text).ok
    assert store.replace("memory", "fact 3:", "fact 3 revised").ok
    now = journal.state(path)
    assert now.gen >= 2, "40 writes of a growing ~40 KB file fill a 64 KiB journal"
    assert now.size > journal.INITIAL_BYTES  # sized for ~128 of its largest records
    assert path.stat().st_size == now.size
    # Nothing was lost on the way: entries, their metadata, the archived entry.
    entries = store.entries("memory")
    assert len(entries) == 40 and "fact 3 revised" in entries
    assert all(entrymeta.written_by_store(record) for _, record in store.metadata("memory"))
    assert [a.text for a in store.archive.entries()] == [texts[3].strip()]


def test_a_torn_record_is_ignored_and_overwritten(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "home")
    assert store.add("memory", "alpha").ok
    path = journal.path_for(store.path("memory"))
    end = journal.state(path).end
    with open(path, "r+b") as handle:  # what a power cut mid-append can leave
        handle.seek(end)
        handle.write(b'0badc0de {"g":1,"text":"half a rec')
    journal.forget(path)
    assert journal.state(path).end == end  # the torn line is not a record
    assert store.add("memory", "beta").ok
    journal.forget(path)
    assert journal.state(path).committed.text() == "alpha\n§\nbeta"
    assert store.entries("memory") == ["alpha", "beta"]


def test_another_process_reads_what_a_write_recorded(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = MemoryStore(home)
    assert store.add("memory", "alpha").ok
    store.update_metadata("memory", "alpha", pinned=True)
    assert store.remove("memory", "alpha").ok
    assert store.add("memory", "beta").ok
    store.update_metadata("memory", "beta", pinned=True)
    script = textwrap.dedent("""
        import sys
        from pathlib import Path
        from memhost.builtin_providers.store import MemoryStore
        store = MemoryStore(Path(sys.argv[1]))
        print([(e, m.get("pinned")) for e, m in store.metadata("memory")])
        print([a.text for a in store.archive.entries()])
    """)
    out = subprocess.run([sys.executable, "-c", script, str(home)], capture_output=True,
                         text=True, timeout=60, check=True).stdout.splitlines()
    assert out == ["[('beta', True)]", "['alpha']"]


def _zero_in_place(path: Path, start: int, length: int) -> None:
    # What a power cut leaves when the renamed file's blocks were allocated but not all written:
    # the same inode, the same size, some ranges still zero.
    with open(path, "r+b") as handle:
        handle.seek(start)
        handle.write(b"\0" * length)


def test_a_write_whose_blocks_a_power_cut_left_unwritten_is_put_right(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "home")
    assert store.add("memory", "alpha").ok
    assert store.add("memory", "beta: the user's café is called Zoë's").ok
    path = store.path("memory")
    data = path.read_bytes()
    _zero_in_place(path, data.index("é".encode()) + 1, 12)  # splits a UTF-8 character
    assert store.snapshot().memory  # a session start puts it right under the lock
    assert store.entries("memory") == ["alpha", "beta: the user's café is called Zoë's"]
    assert store.add("memory", "gamma").ok
    _zero_in_place(path, 0, path.stat().st_size)  # nothing of it written at all
    assert store.add("memory", "delta").ok
    assert store.entries("memory") == ["alpha", "beta: the user's café is called Zoë's", "gamma",
                                       "delta"]


def test_zeros_written_over_a_file_by_hand_are_not_taken_for_a_lost_write(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "home")
    assert store.add("memory", "alpha").ok
    path = store.path("memory")
    with open(path, "ab") as handle:  # a different length: an edit outside memhost
        handle.write(b"\n\0\0\0")
    assert store.replace("memory", "alpha", "beta").ok is False  # the drift guard: NUL bytes
    assert path.read_bytes() == b"alpha\n\0\0\0"


# -- a record's text is decoded when it is asked for --------------------------------------------

#: Texts built of what could confuse finding a record's text: quotes, backslashes, the very
#: keys looked for, braces, NUL (escaped by JSON), non-ASCII.
_AWKWARD = st.lists(st.sampled_from(['a', '"', "\\", ",", ":", "§", "\n", "é", "\u200b", "\x00",
                                     '","before":', ',"text":"', '\\"', "}"]),
                    max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=_AWKWARD, archived=st.lists(_AWKWARD, max_size=2), meta=st.booleans())
def test_a_record_read_back_with_its_text_left_encoded_is_the_record_written(
        text: str, archived: list[str], meta: bool) -> None:
    record: dict[str, object] = {"t": 1.5, "text": text, "before": [1, 2], "ino": 7}
    if archived:
        record["archive"] = [{"id": "a1", "text": a, "before": None} for a in archived]
    if meta:
        record["meta"] = {"k": {"text": text, "before": "x"}}
    line = journal.encode(3, record).rstrip(b"\n")
    found = journal_records.decode(line)
    assert found is not None and journal_records.has_text(found)
    assert "text" not in found  # left encoded by the decoding...
    assert found["text"] == text  # ...and decoded now, from the bytes kept
    assert dict(found) == {"g": 3, **record}


@pytest.mark.parametrize("record", [
    {"meta": {"k": {"x": 1, "text": "nested", "before": 2}}},  # no text of its own
    {"cancel": True, "meta": {"k": None}},
    {"archive": [{"id": "a", "text": "old"}], "t": 1.0, "text": "T", "before": None},  # older order
    {"t": 1.0, "text": "T"},  # no "before" after the text
])
def test_records_of_other_shapes_are_decoded_whole(record: dict[str, object]) -> None:
    line = journal.encode(2, record).rstrip(b"\n")
    found = journal_records.decode(line)
    assert found is not None and dict(found) == {"g": 2, **record}
    assert journal_records.has_text(found) == ("text" in record)


def test_a_torn_or_corrupted_record_is_not_read() -> None:
    line = journal.encode(1, {"t": 1.0, "text": "T", "before": None}).rstrip(b"\n")
    assert journal_records.decode(line[:-3]) is None
    assert journal_records.decode(line.replace(b'"T"', b'"U"')) is None
    assert journal_records.decode(b"zzzzzzzz {}") is None


def _corrupt_record(path: Path, number: int) -> None:
    """Flip a byte inside the ``number``-th record (0: the generation's first line)."""
    data = bytearray(path.read_bytes())
    start = 0
    for _ in range(number):
        start = data.index(b"\n", start) + 1
    data[start + 20] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("case", ["none", "writes", "cancelled", "metadata after", "torn tail",
                                  "corrupt middle", "corrupt first", "other generation"])
def test_newest_reads_what_the_whole_read_finds_last(tmp_path: Path, case: str) -> None:
    """A session start asks only for the newest committed text (journal.newest): whatever the
    journal holds, it is what reading every record (journal.state) ends with."""
    store = MemoryStore(tmp_path / "home")
    path = journal.path_for(store.path("memory"))
    if case != "none":
        for text in ("alpha", "beta", "gamma", "delta"):
            assert store.add("memory", text).ok
    if case == "cancelled":
        journal.append(path, {"cancel": True, "meta": {}})
    elif case == "metadata after":
        store.update_metadata("memory", "beta", pinned=True)
    elif case == "torn tail":
        end = journal.state(path).end
        with open(path, "r+b") as handle:
            handle.seek(end)
            handle.write(b'0badc0de {"g":1,"t":2.0,"text":"half a rec')
    elif case == "corrupt middle":
        _corrupt_record(path, 2)
    elif case == "corrupt first":
        _corrupt_record(path, 1)
    elif case == "other generation":
        data = path.read_bytes()  # a valid first line of generation 7 before records of 1
        assert data.startswith(journal_records.to_line({"g": 1}))
        path.write_bytes(data.replace(journal_records.to_line({"g": 1}),
                                      journal_records.to_line({"g": 7}), 1))
    store.close()
    journal.forget(path)
    light = journal.newest(path)
    journal.forget(path)
    whole = journal.state(path).committed.text()
    assert light == whole
    expected = {"none": None, "writes": "alpha\n§\nbeta\n§\ngamma\n§\ndelta",
                "cancelled": None, "metadata after": "alpha\n§\nbeta\n§\ngamma\n§\ndelta",
                "torn tail": "alpha\n§\nbeta\n§\ngamma\n§\ndelta", "corrupt middle": "alpha",
                "corrupt first": None, "other generation": None}[case]
    assert whole == expected
    # And this process, following the journal once it has read it, gives the same.
    assert journal.newest(path) == whole


def _written_with_churn(home: Path, notes: int) -> MemoryStore:
    store = MemoryStore(home)
    assert store.add("memory", "kept: the build uses make").ok
    for number in range(notes):
        assert store.add("memory", f"note {number} for one task").ok
        assert store.remove("memory", f"note {number} for").ok
    return store


def test_a_store_closed_after_many_writes_folds_its_journal_in(tmp_path: Path) -> None:
    store = _written_with_churn(tmp_path / "home", 12)  # 25 records after the header
    path = journal.path_for(store.path("memory"))
    before = journal.state(path)
    assert before.records > 16
    metadata = store.metadata("memory")
    store.close()
    journal.forget(path)
    after = journal.state(path)
    assert after.gen == before.gen + 1 and after.records == 1 and after.committed.record is None
    # Nothing lost on the way: the file, each entry's metadata, every removed note archived.
    reopened = MemoryStore(tmp_path / "home")
    assert reopened.entries("memory") == ["kept: the build uses make"]
    assert reopened.metadata("memory") == metadata
    assert sorted(a.text for a in reopened.archive.entries()) == sorted(
        f"note {n} for one task" for n in range(12))
    assert reopened.add("memory", "a write after the fold works").ok


def test_a_close_folds_nothing_it_need_not(tmp_path: Path) -> None:
    # Few records: left as they are.
    few = _written_with_churn(tmp_path / "few", 3)
    path = journal.path_for(few.path("memory"))
    records = journal.state(path).records
    few.close()
    journal.forget(path)
    assert journal.state(path).records == records
    # A store of this process that only read: another writer's journal is not its to fold.
    writer = _written_with_churn(tmp_path / "read", 12)
    path = journal.path_for(writer.path("memory"))
    records = journal.state(path).records
    reader = MemoryStore(tmp_path / "read")
    assert reader.entries("memory") == ["kept: the build uses make"]
    reader.close()
    journal.forget(path)
    assert journal.state(path).records == records


def test_a_close_does_not_wait_for_a_busy_lock(tmp_path: Path) -> None:
    import time

    from memhost.builtin_providers import commit

    store = _written_with_churn(tmp_path / "home", 12)
    path = journal.path_for(store.path("memory"))
    records = journal.state(path).records
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from memhost.files import locked
        with locked(Path({str(store.path("memory"))!r}), 5):
            print("held", flush=True)
            time.sleep(3)
    """)
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        store.close()  # neither waits out the other writer nor raises
        assert time.monotonic() - started < commit.FOLD_LOCK_TIMEOUT + 1
    finally:
        holder.kill()
        holder.wait()
    journal.forget(path)
    assert journal.state(path).records == records  # left for a later write to fold in


def test_generation_of_reads_the_generation_a_line_starts_with() -> None:
    header = journal_records.to_line({"g": 3})
    record = journal_records.to_line({"g": 12, "t": 1.0, "text": "x", "before": None})
    assert journal_records.generation_of(header) == 3
    assert journal_records.generation_of(record) == 12
    assert journal_records.generation_of(b"\n" + record, 1) == 12
    for line in (b"0badc0de {}", b'0badc0de {"g":x}', b'0badc0de {"g":12'):
        assert journal_records.generation_of(line) is None  # shaped otherwise: decoded
    for line in (b"", b"zz" * 20, b"half of a record\n"):
        assert journal_records.generation_of(line) == -1  # no record starts here


def test_a_reader_stops_at_an_older_generation_without_decoding_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A checkpoint starts the journal over in place: the older generation's records stay behind
    # the new header until overwritten. Reading must stop there, and at no cost of decoding one.
    store = MemoryStore(tmp_path / "home")
    for number in range(6):
        assert store.add("memory", f"note {number} " + "with some words " * 20).ok
    store.checkpoint("memory")
    path = journal.path_for(store.path("memory"))
    assert b'"g":1,' in path.read_bytes()  # the older generation is still there
    decoded: list[bytes] = []
    real = journal.decode

    def counting(line: bytes) -> object:
        decoded.append(line)
        return real(line)

    monkeypatch.setattr(journal, "decode", counting)
    for read in (lambda: journal.state(path).records, lambda: journal.newest(path)):
        journal.forget(path)
        decoded.clear()
        assert read() in (1, None)  # the header alone; no text record in this generation
        assert all(journal_records.generation_of(line + b"\n") == 2 for line in decoded)


# -- a write's record holds the change it makes ---------------------------------------------------

_ENTRY = st.text(st.sampled_from(["a", "b", "é", "§", " ", "\n"]), min_size=1, max_size=6)


@settings(max_examples=400, deadline=None)
@given(before=st.lists(_ENTRY, max_size=8, unique=True), after=st.lists(_ENTRY, max_size=8,
                                                                         unique=True))
def test_a_splice_turns_the_entries_before_into_those_after(before: list[str],
                                                            after: list[str]) -> None:
    splice = journal_records.splice_of(before, after)
    if splice is None:  # more than half of the new text would be in it: a whole text instead
        assert sum(map(len, after)) > 0
        return
    assert journal_records.apply_splice(before, splice) == after
    # An entry kept from before is a range, never repeated in the record.
    assert not set(before) & {part for part in splice if isinstance(part, str)}


def _committed(entries: list[str]) -> journal_records.CommittedText:
    committed = journal_records.CommittedText()
    committed.fold({"t": 0.0, "text": DELIMITER.join(entries)})
    return committed


def test_a_records_splice_is_decided_on_its_entries_length_alone() -> None:
    """with_text passes splice_of the entries' length from the text it already has; the
    decision (a splice, or the whole text) is the one counting the entries gives."""
    before = [f"entry {i}" for i in range(300)]
    for after in (before[:137] + ["revised"] + before[138:], [*before, "new"],
                  ["x" * 3000, *before[:2]], before[:1] + ["y" * 40],
                  # Just over half the entries' length, not half the text's with its
                  # delimiters: the whole text.
                  before[:137] + ["z" * 2800] + before[138:]):
        text = DELIMITER.join(after)
        record = journal_records.with_text(
            {"t": 1.0}, _committed(before), before, (text, after))
        expected = journal_records.splice_of(before, after)
        assert record.get("splice") == expected
        assert ("text" in record) is (expected is None)
    assert journal_records.splice_of(before, before[:137] + ["revised"] + before[138:]) == [
        [0, 137], "revised", [138, 300]]


def test_a_splice_that_does_not_fit_its_entries_is_refused() -> None:
    for splice in ([[0, 2]], [[1, 0]], [[-1, 1]], [[0, 1, 2]], [["0", 1]], [[0, True]], [3],
                   "no", {"0": 1}):
        assert journal_records.apply_splice(["a"], splice) is None


def test_splices_folded_after_entries_were_handed_out_leave_that_list_as_it_was() -> None:
    """A run of adds extends the entries the committed text holds in place, but never a list
    it handed out (a writer reads it under the lock: a later fold must not change it)."""
    committed = _committed(["a", "b"])
    lent = committed.entries()
    assert lent == ["a", "b"]
    committed.fold({"splice": [[0, 2], "c"], "chars": 9})
    committed.fold({"splice": [[0, 3], "d"], "chars": 13})
    assert lent == ["a", "b"]
    assert committed.entries() == ["a", "b", "c", "d"]
    assert committed.text() == DELIMITER.join("abcd")


@pytest.mark.parametrize("kept", [[0, 3.0], [False, 3], [0.0, 3], [0, 3, 3], "03", [0, 2],
                                  [1, 3], [0, 4]])
def test_an_add_splice_is_applied_in_place_only_when_it_keeps_every_entry(kept: object) -> None:
    """Folded without handing the entries out (a reader catching up), a splice of the shape of
    an add extends them; any other first part goes the way of apply_splice, which refuses
    what is not two whole numbers within the entries, so the record leaves nothing known."""
    committed = _committed(["a", "b"])
    committed.fold({"splice": [[0, 2], "c"], "chars": 7})  # extended in place
    committed.fold({"splice": [kept, "d"], "chars": 10})
    expected = journal_records.apply_splice(["a", "b", "c"], [kept, "d"])
    assert committed.entries() == expected
    good = _committed(["a", "b"])
    for n in range(2, 6):
        good.fold({"splice": [[0, n], f"e{n}"], "chars": 0})
    assert good.entries() == ["a", "b", "e2", "e3", "e4", "e5"]


@pytest.mark.parametrize("rest", [["d", [0, 1]], ["d", 7], ["d", None], [["x"]], []])
def test_a_splice_keeping_every_entry_then_not_only_new_ones_is_not_an_append(rest: list) -> None:
    """After "every entry, in place", a range or anything but a string makes the splice one to
    apply (or refuse) whole, as apply_splice does."""
    committed = _committed(["a", "b"])
    committed.fold({"splice": [[0, 2], "c"], "chars": 9})
    committed.fold({"splice": [[0, 3], *rest], "chars": 0})
    assert committed.entries() == journal_records.apply_splice(["a", "b", "c"], [[0, 3], *rest])


@pytest.mark.parametrize("splice", ["no", [], {"0": 1}, None, 3])
def test_a_splice_not_a_list_of_parts_goes_the_way_of_apply_splice(splice: object) -> None:
    committed = _committed(["a", "b"])
    committed.fold({"splice": [[0, 2], "c"], "chars": 9})  # extended in place
    committed.fold({"splice": splice, "chars": 0})
    assert committed.entries() == journal_records.apply_splice(["a", "b", "c"], splice)


def _records(path: Path) -> list[dict]:
    return [r for r in map(journal_records.decode, path.read_bytes().split(b"\n"))
            if r is not None and ("splice" in r or journal_records.has_text(r))]


def test_a_write_records_the_entries_it_changes_not_the_whole_file(tmp_path: Path) -> None:
    """At 300 entries an add's record is a few hundred bytes; replace, remove and batches too.
    Whatever mix of them, a reader starting cold (a session start) finds the text the file
    must hold, as does one that reads every record, and this process."""
    store = MemoryStore(tmp_path / "home", memory_char_limit=10**6)
    seed = [f"fact {n}: the user keeps notes about project {n} in the wiki" for n in range(300)]
    assert store.apply_batch("memory", [{"action": "add", "content": e} for e in seed]).ok
    path = journal.path_for(store.path("memory"))
    assert journal_records.has_text(_records(path)[-1])  # a new generation starts whole
    assert store.add("memory", "the user prefers short answers").ok
    assert store.replace("memory", "fact 7:", "fact 7: moved to the handbook").ok
    assert store.remove("memory", "fact 250:").ok
    assert store.apply_batch("memory", [
        {"action": "remove", "old_text": "fact 3:"},
        {"action": "add", "content": "fact 301: a late addition"},
    ]).ok
    splices = [r for r in _records(path) if "splice" in r]
    assert len(splices) == 4
    sizes = [len(line) for line in path.read_bytes().split(b"\n") if b'"splice"' in line]
    assert max(sizes) < 1_000, sizes
    text = store.path("memory").read_text("utf-8")
    assert journal.state(path).committed.text() == text
    store.close()
    journal.forget(path)
    assert journal.newest(path) == text
    journal.forget(path)
    assert journal.state(path).committed.text() == text


def test_the_whole_text_is_written_again_every_few_dozen_records(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "home", memory_char_limit=10**6)
    for n in range(3 * journal_records.SPLICES_PER_TEXT):
        assert store.add("memory", f"note {n} about the build").ok
    path = journal.path_for(store.path("memory"))
    run = longest = 0
    for record in _records(path):
        run = run + 1 if "splice" in record else 0
        longest = max(longest, run)
    assert longest == journal_records.SPLICES_PER_TEXT
    journal.forget(path)
    assert journal.newest(path) == store.path("memory").read_text("utf-8")


def test_a_checkpoint_comes_after_at_most_so_many_records(tmp_path: Path) -> None:
    from memhost.builtin_providers.commit import RECORDS_PER_JOURNAL

    store = MemoryStore(tmp_path / "home", memory_char_limit=10**6)
    path = journal.path_for(store.path("memory"))
    for n in range(RECORDS_PER_JOURNAL + 5):
        assert store.add("memory", f"n{n}").ok
        assert journal.state(path).records <= RECORDS_PER_JOURNAL
    assert journal.state(path).gen == 2
    assert store.entries("memory") == [f"n{n}" for n in range(RECORDS_PER_JOURNAL + 5)]


def test_a_splice_replayed_to_the_wrong_length_is_not_trusted(tmp_path: Path) -> None:
    """A record's "chars" is the length of the text it sets: a replay that comes out otherwise
    (a record for other entries) makes no claim on the file, which is left as it is."""
    store = MemoryStore(tmp_path / "home")
    assert store.add("memory", "alpha").ok
    assert store.add("memory", "beta").ok
    path = journal.path_for(store.path("memory"))
    journal.append(path, {"t": 1.0, "before": None, "ino": 0, "splice": [2, 0, ["gamma"]],
                          "chars": 99})
    journal.forget(path)
    assert journal.state(path).committed.text() is None
    store.close()
    journal.forget(path)
    assert journal.newest(path) is None
    assert store.add("memory", "delta").ok
    assert store.entries("memory") == ["alpha", "beta", "delta"]


def test_writers_in_two_processes_each_record_splices_on_the_others(tmp_path: Path) -> None:
    """A process catches up on the splices another appended and records its own write as a
    splice on them; every reader, warm or cold, comes to the text the file holds."""
    home = tmp_path / "home"
    store = MemoryStore(home, memory_char_limit=10**6)
    for n in range(6):
        assert store.add("memory", f"fact {n}: kept in the wiki").ok
    script = textwrap.dedent("""
        import sys
        from pathlib import Path
        from memhost.builtin_providers.store import MemoryStore
        store = MemoryStore(Path(sys.argv[1]), memory_char_limit=10**6)
        assert store.add("memory", "from the other process").ok
        assert store.replace("memory", "fact 2:", "fact 2: moved to the handbook").ok
        assert store.remove("memory", "fact 4:").ok
    """)
    subprocess.run([sys.executable, "-c", script, str(home)], check=True, timeout=60)
    assert store.apply_batch("memory", [
        {"action": "remove", "old_text": "fact 0:"},
        {"action": "add", "content": "after the other process"},
    ]).ok
    path = journal.path_for(store.path("memory"))
    records = _records(path)
    assert ["splice" in r for r in records[-4:]] == [True] * 4
    text = store.path("memory").read_text("utf-8")
    assert store.entries("memory") == ["fact 1: kept in the wiki", "fact 2: moved to the handbook",
                                       "fact 3: kept in the wiki", "fact 5: kept in the wiki",
                                       "from the other process", "after the other process"]
    assert journal.state(path).committed.text() == text
    store.close()
    journal.forget(path)
    assert journal.newest(path) == text


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(["add", "remove", "replace", "whole", "cancel"]),
                                st.integers(0, 50)), max_size=40))
def test_the_committed_text_follows_any_run_of_whole_texts_splices_and_cancels(
        steps: list[tuple[str, int]]) -> None:
    """Folding the records a run of writes appends gives, after each one, the text the last
    write set (nothing after a cancel), whether folded as they come or, as a session start
    does, from the newest whole text on."""
    entries: list[str] = []
    records: list[dict] = []
    committed = journal_records.CommittedText()
    owed: str | None = None
    counter = 0
    for kind, n in steps:
        if kind == "cancel":
            record: dict = {"cancel": True}
            owed = None
        else:
            counter += 1
            after = list(entries)
            if kind == "add" or not after:
                after.append(f"entry {counter} " + "x" * n)
            elif kind == "remove":
                del after[n % len(after)]
            elif kind == "replace":
                after[n % len(after)] = f"entry {counter} revised"
            known = committed.entries()
            splice = (journal_records.splice_of(known, after)
                      if kind != "whole" and known == entries else None)
            text = DELIMITER.join(after)
            record = ({"splice": splice, "chars": len(text)} if splice is not None
                      else {"text": text})
            entries, owed = after, text
        records.append(record)
        committed.fold(record)
        assert committed.text() == owed
        start = max((i for i, r in enumerate(records) if "splice" not in r), default=0)
        cold = journal_records.CommittedText()
        for earlier in records[start:]:
            cold.fold(earlier)
        assert cold.text() == owed


def test_a_reader_without_the_lock_never_folds_a_record_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread reading the journal without the memory file's lock (a session start, a listing)
    while another thread of the same process appends: the record being synced is folded in once,
    by one of them, and the next write lands right after it."""
    import threading

    store = MemoryStore(tmp_path / "home")
    assert store.add("memory", "alpha").ok
    path = journal.path_for(store.path("memory"))
    real_sync = journal._datasync
    readers: list[threading.Thread] = []

    def sync_while_another_thread_reads(fd: int) -> None:
        reader = threading.Thread(target=lambda: journal.state(path))
        readers.append(reader)
        reader.start()
        reader.join(0.3)  # it reads now, unless the append keeps it waiting
        real_sync(fd)

    monkeypatch.setattr(journal, "_datasync", sync_while_another_thread_reads)
    assert store.add("memory", "beta").ok
    monkeypatch.undo()
    for reader in readers:
        reader.join(5)
    assert store.add("memory", "gamma").ok
    seen = journal.state(path)
    journal.forget(path)  # as a new process reads it
    fresh = journal.state(path)
    assert (seen.records, seen.end) == (fresh.records, fresh.end)
    assert fresh.committed.text() == store.path("memory").read_text("utf-8")
    assert store.entries("memory") == ["alpha", "beta", "gamma"]


def test_a_record_orjson_cannot_write_is_written_and_read_back_all_the_same() -> None:
    """orjson writes records (UTF-8, the text whole); what it refuses (a lone surrogate in a
    session id from a host, an integer past 64 bits) is written by the standard library, and
    both kinds read back as written."""
    plain = {"g": 1, "t": 1.5, "text": "é § x", "before": None, "ino": 7}
    odd = {"g": 1, "t": 1.5, "session": "abc\ud800", "n": 2**70}
    for record in (plain, odd):
        line = journal_records.to_line(record)
        assert journal_records.intact(line[:-1])
        decoded = journal_records.decode(line[:-1])
        assert decoded is not None and {key: decoded[key] for key in record} == record
    assert "é § x".encode() in journal_records.to_line(plain)  # not escaped
