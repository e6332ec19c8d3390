"""The recall database's schema, as numbered migrations.

The file's ``PRAGMA user_version`` is the version it is at. :meth:`RecallStore.migrate` applies
every migration above it, in order, in one ``BEGIN IMMEDIATE`` transaction together with the new
version number: a crash leaves the old version whole, and a second process starting at the same
moment waits for the lock, then finds nothing left to do. Never edit a released migration; add
the next one.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable

#: Version 1's tokenizer (its index is dropped by version 2).
TOKENIZER = "porter unicode61 remove_diacritics 2"
#: Since version 2 the index holds the terms memhost made (memhost.recall.terms), one token each,
#: separated by spaces: FTS5's ascii tokenizer splits them there and changes nothing else.
TERMS_TOKENIZER = "ascii"

Step = str | Callable[[sqlite3.Connection], None]

V1 = (
    # Every stored item. ``key`` makes a replayed write a no-op; ``body`` never changes except to
    # be erased by recall_forget; ``status`` is active, superseded, retired or forgotten.
    """CREATE TABLE items (
        id          INTEGER PRIMARY KEY,
        key         TEXT NOT NULL UNIQUE,
        kind        TEXT NOT NULL CHECK (kind IN ('turn', 'fact', 'session', 'subtask')),
        body        TEXT NOT NULL,
        session_id  TEXT NOT NULL DEFAULT '',
        target      TEXT NOT NULL DEFAULT '',
        origin      TEXT NOT NULL DEFAULT '',
        created_at  REAL NOT NULL,
        status      TEXT NOT NULL DEFAULT 'active'
                    CHECK (status IN ('active', 'superseded', 'retired', 'forgotten')),
        status_at   REAL,
        replaced_by INTEGER REFERENCES items (id)
    )""",
    # Index entries end with the rowid, so a session's newest turn is one probe.
    "CREATE INDEX items_by_session ON items (session_id, kind)",
    "CREATE INDEX items_by_fact ON items (kind, target, status)",
    "CREATE INDEX items_by_time ON items (status, created_at)",
    # What the relevance weights need: the number of active items (kept by the triggers below)
    # and, per stem, how many active items contain it (kept by the store as it writes; the
    # index's own vocabulary has the same numbers but counts them on every read).
    "CREATE TABLE counts (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
    "INSERT INTO counts (name, value) VALUES ('live', 0)",
    "CREATE TABLE terms (stem TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID",
    # The full-text index holds the active items only (external content: the text lives once,
    # in items).
    f"""CREATE VIRTUAL TABLE items_fts USING fts5(
        body, content = 'items', content_rowid = 'id', tokenize = '{TOKENIZER}')""",
    "CREATE VIRTUAL TABLE items_vocab USING fts5vocab(items_fts, 'row')",
    """CREATE TRIGGER items_added AFTER INSERT ON items WHEN new.status = 'active' BEGIN
        INSERT INTO items_fts (rowid, body) VALUES (new.id, new.body);
        UPDATE counts SET value = value + 1 WHERE name = 'live';
    END""",
    """CREATE TRIGGER items_retired AFTER UPDATE OF status ON items
    WHEN old.status = 'active' AND new.status <> 'active' BEGIN
        INSERT INTO items_fts (items_fts, rowid, body) VALUES ('delete', old.id, old.body);
        UPDATE counts SET value = value - 1 WHERE name = 'live';
    END""",
    """CREATE TRIGGER items_revived AFTER UPDATE OF status ON items
    WHEN old.status <> 'active' AND new.status = 'active' BEGIN
        INSERT INTO items_fts (rowid, body) VALUES (new.id, new.body);
        UPDATE counts SET value = value + 1 WHERE name = 'live';
    END""",
    """CREATE TRIGGER items_deleted AFTER DELETE ON items WHEN old.status = 'active' BEGIN
        INSERT INTO items_fts (items_fts, rowid, body) VALUES ('delete', old.id, old.body);
        UPDATE counts SET value = value - 1 WHERE name = 'live';
    END""",
    # The index must see the same text it was given; only forgetting may erase it.
    """CREATE TRIGGER items_body_fixed BEFORE UPDATE OF body ON items
    WHEN new.body <> old.body AND NOT (new.status = 'forgotten' AND new.body = '') BEGIN
        SELECT RAISE(ABORT, 'recall items are never edited; store a new item instead');
    END""",
)

# Version 1 kept a turn (the user's message and the reply) as one item joined by this separator.
_V1_PART_SEPARATOR = "\n\x1e\n"


def _split_turns(conn: sqlite3.Connection) -> None:
    """Each version-1 turn becomes two items, the user's message and the reply, in place of the
    pair (keys ``<key>/user`` and ``<key>/assistant``: a replayed write still stores nothing).
    A forgotten turn becomes two forgotten markers."""
    rows = conn.execute(
        "SELECT id, key, body, session_id, created_at, status, status_at FROM items "
        "WHERE kind = 'turn' AND role = '' ORDER BY id").fetchall()
    for item_id, key, body, session_id, created_at, status, status_at in rows:
        parts = body.split(_V1_PART_SEPARATOR, 1) if body else ["", ""]
        if len(parts) == 1:
            parts.append("")
        conn.execute("DELETE FROM items WHERE id = ?", (item_id,))
        for role, text in zip(("user", "assistant"), parts, strict=True):
            if status == "active" and not text.strip():
                continue
            conn.execute(
                "INSERT INTO items (key, kind, role, body, session_id, created_at, status, "
                "status_at) VALUES (?, 'turn', ?, ?, ?, ?, ?, ?)",
                (f"{key}/{role}", role, text.strip(), session_id, created_at, status, status_at))


def _index_terms(conn: sqlite3.Connection) -> None:
    """Every item's terms and length, and the statistics of the active ones, from scratch."""
    from memhost.recall.terms import terms

    df: Counter[str] = Counter()
    live = total = 0
    rows = conn.execute("SELECT id, body, status FROM items").fetchall()
    for item_id, body, status in rows:
        made = terms(body)
        distinct = sorted(set(made))
        conn.execute("UPDATE items SET terms = ?, length = ? WHERE id = ?",
                     (" ".join(made), len(made), item_id))
        if status == "active":
            df.update(distinct)
            live += 1
            total += len(made)
    conn.execute("DELETE FROM terms")
    conn.executemany("INSERT INTO terms (stem, df) VALUES (?, ?)", sorted(df.items()))
    conn.execute("UPDATE counts SET value = ? WHERE name = 'live'", (live,))
    conn.execute("INSERT INTO counts (name, value) VALUES ('length', ?)", (total,))


