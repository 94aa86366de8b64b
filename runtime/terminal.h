/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the terminal layer (process.terminal, --console-socket, exec --tty).
 *
 * The pty comes from the container's own devpts instance, opened from the
 * container root with openat2 (no symlinks, no magic links) and checked to
 * be a devpts ptmx that is not the host's; the slave is taken from the
 * master with TIOCGPTPEER, never by a /dev/pts/N path; /dev/console is a
 * bind of that slave fd (open_tree), read back by device number.  The
 * master goes to the parent over the sync socket, and from there to the
 * --console-socket (SCM_RIGHTS, as runc) or to the foreground relay. */
#ifndef KIST_TERMINAL_H
#define KIST_TERMINAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "layer.h"

/* Parent, before clone (create, run, exec): the combination of
 * process.terminal, --console-socket and whether the caller stays in the
 * foreground to relay (foreground: run or exec without --detach), checked
 * as runc does; and the host's devpts device, so that the child can prove
 * its pty is not from it.  Records the "terminal" entry when no terminal
 * is asked for. */
int kist_terminal_prepare (struct kist_ctx *ctx, struct kist_report *r, bool foreground,
                           struct kist_error **err);

/* Child (the init after dev, an exec'd process before the user switch): the
 * layer "terminal": the pty, consoleSize, /dev/console (ctx->console), the
 * slave fchown'ed to process.user.uid, the master sent over ctx->sync_fd
 * (KIST_SYNC_PTY); keeps the slave in ctx->pty_slave. */
int kist_terminal_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);

/* Child (the init, once set up): the slave as stdin, stdout and stderr
 * already while it waits for start, as runc's init has them. */
void kist_terminal_stdio (struct kist_ctx *ctx);

/* Child, right after setsid (before any filter): the slave becomes the
 * controlling terminal (TIOCSCTTY) and stdin, stdout, stderr; read back
 * with tcgetsid.  Returns the pty number, -1 when there is no terminal, or
 * < -1 with *err. */
int kist_terminal_attach (struct kist_ctx *ctx, struct kist_error **err);

/* Parent, when the child's KIST_SYNC_PTY packet came (takes master): with
 * --console-socket, sent there now, before the process runs (as runc);
 * else kept in ctx->tty.master for the relay, with the caller's window size
 * set on it now. */
int kist_terminal_take (struct kist_ctx *ctx, int master, struct kist_error **err);

/* Parent, once the child is ready: hand the master received in
 * ctx->pty_master to --console-socket (and close it), or leave it there
 * for kist_terminal_relay; notes the report's "terminal" entry. */
int kist_terminal_deliver (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);

/* Send a pty master over the AF_UNIX stream socket at path (SCM_RIGHTS,
 * with "/dev/ptmx" as the data, as runc). */
int kist_terminal_send (const char *path, int master, struct kist_error **err);

/* Foreground: relay the caller's stdin to master and master to stdout until
 * the process pid (a child of kist, not reaped here) exits and its output is
 * drained.  The caller's terminal, if stdin is one, is in raw mode meanwhile
 * and restored on every return; its window size is copied to the pty now
 * and on every SIGWINCH.  Closes master. */
int kist_terminal_relay (int master, pid_t pid, struct kist_error **err);

#endif
