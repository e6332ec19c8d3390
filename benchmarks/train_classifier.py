"""Train the scorer's learned reading (:mod:`memhost.security.learned`) from the corpora here.

    python -m benchmarks.train_classifier            # write core/security/injection_model.json
    python -m benchmarks.train_classifier --cv       # leave one corpus out at a time, report
    python -m benchmarks.train_classifier --leave-out attacks_heldout6.jsonl --out FILE

A logistic regression over :func:`memhost.security.learned.features`, fitted with AdaGrad in
plain Python (no numeric library: the same input gives the same table on any machine), the two
classes weighted equally. The threshold is where the model flags :data:`BENIGN_FLAGGED` of the
benign notes *it did not train on*: each benign corpus is scored by a model trained without it
(cross-fitting), so the threshold reflects notes the model has never seen, not its training fit.

The sets in :data:`BLIND` are not trained on: they were written blind and measure what the
layer does on attacks it has never seen. Each round trains on the blind sets of the round before
(measured once first) and is measured on new ones.

The table records the digest of every corpus it was trained on; a test checks that they are
the corpora in the repository, so a corpus changed without retraining is caught.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
from pathlib import Path

from benchmarks.bench_injection import DATA, load_attacks, load_benign

ATTACKS = ("attacks.jsonl", "attacks_heldout.jsonl", *(f"attacks_heldout{n}.jsonl" for n in range(2, 18)),
           "attacks_training.jsonl")
BENIGN = ("benign.txt", "benign_heldout.txt", *(f"benign_heldout{n}.txt" for n in range(4, 18)),
          "benign_training.txt", "benign_training2.txt")
#: Measured, never trained on.
BLIND = ("attacks_heldout18.jsonl", "benign_heldout18.txt", "attacks_heldout19.jsonl",
         "benign_heldout19.txt", "attacks_heldout20.jsonl", "benign_heldout20.txt")
#: The share of unseen benign notes the threshold lets the model flag (stage, never refuse).
BENIGN_FLAGGED = 0.03
EPOCHS = 12
LEARNING_RATE = 0.5
L2 = 1e-4
PRUNE = 0.002  # weights smaller than this are left out of the table
SEED = 20261203


#: Attack classes left out of training: what they carry is not in the words this layer reads (an
#: instruction spelled in invisible characters behind an ordinary note), so training on them
#: would teach that the ordinary note is the attack. The rules read those (the ``hidden`` view).
UNREAD_CLASSES = frozenset({"invisible"})


def _texts(name: str) -> list[str]:
    if name.endswith(".jsonl"):
        return [" ".join(a["text"]) if isinstance(a["text"], list) else a["text"]
                for a in load_attacks(name) if a["class"] not in UNREAD_CLASSES]
    return load_benign(name)


Examples = list[tuple[frozenset[str], int]]


def _examples(names: tuple[str, ...]) -> dict[str, Examples]:
    """Each corpus's notes as (features, 1 for an attack), read once for all the fits."""
    from memhost.security import learned, views

    return {name: [(frozenset(learned.features(*views.readings(text))),
                    int(name.endswith(".jsonl"))) for text in _texts(name)] for name in names}


def fit(examples: Examples) -> tuple[dict[str, float], float]:
    """AdaGrad on the logistic loss, each class weighted to half the total."""
    from memhost.security import learned

    positives = sum(y for _, y in examples) or 1
    negatives = (len(examples) - positives) or 1
    weight_of = {1: len(examples) / (2 * positives), 0: len(examples) / (2 * negatives)}
    weights: dict[str, float] = {}
    squared: dict[str, float] = {}
    bias, bias_squared = 0.0, 1e-8
    order = list(range(len(examples)))
    rng = random.Random(SEED)
    for _ in range(EPOCHS):
        rng.shuffle(order)
        for index in order:
            found, label = examples[index]
            scale = learned.scale(found)
            p = learned.probability(weights, bias, found)
            gradient = (p - label) * weight_of[label]
            for f in found:
                g = gradient * scale + L2 * weights.get(f, 0.0)
                squared[f] = squared.get(f, 1e-8) + g * g
                weights[f] = weights.get(f, 0.0) - LEARNING_RATE * g / math.sqrt(squared[f])
            bias_squared += gradient * gradient
            bias -= LEARNING_RATE * gradient / math.sqrt(bias_squared)
    return {f: w for f, w in weights.items() if abs(w) >= PRUNE}, bias


