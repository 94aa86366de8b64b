/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/lifecycle.c: the state machine table. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "lifecycle.h"
#include "report.h"
#include "util.h"
#include "unit.h"

/* The refusal of op in st, or NULL when allowed. */
static char *
refusal (enum kist_status st, enum kist_op op, int *errnum)
{
  struct kist_error *e = NULL;
  int r = kist_status_allows (st, op, "c1", &e);
  if (r == 0)
    {
      ck_assert_ptr_null (e);
      return NULL;
    }
  ck_assert_int_lt (r, 0);
  ck_assert_ptr_nonnull (e);
  char *m = strdup (e->msg);
  if (errnum)
    *errnum = e->errnum;
  kist_error_free (e);
  return m;
}

static bool
allowed (enum kist_status st, enum kist_op op)
{
  char *m = refusal (st, op, NULL);
  free (m);
  return m == NULL;
}

START_TEST (test_table_allowed)
{
  /* op, then creating created running stopped paused */
  static const struct
  {
    enum kist_op op;
    bool ok[5];
  } want[] = {
    { KIST_OP_START, { 0, 1, 0, 0, 0 } },        { KIST_OP_EXEC, { 0, 0, 1, 0, 0 } },
    { KIST_OP_SIGNAL, { 0, 1, 1, 0, 1 } },       { KIST_OP_KILL_ALL, { 0, 1, 1, 1, 1 } },
    { KIST_OP_DELETE, { 1, 1, 0, 1, 0 } },       { KIST_OP_DELETE_FORCE, { 1, 1, 1, 1, 1 } },
    { KIST_OP_PAUSE, { 0, 0, 1, 0, 0 } },        { KIST_OP_RESUME, { 0, 0, 0, 0, 1 } },
    { KIST_OP_UPDATE, { 0, 1, 1, 0, 1 } },       { KIST_OP_EVENTS, { 0, 1, 1, 0, 1 } },
    { KIST_OP_PS, { 1, 1, 1, 1, 1 } },
  };
  static const enum kist_status sts[5] = { KIST_STATUS_CREATING, KIST_STATUS_CREATED,
                                           KIST_STATUS_RUNNING, KIST_STATUS_STOPPED,
                                           KIST_STATUS_PAUSED };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    for (size_t j = 0; j < 5; j++)
      ck_assert_msg (allowed (sts[j], want[i].op) == want[i].ok[j], "op %d in %s", (int) want[i].op,
                     kist_status_name (sts[j]));
}
END_TEST

START_TEST (test_table_messages)
{
  /* The wording users (and tests) have always seen. */
  int errnum = 0;
  char *m = refusal (KIST_STATUS_RUNNING, KIST_OP_START, &errnum);
  ck_assert_str_eq (m, "container `c1` cannot be started: it is running, not created: Invalid argument");
  ck_assert_int_eq (errnum, EINVAL);
  free (m);
  m = refusal (KIST_STATUS_CREATED, KIST_OP_EXEC, NULL);
  ck_assert_str_eq (m, "cannot exec in container `c1`: it is created, not running (start it first: "
                       "`kist start`): Invalid argument");
  free (m);
  m = refusal (KIST_STATUS_PAUSED, KIST_OP_EXEC, NULL);
  ck_assert_str_eq (m, "cannot exec in container `c1`: it is paused, not running: Invalid argument");
  free (m);
  m = refusal (KIST_STATUS_RUNNING, KIST_OP_DELETE, &errnum);
  ck_assert_str_eq (m, "container `c1` is running; stop it first or use `kist delete --force`: "
                       "Device or resource busy");
  ck_assert_int_eq (errnum, EBUSY);
  free (m);
  m = refusal (KIST_STATUS_PAUSED, KIST_OP_PAUSE, NULL);
  ck_assert_str_eq (m, "container `c1` is not running (it is paused): Invalid argument");
  free (m);
  m = refusal (KIST_STATUS_RUNNING, KIST_OP_RESUME, NULL);
  ck_assert_str_eq (m, "container `c1` is not paused (it is running): Invalid argument");
  free (m);
  m = refusal (KIST_STATUS_STOPPED, KIST_OP_UPDATE, NULL);
  ck_assert_str_eq (m, "update: container `c1` is not running (it is stopped): Invalid argument");
  free (m);
  m = refusal (KIST_STATUS_STOPPED, KIST_OP_EVENTS, &errnum);
  ck_assert_str_eq (m, "events: container `c1` is not running (it is stopped): No such process");
  ck_assert_int_eq (errnum, ESRCH);
  free (m);
}
END_TEST

/* The degraded list as the report model gives it (what
 * kist_container_degraded_json answered before its streaming pass). */
static char *
degraded_by_model (const char *text)
{
  struct kist_error *e = NULL;
  struct kist_report *r = kist_report_from_json (text, strlen (text), &e);
  kist_error_free (e);
  if (r == NULL)
    return NULL;
  yajl_gen g = kist_json_gen_new (false, false);
  size_t n = 0;
  yajl_gen_array_open (g);
  for (size_t i = 0; i < r->n_layers; i++)
    if (r->layers[i].requested && !r->layers[i].applied)
      {
        kist_json_gen_str_lossy (g, r->layers[i].name);
        n++;
      }
  yajl_gen_array_close (g);
  char *out = n ? kist_json_gen_take (g) : NULL;
  yajl_gen_free (g);
  kist_report_free (r);
  return out;
}

