"""The background review: after some turns, a second look at the conversation for what to keep.

:meth:`memhost.MemoryManager.finish_turn` starts it when the nudge is due, after a final,
uninterrupted reply. It runs on its own thread, so the reply never waits for it, and it is
isolated from the host:

* it works on a deep copy of the conversation, rendered into its own transcript, and keeps its
  own message list; it has no handle on the host's history or session log, so its prompt can
  never end up there;
* it shares the builtin store object (its writes are real and durable), through its own
  ``memory`` tool whose origin is ``background_review``; replace and remove from it are staged
  for approval (see :mod:`memhost.review.approval`);
* it is shown which entries are stale (see :mod:`memhost.review.curator`) and, when some are, may
  confirm one with the small ``memory_confirm`` tool (metadata only) or propose to retire it
  with a staged remove;
* it offers the model the ``memory`` tool (and ``memory_confirm`` when some entries are stale)
  only, and refuses any other call; it never calls an
  external provider (its committed writes are mirrored like any other builtin write), does no
  context compression and has no nudge counter;
* one review at a time; :meth:`Reviewer.cancel` (called when the next live turn begins) stops it
  cooperatively, waiting at most 2 s; model calls and transcript characters are bounded; every
  failure is logged and kept in :meth:`Reviewer.status`, never raised into the user's turn.

:func:`in_review_thread` and :func:`deny_on_review_thread` let a host's dangerous-command prompt

The review's conversation with its model (prompt, tool loop, tool calls) is
:class:`~memhost.review.reviewloop.ReviewLoop`, a part of :class:`Reviewer`.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from memhost.builtin_providers.tool import WriteGate
from memhost.review.approval import ApprovalGate

# What the model reads (memhost.review.prompt) and what a review reports
# (memhost.review.outcome) are modules of their own; their names are importable from here too.
from memhost.review.outcome import ReviewResult, summarize
from memhost.review.prompt import NOTHING_TO_SAVE, REVIEW_PROMPT, render_transcript
from memhost.review.reviewloop import ORIGIN, THREAD_NAME, ReviewLoop, ReviewCancelled
from memhost.review.reviewthread import _local, deny_on_review_thread, in_review_thread
from memhost.security.redact import redact

if TYPE_CHECKING:  # pragma: no cover
    from memhost.builtin_providers.store import MemoryStore
    from memhost.manager import MemoryManager
    from memhost.review.llm import ChatModel

log = logging.getLogger(__name__)

#: How long :meth:`Reviewer.cancel` waits for a running review to stop.
CANCEL_WAIT = 2.0


class Reviewer(ReviewLoop):
    """Runs background reviews for one host, one at a time.

    ``model`` is any :class:`memhost.review.llm.ChatModel`. ``gate`` defaults to an
    :class:`~memhost.review.approval.ApprovalGate` with approval off, so a review's replace and
    remove are staged even when the host wires nothing. ``on_summary(text)`` receives a short line
    of what changed ("User profile updated · Memory updated"), on the review's thread.
    """

    def __init__(self, store: MemoryStore, model: ChatModel, *, gate: WriteGate | None = None,
                 max_iterations: int = 8, max_chars: int = 24_000,
                 on_summary: Callable[[str], None] | None = None,
                 cancel_wait: float = CANCEL_WAIT, stale_after_days: int = 90) -> None:
        self.store = store
        self.stale_after_days = stale_after_days
        self.model = model
        self.gate = gate if gate is not None else ApprovalGate(store, enabled=False)
        self.max_iterations = max(1, max_iterations)
        self.max_chars = max(1, max_chars)
        self.on_summary = on_summary
        self.cancel_wait = min(cancel_wait, CANCEL_WAIT)
        self.last: ReviewResult | None = None
        self.counts = {"started": 0, "skipped_busy": 0, "cancelled": 0, "failed": 0,
                       "late_cancel_acks": 0}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        store.subscribe(self._record)

    @classmethod
    def for_manager(cls, manager: MemoryManager, model: ChatModel | None = None,
                    **options: Any) -> Reviewer | None:
        """A reviewer configured from the manager's ``[review]`` table, sharing its store and
        its approval settings; ``None`` when the review is disabled or has no model set (and
        no ``model`` was given)."""
        settings = manager.config.review
        if not settings.enabled:
            return None
        if model is None:
            if not (settings.base_url.strip() and settings.model.strip()):
                return None
            from memhost.review.llm import OpenAIChatModel

            model = OpenAIChatModel.from_settings(settings, manager.settings_home)
        gate = ApprovalGate(manager.store, home=manager.home,
                            enabled=manager.config.memory.write_approval)
        options.setdefault("max_iterations", settings.max_iterations)
        options.setdefault("max_chars", settings.max_chars)
        options.setdefault("stale_after_days", manager.config.curator.stale_after_days)
        return cls(manager.store, model, gate=gate, **options)

    # -- control ---------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    def start(self, messages: Sequence[dict[str, Any]], *, session_id: str = "") -> bool:
        """Review ``messages`` in the background. Returns at once; ``False`` when a review is
        already in flight or there is nothing to review."""
        with self._lock:
            if self.running:
                self.counts["skipped_busy"] += 1
                log.info("background review skipped: the previous one is still running")
                return False
            # A deep copy now, on the caller's thread: the host may change its list right after.
            snapshot = copy.deepcopy(list(messages))
            transcript, left_out = render_transcript(snapshot, self.max_chars)
            if not transcript.strip():
                return False
            self._cancel = threading.Event()
            result = ReviewResult(session_id=session_id, started_at=time.time(),
                                  transcript_chars=len(transcript), messages_left_out=left_out)
            self.last = result
            self.counts["started"] += 1
            thread = threading.Thread(target=self._run, args=(transcript, result, self._cancel),
                                      name=THREAD_NAME, daemon=True)
            self._thread = thread
            thread.start()
            return True

    def cancel(self, wait: float | None = None) -> bool:
        """Ask a running review to stop and wait for it, at most ``wait`` (2 s) seconds.
        Returns ``True`` when no review is running any more."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return True
        self._cancel.set()
        bound = self.cancel_wait if wait is None else min(wait, self.cancel_wait)
        thread.join(bound)
        if thread.is_alive():
            self.counts["late_cancel_acks"] += 1
            log.warning("the background review did not stop within %.1fs; continuing with the "
                        "user's turn (it will write nothing more)", bound)
            return False
        return True

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a running review to finish on its own; ``True`` when none is running."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def status(self) -> dict[str, Any]:
        return {"running": self.running, "max_iterations": self.max_iterations,
                "max_chars": self.max_chars, "model": _model_name(self.model),
                **self.counts, "last": self.last.as_dict() if self.last else None}

    # -- the review ------------------------------------------------------------------------------

    def _run(self, transcript: str, result: ReviewResult, cancel: threading.Event) -> None:
        _local.active, _local.reviewer, _local.result = True, self, result
        try:
            # The review model may be another party than the host's own (docs/security.md,
            # "Where it applies"): the transcript leaves with its secrets masked, as a turn
            # leaves for a provider. Here, not on the host's thread that started the review.
            self._review(redact(transcript), result, cancel)
        except ReviewCancelled:
            result.status = "cancelled"
            self.counts["cancelled"] += 1
            log.info("background review cancelled by a new turn")
        except BaseException as exc:  # never let anything escape a background thread
            result.status = "failed"
            result.error = f"{type(exc).__name__}: {exc}" if not _is_model_error(exc) else str(exc)
            self.counts["failed"] += 1
            log.warning("background review failed: %s", result.error,
                        exc_info=not _is_model_error(exc))
        finally:
            result.finished_at = time.time()
            result.summary = summarize(result)
            log.info("background review finished: status=%s calls=%d chars_sent=%d writes=%d "
                     "staged=%d refused=%d", result.status, result.model_calls, result.chars_sent,
                     len(result.writes), len(result.staged), len(result.refused_tools))
            _local.active, _local.reviewer, _local.result = False, None, None
            if result.summary and self.on_summary is not None:
                try:
                    self.on_summary(result.summary)
                except Exception:
                    log.warning("the host's review summary callback failed", exc_info=True)

def reviewer_from_config(manager: MemoryManager) -> Reviewer | None:
    """The reviewer :meth:`memhost.MemoryManager.from_home` installs: built from ``[review]``
    when it is enabled and names a server and a model. A setting that cannot work (a base_url
    that is not a URL) turns the review off with a warning and an entry in ``status()``
    problems; it never stops the host from starting."""
    from memhost.review.llm import ModelError

    try:
        return Reviewer.for_manager(manager)
    except ModelError as exc:
        log.warning("the background review is off: %s", exc)
        manager.problems.append({"provider": "review", "problem": f"background review off: {exc}"})
        return None


def _is_model_error(exc: BaseException) -> bool:
    from memhost.review.llm import ModelError

    return isinstance(exc, ModelError)


def _model_name(model: Any) -> str:
    name = getattr(model, "model", None)
    return name if isinstance(name, str) else type(model).__name__


__all__ = [
    "NOTHING_TO_SAVE",
    "ORIGIN",
    "REVIEW_PROMPT",
    "ReviewResult",
    "Reviewer",
    "deny_on_review_thread",
    "in_review_thread",
    "render_transcript",
    "reviewer_from_config",
    "summarize",
]
