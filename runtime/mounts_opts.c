/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the options of a config.json mount (layer "mounts", see mounts.c):
 * the option table (mount attributes, superblock flags, propagation, bind,
 * tmpcopyup, idmap) and the plan one entry turns into. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "mounts_int.h"
#include "util.h"

/* The atime family is one field in the mount attributes: "atime",
 * "nostrictatime" and "relatime" mean the kernel default (relatime);
 * "norelatime" means always update (strictatime).  The "r" prefix of every
 * OPT_ATTR option gives its recursive variant (rro, rnosuid, ratime, ...). */
static const struct flag_opt flag_opts[] = {
  { "ro", OPT_ATTR, MOUNT_ATTR_RDONLY, 0 },
  { "rw", OPT_ATTR, 0, MOUNT_ATTR_RDONLY },
  { "nosuid", OPT_ATTR, MOUNT_ATTR_NOSUID, 0 },
  { "suid", OPT_ATTR, 0, MOUNT_ATTR_NOSUID },
  { "nodev", OPT_ATTR, MOUNT_ATTR_NODEV, 0 },
  { "dev", OPT_ATTR, 0, MOUNT_ATTR_NODEV },
  { "noexec", OPT_ATTR, MOUNT_ATTR_NOEXEC, 0 },
  { "exec", OPT_ATTR, 0, MOUNT_ATTR_NOEXEC },
  { "noatime", OPT_ATTR, MOUNT_ATTR_NOATIME, MOUNT_ATTR__ATIME },
  { "atime", OPT_ATTR, MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME },
  { "relatime", OPT_ATTR, MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME },
  { "norelatime", OPT_ATTR, MOUNT_ATTR_STRICTATIME, MOUNT_ATTR__ATIME },
  { "strictatime", OPT_ATTR, MOUNT_ATTR_STRICTATIME, MOUNT_ATTR__ATIME },
  { "nostrictatime", OPT_ATTR, MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME },
  { "nodiratime", OPT_ATTR, MOUNT_ATTR_NODIRATIME, 0 },
  { "diratime", OPT_ATTR, 0, MOUNT_ATTR_NODIRATIME },
  { "nosymfollow", OPT_ATTR, MOUNT_ATTR_NOSYMFOLLOW, 0 },
  { "symfollow", OPT_ATTR, 0, MOUNT_ATTR_NOSYMFOLLOW },
  { "sync", OPT_SB },
  { "async", OPT_SB },
  { "dirsync", OPT_SB },
  { "private", OPT_PROP, .prop = MS_PRIVATE },
  { "rprivate", OPT_PROP, .prop = MS_PRIVATE, .rec = true },
  { "shared", OPT_PROP, .prop = MS_SHARED },
  { "rshared", OPT_PROP, .prop = MS_SHARED, .rec = true },
  { "slave", OPT_PROP, .prop = MS_SLAVE },
  { "rslave", OPT_PROP, .prop = MS_SLAVE, .rec = true },
  { "unbindable", OPT_PROP, .prop = MS_UNBINDABLE },
  { "runbindable", OPT_PROP, .prop = MS_UNBINDABLE, .rec = true },
  { "bind", OPT_BIND },
  { "rbind", OPT_RBIND },
  { "idmap", OPT_IDMAP },
  { "ridmap", OPT_IDMAP, .rec = true },
  { "tmpcopyup", OPT_COPYUP },
  { "defaults", OPT_NOOP },
  { "loud", OPT_NOOP },
  { "silent", OPT_NOOP },
  { "iversion", OPT_NOOP },
  { "noiversion", OPT_NOOP },
  { "remount", OPT_NOOP },
};

const struct flag_opt *
mnt_opt_lookup (const char *name, bool *rec)
{
  *rec = false;
  /* Every option of the table is a bare word: "size=64m", "mode=755" are
   * the file system's (most lookups of a run), no scan.  Else the first
   * letter before the strcmp. */
  if (strchr (name, '=') != NULL)
    return NULL;
  for (size_t i = 0; i < KIST_ARRAY_SIZE (flag_opts); i++)
    if (flag_opts[i].name[0] == name[0] && strcmp (flag_opts[i].name, name) == 0)
      return &flag_opts[i];
  if (name[0] == 'r')
    for (size_t i = 0; i < KIST_ARRAY_SIZE (flag_opts); i++)
      if (flag_opts[i].kind == OPT_ATTR && flag_opts[i].name[0] == name[1]
          && strcmp (flag_opts[i].name, name + 1) == 0)
        {
          *rec = true;
          return &flag_opts[i];
        }
  return NULL;
}

