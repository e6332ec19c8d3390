"""Time in a query: does it ask *when*, and does it name a time ("last week", "in May")?

Only plain English phrases are read, relative to ``now`` in local time; anything else is no
time at all (the ranking then ignores dates), so a misread can only lift some items, never hide
one.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

_ASKS_WHEN = re.compile(
    r"\b(?:when|what (?:year|month|day|date|time)|which (?:year|month|day|date)|how long ago|"
    r"since when|what weekend|how long (?:has|have|had|did|was|were))\b", re.I)
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six|few|couple of)\s+"
                  r"(day|week|month|year)s?\s+ago\b", re.I)
_COUNT = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
          "few": 3, "couple of": 2}
_LAST = re.compile(r"\b(last|this|past)\s+(week|month|year|weekend)\b", re.I)
_DAY = re.compile(r"\b(yesterday|today|tonight|this morning)\b", re.I)
_MONTH = re.compile(r"\bin\s+(" + "|".join(_MONTHS) + r")\b", re.I)


def asks_when(query: str) -> bool:
    return _ASKS_WHEN.search(query) is not None


def _day(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def window(query: str, now: float) -> tuple[float, float] | None:
    """The ``(since, until)`` Unix times a query names, or ``None``."""
    today = _day(datetime.fromtimestamp(now))
    found = _DAY.search(query)
    if found:
        start = today - timedelta(days=1) if found.group(1).lower() == "yesterday" else today
        return start.timestamp(), (start + timedelta(days=1)).timestamp()
    found = _AGO.search(query)
    if found:
        raw = found.group(1).lower()
        count = int(raw) if raw.isdigit() else _COUNT[raw]
        days = count * _UNITS[found.group(2).lower()]
        slack = max(1, days // 4)
        centre = today - timedelta(days=days)
        return ((centre - timedelta(days=slack)).timestamp(),
                (centre + timedelta(days=slack + 1)).timestamp())
    found = _LAST.search(query)
    if found:
        which, unit = found.group(1).lower(), found.group(2).lower()
        span = 7 if unit == "weekend" else _UNITS[unit]
        if which == "this":
            return (today - timedelta(days=span)).timestamp(), now + 1
        # "last week": the week before this one, with a little slack on each side.
        return ((today - timedelta(days=2 * span + 1)).timestamp(),
                (today - timedelta(days=max(0, span - 2))).timestamp())
    found = _MONTH.search(query)
    if found:
        month = _MONTHS.index(found.group(1).lower()) + 1
        year = today.year if month <= today.month else today.year - 1
        start = datetime(year, month, 1)
        end = datetime(year + (month == 12), month % 12 + 1, 1)
        return start.timestamp(), end.timestamp()
    return None


__all__ = ["asks_when", "window"]
