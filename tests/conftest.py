"""Shared fixtures. Keep this file small: a fixture belongs here only when several test files
need it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests check behaviour, never speed: on a machine whose cores are shared (pytest-xdist
# runs the suite on all of them, and CI machines run other jobs) drawing an example or running one
# can take seconds, which must not fail a test. Tests that set their own settings keep them.
settings.register_profile("memhost", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("memhost")


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pytest's own ``tmp_path`` (a numbered folder named after the test, kept as pytest keeps
    it), named without the ``test_`` every test's name starts with. ``test_`` is one of the
    secret engine's rule keywords (a vendor's test-mode key starts with it), so every path under
    a pytest-named folder sent the lines a command prints to the engine, and each such command
    built its four hundred rules: a path a user's home sits on does not look like that."""
    name = re.sub(r"\W", "_", request.node.name).removeprefix("test_")[:30]
    return tmp_path_factory.mktemp(name or "case", numbered=True)


@pytest.fixture
def home(memhost_home: Path) -> Path:
    """A fresh, empty memhost home; ``MEMHOST_HOME`` points at it for the test's duration. The
    suite's short name for the ``memhost_home`` fixture of :mod:`memhost.testing`, which every
    provider author's tests get too."""
    return memhost_home


@pytest.fixture(autouse=True)
def _no_entrypoint_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Providers installed in the environment stay out of the suite; a test that exercises
    entry points turns them back on with ``monkeypatch.delenv``."""
    monkeypatch.setenv("MEMHOST_DISABLE_ENTRYPOINTS", "1")
    for name in ("MEMHOST_DISABLED_PROVIDERS", "MEMHOST_STRICT_PROVIDERS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _discovery_reads_afresh() -> None:
    """Each test discovers from scratch: some fake what is installed by patching
    ``importlib_metadata``, which the discovery caches' keys (file states) cannot see."""
    from memhost.discovery import freshness

    freshness.forget_all()


@pytest.fixture(autouse=True)
def _no_remembered_secrets() -> None:
    """Each test starts with no secret values remembered for masking: a value another test's
    home held must not make this test's text "secret"."""
    from memhost.security import masking

    masking.forget_all()


@pytest.fixture
def rules_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The risk scorer without its learned reading (:mod:`memhost.security.learned`), for tests
    of the rules and of mechanisms built on their evidence. The learned reading resembles, it
    does not read: whether it flags a given near-miss changes with each training run, and its
    share of benign notes flagged is measured on whole corpora (``python -m benchmarks --only
    injection``) and pinned by its own tests."""
    from memhost.builtin_providers import snapshot
    from memhost.security import learned, scorer

    def forget() -> None:
        scorer.forget()
        snapshot._SCORES.clear()
        snapshot._render.cache_clear()

    monkeypatch.setattr(learned, "model", lambda: None)
    forget()
    yield
    forget()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Long tests first: the costly process tests (``slow``) and the chains that must stay on
    one xdist worker (``xdist_group``) start while the many short tests fill the other workers
    around them, instead of one of them starting last and keeping the run waiting for it."""
    def weight(item: pytest.Item) -> int:
        if item.get_closest_marker("xdist_group") is not None:
            return 0
        return 1 if item.get_closest_marker("slow") is not None else 2

    items.sort(key=weight)  # stable: each file's own order is kept
