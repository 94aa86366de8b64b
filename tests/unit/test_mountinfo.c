/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/mountinfo.c: the one mountinfo reader. */
#define _GNU_SOURCE
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "mountinfo.h"
#include "util.h"
#include "unit.h"

static int
parse_text (const char *text, struct kist_mountinfo *t, char **msg)
{
  char path[] = "/tmp/kist-test-mountinfo-XXXXXX";
  int fd = mkstemp (path);
  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (write (fd, text, strlen (text)), (ssize_t) strlen (text));
  close (fd);
  struct kist_error *e = NULL;
  int r = kist_mountinfo_read (AT_FDCWD, path, t, &e);
  unlink (path);
  *msg = e ? strdup (e->msg) : NULL;
  kist_error_free (e);
  return r;
}

START_TEST (test_fields)
{
  _cleanup_mountinfo_ struct kist_mountinfo t = { 0 };
  char *msg = NULL;
  ck_assert_int_eq (parse_text ("68 46 254:0 /tmp/b9/rootfs / rw,relatime shared:1 master:2 - ext4 "
                                "/dev/vda rw,discard\n"
                                "69 68 0:41 / /my\\040dir ro,nosuid,nodev - tmpfs tm\\040p "
                                "ro,size=64k\n"
                                "70 68 0:42 / /x rw - proc proc\n"
                                "71 68 0:43 /sub /y ro - sysfs\n",
                                &t, &msg),
                    0);
  ck_assert_ptr_null (msg);
  ck_assert_uint_eq (t.n, 4);
  const struct kist_mountinfo_entry *e = kist_mountinfo_find (&t, 68);
  ck_assert_ptr_nonnull (e);
  ck_assert_uint_eq (e->parent, 46);
  ck_assert_str_eq (e->root, "/tmp/b9/rootfs");
  ck_assert_str_eq (e->point, "/");
  ck_assert_str_eq (e->opts, "rw,relatime");
  ck_assert_str_eq (e->optional, "shared:1 master:2");
  ck_assert_str_eq (e->fstype, "ext4");
  ck_assert_str_eq (e->source, "/dev/vda");
  ck_assert_str_eq (e->super_opts, "rw,discard");
  ck_assert (kist_mountinfo_has_optional (e, "shared:"));
  ck_assert (kist_mountinfo_has_optional (e, "master:"));
  ck_assert (!kist_mountinfo_has_optional (e, "unbindable"));
  e = kist_mountinfo_find (&t, 69);
  ck_assert_str_eq (e->point, "/my dir");
  ck_assert_str_eq (e->source, "tm p");
  ck_assert_str_eq (e->optional, "");
  ck_assert (kist_mountinfo_has_opt (e->opts, "ro"));
  ck_assert (kist_mountinfo_has_opt (e->opts, "nodev"));
  ck_assert (!kist_mountinfo_has_opt (e->opts, "rw"));
  ck_assert (!kist_mountinfo_has_opt (e->opts, "no"));
  ck_assert (!kist_mountinfo_has_optional (e, "shared:"));
  e = kist_mountinfo_find (&t, 70);
  ck_assert_str_eq (e->super_opts, "");
  e = kist_mountinfo_find (&t, 71);
  ck_assert_str_eq (e->root, "/sub");
  ck_assert_str_eq (e->point, "/y");
  ck_assert_str_eq (e->fstype, "sysfs");
  ck_assert_str_eq (e->source, "");
  ck_assert_str_eq (e->super_opts, "");
  ck_assert_ptr_null (kist_mountinfo_find (&t, 72));
}
END_TEST

START_TEST (test_malformed)
{
  static const char *const bad[] = {
    "68 46 254:0 / /\n",                     /* too few fields */
    "68 46 254:0 / / rw shared:1 ext4 x y\n", /* no separator */
    "x 46 254:0 / / rw - ext4 a b\n",         /* id */
    "68 46 254:0 / / rw -\n",                 /* no fstype */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      _cleanup_mountinfo_ struct kist_mountinfo t = { 0 };
      char *msg = NULL;
      ck_assert_int_lt (parse_text (bad[i], &t, &msg), 0);
      ck_assert_msg (msg && strstr (msg, "malformed line"), "%zu: %s", i, msg);
      /* The message quotes the line as it was read. */
      char want[128];
      snprintf (want, sizeof want, "`%.*s`", (int) strcspn (bad[i], "\n"), bad[i]);
      ck_assert_msg (strstr (msg, want), "%zu: %s (expected %s)", i, msg, want);
      free (msg);
    }
}
END_TEST

