// Debian's libsqlite3 is built with the session extension and the preupdate hook;
// these defines make their declarations visible in sqlite3.h.
#ifndef SITEGEN_CSQLITE_SHIM_H
#define SITEGEN_CSQLITE_SHIM_H
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <sqlite3.h>

// sqlite3_config takes variable arguments, which Swift cannot pass: one wrapper per option sitegen sets.
static inline int sitegen_sqlite3_config_memstatus(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}
#endif
