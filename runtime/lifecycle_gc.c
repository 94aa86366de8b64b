/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: kist_gc (lifecycle.h): what is garbage under the state root and its
 * removal, through the lifecycle's own kill and delete. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lifecycle.h"
#include "log.h"
#include "sandbox.h"
#include "util.h"

/* -------------------------------------------------------------------- gc */

struct gc_entry
{
  struct kist_gc_entry pub;
  char *id, *reason, *kept, *error;
};

static void
gc_entry_clear (struct gc_entry *e)
{
  free (e->id);
  free (e->reason);
  free (e->kept);
  free (e->error);
  memset (e, 0, sizeof *e);
}

/* Hand one entry to the caller (its strings stay ours). */
static void
gc_report (struct gc_entry *e, const struct kist_state *st, bool dry_run, kist_gc_fn fn, void *arg)
{
  e->pub.id = e->id;
  e->pub.reason = e->reason;
  e->pub.kept = e->kept;
  e->pub.error = e->error;
  e->pub.deadline = st ? st->deadline : 0;
  e->pub.kist_pid = st ? st->kist_pid : 0;
  fn (&e->pub, dry_run, arg);
}

/* Why is this entry garbage?  NULL: it is not (or not a sandbox at all). */
static char *
garbage_reason (const struct kist_state *st, time_t now)
{
  if (st->creating)
    return kist_state_create_abandoned (st)
               ? xasprintf ("its create was interrupted (kist process %d is gone)",
                            (int) st->creator_pid)
               : NULL; /* being created right now */
  if (st->deadline <= 0 && st->kist_pid <= 0)
    return NULL; /* an ordinary container: never ours to remove */
  bool owner_gone = st->kist_pid > 0 && !kist_state_owner_alive (st);
  if (owner_gone)
    return xasprintf ("its kist process %d is gone", (int) st->kist_pid);
  if (st->deadline > 0 && (int64_t) now > st->deadline)
    return xasprintf ("its deadline passed %lld s ago", (long long) (now - st->deadline));
  return NULL;
}

/* Kill, delete (cgroup scope and state dir, verified) and remove the
 * sandbox dir of one garbage entry. */
static void
collect (int rootfd, const char *root, const struct kist_state *st, struct gc_entry *e)
{
  _cleanup_error_ struct kist_error *err = NULL;
  if (kist_container_status (st) != KIST_STATUS_STOPPED)
    {
      if (kist_container_kill (rootfd, e->id, SIGKILL, true, &err) < 0)
        {
          /* It stopped (or was removed) in between: nothing to kill. */
          if (err->errnum != ESRCH && err->errnum != ENOENT)
            goto fail;
          kist_error_freep (&err);
        }
      else
        e->pub.killed = true;
    }
  if (kist_container_delete (rootfd, e->id, true, &err) < 0)
    goto fail;
  e->pub.state_removed = true;
  if (st->cgroup_path)
    {
      struct stat sb;
      /* The container's own scope; a parent kist created may still hold
       * other containers' scopes, and then it stays. */
      const char *cg = st->cgroup_path;
      if (lstat (cg, &sb) == 0)
        {
          kist_error_make (&err, EEXIST, "the cgroup `%s` still exists after delete", cg);
          goto fail;
        }
      e->pub.cgroup_removed = true;
    }
  /* A kept scratch dir (kist sandbox --keep) is the user's output: kept. */
  int r = kist_sandbox_dir_remove (rootfd, root, e->id, true, &e->kept, &err);
  if (r < 0)
    goto fail;
  e->pub.scratch_removed = r > 0;
  return;

fail:
  e->pub.failed = true;
  e->error = xstrdup (err ? err->msg : "unknown error");
}

/* ROOT/ID exists without state.json: a create interrupted by an older kist,
 * or a delete killed after it removed state.json (it goes last).  Whether
 * another command holds its lock is checked next. */
