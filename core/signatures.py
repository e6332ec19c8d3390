"""The check a hook method's signature gets when its provider is registered, beyond pluggy's.

pluggy compares only the parameters without defaults, and never passes keyword-only, ``*args``
or ``**kwargs`` parameters: a misspelt argument with a default, or a catch-all, would register
fine and then silently receive nothing. :func:`signature_problem` names such a parameter.
"""

from __future__ import annotations

import difflib
import inspect
import threading
import types
import weakref
from typing import Any

# A hook method's verdict, by the function under it and the hook: a hub registers each user's
# provider (a new instance of the same class) every time it opens that user's manager, and
# inspect.signature is most of what a registration costs after pluggy's own checks.
_verdicts: weakref.WeakKeyDictionary[Any, dict[str, str | None]] = weakref.WeakKeyDictionary()
_verdicts_lock = threading.Lock()


def signature_problem(caller: Any, impl: Any) -> str | None:
    """Why ``impl`` would never receive what it names from hook ``caller`` (a message naming
    the hook and the parameter), or ``None`` when its signature is fine."""
    function = impl.function
    # A bound method's signature is its function's without the first parameter, whatever the
    # instance: the function is the key (the spec's names are the same for a hook's name).
    key = function.__func__ if isinstance(function, types.MethodType) else function
    try:
        with _verdicts_lock:
            return _verdicts[key][caller.name]
    except (KeyError, TypeError):  # not seen yet, or not weakly referenceable
        pass
    problem = _inspect_signature(caller, function)
    try:
        with _verdicts_lock:
            _verdicts.setdefault(key, {})[caller.name] = problem
    except TypeError:
        pass
    return problem


def _inspect_signature(caller: Any, function: Any) -> str | None:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # uninspectable: pluggy's check is all we have
        return None
    allowed = set(caller.spec.argnames)
    for param in parameters:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            return (f"hook {caller.name!r}: {param}-style parameters receive nothing; name the "
                    f"arguments you need from: {', '.join(caller.spec.argnames) or 'none'}")
        if param.name not in allowed:
            hint = difflib.get_close_matches(param.name, allowed, 1)
            return (f"hook {caller.name!r} has no argument {param.name!r}"
                    + (f" (did you mean {hint[0]!r}?)" if hint else "")
                    + f"; its arguments are: {', '.join(caller.spec.argnames) or 'none'}")
        if param.kind is param.KEYWORD_ONLY:
            return (f"hook {caller.name!r}: argument {param.name!r} is keyword-only and would "
                    "never be passed; remove the '*' before it")
    return None
