"""The secret engine's answers, kept for later processes (memhost.security.engine_answers)."""

from __future__ import annotations

import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memhost.security import detector
from memhost.security.engine_answers import (
    CLEAN_FILE,
    DIGEST_BYTES,
    FOUND_FILE,
    MAX_BYTES,
    EngineAnswers,
)

# A long token run holding one of the engine's keywords ("api"): it reaches the engine.
PATH_LINE = "  /home/someone/.memhost/api-cache/ada/memories/MEMORY.md\n"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2  # a GitHub token shape the engine reports
SECRET_LINE = f"Deploys use {TOKEN[:40]} from CI."
#: A found record: the digest, a count, and an offset and a length per value.
ONE_FINDING = DIGEST_BYTES + 1 + 8


def test_an_answer_kept_is_known_to_a_new_reader_of_the_same_version(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    first = EngineAnswers(folder, lambda: "v1")
    assert first.answer(PATH_LINE) is None
    first.add(PATH_LINE)
    first.add(PATH_LINE)  # kept once
    first.close()
    assert (folder / CLEAN_FILE).stat().st_size == DIGEST_BYTES
    assert PATH_LINE.encode() not in (folder / CLEAN_FILE).read_bytes()  # a digest, not the text
    assert EngineAnswers(folder, lambda: "v1").answer(PATH_LINE) == frozenset()
    assert EngineAnswers(folder, lambda: "v2").answer(PATH_LINE) is None  # another version
    assert EngineAnswers(folder, lambda: "v1").answer(PATH_LINE + " ") is None


def test_a_finding_is_kept_as_where_it_is_and_read_back_from_the_text(tmp_path: Path) -> None:
    secret = TOKEN[:40]
    text = f"{secret} again: {secret}, and CI uses it"
    kept = EngineAnswers(tmp_path, lambda: "v1")
    kept.add(text, {secret})
    kept.close()
    data = (tmp_path / FOUND_FILE).read_bytes()
    assert secret.encode() not in data and len(data) == ONE_FINDING
    assert not (tmp_path / CLEAN_FILE).exists()
    assert EngineAnswers(tmp_path, lambda: "v1").answer(text) == frozenset({secret})
    # A value that is not in the text is never kept: the record could not be read back.
    kept = EngineAnswers(tmp_path / "other", lambda: "v1")
    kept.add("nothing like it here", {secret})
    assert kept.answer("nothing like it here") is None


def test_the_files_are_private_and_their_folder_too(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    kept = EngineAnswers(folder, lambda: "v1")
    kept.add(PATH_LINE)
    kept.add(SECRET_LINE, {TOKEN[:40]})
    for name in (CLEAN_FILE, FOUND_FILE):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_torn_last_records_are_left_out_and_an_oversized_file_started_again(
        tmp_path: Path) -> None:
    kept = EngineAnswers(tmp_path, lambda: "v1")
    kept.add(PATH_LINE)
    kept.add(SECRET_LINE, {TOKEN[:40]})
    kept.close()
    with open(tmp_path / CLEAN_FILE, "ab") as handle:
        handle.write(b"\x01\x02\x03")  # a process stopped in the middle of a write
    with open(tmp_path / FOUND_FILE, "ab") as handle:
        handle.write(b"\x01" * DIGEST_BYTES + b"\x03" + b"\x00" * 9)
    reader = EngineAnswers(tmp_path, lambda: "v1")
    assert reader.answer(PATH_LINE) == frozenset()
    assert reader.answer(SECRET_LINE) == frozenset({TOKEN[:40]})
    assert reader.answer("anything else at all") is None
    (tmp_path / CLEAN_FILE).write_bytes(b"\0" * (MAX_BYTES + DIGEST_BYTES))
    fresh = EngineAnswers(tmp_path, lambda: "v1")
    assert fresh.answer(PATH_LINE) is None and not (tmp_path / CLEAN_FILE).exists()
    fresh.add(PATH_LINE)
    assert (tmp_path / CLEAN_FILE).stat().st_size == DIGEST_BYTES


def test_a_home_that_does_not_exist_is_not_made(tmp_path: Path) -> None:
    kept = EngineAnswers(tmp_path / "no-home-yet" / "cache", lambda: "v1")
    kept.add(PATH_LINE)
    assert kept.answer(PATH_LINE) == frozenset() and not (tmp_path / "no-home-yet").exists()


def test_a_folder_that_cannot_be_made_costs_nothing_but_the_saving(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the folder would go", encoding="utf-8")
    kept = EngineAnswers(blocker, lambda: "v1")
    kept.add(PATH_LINE)  # no error: the engine scans again in the next process, that is all
    assert kept.answer(PATH_LINE) == frozenset()  # still known to this process
    assert blocker.read_text(encoding="utf-8") == "a file where the folder would go"


@pytest.fixture
def kept_in(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "cache"
    detector.keep_engine_answers_in(folder)
    detector.clear_cache()
    yield folder
    detector.keep_engine_answers_in(None)
    detector.clear_cache()


def test_the_engines_answers_are_kept_findings_and_all(kept_in: Path) -> None:
    assert detector.scan(PATH_LINE) == frozenset()
    assert TOKEN[:40] in "".join(detector.scan(SECRET_LINE))
    reader = EngineAnswers(kept_in, detector.version)
    assert reader.answer(PATH_LINE) == frozenset()
    assert reader.answer(SECRET_LINE) == detector.scan(SECRET_LINE)
    assert TOKEN[:40].encode() not in (kept_in / FOUND_FILE).read_bytes()


def _run(script: str, folder: Path) -> str:
    done = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


SCAN = f"""
import sys
from pathlib import Path
from memhost.security import detector
detector.keep_engine_answers_in(Path(sys.argv[1]))
found = detector.scan({PATH_LINE!r}), detector.scan({SECRET_LINE!r})
maps = open("/proc/self/maps").read() if sys.platform.startswith("linux") else "?"
print(sorted(found[0]), sorted(found[1]), "libbetterleaks" in maps)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_a_later_process_needs_the_engine_only_for_what_it_has_not_seen(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    first = _run(SCAN, folder)
    assert first.split("] [")[0] == "[" and TOKEN[:40] in first and first.strip().endswith("True")
    # Both lines are answered from what the first process kept: the secret is found again, in
    # the text, and the engine is never loaded.
    again = _run(SCAN, folder)
    assert again == first.replace("True", "False")
    assert EngineAnswers(folder, lambda: "other").answer(PATH_LINE) is None
