"""Declarative provider config schemas: pure data, importable without the memhost runtime.

A provider's ``config_schema.py`` builds a :class:`ProviderConfigSchema` from these types only;
settings UIs render it, and :class:`memhost.schema.settings.SettingsService` reads and writes the
values it describes. Importing this package loads only the data model; the loader, the value
stores and the settings service are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memhost.lazy import lazy_names
from memhost.schema.model import ConfigField, FieldOption, ProviderConfigSchema, SchemaError

__all__ = [
    "ConfigField",
    "FieldOption",
    "ProviderConfigSchema",
    "SchemaError",
    "SchemaLoadError",
    "SettingsError",
    "SettingsService",
    "load_config_schema",
]

_LAZY = {
    "SchemaLoadError": "memhost.schema.loader",
    "load_config_schema": "memhost.schema.loader",
    "SettingsError": "memhost.schema.settings",
    "SettingsService": "memhost.schema.settings",
}

if TYPE_CHECKING:  # pragma: no cover
    from memhost.schema.loader import SchemaLoadError, load_config_schema
    from memhost.schema.settings import SettingsError, SettingsService


__getattr__, __dir__ = lazy_names(globals(), _LAZY, __all__)
