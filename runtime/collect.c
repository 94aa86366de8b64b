/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: one collect loop for create, start and exec (see collect.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "collect.h"
#include "seccomp.h"
#include "sync.h"
#include "terminal.h"
#include "util.h"
#include "verify.h"

static int
unexpected (const struct kist_collect *c, char type, struct kist_error **err)
{
  return kist_error_make (err, EPROTO, "unexpected message %d from %s", type, c->who);
}

static int
collect_loop (int fd, struct kist_collect *c, struct kist_report *r, struct kist_error **err)
{
  for (;;)
    {
      char type = 0;
      _cleanup_free_ char *payload = NULL;
      _cleanup_close_ int passed = -1;
      size_t len = 0;
      int ret = kist_sync_recv_fd (fd, &type, &payload, &len, &passed);
      if (ret < 0)
        return c->on_end (c, ret, r, err);
      int done = 0;
      switch (type)
        {
        case KIST_SYNC_LAYER:
          if (kist_sync_add_layer (r, payload, len, c->who, err) < 0)
            return -1;
          break;
        case KIST_SYNC_BATCH:
          if (kist_sync_add_batch (r, payload, len, c->who, err) < 0)
            return -1;
          break;
        case KIST_SYNC_SECCOMP_FD:
          if (c->ctx == NULL)
            return unexpected (c, type, err);
          if (passed < 0)
            return kist_error_make (err, EPROTO, "%s sent no seccomp listener fd", c->who);
          if (kist_seccomp_notify_forward (c->ctx, passed, err) < 0)
            return -1;
          break;
        case KIST_SYNC_PTY:
          if (c->ctx == NULL)
            return unexpected (c, type, err);
          if (kist_terminal_take (c->ctx, steal_fd (&passed), err) < 0)
            return -1;
          break;
        case KIST_SYNC_ERROR:
          return kist_sync_decode_error (payload, len, err);
        case KIST_SYNC_GO:
          if (c->on_go == NULL)
            return unexpected (c, type, err);
          if (c->on_go (c, r, err) < 0)
            return -1;
          break;
        case KIST_SYNC_PID:
          if (c->on_pid == NULL)
            return unexpected (c, type, err);
          done = c->on_pid (c, payload, r, err);
          break;
        case KIST_SYNC_READY:
          done = c->on_ready (c, r, err);
          break;
        default:
          return unexpected (c, type, err);
        }
      if (done != 0)
        return done < 0 ? -1 : 0;
    }
}

int
kist_collect_run (int fd, struct kist_collect *c, struct kist_report *r, struct kist_error **err)
{
  int ret = collect_loop (fd, c, r, err);
  if (ret < 0)
    kist_verify_abandon (r, c->abandon);
  return ret < 0 ? -1 : 0;
}
