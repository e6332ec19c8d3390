"""The builtin memory: two budgeted markdown stores the model edits through the ``memory`` tool.

It is registered with the manager like any other provider (``memhost.builtin_providers.provider``);
the store itself (``store``) is shared with the CLI, the background review and the settings page.
"""
