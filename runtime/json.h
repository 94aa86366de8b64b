/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: small yajl helpers shared by the files that read or write JSON
 * (report, state, log): cleanup attributes, generator set-up, taking the
 * generated text, object lookup and lossy strings. */
#ifndef KIST_JSON_H
#define KIST_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

void kist_json_tree_free (yajl_val v);     /* a tree of kist_json_parse (not yajl_tree_free) */
void kist_json_tree_freep (yajl_val *v);   /* kist_json_tree_free(*v) if set */
void kist_json_gen_freep (yajl_gen *g);    /* yajl_gen_free(*g) if set */
#define _cleanup_yajl_ __attribute__ ((cleanup (kist_json_tree_freep)))
#define _cleanup_yajl_gen_ __attribute__ ((cleanup (kist_json_gen_freep)))

/* A new generator; aborts on OOM.  pretty: beautify with a two-space
 * indent.  validate_utf8: yajl_gen_string refuses strings that are not
 * UTF-8 (yajl_gen_invalid_string). */
yajl_gen kist_json_gen_new (bool pretty, bool validate_utf8);

/* A newly allocated copy of the generated text, without the trailing
 * newline yajl adds in beautify mode and with empty arrays and objects
 * written as "[]" and "{}". */
char *kist_json_gen_take (yajl_gen g);

/* obj[key] (the first one when the key repeats), or NULL when obj is not an
 * object or has no such key.  A JSON null is returned as a value. */
yajl_val kist_json_obj_get (yajl_val obj, const char *key);

/* yajl_gen_integer without its sprintf("%lld"): the digits written here,
 * then handed to yajl_gen_number (the same text, the same separators and
 * states).  A report has two integers per layer. */
yajl_gen_status kist_json_gen_integer (yajl_gen g, long long v);
/* yajl_gen_string, with the same output, status and state: a string of
 * printable ASCII with nothing to escape (nearly every string kist writes)
 * goes out as one token through yajl_gen_number (a map key, where that is
 * refused, and every other string through yajl_gen_string), skipping yajl's
 * byte-by-byte encoder, its UTF-8 check and two of its three appends. */
yajl_gen_status kist_json_gen_string (yajl_gen g, const char *s, size_t len);

/* An object written by hand in the exact form yajl's generator gives it
 * (same separators, indent and string escapes), then handed to the
 * generator as one token (kist_json_raw_end: yajl_gen_number, which writes
 * its text as is where a value may go): a report row is about 15 yajl calls
 * of ~60 ns each.  Strings must be valid UTF-8 already (no check is made,
 * as with a generator that does not validate); keys are written as given.
 * depth is the generator's depth where the object goes (the number of
 * containers open around it). */
struct kist_json_raw
{
  char *p;
  size_t n, cap;
  bool pretty;
  unsigned depth;
  bool first;
};
/* b starts zeroed; one buffer serves object after object until
 * kist_json_raw_free. */
void kist_json_raw_open (struct kist_json_raw *b, bool pretty, unsigned depth);
void kist_json_raw_key (struct kist_json_raw *b, const char *key);
void kist_json_raw_str (struct kist_json_raw *b, const char *s, size_t len);
void kist_json_raw_bool (struct kist_json_raw *b, bool v);
void kist_json_raw_int (struct kist_json_raw *b, long long v);
/* Close the object and write it to g. */
yajl_gen_status kist_json_raw_end (struct kist_json_raw *b, yajl_gen g);
void kist_json_raw_free (struct kist_json_raw *b);
/* How many bytes at the start of s yajl_gen_string writes as they are
 * (printable ASCII but '"' and '\\'), eight at a time. */
size_t kist_json_plain_prefix (const char *s, size_t len);

/* yajl_gen_string that never fails on bad UTF-8: when the generator
 * validates UTF-8 and s is not, bytes >= 0x80 are written as '?'.  NULL is
 * written as "". */
void kist_json_gen_str_lossy (yajl_gen g, const char *s);

/* A generator that remembers a failure (bad UTF-8 with a validating
 * generator, a key/value out of place), so that a whole document can be
 * written without checking every call: look at failed at the end. */
struct kist_jgen
{
  yajl_gen g;
  bool failed;
};
void kist_jgen_check (struct kist_jgen *j, yajl_gen_status st);   /* failed |= st != ok */
void kist_jgen_str (struct kist_jgen *j, const char *s);
void kist_jgen_map_open (struct kist_jgen *j);
void kist_jgen_map_close (struct kist_jgen *j);
void kist_jgen_array_open (struct kist_jgen *j);
void kist_jgen_array_close (struct kist_jgen *j);
/* "key": value.  kstrv: an array of the NULL-terminated v (NULL: empty). */
void kist_jgen_kstr (struct kist_jgen *j, const char *key, const char *v);
void kist_jgen_kint (struct kist_jgen *j, const char *key, long long v);
void kist_jgen_kbool (struct kist_jgen *j, const char *key, bool v);
void kist_jgen_kstrv (struct kist_jgen *j, const char *key, const char *const *v);

/* Documents nested deeper than this are refused before yajl sees them: the
 * recursive yajl_tree_free and a yajl_gen re-emitting the tree (whose stack
 * holds 128 levels) would overflow. */
#define KIST_JSON_MAX_DEPTH 64

/* Parse len bytes of JSON (need not be NUL-terminated) into *out.  Refused
 * before yajl: an empty document, a NUL byte or the \u0000 escape (a NUL
 * cannot reach the kernel), nesting deeper than KIST_JSON_MAX_DEPTH.
 * Errors read "<doc>malformed JSON: <what> [near `snippet`]" on one line. */
int kist_json_parse (const char *json, size_t len, const char *doc, yajl_val *out,
                     struct kist_error **err);

#endif
