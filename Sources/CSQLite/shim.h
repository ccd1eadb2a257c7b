#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

/// `SQLITE_TRANSIENT` is a macro cast that does not import into Swift.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

/// Extended result codes are macro expressions, which do not import into Swift.
static inline int csqlite_constraint_unique(void) { return SQLITE_CONSTRAINT_UNIQUE; }
static inline int csqlite_constraint_primarykey(void) { return SQLITE_CONSTRAINT_PRIMARYKEY; }
static inline int csqlite_constraint_foreignkey(void) { return SQLITE_CONSTRAINT_FOREIGNKEY; }

#endif
