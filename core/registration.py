"""How providers join a manager: the builtin one first, then at most one external provider,
either the host's own object (``register_provider``) or the one ``memory.provider`` names,
found by :mod:`memhost.discovery`.

An external provider joins only whole: it must pass ``check_available``, its tool schemas are
read before any manager state changes, and its outbox must open (without it every write would be
lost silently). Anything refused is a problem in ``status()`` and a WARNING, never a silent skip.
"""

from __future__ import annotations

import copy
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memhost.abandoned import Leftovers, weak_attribute
from memhost.builtin_providers.provider import NAME as BUILTIN
from memhost.config import Config
from memhost.delivery import Delivery
from memhost.errors import ProviderError
from memhost.healthrecord import HealthRecorder
from memhost.home import config_path
from memhost.outbox import Outbox
from memhost.providers import FAILED, Provider, ProviderSet
from memhost.revival import Revival
from memhost.toolrouter import ToolRouter
from memhost.worker import BackgroundWorker

if TYPE_CHECKING:
    from memhost.discovery.shared import ProviderReads

log = logging.getLogger("memhost")

#: ``memory.provider`` values that mean "the builtin memory only".
BUILTIN_ONLY = frozenset({"", "builtin", "none"})
PROVIDER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class ProviderRegistration:
    """The part of :class:`memhost.MemoryManager` that registers providers."""

    home: Path
    settings_home: Path
    config: Config
    session_id: str
    problems: list[dict[str, str]]
    _providers: ProviderSet
    _router: ToolRouter
    _worker: BackgroundWorker
    _external: Provider | None
    _delivery: Delivery | None
    _revival: Revival | None = None
    _leftovers: Leftovers
    context: str
    user_id: str
    closed: bool
    #: How the configured provider is found and its config read: afresh (``None``), or once
    #: for all of a hub's users.
    _reads: ProviderReads | None

    def register_provider(self, provider: Any, *, name: str) -> bool:
        """Register an external provider object the host built itself.

        Returns ``False`` (with a warning) when another external provider is already active or
        this one reports itself unavailable; raises :class:`ProviderError` when it does not
        match the hook spec.
        """
        if name == BUILTIN or not PROVIDER_NAME.match(name):
            raise ProviderError(f"{name!r} cannot name an external provider; use letters, digits, "
                                "'_' and '-' (and not 'builtin')")
        if self._external is not None:
            message = (f"refused: external provider {self._external.name!r} is already active and "
                       "only one external provider runs at a time; choose which one with "
                       f"memory.provider in {config_path(self.settings_home)}")
            log.warning("memory provider %r %s", name, message)
            self._problem(name, message)
            return False
        return self._add(provider, name) is not None

    def _activate_configured(self) -> None:
        name = self.config.memory.provider.strip()
        if name.lower() in BUILTIN_ONLY:
            return
        from memhost import discovery

        before, warned = len(self.problems), False
        try:
            plugin = self._provider_reads().load(
                name, self.settings_home, timeout=self.config.memory.provider_import_timeout)
            if self.register_provider(plugin, name=name):
                return
            # Refused or unavailable: _add already logged why; restate it with the config key.
            why = "; ".join(p["problem"] for p in self.problems[before:]) or "it was refused"
            del self.problems[before:]
            warned = True
        except ProviderError as exc:
            why = str(exc)
        message = (f"configured memory provider {name!r} (memory.provider in "
                   f"{config_path(self.settings_home)}) is not active: {why.rstrip('.')}. Only "
                   "the builtin memory is active.")
        self._problem(name, message)
        if not warned:
            log.warning("%s Run `memhost doctor` for details.", message)
        if discovery.strict_mode():
            self.shutdown(timeout=1.0)
            raise ProviderError(f"{message} ({discovery.STRICT_ENV} is set)")

    def _add(self, plugin: Any, name: str) -> Provider | None:
        external = name != BUILTIN
        provider = self._providers.register(
            plugin, name, call_timeout=self.config.memory.hook_timeout if external else None)
        if external:
            reason = self._providers.call(provider, "check_available", config=self._provider_config(name))
            if reason is FAILED or reason:
                why = provider.last_error if reason is FAILED else reason
                self._providers.unregister(name)
                self._problem(name, f"unavailable: {why}")
                log.warning("memory provider %r is unavailable: %s. Only the builtin memory is "
                            "active.", name, why)
                return None
        # Read the schemas before changing any manager state: a provider whose schema hook
        # raises must not leave half a registration behind.
        schemas = self._providers.call(provider, "tool_schemas")
        if external:
            # Without its outbox an external provider would silently lose every write, so a
            # home where the outbox cannot be opened refuses the provider instead.
            outbox = Outbox(self.home, name)
            try:
                journal = outbox.open_journal()
            except OSError as exc:
                self._providers.unregister(name)
                self._problem(name, f"not activated: its outbox under {outbox.folder} cannot be "
                                    f"opened ({exc})")
                log.warning("memory provider %r is not active: its outbox under %s cannot be "
                            "opened (%s). Only the builtin memory is active.", name,
                            outbox.folder, exc)
                return None
        for refused in self._router.route(provider, list(schemas) if schemas else []):
            log.warning("memory provider %r: %s", provider.name, refused)
            self._problem(provider.name, refused)
        if external:
            self._external = provider
            self._delivery = Delivery(self.home, provider, self._providers, self._worker, outbox,
                                      journal, closed=weak_attribute(self, "closed", True))
            self._leftovers.deliveries.append(self._delivery)
            self._revival = Revival()
            recorder = HealthRecorder(self.home, name)  # what doctor reports of a running host
            provider.health.watch(recorder, recorder.initial_state())
            if self.session_id:
                self._initialize(provider)
        log.info("memory provider %r registered (%d tools)", name,
                 self._router.count(provider))
        return provider

    def _revive_if_due(self) -> None:
        """The external provider is unavailable: start it again, off this thread, when it is
        due (:mod:`memhost.revival`)."""
        if self._external is not None and self._revival is not None and not self.closed:
            self._revival.start_if_due(self._external, self._revive_external)

    def _revive_external(self) -> bool:
        """Run on the revival's thread: ``initialize`` the external provider for the current
        session; once it succeeds, the provider is available and what waited is delivered."""
        provider, delivery, session_id = self._external, self._delivery, self.session_id
        if provider is None or delivery is None or self.closed:
            return False
        done = self._call_initialize(provider, session_id)
        if done is FAILED or session_id != self.session_id:
            return False  # (a new session started meanwhile: its own initialize decides)
        if self.closed:  # shut down meanwhile: what initialize opened is closed again
            self._providers.call(provider, "shutdown")
            return False
        delivery.started(revived=True)
        return True

    def _problem(self, provider: str, message: str) -> None:
        self.problems.append({"provider": provider, "problem": message})

    def _call_initialize(self, provider: Provider, session_id: str) -> Any:
        """``provider``'s ``initialize`` for ``session_id``: what a session start and a
        revival pass it alike."""
        return self._providers.call(provider, "initialize", session_id=session_id,
                                    home=self.home, config=self._provider_config(provider.name),
                                    context=self.context, user_id=self.user_id)

    def _provider_config(self, name: str) -> dict[str, Any]:
        table = self.config.providers.get(name, {})
        if name == BUILTIN:
            return copy.deepcopy(table)
        # With a config schema: defaults, stored values and secrets; else the raw table.
        return self._provider_reads().config(name, self.settings_home, table)

    def _provider_reads(self) -> ProviderReads:
        if self._reads is None:
            from memhost.discovery.shared import ProviderReads

            self._reads = ProviderReads()
        return self._reads
