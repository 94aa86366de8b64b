/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef KIST_NS_H
#define KIST_NS_H

#include "layer.h"

/* CLONE_NEW* flags for the clone of the container init (new namespaces only). */
unsigned long kist_ns_clone_flags (const struct kist_spec *s);
/* Combinations kist refuses up front, with the reason. */
int kist_ns_check (const struct kist_spec *s, struct kist_error **err);
/* Capture the host's namespace inodes into ctx (parent, before clone). */
int kist_ns_host_inodes (struct kist_ctx *ctx, struct kist_error **err);
/* The inode number of the namespace a /proc/PID/ns/NAME link names (PATH
 * relative to DIRFD, or absolute), from the link's text: 0, or -errno. */
int kist_ns_ino (int dirfd, const char *path, uint64_t *ino);
/* "mnt" for KIST_NS_MOUNT etc. (the /proc/PID/ns/ file name). */
const char *kist_ns_proc_name (enum kist_ns_type t);

/* The sysctl that keeps user namespaces from being created, with the fix,
 * or NULL (caller frees). */
char *kist_ns_userns_hint (void);

#endif
