"""Files memhost keeps: private folders whatever the umask, a home or provider folder other users
can write is refused, and nothing is written through a symlink someone planted."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memhost.builtin_providers.store import MemoryStore
from memhost.config import load_config
from memhost.errors import ConfigError
from memhost.files import atomic_write_text, ensure_private_dir, locked
from cli_runner import run_memhost



def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_every_folder_memhost_creates_is_0700_under_umask_000(tmp_path: Path) -> None:
    # A whole session in a fresh process under umask 000, with a home whose parents are missing.
    home = tmp_path / "missing" / "parents" / "home"
    code = textwrap.dedent(f"""
        import os
        os.umask(0)
        from memhost import MemoryManager
        m = MemoryManager.from_home({str(home)!r})
        m.start_session("s")
        m.call_tool("memory", {{"action": "add", "target": "memory", "content": "likes tea"}})
        m.finish_turn("hello", "hi")
        m.flush(5)
        m.shutdown(timeout=5)
        from memhost.schema.envstore import EnvStore
        EnvStore(m.home).set("SOME_KEY", "value-1234")
    """)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    folders = [p for p in (tmp_path / "missing").rglob("*") if p.is_dir()]
    folders.append(tmp_path / "missing")
    assert {home, home / "memories"} <= set(folders)
    assert {str(p): oct(mode(p)) for p in folders if mode(p) != 0o700} == {}
    files = [p for p in (tmp_path / "missing").rglob("*") if p.is_file()]
    assert home / ".env" in files and home / "memories" / "MEMORY.md" in files
    assert {str(p): oct(mode(p)) for p in files if mode(p) != 0o600} == {}


def test_ensure_private_dir_leaves_existing_parents_alone(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    old = os.umask(0)
    try:
        ensure_private_dir(tmp_path / "a" / "b")
    finally:
        os.umask(old)
    assert mode(tmp_path) == 0o755
    assert mode(tmp_path / "a") == mode(tmp_path / "a" / "b") == 0o700


@pytest.mark.parametrize("bits", [0o777, 0o775, 0o757])
def test_a_home_other_users_can_write_is_refused(tmp_path: Path, bits: int) -> None:
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(bits)
    with pytest.raises(ConfigError, match=r"chmod 700") as err:
        load_config(home)
    assert str(home) in str(err.value) and "other users" in str(err.value)
    # every command says so, and runs nothing
    run = run_memhost(["doctor"], env={**os.environ, "MEMHOST_HOME": str(home)})
    assert run.returncode != 0 and "chmod 700" in run.stderr + run.stdout
    home.chmod(0o700)
    load_config(home)  # fixed as the message says: accepted


def test_a_provider_folder_other_users_can_write_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    plugins = home / "plugins" / "evil"
    plugins.mkdir(parents=True)
    (plugins / "plugin.toml").write_text('name = "evil"\nversion = "1"\ndescription = "x"\n'
                                         'entry = "provider:Evil"\n', encoding="utf-8")
    marker = tmp_path / "ran"
    (plugins / "provider.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n"
                                         "class Evil:\n    pass\n", encoding="utf-8")
    (home / "plugins").chmod(0o777)
    (home / "config.toml").write_text('[memory]\nprovider = "evil"\n', encoding="utf-8")
    home.chmod(0o700)
    run = run_memhost(["providers", "list", "--check"],
                      env={**os.environ, "MEMHOST_HOME": str(home)})
    assert run.returncode != 0
    assert "chmod 700" in run.stderr and str(home / "plugins") in run.stderr
    assert not marker.exists()


def planted(link: Path, target: Path) -> Path:
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)
    return link


def test_a_planted_sidecar_link_is_not_written_through(tmp_path: Path) -> None:
    home = tmp_path / "home"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    memories = home / "memories"
    planted(memories / "MEMORY.md.meta.json", victim)
    store = MemoryStore(home)
    assert store.add("memory", "User likes tea").ok
    assert victim.read_text(encoding="utf-8") == "precious\n"
    sidecar = memories / "MEMORY.md.meta.json"
    if sidecar.exists():  # replaced by a file of memhost's own, not followed
        assert not sidecar.is_symlink() and mode(sidecar) == 0o600
        json.loads(sidecar.read_text(encoding="utf-8"))


def test_the_drift_backup_name_is_not_written_through(tmp_path: Path) -> None:
    home = tmp_path / "home"
    memories = home / "memories"
    memories.mkdir(parents=True)
    (memories / "MEMORY.md").write_text("x" * 5000, encoding="utf-8")  # drift: over the budget
    dangling = tmp_path / "would-be-created.txt"
    planted(memories / "MEMORY.md.bak.1000", dangling)
    store = MemoryStore(home, clock=lambda: 1000.0)
    outcome = store.replace("memory", "xxxx", "User likes tea")  # refused: drift, with a backup
    assert not outcome.ok and "MEMORY.md.bak.1000" in outcome.response["error"]
    assert not dangling.exists()  # the link was replaced, its target never created
    backup = memories / "MEMORY.md.bak.1000"
    assert not backup.is_symlink() and backup.read_text(encoding="utf-8") == "x" * 5000
    assert mode(backup) == 0o600


def test_atomic_write_replaces_a_link_unless_asked_to_follow(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "MEMORY.md"
    target.parent.mkdir()
    target.write_text("old", encoding="utf-8")
    link = planted(tmp_path / "home" / "sidecar", target)
    atomic_write_text(link, "new")
    assert target.read_text(encoding="utf-8") == "old" and not link.is_symlink()
    linked = planted(tmp_path / "home" / "MEMORY.md", target)
    atomic_write_text(linked, "new", follow_symlink=True)  # a memory file linked on purpose
    assert linked.is_symlink() and target.read_text(encoding="utf-8") == "new"


def test_a_planted_lock_link_does_not_truncate_its_target(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    path = tmp_path / "state" / "file.json"
    planted(Path(str(path) + ".lock"), victim)
    with pytest.raises(OSError), locked(path, timeout=1):  # refused (a Timeout is an OSError)
        pass
    assert victim.read_text(encoding="utf-8") == "precious\n"


def test_the_archive_refuses_a_planted_link(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = MemoryStore(home)
    assert store.add("memory", "first fact").ok
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    archive = store.archive.path
    if archive.exists():
        archive.unlink()
    planted(archive, victim)
    store.replace("memory", "first fact", "second fact")  # archives the old entry
    assert victim.read_text(encoding="utf-8") == "precious\n"
