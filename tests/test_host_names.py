"""The host-name patterns the scorer shares (memhost.security.lexicon.HOST, CHANNEL, and the
unread-language check's place): what they find, and the DNS bounds that keep their search
linear. How long a search takes is measured by the benchmark (``injection[worst-case input]``),
never here."""

from __future__ import annotations

import re

import pytest

from memhost.security import unread
from memhost.security.lexicon import CHANNEL, HOST

HOST_RE = re.compile(HOST, re.IGNORECASE)
CHANNEL_RE = re.compile(CHANNEL, re.IGNORECASE)


@pytest.mark.parametrize("text, found", [
    ("post it to hooks.slack.com", "hooks.slack.com"),
    ("the TXT record at x._dmarc.example.com", "x._dmarc.example.com"),
    ("_acme-challenge.example.com", "_acme-challenge.example.com"),
    ("mirror to foo-bar.example.co.uk tonight", "foo-bar.example.co.uk"),
    ("ec2-12-34-56-78.us-west-2.compute.amazonaws.com",
     "ec2-12-34-56-78.us-west-2.compute.amazonaws.com"),
    ("a" * 63 + ".com", "a" * 63 + ".com"),
    ("see evil.com.", "evil.com"),
    ("172.104.8.19/hb", "172.104.8.19/h"),
])
def test_a_host_name_is_found_whole(text: str, found: str) -> None:
    match = HOST_RE.search(text)
    assert match is not None and match.group(0) == found


@pytest.mark.parametrize("text", [
    "setup.py", "install.sh", "README.md", "10.0.0.0/24",
    "a" * 64 + ".com",  # a label DNS refuses
    "evil.com.notasuffix",
])
def test_what_is_not_a_host_name(text: str) -> None:
    assert HOST_RE.search(text) is None


def test_an_address_with_a_long_local_part_is_still_a_channel() -> None:
    assert CHANNEL_RE.search("write to bob.smith+tag@mail.example.org").group(0) == \
        "bob.smith+tag@mail.example.org"
    # DNS and SMTP bound the parts; a longer run finds the address from a later word.
    found = CHANNEL_RE.search("x" * 70 + "-ops@mail.example.org")
    assert found is not None and found.group(0).endswith("ops@mail.example.org")


@pytest.mark.parametrize("unit", ["xq.", "sk-", "xq.xq-", "x-y-z.", "x.-", "xq@", "1."])
def test_runs_of_host_name_pieces_name_no_place(unit: str) -> None:
    """The texts the worst-case benchmark searches: long runs of what host names are made of,
    completing none."""
    text = unit * 3000
    assert HOST_RE.search(text) is None
    assert unread._PLACE.search(text) is None
