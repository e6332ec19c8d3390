"""Loading a provider's ``config_schema.py`` by file path.

The file is executed on its own, never as part of the provider's package: a settings UI must be
able to show a provider's settings without importing the provider (its dependencies, its network
clients, the memhost runtime). So the file may import only ``memhost.schema`` (and the standard
library); this is checked before the file runs, and relative imports fail because the module has
no package.

Results are cached by resolved path and the file's content, so an edited file is loaded again; a failed load is never cached, so fixing the file is enough for the next call to
succeed.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
import threading
from pathlib import Path

from memhost.errors import MemhostError
from memhost.schema.model import ProviderConfigSchema, SchemaError

ATTRIBUTE = "CONFIG_SCHEMA"
ALLOWED_PACKAGE = "memhost.schema"


class SchemaLoadError(MemhostError):
    """A ``config_schema.py`` could not be loaded; the message names the file and the problem."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


_cache: dict[Path, tuple[str, ProviderConfigSchema]] = {}
_lock = threading.Lock()


def _allowed(module: str) -> bool:
    top = module.partition(".")[0]
    if module == ALLOWED_PACKAGE or module.startswith(ALLOWED_PACKAGE + "."):
        return True
    return top != "memhost" and (top in sys.stdlib_module_names or top == "__future__")


def check_imports(tree: ast.AST) -> str | None:
    """Why the module's imports break the rule, or ``None`` when they keep it."""
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                return (f"line {node.lineno}: relative import; a config schema is loaded on its "
                        "own, outside the provider's package, and may import only memhost.schema")
            base = node.module or ""
            names = [base]
            if base == "memhost":  # from memhost import schema
                names = [f"memhost.{alias.name}" for alias in node.names]
        for name in names:
            if not _allowed(name):
                return (f"line {node.lineno}: imports {name!r}; a config schema may import only "
                        "memhost.schema (and the standard library), so that settings can be shown "
                        "without loading the provider")
    return None


def load_config_schema(path: Path) -> ProviderConfigSchema:
    """Load ``CONFIG_SCHEMA`` from the file at ``path``; raises :class:`SchemaLoadError`."""
    path = Path(path)
    try:
        resolved = path.resolve(strict=True)
        source = resolved.read_bytes()
    except OSError as exc:
        raise SchemaLoadError(path, f"cannot be read ({exc.strerror or exc})") from None
    # The content, not the mtime, decides: an edit inside the filesystem's timestamp
    # granularity still reloads, and the files are small.
    stamp = hashlib.sha256(source).hexdigest()
    with _lock:
        hit = _cache.get(resolved)
        if hit is not None and hit[0] == stamp:
            return hit[1]
    schema = _load(resolved, source)
    with _lock:
        _cache[resolved] = (stamp, schema)
    return schema


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def _load(path: Path, source: bytes) -> ProviderConfigSchema:
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise SchemaLoadError(path, f"line {exc.lineno}: syntax error: {exc.msg}") from None
    problem = check_imports(tree)
    if problem:
        raise SchemaLoadError(path, problem)

    digest = hashlib.sha256(str(path).encode()).hexdigest()[:16]
    module_name = f"_memhost_config_schema_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py path always has a spec
        raise SchemaLoadError(path, "cannot be loaded as a Python file")
    module = importlib.util.module_from_spec(spec)
    # Registered only while it runs (dataclasses and typing look the module up by name), so two
    # files never meet in sys.modules and nothing is left behind.
    sys.modules[module_name] = module
    try:
        exec(compile(tree, str(path), "exec"), module.__dict__)
    except SchemaError as exc:
        raise SchemaLoadError(path, f"invalid schema: {exc}") from exc
    except (Exception, SystemExit) as exc:
        raise SchemaLoadError(path, f"raised {type(exc).__name__}: {exc}") from exc
    finally:
        sys.modules.pop(module_name, None)

    schema = getattr(module, ATTRIBUTE, None)
    if schema is None:
        raise SchemaLoadError(path, f"defines no {ATTRIBUTE}; set {ATTRIBUTE} = "
                                    "ProviderConfigSchema(...)")
    if not isinstance(schema, ProviderConfigSchema):
        raise SchemaLoadError(path, f"{ATTRIBUTE} must be a memhost.schema.ProviderConfigSchema, "
                                    f"not {type(schema).__name__}")
    return schema