START_TEST (test_self)
{
  _cleanup_mountinfo_ struct kist_mountinfo t = { 0 };
  ck_assert_int_eq (kist_mountinfo_read (AT_FDCWD, "/proc/self/mountinfo", &t, NULL), 0);
  ck_assert_uint_gt (t.n, 0);
}
END_TEST

/* kist_fd_statfs_flags: the flags of one fstatfs are those fstatvfs says,
 * and the magic is the file system's, on mounts with different flags. */
START_TEST (test_statfs_flags)
{
  const char *paths[] = { "/", "/proc", "/dev", "/sys" };
  for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
    {
      int fd = open (paths[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0)
        continue;
      struct statfs sf, want_sf;
      struct statvfs want;
      unsigned long flags = 0xdeadbeef;
      ck_assert_int_eq (kist_fd_statfs_flags (fd, &sf, &flags), 0);
      ck_assert_int_eq (fstatvfs (fd, &want), 0);
      ck_assert_int_eq (fstatfs (fd, &want_sf), 0);
      ck_assert_msg (flags == want.f_flag, "%s: flags 0x%lx, fstatvfs says 0x%lx", paths[i], flags,
                     want.f_flag);
      ck_assert_int_eq ((long) sf.f_type, (long) want_sf.f_type);
      close (fd);
    }
  ck_assert_int_lt (kist_fd_statfs_flags (-1, &(struct statfs){ 0 }, &(unsigned long){ 0 }), 0);
}
END_TEST

START_TEST (test_check)
{
  _cleanup_mountinfo_ struct kist_mountinfo t = { 0 };
  char *msg = NULL;
  ck_assert_int_eq (parse_text ("68 46 254:0 / / rw,relatime - ext4 /dev/vda ro\n"
                                "69 68 0:41 / /p rw,nosuid,nodev,noexec - proc proc rw\n"
                                "70 68 0:42 / /d ro,nosuid - tmpfs tmpfs rw\n",
                                &t, &msg),
                    0);
  static const struct
  {
    const char *list;
    const char *why; /* NULL: agrees */
  } cases[] = {
    { "68:r", NULL },                    /* read-only by its superblock */
    { "69:wsdx:proc,70:rs:tmpfs", NULL },
    { "70:?s", NULL },                   /* read-only decided later */
    { "70:?", "with nosuid" },
    { "69:ws", "with nodev" },
    { "69:wsd", "with noexec" },
    { "69:rsdx", "writable, not read-only" },
    { "70:ws", "read-only, not writable" },
    { "69:wsdx:tmpfs", "of type proc, not tmpfs" },
    { "71:w", "mount 71 is not in" },
    { "69:wsdx,71:w", "mount 71 is not in" },
    { "x:w", "malformed" },
    { "69", "malformed" },
    { "69:q", "malformed" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      char *why = kist_mountinfo_check (&t, cases[i].list, "MI");
      if (cases[i].why == NULL)
        ck_assert_msg (why == NULL, "%s: %s", cases[i].list, why);
      else
        ck_assert_msg (why && strstr (why, cases[i].why), "%s: %s", cases[i].list,
                       why ? why : "(agrees)");
      free (why);
    }
  char *why = kist_mountinfo_check (&t, NULL, "MI");
  ck_assert_ptr_nonnull (why);
  free (why);
  /* What the layers write is what the check reads. */
  char *list = NULL;
  kist_mountinfo_expect_add (&list, 69, ST_NOSUID | ST_NODEV | ST_NOEXEC, false, "proc");
  kist_mountinfo_expect_add (&list, 70, ST_RDONLY | ST_NOSUID, true, NULL);
  ck_assert_str_eq (list, "69:wsdx:proc,70:?s");
  why = kist_mountinfo_check (&t, list, "MI");
  ck_assert_msg (why == NULL, "%s", why);
  free (list);
}
END_TEST

int
main (void)
{
  Suite *s = suite_create ("mountinfo");
  TCase *tc = tcase_create ("parse");
  tcase_add_test (tc, test_fields);
  tcase_add_test (tc, test_malformed);
  tcase_add_test (tc, test_self);
  tcase_add_test (tc, test_check);
  tcase_add_test (tc, test_statfs_flags);
  suite_add_tcase (s, tc);
  return kist_unit_run (s);
}
