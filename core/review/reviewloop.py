"""One background review's conversation with its model: the system prompt (instructions, the
memory as it is now, the stale entries), the tool loop, each model call on a helper thread so a
cancel is acknowledged at once, and what each tool call does (the ``memory`` tool through the
gate, ``memory_confirm`` applied, anything else refused). A part of
:class:`~memhost.review.background.Reviewer`."""

from __future__ import annotations

import copy
import json
import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memhost.builtin_providers.tool import TOOL_NAME, MemoryTool, WriteGate
from memhost.review.approval import BACKGROUND
from memhost.review.outcome import ReviewResult
from memhost.review.prompt import _STALE, _TASK, NOTHING_TO_SAVE, REVIEW_PROMPT, STALE_SHOWN, _cap
from memhost.review.reviewthread import _local

if TYPE_CHECKING:  # pragma: no cover
    from memhost.builtin_providers.store import MemoryStore
    from memhost.review.llm import AssistantMessage, ChatModel

# The review's own log, where its readers look (as memhost.review.reviewthread does).
log = logging.getLogger("memhost.review.background")

ORIGIN = BACKGROUND
THREAD_NAME = "memhost-review"


class ReviewCancelled(Exception):
    """Raised on the review's thread when a new live turn asked the review to stop."""


def _check(cancel: threading.Event) -> None:
    if cancel.is_set():
        raise ReviewCancelled


