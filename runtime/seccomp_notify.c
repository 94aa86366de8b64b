/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: SCMP_ACT_NOTIFY.  The init loads the filter with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER and passes the listener fd to the parent
 * over the sync socket (KIST_SYNC_SECCOMP_FD); the parent connects to
 * linux.seccomp.listenerPath and sends the runtime-spec "container process
 * state" with the fd as SCM_RIGHTS (config-linux.md "Seccomp", runtime.md):
 *
 *   {"ociVersion": ..., "fds": ["seccompFd"], "pid": INIT_PID,
 *    "metadata": listenerMetadata, "state": {OCI state, status "creating"}}
 *
 * Then the parent closes its copy: the agent owns the listener. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "json.h"
#include "seccomp.h"
#include "util.h"

static void
gen_kv (yajl_gen g, const char *k, const char *v)
{
  kist_json_gen_str_lossy (g, k);
  kist_json_gen_str_lossy (g, v);
}

char *
kist_seccomp_notify_state_json (const struct kist_ctx *ctx, const char *metadata)
{
  const struct kist_spec *s = ctx->spec;
  const char *version = s && s->oci_version ? s->oci_version : "1.2.0";
  _cleanup_yajl_gen_ yajl_gen g = kist_json_gen_new (false, true);
  yajl_gen_map_open (g);
  gen_kv (g, "ociVersion", version);
  kist_json_gen_str_lossy (g, "fds");
  yajl_gen_array_open (g);
  kist_json_gen_str_lossy (g, "seccompFd");
  yajl_gen_array_close (g);
  kist_json_gen_str_lossy (g, "pid");
  yajl_gen_integer (g, ctx->pid);
  gen_kv (g, "metadata", metadata);
  kist_json_gen_str_lossy (g, "state");
  yajl_gen_map_open (g);
  gen_kv (g, "ociVersion", version);
  gen_kv (g, "id", ctx->id);
  gen_kv (g, "status", "creating");
  kist_json_gen_str_lossy (g, "pid");
  yajl_gen_integer (g, ctx->pid);
  gen_kv (g, "bundle", ctx->bundle);
  kist_json_gen_str_lossy (g, "annotations");
  yajl_gen_map_open (g);
  for (size_t i = 0; s && i < s->n_annotations; i++)
    gen_kv (g, s->annotations[i].key, s->annotations[i].value);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  return kist_json_gen_take (g);
}

/* Connect to a unix stream socket by path; a path too long for sun_path is
 * reached through an O_PATH fd of its directory. */
static int
connect_path (const char *path, struct kist_error **err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  _cleanup_close_ int dirfd = -1;
  if (strlen (path) < sizeof addr.sun_path)
    memcpy (addr.sun_path, path, strlen (path) + 1);
  else
    {
      _cleanup_free_ char *d = xstrdup (path), *b = xstrdup (path);
      const char *dir = dirname (d), *base = basename (b);
      dirfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (dirfd < 0)
        return kist_error_make (err, errno, "linux.seccomp.listenerPath `%s`: open its directory",
                                path);
      if ((size_t) snprintf (addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d/%s", dirfd,
                             base)
          >= sizeof addr.sun_path)
        return kist_error_make (err, ENAMETOOLONG, "linux.seccomp.listenerPath `%s`", path);
    }
  _cleanup_close_ int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return kist_error_make (err, errno, "socket(AF_UNIX)");
  int r;
  do
    r = connect (s, (struct sockaddr *) &addr, sizeof addr);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return kist_error_make (err, errno,
                            "linux.seccomp.listenerPath `%s`: connect to the seccomp agent's "
                            "socket (is the agent listening?)",
                            path);
  return steal_fd (&s);
}

int
kist_seccomp_notify_forward (const struct kist_ctx *ctx, int listener_fd, struct kist_error **err)
{
  const struct kist_seccomp *sc = ctx->seccomp;
  if (sc == NULL || sc->listener_path == NULL)
    return kist_error_make (err, EPROTO,
                            "the container init sent a seccomp listener fd, but the config has "
                            "no linux.seccomp.listenerPath");
  _cleanup_free_ char *json = kist_seccomp_notify_state_json (ctx, sc->listener_metadata);
  _cleanup_close_ int s = connect_path (sc->listener_path, err);
  if (s < 0)
    return -1;

  size_t len = strlen (json), off = 0;
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  memset (&ctl, 0, sizeof ctl);
  struct iovec iov = { .iov_base = json, .iov_len = len };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf };
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &listener_fd, sizeof (int));
  ssize_t w;
  do
    w = sendmsg (s, &msg, MSG_NOSIGNAL);
  while (w < 0 && errno == EINTR);
  if (w < 0)
    return kist_error_make (err, errno,
                            "linux.seccomp.listenerPath `%s`: send the container process state "
                            "and the listener fd",
                            sc->listener_path);
  /* A stream socket may take the text in pieces; the fd went with the first. */
  for (off = (size_t) w; off < len; off += (size_t) w)
    {
      w = send (s, json + off, len - off, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR)
        {
          w = 0;
          continue;
        }
      if (w < 0)
        return kist_error_make (err, errno, "linux.seccomp.listenerPath `%s`: send the state",
                                sc->listener_path);
    }
  return 0;
}
