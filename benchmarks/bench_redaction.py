"""redaction: secret shapes masked, benign lines changed, and what a scan costs per KB.

The corpus is in ``benchmarks/data/redaction/`` (``make/`` has the scripts that wrote it, with
fixed seeds): ``secrets_tuning.json`` is what the rules were tuned on; ``secrets_holdout1.json``
was written after the first round of tuning and ``secrets_holdout2.json`` after the second, and
neither was tuned against afterwards (holdout 1 was scored before the second round; that score
is in docs/security.md). A shape counts as masked when none of its secret values survives
:func:`memhost.security.redact.redact`; a benign line counts as changed when redact returns
anything but the line.

Cost is µs per KB of turn-sized texts (about 2 KB): chat-like text (the hand-written benign
lines), memhost's docs and code (dense with "key", "token", "password": the expensive case),
and the latter with one secret each; the detector's per-text cache is emptied before each
round. The baseline is
the detector engine alone (betterleaks' built-in rules, no memhost rules, no post-checks), so the
ratio is what memhost's layer adds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.harness import Context, Row, Target, alternate, benchmark, timed

DATA = Path(__file__).resolve().parent / "data" / "redaction"
SECRET_SETS = ("tuning", "holdout1", "holdout2")
BENIGN_SETS = ("tuning", "holdout")
COVERAGE = Target("memhost", ">=", 98)
BENIGN = Target("memhost", "<=", 1)
TURN_BYTES = 2048


def load(name: str) -> list[dict[str, Any]]:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def score_secrets(cases: list[dict[str, Any]]) -> tuple[int, list[str]]:
    """How many cases are masked whole, and the shapes of those that are not."""
    from memhost.security.redact import redact

    missed = []
    for case in cases:
        out = redact(case["text"])
        if any(secret in out for secret in case["secrets"]):
            missed.append(case["shape"])
    return len(cases) - len(missed), missed


def score_benign(lines: list[dict[str, Any]]) -> list[str]:
    """The benign lines redact changes."""
    from memhost.security.redact import redact

    return [line["text"] for line in lines if redact(line["text"]) != line["text"]]


def turns(lines: list[str], size: int = TURN_BYTES) -> list[str]:
    """Lines joined into texts of about ``size`` bytes."""
    out, current, length = [], [], 0
    for line in lines:
        current.append(line)
        length += len(line) + 1
        if length >= size:
            out.append("\n".join(current))
            current, length = [], 0
    return out


@benchmark("redaction", "secret shapes masked, benign lines changed, µs per KB of turn text")
def redaction(ctx: Context) -> list[Row]:
    from memhost.security import masking
    from memhost.security.redact import known_values

    # What the detector and memhost's rules do to text, not what an earlier benchmark of this
    # process configured: the postgres rows' DSN, remembered as a secret field's value, is masked
    # wherever it appears, a docs line quoting the default DSN included.
    held = known_values()
    masking.forget_all()
    try:
        return _coverage() + _cost(ctx) + [_growth(ctx)]
    finally:
        for value in held:
            masking.remember(value)


def _coverage() -> list[Row]:
    rows: list[Row] = []
    for name in SECRET_SETS:
        cases = load(f"secrets_{name}")
        caught, missed = score_secrets(cases)
        pct = 100 * caught / len(cases)
        rows.append(Row("redaction", f"shapes {name}", pct, None, None, "% masked", 1,
                        note=f"{caught}/{len(cases)} masked"
                        + (f"; missed: {', '.join(sorted(set(missed)))}" if missed else ""),
                        extra={"cases": len(cases), "caught": caught,
                               "shapes": len({c['shape'] for c in cases}), "missed": missed}
                        ).judge(COVERAGE))
    for name in BENIGN_SETS:
        lines = load(f"benign_{name}")
        changed = score_benign(lines)
        pct = 100 * len(changed) / len(lines)
        rows.append(Row("redaction", f"benign {name}", pct, None, None, "% changed", 1,
                        note=f"{len(changed)}/{len(lines)} lines changed",
                        extra={"lines": len(lines), "changed": changed[:20]}).judge(BENIGN))
    return rows


def _cost(ctx: Context) -> list[Row]:
    import betterleaks

    from memhost.security import detector
    from memhost.security.redact import redact

    lines = load("benign_tuning")
    clean = turns([line["text"] for line in lines])[: ctx.size(40, 160)]
    # Chat-like text: the hand-written lines (prose and snippets, many naming passwords, keys
    # and tokens), repeated into turns.
    chat = turns([line["text"] for line in lines if line["kind"] == "handwritten"] * 4)
    # The common case: prose lines of the docs that hold no candidate (no rule keyword, no
    # token-like run), which never reach the engine: what the cheap path costs.
    plain = turns([line["text"] for line in lines if line["kind"] == "docs"
                   and not _candidate(line["text"])])[: ctx.size(40, 160)]
    secrets = load("secrets_tuning")
    dirty = [f"{text}\n{secrets[i % len(secrets)]['text']}" for i, text in enumerate(clean)]
    rows = []
    for case, texts in (("prose, no candidate", plain), ("chat turns", chat),
                        ("docs and code", clean), ("turns with a secret", dirty)):
        kilobytes = sum(len(t.encode("utf-8")) for t in texts) / 1024

        def memhost(texts: list[str] = texts, kilobytes: float = kilobytes) -> float:
            detector.clear_cache()
            return timed(lambda: [redact(t) for t in texts]) * 1e6 / kilobytes

        def engine(texts: list[str] = texts, kilobytes: float = kilobytes) -> float:
            return timed(lambda: [betterleaks.scan_string(t) for t in texts]) * 1e6 / kilobytes

        paired = alternate(ctx.size(3, 9), {"memhost": memhost, "baseline": engine})
        m, b = paired.medians()
        rows.append(Row("redaction", f"µs/KB {case}", m, b, paired.ratio(), "µs/KB",
                        paired.rounds, note=f"{len(texts)} texts of ~2 KB; baseline: the "
                        "detector engine alone", extra={"kilobytes": kilobytes}))
    return rows


#: One-line texts built to make a rule retry at every literal: each unit repeated with no space,
#: a value never ending, or a keyword's second part never coming.
WORST_CASE_UNITS = ("token=", "x(token=", "token=x(", "secretsecret", "Cookie: ", "mysql ",
                    "redis-cli ", "sshpass ", "password is ", "a://b:", "x:y@z", "glpat-", "@@")
GROWTH = Target("ratio", "<=", 6)


def _growth(ctx: Context) -> Row:
    """How redaction's cost grows with a text built to make it retry: the slowest of
    :data:`WORST_CASE_UNITS` at 64 KB (16 KB quick) against the same unit at a quarter of that.
    Linear work gives about 4; a rule that reads the rest of the line from each of its literals
    gives about 16 (a pasted 128 KB line took minutes before the rules were bounded)."""
    from memhost.security import detector
    from memhost.security.redact import redact

    size = ctx.size(16_000, 64_000)
    texts = {unit: (unit * (size // len(unit) + 1))[:size] for unit in WORST_CASE_UNITS}
    slowest: list[str] = []

    def seconds(text: str) -> float:
        detector.clear_cache()  # a text scanned before is answered from the cache
        return timed(lambda: redact(text))

    def worst(fraction: int) -> float:
        times = {unit: seconds(text[: len(text) // fraction]) for unit, text in texts.items()}
        unit = max(times, key=times.__getitem__)
        slowest.append(unit)
        return times[unit] * 1e3

    paired = alternate(ctx.size(2, 3), {"memhost": lambda: worst(1), "baseline": lambda: worst(4)})
    m, b = paired.medians()
    unit = max(set(slowest), key=slowest.count)
    return Row("redaction", "worst-case growth", m, b, paired.ratio(), "ms", paired.rounds,
               note=f"{size:,} characters against {size // 4:,}; slowest: {unit!r} repeated",
               extra={"chars": size, "slowest_unit": unit}).judge(GROWTH)


def _candidate(text: str) -> bool:
    from memhost.security import secret_rules

    return secret_rules.has_literal(text.lower()) or secret_rules.has_long_token(text)
