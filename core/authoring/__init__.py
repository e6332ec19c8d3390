"""Authoring: tools for people who write memory providers.

:mod:`~memhost.authoring.scaffold` writes a small, working provider to start from (``memhost
providers new``); :mod:`~memhost.authoring.checker` loads one provider in isolation and runs it
through its paces (``memhost providers check``), calling its hooks through
:mod:`~memhost.authoring.hookrunner` and adding the steps of :mod:`~memhost.authoring.checks`,
and :mod:`~memhost.authoring.availability` is the light probe behind ``providers list --check``;
:mod:`~memhost.authoring.contract` is the pytest
contract suite, which provider authors import from its stable path, :mod:`memhost.testing`.
"""
