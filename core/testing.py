"""``memhost.testing``: the stable import path of the provider contract suite, for provider authors'
pytest runs.

It is the pytest plugin memhost installs (entry point ``pytest11``, or ``-p memhost.testing`` when
plugin autoload is off), so its fixtures are available in any test run, and the path a provider's
tests import from::

    from memhost.testing import ProviderContract, load_folder_provider

The suite itself lives in :mod:`memhost.authoring.contract`; the names are re-exported here.
"""

from __future__ import annotations

from memhost.authoring.contract import *  # noqa: F403
from memhost.authoring.contract import (
    HookDriver,
    ProviderContract,
    __all__,
    hook_arguments,
    load_folder_provider,
    memhost_home,
    memhost_no_network,
    memhost_provider,
    sample_tool_arguments,
)