class ReviewLoop:
    """The model conversation of one review (mixed into ``Reviewer``, whose store, model, gate
    and bounds it uses)."""

    store: MemoryStore
    model: ChatModel
    gate: WriteGate
    max_iterations: int
    stale_after_days: int

    def _review(self, transcript: str, result: ReviewResult, cancel: threading.Event) -> None:
        tool = MemoryTool(self.store, gate=self.gate, origin=ORIGIN)
        schema = tool.schema()
        if schema is None:
            result.status = "no_change"
            result.error = "both memory stores are disabled"
            return
        stale = self._stale()
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self._system_prompt(stale)},
            {"role": "user", "content": f"<conversation>\n{transcript}\n</conversation>\n\n{_TASK}"},
        ]
        tools = [schema]
        if stale:  # the confirm tool is offered only when there is something stale to confirm
            from memhost.review.curator import CONFIRM_SCHEMA

            tools.append(CONFIRM_SCHEMA)
        for _ in range(self.max_iterations):
            _check(cancel)
            reply = self._call(messages, tools, result, cancel)
            _check(cancel)
            messages.append(reply.as_message())
            if not reply.tool_calls:
                result.final_text = reply.content.strip()
                result.status = self._final_status(result)
                return
            stop = False
            offered = [t["name"] for t in tools]
            for call in reply.tool_calls:
                _check(cancel)
                answer = self._handle(tool, call, result, offered)
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": json.dumps(answer, ensure_ascii=False)})
                stop = stop or (answer.get("done") is True and not answer.get("success"))
            if stop:  # the tool's circuit breaker said to stop
                result.status = self._final_status(result)
                return
        result.status = "limit"
        log.warning("background review stopped after %d model calls ([review] max_iterations)",
                    result.model_calls)

    def _system_prompt(self, stale: Sequence[Any] = ()) -> str:
        snapshot = self.store.snapshot().render()
        current = snapshot if snapshot.strip() else "(memory is empty)"
        prompt = f"{REVIEW_PROMPT}\n\nMemory as it is now:\n\n{current}"
        if stale:
            from memhost.review.curator import CONFIRM_TOOL

            lines = [f"- [{s.target}] {_cap(self.store.shown_entries(s.target, [s.text])[0], 160)}"
                     f" ({s.reason})" for s in stale]
            prompt += "\n\n" + _STALE.format(entries="\n".join(lines), confirm=CONFIRM_TOOL)
        return prompt

    def _stale(self) -> list[Any]:
        """The oldest stale entries (reading them never refreshes them); ``[]`` on any error."""
        from memhost.review.curator import DAY, stale_entries

        try:
            return stale_entries(self.store, self.stale_after_days * DAY)[:STALE_SHOWN]
        except Exception:
            log.warning("background review: could not list stale entries", exc_info=True)
            return []

    def _call(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
              result: ReviewResult, cancel: threading.Event) -> AssistantMessage:
        """One model call on a helper thread, so a cancel is acknowledged at once even while
        the request is still waiting for the server (its late answer is then dropped)."""
        result.model_calls += 1
        result.chars_sent += sum(len(str(m.get("content") or "")) for m in messages)
        box: dict[str, Any] = {}
        done = threading.Event()
        payload = copy.deepcopy(messages)

        def call() -> None:
            _local.active = True
            try:
                box["reply"] = self.model.complete(payload, tools)
            except BaseException as exc:  # handed to the review thread
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=call, name=f"{THREAD_NAME}-call", daemon=True).start()
        while not done.wait(0.05):
            if cancel.is_set():
                raise ReviewCancelled
        if "error" in box:
            raise box["error"]
        return box["reply"]

    def _handle(self, tool: MemoryTool, call: Any, result: ReviewResult,
                offered: Sequence[str] = (TOOL_NAME,)) -> dict[str, Any]:
        if call.name != TOOL_NAME and call.name in offered:
            return self._confirm(call, result)
        if call.name != TOOL_NAME:
            result.refused_tools.append(call.name or "(unnamed)")
            log.info("background review: refused a call to %r", call.name)
            return {"success": False, "refused": True, "error": (
                f"Refused: the memory review may call only the `{TOOL_NAME}` tool; "
                f"`{call.name}` is not available here. Do not call it again. Use `{TOOL_NAME}` "
                f"or, if nothing qualifies, answer exactly: {NOTHING_TO_SAVE}")}
        try:
            arguments = call.parsed_arguments()
        except ValueError as exc:
            return {"success": False, "error": f"The arguments are not a valid JSON object ({exc}). "
                    "Send {\"target\": ..., \"action\": ...} or {\"target\": ..., \"operations\": [...]}."}
        answer = tool.call(arguments, session_id=result.session_id)
        if answer.get("staged"):
            result.staged.append(str(answer.get("pending_id")))
        return answer

    def _confirm(self, call: Any, result: ReviewResult) -> dict[str, Any]:
        """The review's ``memory_confirm``: only the entry's metadata changes (never its text),
        so it is applied, not staged."""
        from memhost.review.curator import confirm

        try:
            arguments = call.parsed_arguments()
        except ValueError as exc:
            return {"success": False, "error": f"The arguments are not a valid JSON object ({exc})."}
        target, old_text = arguments.get("target"), arguments.get("old_text")
        if target not in self.store.enabled or not self.store.enabled[target]:
            return {"success": False, "error": "target must be an enabled store: 'memory' or 'user'."}
        answer = confirm(self.store, target, old_text if isinstance(old_text, str) else "",
                         by=ORIGIN)
        if answer.get("success"):
            result.confirmed.append({"target": target, "entry": answer["entry"]})
            return {"success": True, "done": True, "target": target,
                    "message": "Confirmed; the entry counts as fresh from now."}
        return {k: v for k, v in answer.items() if k in ("success", "error", "matches")}

    def _record(self, changes: list[Any], origin: str, session_id: str) -> None:
        """Store listener: note what this reviewer's own thread committed."""
        result = getattr(_local, "result", None)
        if getattr(_local, "reviewer", None) is not self or result is None:
            return
        for change in changes:
            result.writes.append({"action": change.action, "target": change.target,
                                  "content": change.content, "previous": change.previous})

    @staticmethod
    def _final_status(result: ReviewResult) -> str:
        if result.writes:
            return "saved"
        if result.staged:
            return "staged"
        if result.confirmed:
            return "confirmed"
        if result.final_text.strip().rstrip(".").lower() == NOTHING_TO_SAVE.rstrip(".").lower():
            return "nothing"
        return "no_change"