V2: tuple[Step, ...] = (
    # A turn is two items (role user / assistant); items carry the terms memhost made of their
    # text (in order, space-separated, repeats kept) and their length in terms: the ranking
    # reads term frequencies and lengths from them.
    "ALTER TABLE items ADD COLUMN role TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE items ADD COLUMN terms TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE items ADD COLUMN length INTEGER NOT NULL DEFAULT 0",
    "DROP TRIGGER items_added",
    "DROP TRIGGER items_retired",
    "DROP TRIGGER items_revived",
    "DROP TRIGGER items_deleted",
    "DROP TRIGGER items_body_fixed",
    "DROP TABLE items_vocab",
    "DROP TABLE items_fts",
    _split_turns,
    _index_terms,
    f"""CREATE VIRTUAL TABLE items_terms USING fts5(
        terms, content = 'items', content_rowid = 'id', tokenize = '{TERMS_TOKENIZER}')""",
    "INSERT INTO items_terms (rowid, terms) SELECT id, terms FROM items WHERE status = 'active'",
    # As in version 1: the index holds the active items only, and the counts follow them.
    """CREATE TRIGGER items_added AFTER INSERT ON items WHEN new.status = 'active' BEGIN
        INSERT INTO items_terms (rowid, terms) VALUES (new.id, new.terms);
        UPDATE counts SET value = value + 1 WHERE name = 'live';
        UPDATE counts SET value = value + new.length WHERE name = 'length';
    END""",
    """CREATE TRIGGER items_retired AFTER UPDATE OF status ON items
    WHEN old.status = 'active' AND new.status <> 'active' BEGIN
        INSERT INTO items_terms (items_terms, rowid, terms) VALUES ('delete', old.id, old.terms);
        UPDATE counts SET value = value - 1 WHERE name = 'live';
        UPDATE counts SET value = value - old.length WHERE name = 'length';
    END""",
    """CREATE TRIGGER items_revived AFTER UPDATE OF status ON items
    WHEN old.status <> 'active' AND new.status = 'active' BEGIN
        INSERT INTO items_terms (rowid, terms) VALUES (new.id, new.terms);
        UPDATE counts SET value = value + 1 WHERE name = 'live';
        UPDATE counts SET value = value + new.length WHERE name = 'length';
    END""",
    """CREATE TRIGGER items_deleted AFTER DELETE ON items WHEN old.status = 'active' BEGIN
        INSERT INTO items_terms (items_terms, rowid, terms) VALUES ('delete', old.id, old.terms);
        UPDATE counts SET value = value - 1 WHERE name = 'live';
        UPDATE counts SET value = value - old.length WHERE name = 'length';
    END""",
    # The index must see the same terms it was given; only forgetting may erase the text.
    """CREATE TRIGGER items_body_fixed BEFORE UPDATE OF body, terms ON items
    WHEN (new.body <> old.body OR new.terms <> old.terms)
         AND NOT (new.status = 'forgotten' AND new.body = '' AND new.terms = '') BEGIN
        SELECT RAISE(ABORT, 'recall items are never edited; store a new item instead');
    END""",
)

V3: tuple[Step, ...] = (
    # Semantic recall: an item's vector (little-endian float32, the layout sqlite-vec reads),
    # tagged with the model that made it. A forgotten item's vector goes with its text.
    """CREATE TABLE vectors (
        item_id INTEGER PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
        model   TEXT NOT NULL,
        vector  BLOB NOT NULL
    )""",
    """CREATE TRIGGER vectors_forgotten AFTER UPDATE OF status ON items
    WHEN new.status = 'forgotten' BEGIN
        DELETE FROM vectors WHERE item_id = new.id;
    END""",
)

#: (version, steps), oldest first.
MIGRATIONS: tuple[tuple[int, tuple[Step, ...]], ...] = (
    (1, V1),
    (2, V2),
    (3, V3),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]
