/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the container's procfs, read by the layers that verify what the
 * kernel now says (design.md section 2, step 3). */
#ifndef KIST_PROCFS_H
#define KIST_PROCFS_H

#include "layer.h"

/* Open PATH (absolute, under /proc) of the container's proc.  /proc is
 * resolved inside the container root (ctx->rootfs_fd; the current root when
 * it is -1) without magic links and must be the root directory of a procfs
 * (not a plain directory or volume with a fake tree, CVE-2019-16884, nor a
 * procfs subdirectory bound there); the rest of PATH is resolved beneath it
 * with openat2 RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS, so
 * a file or directory mounted over an entry on the way (a bind of another
 * procfs file, CVE-2025-52881, or of a volume's file) is refused, not written
 * through.  Each refusal is an EXDEV error that names the fix.  O_NOFOLLOW in
 * flags refuses a symlink anywhere on the path (ELOOP), not only at the end:
 * for /proc/sys, not for /proc/self (itself a symlink).  O_CLOEXEC always.
 * Returns the fd, or a negative errno with *err filled (ENOENT when the file
 * is missing). */
int kist_proc_open (const struct kist_ctx *ctx, const char *path, int flags,
                    struct kist_error **err);

/* kist_proc_open (O_RDONLY | flags) and read the whole file (at most 1 MiB)
 * into a NUL-terminated *out. */
int kist_proc_read (const struct kist_ctx *ctx, const char *path, int flags, char **out,
                    struct kist_error **err);

/* The value after "Field:" in /proc/self/status text, without the blanks
 * before it and the newline (newly allocated), or NULL when there is no
 * such line. */
char *kist_proc_status_field (const char *status, const char *field);

/* Is the namespace the caller is in now the host's one (as the parent
 * captured it in ctx->host_ns_*), by the container's /proc/self/ns?
 * 1 yes, 0 no, -1 unknown (nothing captured, or no procfs at /proc). */
int kist_proc_ns_is_host (const struct kist_ctx *ctx, enum kist_ns_type t);

#endif
