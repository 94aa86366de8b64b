/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: idmapped bind mounts (layer "mounts", runtime-spec 1.2 config.md
 * `idmap`/`ridmap` and a mount's uidMappings/gidMappings).
 *
 * The container init is cloned with its namespaces, possibly a new user
 * namespace: inside, it has no privilege over the host's filesystems, and
 * the kernel lets only a holder of CAP_SYS_ADMIN over the source's
 * filesystem idmap it.  So the parent, before clone, makes each such tree:
 *   - open_tree(source, OPEN_TREE_CLONE [| AT_RECURSIVE for rbind]): a
 *     detached copy of the source (bundle-relative as mounts.c resolves it);
 *   - a user namespace carrying the mapping: a short-lived child cloned with
 *     CLONE_NEWUSER that only waits on a pipe; its uid_map and gid_map are
 *     written (containerID hostID size, as for linux.uidMappings), its
 *     /proc/PID/ns/user opened, and it is killed and reaped by its pid (one
 *     per distinct mapping);
 *   - mount_setattr(MOUNT_ATTR_IDMAP, [AT_RECURSIVE for ridmap]) with it,
 *     then the mount's other attributes (ro, nosuid, ...) while detached;
 *   - the tree's fd queued (SCM_RIGHTS) in a socket the init inherits and
 *     keeps (ctx->idmap_sock: the init closes every other inherited fd),
 *     the parent's own closed; the init takes it out in its mounts layer,
 *     move_mounts it onto the destination it resolves in the root
 *     (mounts.c), then applies the propagation and reads it all back.
 * A file with on-disk id X in a containerID range appears as
 * hostID + (X - containerID); ids outside every range as the overflow id. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mounts_int.h"
#include "util.h"

static int
write_map (pid_t pid, const char *file, const struct kist_idmap *map, size_t n,
           struct kist_error **err)
{
  _cleanup_free_ char *text = NULL;
  for (size_t i = 0; i < n; i++)
    mnt_append (&text, "",
                xasprintf ("%u %u %u\n", map[i].container_id, map[i].host_id, map[i].size));
  _cleanup_free_ char *path = xasprintf ("/proc/%d/%s", (int) pid, file);
  _cleanup_close_ int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return kist_error_make (err, errno, "open %s", path);
  ssize_t w = write (fd, text, strlen (text));
  if (w == (ssize_t) strlen (text))
    return 0;
  int e = w < 0 ? errno : EIO;
  return kist_error_make (err, e, "write %s for the mapping%s", path,
                          e == EPERM ? " (writing a mapping of other ids needs CAP_SETUID and "
                                       "CAP_SETGID on the host: idmapped mounts need kist to "
                                       "run as root)"
                                     : "");
}

/* A user namespace fd whose uid_map and gid_map are the plan's mappings. */
static int
userns_for (const struct plan *p, struct kist_error **err)
{
  int pipefd[2];
  if (pipe2 (pipefd, O_CLOEXEC) < 0)
    return kist_error_make (err, errno, "pipe");
  struct clone_args args = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
  pid_t pid = (pid_t) syscall (SYS_clone3, &args, sizeof args);
  if (pid == 0)
    {
      /* Holds the namespace until the parent closes its end (or dies). */
      char c;
      close (pipefd[1]);
      while (read (pipefd[0], &c, 1) < 0 && errno == EINTR)
        ;
      _exit (0);
    }
  close (pipefd[0]);
  int ret;
  if (pid < 0)
    ret = kist_error_make (err, errno,
                           "clone a user namespace for the mapping%s",
                           errno == ENOSPC ? " (user.max_user_namespaces reached)" : "");
  else if ((ret = write_map (pid, "uid_map", p->uids, p->n_uids, err)) == 0
           && (ret = write_map (pid, "gid_map", p->gids, p->n_gids, err)) == 0)
    {
      _cleanup_free_ char *path = xasprintf ("/proc/%d/ns/user", (int) pid);
      ret = open (path, O_RDONLY | O_CLOEXEC);
      if (ret < 0)
        ret = kist_error_make (err, errno, "open %s", path);
    }
  close (pipefd[1]);
  if (pid > 0)
    {
      kill (pid, SIGKILL);
      while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  return ret;
}

static bool
same_maps (const struct plan *a, const struct plan *b)
{
  return a->n_uids == b->n_uids && a->n_gids == b->n_gids
         && memcmp (a->uids, b->uids, a->n_uids * sizeof *a->uids) == 0
         && memcmp (a->gids, b->gids, a->n_gids * sizeof *a->gids) == 0;
}

static int
idmap_error (int tree, int e, struct kist_error **err)
{
  struct statfs sf = { 0 };
  fstatfs (tree, &sf);
  const char *why
      = e == EPERM  ? "idmapping needs CAP_SYS_ADMIN over the source's filesystem (kist runs "
                      "unprivileged, or the filesystem belongs to another user namespace): run "
                      "kist as root or remove the idmap"
        : e == EINVAL ? "the source's filesystem does not support idmapped mounts (or the source "
                        "is already idmapped): use a directory on a filesystem that does (ext4, "
                        "xfs, btrfs, tmpfs, overlayfs ...) or remove the idmap"
        : e == ENOSYS ? "this kernel has no mount_setattr (Linux 5.12 or later is needed): "
                        "remove the idmap"
                      : "remove the idmap";
  return kist_error_make (err, e, "mount_setattr(MOUNT_ATTR_IDMAP) of the source (filesystem "
                                  "magic 0x%lx): %s",
                          (unsigned long) sf.f_type, why);
}

/* The detached, idmapped tree of one mount, with its attributes. */
static int
make_tree (struct kist_ctx *ctx, const struct kist_mount *m, const struct plan *p, int userns,
           struct kist_idmap_tree *t, struct kist_error **err)
{
  if (m->source == NULL || m->source[0] == '\0')
    return kist_error_make (err, EINVAL, "a bind mount needs a source");
  _cleanup_free_ char *joined = NULL;
  const char *src = m->source;
  if (src[0] != '/')
    src = joined = xasprintf ("%s/%s", ctx->bundle, m->source);
  _cleanup_close_ int tree
      = open_tree (AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (p->rbind ? AT_RECURSIVE : 0));
  if (tree < 0)
    return kist_error_make (err, errno, "open_tree of the source%s",
                            errno == EPERM ? " (needs CAP_SYS_ADMIN: idmapped mounts need kist to "
                                             "run as root)"
                                           : "");
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t) userns };
  if (mount_setattr (tree, "", AT_EMPTY_PATH | (p->idmap_rec ? AT_RECURSIVE : 0), &attr,
                     sizeof attr)
      < 0)
    return idmap_error (tree, errno, err);
  if (mnt_setattr_tree (tree, &p->rec, true, err) < 0
      || mnt_setattr_tree (tree, &p->top, false, err) < 0)
    return -1;
  struct stat st;
  if (fstat (tree, &st) < 0)
    return kist_error_make (err, errno, "stat the idmapped tree");
  t->uid = (uint32_t) st.st_uid;
  t->gid = (uint32_t) st.st_gid;
  t->fd = steal_fd (&tree);
  return 0;
}

