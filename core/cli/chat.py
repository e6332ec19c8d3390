"""``memhost chat``: a reference host in the terminal, for any OpenAI-compatible model.

It is the whole host contract in one small place: a :class:`~memhost.MemoryManager` from the
home, the system prompt with the frozen memory snapshot, the memory tools in a tool loop, recall
fenced into the user's message, streamed output through a :class:`~memhost.StreamScrubber`, the
background review on the nudge, approval prompts inline, and a clean shutdown. The conversation
is kept in ``<home>/chats/<session>.jsonl`` (clean user text; the recall sent with a turn is not
stored), which ``--session`` resumes.

The slash commands are :mod:`memhost.cli.chat_commands` and the conversation log
:mod:`memhost.cli.chat_log`, both parts of :class:`ChatHost`.
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import sys
import threading
import time
from typing import IO, TYPE_CHECKING, Any

from memhost.cli import _common
from memhost.cli.chat_commands import HELP, ChatCommands, one_line
from memhost.cli.chat_log import SessionLog
from memhost.cli.progress import loading_what, starting_what, step

if TYPE_CHECKING:  # pragma: no cover
    from memhost.manager import MemoryManager
    from memhost.review.llm import AssistantMessage, ChatModel

BASE_PROMPT = ("You are a helpful assistant in a terminal chat. Answer clearly and briefly; use "
               "the tools you are given when they help.")
MAX_TOOL_ROUNDS = 8
SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "chat", help="chat in the terminal with an OpenAI-compatible model, with memory",
        description="A reference host: chat with any OpenAI-compatible /v1/chat/completions "
                    "server (llama.cpp, vLLM, Ollama, hosted APIs) with the builtin memory, the "
                    "configured provider, recall, the background review and write approval. The "
                    "server and model default to [chat] base_url and model in config.toml; the "
                    "background review runs only when [review] names its own model. "
                    "Type /help in the chat for its commands.")
    parser.add_argument("--base-url", help="the server, e.g. http://127.0.0.1:8080/v1 "
                        "(default: [chat] base_url)")
    parser.add_argument("--model", help="the model name (default: [chat] model)")
    parser.add_argument("--api-key-env", metavar="NAME", help="the environment variable (or "
                        "<home>/.env key) holding the API key (default: [chat] api_key_env)")
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
    model = OpenAIChatModel.from_settings(config.chat, home, table="chat", base_url=args.base_url,
                                          model=args.model, api_key_env=args.api_key_env)
    with step("memhost chat", loading_what(home)):
        manager = MemoryManager.from_home(home, user_id=_common.user(args))
    host = ChatHost(manager, model, session, stream=not args.no_stream, untrusted=args.untrusted)
    try:
        return host.run()
    finally:
        model.close()


class ChatHost(ChatCommands, SessionLog):
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
        from memhost.review.background import deny_on_review_thread

        manager = self.manager
        manager.set_confirm_callback(deny_on_review_thread(self._confirm))
        # The review runs only when [review] names its own model (from_home set it up then):
        # a chat model given with --model never turns on extra, paid calls by itself.
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
            self._notice(f"{name}: not saved: {one_line(str(answer.get('error', result)))}")

    def _confirm(self, summary: str, detail: str) -> bool:
        self.say(f"  The model wants to {summary}:")
        for line in detail.splitlines() or [""]:
            self.say(f"    {line}")
        answer = self._read("  Allow this memory write once? [y/N] ")
        if answer is not None and not self.interactive:
            self.say(f"  Allow this memory write once? [y/N] {answer}")
        return (answer or "").strip().lower() in ("y", "yes")

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


__all__ = ["BASE_PROMPT", "HELP", "MAX_TOOL_ROUNDS", "ChatHost", "cmd_chat", "register"]
