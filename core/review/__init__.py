"""Review: deciding what is worth remembering, and who has the last word.

:mod:`~memhost.review.background` is the background review that, after some turns, takes a second
look at the conversation; :mod:`~memhost.review.llm` is the small chat-model client it talks to;
:mod:`~memhost.review.approval` is write approval (the gate and the store of writes waiting for a
person's yes); :mod:`~memhost.review.curator` ages entries, finds the stale ones and archives
them. Nothing here is imported by ``import memhost``.
"""
