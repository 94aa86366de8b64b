/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: resolving paths inside the container root.  Never by string
 * concatenation: every lookup starts at a directory fd of the root and uses
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), so an absolute or ".."
 * symlink in the image stays inside the root. */
#ifndef KIST_RESOLVE_H
#define KIST_RESOLVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* openat2(dirfd, path, flags|O_CLOEXEC, mode, resolve (RESOLVE_* flags)),
 * retried when a concurrent rename or mount made it fail with EAGAIN.
 * Returns the fd or -errno (no message: the callers name the context). */
int kist_openat2 (int dirfd, const char *path, int flags, mode_t mode, uint64_t resolve);

/* openat2(rootfd, path, flags|O_CLOEXEC, mode, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS).
 * Returns the fd or a negative errno with *err filled (message names path). */
int kist_resolve_open (int rootfd, const char *path, int flags, mode_t mode, struct kist_error **err);

enum kist_mkpath_kind
{
  KIST_MKPATH_DIR,    /* final component is a directory */
  KIST_MKPATH_FILE    /* final component is a regular file (created empty) */
};

/* Make sure path exists inside the root, creating missing parent directories
 * (mode 0755) and the final component (a directory with mode, or an empty
 * file), each step resolved in the root.  Returns an O_PATH|O_CLOEXEC fd of the
 * final component (a mount target for move_mount), or negative + *err. */
int kist_resolve_mkpath (int rootfd, const char *path, enum kist_mkpath_kind kind, mode_t mode,
                         struct kist_error **err);

/* "/proc/self/fd/N" for fd N, in a caller buffer of at least 32 bytes. */
const char *kist_fd_path (int fd, char buf[static 32]);


/* ---- additions (fs helper) ---- */

/* Mount id (statx STATX_MNT_ID) of dirfd/path; path "" means dirfd itself
 * (AT_EMPTY_PATH).  flags: extra AT_* flags (AT_SYMLINK_NOFOLLOW). */
int kist_mnt_id_at (int dirfd, const char *path, int flags, uint64_t *mnt_id,
                    struct kist_error **err);


/* ---- additions (exact paths) ---- */

/* Like kist_resolve_mkpath, but no component of path may be a symlink
 * (RESOLVE_NO_SYMLINKS, dangling ones included): the result is the plain
 * directory or file at exactly that path in the root.  A symlink on the way
 * fails with ELOOP and a message naming it, its target and the fix.  For
 * mounts that must land where they are configured (proc, sysfs, /dev). */
int kist_resolve_mkpath_exact (int rootfd, const char *path, enum kist_mkpath_kind kind,
                               mode_t mode, struct kist_error **err);

/* kist_resolve_open with RESOLVE_NO_SYMLINKS as well (ELOOP on a symlink). */
int kist_resolve_open_exact (int rootfd, const char *path, int flags, mode_t mode,
                             struct kist_error **err);

/* The absolute path made lexical: no empty, "." or ".." components (".."
 * at the root stays there), no trailing "/"; "/" for the root.  *out is
 * malloc'd.  Fails with EINVAL on a relative path. */
int kist_resolve_clean (const char *path, char **out, struct kist_error **err);

/* Is path p dir itself or below it (string comparison by components; a
 * trailing "/" of dir is ignored, every path is under "/")? */
bool kist_path_is_or_under (const char *p, const char *dir);

#endif