/* The trees into a datagram socketpair: one message per tree (its index,
 * its fd); the parent keeps the receiving end for the init to inherit.  No
 * more than MAX_TREES, so that nothing waits for room in the queue (the
 * kernel's net.unix.max_dgram_qlen is 512 by default). */
#define MAX_TREES 256
static int
queue_trees (struct kist_ctx *ctx, struct kist_error **err)
{
  size_t n = 0;
  for (size_t i = 0; i < ctx->n_idmap_trees; i++)
    n += ctx->idmap_trees[i].fd >= 0;
  if (n > MAX_TREES)
    return kist_error_make (err, E2BIG, "%zu idmapped mounts: kist makes at most %d", n,
                            MAX_TREES);
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
    return kist_error_make (err, errno, "socketpair for the idmapped trees");
  for (size_t i = 0; i < ctx->n_idmap_trees; i++)
    {
      struct kist_idmap_tree *t = &ctx->idmap_trees[i];
      if (t->fd < 0)
        continue;
      uint32_t idx = (uint32_t) i;
      ssize_t w = kist_send_with_fd (sv[0], &idx, sizeof idx, t->fd);
      if (w != (ssize_t) sizeof idx)
        {
          int e = w < 0 ? (int) -w : EIO;
          close (sv[0]);
          close (sv[1]);
          return kist_error_make (err, e, "queue the idmapped tree of mounts[%zu] for the init", i);
        }
      close (steal_fd (&t->fd));
    }
  close (sv[0]);
  ctx->idmap_sock = sv[1];
  return 0;
}

int
kist_mounts_idmap_keep_fd (const struct kist_ctx *ctx)
{
  return ctx->idmap_trees ? ctx->idmap_sock : -1;
}

