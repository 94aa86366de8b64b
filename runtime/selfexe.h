/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: its own executable (selfexe.c). */
#ifndef KIST_SELFEXE_H
#define KIST_SELFEXE_H

#include <sys/types.h>

#include "error.h"

/* Refuse to run setuid, setgid or with file capabilities (AT_SECURE). */
int kist_self_refuse_setuid (struct kist_error **err);

/* Before entering a container: unless /proc/self/exe is already a sealed
 * memfd or on a read-only mount (or the caller cannot write it), move the
 * running image onto a detached read-only bind mount of the binary (root:
 * its mappings and exe_file, no exec), else re-execute argv from that mount
 * or from a sealed memfd copy.  Returns 0 when the running image is
 * protected (or needs no protection); does not return when it re-executed;
 * negative with *err on failure. */
int kist_self_protect (char **argv, struct kist_error **err);

/* Close what kist_self_protect kept open (the rebind's read-only clone,
 * whose last close waits for an RCU grace period): called where kist waits
 * for the container's process anyway; at exit at the latest. */
void kist_self_protect_settle (void);

/* Who the container's processes are on the host, for a caller that knows
 * before anything enters it: its uid and gid (no user namespace), and that
 * they never hold a capability (empty bounding set, no_new_privs). */
struct kist_inside_creds
{
  uid_t uid;
  gid_t gid;
};
/* kist_self_protect, except that nothing is done when those processes
 * cannot write the binary through any path (not its owner, no group or
 * other write bit, no ACL, a file system that enforces the mode bits
 * itself; the debug log says so); in NULL: as kist_self_protect. */
int kist_self_protect_for (char **argv, const struct kist_inside_creds *in,
                           struct kist_error **err);

#endif
