"""scrubber: StreamScrubber over streamed model output vs one ``re.sub`` over the whole text.

The text is about 10 MB (2 MB with --quick) of model output: prose, markdown, code, stray ``<``
signs (HTML, generics, comparisons) and an echoed ``<memory-context>`` block every ~40 KB. It is
fed in chunks of 16 bytes to 4 KB (log-uniform, so small chunks dominate, as in a real stream).
The baseline is what a host without streaming would do: one ``re.sub`` of the fenced spans over
the finished text. Both outputs are checked to be free of the fence.
"""

from __future__ import annotations

import re

from benchmarks import corpus
from benchmarks.harness import Context, Row, Target, alternate, benchmark, timed

TARGET = Target("ratio", ">=", 0.5)
_SPAN = re.compile(r"<memory-context>.*?</memory-context>\n?", re.I | re.S)


@benchmark("scrubber", "StreamScrubber over 10 MB in 16 B-4 KB chunks vs one re.sub (MB/s)")
def scrubber(ctx: Context) -> list[Row]:
    try:
        from memhost.fencing import StreamScrubber
    except ImportError:
        from benchmarks.harness import NOT_AVAILABLE, unavailable

        return [unavailable("scrubber", NOT_AVAILABLE, "memhost.fencing.StreamScrubber is missing",
                            target=str(TARGET))]

    size = ctx.size(2_000_000, 10_000_000)
    rounds = ctx.size(5, 15)
    text = corpus.model_output(size)
    sizes = corpus.chunk_sizes(len(text))
    chunks, at = [], 0
    for length in sizes:
        chunks.append(text[at:at + length])
        at += length
    megabytes = len(text.encode("utf-8")) / 1e6
    outputs: dict[str, str] = {}

    def stream() -> float:
        scrubber = StreamScrubber()
        feed = scrubber.feed
        parts: list[str] = []

        def run() -> None:
            parts.extend(feed(chunk) for chunk in chunks)
            parts.append(scrubber.flush())

        seconds = timed(run)
        outputs["memhost"] = "".join(parts)
        return megabytes / seconds

    def whole() -> float:
        result: list[str] = []
        seconds = timed(lambda: result.append(_SPAN.sub("", text)))
        outputs["baseline"] = result[0]
        return megabytes / seconds

    paired = alternate(rounds, {"memhost": stream, "baseline": whole})
    for side, output in outputs.items():
        if "<memory-context>" in output.lower():
            raise AssertionError(f"{side} output still holds a fenced block")
    m, b = paired.medians()
    row = Row("scrubber", "", m, b, paired.ratio(), "MB/s", paired.rounds,
              note=f"{megabytes:.0f} MB in {len(chunks):,} chunks",
              extra={"megabytes": megabytes, "chunks": len(chunks),
                     "mean_chunk_bytes": len(text) / len(chunks)})
    return [row.judge(TARGET)]