void
mnt_attrs_apply (struct attrs *a, uint64_t set, uint64_t clr)
{
  if (clr & MOUNT_ATTR__ATIME)
    a->set &= ~(uint64_t) MOUNT_ATTR__ATIME;
  a->set = (a->set & ~clr) | set;
  a->clr = (a->clr & ~set) | clr;
}

void
mnt_plan_clear (struct plan *p)
{
  free (p->fsopts);
  p->fsopts = NULL;
  free (p->ignored);
  p->ignored = NULL;
  free (p->clean);
  p->clean = NULL;
  free (p->note);
  p->note = NULL;
}

void
mnt_append (char **s, const char *sep, char *piece)
{
  char *next = *s ? xasprintf ("%s%s%s", *s, sep, piece) : xstrdup (piece);
  free (piece);
  free (*s);
  *s = next;
}

/* The ranges of one mapping: each id once on either side, none past
 * 4294967294 (the kernel's (uid_t) -1 is no id), at most 340 ranges (the
 * kernel's limit for uid_map). */
static int
check_map (const char *key, const struct kist_idmap *map, size_t n, struct kist_error **err)
{
  if (n > 340)
    return kist_error_make (err, EINVAL, "%s: %zu ranges, the kernel takes at most 340", key, n);
  for (size_t i = 0; i < n; i++)
    {
      uint64_t c = map[i].container_id, h = map[i].host_id, sz = map[i].size;
      if (c + sz > UINT32_MAX || h + sz > UINT32_MAX)
        return kist_error_make (err, EINVAL,
                                "%s[%zu]: %llu ids from containerID %llu / hostID %llu go past "
                                "4294967294: make size smaller",
                                key, i, (unsigned long long) sz, (unsigned long long) c,
                                (unsigned long long) h);
      for (size_t j = 0; j < i; j++)
        {
          uint64_t c2 = map[j].container_id, h2 = map[j].host_id, sz2 = map[j].size;
          bool cov = c < c2 + sz2 && c2 < c + sz, hov = h < h2 + sz2 && h2 < h + sz;
          if (cov || hov)
            return kist_error_make (err, EINVAL,
                                    "%s[%zu] and %s[%zu]: their %s ranges overlap (an id may "
                                    "appear once on each side): make the ranges disjoint",
                                    key, j, key, i, cov ? "containerID" : "hostID");
        }
    }
  return 0;
}

/* idmap / ridmap and the mount's uidMappings/gidMappings (runtime-spec 1.2
 * config.md): only on a bind; the two mappings together; mappings without
 * the option mean idmap (as runc); the option without mappings takes the
 * container's user namespace mappings (linux.uidMappings/gidMappings, the
 * spec's MAY, as runc), else it is an error. */
