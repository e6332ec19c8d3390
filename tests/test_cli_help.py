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


# A command's own run builds only its own subparser (memhost.cli.command_named): it must read
# every command line exactly as the whole parser does, and leave to the whole parser whatever
# it is not sure of.
@pytest.mark.parametrize("argv", [
    ["memory", "show"],
    ["--home", "/tmp/h", "memory", "add", "--target", "user", "likes tea"],
    ["--home=/tmp/h", "-v", "config", "set", "memory.provider", "sqlite"],
    ["--hom", "/tmp/h", "--user", "ada", "recall", "search", "tea"],
    ["--verbose", "--us=ada", "doctor"],
    ["providers", "list", "--json"],
    ["--home", "memory", "outbox", "list"],  # a home folder named like a command
])
def test_a_command_line_reads_the_same_with_only_its_own_subparser(argv: list[str]) -> None:
    from memhost.cli import build_parser, command_named

    command = command_named(argv)
    assert command is not None and command == build_parser().parse_args(argv).command
    whole, own = build_parser().parse_args(argv), build_parser(command).parse_args(argv)
    assert vars(whole) == vars(own)


@pytest.mark.parametrize("argv", [
    [], ["--help"], ["-h", "memory"], ["--version"], ["memroy", "show"], ["--home"],
    ["-vh", "memory"], ["--", "memory"], ["--verb", "memory"],
])
def test_a_command_line_it_is_not_sure_of_gets_the_whole_parser(argv: list[str]) -> None:
    from memhost.cli import command_named

    assert command_named(argv) is None


def test_a_mistyped_command_still_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["memroy", "show"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'memroy'" in err and "'memory'" in err and "'doctor'" in err
