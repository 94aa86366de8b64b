/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: small shared helpers: cleanup attributes, allocation, file I/O. */
#ifndef KIST_UTIL_H
#define KIST_UTIL_H

#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "error.h"

#define KIST_ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))

void kist_freep (void *p);          /* free(*(void **)p) */
void kist_closep (int *fd);         /* close(*fd) if >= 0 */
void kist_fclosep (FILE **f);
void kist_closedirp (DIR **d);      /* closedir(*d) if set */
/* readdir without "." and "..": NULL at the end (errno 0) or on an error
 * (errno set). */
struct dirent *kist_readdir (DIR *d);
void kist_strvfreep (char ***v);    /* NULL-terminated string vector */
#define _cleanup_free_ __attribute__ ((cleanup (kist_freep)))
#define _cleanup_close_ __attribute__ ((cleanup (kist_closep)))
#define _cleanup_fclose_ __attribute__ ((cleanup (kist_fclosep)))
#define _cleanup_dir_ __attribute__ ((cleanup (kist_closedirp)))
#define _cleanup_strv_ __attribute__ ((cleanup (kist_strvfreep)))

/* Hand over ownership: returns *pp and sets *pp to NULL. */
static inline void *
kist_steal_ptr (void *pp)
{
  void **p = (void **) pp;
  void *r = *p;
  *p = NULL;
  return r;
}
#define steal_pointer(pp) kist_steal_ptr (pp)
static inline int
steal_fd (int *fd)
{
  int r = *fd;
  *fd = -1;
  return r;
}

/* Allocation that aborts on OOM (the runtime cannot do anything useful then). */
void *xmalloc (size_t n);
void *xcalloc (size_t n, size_t m);
void *xrealloc (void *p, size_t n);
/* *buf with room for at least need bytes: its capacity doubled from min_cap
 * (or from *cap) until it is enough. */
void kist_grow (char **buf, size_t *cap, size_t need, size_t min_cap);
char *xstrdup (const char *s);       /* NULL -> NULL */
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
char *xvasprintf (const char *fmt, va_list ap) __attribute__ ((format (printf, 1, 0)));
void kist_strv_free (char **v);
size_t kist_strv_len (char *const *v);

/* Read a whole file (at most max bytes; larger -> EFBIG error) into a
 * NUL-terminated buffer.  dirfd may be AT_FDCWD.  O_CLOEXEC always. */
int kist_read_file_at (int dirfd, const char *path, size_t max, char **out, size_t *len,
                       struct kist_error **err);
int kist_read_fd (int fd, size_t max, char **out, size_t *len, struct kist_error **err);

/* Write data to an existing file (O_WRONLY|O_TRUNC|O_CLOEXEC|O_NOFOLLOW), fully. */
int kist_write_file_at (int dirfd, const char *path, const void *data, size_t len,
                        struct kist_error **err);

/* Atomically replace dirfd/name: write a temp file in dirfd, fsync-free,
 * exchange it with an existing name (RENAME_EXCHANGE, then unlink the old)
 * or rename it into place (see util.c for why). */
int kist_write_file_atomic (int dirfd, const char *name, const void *data, size_t len,
                            mode_t mode, struct kist_error **err);

/* Create dirfd/name (O_EXCL, mode) and write data to it in place, no temp
 * file: only for a directory no reader looks into yet (a private temporary
 * state dir).  A failed write removes the file. */
int kist_write_file_new (int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                         struct kist_error **err);

/* The same for a path (relative to the cwd): its directory is opened and
 * the file replaced there.  A path that names a directory (ending in `/`,
 * `.` or `..`) is refused (EISDIR). */
int kist_write_file_atomic_path (const char *path, const void *data, size_t len, mode_t mode,
                                 struct kist_error **err);

/* write()/read() loops that retry on EINTR and short writes.  Return 0 or -errno. */
int kist_write_all (int fd, const void *buf, size_t len);
ssize_t kist_read_all (int fd, void *buf, size_t len);

/* Parse a decimal unsigned integer that fills the whole string. */
int kist_parse_u64 (const char *s, uint64_t *out);
int kist_parse_int (const char *s, int *out);

/* SIZE: decimal digits with an optional binary unit k, m, g, t (powers of
 * 1024, either case) and an optional trailing b: "32M", "256mb", "4096".
 * runc_syntax: also a fraction of the unit (truncated to whole bytes), the
 * unit p and an i after the unit ("1.5g", "512MiB"), as runc update takes
 * them (docker/go-units RAMInBytes).  Returns 0, -EINVAL (not a size) or
 * -ERANGE (more than UINT64_MAX bytes). */
int kist_parse_size (const char *s, bool runc_syntax, uint64_t *out);

/* Trim trailing whitespace/newlines in place, returns s. */
char *kist_rstrip (char *s);

/* Is the string a member of the comma-separated list? ("all" matches anything) */
bool kist_list_contains (const char *csv, const char *item);

/* The canonical absolute path of what path names (symlinks resolved), as
 * realpath(3), from one open and the /proc/self/fd link instead of a
 * readlink per component; realpath itself where /proc cannot tell (not
 * mounted, a deleted or unreachable directory).  NULL with errno set. */
char *kist_realpath (const char *path);
/* The same for an open fd (NULL where /proc cannot tell). */
char *kist_fd_realpath (int fd);
/* The text of the /proc/self/fd/FD link as it is, "(deleted)" and all
 * (for messages; NULL when it cannot be read). */
char *kist_fd_link (int fd);

/* Current time as RFC 3339 UTC with nanoseconds ("2026-11-29T13:56:21.123456789Z"). */
char *kist_time_rfc3339 (void);
/* The same for the CLOCK_REALTIME time *ts (computed without the time zone). */
struct timespec;
char *kist_time_rfc3339_at (const struct timespec *ts);

/* Is dirfd/name (never followed) the root of a mount visible in our mount
 * namespace?  false when it cannot be told (statx failed). */
bool kist_is_mount_root (int dirfd, const char *name);

/* Connect an AF_UNIX stream socket (close-on-exec) to path; a path too long
 * for sun_path is reached through an O_PATH fd of its directory.  what
 * names the path in errors ("--console-socket"), hint follows the connect
 * error ("is the agent listening?").  Returns the fd or -1 with *err. */
int kist_unix_connect (const char *path, const char *what, const char *hint,
                       struct kist_error **err);
/* sendmsg of len bytes of data with fd attached (SCM_RIGHTS), MSG_NOSIGNAL,
 * retried on EINTR: the bytes sent, or -errno. */
ssize_t kist_send_with_fd (int sock, const void *data, size_t len, int fd);

/* CLOCK_MONOTONIC in microseconds. */
int64_t kist_monotonic_usec (void);
/* When this kist started (main's first step, carried through the re-exec
 * from a protected copy of the binary, selfexe.c), CLOCK_MONOTONIC us; 0:
 * unknown. */
extern int64_t kist_started_usec;
/* The environment variable that carries it through the re-exec; main takes
 * it out of the environment. */
#define KIST_STARTED_ENV "_KIST_STARTED_USEC"
/* main: set kist_started_usec (from KIST_STARTED_ENV when it is a time in the
 * last 10 s, else now) and unset KIST_STARTED_ENV. */
void kist_started_init (void);

#endif
