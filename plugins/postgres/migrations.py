"""The recall schema in PostgreSQL, as numbered migrations.

:func:`store.RecallStore.migrate` runs them under a transaction-scoped advisory lock (one per
schema name), so two hosts starting at once never race: the second waits, then finds every
version recorded in ``recall_migrations`` and does nothing. Each migration and the row recording
it commit together. Never edit a released migration; add the next one. ``{s}`` is the schema,
quoted by the caller.
"""

from __future__ import annotations

#: The text search configuration: English stemming and stop words.
TS_CONFIG = "english"

BOOTSTRAP = (
    "CREATE SCHEMA IF NOT EXISTS {s}",
    """CREATE TABLE IF NOT EXISTS {s}.recall_migrations (
        version    integer PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now())""",
)

V1 = (
    # Every stored item of every user. ``key`` makes a replayed write a no-op; ``tsv`` is only
    # set while the item is active, so the GIN index holds nothing else and nothing else can be
    # recalled.
    f"""CREATE TABLE {{s}}.items (
        id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id     text NOT NULL,
        key         text NOT NULL,
        kind        text NOT NULL CHECK (kind IN ('turn', 'fact', 'session', 'subtask')),
        body        text NOT NULL,
        session_id  text NOT NULL DEFAULT '',
        target      text NOT NULL DEFAULT '',
        origin      text NOT NULL DEFAULT '',
        created_at  timestamptz NOT NULL DEFAULT now(),
        status      text NOT NULL DEFAULT 'active'
                    CHECK (status IN ('active', 'superseded', 'retired', 'forgotten')),
        status_at   timestamptz,
        replaced_by bigint REFERENCES {{s}}.items (id),
        tsv         tsvector GENERATED ALWAYS AS (
                        CASE WHEN status = 'active'
                             THEN to_tsvector('{TS_CONFIG}'::regconfig, body) END) STORED,
        UNIQUE (user_id, key))""",
    "CREATE INDEX items_tsv ON {s}.items USING gin (tsv)",
    "CREATE INDEX items_newest ON {s}.items (user_id, id)",
    # A session's newest turn (the one recall leaves out) is one index probe.
    "CREATE INDEX items_session ON {s}.items (user_id, session_id, kind, id)",
    "CREATE INDEX items_fact ON {s}.items (user_id, kind, target, status)",
    "CREATE INDEX items_time ON {s}.items (user_id, status, created_at)",
    # Per user, how many active items hold each lexeme (and, under the empty lexeme, how many
    # active items there are): the relevance weights. Kept by the trigger below, in the
    # writing transaction; lexemes are locked in sorted order, so concurrent writers queue
    # instead of deadlocking.
    """CREATE TABLE {s}.terms (
        user_id text NOT NULL,
        lexeme  text NOT NULL,
        df      bigint NOT NULL,
        PRIMARY KEY (user_id, lexeme))""",
    """CREATE FUNCTION {s}.recall_count_terms() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        delta integer;
        owner text;
        vector tsvector;
    BEGIN
        IF TG_OP = 'INSERT' THEN
            delta := 1; owner := NEW.user_id; vector := NEW.tsv;
        ELSIF TG_OP = 'DELETE' THEN
            delta := -1; owner := OLD.user_id; vector := OLD.tsv;
        ELSIF OLD.tsv IS NULL AND NEW.tsv IS NOT NULL THEN
            delta := 1; owner := NEW.user_id; vector := NEW.tsv;
        ELSIF OLD.tsv IS NOT NULL AND NEW.tsv IS NULL THEN
            delta := -1; owner := OLD.user_id; vector := OLD.tsv;
        ELSE
            RETURN NULL;
        END IF;
        IF vector IS NULL THEN
            RETURN NULL;
        END IF;
        INSERT INTO {s}.terms AS t (user_id, lexeme, df)
            SELECT owner, lexeme, delta
            FROM unnest(array_prepend('', tsvector_to_array(vector))) AS lexeme
            ORDER BY lexeme
        ON CONFLICT (user_id, lexeme) DO UPDATE SET df = t.df + EXCLUDED.df;
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER items_count_terms AFTER INSERT OR DELETE OR UPDATE OF status ON {s}.items
        FOR EACH ROW EXECUTE FUNCTION {s}.recall_count_terms()""",
)

#: (version, statements), oldest first.
MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, V1),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]
