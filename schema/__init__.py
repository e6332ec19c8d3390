"""Declarative provider config schemas: pure data, importable without the memhost runtime.

A provider's ``config_schema.py`` builds a :class:`ProviderConfigSchema` from these types only;
settings UIs render it, and :class:`memhost.schema.settings.SettingsService` reads and writes the
values it describes.
"""
