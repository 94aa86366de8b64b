/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the one family of typed JSON accessors (spec_json.c).  Every
 * reader of JSON input uses it: config.json (spec*.c), linux.resources
 * given to create or update, seccomp profiles, state.json and report.json,
 * so that every error names the JSON path ("config.json: linux.resources.
 * memory.limit: expected an integer") the same way.  A struct jpath keeps
 * the path of the value being read; doc is the document's prefix in
 * messages ("config.json: ", "resources: ", "" ...). */
#ifndef KIST_SPEC_JSON_H
#define KIST_SPEC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "json.h"

struct jpath
{
  const char *doc;     /* "config.json: " or "" */
  char *buf;
  size_t len, cap;
};

int spec_jp_err (struct jpath *p, struct kist_error **err, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

#define S_REQUIRED 0x01
#define S_NONEMPTY 0x02
#define S_ABSOLUTE 0x04
#define S_EMPTY_NULL 0x08   /* "" -> NULL */
#define S_ENV 0x10          /* must be KEY=VALUE */

struct name_num
{
  const char *name;
  long value;
};

/* Append ".key" (or ["key"] when key is not a plain identifier); returns the
 * previous length for spec_jp_pop. */
size_t spec_jp_key (struct jpath *p, const char *key);

size_t spec_jp_index (struct jpath *p, size_t i);

void spec_jp_pop (struct jpath *p, size_t old);

/* find, and check the type: *out is NULL unless it returns 1. */
int spec_enter (struct jpath *p, yajl_val obj, const char *key, yajl_type t, bool required,
                yajl_val *out, size_t *mark, struct kist_error **err);

/* obj[key] of type t in *out, or NULL when absent; nothing stays pushed. */
int spec_get_opt (struct jpath *p, yajl_val obj, const char *key, yajl_type t, yajl_val *out,
                  struct kist_error **err);

/* Sets *present when obj has an object at key: for the parts kist only has
 * to notice, so that unsupported.c can refuse them. */
int spec_get_present (struct jpath *p, yajl_val obj, const char *key, bool *present,
                      struct kist_error **err);

int spec_get_str (struct jpath *p, yajl_val obj, const char *key, int flags, char **out,
                  struct kist_error **err);

int spec_get_bool (struct jpath *p, yajl_val obj, const char *key, bool *out,
                   struct kist_error **err);

/* As spec_get_bool, but a missing obj[key] is an error. */
int spec_get_bool_req (struct jpath *p, yajl_val obj, const char *key, bool *out,
                       struct kist_error **err);

int spec_val_u32 (struct jpath *p, yajl_val v, uint32_t *out, struct kist_error **err);

/* Numbers at obj[key].  present may be NULL; *present is set only when found. */
int spec_get_u32 (struct jpath *p, yajl_val obj, const char *key, bool required, uint32_t *out,
                  bool *present, struct kist_error **err);

int spec_get_u64 (struct jpath *p, yajl_val obj, const char *key, bool required, uint64_t *out,
                  struct kist_error **err);

int spec_get_i64 (struct jpath *p, yajl_val obj, const char *key, bool required, int64_t *out,
                  struct kist_error **err);

/* An optional integer at obj[key] ("expected an integer"); a non-negative
 * one above INT64_MAX (a uint64 value) is kept as INT64_MAX, as
 * LinuxResources' int64 fields take them.  present may be NULL; *present is
 * set only when found. */
int spec_get_i64_sat (struct jpath *p, yajl_val obj, const char *key, int64_t *out,
                      bool *present, struct kist_error **err);

/* An int in [min, max] at obj[key] (optional). */
int spec_get_int_range (struct jpath *p, yajl_val obj, const char *key, int64_t min, int64_t max,
                        int *out, bool *present, struct kist_error **err);

/* An array of strings -> NULL-terminated vector (each element checked with flags). */
int spec_val_strv (struct jpath *p, yajl_val a, int flags, char ***out, struct kist_error **err);

int spec_get_strv (struct jpath *p, yajl_val obj, const char *key, int flags, char ***out,
                   struct kist_error **err);

/* An object of string values -> flat vector key0, value0, key1, ... (n pairs). */
int spec_get_map (struct jpath *p, yajl_val obj, const char *key, char ***flat, size_t *n,
                  struct kist_error **err);

const char *spec_name_of (const struct name_num *t, size_t n, long value);

int spec_get_enum (struct jpath *p, yajl_val obj, const char *key, const struct name_num *t,
                   size_t n, long *out, struct kist_error **err);

/* An optional array of names from t -> the OR of their values. */
int spec_get_enum_flags (struct jpath *p, yajl_val obj, const char *key, const struct name_num *t,
                         size_t n, uint64_t *out, struct kist_error **err);

/* An optional list of CPUs or nodes ("0-3,7") at obj[key]; "" -> NULL. */
int spec_get_idlist (struct jpath *p, yajl_val obj, const char *key, const char *what, char **out,
                     struct kist_error **err);

/* obj[key] of type t, optional: when present, the expression call, which
 * sees the value as `at`, parses it with the key pushed on the path (popped
 * when call returns 0).  0 when absent or parsed, else call's error. */
#define SPEC_PARSE_AT(p, obj, key, t, at, call, err)                                               \
  ({                                                                                               \
    yajl_val at;                                                                                   \
    size_t m_;                                                                                     \
    int r_ = spec_enter (p, obj, key, t, false, &at, &m_, err);                                    \
    if (r_ > 0 && (r_ = (call)) == 0)                                                              \
      spec_jp_pop (p, m_);                                                                         \
    r_ < 0 ? r_ : 0;                                                                               \
  })

/* ---- additions (seccomp helper): strings borrowed from the tree, for
 * readers that look names up in their own tables (seccomp_profile.c). */

/* obj[key], a string, borrowed in *out and pushed onto the path like
 * spec_enter: 1 present (the caller pops *mark), 0 absent (nothing pushed,
 * *out NULL), negative when required and missing or not a string. */
int spec_enter_str (struct jpath *p, yajl_val obj, const char *key, bool required,
                    const char **out, size_t *mark, struct kist_error **err);

/* The value v (an array element, the path already names it) is a string:
 * borrowed in *out. */
int spec_val_cstr (struct jpath *p, yajl_val v, const char **out, struct kist_error **err);

/* The value v is an object (an array element: "expected object" otherwise). */
int spec_val_obj (struct jpath *p, yajl_val v, struct kist_error **err);

/* obj[key], an optional object, parsed by fn into out; *present set when found. */
#define PARSE_OBJECT(p, obj, key, present, fn, out, err)                                           \
  SPEC_PARSE_AT (p, obj, key, yajl_t_object, o_, (*(present) = true, fn (p, o_, out, err)), err)

/* An optional integer in [min, max] at obj[key] (state.json's pids and times). */
int spec_get_i64_range (struct jpath *p, yajl_val obj, const char *key, int64_t min, int64_t max,
                        int64_t *out, struct kist_error **err);

/* kist_json_parse of a document that must be a JSON object: *out is the
 * tree, else NULL and "DOC expected a JSON object at the top level". */
int spec_parse_object (const char *json, size_t len, const char *doc, yajl_val *out,
                       struct kist_error **err);

/* Lenient reads, for documents kist wrote itself and reads back as far as
 * they go (report.json): obj[key] with the conventions above (the last
 * duplicate, null is absent), NULL when obj is not an object or the key is
 * absent; spec_peek_str also when it is not a string.  No error. */
yajl_val spec_peek (yajl_val obj, const char *key);
const char *spec_peek_str (yajl_val obj, const char *key);

/* Element i of the array a, which must be an object: [i] pushed on the path
 * (the caller pops *mark when done); NULL with *err ("expected object")
 * otherwise. */
yajl_val spec_elem_object (struct jpath *p, yajl_val a, size_t i, size_t *mark,
                           struct kist_error **err);

#endif
