"""``memhost chat``: a reference host in the terminal, for any OpenAI-compatible model.

It is the whole host contract in one small file: a :class:`~memhost.MemoryManager` from the
home, the system prompt with the frozen memory snapshot, the memory tools in a tool loop, recall
fenced into the user's message, streamed output through a :class:`~memhost.StreamScrubber`, the
background review on the nudge, approval prompts inline, and a clean shutdown. The conversation
is kept in ``<home>/chats/<session>.jsonl`` (clean user text; the recall sent with a turn is not
stored), which ``--session`` resumes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import sys
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from memhost.cli import _common
from memhost.cli.progress import loading_what, starting_what, step

if TYPE_CHECKING:  # pragma: no cover
    from memhost.manager import MemoryManager
    from memhost.review.llm import AssistantMessage, ChatModel

BASE_PROMPT = ("You are a helpful assistant in a terminal chat. Answer clearly and briefly; use "
               "the tools you are given when they help.")
MAX_TOOL_ROUNDS = 8
SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
HELP = """\
/memory        show what is in memory now (MEMORY.md and USER.md)
/pending       list memory writes waiting for approval
/approve ID    apply a waiting write ('all' for every one)
/reject ID     discard a waiting write ('all' for every one)
/new           start a new conversation (memory changes show up in it)
/quit          end the session (Ctrl-D works too)"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "chat", help="chat in the terminal with an OpenAI-compatible model, with memory",
        description="A reference host: chat with any OpenAI-compatible /v1/chat/completions "
                    "server (llama.cpp, vLLM, Ollama, hosted APIs) with the builtin memory, the "
                    "configured provider, recall, the background review and write approval. The "
                    "server and model default to [review] base_url and model in config.toml. "
                    "Type /help in the chat for its commands.")
    parser.add_argument("--base-url", help="the server, e.g. http://127.0.0.1:8080/v1 "
                        "(default: [review] base_url)")
    parser.add_argument("--model", help="the model name (default: [review] model)")
    parser.add_argument("--api-key-env", metavar="NAME", help="the environment variable (or "
                        "<home>/.env key) holding the API key (default: [review] api_key_env)")
    parser.add_argument("--session", metavar="ID", help="session id; an existing session's "
                        "conversation is resumed (default: a new id)")
    parser.add_argument("--no-stream", action="store_true", help="print each answer whole "
                        "instead of streaming it")
    parser.add_argument("--untrusted", action="store_true", help="what you type carries content "
                        "nobody vouches for (a pasted web page, file, email or another agent's "
                        "output): every memory write waits for your approval (/pending)")
    parser.set_defaults(func=cmd_chat)


def cmd_chat(args: argparse.Namespace) -> int:
    from memhost.errors import MemhostError
    from memhost.manager import MemoryManager
    from memhost.review.llm import OpenAIChatModel

    home = _common.home(args)
    session = args.session or time.strftime("chat-%Y%m%d-%H%M%S-") + secrets.token_hex(2)
    if not SESSION_ID.match(session):
        raise MemhostError(f"--session {session!r} is not a valid id; use letters, digits, '.', "
                           "'_' and '-' (at most 64)")
    config = _common.config(home, writes=True)
    model = OpenAIChatModel.from_settings(config.review, home, base_url=args.base_url,
                                          model=args.model, api_key_env=args.api_key_env)
    with step("memhost chat", loading_what(home)):
        manager = MemoryManager.from_home(home)
    host = ChatHost(manager, model, session, stream=not args.no_stream, untrusted=args.untrusted)
    try:
        return host.run()
    finally:
        model.close()


