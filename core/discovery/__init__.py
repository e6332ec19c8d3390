"""Discovery: finding memory providers and loading the one asked for.

Providers come from three sources (bundled folders, the user's folder, pip entry points); this
room reads their ``plugin.toml`` manifests (:mod:`~memhost.discovery.manifest`) and requirements
(:mod:`~memhost.discovery.requirements`) without running provider code, scans the sources and
resolves a name (:mod:`~memhost.discovery.scan`), imports a folder by path as a package of its
own (:mod:`~memhost.discovery.pathload`) and instantiates one candidate
(:mod:`~memhost.discovery.loading`), finds and configures a manager's provider afresh or once
for all of a hub's users (:mod:`~memhost.discovery.shared`), keeping load failures as records
(:mod:`~memhost.discovery.candidates`). The public names are re-exported here, so hosts and
tools write ``from memhost.discovery import discover, load_provider``.
"""

from __future__ import annotations

from memhost.discovery.candidates import (
    DISABLED_ENV,
    Candidate,
    Discovery,
    LoadFailure,
    ProviderLoadError,
    make_failure,
    recorded_failures,
    recorded_items,
)
from memhost.discovery.loading import has_hookimpls, instantiate, load_candidate
from memhost.discovery.manifest import (
    MANIFEST_NAME,
    NAME_PATTERN,
    RESERVED_NAMES,
    ManifestError,
    read_manifest,
)
from memhost.discovery.scan import (
    BUILTIN_ONLY,
    ENTRY_POINT_GROUP,
    NO_ENTRYPOINTS_ENV,
    SCHEMA_FILE,
    SOURCES,
    STRICT_ENV,
    blocked_names,
    bundled_root,
    discover,
    entrypoints_enabled,
    find_candidate,
    folder_candidate,
    import_timeout,
    known_names,
    load_path,
    load_provider,
    runtime_config,
    schema_path,
    strict_mode,
    unknown_name_message,
    user_root,
    validate_provider_name,
)
from memhost.discovery.shared import ProviderReads, SharedProviderReads

__all__ = [
    "BUILTIN_ONLY", "DISABLED_ENV", "ENTRY_POINT_GROUP", "MANIFEST_NAME", "NAME_PATTERN",
    "NO_ENTRYPOINTS_ENV", "RESERVED_NAMES", "SCHEMA_FILE", "SOURCES", "STRICT_ENV", "Candidate",
    "Discovery", "LoadFailure", "ManifestError", "ProviderLoadError", "ProviderReads",
    "SharedProviderReads", "blocked_names", "bundled_root", "discover", "entrypoints_enabled",
    "find_candidate", "folder_candidate", "has_hookimpls", "import_timeout", "instantiate",
    "known_names", "load_candidate", "load_path", "load_provider", "make_failure", "read_manifest",
    "recorded_failures", "recorded_items", "runtime_config", "schema_path", "strict_mode",
    "unknown_name_message", "user_root", "validate_provider_name",
]
