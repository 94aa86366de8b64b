/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef KIST_CAPS_H
#define KIST_CAPS_H

/* "CAP_SYS_ADMIN" -> 21, unknown -> -1.  Accepts names without the CAP_ prefix too. */
int kist_cap_from_name (const char *name);
/* 21 -> "CAP_SYS_ADMIN", NULL when unknown. */
const char *kist_cap_name (int cap);
/* /proc/sys/kernel/cap_last_cap (cached), or the highest cap kist knows. */
int kist_cap_last_cap (void);

#endif
