/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist gc [--dry-run] [--format text|json]: remove the sandboxes whose
 * deadline has passed or whose owning kist process is gone (design.md
 * section 5), and what an interrupted create left (issue #8): a state dir
 * whose intent record says creating while its kist is gone, one without
 * state.json, and the temporary dirs (@creating-*) of a create killed before
 * its state dir appeared.  Containers without a deadline and without an owning
 * kist (kist create, kist run --detach) are never touched, nor is a sandbox
 * within its deadline whose kist is alive, nor anything whose lock another
 * kist command holds (a create in progress holds it from the start). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "json.h"
#include "log.h"
#include "sandbox.h"
#include "util.h"

struct gc_entry
{
  char *id;
  char *reason;
  bool busy;             /* another kist command holds its lock: skipped */
  bool failed;
  bool killed, cgroup_removed, state_removed, scratch_removed;
  char *kept;            /* the kept work dir, or NULL */
  char *error;
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
  if (kist_state_status (st) != KIST_STATUS_STOPPED)
    {
      if (kist_container_kill (rootfd, e->id, SIGKILL, true, &err) < 0)
        {
          /* It stopped (or was removed) in between: nothing to kill. */
          if (err->errnum != ESRCH && err->errnum != ENOENT)
            goto fail;
          kist_error_freep (&err);
        }
      else
        e->killed = true;
    }
  if (kist_container_delete (rootfd, e->id, true, &err) < 0)
    goto fail;
  e->state_removed = true;
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
      e->cgroup_removed = true;
    }
  /* A kept scratch dir (kist sandbox --keep) is the user's output: kept. */
  int r = kist_sandbox_dir_remove (rootfd, root, e->id, true, &e->kept, &err);
  if (r < 0)
    goto fail;
  e->scratch_removed = r > 0;
  return;

fail:
  e->failed = true;
  e->error = xstrdup (err ? err->msg : "unknown error");
}

static void
print_text (const struct gc_entry *e, bool dry_run)
{
  if (e->busy)
    {
      printf ("skipped %s: %s, but another kist command holds its lock\n", e->id, e->reason);
      return;
    }
  if (dry_run && !e->failed)
    {
      printf ("would remove %s: %s\n", e->id, e->reason);
      return;
    }
  char buf[256] = "";
  const char *sep = "";
  size_t n = 0;
#define GC_ADD(cond, what)                                                   \
  if (cond)                                                                  \
    {                                                                        \
      n += (size_t) snprintf (buf + n, sizeof buf - n, "%s%s", sep, what);  \
      sep = ", ";                                                            \
    }
  GC_ADD (e->killed, "processes killed");
  GC_ADD (e->cgroup_removed, "cgroup removed");
  GC_ADD (e->state_removed, "state removed");
  GC_ADD (e->scratch_removed, "scratch removed");
#undef GC_ADD
  if (e->failed)
    {
      printf ("failed to remove %s: %s%s\n", e->id, buf[0] ? buf : "nothing removed",
              buf[0] ? " before the error" : "");
      kist_log_error ("gc: container `%s` (%s): %s", e->id, e->reason, e->error);
      return;
    }
  printf ("removed %s: %s\n", e->id, buf[0] ? buf : "nothing left to remove");
  if (e->kept)
    printf ("kept %s: the --keep work dir %s\n", e->id, e->kept);
}

static void
gen_bool (yajl_gen g, const char *key, bool v)
{
  kist_json_gen_str_lossy (g, key);
  yajl_gen_bool (g, v);
}

