/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: config.json (OCI runtime-spec 1.2) -> typed structs, with validation.
 *
 * Conventions (beyond spec.h):
 *   - Every error names the JSON path of the offending value
 *     ("config.json: process.rlimits[0].hard: expected unsigned 64-bit integer").
 *   - Unknown keys are ignored (forward compatibility, as the spec asks).
 *   - A JSON null is treated like an absent key (what Go's encoding/json, and
 *     so runc, does); for a required key it is "missing".
 *   - When a key appears twice in one object, the last one wins (Go again).
 *   - Empty strings mean "not requested" for hostname, domainname,
 *     apparmorProfile, selinuxLabel, mountLabel, cgroupsPath,
 *     rootfsPropagation and linux.namespaces[].path (runc treats them so);
 *     those fields are then NULL.
 *   - Integers are taken from the number's text, so the whole uint64 range is
 *     accepted; fractions and exponents are refused (as Go does).
 *   - Documents nested deeper than KIST_JSON_MAX_DEPTH, containing NUL bytes
 *     or the escape \u0000 (which would silently cut a string short) are
 *     refused before they reach yajl_tree.
 *
 * This file holds the top level, mounts and hooks, and the public API;
 * spec_process.c parses `process`, spec_linux.c `linux`, and spec_json.c has
 * the JSON paths and typed accessors they share (spec_int.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spec.h"
#include "spec_int.h"
#include "util.h"

/* No real config nests deeper than ~8 (linux.seccomp.syscalls[].args[]);
 * KIST_JSON_MAX_DEPTH (json.h) protects the recursive yajl_tree_free. */

/* ---- mounts -------------------------------------------------------------- */

static int
parse_mounts (struct jpath *p, yajl_val a, struct kist_spec *s, struct kist_error **err)
{
  size_t n = a->u.array.len;
  int r;
  s->mounts = xcalloc (n, sizeof (struct kist_mount));
  s->n_mounts = n;
  for (size_t i = 0; i < n; i++)
    {
      struct kist_mount *mt = &s->mounts[i];
      size_t m;
      yajl_val o = spec_elem_object (p, a, i, &m, err);
      if (o == NULL)
        return -1;
      if ((r = spec_get_str (p, o, "destination", S_REQUIRED | S_ABSOLUTE, &mt->destination, err))
              < 0
          || (r = spec_get_str (p, o, "type", 0, &mt->type, err)) < 0
          || (r = spec_get_str (p, o, "source", 0, &mt->source, err)) < 0
          || (r = spec_get_strv (p, o, "options", 0, &mt->options, err)) < 0)
        return r;
      if ((r = SPEC_PARSE_AT (p, o, "uidMappings", yajl_t_array, a,
                              spec_parse_idmaps (p, a, &mt->uid_mappings, &mt->n_uid_mappings,
                                                 err),
                              err))
              < 0
          || (r = SPEC_PARSE_AT (p, o, "gidMappings", yajl_t_array, a,
                                 spec_parse_idmaps (p, a, &mt->gid_mappings,
                                                    &mt->n_gid_mappings, err),
                                 err))
                 < 0)
        return r;
      spec_jp_pop (p, m);
    }
  return 0;
}

/* ---- hooks --------------------------------------------------------------- */

static int
parse_hook_list (struct jpath *p, yajl_val a, struct kist_hook **out, size_t *n_out,
                 struct kist_error **err)
{
  size_t n = a->u.array.len;
  int r;
  *out = xcalloc (n, sizeof (struct kist_hook));
  *n_out = n;
  for (size_t i = 0; i < n; i++)
    {
      struct kist_hook *h = &(*out)[i];
      size_t m;
      yajl_val o = spec_elem_object (p, a, i, &m, err);
      if (o == NULL)
        return -1;
      if ((r = spec_get_str (p, o, "path", S_REQUIRED | S_ABSOLUTE, &h->path, err)) < 0
          || (r = spec_get_strv (p, o, "args", 0, &h->args, err)) < 0
          || (r = spec_get_strv (p, o, "env", S_ENV, &h->env, err)) < 0
          || (r = spec_get_int_range (p, o, "timeout", 1, INT32_MAX, &h->timeout, &h->has_timeout,
                                      err))
                 < 0)
        return r;
      spec_jp_pop (p, m);
    }
  return 0;
}

static int
parse_hooks (struct jpath *p, yajl_val v, struct kist_hooks *h, struct kist_error **err)
{
  struct
  {
    const char *name;
    struct kist_hook **list;
    size_t *n;
  } kinds[] = {
    { "prestart", &h->prestart, &h->n_prestart },
    { "createRuntime", &h->create_runtime, &h->n_create_runtime },
    { "createContainer", &h->create_container, &h->n_create_container },
    { "startContainer", &h->start_container, &h->n_start_container },
    { "poststart", &h->poststart, &h->n_poststart },
    { "poststop", &h->poststop, &h->n_poststop },
  };
  for (size_t i = 0; i < KIST_ARRAY_SIZE (kinds); i++)
    {
      int r = SPEC_PARSE_AT (p, v, kinds[i].name, yajl_t_array, a,
                             parse_hook_list (p, a, kinds[i].list, kinds[i].n, err), err);
      if (r < 0)
        return r;
    }
  return 0;
}

/* ---- top level ----------------------------------------------------------- */

/* ociVersion must be 1.x ("1", "1.2.0", "1.0.2-dev"). */
static bool
oci_version_supported (const char *v)
{
  if (v[0] != '1')
    return false;
  return v[1] == '\0' || v[1] == '.' || v[1] == '-' || v[1] == '+';
}

static int
parse_spec (struct jpath *p, yajl_val tree, struct kist_spec *s, struct kist_error **err)
{
  yajl_val o;
  size_t m;
  int r;

  if ((r = spec_get_str (p, tree, "ociVersion", S_REQUIRED | S_NONEMPTY, &s->oci_version, err)) < 0)
    return r;
  if (!oci_version_supported (s->oci_version))
    {
      spec_jp_key (p, "ociVersion");
      return spec_jp_err (p, err,
                               "version \"%s\" is not supported (kist implements runtime-spec 1.x)",
                          s->oci_version);
    }

  r = spec_enter (p, tree, "root", yajl_t_object, true, &o, &m, err);
  if (r < 0)
    return r;
  if ((r = spec_get_str (p, o, "path", S_REQUIRED | S_NONEMPTY, &s->root_path, err)) < 0
      || (r = spec_get_bool (p, o, "readonly", &s->root_readonly, err)) < 0)
    return r;
  spec_jp_pop (p, m);

  if ((r = spec_get_str (p, tree, "hostname", S_EMPTY_NULL, &s->hostname, err)) < 0
      || (r = spec_get_str (p, tree, "domainname", S_EMPTY_NULL, &s->domainname, err)) < 0)
    return r;

  if ((r = SPEC_PARSE_AT (p, tree, "mounts", yajl_t_array, a, parse_mounts (p, a, s, err), err)) < 0
      || (r = SPEC_PARSE_AT (p, tree, "process", yajl_t_object, sub,
                             spec_parse_process (p, sub, &s->process, err), err))
             < 0
      || (r = SPEC_PARSE_AT (p, tree, "linux", yajl_t_object, sub,
                             spec_parse_linux (p, sub,
                                               s->linux_ = xcalloc (1, sizeof *s->linux_), err),
                             err))
             < 0
      || (r = SPEC_PARSE_AT (p, tree, "hooks", yajl_t_object, sub,
                             parse_hooks (p, sub, s->hooks = xcalloc (1, sizeof *s->hooks), err),
                             err))
             < 0)
    return r;

  _cleanup_free_ char **kv = NULL;
  size_t n;
  if ((r = spec_get_map (p, tree, "annotations", &kv, &n, err)) < 0)
    return r;
  if (kv)
    {
      s->annotations = xcalloc (n, sizeof (struct kist_annotation));
      s->n_annotations = n;
      for (size_t i = 0; i < n; i++)
        s->annotations[i] = (struct kist_annotation){ .key = kv[2 * i], .value = kv[2 * i + 1] };
      /* config.md: "Keys MUST NOT be an empty string". */
      for (size_t i = 0; i < n; i++)
        if (s->annotations[i].key[0] == '\0')
          {
            spec_jp_key (p, "annotations");
            return spec_jp_err (p, err, "keys must not be empty (name the annotation, e.g. "
                                "\"org.example.key\")");
          }
    }
  return 0;
}

/* ---- raw document checks and yajl ---------------------------------------- */

int
spec_parse_tree (const char *json, size_t len, const char *doc, yajl_val *out,
                      struct kist_error **err)
{
  return kist_json_parse (json, len, doc, out, err);
}

/* ---- public API ---------------------------------------------------------- */

int
kist_spec_parse (const char *json, size_t len, struct kist_spec **out, struct kist_error **err)
{
  _cleanup_spec_ struct kist_spec *s = xcalloc (1, sizeof *s);
  int r = spec_parse_object (json, len, "config.json: ", &s->tree, err);
  if (r < 0)
    return r;
  struct jpath p = { .doc = "config.json: " };
  r = parse_spec (&p, s->tree, s, err);
  free (p.buf);
  if (r < 0)
    return r;
  *out = steal_pointer (&s);
  return 0;
}

/* The hooks object alone (the state dir's hooks.json, written at create for
 * start and delete): the same checks as config.json's hooks, the same paths
 * in messages ("DOC: hooks.poststop[0].path: ..."). */
int
kist_hooks_parse (const char *json, size_t len, const char *doc, struct kist_hooks **out,
                  struct kist_error **err)
{
  _cleanup_yajl_ yajl_val tree = NULL;
  _cleanup_free_ char *prefix = xasprintf ("%s: ", doc);
  int r = spec_parse_tree (json, len, prefix, &tree, err);
  if (r < 0)
    return r;
  if (!YAJL_IS_OBJECT (tree))
    return kist_error_make (err, 0, "%s: expected a JSON object (the hooks of config.json)", doc);
  struct kist_hooks *h = xcalloc (1, sizeof *h);
  struct jpath p = { .doc = prefix };
  size_t m = spec_jp_key (&p, "hooks");
  r = parse_hooks (&p, tree, h, err);
  spec_jp_pop (&p, m);
  free (p.buf);
  if (r < 0)
    {
      kist_hooks_free (h);
      return r;
    }
  *out = h;
  return 0;
}

int
kist_spec_load (int bundle_dirfd, struct kist_spec **out, struct kist_error **err)
{
  /* O_NONBLOCK: a FIFO named config.json must not hang us before fstat. */
  _cleanup_close_ int fd
      = openat (bundle_dirfd, "config.json", O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    {
      int e = errno;
      if (e == ENOENT)
        {
          kist_error_make (err, 0, "config.json not found in the bundle directory (create one "
                                   "with `kist spec`)");
          if (err && *err)
            (*err)->errnum = ENOENT;
          return -ENOENT;
        }
      return kist_error_make (err, e, "open config.json in the bundle directory");
    }
  struct stat st;
  if (fstat (fd, &st) < 0)
    return kist_error_make (err, errno, "stat config.json in the bundle directory");
  if (!S_ISREG (st.st_mode))
    return kist_error_make (err, 0,
                            "config.json in the bundle directory is not a regular file (%s)",
                            S_ISDIR (st.st_mode)    ? "it is a directory"
                            : S_ISFIFO (st.st_mode) ? "it is a FIFO"
                            : S_ISLNK (st.st_mode)  ? "it is a symlink"
                                                    : "it is a special file");
  if ((uint64_t) st.st_size > KIST_SPEC_MAX_SIZE)
    {
      kist_error_make (err, 0, "config.json is %jd bytes, larger than the %u MiB kist accepts",
                       (intmax_t) st.st_size, KIST_SPEC_MAX_SIZE / (1024 * 1024));
      if (err && *err)
        (*err)->errnum = EFBIG;
      return -EFBIG;
    }
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  int r = kist_read_fd (fd, KIST_SPEC_MAX_SIZE, &buf, &len, err);
  if (r < 0)
    return kist_error_wrap (err, "read config.json in the bundle directory");
  return kist_spec_parse (buf, len, out, err);
}

static void
hooks_free (struct kist_hook *h, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (h[i].path);
      kist_strv_free (h[i].args);
      kist_strv_free (h[i].env);
    }
  free (h);
}

void
kist_hooks_free (struct kist_hooks *h)
{
  if (h == NULL)
    return;
  hooks_free (h->prestart, h->n_prestart);
  hooks_free (h->create_runtime, h->n_create_runtime);
  hooks_free (h->create_container, h->n_create_container);
  hooks_free (h->start_container, h->n_start_container);
  hooks_free (h->poststart, h->n_poststart);
  hooks_free (h->poststop, h->n_poststop);
  free (h);
}

void
kist_spec_free (struct kist_spec *s)
{
  if (s == NULL)
    return;
  free (s->oci_version);
  free (s->root_path);
  free (s->hostname);
  free (s->domainname);
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      free (s->mounts[i].destination);
      free (s->mounts[i].type);
      free (s->mounts[i].source);
      kist_strv_free (s->mounts[i].options);
      free (s->mounts[i].uid_mappings);
      free (s->mounts[i].gid_mappings);
    }
  free (s->mounts);
  kist_process_free (s->process);
  spec_linux_free (s->linux_);
  kist_hooks_free (s->hooks);
  for (size_t i = 0; i < s->n_annotations; i++)
    {
      free (s->annotations[i].key);
      free (s->annotations[i].value);
    }
  free (s->annotations);
  if (s->tree)
    kist_json_tree_free (s->tree);
  free (s);
}

const char *
kist_spec_annotation (const struct kist_spec *s, const char *key)
{
  if (s == NULL || key == NULL)
    return NULL;
  /* The last one wins, like the JSON object it came from. */
  for (size_t i = s->n_annotations; i > 0; i--)
    if (strcmp (s->annotations[i - 1].key, key) == 0)
      return s->annotations[i - 1].value;
  return NULL;
}
