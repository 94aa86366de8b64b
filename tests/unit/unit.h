/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What every unit test's main() shares. */
#ifndef KIST_UNIT_H
#define KIST_UNIT_H

#include <check.h>
#include <stdlib.h>

/* Run every test of s (takes it); EXIT_SUCCESS when none failed. */
static inline int
kist_unit_run (Suite *s)
{
  SRunner *sr = srunner_create (s);
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
