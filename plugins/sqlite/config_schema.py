"""Settings of the ``sqlite`` recall provider."""

from memhost.schema import ConfigField, ProviderConfigSchema

CONFIG_SCHEMA = ProviderConfigSchema(
    name="sqlite",
    label="SQLite recall",
    fields=(
        ConfigField("path", label="Database file", kind="text", default="recall.db",
                    description="The recall database. A relative path is taken from the memhost "
                                "home; '~' is your home folder.",
                    placeholder="recall.db"),
        ConfigField("max_chars", label="Recall budget (characters)", kind="number", default=1500,
                    min=200, max=20000, step=1,
                    description="At most this many characters of recalled items go into a turn."),
        ConfigField("max_items", label="Recalled items per turn", kind="number", default=8,
                    min=1, max=50, step=1),
        ConfigField("min_score", label="Relevance floor", kind="number", default=2.0,
                    min=0, max=50,
                    description="An item is recalled only when the query words it contains "
                                "weigh at least this much (a rare word weighs 3 to 7, a word in "
                                "half the items under 1). Raise it for less, surer recall."),
        ConfigField("min_coverage", label="Relevance coverage", kind="number", default=0.15,
                    min=0, max=1,
                    description="An item must also hold at least this share of the query's "
                                "weight, so one shared word in a long message recalls nothing."),
        ConfigField("store_turns", label="Store conversation turns", kind="bool", default=True,
                    description="Store each completed turn (user and assistant text)."),
        ConfigField("store_sessions", label="Store session transcripts", kind="bool",
                    default=True,
                    description="At the end of a session, store its transcript (searchable "
                                "with recall_search; not recalled into turns)."),
        ConfigField("busy_timeout_ms", label="Lock wait (ms)", kind="number", default=5000,
                    min=100, max=60000, step=1,
                    description="How long a write waits for another process holding the "
                                "database; after that the write is retried later, in order."),
    ),
)
