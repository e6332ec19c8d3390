"""The recall schema in PostgreSQL, as numbered migrations.

:func:`store.RecallStore.migrate` runs them under a transaction-scoped advisory lock (one per
schema name), so two hosts starting at once never race: the second waits, then finds every
version recorded in ``recall_migrations`` and does nothing. Each migration and the row recording
it commit together. Never edit a released migration; add the next one. ``{s}`` is the schema,
quoted by the caller. A step is an SQL statement or a function of the connection and the
quoting function (for what SQL alone cannot do, such as computing search terms in Python).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

Quote = Callable[[str], Any]
Step = str | Callable[[Any, Quote], None]

#: Version 1's text search configuration (its tsvector column is dropped by version 2).
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

# Version 1 kept a turn (the user's message and the reply) as one item joined by this separator.
_V1_PART_SEPARATOR = "\n\x1e\n"


def _split_turns(conn: Any, q: Quote) -> None:
    """Each version-1 turn becomes two items, the user's message and the reply, in place of the
    pair (keys ``<key>/user`` and ``<key>/assistant``: a replayed write still stores nothing).
    A forgotten turn becomes two forgotten markers."""
    rows = conn.execute(q(
        "SELECT id, user_id, key, body, session_id, created_at, status, status_at "
        "FROM {s}.items WHERE kind = 'turn' AND role = '' ORDER BY id")).fetchall()
    for item_id, owner, key, body, session_id, created_at, status, status_at in rows:
        parts = body.split(_V1_PART_SEPARATOR, 1) if body else ["", ""]
        if len(parts) == 1:
            parts.append("")
        conn.execute(q("DELETE FROM {s}.items WHERE id = %s"), (item_id,))
        for role, text in zip(("user", "assistant"), parts, strict=True):
            if status == "active" and not text.strip():
                continue
            conn.execute(q(
                "INSERT INTO {s}.items (user_id, key, kind, role, body, session_id, created_at, "
                "status, status_at) VALUES (%s, %s, 'turn', %s, %s, %s, %s, %s, %s)"),
                (owner, f"{key}/{role}", role, text.strip(), session_id, created_at, status,
                 status_at))


def _index_terms(conn: Any, q: Quote) -> None:
    """Every item's terms and length, and each user's statistics of their active items, from
    scratch."""
    from memhost.recall.terms import terms

    df: dict[str, Counter[str]] = {}
    rows = conn.execute(q("SELECT id, user_id, body, status FROM {s}.items")).fetchall()
    for item_id, owner, body, status in rows:
        made = terms(body)
        conn.execute(q("UPDATE {s}.items SET terms = %s, length = %s WHERE id = %s"),
                     (" ".join(made), len(made), item_id))
        if status == "active":
            counts = df.setdefault(owner, Counter())
            counts.update(set(made))
            counts[""] += 1
            counts[" length"] += len(made)
    conn.execute(q("DELETE FROM {s}.terms"))
    for owner, counts in df.items():
        conn.cursor().executemany(q("INSERT INTO {s}.terms (user_id, lexeme, df) "
                                    "VALUES (%s, %s, %s)"),
                                  [(owner, lexeme, n) for lexeme, n in sorted(counts.items())])


def _count_terms(name: str, rows: str) -> str:
    """A trigger function adding the ``delta`` of each of ``rows`` (user_id, lexemes, length,
    delta) to the statistics."""
    return f"""CREATE FUNCTION {{s}}.recall_count_{name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO {{s}}.terms AS t (user_id, lexeme, df)
            SELECT user_id, lexeme, sum(n) FROM (
                SELECT c.user_id, l.lexeme, c.delta AS n FROM ({rows}) AS c,
                    LATERAL (SELECT DISTINCT x AS lexeme
                             FROM unnest(c.lexemes || ARRAY['']) AS x) AS l
                UNION ALL SELECT c.user_id, ' length', c.delta * c.length FROM ({rows}) AS c
            ) AS counted
            GROUP BY user_id, lexeme HAVING sum(n) <> 0 ORDER BY user_id, lexeme
        ON CONFLICT (user_id, lexeme) DO UPDATE SET df = t.df + EXCLUDED.df;
        RETURN NULL;
    END $$"""


V2: tuple[Step, ...] = (
    # A turn is two items (role user / assistant); items carry the terms memhost made of their
    # text (in order, space-separated, repeats kept) and their length in terms: the ranking
    # reads term frequencies and lengths from them. The index is a GIN over the distinct terms
    # of the active items (the English tsvector is gone: both bundled stores index the same
    # terms, so they rank the same).
    "DROP TRIGGER items_count_terms ON {s}.items",
    "DROP INDEX {s}.items_tsv",
    "ALTER TABLE {s}.items DROP COLUMN tsv",
    "ALTER TABLE {s}.items ADD COLUMN role text NOT NULL DEFAULT ''",
    "ALTER TABLE {s}.items ADD COLUMN terms text NOT NULL DEFAULT ''",
    "ALTER TABLE {s}.items ADD COLUMN length integer NOT NULL DEFAULT 0",
    _split_turns,
    _index_terms,
    """ALTER TABLE {s}.items ADD COLUMN lexemes text[] GENERATED ALWAYS AS (
        CASE WHEN status = 'active' THEN string_to_array(terms, ' ') END) STORED""",
    "CREATE INDEX items_lexemes ON {s}.items USING gin (lexemes)",
    # Per user: how many active items hold each term, how many active items there are (under
    # the empty lexeme) and their summed length (under ' length'; no term has a space). Kept by
    # statement-level triggers over the rows a statement touched: one aggregate upsert per
    # statement, not one per row, so a turn's two items and a bulk import cost one each;
    # lexemes are locked in sorted order, so concurrent writers queue instead of deadlocking.
    "DROP FUNCTION {s}.recall_count_terms()",
    *(_count_terms(name, rows) for name, rows in (
        ("added", "SELECT user_id, lexemes, length, 1 AS delta FROM added "
                  "WHERE lexemes IS NOT NULL"),
        ("removed", "SELECT user_id, lexemes, length, -1 AS delta FROM removed "
                    "WHERE lexemes IS NOT NULL"),
        ("changed", "SELECT n.user_id, n.lexemes, n.length, 1 AS delta FROM after_rows AS n "
                    "JOIN before_rows AS o ON o.id = n.id "
                    "WHERE o.lexemes IS NULL AND n.lexemes IS NOT NULL UNION ALL "
                    "SELECT o.user_id, o.lexemes, o.length, -1 FROM before_rows AS o "
                    "JOIN after_rows AS n ON n.id = o.id "
                    "WHERE o.lexemes IS NOT NULL AND n.lexemes IS NULL"))),
    """CREATE TRIGGER items_count_added AFTER INSERT ON {s}.items
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT
        EXECUTE FUNCTION {s}.recall_count_added()""",
    """CREATE TRIGGER items_count_removed AFTER DELETE ON {s}.items
        REFERENCING OLD TABLE AS removed FOR EACH STATEMENT
        EXECUTE FUNCTION {s}.recall_count_removed()""",
    """CREATE TRIGGER items_count_changed AFTER UPDATE ON {s}.items
        REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows FOR EACH STATEMENT
        EXECUTE FUNCTION {s}.recall_count_changed()""",
)

V3: tuple[Step, ...] = (
    # Semantic recall: an item's vector as a float array (pgvector, where the database has it,
    # reads it by a cast), tagged with the model that made it. A forgotten item's vector goes
    # with its text.
    """CREATE TABLE {s}.vectors (
        item_id bigint PRIMARY KEY REFERENCES {s}.items (id) ON DELETE CASCADE,
        user_id text NOT NULL,
        model   text NOT NULL,
        vector  real[] NOT NULL)""",
    """CREATE FUNCTION {s}.recall_forget_vector() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM {s}.vectors WHERE item_id = NEW.id;
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER items_forget_vector AFTER UPDATE OF status ON {s}.items
        FOR EACH ROW WHEN (NEW.status = 'forgotten')
        EXECUTE FUNCTION {s}.recall_forget_vector()""",
)

def _flush_pending(conn: Any, q: Quote) -> None:
    """Move what the GIN index's pending list holds into the index proper."""
    conn.execute(q("SELECT gin_clean_pending_list(%s::regclass)"),
                 (q("{s}.items_lexemes").as_string(conn),))


V4: tuple[Step, ...] = (
    # A GIN index with ``fastupdate`` (PostgreSQL's default) queues new entries in a pending
    # list that every search reads from end to end until a vacuum, or a list grown past
    # gin_pending_list_limit (4 MB), merges it: a store just filled, or a server whose
    # autovacuum is off or behind, made each recall scan megabytes (26 ms of a 45 ms candidate
    # query at 100,000 turns). Entries now go straight into the index: a write costs a little
    # more, a recall never reads a pending list.
    "ALTER INDEX {s}.items_lexemes SET (fastupdate = off)",
    _flush_pending,
)

#: (version, steps), oldest first.
MIGRATIONS: tuple[tuple[int, tuple[Step, ...]], ...] = (
    (1, V1),
    (2, V2),
    (3, V3),
    (4, V4),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]
