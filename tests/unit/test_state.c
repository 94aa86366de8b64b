/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/state.c. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "state.h"
#include "util.h"
#include "unit.h"

static char tmpdir[PATH_MAX];

/* Remove the temp tree made by a test (only our own small layout). */
static void
rm_rf (const char *path)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    return;
  if (S_ISDIR (st.st_mode))
    {
      int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0)
        {
          DIR *d = fdopendir (fd);
          struct dirent *de;
          while (d && (de = readdir (d)) != NULL)
            {
              if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
                continue;
              char *sub = xasprintf ("%s/%s", path, de->d_name);
              rm_rf (sub);
              free (sub);
            }
          if (d)
            closedir (d);
          else
            close (fd);
        }
      chmod (path, 0700);
      rmdir (path);
    }
  else
    unlink (path);
}

static void
setup (void)
{
  strcpy (tmpdir, "/tmp/kist-test-state.XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (tmpdir));
}

static void
teardown (void)
{
  rm_rf (tmpdir);
}

static int
open_root (const char *sub, char **resolved)
{
  _cleanup_error_ struct kist_error *err = NULL;
  _cleanup_free_ char *path = xasprintf ("%s/%s", tmpdir, sub);
  int fd = kist_state_root_open (path, resolved, &err);
  ck_assert_msg (fd >= 0, "root_open: %s", err ? err->msg : "?");
  return fd;
}

static yajl_val
get (yajl_val obj, const char *key)
{
  ck_assert (YAJL_IS_OBJECT (obj));
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      return obj->u.object.values[i];
  return NULL;
}

/* ---- ids ---- */

START_TEST (test_id_validate)
{
  char long_ok[KIST_ID_MAX + 1], too_long[KIST_ID_MAX + 2];
  memset (long_ok, 'a', KIST_ID_MAX);
  long_ok[KIST_ID_MAX] = '\0';
  memset (too_long, 'b', KIST_ID_MAX + 1);
  too_long[KIST_ID_MAX + 1] = '\0';

  static const char *valid[] = { "a", "c1", "A-Z_a.z+0-9", "...", ".a", "-x", "+", "a..b" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (valid); i++)
    {
      _cleanup_error_ struct kist_error *err = NULL;
      ck_assert_msg (kist_id_validate (valid[i], &err) == 0, "`%s` should be valid", valid[i]);
      ck_assert_ptr_null (err);
    }
  ck_assert_int_eq (kist_id_validate (long_ok, NULL), 0);

  const char *invalid[]
      = { "", ".", "..", "a/b", "../x", too_long, "a b", "\xc3\xa9", "a\nb", "a:b", "a\\b", "/" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (invalid); i++)
    {
      _cleanup_error_ struct kist_error *err = NULL;
      ck_assert_msg (kist_id_validate (invalid[i], &err) == -EINVAL, "`%s` should be invalid",
                     invalid[i]);
      ck_assert_ptr_nonnull (err);
      ck_assert_int_eq (err->errnum, EINVAL);
      /* The message names the rule ... */
      ck_assert_msg (strstr (err->msg, "1 to 1024 characters") != NULL, "%s", err->msg);
      ck_assert (strncmp (err->msg, "invalid container id `", 22) == 0);
      /* ... and is printable, even for control characters. */
      for (const char *p = err->msg; *p; p++)
        ck_assert ((unsigned char) *p >= 0x20 && (unsigned char) *p < 0x7f);
    }
  _cleanup_error_ struct kist_error *err = NULL;
  kist_id_validate ("a/b", &err);
  ck_assert_ptr_nonnull (strstr (err->msg, "`a/b`"));
  ck_assert_int_eq (kist_id_validate (NULL, NULL), -EINVAL);
}
END_TEST

/* ---- root ---- */

START_TEST (test_root_open)
{
  _cleanup_free_ char *resolved = NULL;
  int fd = open_root ("a/b/root", &resolved);
  _cleanup_free_ char *real = realpath (tmpdir, NULL);
  _cleanup_free_ char *expect = xasprintf ("%s/a/b/root", real);
  ck_assert_str_eq (resolved, expect);
  struct stat st;
  ck_assert_int_eq (fstat (fd, &st), 0);
  ck_assert (S_ISDIR (st.st_mode));
  ck_assert_uint_eq (st.st_mode & 07777, 0700);
  ck_assert_int_ge (fcntl (fd, F_GETFD), 0);
  ck_assert (fcntl (fd, F_GETFD) & FD_CLOEXEC);
  _cleanup_free_ char *parent = xasprintf ("%s/a/b", tmpdir);
  ck_assert_int_eq (stat (parent, &st), 0);
  ck_assert_uint_eq (st.st_mode & 0777 & ~0022, 0711 & ~0022);
  close (fd);

  /* Existing root, trailing slashes, relative path via the cwd. */
  free (resolved);
  resolved = NULL;
  fd = open_root ("a/b/root//", &resolved);
  ck_assert_str_eq (resolved, expect);
  close (fd);

  char cwd[PATH_MAX];
  ck_assert_ptr_nonnull (getcwd (cwd, sizeof cwd));
  ck_assert_int_eq (chdir (tmpdir), 0);
  _cleanup_error_ struct kist_error *err = NULL;
  char *rel = NULL;
  fd = kist_state_root_open ("a/b/root", &rel, &err);
  ck_assert_int_eq (chdir (cwd), 0);
  ck_assert_int_ge (fd, 0);
  ck_assert_str_eq (rel, expect);
  free (rel);
  close (fd);

  /* resolved may be NULL. */
  fd = open_root ("a/b/root", NULL);
  close (fd);
}
END_TEST

START_TEST (test_root_refuses)
{
  _cleanup_error_ struct kist_error *err = NULL;

  /* Symlink as the root. */
  _cleanup_free_ char *target = xasprintf ("%s/real", tmpdir);
  _cleanup_free_ char *link = xasprintf ("%s/link", tmpdir);
  ck_assert_int_eq (mkdir (target, 0700), 0);
  ck_assert_int_eq (symlink (target, link), 0);
  ck_assert_int_lt (kist_state_root_open (link, NULL, &err), 0);
  ck_assert_msg (strstr (err->msg, "symbolic link") != NULL, "%s", err->msg);
  kist_error_free (err);
  err = NULL;

  /* Group/other writable. */
  ck_assert_int_eq (chmod (target, 0770), 0);
  ck_assert_int_lt (kist_state_root_open (target, NULL, &err), 0);
  ck_assert_msg (strstr (err->msg, "writable by group or others") != NULL, "%s", err->msg);
  ck_assert_msg (strstr (err->msg, "chmod") != NULL, "%s", err->msg);
  kist_error_free (err);
  err = NULL;
  ck_assert_int_eq (chmod (target, 0700), 0);

  /* A regular file. */
  _cleanup_free_ char *file = xasprintf ("%s/file", tmpdir);
  int f = open (file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ck_assert_int_ge (f, 0);
  close (f);
  ck_assert_int_lt (kist_state_root_open (file, NULL, &err), 0);
  ck_assert_msg (strstr (err->msg, "file") != NULL, "%s", err->msg);
  kist_error_free (err);
  err = NULL;

  /* Not owned by us (only testable as root: give it to nobody). */
  if (geteuid () == 0)
    {
      struct passwd *pw = getpwnam ("nobody");
      if (pw)
        {
          ck_assert_int_eq (chown (target, pw->pw_uid, pw->pw_gid), 0);
          ck_assert_int_lt (kist_state_root_open (target, NULL, &err), 0);
          ck_assert_msg (strstr (err->msg, "is owned by uid") != NULL, "%s", err->msg);
          kist_error_free (err);
          err = NULL;
          ck_assert_int_eq (chown (target, 0, 0), 0);
        }
    }

  /* Default root for an unprivileged user without XDG_RUNTIME_DIR: a
   * per-user dir under the temp base (here a test base, not /tmp), made by
   * nobody in a child. */
  _cleanup_free_ char *base = xasprintf ("%s/base", tmpdir);
  ck_assert_int_eq (mkdir (base, 0700), 0);
  ck_assert_int_eq (chmod (base, 01777), 0);
  ck_assert_int_eq (chmod (tmpdir, 0711), 0);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      struct kist_error *e = NULL;
      char *res = NULL;
      if (geteuid () == 0)
        {
          struct passwd *pw = getpwnam ("nobody");
          if (pw == NULL || setgid (pw->pw_gid) < 0 || setuid (pw->pw_uid) < 0)
            _exit (2);
        }
      unsetenv ("XDG_RUNTIME_DIR");
      if (kist_state_user_root (base, &res, &e) < 0)
        _exit (3);
      char *want = xasprintf ("%s/kist-%u", base, (unsigned) geteuid ());
      struct stat sb;
      if (strcmp (res, want) != 0 || lstat (res, &sb) < 0 || !S_ISDIR (sb.st_mode)
          || (sb.st_mode & 07777) != 0700 || sb.st_uid != geteuid ())
        _exit (4);
      setenv ("XDG_RUNTIME_DIR", "relative/dir", 1);
      if (kist_state_root_open (NULL, NULL, &e) >= 0 || strstr (e->msg, "absolute") == NULL)
        _exit (5);
      kist_error_free (e);
      _exit (0);
    }
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (WIFEXITED (status));
  ck_assert_int_eq (WEXITSTATUS (status), 0);
  ck_assert_int_eq (chmod (tmpdir, 0700), 0);

  /* Default root with XDG_RUNTIME_DIR, as nobody: $XDG_RUNTIME_DIR/kist. */
  if (geteuid () == 0)
    {
      struct passwd *pw = getpwnam ("nobody");
      _cleanup_free_ char *xdg = xasprintf ("%s/xdg", tmpdir);
      ck_assert_int_eq (mkdir (xdg, 0700), 0);
      ck_assert_int_eq (chown (xdg, pw->pw_uid, pw->pw_gid), 0);
      ck_assert_int_eq (chmod (tmpdir, 0711), 0);
      pid = fork ();
      ck_assert_int_ge (pid, 0);
      if (pid == 0)
        {
          struct kist_error *e = NULL;
          char *res = NULL;
          if (setgid (pw->pw_gid) < 0 || setuid (pw->pw_uid) < 0)
            _exit (2);
          setenv ("XDG_RUNTIME_DIR", xdg, 1);
          int fd = kist_state_root_open (NULL, &res, &e);
          if (fd < 0)
            {
              fprintf (stderr, "%s\n", e->msg);
              _exit (3);
            }
          char *want = xasprintf ("%s/kist", xdg);
          _exit (strcmp (res, want) == 0 ? 0 : 4);
        }
      ck_assert_int_eq (waitpid (pid, &status, 0), pid);
      ck_assert (WIFEXITED (status));
      ck_assert_int_eq (WEXITSTATUS (status), 0);
      ck_assert_int_eq (chmod (tmpdir, 0700), 0);
    }
}
END_TEST

/* The per-user default root: TMPBASE/kist-UID and $XDG_RUNTIME_DIR/kist. */
static void
expect_user_root_error (const char *base, const char *what, const char *what2)
{
  _cleanup_error_ struct kist_error *err = NULL;
  char *path = NULL;
  ck_assert_int_lt (kist_state_user_root (base, &path, &err), 0);
  ck_assert_ptr_null (path);
  ck_assert_ptr_nonnull (err);
  ck_assert_msg (strstr (err->msg, what) != NULL, "want `%s` in: %s", what, err->msg);
  if (what2)
    ck_assert_msg (strstr (err->msg, what2) != NULL, "want `%s` in: %s", what2, err->msg);
}

START_TEST (test_user_root)
{
  _cleanup_error_ struct kist_error *err = NULL;
  _cleanup_free_ char *base = xasprintf ("%s/base", tmpdir);
  _cleanup_free_ char *want = xasprintf ("%s/kist-%u", base, (unsigned) geteuid ());
  char *path = NULL;
  struct stat st;
  const char *saved = getenv ("XDG_RUNTIME_DIR");
  _cleanup_free_ char *saved_xdg = saved ? xstrdup (saved) : NULL;
  ck_assert_int_eq (mkdir (base, 0755), 0);
  unsetenv ("XDG_RUNTIME_DIR");

  /* Created 0700 (whatever the umask), then accepted as it is. */
  mode_t old = umask (0);
  ck_assert_int_eq (kist_state_user_root (base, &path, &err), 0);
  umask (old);
  ck_assert_str_eq (path, want);
  free (path);
  ck_assert_int_eq (lstat (want, &st), 0);
  ck_assert (S_ISDIR (st.st_mode));
  ck_assert_uint_eq (st.st_mode & 07777, 0700);
  ck_assert_int_eq (kist_state_user_root (base, &path, &err), 0);
  ck_assert_str_eq (path, want);
  free (path);

  /* Group or other bits (even read-only ones) are refused, naming the fix. */
  ck_assert_int_eq (chmod (want, 0750), 0);
  expect_user_root_error (base, want, "chmod 0700");
  ck_assert_int_eq (chmod (want, 0701), 0);
  expect_user_root_error (base, "group or other permissions", NULL);
  ck_assert_int_eq (chmod (want, 0700), 0);

  /* Owned by another user (only testable as root). */
  if (geteuid () == 0)
    {
      struct passwd *pw = getpwnam ("nobody");
      ck_assert_ptr_nonnull (pw);
      ck_assert_int_eq (chown (want, pw->pw_uid, pw->pw_gid), 0);
      expect_user_root_error (base, "is owned by uid", "planted");
      ck_assert_int_eq (chown (want, 0, 0), 0);
    }

  /* A planted symlink (to a good directory) and a planted file. */
  ck_assert_int_eq (rmdir (want), 0);
  _cleanup_free_ char *elsewhere = xasprintf ("%s/elsewhere", tmpdir);
  ck_assert_int_eq (mkdir (elsewhere, 0700), 0);
  ck_assert_int_eq (symlink (elsewhere, want), 0);
  expect_user_root_error (base, "symbolic link", want);
  ck_assert_int_eq (unlink (want), 0);
  int f = open (want, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ck_assert_int_ge (f, 0);
  close (f);
  expect_user_root_error (base, "not a directory", want);
  ck_assert_int_eq (unlink (want), 0);
  /* A base that does not exist: the error names the path. */
  _cleanup_free_ char *nobase = xasprintf ("%s/nope", tmpdir);
  expect_user_root_error (nobase, "kist-", "XDG_RUNTIME_DIR");

  /* XDG_RUNTIME_DIR wins when set: $XDG_RUNTIME_DIR/kist (not created here). */
  _cleanup_free_ char *xdg = xasprintf ("%s/xdg", tmpdir);
  _cleanup_free_ char *xdg_want = xasprintf ("%s/kist", xdg);
  ck_assert_int_eq (mkdir (xdg, 0700), 0);
  setenv ("XDG_RUNTIME_DIR", xdg, 1);
  ck_assert_int_eq (kist_state_user_root (base, &path, &err), 0);
  ck_assert_str_eq (path, xdg_want);
  free (path);
  ck_assert_int_lt (lstat (want, &st), 0); /* the temp fallback was not made */
  _cleanup_free_ char *xdg_slash = xasprintf ("%s/", xdg);
  setenv ("XDG_RUNTIME_DIR", xdg_slash, 1);
  ck_assert_int_eq (kist_state_user_root (base, &path, &err), 0);
  ck_assert_str_eq (path, xdg_want);
  free (path);
  /* ... but it must be a real directory we own, given as an absolute path. */
  _cleanup_free_ char *xdg_link = xasprintf ("%s/xdglink", tmpdir);
  ck_assert_int_eq (symlink (xdg, xdg_link), 0);
  setenv ("XDG_RUNTIME_DIR", xdg_link, 1);
  expect_user_root_error (base, "symbolic link", "XDG_RUNTIME_DIR");
  setenv ("XDG_RUNTIME_DIR", "run/user/1", 1);
  expect_user_root_error (base, "not an absolute path", NULL);
  setenv ("XDG_RUNTIME_DIR", nobase, 1);
  expect_user_root_error (base, nobase, "No such file");
  if (geteuid () == 0)
    {
      struct passwd *pw = getpwnam ("nobody");
      ck_assert_int_eq (chown (xdg, pw->pw_uid, pw->pw_gid), 0);
      setenv ("XDG_RUNTIME_DIR", xdg, 1);
      expect_user_root_error (base, "is owned by uid", "unset it");
      ck_assert_int_eq (chown (xdg, 0, 0), 0);
    }
  if (saved_xdg)
    setenv ("XDG_RUNTIME_DIR", saved_xdg, 1);
  else
    unsetenv ("XDG_RUNTIME_DIR");
}
END_TEST

/* ---- per-container directories ---- */

START_TEST (test_create_open_remove)
{
  _cleanup_error_ struct kist_error *err = NULL;
  _cleanup_close_ int root = open_root ("root", NULL);
  int d1 = -1, d2 = -1;

  ck_assert_int_eq (kist_state_create (root, "c1", &d1, &err), 0);
  ck_assert_int_ge (d1, 0);
  ck_assert (fcntl (d1, F_GETFD) & FD_CLOEXEC);
  struct stat st;
  ck_assert_int_eq (fstatat (root, "c1", &st, 0), 0);
  ck_assert_uint_eq (st.st_mode & 07777, 0700);

  /* The lock is held: another open file description cannot take it. */
  int other = openat (root, "c1", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (other, 0);
  ck_assert_int_eq (flock (other, LOCK_EX | LOCK_NB), -1);
  ck_assert_int_eq (errno, EWOULDBLOCK);

  /* Twice -> already exists. */
  ck_assert_int_eq (kist_state_create (root, "c1", &d2, &err), -EEXIST);
  ck_assert_str_eq (err->msg, "container `c1` already exists");
  ck_assert_int_eq (err->errnum, EEXIST);
  ck_assert_int_eq (d2, -1);
  kist_error_free (err);
  err = NULL;

  /* Invalid id. */
  ck_assert_int_lt (kist_state_create (root, "../x", &d2, &err), 0);
  ck_assert_ptr_nonnull (strstr (err->msg, "invalid container id"));
  kist_error_free (err);
  err = NULL;

  /* Missing. */
  ck_assert_int_eq (kist_state_open (root, "nope", &d2, &err), -ENOENT);
  ck_assert_str_eq (err->msg, "container `nope` does not exist");
  ck_assert_int_eq (err->errnum, ENOENT);
  kist_error_free (err);
  err = NULL;

  /* Release, then open takes the lock. */
  close (d1);
  ck_assert_int_eq (kist_state_open (root, "c1", &d2, &err), 0);
  ck_assert_int_eq (flock (other, LOCK_EX | LOCK_NB), -1);
  close (d2);
  ck_assert_int_eq (flock (other, LOCK_EX | LOCK_NB), 0);
  close (other);

  /* Remove with files and a socket in it. */
  ck_assert_int_eq (kist_state_open (root, "c1", &d1, &err), 0);
  int f = openat (d1, "state.json", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ck_assert_int_ge (f, 0);
  close (f);
  ck_assert_int_eq (symlinkat ("/etc/passwd", d1, "link"), 0);
  {
    int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    _cleanup_free_ char *sp = xasprintf ("/proc/self/fd/%d/start.sock", d1);
    ck_assert_uint_lt (strlen (sp), sizeof sa.sun_path);
    strcpy (sa.sun_path, sp);
    ck_assert_int_eq (bind (s, (struct sockaddr *) &sa, sizeof sa), 0);
    close (s);
  }
  ck_assert_int_eq (kist_state_remove (root, "c1", &err), 0);
  ck_assert_int_lt (fstatat (root, "c1", &st, AT_SYMLINK_NOFOLLOW), 0);
  ck_assert_int_eq (errno, ENOENT);
  /* The symlink's target is untouched. */
  ck_assert_int_eq (access ("/etc/passwd", F_OK), 0);
  close (d1);

  /* Remove a missing one. */
  ck_assert_int_eq (kist_state_remove (root, "c1", &err), -ENOENT);
  ck_assert_str_eq (err->msg, "container `c1` does not exist");
  kist_error_free (err);
  err = NULL;

  /* A directory inside is refused, and nothing is removed. */
  ck_assert_int_eq (kist_state_create (root, "c2", &d1, &err), 0);
  f = openat (d1, "state.json", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  close (f);
  ck_assert_int_eq (mkdirat (d1, "sub", 0700), 0);
  ck_assert_int_eq (kist_state_remove (root, "c2", &err), -EISDIR);
  ck_assert_msg (strstr (err->msg, "`sub`") != NULL, "%s", err->msg);
  ck_assert_int_eq (fstatat (d1, "state.json", &st, 0), 0);
  kist_error_free (err);
  err = NULL;
  ck_assert_int_eq (unlinkat (d1, "sub", AT_REMOVEDIR), 0);
  ck_assert_int_eq (kist_state_remove (root, "c2", &err), 0);
  close (d1);
}
END_TEST

/* A waiter blocked in kist_state_open sees the container as gone once the
 * holder deleted it. */
START_TEST (test_open_after_delete)
{
  _cleanup_error_ struct kist_error *err = NULL;
  _cleanup_close_ int root = open_root ("root", NULL);
  int d1 = -1;
  ck_assert_int_eq (kist_state_create (root, "c1", &d1, &err), 0);
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      struct kist_error *e = NULL;
      int d = -1;
      close (d1);
      if (kist_state_open (root, "c1", &d, &e) == 0)
        _exit (1);
      _exit (strstr (e->msg, "does not exist") ? 0 : 2);
    }
  usleep (200 * 1000);
  ck_assert_int_eq (kist_state_remove (root, "c1", &err), 0);
  close (d1);
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (WIFEXITED (status));
  ck_assert_int_eq (WEXITSTATUS (status), 0);
}
END_TEST

START_TEST (test_list)
{
  _cleanup_error_ struct kist_error *err = NULL;
  _cleanup_close_ int root = open_root ("root", NULL);
  char **ids = NULL;
  ck_assert_int_eq (kist_state_list (root, &ids, &err), 0);
  ck_assert_ptr_nonnull (ids);
  ck_assert_ptr_null (ids[0]);
  kist_strv_free (ids);

  const char *names[] = { "zeta", "alpha", "m-1", ".hidden" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (names); i++)
    {
      int d;
      ck_assert_int_eq (kist_state_create (root, names[i], &d, &err), 0);
      close (d);
    }
  /* Not containers: a file, a symlink, a dir with an invalid name. */
  int f = openat (root, "file", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  close (f);
  ck_assert_int_eq (symlinkat ("zeta", root, "linked"), 0);
  ck_assert_int_eq (mkdirat (root, "bad name", 0700), 0);

  ck_assert_int_eq (kist_state_list (root, &ids, &err), 0);
  ck_assert_uint_eq (kist_strv_len (ids), 4);
  ck_assert_str_eq (ids[0], ".hidden");
  ck_assert_str_eq (ids[1], "alpha");
  ck_assert_str_eq (ids[2], "m-1");
  ck_assert_str_eq (ids[3], "zeta");
  kist_strv_free (ids);

  /* Listing twice works (rootfd offset untouched). */
  ck_assert_int_eq (kist_state_list (root, &ids, &err), 0);
  ck_assert_uint_eq (kist_strv_len (ids), 4);
  kist_strv_free (ids);
}
END_TEST

/* ---- state.json ---- */

static void
fill_state (struct kist_state *s)
{
  memset (s, 0, sizeof *s);
  s->id = xstrdup ("c1");
  s->bundle = xstrdup ("/srv/bundle \"q\"");
  s->rootfs = xstrdup ("/srv/bundle/rootfs");
  s->pid = 4242;
  s->pid_start_time = 123456789012ULL;
  s->started = true;
  s->created = xstrdup ("2026-11-29T13:56:21.123456789Z");
  s->owner = xstrdup ("1000");
  s->cgroup_path = xstrdup ("/sys/fs/cgroup/kist/c1");
  s->annotations_json = xstrdup ("{\"a\":\"b\",\"n\":{\"x\":[1,2.5,true,null]}}");
  s->oci_version = xstrdup ("1.2.0");
  s->deadline = 1900000000;
  s->kist_pid = 777;
  s->kist_pid_start_time = 98765432109ULL;
}

static void
check_same_str (const char *a, const char *b)
{
  if (a == NULL)
    ck_assert_ptr_null (b);
  else
    ck_assert_str_eq (a, b);
}

static void
check_same (const struct kist_state *a, const struct kist_state *b)
{
  check_same_str (a->id, b->id);
  check_same_str (a->bundle, b->bundle);
  check_same_str (a->rootfs, b->rootfs);
  ck_assert_int_eq (a->pid, b->pid);
  ck_assert_uint_eq (a->pid_start_time, b->pid_start_time);
  ck_assert (a->started == b->started);
  check_same_str (a->created, b->created);
  check_same_str (a->owner, b->owner);
  check_same_str (a->cgroup_path, b->cgroup_path);
  check_same_str (a->annotations_json, b->annotations_json);
  check_same_str (a->oci_version, b->oci_version);
  ck_assert_int_eq (a->deadline, b->deadline);
  ck_assert_int_eq (a->kist_pid, b->kist_pid);
  ck_assert_uint_eq (a->kist_pid_start_time, b->kist_pid_start_time);
}

/* state.json json does not read, and the error says want. */
static void
state_error_names (int d, const char *json, const char *want)
{
  _cleanup_error_ struct kist_error *e = NULL;
  struct kist_state r;
  ck_assert_int_eq (kist_write_file_atomic (d, "state.json", json, strlen (json), 0600, &e), 0);
  ck_assert_int_lt (kist_state_read (d, &r, &e), 0);
  ck_assert_msg (strstr (e->msg, want) != NULL, "`%s`: want `%s` in: %s", json, want, e->msg);
  ck_assert_int_eq (e->errnum, EINVAL);
}

/* A replacement of state.json exchanges it with a scratch file and keeps
 * the old record as the next scratch (no new inode per replacement); a
 * record larger than a page takes a new inode.  The dir holds only the two. */
static ino_t
ino_of (int d, const char *name)
{
  struct stat st;
  ck_assert_int_eq (fstatat (d, name, &st, AT_SYMLINK_NOFOLLOW), 0);
  return st.st_ino;
}

static void
check_replace_reuses (int root)
{
  _cleanup_error_ struct kist_error *err = NULL;
  int d;
  struct kist_state s, r;
  ck_assert_int_eq (kist_state_create (root, "c2", &d, &err), 0);
  fill_state (&s);
  s.pid = 1;
  ck_assert_int_eq (kist_state_write (d, &s, &err), 0);
  s.pid = 2;
  ck_assert_int_eq (kist_state_write (d, &s, &err), 0);
  ino_t i2 = ino_of (d, "state.json"), i1 = ino_of (d, ".state.json.next");
  ck_assert_uint_ne (i1, i2);
  s.pid = 3;
  ck_assert_int_eq (kist_state_write (d, &s, &err), 0);
  ck_assert_uint_eq (ino_of (d, "state.json"), i1);
  ck_assert_uint_eq (ino_of (d, ".state.json.next"), i2);
  ck_assert_int_eq (kist_state_read (d, &r, &err), 0);
  ck_assert_int_eq (r.pid, 3);
  kist_state_clear (&r);
  struct stat st;
  ck_assert_int_eq (fstatat (d, "state.json", &st, 0), 0);
  ck_assert_uint_eq (st.st_mode & 07777, 0600);

  /* Larger than a page: a new inode, read back whole. */
  free (s.annotations_json);
  _cleanup_free_ char *big = xmalloc (6000);
  memset (big, 'x', 5990);
  memcpy (big, "{\"k\":\"", 6);
  strcpy (big + 5990, "\"}");
  s.annotations_json = xstrdup (big);
  s.pid = 4;
  ck_assert_int_eq (kist_state_write (d, &s, &err), 0);
  ino_t ib = ino_of (d, "state.json");
  ck_assert_uint_ne (ib, i1);
  ck_assert_uint_ne (ib, i2);
  ck_assert_int_eq (kist_state_read (d, &r, &err), 0);
  ck_assert_int_eq (r.pid, 4);
  ck_assert_uint_gt (strlen (r.annotations_json), 5000);
  kist_state_clear (&r);

  /* Nothing else in the dir. */
  DIR *dir = fdopendir (dup (d));
  ck_assert_ptr_nonnull (dir);
  int n = 0;
  for (struct dirent *e; (e = readdir (dir));)
    if (strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0)
      {
        ck_assert_msg (strcmp (e->d_name, "state.json") == 0
                           || strcmp (e->d_name, ".state.json.next") == 0,
                       "unexpected %s", e->d_name);
        n++;
      }
  closedir (dir);
  ck_assert_int_ge (n, 1);
  kist_state_clear (&s);
  ck_assert_int_eq (kist_state_remove (root, "c2", &err), 0);
  close (d);
}

START_TEST (test_write_read)
{
  _cleanup_error_ struct kist_error *err = NULL;
  _cleanup_close_ int root = open_root ("root", NULL);
  int d;
  struct kist_state s, r;
  ck_assert_int_eq (kist_state_create (root, "c1", &d, &err), 0);

  fill_state (&s);
  ck_assert_int_eq (kist_state_write (d, &s, &err), 0);
  struct stat st;
  ck_assert_int_eq (fstatat (d, "state.json", &st, 0), 0);
  ck_assert_uint_eq (st.st_mode & 07777, 0600);
  ck_assert_int_eq (kist_state_read (d, &r, &err), 0);
  check_same (&s, &r);
  kist_state_clear (&r);

  /* NULL fields stay NULL, "" stays "", false/0 stay. */
  kist_state_clear (&s);
  s.id = xstrdup ("c1");
  s.owner = xstrdup ("");
  s.deadline = -5;
  ck_assert_int_eq (kist_state_write (d, &s, &err), 0);
  ck_assert_int_eq (kist_state_read (d, &r, &err), 0);
  check_same (&s, &r);
  kist_state_clear (&r);

  /* linux.netDevices moved by create: written, read back; an older
   * state.json without them reads as none (above). */
  struct kist_state_netdev nd[] = { { .host = xstrdup ("kistnd0"), .name = xstrdup ("eth7"),
                                      .ifindex = 5, .kind = xstrdup ("ifb") },
                                    { .host = xstrdup ("enp1s0"), .name = xstrdup ("enp1s0"),
                                      .ifindex = 2, .kind = NULL } };
  s.net_devices = xcalloc (2, sizeof *s.net_devices);
  memcpy (s.net_devices, nd, sizeof nd);
  s.n_net_devices = 2;
  ck_assert_int_eq (kist_state_write (d, &s, &err), 0);
  ck_assert_int_eq (kist_state_read (d, &r, &err), 0);
  ck_assert_uint_eq (r.n_net_devices, 2);
  ck_assert_str_eq (r.net_devices[0].host, "kistnd0");
  ck_assert_str_eq (r.net_devices[0].name, "eth7");
  ck_assert_int_eq (r.net_devices[0].ifindex, 5);
  ck_assert_str_eq (r.net_devices[0].kind, "ifb");
  ck_assert_str_eq (r.net_devices[1].host, "enp1s0");
  ck_assert_ptr_null (r.net_devices[1].kind);
  kist_state_clear (&r);

  /* Non-UTF-8 cannot be stored; the message names the field. */
  free (s.bundle);
  s.bundle = xstrdup ("/srv/\xff");
  ck_assert_int_lt (kist_state_write (d, &s, &err), 0);
  ck_assert_msg (strstr (err->msg, "`bundle`") != NULL, "%s", err->msg);
  kist_error_free (err);
  err = NULL;
  free (s.bundle);
  s.bundle = NULL;
  s.annotations_json = xstrdup ("[1]");
  ck_assert_int_lt (kist_state_write (d, &s, &err), 0);
  ck_assert_msg (strstr (err->msg, "annotations") != NULL, "%s", err->msg);
  kist_error_free (err);
  err = NULL;
  kist_state_clear (&s);

  /* Corrupt files. */
  static const char *bad[] = { "",
                               "{",
                               "[]",
                               "{\"pid\":1}",
                               "{\"id\":5}",
                               "{\"id\":\"c\",\"pid\":\"x\"}",
                               "{\"id\":\"c\",\"pid\":-1}",
                               "{\"id\":\"c\",\"started\":1}",
                               "{\"id\":\"c\",\"annotations\":[]}" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (bad); i++)
    {
      ck_assert_int_eq (
          kist_write_file_atomic (d, "state.json", bad[i], strlen (bad[i]), 0600, &err), 0);
      ck_assert_msg (kist_state_read (d, &r, &err) < 0, "accepted `%s`", bad[i]);
      ck_assert_ptr_nonnull (strstr (err->msg, "state.json"));
      ck_assert_ptr_nonnull (strstr (err->msg, "read the container state in"));
      ck_assert_ptr_null (r.id);
      kist_error_free (err);
      err = NULL;
    }
  /* The message names the field, and the error is EINVAL. */
  state_error_names (d, "{\"pid\":1}", "id: required field is missing");
  state_error_names (d, "{\"id\":5}", "id: expected string");
  state_error_names (d, "{\"id\":\"c\",\"pid\":\"x\"}", "pid: expected integer");
  state_error_names (d, "{\"id\":\"c\",\"pid\":-1}", "pid: must be greater than -1");
  state_error_names (d, "{\"id\":\"c\",\"pidStartTime\":-1}",
                     "pidStartTime: must be between 0 and");
  state_error_names (d, "{\"id\":\"c\",\"started\":1}", "started: expected boolean");
  state_error_names (d, "{\"id\":\"c\",\"annotations\":[]}", "annotations: expected object");
  state_error_names (d, "{\"id\":\"c\",\"netDevices\":[{\"host\":\"a\"}]}",
                     "netDevices[0].name: required field is missing");
  state_error_names (d, "{\"id\":\"c\",\"netDevices\":{}}", "netDevices: expected array");
  /* Missing file. */
  ck_assert_int_eq (unlinkat (d, "state.json", 0), 0);
  ck_assert_int_lt (kist_state_read (d, &r, &err), 0);
  ck_assert_int_eq (err->errnum, ENOENT);
  kist_error_free (err);
  err = NULL;

  ck_assert_int_eq (kist_state_remove (root, "c1", &err), 0);
  close (d);
  check_replace_reuses (root);
}
END_TEST

/* ---- liveness and OCI state ---- */

START_TEST (test_status)
{
  struct kist_state s = { 0 };
  ck_assert_int_eq (kist_state_status (&s), KIST_STATUS_STOPPED);

  s.pid = getpid ();
  s.pid_start_time = kist_pid_start_time (getpid ());
  ck_assert_uint_ne (s.pid_start_time, 0);
  ck_assert_int_eq (kist_state_status (&s), KIST_STATUS_CREATED);
  s.started = true;
  ck_assert_int_eq (kist_state_status (&s), KIST_STATUS_RUNNING);
  /* pid reused (different start time). */
  s.pid_start_time += 1;
  ck_assert_int_eq (kist_state_status (&s), KIST_STATUS_STOPPED);
  s.pid_start_time = 0; /* unknown: trust the pid */
  ck_assert_int_eq (kist_state_status (&s), KIST_STATUS_RUNNING);

  /* A zombie, then a reaped child. */
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (0);
  s.pid = pid;
  s.pid_start_time = 0;
  siginfo_t si;
  ck_assert_int_eq (waitid (P_PID, pid, &si, WEXITED | WNOWAIT), 0);
  ck_assert_int_eq (kist_state_status (&s), KIST_STATUS_STOPPED);
  ck_assert_int_eq (waitpid (pid, NULL, 0), pid);
  ck_assert_int_eq (kist_state_status (&s), KIST_STATUS_STOPPED);
  ck_assert_uint_eq (kist_pid_start_time (pid), 0);
  ck_assert_uint_eq (kist_pid_start_time (0), 0);
  ck_assert_uint_eq (kist_pid_start_time (-1), 0);

  /* comm with spaces and parentheses does not confuse the parser. */
  pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      {
        int fd = open ("/proc/self/comm", O_WRONLY | O_CLOEXEC);
        if (fd >= 0)
          {
            ssize_t w = write (fd, "a) (b c) 1", 10);
            (void) w;
            close (fd);
          }
      }
      pause ();
      _exit (0);
    }
  usleep (100 * 1000);
  uint64_t st = kist_pid_start_time (pid);
  ck_assert_uint_ne (st, 0);
  s.pid = pid;
  s.pid_start_time = st;
  s.started = false;
  ck_assert_int_eq (kist_state_status (&s), KIST_STATUS_CREATED);
  kill (pid, SIGKILL);
  ck_assert_int_eq (waitpid (pid, NULL, 0), pid);
  ck_assert_int_eq (kist_state_status (&s), KIST_STATUS_STOPPED);

  ck_assert_str_eq (kist_status_name (KIST_STATUS_CREATING), "creating");
  ck_assert_str_eq (kist_status_name (KIST_STATUS_CREATED), "created");
  ck_assert_str_eq (kist_status_name (KIST_STATUS_RUNNING), "running");
  ck_assert_str_eq (kist_status_name (KIST_STATUS_STOPPED), "stopped");
  ck_assert_str_eq (kist_status_name (KIST_STATUS_PAUSED), "paused");
}
END_TEST

START_TEST (test_oci_json)
{
  struct kist_state s;
  char errbuf[256];
  fill_state (&s);

  _cleanup_free_ char *j = kist_state_oci_json (&s, KIST_STATUS_RUNNING);
  yajl_val v = yajl_tree_parse (j, errbuf, sizeof errbuf);
  ck_assert_msg (v != NULL, "%s", errbuf);
  ck_assert_str_eq (get (v, "ociVersion")->u.string, "1.2.0");
  ck_assert_str_eq (get (v, "id")->u.string, "c1");
  ck_assert_str_eq (get (v, "status")->u.string, "running");
  ck_assert_int_eq (YAJL_GET_INTEGER (get (v, "pid")), 4242);
  ck_assert_str_eq (get (v, "bundle")->u.string, "/srv/bundle \"q\"");
  ck_assert_str_eq (get (v, "rootfs")->u.string, "/srv/bundle/rootfs");
  ck_assert_str_eq (get (v, "created")->u.string, "2026-11-29T13:56:21.123456789Z");
  ck_assert_str_eq (get (v, "owner")->u.string, "1000");
  yajl_val ann = get (v, "annotations");
  ck_assert (YAJL_IS_OBJECT (ann));
  ck_assert_str_eq (get (ann, "a")->u.string, "b");
  /* Internal fields are not part of the OCI state. */
  ck_assert_ptr_null (get (v, "pidStartTime"));
  ck_assert_ptr_null (get (v, "cgroupPath"));
  yajl_tree_free (v);
  /* Pretty-printed. */
  ck_assert_ptr_nonnull (strstr (j, "\n  \"id\": \"c1\""));

  /* Stopped: pid 0; no annotations: {}. */
  free (s.annotations_json);
  s.annotations_json = NULL;
  free (s.oci_version);
  s.oci_version = NULL;
  _cleanup_free_ char *j2 = kist_state_oci_json (&s, KIST_STATUS_STOPPED);
  v = yajl_tree_parse (j2, errbuf, sizeof errbuf);
  ck_assert_msg (v != NULL, "%s", errbuf);
  ck_assert_str_eq (get (v, "status")->u.string, "stopped");
  ck_assert_int_eq (YAJL_GET_INTEGER (get (v, "pid")), 0);
  ck_assert_str_eq (get (v, "ociVersion")->u.string, "1.2.0");
  ck_assert (YAJL_IS_OBJECT (get (v, "annotations")));
  ck_assert_uint_eq (get (v, "annotations")->u.object.len, 0);
  ck_assert_ptr_nonnull (strstr (j2, "\"annotations\": {}"));
  yajl_tree_free (v);
  kist_state_clear (&s);
}
END_TEST

START_TEST (test_owner_alive)
{
  struct kist_state s = { 0 };
  ck_assert (!kist_state_owner_alive (&s));
  ck_assert (!kist_state_owner_alive (NULL));
  s.kist_pid = getpid ();
  ck_assert (kist_state_owner_alive (&s)); /* start time unknown: trust the pid */
  s.kist_pid_start_time = kist_pid_start_time (getpid ());
  ck_assert (kist_state_owner_alive (&s));
  s.kist_pid_start_time += 1; /* the pid was reused */
  ck_assert (!kist_state_owner_alive (&s));

  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    _exit (0);
  s.kist_pid = pid;
  s.kist_pid_start_time = 0;
  siginfo_t si;
  ck_assert_int_eq (waitid (P_PID, pid, &si, WEXITED | WNOWAIT), 0);
  ck_assert (!kist_state_owner_alive (&s)); /* a zombie */
  ck_assert_int_eq (waitpid (pid, NULL, 0), pid);
  ck_assert (!kist_state_owner_alive (&s)); /* gone */
}
END_TEST

START_TEST (test_peek_busy)
{
  _cleanup_error_ struct kist_error *err = NULL;
  _cleanup_close_ int root = open_root ("root", NULL);
  struct kist_state s, r;
  int d;
  ck_assert_int_lt (kist_state_peek (root, "nope", &r, &err), 0);
  ck_assert_int_eq (err->errnum, ENOENT);
  kist_error_freep (&err);

  ck_assert_int_eq (kist_state_create (root, "c1", &d, &err), 0);
  /* Being created: no state.json yet. */
  ck_assert_int_lt (kist_state_peek (root, "c1", &r, &err), 0);
  ck_assert_int_eq (err->errnum, ENOENT);
  kist_error_freep (&err);
  fill_state (&s);
  ck_assert_int_eq (kist_state_write (d, &s, &err), 0);
  /* Readable while another open file description holds the lock. */
  ck_assert_int_eq (kist_state_peek (root, "c1", &r, &err), 0);
  check_same (&s, &r);
  kist_state_clear (&r);
  kist_state_clear (&s);

  /* Busy while locked (d holds the lock from create), free after. */
  ck_assert_int_eq (kist_state_busy (root, "c1", &err), 1);
  close (d);
  ck_assert_int_eq (kist_state_busy (root, "c1", &err), 0);
  ck_assert_int_eq (kist_state_open (root, "c1", &d, &err), 0);
  ck_assert_int_eq (kist_state_busy (root, "c1", &err), 1);
  close (d);
  ck_assert_int_lt (kist_state_busy (root, "nope", &err), 0);
  ck_assert_int_eq (err->errnum, ENOENT);
  kist_error_freep (&err);
  ck_assert_int_lt (kist_state_busy (root, "../x", &err), 0);
  kist_error_freep (&err);
  ck_assert_int_eq (kist_state_remove (root, "c1", &err), 0);
}
END_TEST

static Suite *
state_suite (void)
{
  Suite *s = suite_create ("state");
  TCase *tc = tcase_create ("core");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_id_validate);
  tcase_add_test (tc, test_root_open);
  tcase_add_test (tc, test_root_refuses);
  tcase_add_test (tc, test_user_root);
  tcase_add_test (tc, test_owner_alive);
  tcase_add_test (tc, test_peek_busy);
  tcase_add_test (tc, test_create_open_remove);
  tcase_add_test (tc, test_open_after_delete);
  tcase_add_test (tc, test_list);
  tcase_add_test (tc, test_write_read);
  tcase_add_test (tc, test_status);
  tcase_add_test (tc, test_oci_json);
  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return kist_unit_run (state_suite ());
}
