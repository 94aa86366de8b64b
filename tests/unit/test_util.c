/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/util.c and runtime/error.c. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "error.h"
#include "json.h"
#include "report.h"
#include "state.h"
#include "util.h"
#include "unit.h"

#ifndef KIST_SRCDIR
#define KIST_SRCDIR "."
#endif

static char tmpdir[PATH_MAX];
static int tmpfd = -1;

static void
setup (void)
{
  strcpy (tmpdir, "/tmp/kist-test-util.XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (tmpdir));
  tmpfd = open (tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (tmpfd, 0);
}

static void
teardown (void)
{
  static const char *names[]
      = { "f", "big", "exact", "atomic", "target", "link", "trunc", "fresh" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (names); i++)
    unlinkat (tmpfd, names[i], 0);
  close (tmpfd);
  rmdir (tmpdir);
}

static void
write_bytes (const char *name, size_t n)
{
  int fd = openat (tmpfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ck_assert_int_ge (fd, 0);
  char *buf = xmalloc (n);
  memset (buf, 'x', n);
  ck_assert_int_eq (kist_write_all (fd, buf, n), 0);
  free (buf);
  close (fd);
}

/* ---- parsing ---- */

START_TEST (test_parse_u64)
{
  uint64_t v = 7;
  ck_assert_int_eq (kist_parse_u64 ("0", &v), 0);
  ck_assert_uint_eq (v, 0);
  ck_assert_int_eq (kist_parse_u64 ("1024", &v), 0);
  ck_assert_uint_eq (v, 1024);
  ck_assert_int_eq (kist_parse_u64 ("18446744073709551615", &v), 0);
  ck_assert_uint_eq (v, UINT64_MAX);
  ck_assert_int_eq (kist_parse_u64 ("007", &v), 0);
  ck_assert_uint_eq (v, 7);

  static const char *bad[] = {
    "",    "-1", "+1", " 1", "1 ", "1a", "0x10", "18446744073709551616", "99999999999999999999999",
    "1.5", "a"
  };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (bad); i++)
    {
      v = 42;
      ck_assert_msg (kist_parse_u64 (bad[i], &v) == -EINVAL, "accepted `%s`", bad[i]);
      ck_assert_uint_eq (v, 42);
    }
  ck_assert_int_eq (kist_parse_u64 (NULL, &v), -EINVAL);
}
END_TEST

START_TEST (test_parse_int)
{
  int v = 7;
  ck_assert_int_eq (kist_parse_int ("0", &v), 0);
  ck_assert_int_eq (v, 0);
  ck_assert_int_eq (kist_parse_int ("-15", &v), 0);
  ck_assert_int_eq (v, -15);
  ck_assert_int_eq (kist_parse_int ("2147483647", &v), 0);
  ck_assert_int_eq (v, INT_MAX);
  ck_assert_int_eq (kist_parse_int ("-2147483648", &v), 0);
  ck_assert_int_eq (v, INT_MIN);

  static const char *bad[]
      = { "", "2147483648", "-2147483649", "99999999999999999999", "1a", "1 ", "x", "-", "1.0" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (bad); i++)
    {
      v = 42;
      ck_assert_msg (kist_parse_int (bad[i], &v) == -EINVAL, "accepted `%s`", bad[i]);
      ck_assert_int_eq (v, 42);
    }
  ck_assert_int_eq (kist_parse_int (NULL, &v), -EINVAL);
}
END_TEST

START_TEST (test_list_contains)
{
  ck_assert (kist_list_contains ("a,b,c", "a"));
  ck_assert (kist_list_contains ("a,b,c", "b"));
  ck_assert (kist_list_contains ("a,b,c", "c"));
  ck_assert (!kist_list_contains ("a,b,c", "d"));
  ck_assert (!kist_list_contains ("ab,c", "a"));
  ck_assert (!kist_list_contains ("a,bc", "b"));
  ck_assert (!kist_list_contains ("a,b", "a,b"));
  ck_assert (kist_list_contains ("x,all", "anything"));
  ck_assert (kist_list_contains ("all", "seccomp"));
  ck_assert (!kist_list_contains ("alloc", "seccomp"));
  ck_assert (!kist_list_contains ("", "a"));
  ck_assert (!kist_list_contains (NULL, "a"));
  ck_assert (!kist_list_contains ("a", NULL));
  ck_assert (kist_list_contains ("seccomp,", "seccomp"));
}
END_TEST

START_TEST (test_rstrip)
{
  char a[] = "abc \n\t\r\n";
  ck_assert_str_eq (kist_rstrip (a), "abc");
  char b[] = "";
  ck_assert_str_eq (kist_rstrip (b), "");
  char c[] = " \n ";
  ck_assert_str_eq (kist_rstrip (c), "");
  char d[] = "  lead";
  ck_assert_str_eq (kist_rstrip (d), "  lead");
  char e[] = "a b\n";
  ck_assert_ptr_eq (kist_rstrip (e), e);
  ck_assert_str_eq (e, "a b");
}
END_TEST

START_TEST (test_strings)
{
  _cleanup_free_ char *s = xasprintf ("%s-%d", "a", 5);
  ck_assert_str_eq (s, "a-5");
  ck_assert_ptr_null (xstrdup (NULL));
  char **v = xcalloc (3, sizeof (char *));
  v[0] = xstrdup ("x");
  v[1] = xstrdup ("y");
  ck_assert_uint_eq (kist_strv_len (v), 2);
  ck_assert_uint_eq (kist_strv_len (NULL), 0);
  kist_strv_free (v);
  kist_strv_free (NULL);

  _cleanup_free_ char *t = kist_time_rfc3339 ();
  /* 2026-11-29T13:56:21.123456789Z */
  ck_assert_uint_eq (strlen (t), 30);
  ck_assert_int_eq (t[4], '-');
  ck_assert_int_eq (t[10], 'T');
  ck_assert_int_eq (t[19], '.');
  ck_assert_int_eq (t[29], 'Z');
}
END_TEST

/* ---- files ---- */

START_TEST (test_read_file_bound)
{
  _cleanup_error_ struct kist_error *err = NULL;
  char *out = NULL;
  size_t len = 0;

  write_bytes ("exact", 10000);
  ck_assert_int_eq (kist_read_file_at (tmpfd, "exact", 10000, &out, &len, &err), 0);
  ck_assert_uint_eq (len, 10000);
  ck_assert_int_eq (out[len], '\0');
  free (out);
  out = NULL;

  /* One byte over the bound. */
  ck_assert_int_eq (kist_read_file_at (tmpfd, "exact", 9999, &out, &len, &err), -EFBIG);
  ck_assert_ptr_null (out);
  ck_assert_msg (strstr (err->msg, "`exact`") != NULL, "%s", err->msg);
  ck_assert_msg (strstr (err->msg, "larger than 9999 bytes") != NULL, "%s", err->msg);
  kist_error_free (err);
  err = NULL;

  /* Large bounds, small bound on a buffer-boundary size. */
  write_bytes ("big", 4096);
  ck_assert_int_eq (kist_read_file_at (tmpfd, "big", 4096, &out, &len, &err), 0);
  ck_assert_uint_eq (len, 4096);
  free (out);
  out = NULL;
  ck_assert_int_eq (kist_read_file_at (tmpfd, "big", 4095, &out, &len, &err), -EFBIG);
  kist_error_free (err);
  err = NULL;
  ck_assert_int_eq (kist_read_file_at (tmpfd, "big", 10, &out, &len, &err), -EFBIG);
  kist_error_free (err);
  err = NULL;

  /* Empty file. */
  write_bytes ("f", 0);
  ck_assert_int_eq (kist_read_file_at (tmpfd, "f", 0, &out, &len, &err), 0);
  ck_assert_uint_eq (len, 0);
  ck_assert_str_eq (out, "");
  free (out);
  out = NULL;

  /* Missing. */
  ck_assert_int_eq (kist_read_file_at (tmpfd, "missing", 10, &out, &len, &err), -ENOENT);
  ck_assert_str_eq (err->msg, "open `missing`: No such file or directory");
  ck_assert_int_eq (err->errnum, ENOENT);
}
END_TEST

START_TEST (test_write_atomic)
{
  _cleanup_error_ struct kist_error *err = NULL;
  struct stat st1, st2;
  char *out = NULL;

  mode_t old = umask (0777);
  ck_assert_int_eq (kist_write_file_atomic (tmpfd, "atomic", "one", 3, 0640, &err), 0);
  umask (old);
  ck_assert_int_eq (fstatat (tmpfd, "atomic", &st1, 0), 0);
  ck_assert_uint_eq (st1.st_mode & 07777, 0640);
  ck_assert_int_eq (kist_read_file_at (tmpfd, "atomic", 100, &out, NULL, &err), 0);
  ck_assert_str_eq (out, "one");
  free (out);

  /* A reader holding the old file keeps the old content (rename, not truncate). */
  int old_fd = openat (tmpfd, "atomic", O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge (old_fd, 0);
  ck_assert_int_eq (kist_write_file_atomic (tmpfd, "atomic", "second", 6, 0600, &err), 0);
  ck_assert_int_eq (fstatat (tmpfd, "atomic", &st2, 0), 0);
  ck_assert_uint_ne (st1.st_ino, st2.st_ino);
  ck_assert_uint_eq (st2.st_mode & 07777, 0600);
  char buf[16] = "";
  ck_assert_int_eq (read (old_fd, buf, sizeof buf - 1), 3);
  ck_assert_str_eq (buf, "one");
  close (old_fd);
  ck_assert_int_eq (kist_read_file_at (tmpfd, "atomic", 100, &out, NULL, &err), 0);
  ck_assert_str_eq (out, "second");
  free (out);

  /* A symlink at the name is replaced, its target untouched. */
  write_bytes ("target", 5);
  ck_assert_int_eq (symlinkat ("target", tmpfd, "link"), 0);
  ck_assert_int_eq (kist_write_file_atomic (tmpfd, "link", "new", 3, 0600, &err), 0);
  ck_assert_int_eq (fstatat (tmpfd, "link", &st1, AT_SYMLINK_NOFOLLOW), 0);
  ck_assert (S_ISREG (st1.st_mode));
  ck_assert_int_eq (fstatat (tmpfd, "target", &st1, 0), 0);
  ck_assert_int_eq (st1.st_size, 5);

  /* A directory at the name is not replaced (as rename refuses it): the
   * exchange is undone, the directory stays, no temp file is left. */
  ck_assert_int_eq (mkdirat (tmpfd, "adir", 0700), 0);
  ck_assert_int_lt (kist_write_file_atomic (tmpfd, "adir", "x", 1, 0600, &err), 0);
  ck_assert_int_eq (err->errnum, EISDIR);
  kist_error_free (err);
  err = NULL;
  ck_assert_int_eq (fstatat (tmpfd, "adir", &st1, AT_SYMLINK_NOFOLLOW), 0);
  ck_assert (S_ISDIR (st1.st_mode));
  ck_assert_int_eq (unlinkat (tmpfd, "adir", AT_REMOVEDIR), 0);

  /* kist_write_file_new: created in place, refused over an existing file. */
  ck_assert_int_eq (kist_write_file_new (tmpfd, "fresh", "abc", 3, 0600, &err), 0);
  ck_assert_int_eq (kist_read_file_at (tmpfd, "fresh", 100, &out, NULL, &err), 0);
  ck_assert_str_eq (out, "abc");
  free (out);
  ck_assert_int_lt (kist_write_file_new (tmpfd, "fresh", "def", 3, 0600, &err), 0);
  ck_assert_int_eq (err->errnum, EEXIST);
  kist_error_free (err);
  err = NULL;

  /* No temp files left. */
  int n = 0;
  int dfd = openat (tmpfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fdopendir (dfd);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    if (strstr (de->d_name, ".tmp."))
      n++;
  closedir (d);
  ck_assert_int_eq (n, 0);

  /* Errors name the file. */
  ck_assert_int_lt (kist_write_file_atomic (tmpfd, "nodir/x", "a", 1, 0600, &err), 0);
  ck_assert_msg (strstr (err->msg, "nodir") != NULL, "%s", err->msg);
  ck_assert_int_eq (err->errnum, ENOENT);
}
END_TEST

START_TEST (test_write_file_at)
{
  _cleanup_error_ struct kist_error *err = NULL;
  char *out = NULL;
  write_bytes ("trunc", 100);
  ck_assert_int_eq (kist_write_file_at (tmpfd, "trunc", "ab", 2, &err), 0);
  ck_assert_int_eq (kist_read_file_at (tmpfd, "trunc", 1000, &out, NULL, &err), 0);
  ck_assert_str_eq (out, "ab");
  free (out);
  /* Does not create. */
  ck_assert_int_eq (kist_write_file_at (tmpfd, "nothere", "ab", 2, &err), -ENOENT);
  ck_assert_msg (strstr (err->msg, "`nothere`") != NULL, "%s", err->msg);
  ck_assert_int_ne (faccessat (tmpfd, "nothere", F_OK, 0), 0);
}
END_TEST

START_TEST (test_read_write_all)
{
  int p[2];
  ck_assert_int_eq (pipe2 (p, O_CLOEXEC), 0);
  ck_assert_int_eq (kist_write_all (p[1], "hello", 5), 0);
  close (p[1]);
  char buf[16];
  ck_assert_int_eq (kist_read_all (p[0], buf, sizeof buf), 5);
  ck_assert_int_eq (memcmp (buf, "hello", 5), 0);
  ck_assert_int_eq (kist_read_all (p[0], buf, sizeof buf), 0);
  close (p[0]);
  ck_assert_int_eq (kist_write_all (-1, "x", 1), -EBADF);
  ck_assert_int_eq (kist_read_all (-1, buf, 1), -EBADF);
}
END_TEST

/* ---- errors ---- */

/* "[[[...]]]" n levels deep under a key of an object, in a new buffer. */
static char *
nested (size_t n, size_t *len)
{
  const char *head = "{\"id\":\"c1\",\"x\":";
  size_t hl = strlen (head);
  char *s = xmalloc (hl + 2 * n + 2);
  memcpy (s, head, hl);
  memset (s + hl, '[', n);
  memset (s + hl + n, ']', n);
  s[hl + 2 * n] = '}';
  s[hl + 2 * n + 1] = '\0';
  *len = hl + 2 * n + 1;
  return s;
}

/* Found by tests/fuzz (crashes/state, report, seccomp): a document nested
 * 300000 levels deep overflowed the stack in yajl_tree_free, and annotations
 * 130 levels deep overran yajl_gen's stack.  Every parser goes through
 * kist_json_parse, which refuses them. */
/* kist_json_gen_take: pretty text as yajl writes it, but empty arrays and
 * objects as [] and {}, brackets inside strings untouched, no final newline. */
START_TEST (test_json_gen_take)
{
  yajl_gen g = kist_json_gen_new (true, false);
  yajl_gen_map_open (g);
  static const char *keys[] = { "a", "b", "c[", "d" };
  yajl_gen_string (g, (const unsigned char *) keys[0], 1);
  yajl_gen_array_open (g);
  yajl_gen_array_close (g);
  yajl_gen_string (g, (const unsigned char *) keys[1], 1);
  yajl_gen_map_open (g);
  yajl_gen_map_close (g);
  yajl_gen_string (g, (const unsigned char *) keys[2], 2);
  yajl_gen_string (g, (const unsigned char *) "{[x]}", 5);
  yajl_gen_string (g, (const unsigned char *) keys[3], 1);
  yajl_gen_array_open (g);
  yajl_gen_integer (g, 1);
  yajl_gen_array_open (g);
  yajl_gen_array_close (g);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  char *s = kist_json_gen_take (g);
  ck_assert_str_eq (s, "{\n  \"a\": [],\n  \"b\": {},\n  \"c[\": \"{[x]}\",\n  \"d\": [\n    1,\n"
                       "    []\n  ]\n}");
  free (s);
  yajl_gen_free (g);
}
END_TEST

/* kist_json_gen_integer writes what yajl_gen_integer writes, value for
 * value, in every state (array element, map value, top level, beautified),
 * and refuses a key as yajl does. */
/* Close the array and the map both generators are in, check that they wrote
 * the same text, free them; the text (caller frees). */
static char *
close_pair (yajl_gen a, yajl_gen b)
{
  yajl_gen_array_close (a);
  yajl_gen_array_close (b);
  yajl_gen_map_close (a);
  yajl_gen_map_close (b);
  char *sa = kist_json_gen_take (a);
  _cleanup_free_ char *sb = kist_json_gen_take (b);
  ck_assert_str_eq (sa, sb);
  yajl_gen_free (a);
  yajl_gen_free (b);
  return sa;
}

START_TEST (test_json_gen_integer)
{
  static const long long v[] = { 0,          1,         -1,         9,         10,
                                 -10,        99,        100,        12345678,  -987654321,
                                 INT32_MAX,  INT32_MIN, 4294967296LL, LLONG_MAX, LLONG_MIN,
                                 LLONG_MIN + 1 };
  for (int pretty = 0; pretty < 2; pretty++)
    {
      yajl_gen a = kist_json_gen_new (pretty, false), b = kist_json_gen_new (pretty, false);
      yajl_gen_map_open (a);
      yajl_gen_map_open (b);
      ck_assert_int_eq (kist_json_gen_integer (a, 5), yajl_gen_keys_must_be_strings);
      ck_assert_int_eq (yajl_gen_integer (b, 5), yajl_gen_keys_must_be_strings);
      for (size_t i = 0; i < KIST_ARRAY_SIZE (v); i++)
        {
          char key[8];
          snprintf (key, sizeof key, "k%zu", i);
          yajl_gen_string (a, (const unsigned char *) key, strlen (key));
          yajl_gen_string (b, (const unsigned char *) key, strlen (key));
          ck_assert_int_eq (kist_json_gen_integer (a, v[i]), yajl_gen_status_ok);
          ck_assert_int_eq (yajl_gen_integer (b, v[i]), yajl_gen_status_ok);
        }
      yajl_gen_string (a, (const unsigned char *) "l", 1);
      yajl_gen_string (b, (const unsigned char *) "l", 1);
      yajl_gen_array_open (a);
      yajl_gen_array_open (b);
      for (size_t i = 0; i < KIST_ARRAY_SIZE (v); i++)
        {
          kist_json_gen_integer (a, v[i]);
          yajl_gen_integer (b, v[i]);
        }
      _cleanup_free_ char *sa = close_pair (a, b);
      ck_assert_ptr_nonnull (strstr (sa, "-9223372036854775808"));
      ck_assert_ptr_nonnull (strstr (sa, "9223372036854775807"));
    }
  /* A lone number is a whole document. */
  yajl_gen a = kist_json_gen_new (false, false);
  ck_assert_int_eq (kist_json_gen_integer (a, -42), yajl_gen_status_ok);
  ck_assert_int_eq (kist_json_gen_integer (a, 1), yajl_gen_generation_complete);
  _cleanup_free_ char *sa = kist_json_gen_take (a);
  ck_assert_str_eq (sa, "-42");
  yajl_gen_free (a);
}
END_TEST

/* kist_json_gen_string writes what yajl_gen_string writes, with the same
 * status, for plain strings (its fast path), strings with escapes, UTF-8,
 * invalid UTF-8 and strings longer than its buffer: as map keys and values,
 * as array elements and as a whole document, compact and beautified, with
 * and without UTF-8 validation. */
START_TEST (test_json_gen_string)
{
  char *longs[3];
  for (int k = 0; k < 3; k++)
    {
      size_t n = 1021 + (size_t) k; /* the fast path's buffer holds 1022 + 2 quotes */
      longs[k] = xmalloc (n + 1);
      for (size_t i = 0; i < n; i++)
        longs[k][i] = (char) ('a' + i % 26);
      longs[k][n] = '\0';
    }
  const char *v[] = { "",           "a",          "plain text /with/ slashes", "quote\"",
                      "back\\slash", "tab\tnl\ncr\r", "\x01\x1f ctl",          "del\x7f",
                      "~}|{`_^]",   "caf\xc3\xa9",  "bad \xff utf-8",           "\xe2\x82",
                      longs[0],     longs[1],     longs[2] };
  for (int pretty = 0; pretty < 2; pretty++)
    for (int validate = 0; validate < 2; validate++)
      {
        yajl_gen a = kist_json_gen_new (pretty, validate), b = kist_json_gen_new (pretty, validate);
        yajl_gen_map_open (a);
        yajl_gen_map_open (b);
        for (size_t i = 0; i < KIST_ARRAY_SIZE (v); i++)
          {
            size_t n = strlen (v[i]);
            /* as a key, then as its value */
            ck_assert_int_eq (kist_json_gen_string (a, v[i], n),
                              yajl_gen_string (b, (const unsigned char *) v[i], n));
            ck_assert_int_eq (kist_json_gen_string (a, v[i], n),
                              yajl_gen_string (b, (const unsigned char *) v[i], n));
          }
        yajl_gen_string (a, (const unsigned char *) "l", 1);
        yajl_gen_string (b, (const unsigned char *) "l", 1);
        yajl_gen_array_open (a);
        yajl_gen_array_open (b);
        for (size_t i = 0; i < KIST_ARRAY_SIZE (v); i++)
          ck_assert_int_eq (kist_json_gen_string (a, v[i], strlen (v[i])),
                            yajl_gen_string (b, (const unsigned char *) v[i], strlen (v[i])));
        _cleanup_free_ char *sa = close_pair (a, b);
        ck_assert_ptr_nonnull (strstr (sa, "\"plain text /with/ slashes\""));
        /* A lone string is a whole document. */
        a = kist_json_gen_new (pretty, validate);
        b = kist_json_gen_new (pretty, validate);
        ck_assert_int_eq (kist_json_gen_string (a, "x y", 3), yajl_gen_status_ok);
        ck_assert_int_eq (yajl_gen_string (b, (const unsigned char *) "x y", 3), yajl_gen_status_ok);
        ck_assert_int_eq (kist_json_gen_string (a, "z", 1), yajl_gen_generation_complete);
        ck_assert_int_eq (yajl_gen_string (b, (const unsigned char *) "z", 1),
                          yajl_gen_generation_complete);
        _cleanup_free_ char *da = kist_json_gen_take (a), *db = kist_json_gen_take (b);
        ck_assert_str_eq (da, db);
        yajl_gen_free (a);
        yajl_gen_free (b);
      }
  for (int k = 0; k < 3; k++)
    free (longs[k]);

  /* Every byte value at every place of a 17-byte string (the word-at-a-time
   * scan and the byte tail): the same text or the same refusal as yajl. */
  for (int validate = 0; validate < 2; validate++)
    for (int c = 1; c < 256; c++)
      for (size_t at = 0; at < 17; at++)
        {
          char str[18];
          memset (str, 'a', 17);
          str[17] = '\0';
          str[at] = (char) c;
          yajl_gen a = kist_json_gen_new (false, validate), b = kist_json_gen_new (false, validate);
          yajl_gen_array_open (a);
          yajl_gen_array_open (b);
          ck_assert_int_eq (kist_json_gen_string (a, str, 17),
                            yajl_gen_string (b, (const unsigned char *) str, 17));
          yajl_gen_array_close (a);
          yajl_gen_array_close (b);
          _cleanup_free_ char *sa = kist_json_gen_take (a), *sb = kist_json_gen_take (b);
          ck_assert_msg (strcmp (sa, sb) == 0, "byte 0x%02x at %zu: `%s` against yajl's `%s`", c,
                         at, sa, sb);
          yajl_gen_free (a);
          yajl_gen_free (b);
        }
}
END_TEST

START_TEST (test_json_depth)
{
  struct kist_error *err = NULL;
  yajl_val v = NULL;
  size_t len = 0;
  _cleanup_free_ char *ok = nested (KIST_JSON_MAX_DEPTH - 1, &len);
  ck_assert_int_eq (kist_json_parse (ok, len, "t: ", &v, &err), 0);
  kist_json_tree_free (v);
  v = NULL;
  _cleanup_free_ char *deep = nested (KIST_JSON_MAX_DEPTH, &len);
  ck_assert_int_lt (kist_json_parse (deep, len, "t: ", &v, &err), 0);
  ck_assert_ptr_nonnull (strstr (err->msg, "t: malformed JSON: nested deeper than 64 levels"));
  kist_error_freep (&err);
  _cleanup_free_ char *huge = nested (300000, &len);
  ck_assert_int_lt (kist_json_parse (huge, len, "t: ", &v, &err), 0);
  kist_error_freep (&err);
  ck_assert_ptr_null (kist_report_from_json (huge, len, &err));
  ck_assert_ptr_nonnull (strstr (err->msg, "report.json: malformed JSON: nested deeper"));
  kist_error_freep (&err);
  ck_assert_ptr_null (kist_report_json_to_text (huge, len, &err));
  kist_error_freep (&err);
  ck_assert_int_lt (kist_json_parse ("{\"a\":\"\\u0000\"}", 13, "t: ", &v, &err), 0);
  kist_error_freep (&err);
  ck_assert_int_lt (kist_json_parse ("", 0, "t: ", &v, &err), 0);
  ck_assert_str_eq (err->msg, "t: malformed JSON: the document is empty");
  kist_error_freep (&err);

  /* The prescan's offsets (it skips with strcspn): a NUL in a string and
   * outside one, the \u0000 escape after other escapes, brackets inside
   * strings and comments do not count towards the depth, an escaped quote
   * does not end a string. */
  ck_assert_int_lt (kist_json_parse ("{\"ab\0c\":1}", 10, "t: ", &v, &err), 0);
  ck_assert_str_eq (err->msg, "t: malformed JSON: NUL byte at offset 4");
  kist_error_freep (&err);
  ck_assert_int_lt (kist_json_parse ("[1,\0]", 5, "t: ", &v, &err), 0);
  ck_assert_str_eq (err->msg, "t: malformed JSON: NUL byte at offset 3");
  kist_error_freep (&err);
  ck_assert_int_lt (kist_json_parse ("[\"\\\"\\n\\u0000\"]", 14, "t: ", &v, &err), 0);
  ck_assert_msg (strstr (err->msg, "\\u0000 at offset 6") != NULL, "%s", err->msg);
  kist_error_freep (&err);
  {
    /* 70 '[' inside a string, 70 in a block comment, 70 in a line comment:
     * depth 1. */
    char b[400];
    size_t n = 0;
    b[n++] = '[';
    b[n++] = '"';
    b[n++] = '\\';
    b[n++] = '"';
    for (int k = 0; k < 70; k++)
      b[n++] = '[';
    b[n++] = '"';
    memcpy (b + n, "/*", 2), n += 2;
    for (int k = 0; k < 70; k++)
      b[n++] = '{';
    memcpy (b + n, "*/", 2), n += 2;
    memcpy (b + n, "//", 2), n += 2;
    for (int k = 0; k < 70; k++)
      b[n++] = '[';
    b[n++] = '\n';
    b[n++] = ']';
    ck_assert_int_eq (kist_json_parse (b, n, "t: ", &v, &err), 0);
    ck_assert (YAJL_IS_ARRAY (v) && v->u.array.len == 1 && YAJL_IS_STRING (v->u.array.values[0]));
    const char *str = v->u.array.values[0]->u.string;
    ck_assert_ptr_nonnull (str);
    ck_assert_uint_eq (strlen (str), 71);
    kist_json_tree_free (v);
    v = NULL;
  }

  /* state.json on disk, through kist_state_read. */
  char dir[] = "/tmp/kist-test-util.XXXXXX";
  ck_assert_ptr_nonnull (mkdtemp (dir));
  int dfd = open (dir, O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (dfd, 0);
  int f = openat (dfd, "state.json", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ck_assert_int_ge (f, 0);
  ck_assert_int_eq (kist_write_all (f, huge, len), 0);
  close (f);
  struct kist_state st;
  ck_assert_int_lt (kist_state_read (dfd, &st, &err), 0);
  ck_assert_ptr_nonnull (strstr (err->msg, "malformed JSON: nested deeper"));
  kist_error_freep (&err);
  unlinkat (dfd, "state.json", 0);
  close (dfd);
  rmdir (dir);
}
END_TEST

START_TEST (test_errors)
{
  struct kist_error *err = NULL;

  ck_assert_int_eq (kist_error_make (&err, 0, "bad %s", "thing"), -1);
  ck_assert_str_eq (err->msg, "bad thing");
  ck_assert_int_eq (err->errnum, 0);
  ck_assert_int_eq (kist_error_exit_status (err), KIST_EXIT_FAILURE);

  /* The first error wins. */
  ck_assert_int_eq (kist_error_make (&err, ENOENT, "second"), -ENOENT);
  ck_assert_str_eq (err->msg, "bad thing");

  ck_assert_int_eq (kist_error_wrap (&err, "layer %s", "seccomp"), -1);
  ck_assert_str_eq (err->msg, "layer seccomp: bad thing");
  kist_error_free (err);
  err = NULL;

  ck_assert_int_eq (kist_error_make (&err, ENOENT, "open `%s`", "/x"), -ENOENT);
  ck_assert_str_eq (err->msg, "open `/x`: No such file or directory");
  ck_assert_int_eq (err->errnum, ENOENT);
  ck_assert_int_eq (kist_error_wrap (&err, "config.json"), -ENOENT);
  ck_assert_str_eq (err->msg, "config.json: open `/x`: No such file or directory");
  err->status = KIST_EXIT_NOTFOUND;
  ck_assert_int_eq (kist_error_exit_status (err), 127);
  kist_error_free (err);
  err = NULL;

  /* wrap without an error creates one. */
  ck_assert_int_eq (kist_error_wrap (&err, "ctx %d", 1), -1);
  ck_assert_str_eq (err->msg, "ctx 1");
  kist_error_free (err);
  err = NULL;

  /* NULL err pointer is allowed. */
  ck_assert_int_eq (kist_error_make (NULL, EPERM, "x"), -EPERM);
  ck_assert_int_eq (kist_error_wrap (NULL, "x"), -1);
  kist_error_free (NULL);

  ck_assert_int_eq (kist_error_exit_status (NULL), KIST_EXIT_FAILURE);
  ck_assert_str_eq (kist_errno_name (ENOENT), "ENOENT");
  ck_assert_str_eq (kist_errno_name (EPERM), "EPERM");
  ck_assert_str_eq (kist_errno_name (0), "E?");
  ck_assert_str_eq (kist_errno_name (-1), "E?");
  ck_assert_str_eq (kist_errno_name (100000), "E?");

  {
    _cleanup_error_ struct kist_error *e2 = NULL;
    kist_error_make (&e2, 0, "freed by cleanup");
  }
}
END_TEST


/* kist_json_parse builds its tree itself (json.c): it must be yajl_tree_parse's,
 * node for node, on every document here and every file of the fuzz corpora
 * and seccomp-profiles/, and fail where yajl_tree_parse fails. */
static void
same_tree (yajl_val a, yajl_val b, const char *where)
{
  ck_assert_msg ((a == NULL) == (b == NULL), "%s: one node missing", where);
  if (a == NULL)
    return;
  ck_assert_msg (a->type == b->type, "%s: type %d vs %d", where, a->type, b->type);
  switch (a->type)
    {
    case yajl_t_string:
      ck_assert_msg (strcmp (a->u.string, b->u.string) == 0, "%s: string", where);
      break;
    case yajl_t_number:
      ck_assert_msg (strcmp (a->u.number.r, b->u.number.r) == 0, "%s: number text", where);
      ck_assert_msg (a->u.number.flags == b->u.number.flags, "%s: number flags %u vs %u (%s)",
                     where, a->u.number.flags, b->u.number.flags, a->u.number.r);
      if (a->u.number.flags & YAJL_NUMBER_INT_VALID)
        ck_assert_msg (a->u.number.i == b->u.number.i, "%s: integer", where);
      if (a->u.number.flags & YAJL_NUMBER_DOUBLE_VALID)
        ck_assert_msg (a->u.number.d == b->u.number.d, "%s: double", where);
      break;
    case yajl_t_object:
      ck_assert_msg (a->u.object.len == b->u.object.len, "%s: object length", where);
      for (size_t i = 0; i < a->u.object.len; i++)
        {
          ck_assert_msg (strcmp (a->u.object.keys[i], b->u.object.keys[i]) == 0, "%s: key %zu",
                         where, i);
          same_tree (a->u.object.values[i], b->u.object.values[i], where);
        }
      break;
    case yajl_t_array:
      ck_assert_msg (a->u.array.len == b->u.array.len, "%s: array length", where);
      for (size_t i = 0; i < a->u.array.len; i++)
        same_tree (a->u.array.values[i], b->u.array.values[i], where);
      break;
    default:
      break;
    }
}

static void
compare_parse (const char *json, size_t len, const char *where)
{
  /* As kist_json_parse refuses them before any parser (tested above). */
  if (len == 0 || memchr (json, '\0', len) || strstr (json, "\\u0000"))
    return;
  yajl_val mine = NULL;
  struct kist_error *e = NULL;
  int r = kist_json_parse (json, len, "", &mine, &e);
  if (r < 0 && e && strstr (e->msg, "nested") != NULL)
    {
      kist_error_free (e); /* the depth limit: before any parser */
      return;
    }
  char *copy = strndup (json, len);
  char ebuf[1024] = "";
  yajl_val theirs = yajl_tree_parse (copy, ebuf, sizeof ebuf);
  free (copy);
  ck_assert_msg ((r == 0) == (theirs != NULL), "%s: kist %s, yajl_tree %s", where,
                 r == 0 ? "parses" : e->msg, theirs ? "parses" : ebuf);
  if (r == 0)
    same_tree (mine, theirs, where);
  else
    {
      char *nl = strchr (ebuf, '\n');
      if (nl)
        *nl = '\0';
      ck_assert_msg (strstr (e->msg, ebuf) != NULL, "%s: `%s` lacks yajl's `%s`", where, e->msg,
                     ebuf);
    }
  kist_error_free (e);
  kist_json_tree_free (mine);
  yajl_tree_free (theirs);
}

static size_t n_compared;

static void
compare_dir (const char *dir)
{
  DIR *d = opendir (dir);
  if (d == NULL)
    return;
  struct dirent *de;
  while ((de = readdir (d)))
    {
      if (de->d_name[0] == '.')
        continue;
      char *path = xasprintf ("%s/%s", dir, de->d_name);
      struct stat st;
      if (stat (path, &st) == 0 && S_ISDIR (st.st_mode))
        compare_dir (path);
      else if (S_ISREG (st.st_mode) && st.st_size < (1 << 20))
        {
          char *buf = NULL;
          size_t len = 0;
          struct kist_error *e = NULL;
          if (kist_read_file_at (AT_FDCWD, path, 1u << 20, &buf, &len, &e) == 0)
            compare_parse (buf, len, path), n_compared++;
          kist_error_free (e);
          free (buf);
        }
      free (path);
    }
  closedir (d);
}

START_TEST (test_json_tree_as_yajl)
{
  static const char *const docs[] = {
    "{}", "[]", "null", "true", "false", "0", "-0", "1", "-1", "42", "1.5", "-2.5e3", "1e3",
    "1E400", "-1e-400", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "-9223372036854775809", "99999999999999999999", "0.0", "123456789012345678901234567890",
    "\"\"", "\"a\\nb\\t\\\"q\\\" \\/ \\\\ \\u00e9 \\ud83d\\ude00\"",
    "{\"a\": 1, \"b\": [1, 2, {\"c\": null}], \"a\": \"dup\"}",
    "[[[]], {}, [{}], {\"x\": []}]",
    "/* c */ {\"k\" /* in */ : // line\n [1, /* x */ 2]}",
    "{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"env\": [], \"user\": "
    "{\"uid\": 0, \"gid\": 0}}, \"linux\": {\"namespaces\": [{\"type\": \"pid\"}]}}",
    /* malformed */
    "{", "[1,]", "{\"a\" 1}", "{\"a\": }", "tru", "[1] [2]", "{\"a\": 1} x", "\"unterminated",
    "[\"\\x\"]", "{1: 2}", "[01]", "[1.]", "[-]", "\"\\ud800\"", "[\"\xff\"]", "// only a comment",
  };
  for (size_t i = 0; i < sizeof docs / sizeof *docs; i++)
    compare_parse (docs[i], strlen (docs[i]), docs[i]);
  /* A wide document: many members, long strings. */
  size_t cap = 1 << 20, n = 0;
  char *big = xmalloc (cap);
  n += (size_t) snprintf (big + n, cap - n, "{\"a\": [");
  for (int i = 0; i < 5000; i++)
    n += (size_t) snprintf (big + n, cap - n, "%s{\"n%d\": %d, \"s\": \"%0*d\"}", i ? "," : "", i,
                            i, i % 200 + 1, i);
  n += (size_t) snprintf (big + n, cap - n, "]}");
  compare_parse (big, n, "5000 objects");
  free (big);
  compare_dir (KIST_SRCDIR "/seccomp-profiles");
  compare_dir (KIST_SRCDIR "/tests/fuzz/corpus");
  compare_dir (KIST_SRCDIR "/examples");
  ck_assert_msg (n_compared > 50, "only %zu files compared (KIST_SRCDIR %s)", n_compared,
                 KIST_SRCDIR);
}
END_TEST

/* kist_time_rfc3339_at is gmtime_r + strftime, without the time zone
 * (years 1000-9999: glibc's %Y does not pad below 1000, kist does). */
START_TEST (test_time_rfc3339)
{
  static const int64_t fixed[] = { 0, -1, 86399, 86400, 951782400 /* 2000-02-29 */,
                                   951868800, 4107542400 /* 2100-03-01 */, 1798675200,
                                   -30610224000 /* 1000-01-01 */, 253402300799 /* 9999-12-31 */ };
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 20000; i++)
    {
      int64_t sec;
      if (i < (int) KIST_ARRAY_SIZE (fixed))
        sec = fixed[i];
      else
        {
          x ^= x << 13, x ^= x >> 7, x ^= x << 17;
          sec = (int64_t) (x % (253402300800ull + 30610224000ull)) - 30610224000ll;
        }
      struct timespec ts = { .tv_sec = (time_t) sec, .tv_nsec = (long) (x % 1000000000ull) };
      struct tm tm;
      char want[96], date[64];
      ck_assert_ptr_nonnull (gmtime_r (&ts.tv_sec, &tm));
      strftime (date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
      snprintf (want, sizeof want, "%s.%09ldZ", date, ts.tv_nsec);
      char *got = kist_time_rfc3339_at (&ts);
      ck_assert_str_eq (got, want);
      free (got);
    }
}
END_TEST

/* kist_realpath and kist_fd_realpath give what realpath(3) gives, through
 * symlinked directories and "..", and NULL with errno for a missing path. */
START_TEST (test_realpath)
{
  char base[64];
  strcpy (base, "/tmp/kist-test-realpath.XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (base));
  char p[256];
  snprintf (p, sizeof p, "%s/real", base);
  ck_assert_int_eq (mkdir (p, 0700), 0);
  snprintf (p, sizeof p, "%s/real/sub", base);
  ck_assert_int_eq (mkdir (p, 0700), 0);
  snprintf (p, sizeof p, "%s/link", base);
  ck_assert_int_eq (symlink ("real", p), 0);
  const char *rel[] = { "real", "real/sub", "link", "link/sub", "link/sub/..", "real/./sub/" };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (rel); i++)
    {
      snprintf (p, sizeof p, "%s/%s", base, rel[i]);
      char *want = realpath (p, NULL), *got = kist_realpath (p);
      ck_assert_ptr_nonnull (want);
      ck_assert_ptr_nonnull (got);
      ck_assert_str_eq (got, want);
      int fd = open (p, O_PATH | O_CLOEXEC);
      ck_assert_int_ge (fd, 0);
      char *viafd = kist_fd_realpath (fd);
      ck_assert_ptr_nonnull (viafd);
      ck_assert_str_eq (viafd, want);
      close (fd);
      free (want);
      free (got);
      free (viafd);
    }
  snprintf (p, sizeof p, "%s/missing", base);
  errno = 0;
  ck_assert_ptr_null (kist_realpath (p));
  ck_assert_int_eq (errno, ENOENT);
  /* A removed directory: no path from its fd. */
  snprintf (p, sizeof p, "%s/real/sub", base);
  int fd = open (p, O_PATH | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (rmdir (p), 0);
  ck_assert_ptr_null (kist_fd_realpath (fd));
  close (fd);
  snprintf (p, sizeof p, "%s/link", base);
  unlink (p);
  snprintf (p, sizeof p, "%s/real", base);
  rmdir (p);
  rmdir (base);
}
END_TEST

static Suite *
util_suite (void)
{
  Suite *s = suite_create ("util");
  TCase *tc = tcase_create ("core");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_parse_u64);
  tcase_add_test (tc, test_parse_int);
  tcase_add_test (tc, test_list_contains);
  tcase_add_test (tc, test_rstrip);
  tcase_add_test (tc, test_strings);
  tcase_add_test (tc, test_read_file_bound);
  tcase_add_test (tc, test_write_atomic);
  tcase_add_test (tc, test_write_file_at);
  tcase_add_test (tc, test_read_write_all);
  tcase_add_test (tc, test_errors);
  tcase_add_test (tc, test_json_depth);
  tcase_add_test (tc, test_json_gen_take);
  tcase_add_test (tc, test_json_gen_integer);
  tcase_add_test (tc, test_json_gen_string);
  tcase_add_test (tc, test_json_tree_as_yajl);
  tcase_add_test (tc, test_time_rfc3339);
  tcase_add_test (tc, test_realpath);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return kist_unit_run (util_suite ());
}
