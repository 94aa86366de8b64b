/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: its own executable (selfexe.c). */
#ifndef KIST_SELFEXE_H
#define KIST_SELFEXE_H

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

#endif
