/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the state record: state.json (written atomically, read back with
 * type checks) and the OCI state JSON of `kist state`.  The state root is in
 * state_root.c, the per-container directories in state_dir.c, liveness and
 * listing in state_status.c.  See design.md section 6. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "spec_json.h"
#include "state.h"
#include "state_int.h"
#include "util.h"

#define KIST_STATE_FILE_VERSION 1
/* state.json carries the config's annotations; the config itself is bounded
 * to 4 MiB (spec.h), so this is ample. */
#define KIST_STATE_MAX_SIZE (8u * 1024 * 1024)
#define KIST_DEFAULT_OCI_VERSION "1.2.0"

/* ---- state.json ----------------------------------------------------------- */

/* yajl_gen_string with UTF-8 validation on: a field that is not UTF-8
 * cannot be stored (yajl_tree would refuse to read it back). */
static int
gen_field_str (yajl_gen g, const char *key, const char *val, struct kist_error **err)
{
  if (val == NULL)
    return 0;
  yajl_gen_string (g, (const unsigned char *) key, strlen (key));
  if (kist_json_gen_string (g, val, strlen (val)) != yajl_gen_status_ok)
    return kist_error_make (err, EILSEQ,
                            "state.json: field `%s` is not valid UTF-8; kist stores paths and "
                            "names as UTF-8 (rename the bundle or id)",
                            key);
  return 0;
}

static void
gen_field_int (yajl_gen g, const char *key, long long v)
{
  yajl_gen_string (g, (const unsigned char *) key, strlen (key));
  kist_json_gen_integer (g, v);
}

/* Re-emit a parsed JSON value into g. */
static void
state_gen_tree (yajl_gen g, yajl_val v)
{
  if (v == NULL || YAJL_IS_NULL (v))
    yajl_gen_null (g);
  else if (YAJL_IS_TRUE (v))
    yajl_gen_bool (g, 1);
  else if (YAJL_IS_FALSE (v))
    yajl_gen_bool (g, 0);
  else if (YAJL_IS_STRING (v))
    yajl_gen_string (g, (const unsigned char *) v->u.string, strlen (v->u.string));
  else if (YAJL_IS_NUMBER (v))
    yajl_gen_number (g, v->u.number.r, strlen (v->u.number.r));
  else if (YAJL_IS_ARRAY (v))
    {
      yajl_gen_array_open (g);
      for (size_t i = 0; i < v->u.array.len; i++)
        state_gen_tree (g, v->u.array.values[i]);
      yajl_gen_array_close (g);
    }
  else if (YAJL_IS_OBJECT (v))
    {
      yajl_gen_map_open (g);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          yajl_gen_string (g, (const unsigned char *) v->u.object.keys[i],
                           strlen (v->u.object.keys[i]));
          state_gen_tree (g, v->u.object.values[i]);
        }
      yajl_gen_map_close (g);
    }
}

/* annotations_json (a JSON object as text) -> embedded object. */
static int
gen_annotations (yajl_gen g, const char *text, struct kist_error **err)
{
  _cleanup_yajl_ yajl_val v = NULL;
  if (text == NULL || text[0] == '\0')
    return 0;
  if (kist_json_parse (text, strlen (text), "state.json: annotations: ", &v, err) < 0)
    return -1;
  if (!YAJL_IS_OBJECT (v))
    return kist_error_make (err, EINVAL, "state.json: annotations are not a JSON object");
  yajl_gen_string (g, (const unsigned char *) "annotations", strlen ("annotations"));
  state_gen_tree (g, v);
  return 0;
}

/* "netDevices": [{"host": ..., "name": ..., "ifindex": N, "kind": ...}]. */
static int
gen_net_devices (yajl_gen g, const struct kist_state *s, struct kist_error **err)
{
  yajl_gen_string (g, (const unsigned char *) "netDevices", strlen ("netDevices"));
  yajl_gen_array_open (g);
  for (size_t i = 0; i < s->n_net_devices; i++)
    {
      const struct kist_state_netdev *d = &s->net_devices[i];
      yajl_gen_map_open (g);
      if (gen_field_str (g, "host", d->host, err) < 0 || gen_field_str (g, "name", d->name, err) < 0
          || gen_field_str (g, "kind", d->kind, err) < 0)
        return -1;
      gen_field_int (g, "ifindex", d->ifindex);
      yajl_gen_map_close (g);
    }
  yajl_gen_array_close (g);
  return 0;
}

