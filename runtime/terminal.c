/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the terminal layer.  See terminal.h for the contract.
 *
 *   parent  kist_terminal_prepare   the flags as runc checks them, the host's devpts
 *   child   kist_terminal_apply     the pty of the container's devpts, consoleSize,
 *                                   /dev/console, the master to the parent
 *   child   kist_terminal_attach    after setsid: controlling terminal, stdio
 *   parent  kist_terminal_deliver   the master to --console-socket, or kept
 *   parent  kist_terminal_relay     foreground: the caller's terminal <-> the pty
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/openat2.h>

#include "log.h"
#include "resolve.h"
#include "seccomp.h"
#include "sync.h"
#include "terminal.h"
#include "util.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO ('T', 0x41)
#endif

/* The devpts ptmx node and the first pty major (UNIX98_PTY_SLAVE_MAJOR). */
#define PTMX_MAJOR 5
#define PTMX_MINOR 2
#define PTS_MAJOR 136

static const char devpts_hint[]
    = "a terminal needs a devpts mount of its own at /dev/pts (add {\"destination\": "
      "\"/dev/pts\", \"type\": \"devpts\", \"source\": \"devpts\", \"options\": [\"nosuid\", "
      "\"noexec\", \"newinstance\", \"ptmxmode=0666\", \"mode=0620\"]} to mounts)";

int
kist_terminal_prepare (struct kist_ctx *ctx, struct kist_report *r, bool foreground,
                       struct kist_error **err)
{
  const struct kist_process *p = ctx->spec->process;
  if (!p->terminal)
    {
      if (ctx->console_socket)
        return kist_error_make (err, EINVAL,
                                "--console-socket `%s`: process.terminal is false, so there is no "
                                "pty to send (runc refuses this too); set \"terminal\": true or "
                                "drop --console-socket",
                                ctx->console_socket);
      kist_report_skip (r, "terminal", "process.terminal is false: the process has kist's stdio");
      return 0;
    }
  if (ctx->console_socket == NULL && !foreground)
    return kist_error_make (err, EINVAL,
                            "process.terminal is true, but kist does not stay in the foreground "
                            "and no --console-socket was given, so nothing would receive the pty "
                            "master; pass --console-socket PATH (an AF_UNIX socket), run in the "
                            "foreground (no --detach), or set \"terminal\": false");
  /* The host's devpts, to prove the container's is another instance. */
  struct stat st;
  struct statfs sf;
  if (stat ("/dev/pts/ptmx", &st) == 0 && statfs ("/dev/pts", &sf) == 0
      && sf.f_type == DEVPTS_SUPER_MAGIC)
    ctx->tty.host_dev = st.st_dev;
  return 0;
}

/* The ptmx of the container's devpts: openat2 from the container root, no
 * symlink (the image's /dev/ptmx and /dev/pts entries are hostile), no
 * magic link; on devpts, the ptmx node, not the host's instance. */
