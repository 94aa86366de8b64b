/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: /proc/PID/mountinfo, parsed (proc(5)): one reader for every layer
 * and verifier that looks at mounts (rootfs.c, mounts.c, cgroup_mount.c,
 * verify.c). */
#ifndef KIST_MOUNTINFO_H
#define KIST_MOUNTINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* ID PARENT MAJ:MIN ROOT POINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER */
struct kist_mountinfo_entry
{
  uint64_t id, parent;
  char *root;       /* root of the mount within its filesystem (unescaped) */
  char *point;      /* mount point, relative to the reader's root (unescaped) */
  char *opts;       /* per-mount options: "rw,nosuid,relatime" */
  char *optional;   /* optional fields, space separated ("shared:1 master:2"), "" */
  char *fstype;
  char *source;     /* (unescaped) */
  char *super_opts; /* the superblock's options: "rw,size=65536k" */
};

struct kist_mountinfo
{
  struct kist_mountinfo_entry *e;
  size_t n;
};

void kist_mountinfo_free (struct kist_mountinfo *t);
#define _cleanup_mountinfo_ __attribute__ ((cleanup (kist_mountinfo_free)))

/* Read and parse dirfd/path: ("mountinfo" under a /proc/PID directory fd,
 * or AT_FDCWD and "/proc/self/mountinfo").  A malformed line is an EINVAL
 * error naming it. */
int kist_mountinfo_read (int dirfd, const char *path, struct kist_mountinfo *t,
                         struct kist_error **err);

/* The entry of mount id, or NULL. */
const struct kist_mountinfo_entry *kist_mountinfo_find (const struct kist_mountinfo *t,
                                                        uint64_t id);

/* Does the optional-field list hold a field starting with tag ("shared:")
 * or equal to it ("unbindable")? */
bool kist_mountinfo_has_optional (const struct kist_mountinfo_entry *e, const char *tag);

/* Is opt ("ro", "nosuid") one of the comma-separated options? */
bool kist_mountinfo_has_opt (const char *opts, const char *opt);

/* ---- a layer's mounts, verified from outside (verify.c)
 *
 * A layer that made mounts records, in its report entry's expectation,
 * "mnts=" and a comma-separated list of "ID:FLAGS[:FSTYPE]": the mount id,
 * its flags as fstatvfs showed them after the layer's own read-back (r
 * read-only, w writable, ? read-only decided by a later layer; s nosuid, d
 * nodev, x noexec), and the filesystem type it must be.  The parent then
 * finds each in the waiting process's /proc/PID/mountinfo. */

/* Append one mount to *list (newly allocated; NULL starts one). */
/* One fstatfs(2) of fd: the file system's magic in sf->f_type and the mount
 * flags (ST_*, as statvfs's f_flag) in *st_flags (fstatvfs is an fstatfs
 * too; it is called only on a kernel whose f_flags are not valid). */
struct statfs;
int kist_fd_statfs_flags (int fd, struct statfs *sf, unsigned long *st_flags);

void kist_mountinfo_expect_add (char **list, uint64_t id, unsigned long st_flags, bool ro_later,
                                const char *fstype);

/* NULL when every mount of list is in t with those flags and type, else
 * why not (newly allocated).  what names the mountinfo in messages. */
char *kist_mountinfo_check (const struct kist_mountinfo *t, const char *list, const char *what);

#endif
