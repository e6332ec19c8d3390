"""Texts the secret engine found nothing in, kept for later processes (memhost.security.cleantexts)."""

from __future__ import annotations

import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memhost.security import cleantexts, detector
from memhost.security.cleantexts import DIGEST_BYTES, FILENAME, MAX_BYTES, CleanTexts

# A long token run holding one of the engine's keywords ("api"): it reaches the engine.
PATH_LINE = "  /home/someone/.memhost/api-cache/ada/memories/MEMORY.md\n"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2  # a GitHub token shape the engine reports
SECRET_LINE = f"Deploys use {TOKEN[:40]} from CI."


def test_a_text_kept_clean_is_known_to_a_new_reader_of_the_same_version(tmp_path: Path) -> None:
    path = tmp_path / "cache" / FILENAME
    first = CleanTexts(path, lambda: "v1")
    assert not first.known(PATH_LINE)
    first.add(PATH_LINE)
    first.add(PATH_LINE)  # kept once
    first.close()
    assert path.stat().st_size == DIGEST_BYTES
    assert PATH_LINE.encode() not in path.read_bytes()  # a digest, never the text
    assert CleanTexts(path, lambda: "v1").known(PATH_LINE)
    assert not CleanTexts(path, lambda: "v2").known(PATH_LINE)  # another detector version
    assert not CleanTexts(path, lambda: "v1").known(PATH_LINE + " ")


def test_the_file_is_private_and_its_folder_too(tmp_path: Path) -> None:
    path = tmp_path / "cache" / FILENAME
    CleanTexts(path, lambda: "v1").add(PATH_LINE)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_torn_last_digest_is_left_out_and_an_oversized_file_started_again(tmp_path: Path) -> None:
    path = tmp_path / FILENAME
    kept = CleanTexts(path, lambda: "v1")
    kept.add(PATH_LINE)
    kept.close()
    with open(path, "ab") as handle:
        handle.write(b"\x01\x02\x03")  # a process stopped in the middle of a write
    reader = CleanTexts(path, lambda: "v1")
    assert reader.known(PATH_LINE) and not reader.known("anything else at all")
    path.write_bytes(b"\0" * (MAX_BYTES + DIGEST_BYTES))
    fresh = CleanTexts(path, lambda: "v1")
    assert not fresh.known(PATH_LINE) and not path.exists()
    fresh.add(PATH_LINE)
    assert path.stat().st_size == DIGEST_BYTES


def test_a_home_that_does_not_exist_is_not_made(tmp_path: Path) -> None:
    kept = CleanTexts(tmp_path / "no-home-yet" / "cache" / FILENAME, lambda: "v1")
    kept.add(PATH_LINE)
    assert kept.known(PATH_LINE) and not (tmp_path / "no-home-yet").exists()


def test_a_folder_that_cannot_be_made_costs_nothing_but_the_saving(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the folder would go", encoding="utf-8")
    kept = CleanTexts(blocker / FILENAME, lambda: "v1")
    kept.add(PATH_LINE)  # no error: the engine scans again in the next process, that is all
    assert kept.known(PATH_LINE)  # still known to this process
    assert blocker.read_text(encoding="utf-8") == "a file where the folder would go"


@pytest.fixture
def kept_in(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "cache"
    detector.keep_clean_texts_in(folder)
    detector.clear_cache()
    yield folder
    detector.keep_clean_texts_in(None)
    detector.clear_cache()


def test_only_what_the_engine_found_nothing_in_is_kept(kept_in: Path) -> None:
    assert detector.scan(PATH_LINE) == frozenset()
    assert TOKEN[:40] in "".join(detector.scan(SECRET_LINE))
    reader = CleanTexts(kept_in / FILENAME, detector.version)
    assert reader.known(PATH_LINE)
    assert not reader.known(SECRET_LINE)


def _run(script: str, folder: Path) -> str:
    done = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


SCAN = f"""
import sys
from pathlib import Path
from memhost.security import detector
detector.keep_clean_texts_in(Path(sys.argv[1]))
found = detector.scan({PATH_LINE!r}), detector.scan({SECRET_LINE!r})
maps = open("/proc/self/maps").read() if sys.platform.startswith("linux") else "?"
print(sorted(found[0]), sorted(found[1]), "libbetterleaks" in maps)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_a_later_process_needs_the_engine_only_for_what_it_has_not_seen_clean(
        tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    first = _run(SCAN, folder)
    assert first.split("] [")[0] == "[" and TOKEN[:40] in first and first.strip().endswith("True")
    # The path line is taken as clean without the engine; the secret is found again, so the
    # engine is loaded for it alone.
    assert _run(SCAN, folder) == first
    only_path = SCAN.replace(f", detector.scan({SECRET_LINE!r})", ", frozenset()")
    assert _run(only_path, folder).split() == ["[]", "[]", "False"]  # the engine never loaded
    assert cleantexts.CleanTexts(folder / FILENAME, lambda: "other").known(PATH_LINE) is False
