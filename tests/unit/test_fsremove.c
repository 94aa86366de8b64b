/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/fsremove.c: the one tree remover. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsremove.h"
#include "util.h"
#include "unit.h"

static char tmpdir[PATH_MAX];
static int tmpfd = -1;

static void
setup (void)
{
  strcpy (tmpdir, "/tmp/kist-test-fsremove.XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (tmpdir));
  tmpfd = open (tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (tmpfd, 0);
}

static void
teardown (void)
{
  /* The remover under test cleans up what the tests left (nothing but
   * plain files and directories by then). */
  _cleanup_error_ struct kist_error *err = NULL;
  const char *slash = strrchr (tmpdir, '/');
  _cleanup_close_ int parent = open ("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const struct kist_remove_opts o = { .path = tmpdir, .max_depth = 16, .chmod_own = true };
  if (parent >= 0)
    kist_remove_tree_at (parent, slash + 1, &o, &err);
  close (tmpfd);
  tmpfd = -1;
}

static void
put_file (const char *rel, const char *content)
{
  int fd = openat (tmpfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ck_assert_msg (fd >= 0, "create %s: %s", rel, strerror (errno));
  ck_assert_int_eq (kist_write_all (fd, content, strlen (content)), 0);
  close (fd);
}

static void
put_dir (const char *rel)
{
  ck_assert_msg (mkdirat (tmpfd, rel, 0700) == 0, "mkdir %s: %s", rel, strerror (errno));
}

static bool
exists (const char *rel)
{
  struct stat st;
  return fstatat (tmpfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* A small tree with every kind of entry kist's state and sandbox dirs hold. */
static void
make_tree (const char *top)
{
  char p[PATH_MAX];
  put_dir (top);
  snprintf (p, sizeof p, "%s/a", top);
  put_dir (p);
  snprintf (p, sizeof p, "%s/a/b", top);
  put_dir (p);
  snprintf (p, sizeof p, "%s/a/b/deep", top);
  put_file (p, "x");
  snprintf (p, sizeof p, "%s/file", top);
  put_file (p, "y");
  snprintf (p, sizeof p, "%s/fifo", top);
  ck_assert_int_eq (mkfifoat (tmpfd, p, 0600), 0);
  snprintf (p, sizeof p, "%s/a/locked", top);
  put_dir (p);
  ck_assert_int_eq (fchmodat (tmpfd, p, 0, 0), 0);
}

START_TEST (test_removes_tree)
{
  _cleanup_error_ struct kist_error *err = NULL;
  make_tree ("t");
  _cleanup_free_ char *path = xasprintf ("%s/t", tmpdir);
  const struct kist_remove_opts o = { .path = path, .max_depth = 8, .chmod_own = true };
  ck_assert_int_eq (kist_remove_tree_at (tmpfd, "t", &o, &err), 1);
  ck_assert (!exists ("t"));
  /* Not there: 0, no error. */
  ck_assert_int_eq (kist_remove_tree_at (tmpfd, "t", &o, &err), 0);
  ck_assert_ptr_null (err);
}
END_TEST

/* Symlinks in the tree are unlinked, never followed: their targets (a file
 * and a directory outside the tree) survive with their content. */
START_TEST (test_symlink_not_followed)
{
  _cleanup_error_ struct kist_error *err = NULL;
  put_dir ("outside");
  put_file ("outside/precious", "keep me");
  make_tree ("t");
  ck_assert_int_eq (symlinkat ("../outside", tmpfd, "t/dirlink"), 0);
  ck_assert_int_eq (symlinkat ("../../outside/precious", tmpfd, "t/a/filelink"), 0);
  _cleanup_free_ char *abs = xasprintf ("%s/outside", tmpdir);
  ck_assert_int_eq (symlinkat (abs, tmpfd, "t/a/b/abslink"), 0);
  _cleanup_free_ char *path = xasprintf ("%s/t", tmpdir);
  const struct kist_remove_opts o = { .path = path, .max_depth = 8, .chmod_own = true };
  ck_assert_int_eq (kist_remove_tree_at (tmpfd, "t", &o, &err), 1);
  ck_assert (!exists ("t"));
  ck_assert (exists ("outside/precious"));

  /* The top itself a symlink to a directory: refused (not a directory),
   * or with any_type unlinked; the target stays either way. */
  ck_assert_int_eq (symlinkat ("outside", tmpfd, "top"), 0);
  const struct kist_remove_opts o2 = { .path = "top", .max_depth = 8 };
  ck_assert_int_eq (kist_remove_tree_at (tmpfd, "top", &o2, &err), -ENOTDIR);
  ck_assert_msg (strstr (err->msg, "`top` is not a directory") != NULL, "%s", err->msg);
  kist_error_freep (&err);
  ck_assert (exists ("top") && exists ("outside/precious"));
  const struct kist_remove_opts o3 = { .path = "top", .max_depth = 8, .any_type = true };
  ck_assert_int_eq (kist_remove_tree_at (tmpfd, "top", &o3, &err), 1);
  ck_assert (!exists ("top") && exists ("outside/precious"));
}
END_TEST

/* keep: a directory of that name in the top stays, with its content, and so
 * does the top; everything else goes; *kept names it. */
START_TEST (test_keep_child)
{
  _cleanup_error_ struct kist_error *err = NULL;
  make_tree ("t");
  put_dir ("t/work");
  put_file ("t/work/result", "r");
  put_file ("t/state.json", "{}");
  _cleanup_free_ char *path = xasprintf ("%s/t", tmpdir);
  _cleanup_free_ char *kept = NULL;
  const struct kist_remove_opts o = {
    .path = path, .max_depth = 8, .keep = "work", .kept = &kept, .last = "state.json",
    .chmod_own = true,
  };
  ck_assert_int_eq (kist_remove_tree_at (tmpfd, "t", &o, &err), 1);
  ck_assert_ptr_nonnull (kept);
  _cleanup_free_ char *want = xasprintf ("%s/work", path);
  ck_assert_str_eq (kept, want);
  ck_assert (exists ("t/work/result"));
  ck_assert (!exists ("t/a") && !exists ("t/file") && !exists ("t/fifo"));
  ck_assert (!exists ("t/state.json"));

  /* Without a work dir the top goes too, and *kept is NULL. */
  ck_assert_int_eq (unlinkat (tmpfd, "t/work/result", 0), 0);
  ck_assert_int_eq (unlinkat (tmpfd, "t/work", AT_REMOVEDIR), 0);
  put_file ("t/other", "o");
  free (steal_pointer (&kept));
  ck_assert_int_eq (kist_remove_tree_at (tmpfd, "t", &o, &err), 1);
  ck_assert_ptr_null (kept);
  ck_assert (!exists ("t"));
}
END_TEST

/* The refusals name the path, and max_depth 0 refuses before removing
 * anything. */
START_TEST (test_failure_names_path)
{
  _cleanup_error_ struct kist_error *err = NULL;
  put_dir ("s");
  put_file ("s/state.json", "{}");
  put_file ("s/start.sock", "");
  put_dir ("s/sub");
  _cleanup_free_ char *spath = xasprintf ("%s/s", tmpdir);
  const struct kist_remove_opts o = {
    .path = spath, .what = "remove the state directory", .max_depth = 0, .last = "state.json",
  };
  ck_assert_int_eq (kist_remove_tree_at (tmpfd, "s", &o, &err), -EISDIR);
  _cleanup_free_ char *want
      = xasprintf ("remove the state directory: `%s` contains the directory `sub`", spath);
  ck_assert_msg (strncmp (err->msg, want, strlen (want)) == 0, "%s", err->msg);
  kist_error_freep (&err);
  ck_assert (exists ("s/state.json") && exists ("s/start.sock") && exists ("s/sub"));

  /* Deeper than max_depth: ELOOP naming the deep directory and the top. */
  make_tree ("t");
  _cleanup_free_ char *tpath = xasprintf ("%s/t", tmpdir);
  const struct kist_remove_opts o2 = { .path = tpath, .max_depth = 1, .chmod_own = true };
  ck_assert_int_eq (kist_remove_tree_at (tmpfd, "t", &o2, &err), -ELOOP);
  ck_assert_msg (strstr (err->msg, "/t/a/") != NULL && strstr (err->msg, "nested more than 1")
                     && strstr (err->msg, tpath),
                 "%s", err->msg);
  kist_error_freep (&err);
  ck_assert (exists ("t/a/b/deep"));

  /* A non-directory top without any_type. */
  put_file ("plain", "p");
  const struct kist_remove_opts o3 = { .path = "plain", .max_depth = 1 };
  ck_assert_int_eq (kist_remove_tree_at (tmpfd, "plain", &o3, &err), -ENOTDIR);
  ck_assert_msg (strstr (err->msg, "`plain`") != NULL, "%s", err->msg);
  ck_assert (exists ("plain"));
}
END_TEST

/* kist_remove_children empties a directory and leaves it. */
START_TEST (test_remove_children)
{
  _cleanup_error_ struct kist_error *err = NULL;
  make_tree ("t");
  _cleanup_close_ int fd = openat (tmpfd, "t", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (fd, 0);
  const struct kist_remove_opts o = { .path = "t", .max_depth = 8, .chmod_own = true };
  ck_assert_int_eq (kist_remove_children (fd, &o, &err), 0);
  ck_assert (exists ("t") && !exists ("t/a") && !exists ("t/file"));
}
END_TEST

/* In a mount namespace of its own (a forked child; nothing is mounted on
 * the host): a tmpfs and a bind mount inside the tree are refused, named,
 * and what is in them survives. */
static int
mount_child (void)
{
  if (unshare (CLONE_NEWNS) < 0)
    {
      uid_t uid = geteuid ();
      gid_t gid = getegid ();
      if (unshare (CLONE_NEWUSER | CLONE_NEWNS) < 0)
        return 77;
      char map[64];
      int f = open ("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
      if (f >= 0)
        {
          (void) !write (f, "deny", 4);
          close (f);
        }
      snprintf (map, sizeof map, "0 %u 1", (unsigned) uid);
      f = open ("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
      if (f < 0 || write (f, map, strlen (map)) < 0)
        return 77;
      close (f);
      snprintf (map, sizeof map, "0 %u 1", (unsigned) gid);
      f = open ("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
      if (f < 0 || write (f, map, strlen (map)) < 0)
        return 77;
      close (f);
    }
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return 10;
  /* tmpfd was opened in the parent's mount namespace, where lookups from it
   * would never see the mounts made here: a fresh one of this namespace. */
  close (tmpfd);
  tmpfd = open (tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (tmpfd < 0)
    return 9;
  _cleanup_free_ char *m = xasprintf ("%s/t/a/mnt", tmpdir);
  if (mkdir (m, 0700) < 0 || mount ("kist-test", m, "tmpfs", 0, "size=64k") < 0)
    return 11;
  _cleanup_free_ char *inner = xasprintf ("%s/inner", m);
  int f = open (inner, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (f < 0)
    return 12;
  close (f);
  _cleanup_free_ char *path = xasprintf ("%s/t", tmpdir);
  struct kist_error *err = NULL;
  const struct kist_remove_opts o = { .path = path, .max_depth = 8 };
  int r = kist_remove_tree_at (tmpfd, "t", &o, &err);
  if (r != -EBUSY || strstr (err->msg, "mount point") == NULL || strstr (err->msg, m) == NULL)
    {
      fprintf (stderr, "tmpfs: r=%d %s\n", r, err ? err->msg : "(no error)");
      return 13;
    }
  kist_error_free (err);
  err = NULL;
  if (access (inner, F_OK) < 0)
    return 14;
  if (umount (m) < 0 || rmdir (m) < 0)
    return 15;

  /* A bind mount of a directory of the same filesystem (same st_dev). */
  _cleanup_free_ char *src = xasprintf ("%s/outside", tmpdir);
  _cleanup_free_ char *b = xasprintf ("%s/t/bind", tmpdir);
  _cleanup_free_ char *precious = xasprintf ("%s/precious", src);
  f = open (precious, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (f < 0)
    return 16;
  close (f);
  if (mkdir (b, 0700) < 0 || mount (src, b, NULL, MS_BIND, NULL) < 0)
    return 17;
  r = kist_remove_tree_at (tmpfd, "t", &o, &err);
  if (r != -EBUSY || strstr (err->msg, b) == NULL)
    {
      fprintf (stderr, "bind: r=%d %s\n", r, err ? err->msg : "(no error)");
      return 18;
    }
  kist_error_free (err);
  if (access (precious, F_OK) < 0)
    return 19;
  return 0;
}

START_TEST (test_mount_not_crossed)
{
  make_tree ("t");
  put_dir ("outside");
  fflush (NULL);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (mount_child ());
  int status = 0;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (WIFEXITED (status));
  if (WEXITSTATUS (status) == 77)
    {
      fprintf (stderr, "test_mount_not_crossed: skipped: cannot make a mount namespace "
                       "(unshare refused: no user namespaces for this user?)\n");
      return;
    }
  ck_assert_int_eq (WEXITSTATUS (status), 0);
  /* Outside the child's namespace nothing was ever mounted: the tree goes. */
  _cleanup_error_ struct kist_error *err = NULL;
  _cleanup_free_ char *path = xasprintf ("%s/t", tmpdir);
  const struct kist_remove_opts o = { .path = path, .max_depth = 8, .chmod_own = true };
  ck_assert_int_eq (kist_remove_tree_at (tmpfd, "t", &o, &err), 1);
  ck_assert (exists ("outside/precious"));
}
END_TEST

static Suite *
fsremove_suite (void)
{
  Suite *s = suite_create ("fsremove");
  TCase *tc = tcase_create ("core");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_removes_tree);
  tcase_add_test (tc, test_symlink_not_followed);
  tcase_add_test (tc, test_keep_child);
  tcase_add_test (tc, test_failure_names_path);
  tcase_add_test (tc, test_remove_children);
  tcase_add_test (tc, test_mount_not_crossed);
  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return kist_unit_run (fsremove_suite ());
}
