"""A secret in every kind of field, and a provider that quotes them in its errors: no output
memhost produces holds one.

The home has a folder provider ``leaky`` whose settings put a secret in a secret field (under a
key name on no list: ``license_key``), a GitHub token in a text field and an API token inside a
JSON field, and whose hooks log its config and crash with all three in the message; and the
bundled ``postgres`` provider with a malformed DSN (``postgres:PASSWORD@127.0.0.1/test``, which
the driver echoes). Then every CLI command runs (text and ``--json``, with
``MEMHOST_TRACE_HOOKS``), a session runs in process with every logger at DEBUG, the settings API
and page are read (the page in Chromium), an MCP client calls every tool, and the home's files
(outbox, pending, archive, sidecars) are read. None of it may hold a secret value.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import secrets
import string
import subprocess
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from memhost.security import masking
from memhost.security.redact import MASK

from cli_runner import run_memhost

_B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


def github_token() -> str:
    body = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(30))
    n, check = zlib.crc32(body.encode()), ""
    while n:
        n, r = divmod(n, 62)
        check = _B62[r] + check
    return "ghp_" + body + check.rjust(6, "0")


LICENSE = "Lk" + secrets.token_hex(12)           # a secret field whose key is on no list
TEXT_TOKEN = github_token()                      # a token typed into a text field
JSON_TOKEN = "Jt" + secrets.token_urlsafe(18)    # a token inside a JSON field
DSN_PASSWORD = "Pw" + secrets.token_hex(8)       # in a DSN the driver cannot parse
SECRETS = (LICENSE, TEXT_TOKEN, JSON_TOKEN, DSN_PASSWORD)

LEAKY_SCHEMA = """\
from memhost.schema import ConfigField, FieldOption, ProviderConfigSchema

CONFIG_SCHEMA = ProviderConfigSchema(
    name="leaky",
    label="Leaky",
    fields=[
        ConfigField("license_key", kind="secret", env_key="LEAKY_LICENSE", required=True),
        ConfigField("region", description="Where the service runs."),
        ConfigField("tier", kind="select", default="free",
                    options=[FieldOption("free", "Free"), FieldOption("pro", "Pro")]),
        ConfigField("extra", kind="json"),
        ConfigField("port", kind="number", default=443, min=1, max=65535, step=1),
    ],
)
"""

LEAKY_PROVIDER = """\
import json
import logging

from memhost import hookimpl

log = logging.getLogger("leaky")            # a provider's own logger, outside memhost.*
mlog = logging.getLogger("memhost.plugins.leaky")


class Leaky:
    def __init__(self):
        self.config = {}

    def _why(self):
        return (f"login refused for license {self.config.get('license_key')} in "
                f"{self.config.get('region')} with {json.dumps(self.config.get('extra'))}")

    @hookimpl
    def check_available(self, config):
        self.config = config
        log.debug("checking with %s", config)
        return None

    @hookimpl
    def initialize(self, session_id, home, config):
        self.config = config
        log.debug("config %r", config)
        mlog.debug("config %r", config)
        print("leaky on stdout:", config)

    @hookimpl
    def tool_schemas(self):
        return [{"name": "leaky_ping", "description": "Ping the service.",
                 "parameters": {"type": "object", "properties": {}}}]

    @hookimpl
    def handle_tool_call(self, tool_name, arguments):
        raise RuntimeError(self._why())

    @hookimpl
    def prefetch(self, query, session_id):
        raise ConnectionError(self._why())

    @hookimpl
    def sync_turn(self, user_content, assistant_content, session_id):
        raise RuntimeError(self._why())

    @hookimpl
    def on_builtin_write(self, action, target, content):
        log.exception("mirror failed: %s", self._why(), exc_info=RuntimeError(self._why()))
        raise ValueError(self._why())
