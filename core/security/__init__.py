"""Security: what memhost keeps out of prompts and away from providers.

Memory poisoning (see docs/security.md): :mod:`~memhost.security.scorer` gives each memory
entry a risk score from the evidence families of :mod:`~memhost.security.features` (known
shapes) and :mod:`~memhost.security.concepts` (the ideas underneath them), with orders stated
as facts in :mod:`~memhost.security.standing` and :mod:`~memhost.security.conduct`, practices that
hide things from the user or the defences in :mod:`~memhost.security.oversight`, and what the agent
is made to run, reveal or become in :mod:`~memhost.security.agency`, all built
from the vocabularies of :mod:`~memhost.security.lexicon`;
:mod:`~memhost.security.screen` turns it into accept, stage or refuse for a write (with taint
and the optional :mod:`~memhost.security.judge`); :mod:`~memhost.security.neutralise` renders
every entry inert for a prompt; :mod:`~memhost.security.text` and
:mod:`~memhost.security.confusables` say what hidden and look-alike characters read as.
:mod:`~memhost.security.redact` masks secrets in everything handed to a provider (egress
redaction).
"""
