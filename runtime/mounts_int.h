/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: what the files of the mounts layer (mounts.c, mounts_opts.c,
 * mounts_special.c) share; not for other modules. */
#ifndef KIST_MOUNTS_INT_H
#define KIST_MOUNTS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "layer.h"
#include "spec.h"

#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202
#endif
#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW 0x2000
#endif

/* ------------------------------------------------------------- options */

struct attrs
{
  uint64_t set, clr;
};

enum opt_kind
{
  OPT_ATTR,        /* a mount attribute (mount_setattr / fsmount) */
  OPT_SB,          /* a superblock flag (sync, async, dirsync): fsconfig, not for binds */
  OPT_PROP,        /* propagation */
  OPT_BIND,
  OPT_RBIND,
  OPT_COPYUP,      /* tmpcopyup: the image's content of the destination into the new tmpfs */
  OPT_IDMAP,       /* idmap, ridmap (rec): an idmapped bind (mounts_idmap.c) */
  OPT_NOOP         /* accepted, nothing to do: defaults, loud, silent (kernel log
                      messages only), iversion/noiversion (i_version is the
                      file system's own since Linux 6.2), remount (kist sets
                      every attribute on the mount it made) */
};

struct flag_opt
{
  const char *name;
  enum opt_kind kind;
  uint64_t set, clr;     /* OPT_ATTR */
  unsigned long prop;    /* OPT_PROP: MS_PRIVATE, ... */
  bool rec;              /* OPT_PROP, OPT_IDMAP: recursive variant */
};

/* How a destination is resolved in the image (see dest_exactness). */
enum exactness
{
  EXACT_NONE,    /* symlinks are followed, inside the root (as runc does) */
  EXACT_TOP,     /* the top directory (/sys, /dev) must not be a symlink */
  EXACT_ALL      /* no component may be a symlink */
};

struct plan
{
  bool bind, rbind;
  struct attrs top, rec;     /* rec: applied with AT_RECURSIVE (binds only) */
  unsigned long prop;
  bool prop_rec;
  const char **fsopts;       /* borrowed from the mount's options */
  size_t n_fsopts;
  const char *fstype;        /* after mapping */
  bool cgroup_mapped;
  bool copyup;               /* tmpcopyup on a tmpfs */
  bool has_mode, has_owner;  /* mode=, uid=/gid= among the filesystem options */
  char *ignored;             /* options accepted and ignored, as runc does ("mode=755, size=1k") */
  char *clean;               /* the destination, lexically cleaned */
  enum exactness exact;
  char *note;                /* what the report detail says about this mount, or NULL */
  bool ro_later;             /* read-only is decided by a later layer (a read-only /dev) */
  char **expect;             /* mnt_verify_mount appends the verified mount (mountinfo.h) */
  /* An idmapped bind: idmap (or mappings alone), ridmap (idmap_rec); the
   * mappings are the mount's, or linux.uid/gidMappings (idmap_implied). */
  bool idmap, idmap_rec, idmap_implied;
  const struct kist_idmap *uids, *gids;
  size_t n_uids, n_gids;
  uint64_t idmap_mnt_id;     /* mount_bind: the attached idmapped mount */
};

#define _cleanup_plan_ __attribute__ ((cleanup (mnt_plan_clear)))

struct copyup
{
  unsigned long files, dirs, links, nodes, sockets;
  unsigned long long bytes;
};

/* mounts_opts.c */

/* Look an option up; *rec is set for the "r" variant of an attribute. */
const struct flag_opt *mnt_opt_lookup (const char *name, bool *rec);

void mnt_attrs_apply (struct attrs *a, uint64_t set, uint64_t clr);

void mnt_plan_clear (struct plan *p);

/* *s += sep + piece (no separator before the first piece).  Takes piece. */
void mnt_append (char **s, const char *sep, char *piece);

int mnt_plan_build (const struct kist_spec *spec, const struct kist_mount *m, struct plan *p,
                    struct kist_error **err);

/* mounts.c */

int mnt_apply_propagation (int mntfd, const struct plan *p, struct kist_error **err);

/* The destination, reopened, must be the new mount with the flags asked for
 * and the expected filesystem. */
int mnt_verify_mount (struct kist_ctx *ctx, const char *dest, int mntfd, int targetfd,
                      const struct plan *p, unsigned long magic, dev_t src_dev, bool check_dev,
                      struct kist_error **err);

/* "mounts[N] DEST (bind of SRC): msg", the reason every failed entry gives. */
char *mnt_reason (size_t i, const struct kist_mount *m, const char *msg);

int mnt_setattr_tree (int tree, const struct attrs *a, bool recursive, struct kist_error **err);

/* Where the image may not redirect a mount with a symlink (runc: "must be
 * mounted on ordinary directory"; a symlinked /proc would otherwise get
 * procfs mounted wherever it points, and the container no /proc of its
 * own at the path it expects): proc and sysfs anywhere, anything at /proc,
 * /sys or /dev, and anything below /proc resolve with no symlink at all;
 * below /sys and /dev, the top directory itself must not be a symlink. */
enum exactness mnt_dest_exactness (const struct plan *p);

/* mounts_special.c */

/* Copy the image's directory at target into the detached tmpfs mnt; its
 * root takes the source's mode and owner unless mode=, uid= or gid= says
 * otherwise. */
int mnt_copyup (const struct plan *p, int target, int mnt, struct copyup *c,
                struct kist_error **err);

/* cgroup2 in a user namespace without a cgroup namespace of its own (podman
 * --uidmap): the kernel refuses a new cgroup2 superblock (EPERM).  runc then
 * binds the cgroup2 hierarchy it sees; kist binds only the container's own
 * cgroup (the scope the init was put in, else the cgroup2 root), always
 * read-only with every submount: the container must not write its limits. */
int mnt_mount_cgroup_fallback (struct kist_ctx *ctx, const struct kist_mount *m, struct plan *p,
                               int target, struct kist_error **err);

/* sysfs in a user namespace that does not own the network namespace:
 * rbind the host's /sys instead (as runc does). */
int mnt_mount_sysfs_fallback (struct kist_ctx *ctx, const struct kist_mount *m,
                              const struct plan *p, int target, struct kist_error **err);

#endif