static int
open_ptmx (struct kist_ctx *ctx, struct stat *st, char **why)
{
  int fd = kist_openat2 (ctx->rootfs_fd, "dev/pts/ptmx", O_RDWR | O_NOCTTY | O_NONBLOCK, 0,
                         RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  if (fd < 0)
    {
      *why = xasprintf ("open /dev/pts/ptmx in the container (no symlink followed): %s; %s",
                        strerror (-fd), devpts_hint);
      errno = -fd;
      return -1;
    }
  struct statfs sf;
  const char *bad = NULL;
  if (fstatfs (fd, &sf) < 0 || fstat (fd, st) < 0)
    bad = "fstat failed";
  else if (sf.f_type != DEVPTS_SUPER_MAGIC)
    bad = "it is not on a devpts filesystem";
  else if (!S_ISCHR (st->st_mode) || st->st_rdev != makedev (PTMX_MAJOR, PTMX_MINOR))
    bad = "it is not the ptmx node (5:2)";
  else if (ctx->tty.host_dev != 0 && st->st_dev == ctx->tty.host_dev)
    bad = "it is the host's devpts instance (a bind of the host's /dev/pts), not the "
          "container's own";
  if (bad)
    {
      close (fd);
      *why = xasprintf ("/dev/pts/ptmx in the container: %s; %s", bad, devpts_hint);
      errno = EPERM;
      return -1;
    }
  return fd;
}

/* /dev/console: a bind of the slave fd itself (never of a /dev/pts/N path),
 * onto a plain file at exactly /dev/console (no symlink on the way), read
 * back by device number and devpts instance. */
static int
bind_console (struct kist_ctx *ctx, int slave, const struct stat *sst, char **why)
{
  _cleanup_error_ struct kist_error *e = NULL;
  _cleanup_close_ int target
      = kist_resolve_mkpath_exact (ctx->rootfs_fd, "/dev/console", KIST_MKPATH_FILE, 0600, &e);
  if (target < 0)
    {
      *why = xasprintf ("/dev/console: %s", e->msg);
      errno = e->errnum;
      return -1;
    }
  _cleanup_close_ int tree
      = (int) syscall (SYS_open_tree, slave, "",
                       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (tree < 0)
    {
      *why = xasprintf ("/dev/console: open_tree of the pty: %s", strerror (errno));
      return -1;
    }
  if (move_mount (tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    {
      *why = xasprintf ("/dev/console: move_mount of the pty onto it: %s", strerror (errno));
      return -1;
    }
  _cleanup_close_ int back = kist_resolve_open_exact (ctx->rootfs_fd, "/dev/console",
                                                      O_PATH | O_NOFOLLOW, 0, &e);
  struct stat bst;
  if (back < 0 || fstat (back, &bst) < 0)
    {
      *why = xasprintf ("/dev/console: read back: %s", e ? e->msg : strerror (errno));
      errno = e ? e->errnum : errno;
      return -1;
    }
  if (!S_ISCHR (bst.st_mode) || bst.st_rdev != sst->st_rdev || bst.st_dev != sst->st_dev)
    {
      *why = xasprintf ("/dev/console: read back: device %u:%u, the pty is %u:%u",
                        major (bst.st_rdev), minor (bst.st_rdev), major (sst->st_rdev),
                        minor (sst->st_rdev));
      errno = EPROTO;
      return -1;
    }
  return 0;
}

int
kist_terminal_apply (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const char *layer = "terminal";
  const struct kist_process *p = ctx->spec->process;
  if (!p->terminal)
    return 0; /* recorded by kist_terminal_prepare */
  _cleanup_free_ char *why = NULL, *size = NULL;
  struct stat mst, sst;
  _cleanup_close_ int master = open_ptmx (ctx, &mst, &why);
  if (master < 0)
    return kist_report_failed (r, layer, "", errno, err, "%s", why);

  int unlock = 0, n = -1;
  if (ioctl (master, TIOCSPTLCK, &unlock) < 0 || ioctl (master, TIOCGPTN, &n) < 0 || n < 0)
    return kist_report_failed (r, layer, "", errno, err, "unlock the pty (TIOCSPTLCK, TIOCGPTN): %s",
                               strerror (errno));
  /* The slave from the master itself: no /dev/pts/N path to swap. */
  _cleanup_close_ int slave = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    return kist_report_failed (r, layer, "", errno, err, "open the pty's slave (TIOCGPTPEER): %s",
                               strerror (errno));
  struct statfs ssf;
  if (fstat (slave, &sst) < 0 || fstatfs (slave, &ssf) < 0)
    return kist_report_failed (r, layer, "", errno, err, "fstat the pty slave: %s",
                               strerror (errno));
  if (ssf.f_type != DEVPTS_SUPER_MAGIC || !S_ISCHR (sst.st_mode) || sst.st_dev != mst.st_dev
      || sst.st_rdev != makedev (PTS_MAJOR + (unsigned) n / 256, (unsigned) n % 256))
    return kist_report_failed (r, layer, "", EPROTO, err,
                               "the pty slave is device %u:%u, not pts %d of the container's "
                               "devpts",
                               major (sst.st_rdev), minor (sst.st_rdev), n);

  if (p->has_console_size)
    {
      struct winsize ws = { .ws_row = (unsigned short) p->console_height,
                            .ws_col = (unsigned short) p->console_width },
                     got = { 0 };
      if (ioctl (master, TIOCSWINSZ, &ws) < 0 || ioctl (slave, TIOCGWINSZ, &got) < 0)
        return kist_report_failed (r, layer, "", errno, err, "process.consoleSize: TIOCSWINSZ: %s",
                                   strerror (errno));
      if (got.ws_row != ws.ws_row || got.ws_col != ws.ws_col)
        return kist_report_failed (r, layer, "", EPROTO, err,
                                   "process.consoleSize %ux%u, TIOCGWINSZ reads %ux%u",
                                   p->console_height, p->console_width, got.ws_row, got.ws_col);
      size = xasprintf ("consoleSize %u rows x %u columns (TIOCGWINSZ read back)", got.ws_row,
                        got.ws_col);
    }
  else
    size = xstrdup ("no consoleSize (the receiver sets the size)");

  /* The process's own terminal, as runc's fixStdioPermissions: the user
   * switch comes later and the process must be able to use it. */
  if (p->user.uid != 0)
    {
      struct stat ost;
      if (fchown (slave, p->user.uid, (gid_t) -1) < 0)
        return kist_report_failed (r, layer, "", errno, err,
                                   "fchown the pty to process.user.uid %u: %s", p->user.uid,
                                   strerror (errno));
      if (fstat (slave, &ost) < 0 || ost.st_uid != p->user.uid)
        return kist_report_failed (r, layer, "", EPROTO, err,
                                   "the pty is owned by uid %u after fchown to process.user.uid %u "
                                   "(fstat read back)",
                                   (unsigned) ost.st_uid, p->user.uid);
    }
  if (ctx->tty.console && bind_console (ctx, slave, &sst, &why) < 0)
    return kist_report_failed (r, layer, "", errno, err, "%s", why);

  if (kist_sync_send_fd (ctx->sync_fd, KIST_SYNC_PTY, "m", 1, master) < 0)
    return kist_report_failed (r, layer, "", EPIPE, err, "send the pty master to kist");
  ctx->tty.index = n;
  ctx->tty.slave = steal_fd (&slave);
  kist_report_applied (r, layer, "",
                       "/dev/pts/%d of the container's devpts (device %u:%u%s; the slave taken "
                       "with TIOCGPTPEER, both read back with fstat/fstatfs); %s; owner uid %u%s%s",
                       n, major (mst.st_dev), minor (mst.st_dev),
                       ctx->tty.host_dev ? ", not the host's" : "", size, p->user.uid,
                       p->user.uid != 0 ? " (fchown, fstat read back)" : "",
                       ctx->tty.console ? "; /dev/console bound from it (device read back)" : "");
  return 0;
}

void
kist_terminal_stdio (struct kist_ctx *ctx)
{
  if (ctx->tty.slave >= 0)
    for (int fd = 0; fd <= 2; fd++)
      dup2 (ctx->tty.slave, fd); /* (checked again by kist_terminal_attach) */
}

int
kist_terminal_attach (struct kist_ctx *ctx, struct kist_error **err)
{
  int slave = ctx->tty.slave;
  if (slave < 0)
    return -1;
  if (ioctl (slave, TIOCSCTTY, 0) < 0)
    return kist_error_make (err, errno, "make /dev/pts/%d the controlling terminal (TIOCSCTTY)",
                            ctx->tty.index),
           -2;
  for (int fd = 0; fd <= 2; fd++)
    if (dup2 (slave, fd) < 0)
      return kist_error_make (err, errno, "dup2 the pty onto fd %d", fd), -2;
  if (slave > 2)
    close (slave);
  ctx->tty.slave = -1;
  /* Before any filter (kist_session_apply); the parent reads tty_nr of
   * /proc/PID/stat from outside too (kist_session_verify). */
  pid_t sid = tcgetsid (0);
  if (sid != getpid ())
    return kist_error_make (err, EPROTO, "after TIOCSCTTY, tcgetsid(0) is %d, not the process (%d)",
                            (int) sid, (int) getpid ()),
           -2;
  return ctx->tty.index;
}

int
kist_terminal_send (const char *path, int master, struct kist_error **err)
{
  _cleanup_close_ int s
      = kist_unix_connect (path, "--console-socket", "is something listening on it?", err);
  if (s < 0)
    return -1;
  static const char name[] = "/dev/ptmx";
  ssize_t w = kist_send_with_fd (s, name, sizeof name - 1, master);
  if (w < 0)
    return kist_error_make (err, (int) -w, "--console-socket `%s`: send the pty master", path);
  return 0;
}

static void
copy_size (int from, int master)
{
  struct winsize ws;
  if (from >= 0 && ioctl (from, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
    ioctl (master, TIOCSWINSZ, &ws);
}

/* The caller's terminal: stdin, else stdout, else none (-1). */
static int
caller_tty (void)
{
  return isatty (STDIN_FILENO) ? STDIN_FILENO : isatty (STDOUT_FILENO) ? STDOUT_FILENO : -1;
}

int
kist_terminal_take (struct kist_ctx *ctx, int master, struct kist_error **err)
{
  if (master < 0 || ctx->tty.master >= 0)
    {
      if (master >= 0)
        close (master);
      return kist_error_make (err, EPROTO, "container `%s`: no pty master came with the message, "
                                           "or a second one",
                              ctx->id);
    }
  if (ctx->console_socket)
    {
      /* To the receiver at once, before the process runs (as runc): an
       * engine sizes the pty as soon as it has it, and its first output
       * must find the size set. */
      int ret = kist_terminal_send (ctx->console_socket, master, err);
      close (master);
      if (ret < 0)
        return -1;
      ctx->tty.sent = true;
      return 0;
    }
  ctx->tty.master = master;
  copy_size (caller_tty (), master);
  return 0;
}

int
kist_terminal_deliver (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  (void) err;
  if (ctx->tty.sent)
    kist_report_note (r, "terminal", "; the master sent to --console-socket `%s` (SCM_RIGHTS)",
                      ctx->console_socket);
  else if (ctx->tty.master >= 0)
    kist_report_note (r, "terminal", "; the master stays with kist, which relays the caller's "
                                     "terminal to it");
  else
    {
      const struct kist_layer *l = kist_report_find (r, "terminal");
      if (l && l->applied)
        return kist_error_make (err, EPROTO, "the terminal was set up, but no pty master came");
    }
  return 0;
}

/* ------------------------------------------------------------ the relay */

static int winch_pipe[2] = { -1, -1 };

static void
on_winch (int sig)
{
  (void) sig;
  int e = errno;
  char c = 'w';
  if (write (winch_pipe[1], &c, 1) < 0)
    { /* full: a resize is pending anyway */
    }
  errno = e;
}

/* One read from master to stdout; false when the master is done (EIO: no
 * slave left, or EOF).  Output that stdout cannot take is dropped. */
static bool
pump_out (int master)
{
  char buf[16384];
  ssize_t n = read (master, buf, sizeof buf);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return true;
  if (n <= 0)
    return false;
  kist_write_all (STDOUT_FILENO, buf, (size_t) n);
  return true;
}

int
kist_terminal_relay (int master, pid_t pid, struct kist_error **err)
{
  _cleanup_close_ int m = master;
  _cleanup_close_ int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd < 0)
    return kist_error_make (err, errno, "pidfd_open(%d)", (int) pid);
  int fl = fcntl (m, F_GETFL);
  if (fl < 0 || fcntl (m, F_SETFL, fl | O_NONBLOCK) < 0)
    return kist_error_make (err, errno, "make the pty master non-blocking");

  /* The caller's terminal: raw while the container has it, if kist is in
   * its foreground process group (else tcsetattr would stop kist). */
  int tty = caller_tty ();
  struct termios saved;
  bool raw = false;
  if (tty == STDIN_FILENO && tcgetpgrp (tty) == getpgrp () && tcgetattr (tty, &saved) == 0)
    {
      struct termios t = saved;
      cfmakeraw (&t);
      raw = tcsetattr (tty, TCSANOW, &t) == 0;
    }
  copy_size (tty, m);
  struct termios mt;
  char veof = tcgetattr (m, &mt) == 0 ? (char) mt.c_cc[VEOF] : 4;

  struct sigaction sa = { .sa_handler = on_winch, .sa_flags = SA_RESTART }, old_winch, old_pipe;
  sigemptyset (&sa.sa_mask);
  if (pipe2 (winch_pipe, O_CLOEXEC | O_NONBLOCK) == 0)
    sigaction (SIGWINCH, &sa, &old_winch);
  struct sigaction ign = { .sa_handler = SIG_IGN };
  sigaction (SIGPIPE, &ign, &old_pipe);

  char in[4096];
  size_t in_len = 0, in_off = 0;
  bool in_open = true, out_open = true, exited = false;
  while (!exited || out_open)
    {
      struct pollfd f[4] = {
        { .fd = in_open && in_len == 0 ? STDIN_FILENO : -1, .events = POLLIN },
        { .fd = out_open || in_len ? m : -1,
          .events = (short) ((out_open ? POLLIN : 0) | (in_len ? POLLOUT : 0)) },
        { .fd = exited ? -1 : pidfd, .events = POLLIN },
        { .fd = winch_pipe[0], .events = POLLIN },
      };
      /* After the exit: what the process wrote is drained until the last
       * slave is gone (EIO), or nothing came for 200 ms (a child of it
       * still holds the pty). */
      int n = poll (f, 4, exited ? 200 : -1);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      if (f[3].revents & POLLIN)
        {
          char c[64];
          while (read (winch_pipe[0], c, sizeof c) > 0)
            ;
          copy_size (tty, m);
        }
      if (f[1].revents & (POLLIN | POLLHUP | POLLERR))
        {
          if (out_open && !pump_out (m))
            out_open = false;
          if (!out_open)
            in_len = 0;
        }
      if ((f[1].revents & POLLOUT) && in_len)
        {
          ssize_t w = write (m, in + in_off, in_len - in_off);
          if (w > 0)
            in_off += (size_t) w;
          else if (w < 0 && errno != EAGAIN && errno != EINTR)
            in_off = in_len;
          if (in_off >= in_len)
            in_len = in_off = 0;
        }
      if (f[0].revents & (POLLIN | POLLHUP | POLLERR))
        {
          ssize_t r = read (STDIN_FILENO, in, sizeof in);
          if (r > 0)
            in_len = (size_t) r, in_off = 0;
          else if (r == 0 || (errno != EINTR && errno != EAGAIN))
            {
              /* The caller's input ended: the pty reads end-of-file. */
              in_open = false;
              in[0] = veof;
              in_len = 1, in_off = 0;
            }
        }
      if (f[2].revents & POLLIN)
        exited = true;
    }

  if (raw)
    tcsetattr (tty, TCSADRAIN, &saved);
  if (winch_pipe[0] >= 0)
    {
      sigaction (SIGWINCH, &old_winch, NULL);
      close (winch_pipe[0]);
      close (winch_pipe[1]);
      winch_pipe[0] = winch_pipe[1] = -1;
    }
  sigaction (SIGPIPE, &old_pipe, NULL);
  return 0;
}