int
kist_mounts_idmap_receive (struct kist_ctx *ctx, struct kist_error **err)
{
  if (ctx->idmap_trees == NULL)
    return 0;
  for (;;)
    {
      uint32_t idx;
      struct iovec iov = { .iov_base = &idx, .iov_len = sizeof idx };
      union
      {
        char buf[CMSG_SPACE (sizeof (int))];
        struct cmsghdr align;
      } u;
      struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                            .msg_controllen = sizeof u.buf };
      ssize_t n = recvmsg (ctx->idmap_sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return 0;
      if (n < 0)
        return kist_error_make (err, errno, "receive the idmapped trees (was the socket kept "
                                            "open by the init?)");
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      int fd = -1;
      if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        memcpy (&fd, CMSG_DATA (c), sizeof fd);
      if (n != sizeof idx || fd < 0 || idx >= ctx->n_idmap_trees)
        {
          if (fd >= 0)
            close (fd);
          return kist_error_make (err, EPROTO, "a malformed idmapped tree message");
        }
      if (ctx->idmap_trees[idx].fd >= 0)
        close (ctx->idmap_trees[idx].fd);
      ctx->idmap_trees[idx].fd = fd;
    }
}

void
kist_mounts_idmap_release (struct kist_ctx *ctx)
{
  if (ctx->idmap_trees && ctx->idmap_sock >= 0)
    close (steal_fd (&ctx->idmap_sock));
  for (size_t i = 0; i < ctx->n_idmap_trees; i++)
    {
      if (ctx->idmap_trees[i].fd >= 0)
        close (ctx->idmap_trees[i].fd);
      free (ctx->idmap_trees[i].why);
    }
  free (ctx->idmap_trees);
  ctx->idmap_trees = NULL;
  ctx->n_idmap_trees = 0;
}

int
kist_mounts_idmap_prepare (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err)
{
  const struct kist_spec *spec = ctx->spec;
  bool may_degrade = kist_report_may_degrade (r, "mounts");
  struct plan *plans = xcalloc (spec->n_mounts + 1, sizeof *plans);
  int *userns = xcalloc (spec->n_mounts + 1, sizeof *userns);
  for (size_t i = 0; i < spec->n_mounts; i++)
    userns[i] = -1;
  int ret = 0;
  for (size_t i = 0; i < spec->n_mounts && ret == 0; i++)
    {
      const struct kist_mount *m = &spec->mounts[i];
      _cleanup_error_ struct kist_error *e = NULL;
      struct plan *p = &plans[i];
      /* An entry that is no idmapped bind is the child's to apply and report. */
      mnt_plan_build (spec, m, p, &e);
      if (!p->idmap && m->n_uid_mappings == 0 && m->n_gid_mappings == 0)
        continue;
      if (ctx->idmap_trees == NULL)
        {
          ctx->idmap_trees = xcalloc (spec->n_mounts, sizeof *ctx->idmap_trees);
          ctx->n_idmap_trees = spec->n_mounts;
          for (size_t j = 0; j < spec->n_mounts; j++)
            ctx->idmap_trees[j].fd = -1;
        }
      int ns = -1;
      for (size_t j = 0; j < i && e == NULL && ns < 0; j++)
        if (userns[j] >= 0 && same_maps (&plans[j], p))
          ns = userns[j];
      if (e == NULL && ns < 0)
        ns = userns[i] = userns_for (p, &e);
      if (e == NULL)
        make_tree (ctx, m, p, ns, &ctx->idmap_trees[i], &e);
      if (e == NULL)
        continue;
      _cleanup_free_ char *reason = mnt_reason (i, m, e->msg);
      if (may_degrade)
        ctx->idmap_trees[i].why = xstrdup (e->msg);
      else
        ret = kist_report_failed (r, "mounts", "", e->errnum ? e->errnum : EIO, err, "%s",
                                  reason);
    }
  for (size_t i = 0; i < spec->n_mounts; i++)
    {
      if (userns[i] >= 0)
        close (userns[i]);
      mnt_plan_clear (&plans[i]);
    }
  free (userns);
  free (plans);
  if (ret == 0 && ctx->idmap_trees)
    {
      _cleanup_error_ struct kist_error *qe = NULL;
      ctx->idmap_sock = -1;
      if (queue_trees (ctx, &qe) < 0)
        ret = kist_report_failed (r, "mounts", "", qe->errnum, err, "%s", qe->msg);
    }
  if (ret < 0)
    kist_mounts_idmap_release (ctx);
  return ret;
}
