"""The suite's own scheduling: tests marked ``xdist_group`` share one worker under
``--dist loadgroup`` (what ``make test`` runs), so a costly fixture they share (a build, a
browser) is made once. pytest-xdist does the grouping by renaming each test's node id, which
some pytest releases do not read; then the groups are spread silently. This notices."""

from __future__ import annotations

import pytest


@pytest.mark.xdist_group("grouping-check")
def test_a_grouped_test_carries_its_group_when_the_suite_is_spread_by_group(
        request: pytest.FixtureRequest) -> None:
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run by pytest-xdist with --dist loadgroup (make test does)")
    assert request.node.nodeid.endswith("@grouping-check"), (
        f"{request.node.nodeid}: this pytest does not keep pytest-xdist's group names, so "
        "grouped tests run on several workers; see the pytest pin in pyproject.toml")
