"""Every command group answers alike: help asked for goes to stdout with exit code 0; a group run
without its action (or ``memhost`` without a command) prints its usage to stderr with exit code
2, as argparse does for a missing argument."""

from __future__ import annotations

from pathlib import Path

import pytest

from memhost.cli import main

GROUPS = ["memory", "config", "providers", "settings", "outbox", "recall"]


@pytest.mark.parametrize("group", ["", *GROUPS])
def test_help_asked_for_goes_to_stdout_with_exit_0(group: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*filter(None, [group]), "--help"])
    out, err = capsys.readouterr()
    assert exited.value.code == 0
    assert out.startswith("usage: memhost") and err == ""


@pytest.mark.parametrize("group", ["", *GROUPS])
def test_a_missing_action_is_usage_on_stderr_with_exit_2(group: str, memhost_home: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    try:
        code = main(["--home", str(memhost_home), *filter(None, [group])])
    except SystemExit as exited:  # argparse's own refusal (a required action)
        code = exited.code
    out, err = capsys.readouterr()
    assert code == 2
    assert out == "" and err.startswith("usage: memhost")