class ChatHost:
    """One terminal conversation. ``stdin``/``stdout`` may be pipes (no TTY needed)."""

    def __init__(self, manager: MemoryManager, model: ChatModel, session_id: str, *,
                 stream: bool = True, stdin: IO[str] | None = None,
                 stdout: IO[str] | None = None, untrusted: bool = False) -> None:
        from memhost.fencing import StreamScrubber

        self.manager = manager
        self.untrusted = untrusted
        self.model = model
        self.session_id = session_id
        self.stream = stream and hasattr(model, "stream")
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.interactive = self.stdin.isatty()
        self.scrubber = StreamScrubber()
        self.messages: list[dict[str, Any]] = []  # clean, as persisted
        self.api_messages: list[dict[str, Any]] = []  # as sent (user turns carry their recall)
        self._print_lock = threading.Lock()
        self.folder = manager.home / "chats"

    # -- output ----------------------------------------------------------------------------------

    def say(self, text: str = "", *, end: str = "\n") -> None:
        with self._print_lock:
            self.stdout.write(text + end)
            self.stdout.flush()

    def _notice(self, text: str) -> None:
        self.say(f"  [memory] {text}")

    # -- setup -----------------------------------------------------------------------------------

    def _setup(self) -> None:
        from memhost.review.background import Reviewer, deny_on_review_thread

        manager = self.manager
        manager.set_confirm_callback(deny_on_review_thread(self._confirm))
        if manager.reviewer is None and manager.config.review.enabled:
            # No model of its own in [review]: the review uses the chat's model.
            manager.reviewer = Reviewer.for_manager(manager, model=self.model)
        if manager.reviewer is not None:
            manager.reviewer.on_summary = self._notice
        history = self._load(self.session_id)
        self.messages = list(history)
        self.api_messages = list(history)
        with step("memhost chat", starting_what(manager)):
            manager.start_session(self.session_id, history=history)

    def _system(self) -> dict[str, Any]:
        memory = self.manager.system_prompt()
        return {"role": "system", "content": BASE_PROMPT + ("\n\n" + memory if memory else "")}

    def _banner(self) -> None:
        status = self.manager.status()
        model = getattr(self.model, "model", type(self.model).__name__)
        where = getattr(self.model, "url", "")
        self.say(f"memhost chat: {model}{' at ' + where if where else ''}")
        resumed = sum(1 for m in self.messages if m.get("role") == "user")
        self.say(f"session {self.session_id}" + (f" (resumed, {resumed} turns)" if resumed else ""))
        provider = status["external_provider"] or "builtin only"
        review = "on" if self.manager.reviewer is not None else "off"
        nudge = self.manager.config.memory.nudge_interval
        approval = "on" if self.manager.config.memory.write_approval else "off"
        self.say(f"memory: {provider}; review {review}"
                 + (f" (every {nudge} turns)" if review == "on" and nudge else "")
                 + f"; write approval {approval}")
        for problem in status["problems"]:
            self.say(f"  ! {problem['provider']}: {problem['problem']}")
        if status["pending_writes"]:
            self.say(f"  {status['pending_writes']} memory write(s) waiting for approval: /pending")
        self.say("Type /help for commands, /quit to leave.")

    # -- the loop --------------------------------------------------------------------------------

    def run(self) -> int:
        self._setup()
        self._banner()
        try:
            while True:
                line = self._read("you> ")
                if line is None:
                    break
                text = line.strip()
                if not text:
                    continue
                if text.startswith("/"):
                    if not self._command(text):
                        break
                    continue
                self.turn(text)
        except KeyboardInterrupt:
            self.say()
        self._finish()
        return 0

    def _read(self, prompt: str) -> str | None:
        if self.interactive and self.stdin is sys.stdin:
            try:
                return input(prompt)
            except EOFError:
                return None
        line = self.stdin.readline()
        return None if line == "" else line.rstrip("\r\n")

    def _command(self, text: str) -> bool:
        name, _, rest = text.partition(" ")
        rest = rest.strip()
        if name in ("/quit", "/exit"):
            return False
        if name == "/help":
            self.say(HELP)
        elif name == "/memory":
            self._show_memory()
        elif name == "/pending":
            self._show_pending()
        elif name in ("/approve", "/reject"):
            self._decide(name[1:], rest)
        elif name == "/new":
            self._new_session()
        else:
            self.say(f"unknown command {name}; /help lists them")
        return True

    def turn(self, text: str) -> None:
        """One user turn: recall, the model with its tool loop, then the manager's epilogue."""
        from memhost.fencing import scrub_text
        from memhost.review.llm import ModelError

        manager = self.manager
        turn = manager.begin_turn(text, untrusted=self.untrusted)
        sent_user = text + ("\n\n" + turn.context if turn.context else "")
        new = [{"role": "user", "content": text}]
        sent = [{"role": "user", "content": sent_user}]
        tools = manager.tool_schemas()
        final = ""
        try:
            for _ in range(MAX_TOOL_ROUNDS):
                reply = self._ask([self._system(), *self.api_messages, *sent], tools)
                message = reply.as_message()
                if message.get("content"):
                    message["content"] = scrub_text(message["content"])
                new.append(message)
                sent.append(message)
                if not reply.tool_calls:
                    final = message.get("content") or ""
                    break
                for call in reply.tool_calls:
                    result = manager.call_tool(call.name, call.arguments)
                    self._report_tool(call.name, result)
                    answer = {"role": "tool", "tool_call_id": call.id, "content": result}
                    new.append(answer)
                    sent.append(answer)
            else:
                self.say("  (stopped: the model kept calling tools; ask again to continue)")
        except ModelError as exc:
            self.say(f"\n  ! {exc}")
            manager.finish_turn(text, "", interrupted=True)
            return
        except KeyboardInterrupt:
            self.say("\n  [interrupted]")
            manager.finish_turn(text, "", interrupted=True)
            return
        self.messages.extend(new)
        self.api_messages.extend(sent)
        self._persist(new)
        manager.finish_turn(text, final, messages=self.messages)

    def _ask(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        self.scrubber.reset()
        if not self.stream:
            reply = self.model.complete(messages, tools)
            from memhost.fencing import scrub_text

            if reply.content.strip():
                self.say(scrub_text(reply.content).strip())
            return reply
        shown: list[str] = []

        def show(chunk: str) -> None:
            visible = self.scrubber.feed(chunk)
            if visible:
                shown.append(visible)
                self.say(visible, end="")

        reply = self.model.stream(messages, tools, on_text=show)  # type: ignore[attr-defined]
        tail = self.scrubber.flush()
        if tail:
            shown.append(tail)
            self.say(tail, end="")
        if "".join(shown).strip():
            self.say()
        return reply

    def _report_tool(self, name: str, result: str) -> None:
        try:
            answer = json.loads(result)
        except ValueError:
            answer = {}
        if answer.get("staged"):
            self._notice(f"{name}: staged for approval as {answer.get('pending_id')} "
                         "(/pending, /approve ID)")
        elif answer.get("success"):
            target = f" ({answer['target']})" if answer.get("target") else ""
            self._notice(f"{name}{target}: {answer.get('message', 'done')}")
        else:
            self._notice(f"{name}: not saved: {_one_line(str(answer.get('error', result)))}")

    def _confirm(self, summary: str, detail: str) -> bool:
        self.say(f"  The model wants to {summary}:")
        for line in detail.splitlines() or [""]:
            self.say(f"    {line}")
        answer = self._read("  Allow this memory write once? [y/N] ")
        if answer is not None and not self.interactive:
            self.say(f"  Allow this memory write once? [y/N] {answer}")
        return (answer or "").strip().lower() in ("y", "yes")

    # -- commands --------------------------------------------------------------------------------

    def _show_memory(self) -> None:
        from memhost.builtin_providers.store import FILENAMES, TARGETS, Unreadable

        store = self.manager.store
        for target in TARGETS:
            if not store.enabled[target]:
                self.say(f"{FILENAMES[target]} ({target}): disabled")
                continue
            try:
                entries = store.entries(target)
            except Unreadable as exc:
                self.say(f"{FILENAMES[target]} ({target}): cannot be read ({exc})")
                continue
            self.say(f"{FILENAMES[target]} ({target}): {store.usage(target, entries)}, "
                     f"{_common.entries_phrase(len(entries))}")
            for index, entry in enumerate(entries, 1):
                self.say(f"  [{index}] {_one_line(entry)}")
        self.say("(the model sees memory as it was when this session started; /new reloads it)")

    def _show_pending(self) -> None:
        from memhost.review.approval import PendingStore

        records = PendingStore(self.manager.home).list()
        if not records:
            self.say("No memory writes are waiting for approval.")
            return
        for record in records:
            self.say(f"{record.id} ({record.origin}) {record.summary.split(': ', 1)[0]}")
            for line in record.detail.splitlines():
                self.say(f"    {line}")
        self.say("/approve ID|all applies, /reject ID|all discards.")

    def _decide(self, verb: str, wanted: str) -> None:
        from memhost.review.approval import PendingStore, approve, reject

        if not wanted:
            self.say(f"usage: /{verb} ID|all")
            return
        pending = PendingStore(self.manager.home)
        ids = [r.id for r in pending.list()] if wanted == "all" else [wanted]
        if not ids:
            self.say("No memory writes are waiting for approval.")
        for pending_id in ids:
            # Through the manager's store, so an approved write is mirrored like any other.
            result = (approve(self.manager.store, pending_id, home=self.manager.home)
                      if verb == "approve" else reject(self.manager.home, pending_id))
            if result.get("success"):
                self.say(f"{verb}d {pending_id}: {result.get('message', '')}".rstrip())
            else:
                self.say(f"  ! {result.get('error')}")

    def _new_session(self) -> None:
        new_id = time.strftime("chat-%Y%m%d-%H%M%S-") + secrets.token_hex(2)
        if self.manager.reviewer is not None:
            self.manager.reviewer.cancel()
        self.manager.rotate(new_id, "new", messages=self.messages)
        self.session_id = new_id
        self.messages, self.api_messages = [], []
        self.say(f"new session {new_id}; memory reloaded")

    # -- the session log -------------------------------------------------------------------------

    def _log_path(self, session_id: str) -> Path:
        return self.folder / f"{session_id}.jsonl"

    def _load(self, session_id: str) -> list[dict[str, Any]]:
        path = self._log_path(session_id)
        messages: list[dict[str, Any]] = []
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        for line in lines:
            try:
                message = json.loads(line)
            except ValueError:
                continue  # a line cut off by a crash
            if isinstance(message, dict) and message.get("role"):
                messages.append(message)
        return messages

    def _persist(self, messages: list[dict[str, Any]]) -> None:
        from memhost.files import ensure_private_dir, open_append_private

        ensure_private_dir(self.folder)
        path = self._log_path(self.session_id)
        data = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages).encode("utf-8")
        fd = open_append_private(path)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    # -- the end ---------------------------------------------------------------------------------

    def _finish(self) -> None:
        manager = self.manager
        reviewer = manager.reviewer
        if reviewer is not None and getattr(reviewer, "running", False):
            self.say("waiting for the memory review to finish (Ctrl-C skips it)...")
            try:
                reviewer.wait(manager.config.review.timeout)
            except KeyboardInterrupt:
                pass
        manager.end_session(self.messages)
        report = manager.shutdown()
        status = manager.status()
        self.say(f"session {self.session_id} ended; conversation in {self._log_path(self.session_id)}")
        line = f"memory shutdown: {report.status} in {report.seconds:.2f}s"
        if report.status != "drained":
            line += (f" (abandoned {report.abandoned_writes} write(s), {report.abandoned_prefetches} "
                     f"prefetch(es); {report.kept_in_outbox} kept for the next start)")
        self.say(line)
        last = (status.get("review") or {}).get("last") or {}
        if last:
            self.say(f"last memory review: {last.get('status')}"
                     + (f" ({last['summary']})" if last.get("summary") else "")
                     + (f": {last['error']}" if last.get("error") else ""))
        if status["pending_writes"]:
            self.say(f"{status['pending_writes']} memory write(s) waiting for approval: "
                     "`memhost memory pending`")


def _one_line(text: str, width: int = 160) -> str:
    return _common.preview(text, width)
