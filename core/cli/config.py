"""``memhost config``: show and change the settings in ``<home>/config.toml`` and the providers'
settings.

Keys are dotted: ``memory.nudge_interval``, ``review.model``, ``curator.merge`` for memhost's own
tables, ``providers.<name>.<field>`` for a provider's fields. memhost's keys are written with
:func:`memhost.config.update_config` (validated, comments kept); provider fields go through
:class:`memhost.schema.settings.SettingsService`, so a CLI save follows the same rules as any
other settings UI. A secret is never taken as a command-line argument (it would stay in the
shell history): it is prompted for without echo, or read as one line from stdin when stdin is
not a terminal. No output ever shows a secret's value, only whether it is set.
"""

from __future__ import annotations

import argparse

from memhost.cli import _common

# The command's parts, by what they do; their names stay importable from here.
from memhost.cli.config_edit import cmd_get, cmd_set, cmd_unset, read_secret
from memhost.cli.config_keys import TABLES, as_toml, parse_key, parse_value
from memhost.cli.config_show import (cmd_show, gather, limit_warnings, memhost_settings,
                                     provider_settings, settings_service, table_problems)

__all__ = ["TABLES", "cmd_get", "cmd_schema", "cmd_set", "cmd_show", "cmd_unset", "gather",
           "limit_warnings", "memhost_settings", "parse_key", "parse_value", "provider_settings",
           "read_secret", "register", "table_problems"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "config", help="show and change settings (config.toml, provider settings, secrets)",
        description="Show and change memhost's settings ([memory], [review], [chat], [curator], "
                    "[injection] in config.toml) and each provider's settings "
                    "(providers.<name>.<field>). Secrets are prompted for, never taken on the "
                    "command line, and never shown.")
    actions = parser.add_subparsers(dest="config_command", metavar="ACTION")
    parser.set_defaults(func=lambda args: _common.usage(parser))

    show = actions.add_parser("show", help="every setting with its value and where it comes from")
    _common.add_json_flag(show)
    show.set_defaults(func=cmd_show)

    get = actions.add_parser("get", help="print one setting's value")
    get.add_argument("key", metavar="KEY", help="e.g. memory.nudge_interval or "
                                                "providers.NAME.FIELD")
    _common.add_json_flag(get)
    get.set_defaults(func=cmd_get)

    set_ = actions.add_parser(
        "set", help="change one setting",
        description="Change one setting. For a provider's secret field leave VALUE out (or "
                    "give '-'): it is prompted for without echo, or read as one line from stdin "
                    "when stdin is not a terminal.")
    set_.add_argument("key", metavar="KEY")
    set_.add_argument("value", metavar="VALUE", nargs="?",
                      help="the new value (for a secret: left out, or '-')")
    set_.set_defaults(func=cmd_set)

    unset = actions.add_parser("unset", help="put a setting back to its default (a secret: "
                                             "remove it from the env store)")
    unset.add_argument("key", metavar="KEY")
    unset.set_defaults(func=cmd_unset)

    schema = actions.add_parser("schema", help="a provider's config schema")
    schema.add_argument("name", metavar="NAME", help="the provider")
    form = schema.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="the schema's fields as JSON")
    form.add_argument("--json-schema", action="store_true",
                      help="the schema as JSON Schema (draft 2020-12)")
    form.add_argument("--ui-schema", action="store_true", help="the uiSchema for form renderers")
    schema.set_defaults(func=cmd_schema)




def cmd_schema(args: argparse.Namespace) -> int:
    home = _common.home(args)
    schema = settings_service(home).schema(args.name)
    if schema is None:
        _common.eprint(f"memhost: provider {args.name!r} declares no config schema "
                       "(it has no settings)")
        return 1
    if args.json_schema:
        _common.print_json(schema.to_json_schema())
        return 0
    if args.ui_schema:
        _common.print_json(schema.ui_schema())
        return 0
    if args.json:
        _common.print_json({"name": schema.name, "label": schema.label,
                            "storage": schema.storage, "docs_url": schema.docs_url,
                            "fields": [item.to_dict() for item in schema.fields]})
        return 0
    where = (f"[providers.{schema.name}] in config.toml" if schema.storage == "config"
             else f"{schema.name}/config.json in the home")
    print(f"{schema.name}: {schema.label}")
    print(f"  values stored in {where}; secrets in .env")
    if schema.docs_url:
        print(f"  docs: {schema.docs_url}")
    for item in schema.fields:
        facts = [item.kind]
        if item.is_secret:
            facts.append(f"env {item.env_key}")
        elif item.default is not None:
            facts.append(f"default {as_toml(item.default_value())}")
        if item.required:
            facts.append("required")
        if item.kind == "number":
            facts += [f"{word} {value:g}" for word, value in
                      (("min", item.min), ("max", item.max), ("step", item.step))
                      if value is not None]
        if item.options:
            facts.append("one of " + ", ".join(
                as_toml(o.value) + (f" ({o.label})" if o.label != str(o.value) else "")
                for o in item.options))
        if item.when:
            facts.append("only when " + ", ".join(f"{k} = {as_toml(v)}"
                                                  for k, v in item.when.items()))
        if item.group:
            facts.append(f"group {item.group!r}")
        print(f"\n  providers.{schema.name}.{item.key}: {item.label}")
        print(f"    {'; '.join(facts)}")
        if item.description:
            print(f"    {item.description}")
    return 0