static int
plan_idmap (const struct kist_spec *spec, const struct kist_mount *m, struct plan *p,
            struct kist_error **err)
{
  bool has_maps = m->n_uid_mappings || m->n_gid_mappings;
  if (!p->idmap && !has_maps)
    return 0;
  const char *what = p->idmap ? (p->idmap_rec ? "option `ridmap`" : "option `idmap`")
                              : "uidMappings/gidMappings";
  if (!p->bind)
    return kist_error_make (err, EINVAL,
                            "%s: an idmapped mount is a bind mount only (runtime-spec, runc): add "
                            "the `bind` or `rbind` option, or remove the %s",
                            what, has_maps ? "mappings" : "option");
  if (has_maps && (m->n_uid_mappings == 0 || m->n_gid_mappings == 0))
    return kist_error_make (err, EINVAL, "%s given without %s: an idmapped mount needs both",
                            m->n_uid_mappings ? "uidMappings" : "gidMappings",
                            m->n_uid_mappings ? "gidMappings" : "uidMappings");
  p->idmap = true;
  p->uids = m->uid_mappings;
  p->n_uids = m->n_uid_mappings;
  p->gids = m->gid_mappings;
  p->n_gids = m->n_gid_mappings;
  if (!has_maps)
    {
      const struct kist_linux *l = spec ? spec->linux_ : NULL;
      if (l == NULL || !l->ns[KIST_NS_USER].present || l->n_uid_mappings == 0
          || l->n_gid_mappings == 0)
        return kist_error_make (err, EINVAL,
                                "%s without uidMappings and gidMappings: give the mount its "
                                "mappings (or use a user namespace with linux.uidMappings and "
                                "linux.gidMappings, which it then takes)",
                                what);
      p->idmap_implied = true;
      p->uids = l->uid_mappings;
      p->n_uids = l->n_uid_mappings;
      p->gids = l->gid_mappings;
      p->n_gids = l->n_gid_mappings;
    }
  if (check_map ("uidMappings", p->uids, p->n_uids, err) < 0
      || check_map ("gidMappings", p->gids, p->n_gids, err) < 0)
    return -1;
  return 0;
}

int
mnt_plan_build (const struct kist_spec *spec, const struct kist_mount *m, struct plan *p, struct kist_error **err)
{
  bool rec;
  p->bind = m->type && strcmp (m->type, "bind") == 0;
  for (char **o = m->options; o && *o; o++)
    {
      const struct flag_opt *f = mnt_opt_lookup (*o, &rec);
      if (f && f->kind == OPT_BIND)
        p->bind = true;
      else if (f && f->kind == OPT_RBIND)
        p->bind = p->rbind = true;
    }
  if (!p->bind)
    {
      if (m->type == NULL || m->type[0] == '\0')
        return kist_error_make (err, EINVAL,
                                "no type and no bind/rbind option: say which filesystem to mount");
      p->fstype = m->type;
      if (strcmp (m->type, "cgroup") == 0)
        {
          p->fstype = "cgroup2";
          p->cgroup_mapped = true;
        }
    }

  p->fsopts = xcalloc (kist_strv_len (m->options) + 1, sizeof *p->fsopts);
  for (char **o = m->options; o && *o; o++)
    {
      const struct flag_opt *f = mnt_opt_lookup (*o, &rec);
      if (f == NULL)
        {
          /* runc passes these as mount(2) data, which a bind ignores:
           * accepted, and the report says they were ignored. */
          if (p->bind)
            {
              mnt_append (&p->ignored, ", ", xstrdup (*o));
              continue;
            }
          if (strncmp (*o, "mode=", 5) == 0)
            p->has_mode = true;
          else if (strncmp (*o, "uid=", 4) == 0 || strncmp (*o, "gid=", 4) == 0)
            p->has_owner = true;
          p->fsopts[p->n_fsopts++] = *o;
          continue;
        }
      switch (f->kind)
        {
        case OPT_ATTR:
          mnt_attrs_apply ((p->bind && (rec || p->rbind)) ? &p->rec : &p->top, f->set, f->clr);
          break;
        case OPT_SB:
          if (!p->bind)
            p->fsopts[p->n_fsopts++] = *o;
          else if (strcmp (f->name, "async") != 0)
            return kist_error_make (err, EINVAL,
                                    "option `%s` is a superblock flag and cannot be set on a bind "
                                    "mount",
                                    *o);
          break;
        case OPT_PROP:
          p->prop = f->prop;
          p->prop_rec = f->rec;
          break;
        case OPT_BIND:
        case OPT_RBIND:
        case OPT_NOOP:
          break;
        case OPT_COPYUP:
          /* As runc and crun: only a tmpfs copies up; elsewhere it means nothing. */
          if (!p->bind && strcmp (p->fstype, "tmpfs") == 0)
            p->copyup = true;
          else
            mnt_append (&p->ignored, ", ", xstrdup (*o));
          break;
        case OPT_IDMAP:
          p->idmap = true;
          p->idmap_rec |= f->rec;
          break;
        }
    }
  return plan_idmap (spec, m, p, err);
}
