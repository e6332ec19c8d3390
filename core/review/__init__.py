"""Review: deciding what is worth remembering, and who has the last word.

:mod:`~memhost.review.background` is the background review that, after some turns, takes a second
look at the conversation (its conversation with the model is :mod:`~memhost.review.reviewloop`,
what its model reads :mod:`~memhost.review.prompt`, what it reports :mod:`~memhost.review.outcome`,
and :mod:`~memhost.review.reviewthread` tells its thread apart);
:mod:`~memhost.review.llm` is the chat-model vocabulary it talks in, :mod:`~memhost.review.client`
the OpenAI-compatible client and :mod:`~memhost.review.wire` what such a server sends back;
:mod:`~memhost.review.approval` is write approval (the gate, approving and rejecting), on
:mod:`~memhost.review.pending` (the store of writes waiting for a person's yes) and
:mod:`~memhost.review.proposal` (a write described, checked and pinned to its entries);
:mod:`~memhost.review.curator` marks entries and archives the stale ones, with
:mod:`~memhost.review.staleness` (ages), :mod:`~memhost.review.merge` (the model-assisted pass) and
:mod:`~memhost.review.usage` (the fullness history). Nothing here is imported by ``import memhost``.
"""
