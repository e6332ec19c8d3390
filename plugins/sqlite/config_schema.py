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
        ConfigField("max_items", label="Recalled items per turn", kind="number", default=20,
                    min=1, max=50, step=1,
                    description="At most this many items (a message, a reply, a note) go into a "
                                "turn."),
        ConfigField("min_coverage", label="Relevance coverage", kind="number", default=0.15,
                    min=0, max=1,
                    description="An item must hold at least this share of the query's weight "
                                "(rare words weigh more), so one shared word in a long message "
                                "recalls nothing."),
        ConfigField("min_relative", label="Relevance floor (relative)", kind="number",
                    default=0.1, min=0, max=1,
                    description="An item must score at least this share of the best item's "
                                "score. Raise it for less, surer recall."),
        ConfigField("min_score", label="Relevance floor (absolute)", kind="number", default=0.0,
                    min=0, max=50,
                    description="An item must score at least this much (0: no absolute floor; "
                                "scores depend on the store, so prefer the relative floor)."),
        ConfigField("neighbour_weight", label="Neighbour lift", kind="number", default=0.5,
                    min=0, max=2,
                    description="The message next to a relevant one (the reply to a matching "
                                "question) gets this share of its score."),
        ConfigField("session_share", label="Share per session", kind="number", default=0.5,
                    min=0.1, max=1,
                    description="No one past session may fill more than this share of the "
                                "recall budget."),
        # Semantic recall (docs/recall.md): off unless an embedder is chosen.
        ConfigField("embedder", label="Semantic recall", kind="select", default="none",
                    options=("none", "openai", "sentence-transformers"),
                    description="none: words only. openai: an OpenAI-compatible /v1/embeddings "
                                "endpoint (Ollama, llama.cpp, vLLM, TEI, OpenAI). "
                                "sentence-transformers: a local model, run in process."),
        ConfigField("embedder_model", label="Embedding model", kind="text", default="",
                    description="The model's name (for sentence-transformers also a folder); "
                                "it is never downloaded by memhost.",
                    placeholder="nomic-embed-text"),
        ConfigField("embedder_url", label="Embeddings API", kind="text",
                    default="http://127.0.0.1:11434/v1", when={"embedder": "openai"},
                    description="The OpenAI-compatible API's base URL, ending in /v1."),
        ConfigField("embedder_key", label="Embeddings API key", kind="secret",
                    env_key="MEMHOST_SQLITE_EMBEDDER_KEY", when={"embedder": "openai"},
                    description="Only if the endpoint wants one (kept in .env)."),
        ConfigField("semantic_weight", label="Semantic weight", kind="number", default=0.5,
                    min=0, max=1,
                    description="How much closeness of meaning counts against matching words "
                                "(0: words only, 1: meaning only)."),
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
