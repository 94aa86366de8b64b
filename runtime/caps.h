/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef KIST_CAPS_H
#define KIST_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "spec.h"

/* The highest capability kist knows by name (CAP_CHECKPOINT_RESTORE). */
#define KIST_CAP_LAST_KNOWN 40

/* "CAP_SYS_ADMIN" -> 21, unknown -> -1.  Accepts names without the CAP_ prefix too. */
int kist_cap_from_name (const char *name);
/* 21 -> "CAP_SYS_ADMIN", NULL when unknown. */
const char *kist_cap_name (int cap);
/* /proc/sys/kernel/cap_last_cap (cached), or the highest cap kist knows. */
int kist_cap_last_cap (void);

/* ---- Pure helpers of the process layers (caps.c, rlimits.c, sysctl.c,
 * idmap.c), exported for tests/unit/test_proc.c. */

/* caps.c: names (NULL-terminated, may be NULL) -> bit mask of the caps
 * 0..last_cap.  Known names above last_cap are set in *above (may be NULL).
 * The first unknown name is returned in *unknown (borrowed, NULL if none);
 * unknown names are left out of the mask. */
uint64_t kist_caps_mask (char *const *names, int last_cap, uint64_t *above, const char **unknown);

/* caps.c: the capability names of every set that cannot be granted here
 * (unknown to kist, or above cap_last_cap), "CAP_X in
 * process.capabilities.bounding (unknown to kist), ..."; NULL when none. */
char *kist_caps_unknown_text (const struct kist_capabilities *caps);

/* rlimits.c: "RLIMIT_NOFILE" -> RLIMIT_NOFILE, -1 when unknown. */
int kist_rlimit_from_name (const char *name);
/* RLIMIT_NOFILE -> "RLIMIT_NOFILE", NULL when unknown. */
const char *kist_rlimit_name (int resource);
/* "1024:1024", "unlimited" for RLIM_INFINITY: "1024:unlimited".  Newly allocated. */
char *kist_rlimit_format (uint64_t soft, uint64_t hard);

/* sysctl.c: "net.ipv4.ip_forward" -> "/proc/sys/net/ipv4/ip_forward"
 * (newly allocated).  Refuses empty keys, empty parts, '/', ".." and
 * whitespace or control characters with EINVAL and a message naming the key. */
int kist_sysctl_key_path (const char *key, char **path, struct kist_error **err);
/* The namespace a sysctl key belongs to (KIST_NS_IPC, KIST_NS_NET,
 * KIST_NS_UTS), or -1 when the key is not namespaced (refused). */
int kist_sysctl_key_namespace (const char *key);
/* Compare a written value and a read-back value: whitespace runs (spaces,
 * tabs, newlines) are one separator, leading/trailing whitespace ignored,
 * integer tokens compared by value ("01" == "1"). */
bool kist_sysctl_value_equal (const char *written, const char *readback);

/* idmap.c: the uid_map/gid_map text ("0 1000 1\n", one line per entry). */
char *kist_idmap_format (const struct kist_idmap *m, size_t n);
/* The requested value for the report: "0:1000:1,1:100000:65536". */
char *kist_idmap_requested (const struct kist_idmap *m, size_t n);
/* Parse /proc/PID/uid_map text.  Returns 0, or -EINVAL on malformed text. */
int kist_idmap_parse (const char *text, struct kist_idmap **out, size_t *n);
/* Same entries, in any order (the kernel sorts maps of more than 5 entries)? */
bool kist_idmap_same (const struct kist_idmap *a, size_t na, const struct kist_idmap *b, size_t nb);

#endif