static void
gen_entry_json (yajl_gen g, const struct gc_entry *e, const struct kist_state *st, bool dry_run)
{
  yajl_gen_map_open (g);
  kist_json_gen_str_lossy (g, "id");
  kist_json_gen_str_lossy (g, e->id);
  kist_json_gen_str_lossy (g, "reason");
  kist_json_gen_str_lossy (g, e->reason);
  kist_json_gen_str_lossy (g, "deadline");
  yajl_gen_integer (g, st->deadline);
  kist_json_gen_str_lossy (g, "kistPid");
  yajl_gen_integer (g, st->kist_pid);
  kist_json_gen_str_lossy (g, "action");
  kist_json_gen_str_lossy (g, e->busy ? "skipped" : dry_run ? "would-remove"
                                                   : e->failed ? "failed" : "removed");
  if (!dry_run && !e->busy)
    {
      gen_bool (g, "processesKilled", e->killed);
      gen_bool (g, "cgroupRemoved", e->cgroup_removed);
      gen_bool (g, "stateRemoved", e->state_removed);
      gen_bool (g, "scratchRemoved", e->scratch_removed);
      if (e->kept)
        {
          kist_json_gen_str_lossy (g, "kept");
          kist_json_gen_str_lossy (g, e->kept);
        }
      if (e->failed)
        {
          kist_json_gen_str_lossy (g, "error");
          kist_json_gen_str_lossy (g, e->error);
        }
    }
  yajl_gen_map_close (g);
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
sweep_temp (int rootfd, bool dry_run, yajl_gen jg)
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
      static const char why[] = "the temporary state dir of an interrupted create";
      if (jg)
        {
          yajl_gen_map_open (jg);
          kist_json_gen_str_lossy (jg, "id");
          kist_json_gen_str_lossy (jg, *n);
          kist_json_gen_str_lossy (jg, "reason");
          kist_json_gen_str_lossy (jg, why);
          kist_json_gen_str_lossy (jg, "action");
          kist_json_gen_str_lossy (jg, dry_run ? "would-remove" : "removed");
          if (!dry_run)
            gen_bool (jg, "stateRemoved", true);
          yajl_gen_map_close (jg);
        }
      else if (dry_run)
        printf ("would remove %s: %s\n", *n, why);
      else
        printf ("removed %s: %s (state removed)\n", *n, why);
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
sweep_sandbox_orphans (int rootfd, const char *root, bool dry_run, yajl_gen jg)
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
      struct gc_entry e = { .id = xstrdup (de->d_name), .reason = xstrdup (why) };
      if (!dry_run)
        {
          _cleanup_error_ struct kist_error *err = NULL;
          int r = kist_sandbox_dir_remove (rootfd, root, e.id, true, &e.kept, &err);
          if (r < 0)
            {
              e.failed = true;
              e.error = xstrdup (err->msg);
              failed = 1;
            }
          else
            e.scratch_removed = r > 0;
        }
      if (jg)
        {
          struct kist_state none = { 0 };
          gen_entry_json (jg, &e, &none, dry_run);
        }
      else
        print_text (&e, dry_run);
      gc_entry_clear (&e);
    }
  return failed;
}

int
kist_cmd_gc (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  static const struct option opts[] = { { "dry-run", no_argument, NULL, 'n' },
                                        { "format", required_argument, NULL, 'f' },
                                        { "help", no_argument, NULL, 'h' },
                                        { NULL, 0, NULL, 0 } };
  const char *format = "text";
  bool dry_run = false;
  int c;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+nf:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'h': return kist_cmd_help ("gc");
      case 'n': dry_run = true; break;
      case 'f': format = optarg; break;
      default:
        kist_error_make (err, EINVAL, "gc: unknown option or missing value: `%s`",
                         argv[optind - 1]);
        return KIST_EXIT_USAGE;
      }
  bool json = strcmp (format, "json") == 0;
  if (!json && strcmp (format, "text") != 0)
    {
      kist_error_make (err, EINVAL, "gc: --format `%s`: expected text or json", format);
      return KIST_EXIT_USAGE;
    }
  if (optind < argc)
    {
      kist_error_make (err, EINVAL, "gc: unexpected argument `%s` (gc takes no container id)",
                       argv[optind]);
      return KIST_EXIT_USAGE;
    }

  _cleanup_free_ char *root = NULL;
  _cleanup_close_ int rootfd = kist_state_root_open (g->root, &root, err);
  if (rootfd < 0)
    return KIST_EXIT_USAGE;
  _cleanup_strv_ char **ids = NULL;
  if (kist_state_list (rootfd, &ids, err) < 0)
    return KIST_EXIT_USAGE;

  _cleanup_yajl_gen_ yajl_gen jg = json ? kist_json_gen_new (true, true) : NULL;
  if (jg)
    yajl_gen_array_open (jg);
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
      struct gc_entry ent = { .id = xstrdup (*id), .reason = reason };
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
          ent.failed = true;
          ent.error = xstrdup (e->msg);
        }
      else
        ent.busy = busy == 1;
      if (!dry_run && !ent.busy && !ent.failed)
        collect (rootfd, root, &st, &ent);
      if (ent.failed)
        failed++;
      if (jg)
        gen_entry_json (jg, &ent, &st, dry_run);
      else
        print_text (&ent, dry_run);
      gc_entry_clear (&ent);
      kist_state_clear (&st);
    }
  failed += sweep_temp (rootfd, dry_run, jg);
  failed += sweep_sandbox_orphans (rootfd, root, dry_run, jg);
  if (jg)
    {
      yajl_gen_array_close (jg);
      _cleanup_free_ char *text = kist_json_gen_take (jg);
      printf ("%s\n", text);
    }
  fflush (stdout);
  return failed ? 1 : 0;
}
