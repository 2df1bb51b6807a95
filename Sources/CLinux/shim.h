// Linux system calls that Glibc's Swift module does not show. Empty elsewhere: Swift code calls these only
// under `#if os(Linux)` (SiteBuild's ExchangeRenaming), and other systems get PortableRenaming instead.
#ifndef SITEGEN_CLINUX_SHIM_H
#define SITEGEN_CLINUX_SHIM_H
#ifdef __linux__
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/// Swaps the files at `first` and `second` atomically (renameat2 with RENAME_EXCHANGE); 0, or -1 and errno.
static inline int sitegen_exchange(const char *first, const char *second) {
    return (int)syscall(SYS_renameat2, AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE);
}

/// Renames `from` to `to` unless something is at `to` (renameat2 with RENAME_NOREPLACE); 0, or -1 and errno
/// (EEXIST when a file is there, EINVAL where the file system cannot check).
static inline int sitegen_rename_noreplace(const char *from, const char *to) {
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}
#endif /* __linux__ */
#endif