static bool
stateless_garbage (int rootfd, const char *id)
{
  struct stat sb;
  return fstatat (rootfd, id, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (sb.st_mode);
}

/* The temporary dirs of creates killed before their state dir appeared. */
static int
sweep_temp (int rootfd, bool dry_run, kist_gc_fn fn, void *arg)
{
  _cleanup_error_ struct kist_error *err = NULL;
  _cleanup_strv_ char **names = NULL;
  if (kist_state_sweep_temp (rootfd, NULL, dry_run, &names, &err) < 0)
    {
      kist_log_error ("gc: temporary state dirs of interrupted creates: %s", err->msg);
      return 1;
    }
  for (char **n = names; n && *n; n++)
    {
      struct kist_gc_entry e = { .kind = KIST_GC_TEMP,
                                 .id = *n,
                                 .reason = "the temporary state dir of an interrupted create",
                                 .state_removed = !dry_run };
      fn (&e, dry_run, arg);
    }
  return 0;
}

/* Is ROOT/~sandbox/NAME an orphan: named by `kist sandbox` (sandbox-PID-HEX)
 * after a kist process that is gone, with no state dir (killed before its
 * create, or between removing its state and its dir), and not just the
 * `work` dir an earlier removal kept (--keep)? */
static bool
sandbox_orphan (int rootfd, int topfd, const char *name)
{
  int pid = 0, used = 0;
  unsigned rnd = 0;
  struct stat sb;
  if (sscanf (name, "sandbox-%d-%8x%n", &pid, &rnd, &used) != 2 || name[used] != '\0'
      || pid <= 0)
    return false;
  if (kill (pid, 0) == 0 || errno != ESRCH)
    return false; /* its kist (or a process that reused its pid) lives */
  if (fstatat (rootfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
    return false; /* it has a state dir: the entries above handle it */
  _cleanup_close_ int fd = openat (topfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return false;
  _cleanup_dir_ DIR *d = fdopendir (fd);
  if (d == NULL)
    return false;
  fd = -1;
  struct dirent *de;
  bool work = false, other = false;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (strcmp (de->d_name, "work") == 0)
        work = true;
      else
        other = true;
    }
  return other || !work;
}

/* The sandbox dirs of `kist sandbox` runs killed where no state dir exists. */
static int
sweep_sandbox_orphans (int rootfd, const char *root, bool dry_run, kist_gc_fn fn, void *arg)
{
  int failed = 0;
  _cleanup_close_ int topfd
      = openat (rootfd, KIST_SANDBOX_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (topfd < 0)
    return 0;
  int lfd = dup (topfd);
  _cleanup_dir_ DIR *d = lfd >= 0 ? fdopendir (lfd) : NULL;
  if (d == NULL)
    {
      if (lfd >= 0)
        close (lfd);
      return 0;
    }
  static const char why[] = "the sandbox dir of a kist sandbox that is gone (no state left)";
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (!sandbox_orphan (rootfd, topfd, de->d_name))
        continue;
      struct gc_entry e = { .pub.kind = KIST_GC_SANDBOX_DIR,
                            .id = xstrdup (de->d_name),
                            .reason = xstrdup (why) };
      if (!dry_run)
        {
          _cleanup_error_ struct kist_error *err = NULL;
          int r = kist_sandbox_dir_remove (rootfd, root, e.id, true, &e.kept, &err);
          if (r < 0)
            {
              e.pub.failed = true;
              e.error = xstrdup (err->msg);
              failed = 1;
            }
          else
            e.pub.scratch_removed = r > 0;
        }
      gc_report (&e, NULL, dry_run, fn, arg);
      gc_entry_clear (&e);
    }
  return failed;
}

/* The shared sandbox roots (sandbox.h) no sandbox holds. */
struct root_sweep
{
  bool dry_run;
  kist_gc_fn fn;
  void *arg;
};

static void
root_swept (const char *name, const char *error, void *arg)
{
  struct root_sweep *rs = arg;
  struct gc_entry e = { .pub.kind = KIST_GC_SANDBOX_DIR,
                        .pub.failed = error != NULL,
                        .id = xstrdup (name),
                        .reason = xstrdup ("a shared sandbox root no sandbox is using"),
                        .error = error ? xstrdup (error) : NULL };
  gc_report (&e, NULL, rs->dry_run, rs->fn, rs->arg);
  gc_entry_clear (&e);
}

int
kist_gc (const char *root_opt, bool dry_run, kist_gc_fn fn, void *arg, struct kist_error **err)
{
  _cleanup_free_ char *root = NULL;
  _cleanup_close_ int rootfd = kist_state_root_open (root_opt, &root, err);
  if (rootfd < 0)
    return -1;
  _cleanup_strv_ char **ids = NULL;
  if (kist_state_list (rootfd, &ids, err) < 0)
    return -1;

  int failed = 0;
  time_t now = time (NULL);
  for (char **id = ids; id && *id; id++)
    {
      _cleanup_error_ struct kist_error *e = NULL;
      struct kist_state st = { 0 };
      /* Read without the lock: a sandbox being created (no state.json yet)
       * or removed right now is skipped. */
      char *reason = NULL;
      if (kist_state_peek (rootfd, *id, &st, &e) < 0)
        {
          bool missing = e->errnum == ENOENT;
          if (!missing)
            kist_log_warn ("gc: skipping container `%s`: %s", *id, e->msg);
          kist_state_clear (&st);
          kist_error_freep (&e);
          /* A state dir without state.json, not locked (the lock check
           * below): what an interrupted create or delete left. */
          if (!missing || !stateless_garbage (rootfd, *id))
            continue;
          st.id = xstrdup (*id);
          reason = xstrdup ("it has no state.json (an interrupted create or delete)");
        }
      else
        reason = garbage_reason (&st, now);
      struct gc_entry ent = { .pub.kind = KIST_GC_CONTAINER, .id = xstrdup (*id), .reason = reason };
      if (ent.reason == NULL)
        {
          gc_entry_clear (&ent);
          kist_state_clear (&st);
          continue;
        }
      /* A kist command working on it (its own teardown, another gc): leave
       * it to that one rather than wait for its lock.  Only a brief wait
       * (0.5 s): a create's init that outlived its killed kist holds the
       * lock for a moment, until it closes the inherited fd and exits. */
      int busy = kist_state_busy (rootfd, *id, &e);
      bool waited = false;
      for (int i = 0; busy == 1 && i < 50; i++)
        {
          usleep (10000);
          waited = true;
          busy = kist_state_busy (rootfd, *id, &e);
        }
      if (busy < 0 && e->errnum == ENOENT)
        {
          /* Removed in between (by its own delete): nothing to do. */
          gc_entry_clear (&ent);
          kist_state_clear (&st);
          continue;
        }
      if (busy == 0 && waited)
        {
          /* Decide again on what it holds now. */
          struct kist_state again = { 0 };
          _cleanup_error_ struct kist_error *e2 = NULL;
          char *why = NULL;
          if (kist_state_peek (rootfd, *id, &again, &e2) == 0)
            why = garbage_reason (&again, now);
          else if (e2->errnum == ENOENT && stateless_garbage (rootfd, *id))
            why = xstrdup ("it has no state.json (an interrupted create or delete)");
          kist_state_clear (&again);
          if (why == NULL)
            {
              gc_entry_clear (&ent);
              kist_state_clear (&st);
              continue;
            }
          free (why);
        }
      if (busy < 0)
        {
          ent.pub.failed = true;
          ent.error = xstrdup (e->msg);
        }
      else
        ent.pub.busy = busy == 1;
      if (!dry_run && !ent.pub.busy && !ent.pub.failed)
        collect (rootfd, root, &st, &ent);
      if (ent.pub.failed)
        failed++;
      gc_report (&ent, &st, dry_run, fn, arg);
      gc_entry_clear (&ent);
      kist_state_clear (&st);
    }
  failed += sweep_temp (rootfd, dry_run, fn, arg);
  failed += sweep_sandbox_orphans (rootfd, root, dry_run, fn, arg);
  struct root_sweep rs = { .dry_run = dry_run, .fn = fn, .arg = arg };
  failed += kist_sandbox_root_sweep (rootfd, dry_run, root_swept, &rs);
  return failed;
}