def _held_out(examples: dict[str, Examples], benign: tuple[str, ...]
              ) -> tuple[dict[str, list[float]], float]:
    """Each corpus scored by a model trained on all the others, and the threshold that flags
    :data:`BENIGN_FLAGGED` of the benign notes scored that way."""
    from memhost.security import learned

    scores = {}
    for name, own in examples.items():
        weights, bias = fit([e for other, found in examples.items() if other != name
                             for e in found])
        scores[name] = [learned.probability(weights, bias, f) if learned.asked(f) else 0.0
                        for f, _ in own]
    ordered = sorted(s for name in benign for s in scores[name])
    index = min(len(ordered) - 1, math.ceil((1 - BENIGN_FLAGGED) * len(ordered)))
    return scores, round(ordered[index] + 1e-6, 6)


def _digest(name: str) -> str:
    return hashlib.sha256((DATA / name).read_bytes()).hexdigest()[:16]


def train(attacks: tuple[str, ...], benign: tuple[str, ...]) -> dict[str, object]:
    from memhost.security import learned

    examples = _examples(attacks + benign)
    scores, threshold = _held_out(examples, benign)
    weights, bias = fit([e for found in examples.values() for e in found])
    weights = {f: round(w, 5) for f, w in sorted(weights.items())}
    bias = round(bias, 6)
    return {
        "digest": learned.weights_digest(weights, bias, threshold),  # first: read without parsing
        "about": "memhost.security.learned: written by python -m benchmarks.train_classifier",
        "trained_on": {name: _digest(name) for name in attacks + benign},
        "settings": {"epochs": EPOCHS, "learning_rate": LEARNING_RATE, "l2": L2,
                     "prune": PRUNE, "stem": learned.STEM, "min_words": learned.MIN_WORDS,
                     "min_features": learned.MIN_FEATURES, "seed": SEED,
                     "benign_flagged": BENIGN_FLAGGED},
        "held_out": {name: round(sum(s >= threshold for s in values) / len(values), 4)
                     for name, values in scores.items()},
        "threshold": threshold,
        "bias": bias,
        "weights": weights,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.train_classifier",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--leave-out", action="append", default=[], metavar="CORPUS",
                        help="train without this corpus (a file name under benchmarks/data/injection)")
    parser.add_argument("--out", type=Path, help="where to write the table "
                        "(default: the one the package ships)")
    parser.add_argument("--cv", action="store_true",
                        help="only report each corpus's flagged share, scored by a model "
                             "trained without it; write nothing")
    args = parser.parse_args(argv)
    unknown = set(args.leave_out) - set(ATTACKS + BENIGN)
    if unknown:
        parser.error(f"not a training corpus: {', '.join(sorted(unknown))} "
                     f"(choose from {', '.join(ATTACKS + BENIGN)})")
    attacks = tuple(n for n in ATTACKS if n not in args.leave_out)
    benign = tuple(n for n in BENIGN if n not in args.leave_out)
    if args.cv:
        scores, threshold = _held_out(_examples(attacks + benign), benign)
        print(f"threshold {threshold:.4f} (flags {BENIGN_FLAGGED:.0%} of unseen benign notes)")
        for name, values in scores.items():
            flagged = sum(s >= threshold for s in values)
            print(f"  {name:28} {flagged:4d} / {len(values):4d} flagged")
        return 0
    from memhost.security import learned

    table = train(attacks, benign)
    out = args.out or learned.MODEL_PATH
    out.write_text(json.dumps(table, indent=0, ensure_ascii=False, sort_keys=False) + "\n",
                   encoding="utf-8")
    print(f"wrote {out}: {len(table['weights'])} weights, threshold {table['threshold']}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
