/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the Landlock layer (report entry `landlock`): a ruleset of
 * filesystem paths, TCP bind/connect and IPC scoping, restricted onto the
 * container's process after no_new_privileges and before the seccomp
 * filter, then proven in force by probes that only the new domain can make
 * fail (landlock.c).  Requested by kist sandbox only (kist_ctx.landlock;
 * NULL: recorded as not requested).  The entry point, kist_landlock_apply,
 * is declared with the other layers in layer.h. */
#ifndef KIST_LANDLOCK_H
#define KIST_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct kist_landlock_path
{
  char *path;     /* absolute path as the process sees it when the layer runs (after pivot_root in a
                     namespaced sandbox; the host path in the fallback) */
  bool write;     /* false: read + execute (files and dirs); true: every filesystem right */
  bool optional;  /* a path that may be missing (skipped, said in the detail) */
  uint64_t access; /* 0: as `write` says; else exactly these LANDLOCK_ACCESS_FS_* rights
                      (kist_landlock_access_for masks them to the ABI and to a file's rights) */
  bool probe;     /* the filesystem probe's place: a directory the file system lets the process
                     create entries in, whose rights grant no MAKE_DIR: a mkdir there must
                     work before the restriction and fail with EACCES after it */
};

struct kist_landlock_rules
{
  struct kist_landlock_path *paths;
  size_t n_paths;
  bool deny_tcp;      /* deny TCP bind and connect (ABI >= 4) */
  bool scope;         /* ABI >= 6: LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET */
};

void kist_landlock_rules_free (struct kist_landlock_rules *r);
static inline void
kist_landlock_rules_freep (struct kist_landlock_rules **r)
{
  kist_landlock_rules_free (*r);
  *r = NULL;
}
#define _cleanup_landlock_ __attribute__ ((cleanup (kist_landlock_rules_freep)))

/* Append a rule for path (copied); returns it, for the caller to set access
 * or probe. */
struct kist_landlock_path *kist_landlock_rules_add (struct kist_landlock_rules *r,
                                                    const char *path, bool write, bool optional);

/* The ABI version the kernel offers (>= 1), or a negative errno (ENOSYS, EOPNOTSUPP: Landlock not
 * built in or disabled at boot). */
int kist_landlock_abi (void);

/* ---- the rights (pure functions, unit tested) */

/* The filesystem rights of the Linux UAPI that kist uses (landlock.c defines
 * the ones newer than the system headers). */
#define KIST_LL_FS_EXECUTE (1ULL << 0)
#define KIST_LL_FS_WRITE_FILE (1ULL << 1)
#define KIST_LL_FS_READ_FILE (1ULL << 2)
#define KIST_LL_FS_READ_DIR (1ULL << 3)
#define KIST_LL_FS_REMOVE_FILE (1ULL << 5)
#define KIST_LL_FS_MAKE_DIR (1ULL << 7)
#define KIST_LL_FS_MAKE_REG (1ULL << 8)
#define KIST_LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define KIST_LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define KIST_LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
/* read = execute, read_file, read_dir */
#define KIST_LL_FS_READ (KIST_LL_FS_EXECUTE | KIST_LL_FS_READ_FILE | KIST_LL_FS_READ_DIR)

/* Every filesystem right ABI abi knows (0 for abi < 1). */
uint64_t kist_landlock_fs_rights (int abi);
/* The rights a rule for p gets under abi: p->access or read / every right,
 * masked to the ABI, and to the rights a non-directory can carry when
 * !is_dir. */
uint64_t kist_landlock_access_for (const struct kist_landlock_path *p, int abi, bool is_dir);
/* Network rights handled (TCP bind and connect when deny_tcp, ABI >= 4) and
 * scopes (ABI >= 6 with scope) of rules under abi. */
uint64_t kist_landlock_net_rights (const struct kist_landlock_rules *r, int abi);
uint64_t kist_landlock_scopes (const struct kist_landlock_rules *r, int abi);
/* The short name of the rights of one rule in the detail: "rw" (every
 * right, or every right a file can carry), "ro" (execute and read_file,
 * read_dir when given), "ro+NAME+NAME" for what is granted beyond read, else
 * the names joined by "+" (newly allocated). */
char *kist_landlock_access_name (uint64_t access, int abi);

#endif
