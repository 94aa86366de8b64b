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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
  kist_json_gen_integer (g, ctx->pid);
  gen_kv (g, "metadata", metadata);
  kist_json_gen_str_lossy (g, "state");
  yajl_gen_map_open (g);
  gen_kv (g, "ociVersion", version);
  gen_kv (g, "id", ctx->id);
  gen_kv (g, "status", "creating");
  kist_json_gen_str_lossy (g, "pid");
  kist_json_gen_integer (g, ctx->pid);
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

int
kist_seccomp_notify_forward (const struct kist_ctx *ctx, int listener_fd, struct kist_error **err)
{
  const struct kist_seccomp *sc = ctx->seccomp;
  if (sc == NULL || sc->listener_path == NULL)
    return kist_error_make (err, EPROTO,
                            "the container init sent a seccomp listener fd, but the config has "
                            "no linux.seccomp.listenerPath");
  _cleanup_free_ char *json = kist_seccomp_notify_state_json (ctx, sc->listener_metadata);
  _cleanup_close_ int s = kist_unix_connect (sc->listener_path, "linux.seccomp.listenerPath",
                                              "is the seccomp agent listening?", err);
  if (s < 0)
    return -1;

  size_t len = strlen (json), off = 0;
  ssize_t w = kist_send_with_fd (s, json, len, listener_fd);
  if (w < 0)
    return kist_error_make (err, (int) -w,
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