/* The record this process last wrote, and the state dir it went to: a
 * write of the same text to the same dir is skipped when state.json still
 * holds it (read back: another kist may have replaced it since).  The
 * create rewrites the intent record after each step, and some steps change
 * nothing in it (the scope record when the scope is where the intent said). */
static struct
{
  dev_t dev;
  ino_t ino;
  char *json;
} last_write;

static bool
unchanged (int dirfd, const struct stat *dst, const char *json, size_t n)
{
  if (last_write.json == NULL || dst->st_dev != last_write.dev || dst->st_ino != last_write.ino
      || strcmp (last_write.json, json) != 0)
    return false;
  _cleanup_free_ char *cur = NULL;
  size_t len = 0;
  _cleanup_error_ struct kist_error *e = NULL;
  if (kist_read_file_at (dirfd, KIST_STATE_FILE, n + 1, &cur, &len, &e) < 0)
    return false;
  return len == n && memcmp (cur, json, n) == 0;
}

static void
remember (const struct stat *dst, char **json)
{
  free (last_write.json);
  last_write.dev = dst->st_dev;
  last_write.ino = dst->st_ino;
  last_write.json = *json;
  *json = NULL;
}

/* state.json is replaced as kist_write_file_atomic replaces a file (the new
 * text written to a scratch file first, then exchanged with state.json:
 * a reader opens the old record or the new one, never a half-written one,
 * and a writer killed half-way leaves state.json whole), except that the old
 * record is kept under the scratch name and rewritten by the next
 * replacement instead of being unlinked: a create and start replace the
 * record 3 times, and a new inode costs 0.3-0.5 ms on an ext4 without a
 * journal under churn (its allocator skips every inode freed in the last
 * minute, reading each one's dtime: this machine's /run and /tmp), a rewrite
 * ~0.02 ms.  Every writer holds the state dir's flock (state_dir.c), so the
 * scratch name is fixed.  A reader that opened the old record right before
 * an exchange and is still reading it when the next replacement cuts and
 * rewrites it gets a prefix of the new text, which does not parse
 * (kist_state_read reads again): the rewrite is kept to records of one page,
 * so that no old and new pages can mix; a larger record takes a new inode
 * (kist_write_file_atomic). */
#define STATE_SCRATCH ".state.json.next"
#define STATE_REWRITE_MAX 4096

