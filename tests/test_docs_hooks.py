"""docs/hooks.md documents every hook and argument of the spec, and its example provider runs."""

from __future__ import annotations

import re
from pathlib import Path

import pluggy
import pytest

from memhost import hookspecs

DOC = Path(__file__).resolve().parent.parent / "docs" / "hooks.md"
SECTION_FIELDS = ("**When:**", "**Thread:**", "**May block:**", "**Returns:**")


def spec() -> dict[str, tuple[str, ...]]:
    """Every hook of the spec with its arguments, read through pluggy as registration does."""
    pm = pluggy.PluginManager("memhost")
    pm.add_hookspecs(hookspecs)
    return {caller.name: tuple(caller.spec.argnames)
            for caller in pm.hook.__dict__.values()
            if isinstance(caller, pluggy.HookCaller) and caller.spec is not None}


def hook_sections(text: str) -> dict[str, str]:
    """``### name`` heading -> its text, up to the next heading of level 2 or 3."""
    sections: dict[str, str] = {}
    for match in re.finditer(r"^### (\S+)[ \t]*\n(.*?)(?=^#{2,3} |\Z)", text, re.M | re.S):
        sections[match.group(1).strip("`")] = match.group(2)
    return sections


def doc_problems(text: str) -> list[str]:
    """What the doc is missing relative to the spec (empty when it is complete)."""
    problems = []
    sections = hook_sections(text)
    for hook, args in spec().items():
        section = sections.get(hook)
        if section is None:
            problems.append(f"no '### {hook}' section")
            continue
        for arg in args:
            if f"`{arg}`" not in section:
                problems.append(f"{hook}: argument `{arg}` is not documented")
        for field in SECTION_FIELDS:
            if field not in section:
                problems.append(f"{hook}: no {field} line")
        signature = f"`{hook}({', '.join(args)})"
        if signature not in section:
            problems.append(f"{hook}: signature {signature}...` missing or out of date")
    for name in sections:
        if name not in spec():
            problems.append(f"'### {name}' documents a hook the spec does not have")
    return problems


def example_code(text: str) -> str:
    section = text[text.index("## Example provider"):]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the Example provider section has no ```python block"
    return match.group(1)


def test_spec_is_what_this_test_reads() -> None:
    hooks = spec()
    assert len(hooks) == 15
    assert hooks["on_builtin_write"] == ("action", "target", "content", "previous_content",
                                         "session_id", "origin")


def test_every_hook_and_argument_is_documented() -> None:
    assert doc_problems(DOC.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("breakage", [
    # a hook section goes missing
    lambda t: t.replace("### on_subtask\n", "### on_subtasks\n"),
    # an argument is no longer mentioned in its hook's section
    lambda t: re.sub(r"- `previous_content`.*?\n  committed.*?\n", "", t, flags=re.S),
    # an argument is mentioned, but in another hook's section only
    lambda t: t.replace("- `child_session_id` (`str`)", "- child id (`str`)"),
])
def test_the_check_catches_a_gap(breakage) -> None:  # type: ignore[no-untyped-def]
    text = DOC.read_text(encoding="utf-8")
    broken = breakage(text)
    assert broken != text
    assert doc_problems(broken) != []


def test_the_check_catches_a_new_hook_in_the_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    @hookspecs.hookspec
    def on_forget(entry: str, session_id: str) -> None:
        """A hook added to the spec but not to the doc."""

    monkeypatch.setattr(hookspecs, "on_forget", on_forget, raising=False)
    problems = doc_problems(DOC.read_text(encoding="utf-8"))
    assert problems == ["no '### on_forget' section"]


def test_example_provider_runs(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = example_code(DOC.read_text(encoding="utf-8"))
    assert "@memhost.hookimpl" in code and 'register_provider(' in code and 'name="example"' in code
    exec(compile(code, f"{DOC}:example", "exec"), {"__name__": "docs_hooks_example"})  # noqa: S102
    out = capsys.readouterr().out
    assert "<memory-context>" in out and "cello" in out
    assert out.strip().endswith("drained")
    notes = (home / "example" / "notes.jsonl").read_text(encoding="utf-8")
    assert "I am learning to play the cello" in notes
    assert not (home / "outbox" / "example").exists() or not list(
        (home / "outbox" / "example").glob("*.jsonl"))


def test_host_guide_example_runs(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    guide = DOC.with_name("hosts.md").read_text(encoding="utf-8")
    section = guide[guide.index("## A complete host loop"):]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "docs/hosts.md: the host loop section has no ```python block"
    exec(compile(match.group(1), "docs/hosts.md:example", "exec"),  # noqa: S102
         {"__name__": "docs_hosts_example"})
    out = capsys.readouterr().out
    assert "assistant: Nice to meet you!" in out
    assert out.strip().splitlines()[-1].startswith("drained ")
    assert "The user's name is Ada" in (home / "memories" / "USER.md").read_text(encoding="utf-8")


def test_host_guide_names_every_public_manager_method() -> None:
    import inspect

    from memhost import MemoryManager

    guide = DOC.with_name("hosts.md").read_text(encoding="utf-8")
    public = [name for name, member in inspect.getmembers(MemoryManager)
              if not name.startswith("_") and callable(member)]
    missing = [name for name in public if f"{name}(" not in guide]
    assert missing == []
    assert "StreamScrubber" in guide
