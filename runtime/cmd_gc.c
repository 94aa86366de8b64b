/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist gc [--dry-run] [--format text|json]: remove the sandboxes whose
 * deadline has passed or whose owning kist process is gone (design.md
 * section 5).  Containers without a deadline and without an owning kist
 * (kist create, kist run --detach) are never touched, nor is a sandbox within
 * its deadline whose kist is alive. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
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
#include "util.h"

/* ROOT/~sandbox/ID: the sandbox's bundle dir (sandbox.h). */
#define GC_SANDBOX_DIR "~sandbox"
/* A kept scratch dir (kist sandbox --keep) is the user's output: kept. */
#define GC_SANDBOX_KEEP "work"
/* The sandbox dir holds a few levels of mount points; deeper is not ours. */
#define GC_MAX_DEPTH 64

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

static void
closedirp (DIR **d)
{
  if (*d)
    closedir (*d);
  *d = NULL;
}
#define _cleanup_dir_ __attribute__ ((cleanup (closedirp)))

/* Is parentfd/name the root of a mount (visible in our mount namespace)? */
static bool
is_mount_root (int parentfd, const char *name)
{
  struct statx stx;
  if (statx (parentfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE, &stx) < 0)
    return false;
  return (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
         && (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/* Remove the directory parentfd/name and everything in it, never following
 * a symlink (they are unlinked) and never crossing into a mount or another
 * filesystem.  path names it in messages. */
static int
remove_tree_at (int parentfd, const char *name, const char *path, dev_t dev, int depth,
                struct kist_error **err)
{
  if (depth > GC_MAX_DEPTH)
    return kist_error_make (err, ELOOP,
                            "`%s` is nested more than %d levels deep, which kist sandbox never "
                            "makes; refusing to remove it: inspect and remove it by hand",
                            path, GC_MAX_DEPTH);
  if (is_mount_root (parentfd, name))
    return kist_error_make (err, EBUSY,
                            "`%s` is a mount point; refusing to remove across it: unmount it "
                            "(`umount %s`) and run `kist gc` again",
                            path, path);
  int fd = openat (parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return kist_error_make (err, errno, "open `%s`", path);
  _cleanup_dir_ DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      int e = errno;
      close (fd);
      return kist_error_make (err, e, "read `%s`", path);
    }
  struct stat st;
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "stat `%s`", path);
  if (st.st_dev != dev)
    return kist_error_make (err, EXDEV,
                            "`%s` is on another filesystem (a mount?); refusing to remove it: "
                            "unmount it and run `kist gc` again",
                            path);
  for (;;)
    {
      errno = 0;
      struct dirent *de = readdir (d);
      if (de == NULL)
        break;
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      _cleanup_free_ char *sub = xasprintf ("%s/%s", path, de->d_name);
      struct stat sst;
      if (fstatat (fd, de->d_name, &sst, AT_SYMLINK_NOFOLLOW) < 0)
        {
          if (errno == ENOENT)
            continue;
          return kist_error_make (err, errno, "stat `%s`", sub);
        }
      if (S_ISDIR (sst.st_mode))
        {
          if (remove_tree_at (fd, de->d_name, sub, dev, depth + 1, err) < 0)
            return -1;
        }
      else if (unlinkat (fd, de->d_name, 0) < 0 && errno != ENOENT)
        return kist_error_make (err, errno, "remove `%s`", sub);
    }
  if (errno != 0)
    return kist_error_make (err, errno, "read `%s`", path);
  if (unlinkat (parentfd, name, AT_REMOVEDIR) < 0)
    return kist_error_make (err, errno, "remove the directory `%s`", path);
  return 0;
}

/* Remove ROOT/~sandbox/ID (all but a kept work dir) if present.  Returns 1
 * when something was removed, 0 when there was nothing, negative with *err. */
static int
remove_sandbox_dir (int rootfd, const char *root, const char *id, char **kept,
                    struct kist_error **err)
{
  _cleanup_free_ char *top = xasprintf ("%s/%s", root, GC_SANDBOX_DIR);
  _cleanup_free_ char *path = xasprintf ("%s/%s", top, id);
  struct stat st;

  if (strlen (id) > NAME_MAX)
    return 0; /* kist sandbox ids are short: never a sandbox dir */
  _cleanup_close_ int topfd
      = openat (rootfd, GC_SANDBOX_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (topfd < 0)
    {
      if (errno == ENOENT)
        return 0;
      return kist_error_make (err, errno, "open `%s` (not a directory or a symlink?)", top);
    }
  if (fstatat (topfd, id, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (errno == ENOENT)
        return 0;
      return kist_error_make (err, errno, "stat `%s`", path);
    }
  if (!S_ISDIR (st.st_mode))
    return kist_error_make (err, ENOTDIR,
                            "`%s` is not a directory (kist sandbox makes one); refusing to "
                            "touch it: inspect and remove it by hand",
                            path);
  if (is_mount_root (topfd, id))
    return kist_error_make (err, EBUSY,
                            "`%s` is a mount point; refusing to remove across it: unmount it "
                            "and run `kist gc` again",
                            path);
  dev_t dev = st.st_dev;
  int fd = openat (topfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return kist_error_make (err, errno, "open `%s`", path);
  _cleanup_dir_ DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      int e = errno;
      close (fd);
      return kist_error_make (err, e, "read `%s`", path);
    }
  bool keep = false;
  for (;;)
    {
      errno = 0;
      struct dirent *de = readdir (d);
      if (de == NULL)
        break;
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      _cleanup_free_ char *sub = xasprintf ("%s/%s", path, de->d_name);
      struct stat sst;
      if (fstatat (fd, de->d_name, &sst, AT_SYMLINK_NOFOLLOW) < 0)
        {
          if (errno == ENOENT)
            continue;
          return kist_error_make (err, errno, "stat `%s`", sub);
        }
      if (S_ISDIR (sst.st_mode) && strcmp (de->d_name, GC_SANDBOX_KEEP) == 0)
        {
          keep = true;
          *kept = steal_pointer (&sub);
          continue;
        }
      if (S_ISDIR (sst.st_mode))
        {
          if (remove_tree_at (fd, de->d_name, sub, dev, 1, err) < 0)
            return -1;
        }
      else if (unlinkat (fd, de->d_name, 0) < 0 && errno != ENOENT)
        return kist_error_make (err, errno, "remove `%s`", sub);
    }
  if (errno != 0)
    return kist_error_make (err, errno, "read `%s`", path);
  if (keep)
    return 1;
  if (unlinkat (topfd, id, AT_REMOVEDIR) < 0)
    return kist_error_make (err, errno, "remove the directory `%s`", path);
  if (fstatat (topfd, id, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return kist_error_make (err, EEXIST, "`%s` still exists after removing it", path);
  if (errno != ENOENT)
    return kist_error_make (err, errno, "verify that `%s` is gone", path);
  return 1;
}

/* Why is this entry garbage?  NULL: it is not (or not a sandbox at all). */
static char *
garbage_reason (const struct kist_state *st, time_t now)
{
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
      const char *cg = st->cgroup_created ? st->cgroup_created : st->cgroup_path;
      if (lstat (cg, &sb) == 0)
        {
          kist_error_make (&err, EEXIST, "the cgroup `%s` still exists after delete", cg);
          goto fail;
        }
      e->cgroup_removed = true;
    }
  int r = remove_sandbox_dir (rootfd, root, e->id, &e->kept, &err);
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

int
kist_cmd_gc (const struct kist_globals *g, int argc, char **argv, struct kist_error **err)
{
  static const struct option opts[] = { { "dry-run", no_argument, NULL, 'n' },
                                        { "format", required_argument, NULL, 'f' },
                                        { NULL, 0, NULL, 0 } };
  const char *format = "text";
  bool dry_run = false;
  int c;
  opterr = 0;
  while ((c = getopt_long (argc, argv, "+nf:", opts, NULL)) != -1)
    switch (c)
      {
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
      if (kist_state_peek (rootfd, *id, &st, &e) < 0)
        {
          if (e->errnum != ENOENT)
            kist_log_warn ("gc: skipping container `%s`: %s", *id, e->msg);
          kist_state_clear (&st);
          continue;
        }
      struct gc_entry ent = { .id = xstrdup (*id), .reason = garbage_reason (&st, now) };
      if (ent.reason == NULL)
        {
          gc_entry_clear (&ent);
          kist_state_clear (&st);
          continue;
        }
      /* A kist command working on it (its own teardown, another gc): leave
       * it to that one rather than wait for its lock. */
      int busy = kist_state_busy (rootfd, *id, &e);
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
  if (jg)
    {
      yajl_gen_array_close (jg);
      _cleanup_free_ char *text = kist_json_gen_take (jg);
      printf ("%s\n", text);
    }
  fflush (stdout);
  return failed ? 1 : 0;
}
