/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist pause ID, kist resume ID: freeze and thaw the container's cgroup
 * (cgroup v2 cgroup.freeze; kist_cgroup_freeze waits for cgroup.events to
 * say frozen 1 / 0). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>

#include "cgroup.h"
#include "cmd.h"
#include "util.h"

/* The live status, counting a frozen cgroup as paused even where
 * kist_state_status does not look at the cgroup. */
static enum kist_status
live_status (const struct kist_state *st)
{
  enum kist_status status = kist_state_status (st);
  if (status != KIST_STATUS_STOPPED && st->cgroup_path != NULL
      && kist_cgroup_is_frozen (st->cgroup_path) == 1)
    return KIST_STATUS_PAUSED;
  return status;
}

static int
pause_or_resume (const struct kist_globals *g, int argc, char **argv, bool freeze,
                 struct kist_error **err)
{
  static const struct option opts[] = { { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  const char *cmd = freeze ? "pause" : "resume";
  opterr = 0;
  int c = getopt_long (argc, argv, "+h", opts, NULL);
  if (c == 'h')
    return kist_cmd_help (cmd);
  if (c != -1)
    {
      kist_error_make (err, EINVAL, "%s: unknown option `%s` (usage: kist %s ID)", cmd,
                       argv[optind - 1], cmd);
      return KIST_EXIT_USAGE;
    }
  const char *id = NULL;
  if (kist_cmd_one_id (cmd, argc, argv, optind, &id, err) < 0 || kist_id_validate (id, err) < 0)
    return KIST_EXIT_USAGE;
  _cleanup_close_ int rootfd = kist_cmd_open_root (g, err);
  _cleanup_close_ int dirfd = -1;
  if (rootfd < 0 || kist_state_open (rootfd, id, &dirfd, err) < 0)
    return KIST_EXIT_USAGE;
  struct kist_state st = { 0 };
  int ret = KIST_EXIT_USAGE;
  if (kist_state_read (dirfd, &st, err) < 0)
    goto out;
  enum kist_status status = live_status (&st);
  if (freeze && status != KIST_STATUS_RUNNING)
    {
      kist_error_make (err, EINVAL, "container `%s` is not running (it is %s)", id,
                       kist_status_name (status));
      goto out;
    }
  if (!freeze && status != KIST_STATUS_PAUSED)
    {
      kist_error_make (err, EINVAL, "container `%s` is not paused (it is %s)", id,
                       kist_status_name (status));
      goto out;
    }
  if (st.cgroup_path == NULL)
    {
      kist_error_make (err, EOPNOTSUPP,
                       "%s container `%s`: it has no cgroup (the state records no cgroup scope, "
                       "e.g. created rootless without a delegated cgroup v2 subtree), and "
                       "pausing needs the cgroup v2 freezer",
                       cmd, id);
      goto out;
    }
  if (kist_cgroup_freeze (st.cgroup_path, freeze, err) < 0)
    {
      kist_error_wrap (err, "%s container `%s` (cgroup %s)", cmd, id, st.cgroup_path);
      goto out;
    }
  ret = 0;
out:
  kist_state_clear (&st);
  return ret;
}

int
kist_cmd_pause (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  return pause_or_resume (g, argc, argv, true, err);
}

int
kist_cmd_resume (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  return pause_or_resume (g, argc, argv, false, err);
}
