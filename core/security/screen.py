"""Screening a memory write: accept, stage for a person's approval, or refuse.

The ``memory`` tool's write gate (:class:`memhost.review.approval.ApprovalGate`) asks the
store's :class:`Screen` about every entry a write would add or replace. The answer combines:

* the risk scorer (:mod:`memhost.security.scorer`) with the thresholds of ``[injection]``;
* the optional model judge (:mod:`memhost.security.judge`), asked only about the grey zone
  between staging and refusal, when ``[review]`` names a model and ``injection.model_judge`` is
  on; without it, or when it gives no valid answer, the scorer's decision (stage) stands;
* taint: a turn the host marked as having read untrusted content (``begin_turn(...,
  untrusted=True)`` or ``mark_untrusted()``) stages every write, whatever its score; so does a
  background review of a session in which such a turn happened.

A refusal is never staged: a person should not be asked to approve what the scorer is sure of.
The store refuses on its own too (:meth:`Screen.refusal`), so no path around the gate can save
an entry the scorer refuses.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memhost.security import scorer
from memhost.security.scorer import ACCEPT, REFUSE, STAGE, Assessment, Policy


@dataclass(frozen=True)
class Decision:
    outcome: str
    assessment: Assessment
    #: What the model judge said ("benign", "suspicious", "malicious"), or None when not asked.
    judged: str | None = None


class Screen:
    """The scorer's thresholds, the model judge and the taint of the current turn."""

    def __init__(self, policy: Policy | None = None, judge: Any = None) -> None:
        self.policy = policy or Policy()
        self.judge = judge
        self._lock = threading.Lock()
        self._turn_untrusted = False
        self._tainted_sessions: set[str] = set()

    @classmethod
    def from_config(cls, config: Any, home: Path, *, judge: bool = True) -> Screen:
        """From a :class:`memhost.config.Config`; ``judge=False`` leaves the model out (for
        commands that only show memory)."""
        settings = config.injection
        policy = Policy(stage_at=settings.stage_at, refuse_at=settings.refuse_at)
        model_judge = None
        if judge:
            from memhost.security.judge import ModelJudge

            model_judge = ModelJudge.from_config(config, home)
        return cls(policy, model_judge)

    # -- taint -----------------------------------------------------------------------------------

    def begin_turn(self, session_id: str, *, untrusted: bool = False) -> None:
        with self._lock:
            self._turn_untrusted = False
        if untrusted:
            self.mark_untrusted(session_id)

    def mark_untrusted(self, session_id: str) -> None:
        with self._lock:
            self._turn_untrusted = True
            self._tainted_sessions.add(session_id)

    def tainted(self, session_id: str, *, background: bool) -> bool:
        """Whether a write of this turn (for a background review: of this session) is tainted."""
        with self._lock:
            if background:
                return session_id in self._tainted_sessions or self._turn_untrusted
            return self._turn_untrusted

    # -- entries ---------------------------------------------------------------------------------

    def decide(self, text: str) -> Decision:
        assessment = scorer.assess(text)
        outcome = assessment.outcome(self.policy)
        if outcome != STAGE or self.judge is None:
            return Decision(outcome, assessment)
        verdict = self.judge.classify(text)
        if verdict == "benign":
            return Decision(ACCEPT, assessment, verdict)
        if verdict == "malicious":
            return Decision(REFUSE, assessment, verdict)
        return Decision(STAGE, assessment, verdict)

    def refusal(self, text: str, decision: Decision | None = None) -> dict[str, Any] | None:
        """The tool's answer refusing ``text``, or None when the scorer (or ``decision``) does
        not refuse it."""
        if decision is None:
            assessment = scorer.refusal_reading(text)  # all a refusal rests on
            if assessment.outcome(self.policy) != REFUSE:
                return None
            decision = Decision(REFUSE, assessment)
        elif decision.outcome != REFUSE:
            return None
        assessment = decision.assessment
        if "secret_value" in assessment.reasons:
            return {"error": ("Refused, NOT saved: the text holds what looks like a secret (a "
                              "password, key or token). Memory is replayed into every future "
                              "system prompt and sent to the memory provider, so memhost never "
                              "stores secrets in it. Save where the secret is kept instead (\"the "
                              "wifi password is in the password manager\") and retry."),
                    "blocked_pattern": "secret_value", "risk": assessment.score}
        why = (f"the review model judged it malicious; the scorer found {assessment.describe()}"
               if decision.judged == "malicious" else
               f"it scores {assessment.score:g} (refused from {self.policy.refuse_at:g}): "
               f"{assessment.describe()}")
        return {"error": (f"Refused, NOT saved: this entry reads as an instruction to the agent, "
                          f"not a fact ({why}). Memory is placed in every future system prompt, "
                          "so it must not carry instructions, exfiltration or persistence steps. "
                          "Rephrase it as a plain fact, or leave it out."),
                "blocked_pattern": assessment.reasons[0] if assessment.reasons else "risk",
                "risk": assessment.score}


#: How many staged steps of a batch the answer gives a reason for.
STAGED_SHOWN = 3


def contents(proposal: dict[str, Any]) -> list[tuple[str, str]]:
    """The entry texts a proposal would add or replace, each with its step's label."""
    if proposal.get("action") == "batch":
        steps = [(f"Operation {n}: ", op) for n, op in enumerate(proposal.get("operations") or [], 1)
                 if isinstance(op, dict)]
    else:
        steps = [("", proposal)]
    found = []
    for where, step in steps:
        if step.get("action") not in ("add", "replace"):
            continue
        content = step.get("content") if step.get("content") is not None else step.get("new_text")
        if isinstance(content, str) and content.strip():
            found.append((where, content))
    return found


def screen_write(screen: Screen, proposal: dict[str, Any], *, session_id: str,
                 background: bool) -> tuple[dict[str, Any] | None, str | None]:
    """The gate's view of a proposal: ``(refusal answer, None)``, ``(None, why it is staged)``
    or ``(None, None)`` when it may go ahead as far as screening is concerned."""
    staged: list[str] = []
    for where, text in contents(proposal):
        decision = screen.decide(text)
        refusal = screen.refusal(text, decision)
        if refusal is not None:
            return {"success": False, "done": True, **refusal,
                    "error": where + refusal["error"]}, None
        if decision.outcome == STAGE:
            staged.append(f"{where}risk {decision.assessment.score:g}: "
                          f"{decision.assessment.describe()}")
    if staged:
        # The first few reasons: a batch of thousands of steps would otherwise answer the model
        # with a reason for each.
        shown = "; ".join(staged[:STAGED_SHOWN])
        if len(staged) > STAGED_SHOWN:
            shown += f"; and {len(staged) - STAGED_SHOWN} more"
        which = "the entry" if len(staged) == 1 else f"{len(staged)} of its entries"
        return None, (f"Staged for approval, NOT saved yet: {which} may carry an instruction to "
                      f"the agent ({shown}), so a person reviews it first")
    if contents(proposal) and screen.tainted(session_id, background=background):
        return None, ("Staged for approval, NOT saved yet: this turn read untrusted content (a "
                      "web page, a file, an email or another agent's output), so memory writes "
                      "wait for the user's review")
    return None, None