static int
state_replace (int dirfd, const char *json, size_t n, struct kist_error **err)
{
  if (n > STATE_REWRITE_MAX || json[0] != '{')
    return kist_write_file_atomic (dirfd, KIST_STATE_FILE, json, n, 0600, err);
  {
    _cleanup_close_ int fd
        = openat (dirfd, STATE_SCRATCH, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
      return kist_error_make (err, errno, "create `%s`", STATE_SCRATCH);
    /* Cut to its first byte, not to 0 (O_TRUNC): a truncate to 0 frees the
     * file's blocks and makes ext4 (auto_da_alloc) start the writeback of
     * the new data at close, ~0.18 ms against ~0.01 ms here.  The first byte
     * of a record is always `{`, so a reader of the old record still sees a
     * prefix of the new one, never old bytes after new ones. */
    int r = ftruncate (fd, 1) < 0 ? -errno : 0;
    if (r == 0)
      r = kist_write_all (fd, json, n); /* from offset 0: the fd was just opened */
    if (r == 0 && fchmod (fd, 0600) < 0)
      r = -errno;
    if (r < 0)
      {
        unlinkat (dirfd, STATE_SCRATCH, 0);
        return kist_error_make (err, -r, "write `%s`", STATE_SCRATCH);
      }
  }
  if (renameat2 (dirfd, STATE_SCRATCH, dirfd, KIST_STATE_FILE, RENAME_EXCHANGE) == 0)
    return 0;
  /* No state.json (ENOENT), or no exchange here (EINVAL, ENOSYS): a rename,
   * and the next replacement makes a new scratch file. */
  if ((errno == EINVAL || errno == ENOENT || errno == ENOSYS)
      && renameat (dirfd, STATE_SCRATCH, dirfd, KIST_STATE_FILE) == 0)
    return 0;
  int e = errno;
  unlinkat (dirfd, STATE_SCRATCH, 0);
  return kist_error_make (err, e, "replace `%s` with `%s`", KIST_STATE_FILE, STATE_SCRATCH);
}

static int
state_write (int dirfd, const struct kist_state *s, bool fresh, struct kist_error **err)
{
  _cleanup_yajl_gen_ yajl_gen g = kist_json_gen_new (true, true);

  yajl_gen_map_open (g);
  gen_field_int (g, "kistStateVersion", KIST_STATE_FILE_VERSION);
  if (gen_field_str (g, "id", s->id, err) < 0
      || gen_field_str (g, "ociVersion", s->oci_version, err) < 0
      || gen_field_str (g, "bundle", s->bundle, err) < 0
      || gen_field_str (g, "rootfs", s->rootfs, err) < 0)
    goto fail;
  gen_field_int (g, "pid", s->pid);
  gen_field_int (g, "pidStartTime", (long long) s->pid_start_time);
  yajl_gen_string (g, (const unsigned char *) "started", strlen ("started"));
  yajl_gen_bool (g, s->started);
  if (gen_field_str (g, "created", s->created, err) < 0
      || gen_field_str (g, "owner", s->owner, err) < 0
      || gen_field_str (g, "cgroupPath", s->cgroup_path, err) < 0
      || gen_field_str (g, "cgroupCreated", s->cgroup_created, err) < 0
      || gen_annotations (g, s->annotations_json, err) < 0)
    goto fail;
  gen_field_int (g, "deadline", s->deadline);
  gen_field_int (g, "kistPid", s->kist_pid);
  gen_field_int (g, "kistPidStartTime", (long long) s->kist_pid_start_time);
  if (s->creating)
    {
      yajl_gen_string (g, (const unsigned char *) "creating", strlen ("creating"));
      yajl_gen_bool (g, 1);
    }
  if (s->creator_pid > 0)
    {
      gen_field_int (g, "creatorPid", s->creator_pid);
      gen_field_int (g, "creatorPidStartTime", (long long) s->creator_start_time);
    }
  if (s->n_net_devices > 0 && gen_net_devices (g, s, err) < 0)
    goto fail;
  yajl_gen_map_close (g);

  {
    _cleanup_free_ char *json = kist_json_gen_take (g);
    size_t n = strlen (json);
    json = xrealloc (json, n + 2);
    json[n] = '\n';
    json[n + 1] = '\0';
    struct stat dst;
    bool have_dst = fstat (dirfd, &dst) == 0;
    if (have_dst && !fresh && unchanged (dirfd, &dst, json, n + 1))
      return 0;
    if ((fresh ? kist_write_file_new (dirfd, KIST_STATE_FILE, json, n + 1, 0600, err)
               : state_replace (dirfd, json, n + 1, err))
        < 0)
      {
        if (have_dst && last_write.json && dst.st_dev == last_write.dev
            && dst.st_ino == last_write.ino)
          {
            free (last_write.json);
            last_write.json = NULL;
          }
        goto fail;
      }
    if (have_dst)
      remember (&dst, &json);
  }
  return 0;

fail:
  {
    _cleanup_free_ char *dir = state_fd_path (dirfd);
    bool full = err && *err && ((*err)->errnum == ENOSPC || (*err)->errnum == EDQUOT);
    return kist_error_wrap (err, "write the state of container `%s` in `%s`%s", s->id ? s->id : "?",
                            dir,
                            full ? " (the file system of the state root is full: free space "
                                   "there or use another --root)"
                                 : "");
  }
}

int
kist_state_write (int dirfd, const struct kist_state *s, struct kist_error **err)
{
  return state_write (dirfd, s, false, err);
}

int
state_write_new (int dirfd, const struct kist_state *s, struct kist_error **err)
{
  return state_write (dirfd, s, true, err);
}

void
kist_state_clear (struct kist_state *s)
{
  if (s == NULL)
    return;
  free (s->id);
  free (s->bundle);
  free (s->rootfs);
  free (s->created);
  free (s->owner);
  free (s->cgroup_path);
  free (s->cgroup_created);
  free (s->annotations_json);
  free (s->oci_version);
  for (size_t i = 0; i < s->n_net_devices; i++)
    {
      free (s->net_devices[i].host);
      free (s->net_devices[i].name);
      free (s->net_devices[i].kind);
    }
  free (s->net_devices);
  memset (s, 0, sizeof *s);
}

/* state.json's fields, read with spec_json.h's accessors (the errors name
 * the field: "pid: must be greater than -1 ..."); a malformed file is
 * EINVAL. */
static int
state_fields (struct jpath *p, yajl_val root, struct kist_state *s, struct kist_error **err)
{
  struct
  {
    const char *key;
    char **out;
  } strs[] = {
    { "ociVersion", &s->oci_version }, { "bundle", &s->bundle },
    { "rootfs", &s->rootfs },          { "created", &s->created },
    { "owner", &s->owner },            { "cgroupPath", &s->cgroup_path },
    { "cgroupCreated", &s->cgroup_created },
  };
  int64_t pid = 0, pid_time = 0, deadline = 0, kist_pid = 0, kist_time = 0, creator = 0,
          creator_time = 0;
  yajl_val ann = NULL;
  if (!YAJL_IS_OBJECT (root))
    return spec_jp_err (p, err, "expected a JSON object");
  int r = spec_get_str (p, root, "id", S_REQUIRED, &s->id, err);
  for (size_t i = 0; r == 0 && i < KIST_ARRAY_SIZE (strs); i++)
    r = spec_get_str (p, root, strs[i].key, 0, strs[i].out, err);
  if (r < 0 || (r = spec_get_i64_range (p, root, "pid", 0, INT_MAX, &pid, err)) < 0
      || (r = spec_get_i64_range (p, root, "pidStartTime", 0, INT64_MAX, &pid_time, err)) < 0
      || (r = spec_get_i64 (p, root, "deadline", false, &deadline, err)) < 0
      || (r = spec_get_i64_range (p, root, "kistPid", 0, INT_MAX, &kist_pid, err)) < 0
      || (r = spec_get_i64_range (p, root, "kistPidStartTime", 0, INT64_MAX, &kist_time, err))
             < 0
      || (r = spec_get_bool (p, root, "started", &s->started, err)) < 0
      || (r = spec_get_bool (p, root, "creating", &s->creating, err)) < 0
      || (r = spec_get_i64_range (p, root, "creatorPid", 0, INT_MAX, &creator, err)) < 0
      || (r = spec_get_i64_range (p, root, "creatorPidStartTime", 0, INT64_MAX, &creator_time,
                                  err))
             < 0
      || (r = spec_get_opt (p, root, "annotations", yajl_t_object, &ann, err)) < 0)
    return r;
  s->pid = (pid_t) pid;
  s->pid_start_time = (uint64_t) pid_time;
  s->deadline = deadline;
  s->kist_pid = (pid_t) kist_pid;
  s->kist_pid_start_time = (uint64_t) kist_time;
  s->creator_pid = (pid_t) creator;
  s->creator_start_time = (uint64_t) creator_time;
  if (ann != NULL)
    {
      _cleanup_yajl_gen_ yajl_gen g = kist_json_gen_new (false, false);
      state_gen_tree (g, ann);
      s->annotations_json = kist_json_gen_take (g);
    }
  return 0;
}

/* "netDevices" (optional: an older kist wrote none). */
static int
state_net_devices (struct jpath *p, yajl_val root, struct kist_state *s, struct kist_error **err)
{
  yajl_val a;
  size_t m;
  int r = spec_enter (p, root, "netDevices", yajl_t_array, false, &a, &m, err);
  if (r <= 0)
    return r;
  s->net_devices = xcalloc (a->u.array.len + 1, sizeof *s->net_devices);
  for (size_t i = 0; i < a->u.array.len; i++)
    {
      yajl_val o = a->u.array.values[i];
      size_t mi = spec_jp_index (p, i);
      struct kist_state_netdev *d = &s->net_devices[s->n_net_devices++];
      int64_t ifindex = 0;
      if ((r = spec_val_obj (p, o, err)) < 0
          || (r = spec_get_str (p, o, "host", S_REQUIRED | S_NONEMPTY, &d->host, err)) < 0
          || (r = spec_get_str (p, o, "name", S_REQUIRED | S_NONEMPTY, &d->name, err)) < 0
          || (r = spec_get_str (p, o, "kind", 0, &d->kind, err)) < 0
          || (r = spec_get_i64_range (p, o, "ifindex", 0, INT_MAX, &ifindex, err)) < 0)
        return r;
      d->ifindex = (int) ifindex;
      spec_jp_pop (p, mi);
    }
  spec_jp_pop (p, m);
  return 0;
}

static int
state_from_tree (yajl_val root, struct kist_state *s, struct kist_error **err)
{
  struct jpath p = { .doc = "" };
  int r = state_fields (&p, root, s, err);
  if (r == 0)
    r = state_net_devices (&p, root, s, err);
  free (p.buf);
  if (r < 0 && err && *err && (*err)->errnum == 0)
    (*err)->errnum = EINVAL;
  return r < 0 ? -EINVAL : 0;
}

int
kist_state_read (int dirfd, struct kist_state *s, struct kist_error **err)
{
  _cleanup_free_ char *buf = NULL;
  _cleanup_yajl_ yajl_val root = NULL;
  size_t len = 0;
  int ret;

  memset (s, 0, sizeof *s);
  /* A record that does not parse may be one read while a replacement
   * rewrote it (state_replace): read it again, twice at most. */
  for (int attempt = 0;; attempt++)
    {
      ret = kist_read_file_at (dirfd, KIST_STATE_FILE, KIST_STATE_MAX_SIZE, &buf, &len, err);
      if (ret < 0)
        goto fail;
      _cleanup_free_ char *doc = xasprintf ("`%s`: ", KIST_STATE_FILE);
      _cleanup_error_ struct kist_error *perr = NULL;
      if ((ret = kist_json_parse (buf, len, doc, &root, &perr)) == 0)
        break;
      if (attempt == 2)
        {
          if (err)
            *err = steal_pointer (&perr);
          goto fail;
        }
      free (buf);
      buf = NULL;
    }
  ret = state_from_tree (root, s, err);
  if (ret < 0)
    {
      kist_error_wrap (err, "`%s`", KIST_STATE_FILE);
      goto fail;
    }
  return 0;

fail:
  kist_state_clear (s);
  {
    _cleanup_free_ char *dir = state_fd_path (dirfd);
    return kist_error_wrap (err, "read the container state in `%s`", dir);
  }
}

/* ---- OCI state ------------------------------------------------------------ */

char *
kist_state_oci_json (const struct kist_state *s, enum kist_status st)
{
  if (s == NULL)
    return NULL;
  _cleanup_yajl_gen_ yajl_gen g = kist_json_gen_new (true, true);

  yajl_gen_map_open (g);
  kist_json_gen_str_lossy (g, "ociVersion");
  kist_json_gen_str_lossy (g, s->oci_version ? s->oci_version : KIST_DEFAULT_OCI_VERSION);
  kist_json_gen_str_lossy (g, "id");
  kist_json_gen_str_lossy (g, s->id);
  kist_json_gen_str_lossy (g, "status");
  kist_json_gen_str_lossy (g, kist_status_name (st));
  kist_json_gen_str_lossy (g, "pid");
  /* Like runc: 0 once the container is stopped. */
  kist_json_gen_integer (g, st == KIST_STATUS_STOPPED ? 0 : s->pid);
  kist_json_gen_str_lossy (g, "bundle");
  kist_json_gen_str_lossy (g, s->bundle);
  kist_json_gen_str_lossy (g, "rootfs");
  kist_json_gen_str_lossy (g, s->rootfs);
  kist_json_gen_str_lossy (g, "created");
  kist_json_gen_str_lossy (g, s->created);
  kist_json_gen_str_lossy (g, "owner");
  kist_json_gen_str_lossy (g, s->owner ? s->owner : "");
  kist_json_gen_str_lossy (g, "annotations");
  {
    _cleanup_yajl_ yajl_val ann = NULL;
    _cleanup_error_ struct kist_error *aerr = NULL;
    if (s->annotations_json && s->annotations_json[0])
      kist_json_parse (s->annotations_json, strlen (s->annotations_json), "", &ann, &aerr);
    if (YAJL_IS_OBJECT (ann))
      state_gen_tree (g, ann);
    else
      {
        yajl_gen_map_open (g);
        yajl_gen_map_close (g);
      }
  }
  yajl_gen_map_close (g);
  return kist_json_gen_take (g);
}
