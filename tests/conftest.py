"""Shared fixtures. Keep this file small: a fixture belongs here only when several test files
need it."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty memhost home; ``MEMHOST_HOME`` points at it for the test's duration."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("MEMHOST_HOME", str(path))
    return path
