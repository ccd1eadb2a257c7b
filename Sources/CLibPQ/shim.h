#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
#include <libpq-fe.h>

/// The `PG_DIAG_*` field codes are character-literal macros, which do not import into Swift.
static inline int clibpq_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int clibpq_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
static inline int clibpq_diag_constraint_name(void) { return PG_DIAG_CONSTRAINT_NAME; }
static inline int clibpq_diag_table_name(void) { return PG_DIAG_TABLE_NAME; }
static inline int clibpq_diag_column_name(void) { return PG_DIAG_COLUMN_NAME; }

#endif