"""


def write_home(root: Path, provider: str) -> Path:
    home = root / f"home-{provider}"
    folder = home / "plugins" / "leaky"
    folder.mkdir(parents=True)
    home.chmod(0o700)
    (home / "plugins").chmod(0o700)
    (folder / "plugin.toml").write_text(
        'name = "leaky"\nversion = "0.1.0"\ndescription = "leaks"\nentry = "provider:Leaky"\n',
        encoding="utf-8")
    (folder / "provider.py").write_text(LEAKY_PROVIDER, encoding="utf-8")
    (folder / "config_schema.py").write_text(LEAKY_SCHEMA, encoding="utf-8")
    (home / "config.toml").write_text(
        f'[memory]\nprovider = "{provider}"\n\n'
        f'[providers.leaky]\nregion = "{TEXT_TOKEN}"\ntier = "pro"\nport = 8443\n'
        f'extra = {{ api_token = "{JSON_TOKEN}", note = "plain" }}\n', encoding="utf-8")
    (home / ".env").write_text(
        f'LEAKY_LICENSE="{LICENSE}"\n'
        f'MEMHOST_POSTGRES_DSN="postgres:{DSN_PASSWORD}@127.0.0.1/test"\n', encoding="utf-8")
    (home / ".env").chmod(0o600)
    return home


def leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("MEMHOST_DISABLED_PROVIDERS", "MEMHOST_STRICT_PROVIDERS")}
    return {**env, "MEMHOST_HOME": str(home), "MEMHOST_DISABLE_ENTRYPOINTS": "1",
            "MEMHOST_TRACE_HOOKS": "1", "PYTHONUNBUFFERED": "1"}


# -- every CLI command --------------------------------------------------------------------------

# Values for positional arguments, by name; anything else gets "x".
ARGUMENTS = {"content": "User likes tea", "old_text": "tea", "match": "tea",
             "date": "2030-01-01", "key": "providers.leaky.region", "value": "eu-west",
             "name": "leaky", "target": "leaky", "archive_id": "x", "pending_id": "x"}
# Servers and the interactive chat run elsewhere in this file, or not at all here.
LONG_RUNNING = {("settings", "serve"), ("chat",), ("mcp",)}


def commands() -> Iterator[tuple[list[str], bool]]:
    """Every leaf command (``[words..., positionals...]``) and whether it takes --json."""
    from memhost.cli import build_parser

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> Iterator[tuple[list[str], bool]]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if subs:
            for name, sub in subs[0].choices.items():
                yield from walk(sub, [*words, name])
            return
        positionals = [ARGUMENTS.get(a.dest, "x") for a in parser._actions
                       if not a.option_strings and a.dest != "help"]
        flags = {o for a in parser._actions for o in a.option_strings}
        yield [*words, *positionals], "--json" in flags

    yield from walk(build_parser(), [])


#: The sweep in parts of similar cost, each on a home of its own, so they run side by side.
PARTS = {"memory": ("memory",), "recall": ("recall",), "the rest": ()}


def commands_groups() -> set[str]:
    return {words[0] for words, _ in commands()}


def test_the_sweep_covers_every_command_group() -> None:
    """Every group of commands is in one part of the sweep: "the rest" takes what the named
    parts do not, so a new group is swept without anyone adding it here."""
    named = [group for groups in PARTS.values() for group in groups]
    assert len(named) == len(set(named)) and set(named) <= commands_groups()
    assert commands_groups() - set(named), "the rest is empty"


def run_cli(home: Path, args: list[str]) -> str:
    try:
        done = run_memhost(["-v", *args], env=env_for(home), timeout=180)
        return f"$ memhost {' '.join(args)} -> {done.returncode}\n{done.stdout}\n{done.stderr}"
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = (exc.stderr or b"").decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        return f"$ memhost {' '.join(args)} -> timeout\n{out}\n{err}"


@pytest.mark.slow
@pytest.mark.parametrize("part", list(PARTS))
@pytest.mark.parametrize("provider", ["leaky", "postgres"])
def test_no_cli_command_prints_a_secret(tmp_path: Path, provider: str, part: str) -> None:
    home = write_home(tmp_path, provider)
    named = {group for groups in PARTS.values() for group in groups}
    runs = []
    for words, takes_json in commands():
        if tuple(words[:2]) in LONG_RUNNING or tuple(words[:1]) in LONG_RUNNING:
            continue
        if (words[0] not in PARTS[part]) if PARTS[part] else (words[0] in named):
            continue
        runs.append(words)
        if takes_json:
            runs.append([*words, "--json"])
    # Commands that change the home run last, in order; the others side by side.
    changing = {"set", "unset", "use", "new", "add", "replace", "remove", "restore", "approve",
                "reject", "pin", "unpin", "confirm", "review-after", "curate", "vacuum"}
    reading = [r for r in runs if r[1:2] and r[1] not in changing or len(r) == 1]
    writing = [r for r in runs if r not in reading]
    with ThreadPoolExecutor(4) as pool:
        outputs = list(pool.map(lambda r: run_cli(home, r), reading))
    outputs += [run_cli(home, r) for r in writing]
    # The outputs are real: every command that failed said why, and the memory commands
    # reached the provider (its hooks traced): the leaky one's failure shown masked, the
    # postgres one refused with advice whose example address is not mistaken for a secret.
    joined = "\n".join(outputs)
    silent = [o.splitlines()[0] for o in outputs if not o.split("\n", 1)[1].strip()]
    assert [header for header in silent if not header.endswith("-> 0")] == []
    assert len(silent) < len(outputs)
    if part == "memory":
        assert "memhost trace:" in joined
        if provider == "leaky":
            assert MASK in joined
        else:
            assert "postgresql://user:password@host:5432/dbname" in joined
    assert [o.splitlines()[0] for o in outputs if leaks(o)] == []
    assert leaks(joined) == []
    assert leaks(files_text(home)) == []


def test_a_malformed_dsn_is_not_echoed(tmp_path: Path) -> None:
    home = write_home(tmp_path, "postgres")
    pytest.importorskip("psycopg", reason="the postgres provider needs psycopg")
    out = run_cli(home, ["doctor", "--json"]) + run_cli(home, ["providers", "check", "postgres"])
    assert "cannot be read" in out and "neither a postgresql:// URL" in out
    assert leaks(out) == []


# -- a session in process: logs at DEBUG, tracebacks, traces, status() --------------------------


@pytest.fixture
def debug_log() -> Iterator[io.StringIO]:
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield buffer
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


def test_no_log_trace_status_or_answer_holds_a_secret(tmp_path: Path, debug_log: io.StringIO,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capfd: pytest.CaptureFixture[str]) -> None:
    from memhost import MemoryManager

    home = write_home(tmp_path, "leaky")
    masking.forget_all()  # nothing carried over from another test: this process learns it here
    monkeypatch.setenv("MEMHOST_TRACE_HOOKS", "1")
    monkeypatch.setenv("MEMHOST_DISABLE_ENTRYPOINTS", "1")
    manager = MemoryManager.from_home(home)
    answers = []
    try:
        manager.start_session("s1")
        answers.append(manager.system_prompt())
        turn = manager.begin_turn("what is my license?")
        answers.append(turn.context or "")
        answers.append(manager.call_tool("leaky_ping", {}))
        answers.append(manager.call_tool("memory", {"action": "add", "target": "memory",
                                                    "content": "User likes tea"}))
        answers.append(manager.call_tool("memory", {"action": "add", "target": "memory",
                                                    "content": f"license is {LICENSE}"}))
        manager.finish_turn("what is my license?", "I cannot say")
        manager.flush(10)
        status = json.dumps(manager.status())
    finally:
        report = manager.shutdown(timeout=10)
    captured = capfd.readouterr()
    log_text = debug_log.getvalue()
    # Real outputs: the provider was called and crashed, the crash was logged with its traceback.
    assert "Traceback" in log_text and "RuntimeError" in log_text and MASK in log_text
    assert "memhost trace:" in captured.err
    assert "leaky" in status and MASK in status
    # (A provider that prints its config to the host's stdout is not masked here: in a host's
    # process the streams are the host's. The CLI, whose streams memhost owns, masks them.)
    for name, text in [("log", log_text), ("stderr", captured.err),
                       ("status", status), ("answers", json.dumps(answers)),
                       ("report", json.dumps(report.as_dict(), default=str)),
                       ("files", files_text(home))]:
        assert leaks(text) == [], (name, [line for line in text.splitlines() if leaks(line)][:5])


def files_text(home: Path) -> str:
    """Everything memhost wrote in the home (outbox, pending, archive, sidecars), but the files
    the user wrote the values into (.env, config.toml) and the provider's own source."""
    parts = []
    for path in sorted(home.rglob("*")):
        if (path.is_file() and path.name not in (".env", "config.toml")
                and "plugins" not in path.parts):
            parts.append(f"--- {path}\n" + path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


# -- the settings API and page ------------------------------------------------------------------


@pytest.mark.browser
def test_the_settings_api_and_page_hold_no_secret(tmp_path: Path) -> None:
    from test_settings_api import start_server

    home = write_home(tmp_path, "leaky")
    s = start_server(home, tmp_path / "logs")
    try:
        bodies = []
        for path in ("/api/providers", "/api/providers/leaky", "/api/providers/postgres",
                     "/api/status", "/api/memory", "/api/config"):
            status, _, body = s.request("GET", path)
            bodies.append(f"{path} {status} {body.decode('utf-8', 'replace')}")
        api = "\n".join(bodies)
        assert MASK in api and "leaky" in api
        assert leaks(api) == []
        page = read_page(s.url)
    finally:
        s.stop()
    assert leaks(page) == []
    assert leaks(s.output()) == []


def read_page(url: str) -> str:
    """The settings page's HTML and form values once it showed the leaky provider's form."""
    from services import chromium_problem, launch_chromium, require_service

    require_service("Chromium with Playwright", chromium_problem())
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_page()
            page.set_default_timeout(20_000)
            page.goto(url)
            page.wait_for_selector("body[data-ready='true']")
            page.wait_for_selector("#provider-form[data-provider='leaky'] [data-field='region']")
            values = page.eval_on_selector_all("input, textarea, select",
                                               "els => els.map(e => e.value)")
            assert MASK in json.dumps(values)  # the text field's token is shown masked
            return page.content() + "\n" + json.dumps(values)
        finally:
            browser.close()


# -- MCP -----------------------------------------------------------------------------------------


def test_mcp_answers_and_log_hold_no_secret(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp SDK is not installed")
    import anyio

    from test_mcp import Run, stdio_session

    home = write_home(tmp_path, "leaky")
    run = Run(tmp_path)
    seen: list[str] = []

    async def drive() -> None:
        async with stdio_session(home, tmp_path, run) as session:
            await session.initialize()
            tools = await session.list_tools()
            seen.append(json.dumps([t.model_dump() for t in tools.tools], default=str))
            for tool in tools.tools:
                arguments: dict[str, Any] = {}
                if tool.name == "memory":
                    arguments = {"action": "add", "target": "memory",
                                 "content": f"the license is {LICENSE}"}
                elif "query" in json.dumps(tool.model_dump(), default=str):
                    arguments = {"query": "license"}
                try:
                    result = await session.call_tool(tool.name, arguments)
                    seen.append(json.dumps(result.model_dump(), default=str))
                except Exception as exc:  # an error answer is an answer too
                    seen.append(f"{tool.name}: {exc!r}")
            resources = await session.list_resources()
            for resource in resources.resources:
                read = await session.read_resource(resource.uri)
                seen.append(json.dumps(read.model_dump(), default=str))

    anyio.run(drive)
    answers = "\n".join(seen)
    assert "leaky_ping" in answers and MASK in answers
    assert leaks(answers) == []
    assert leaks(run.stderr) == []


# -- the builtin memory ----------------------------------------------------------------------------

PGP_BODY = [secrets.token_urlsafe(48).replace("-", "+").replace("_", "/") for _ in range(4)]
PGP_KEY = ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + "\n".join(PGP_BODY)
           + "\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----")


def test_a_private_key_never_reaches_the_system_prompt(tmp_path: Path) -> None:
    from memhost import MemoryManager

    home = tmp_path / "home"
    manager = MemoryManager.from_home(home)
    try:
        manager.start_session("s1")
        answer = json.loads(manager.call_tool("memory", {
            "action": "add", "target": "memory", "content": f"my signing key:\n{PGP_KEY}"}))
        assert answer["success"] is False and "secret" in answer["error"]
        assert "password manager" in answer["error"]  # says what to do instead
    finally:
        manager.shutdown(timeout=5)
    # pasted into the file by hand: withheld from the next session's prompt
    memory = home / "memories" / "MEMORY.md"
    memory.parent.mkdir(parents=True, exist_ok=True)
    memory.write_text(f"User likes tea\n§\nsigning key:\n{PGP_KEY}", encoding="utf-8")
    manager = MemoryManager.from_home(home)
    try:
        manager.start_session("s2")
        prompt = manager.system_prompt()
    finally:
        manager.shutdown(timeout=5)
    assert "User likes tea" in prompt and "[BLOCKED" in prompt
    assert not [line for line in PGP_BODY if line in prompt]
