#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

/// `SQLITE_TRANSIENT` is a macro cast that does not import into Swift.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

/// Extended result codes are macro expressions, which do not import into Swift.
static inline int csqlite_constraint_unique(void) { return SQLITE_CONSTRAINT_UNIQUE; }
static inline int csqlite_constraint_primarykey(void) { return SQLITE_CONSTRAINT_PRIMARYKEY; }
static inline int csqlite_constraint_foreignkey(void) { return SQLITE_CONSTRAINT_FOREIGNKEY; }

/// Flushes the write-ahead log of `db`'s main database to stable storage (fdatasync), through SQLite's own handle of
/// the file: what a commit at `synchronous=FULL` does, done once for every commit that happened before it.
static inline int csqlite_sync_wal(sqlite3 *db) {
    sqlite3_file *file = 0;
    int status = sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file);
    if (status != SQLITE_OK) return status;
    if (file == 0 || file->pMethods == 0) return SQLITE_MISUSE;
    return file->pMethods->xSync(file, SQLITE_SYNC_NORMAL);
}

/// Turns off SQLite's memory statistics (`SQLITE_CONFIG_MEMSTATUS`), which take a process-wide mutex on every
/// allocation; `sqlite3_config` is variadic, which Swift cannot call. Only effective before SQLite initializes (the
/// first connection): afterwards it returns `SQLITE_MISUSE` and changes nothing.
static inline int csqlite_disable_memory_statistics(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

#endif
