/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: what the config.json parser files (spec.c, spec_process.c,
 * spec_linux.c) share besides the typed accessors of spec_json.h.  Not for
 * other modules (they use spec.h). */
#ifndef KIST_SPEC_INT_H
#define KIST_SPEC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "spec.h"
#include "spec_json.h"

/* spec.c */

/* doc: message prefix ("config.json: " or "process: "). */
int spec_parse_tree (const char *json, size_t len, const char *doc, yajl_val *out,
                     struct kist_error **err);

/* spec_process.c */

int spec_parse_process (struct jpath *p, yajl_val v, struct kist_process **out,
                        struct kist_error **err);

/* spec_linux.c */

int spec_parse_linux (struct jpath *p, yajl_val v, struct kist_linux *l, struct kist_error **err);

void spec_linux_free (struct kist_linux *l);

/* linux.uidMappings and a mount's uidMappings (and gid): containerID, hostID, size. */
int spec_parse_idmaps (struct jpath *p, yajl_val a, struct kist_idmap **out, size_t *n_out,
                       struct kist_error **err);

#endif