START_TEST (test_degraded_json)
{
  static const struct
  {
    const char *text, *want;
  } cases[] = {
    { "{\"id\": \"c\", \"operation\": \"run\", \"layers\": [{\"layer\": \"seccomp\", "
      "\"requested\": true, \"applied\": false, \"detail\": {\"layer\": \"x\"}}, "
      "{\"layer\": \"caps\", \"requested\": \"all\", \"applied\": true}, "
      "{\"layer\": \"rlimits\", \"requested\": \"nofile\", \"applied\": false}, "
      "{\"layer\": \"hostname\", \"requested\": false, \"applied\": false}], "
      "\"timing\": {\"startupUsec\": 99999999999999999999999}}",
      "[\"seccomp\",\"rlimits\"]" },
    /* nothing degraded */
    { "{\"id\": \"c\", \"operation\": \"run\", \"layers\": [{\"layer\": \"caps\", "
      "\"requested\": true, \"applied\": true}]}",
      NULL },
    /* the last key counts; null is absent; a non-string name or requested */
    { "{\"id\": \"c\", \"operation\": \"run\", \"layers\": [{\"layer\": \"a\"}], \"layers\": "
      "[{\"layer\": \"b\", \"requested\": true, \"applied\": true, \"applied\": false}, "
      "{\"layer\": \"c\", \"layer\": null, \"requested\": true}, "
      "{\"layer\": [\"d\"], \"requested\": true}, {\"layer\": \"e\", \"requested\": 1}, "
      "{\"layer\": \"f\", \"requested\": {}, \"applied\": null}, 7, [\"g\"], "
      "{\"layer\": \"h\", \"requested\": \"\", \"x\": [{\"requested\": false}]}]}",
      "[\"b\",\"h\"]" },
    /* comments, as yajl_tree_parse allows them */
    { "/* c */ {\"id\": \"c\", \"operation\": \"run\", // x\n \"layers\": [{\"layer\": "
      "\"net\", \"requested\": true}]}",
      "[\"net\"]" },
    /* refused documents give no list */
    { "{\"id\": \"c\", \"operation\": \"run\", \"layers\": [{\"layer\": \"a\\u0000\", "
      "\"requested\": true}]}",
      NULL },
    { "{\"id\": \"c\", \"operation\": \"run\", \"layers\": [{\"layer\": \"a\", \"requested\": "
      "true}]} x",
      NULL },
    { "{\"id\": 1, \"operation\": \"run\", \"layers\": [{\"layer\": \"a\", \"requested\": true}]}",
      NULL },
    { "{\"id\": \"c\", \"operation\": \"run\", \"layers\": [{\"layer\": \"a\", \"requested\": "
      "true}], \"layers\": {}}",
      NULL },
    { "[{\"id\": \"c\"}]", NULL },
    { "{\"id\": \"c\", \"operation\": \"run\", \"layers\": [{\"layer\": \"a\", \"requested\": "
      "true,}]}",
      NULL },
  };
  char dir[] = "/tmp/kist-unit-degraded.XXXXXX";
  ck_assert_ptr_nonnull (mkdtemp (dir));
  int rootfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge (rootfd, 0);
  ck_assert_int_eq (mkdirat (rootfd, "c", 0700), 0);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      int fd = openat (rootfd, "c/report.json", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      ck_assert_int_ge (fd, 0);
      ck_assert_int_eq (write (fd, cases[i].text, strlen (cases[i].text)),
                        (ssize_t) strlen (cases[i].text));
      close (fd);
      char *got = kist_container_degraded_json (rootfd, "c");
      char *model = degraded_by_model (cases[i].text);
      if (cases[i].want == NULL)
        ck_assert_msg (got == NULL, "case %zu: %s", i, got);
      else
        ck_assert_msg (got && strcmp (got, cases[i].want) == 0, "case %zu: %s", i,
                       got ? got : "(null)");
      ck_assert_msg ((got == NULL) == (model == NULL) && (got == NULL || strcmp (got, model) == 0),
                     "case %zu: the streaming pass says %s, the report model %s", i,
                     got ? got : "(null)", model ? model : "(null)");
      free (got);
      free (model);
    }
  unlinkat (rootfd, "c/report.json", 0);
  unlinkat (rootfd, "c", AT_REMOVEDIR);
  close (rootfd);
  rmdir (dir);
}
END_TEST

START_TEST (test_signal)
{
  struct kist_error *e = NULL;
  /* SIGKILL and --all succeed on a stopped container (containerd's teardown). */
  ck_assert_int_eq (kist_status_allows_signal (KIST_STATUS_STOPPED, SIGKILL, false, "c1", &e), 0);
  ck_assert_int_eq (kist_status_allows_signal (KIST_STATUS_STOPPED, SIGTERM, true, "c1", &e), 0);
  ck_assert_int_eq (kist_status_allows_signal (KIST_STATUS_PAUSED, SIGTERM, false, "c1", &e), 0);
  ck_assert_ptr_null (e);
  ck_assert_int_lt (kist_status_allows_signal (KIST_STATUS_STOPPED, 15, false, "c1", &e), 0);
  ck_assert_str_eq (e->msg, "container `c1` is not running (it is stopped): signal 15 was not sent "
                            "(only SIGKILL or --all succeed on a stopped container); remove it with "
                            "`kist delete c1`: No such process");
  kist_error_free (e);
  e = NULL;
  /* A create not finished: no signal goes to a pid that may still be 0. */
  ck_assert_int_lt (kist_status_allows_signal (KIST_STATUS_CREATING, SIGKILL, true, "c1", &e), 0);
  kist_error_free (e);
}
END_TEST

int
main (void)
{
  Suite *s = suite_create ("lifecycle");
  TCase *tc = tcase_create ("state machine");
  tcase_add_test (tc, test_table_allowed);
  tcase_add_test (tc, test_table_messages);
  tcase_add_test (tc, test_signal);
  tcase_add_test (tc, test_degraded_json);
  suite_add_tcase (s, tc);
  return kist_unit_run (s);
}
