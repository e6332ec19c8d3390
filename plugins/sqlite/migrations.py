"""The recall database's schema, as numbered migrations.

The file's ``PRAGMA user_version`` is the version it is at. :meth:`RecallStore.migrate` applies
every migration above it, in order, in one ``BEGIN IMMEDIATE`` transaction together with the new
version number: a crash leaves the old version whole, and a second process starting at the same
moment waits for the lock, then finds nothing left to do. Never edit a released migration; add
the next one.
"""

from __future__ import annotations

TOKENIZER = "porter unicode61 remove_diacritics 2"

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

#: (version, statements), oldest first.
MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, V1),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]
