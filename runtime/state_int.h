/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: what the state files (state.c, state_root.c, state_dir.c,
 * state_status.c) share; not for other modules (they use state.h). */
#ifndef KIST_STATE_INT_H
#define KIST_STATE_INT_H

#include <stdbool.h>

#include "error.h"
#include "sha256.h"

#define KIST_STATE_FILE "state.json"

/* Make an error whose message does not end in strerror but keeps errnum. */
int state_error_plain (struct kist_error **err, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* The path of an open fd, for messages ("?" if /proc is unavailable). */
char *state_fd_path (int fd);

/* An id as it may be shown in a message: non-printable bytes escaped,
 * long ids cut. */
char *state_id_for_message (const char *id);

/* The name of the state dir of id in the state root (the id itself, or "@"
 * + the hex SHA-256 of a long id, in buf): see state_dir.c. */
const char *state_dir_name (const char *id, char buf[static 2 * KIST_SHA256_LEN + 2]);

/* Is name such a hashed state dir name? */
bool state_is_hashed_name (const char *name);

/* kist_state_write for a private temporary state dir no reader looks into
 * yet: state.json is created and written in place (no temp file, no
 * rename).  A kist killed in the middle leaves the locked temporary dir,
 * which `kist gc` removes once the lock is gone. */
struct kist_state;
int state_write_new (int dirfd, const struct kist_state *s, struct kist_error **err);

#endif
