/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: `kist sandbox` (design.md section 5): the OCI config built in memory
 * from the sandbox options, and the sandbox directory under the state root:
 *
 *   ROOT/~sandbox/            mode 0700, owned by the caller ('~' is not an id character)
 *   ROOT/~sandbox/ID/         the bundle of one sandbox (mode 0700)
 *   ROOT/~sandbox/ID/rootfs   the empty root kist makes without --rootfs (0755)
 *   ROOT/~sandbox/ID/work     the scratch dir with --keep (kept afterwards)
 *   ROOT/~sandbox/ID/scratch  the Landlock fallback's scratch dir without --keep (0700)
 *   ROOT/~sandbox/ID/upper    --workspace: the overlay's upper dir (workspace.h)
 *   ROOT/~sandbox/ID/ovl-work --workspace: the overlay's work dir
 *   ROOT/~sandbox/ID/ws-layers --workspace-size/-inodes: upper/, ovl-work/ and
 *                             lower/, copied into the workspace tmpfs (workspace.h)
 *
 * The root dir only ever holds mount points and the merged-usr symlinks: the
 * mounts themselves live in the sandbox's mount namespace and are gone with
 * it, so removing the directory never crosses a mount. */
#ifndef KIST_SANDBOX_H
#define KIST_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "layer.h"
#include "resources.h"
#include "workspace.h"

#define KIST_SANDBOX_DIR "~sandbox"
/* ROOT/~sandbox-root/KEY: the shared empty root (sandbox_root.c), mode 0755,
 * holding only the merged-usr symlinks and the top-level mount points
 * (empty directories, 0755); KEY hashes that content.  Every use opens it
 * O_DIRECTORY|O_NOFOLLOW, takes a shared flock (held while the sandbox runs)
 * and verifies it through the fd (owner, mode, exactly those entries); when
 * it does not verify, or the options need more (--rootfs, --workspace,
 * --dir, --symlink, --file, --chmod, a nested mount point in the root, the
 * Landlock fallback), the sandbox gets a private root as before.  It is made
 * under a temporary name and renamed into place (RENAME_NOREPLACE).  kist gc
 * removes the ones no sandbox holds (flock LOCK_EX|LOCK_NB). */
#define KIST_SANDBOX_ROOT_DIR "~sandbox-root"

struct kist_sandbox_bind
{
  char *src;    /* absolute host path (realpath) */
  char *dest;   /* absolute path inside the sandbox */
  bool rw;      /* --rw (else --ro) */
};

/* --file FD DEST: the data of fd FD (read until EOF when the empty root is
 * made, then the fd is closed) becomes the file DEST. */
struct kist_sandbox_file
{
  int fd;
  char *dest;
};

/* --chmod OCTAL PATH: applied once every entry is made. */
struct kist_sandbox_chmod
{
  mode_t mode;
  char *path;
};

struct kist_sandbox_tmpfs
{
  char *dest;
  uint64_t size;   /* bytes */
};

/* rlimits: soft = hard = value. */
enum kist_sandbox_rlimit
{
  KIST_SB_RLIMIT_NOFILE,
  KIST_SB_RLIMIT_FSIZE,
  KIST_SB_RLIMIT_NPROC,
  KIST_SB_RLIMIT_CORE,
  KIST_SB_RLIMIT_CPU,
  KIST_SB_RLIMIT_COUNT
};

struct kist_sandbox_opts
{
  char *rootfs;                      /* --rootfs (absolute) or NULL: kist makes an empty root */
  struct kist_sandbox_bind *binds;   /* --ro / --rw, in order */
  size_t n_binds;
  struct kist_sandbox_tmpfs *tmpfs;  /* --tmpfs */
  size_t n_tmpfs;
  char **links;                      /* --symlink TARGET DEST: pairs, target then dest */
  size_t n_links;
  char **dirs;                       /* --dir DEST */
  size_t n_dirs;
  struct kist_sandbox_file *files;   /* --file FD DEST, in order */
  size_t n_files;
  struct kist_sandbox_chmod *chmods; /* --chmod OCTAL PATH, in order */
  size_t n_chmods;
  char *workdir;                     /* default /work */
  uint64_t scratch_size;             /* bytes, default 256 MiB */
  uint64_t scratch_inodes;           /* default 65536 */
  bool keep;                         /* --keep: the scratch dir is a kept host dir */
  char *workspace;                   /* --workspace DIR (realpath) or NULL: an overlay at the
                                        workdir, lower = DIR, upper in the sandbox dir */
  int commit;                        /* --commit: enum kist_workspace_commit (workspace.h) */
  uint64_t ws_size, ws_inodes;       /* --workspace-size/-inodes: the upper on a tmpfs of that
                                        size/inodes (0: not bounded; both 0: no tmpfs) */
  char **env;                        /* NULL-terminated "K=V", exactly the environment */
  char *cwd;                         /* NULL: the workdir */
  uint32_t uid, gid;                 /* inside, default 65534 */
  char *hostname;                    /* default "sandbox" */
  char *seccomp;                     /* default|strict|none|PATH, default strict */
  bool net_host;                     /* --net host */
  bool userns;                       /* root only: --userns (0..65535 -> 100000..) */
  bool has_memory, has_pids, has_cpus;
  uint64_t memory;                   /* bytes */
  int64_t pids;
  double cpus;
  bool has_rlimit[KIST_SB_RLIMIT_COUNT];
  uint64_t rlimit[KIST_SB_RLIMIT_COUNT];
  char **args;                       /* the command, NULL-terminated, borrowed */
  bool fallback;                     /* the Landlock fallback (sandbox_fallback.c): the scratch
                                        dir is the host dir ROOT/~sandbox/ID/work (0700) */
};

/* Defaults: workdir /work, 256 MiB / 65536 inodes, uid/gid 65534, hostname
 * "sandbox", seccomp strict, empty environment. */
void kist_sandbox_opts_init (struct kist_sandbox_opts *o);
void kist_sandbox_opts_clear (struct kist_sandbox_opts *o);

/* "sandbox-<pid>-<8 random hex digits>", newly allocated. */
char *kist_sandbox_new_id (void);

/* SIZE arguments are parsed by kist_parse_size (util.h), without runc_syntax. */

/* DURATION: a decimal number with an optional unit ms, s, m or h (default
 * s): "1.5s", "500ms", "2m", "1".  Result in milliseconds, > 0. */
int kist_sandbox_parse_duration (const char *s, int64_t *ms);

/* Add "K=V" to the environment (a later value of the same key replaces the
 * earlier one).  what names the source for the message (--setenv, FILE:LINE). */
int kist_sandbox_env_add (struct kist_sandbox_opts *o, const char *kv, const char *what,
                          struct kist_error **err);
/* --env-file F: K=V lines; blank lines and lines starting with # are skipped. */
int kist_sandbox_env_file (struct kist_sandbox_opts *o, const char *file, struct kist_error **err);

/* --ro/--rw SRC[:DEST], --tmpfs DEST[:SIZE]: parse and append.  try
 * (--ro-try, --rw-try): a source that does not exist is skipped. */
int kist_sandbox_add_bind (struct kist_sandbox_opts *o, const char *arg, bool rw, bool try,
                           struct kist_error **err);
/* --symlink TARGET DEST, --dir DEST: made in the empty root kist makes
 * (not with --rootfs), before the mounts. */
int kist_sandbox_add_link (struct kist_sandbox_opts *o, const char *target, const char *dest,
                           struct kist_error **err);
int kist_sandbox_add_dir (struct kist_sandbox_opts *o, const char *dest, struct kist_error **err);
int kist_sandbox_add_tmpfs (struct kist_sandbox_opts *o, const char *arg, struct kist_error **err);

/* ---- bwrap's --file, --chmod and --dev (sandbox_opts.c) */

/* --file FD DEST: FD must be open (not 1 or 2, not given twice); DEST as
 * for --dir.  The fd is not read here. */
int kist_sandbox_add_file (struct kist_sandbox_opts *o, const char *fd, const char *dest,
                           struct kist_error **err);
/* --chmod OCTAL PATH: PATH must be an entry an earlier --dir or --file made,
 * or a directory kist made above an earlier --dir, --file or --symlink (as
 * bwrap, which needs PATH to exist when --chmod comes); no setuid/setgid. */
int kist_sandbox_add_chmod (struct kist_sandbox_opts *o, const char *octal, const char *path,
                            struct kist_error **err);
/* --dev DEST: only /dev, which every sandbox has (bwrap's minimal set). */
int kist_sandbox_add_dev (struct kist_sandbox_opts *o, const char *dest, struct kist_error **err);
/* After all options: --file and --chmod paths must not be at or under a
 * mount of the sandbox (it would hide them), nor be used with --rootfs. */
int kist_sandbox_check_entries (const struct kist_sandbox_opts *o, struct kist_error **err);
/* Is path (absolute) top itself or below it?  Compared by components ("//"
 * and "." ignored). */
bool kist_sandbox_path_under (const char *path, const char *top);
/* The owner on the host of what kist makes for the sandbox user (the
 * --keep work dir, --dir, --file): as root the inside uid/gid (+100000 with
 * --userns), rootless -1 (the caller, to whom the inside ids are mapped). */
void kist_sandbox_owner (const struct kist_sandbox_opts *o, uid_t *u, gid_t *g);
/* Make --dir, --symlink, --file (the fd read, then closed) and --chmod in
 * the empty root rootfs_fd. */
int kist_sandbox_extra_entries (int rootfs_fd, const struct kist_sandbox_opts *o,
                                struct kist_error **err);
/* kist sandbox --help (grouped as in kist-sandbox(8)); returns 0. */
int kist_sandbox_help (void);

/* The directory of one sandbox (all paths absolute). */
struct kist_sandbox_dir
{
  char *path;     /* ROOT/~sandbox/ID: the bundle (ROOT/~sandbox when dirless) */
  char *rootfs;   /* root.path: ROOT/~sandbox/ID/rootfs, or --rootfs */
  char *work;     /* ROOT/~sandbox/ID/work with --keep, .../scratch in the Landlock
                     fallback, else NULL */
  char *upper;    /* ROOT/~sandbox/ID/upper with --workspace, else NULL */
  char *ovl_work; /* ROOT/~sandbox/ID/ovl-work with --workspace, else NULL */
  char *layers;   /* ROOT/~sandbox/ID/ws-layers with a workspace tmpfs, else NULL */
  struct kist_workspace_plan ws; /* how the workspace is mounted (workspace.h) */
  bool shared;    /* rootfs is the shared root ROOT/~sandbox-root/KEY ... */
  int shared_fd;  /* ... and this fd holds its shared flock (closed by _clear) */
  bool dirless;   /* nothing to put in ROOT/~sandbox/ID (shared root or --rootfs, no
                     --keep, --workspace or fallback scratch): not made */
};
void kist_sandbox_dir_clear (struct kist_sandbox_dir *d);

/* Open (creating it if missing) the directory name of dirfd, which must be
 * owned by us and not a symlink; its mode is set to mode. */
int kist_sandbox_open_own_dir (int dirfd, const char *name, mode_t mode, const char *what,
                               struct kist_error **err);
/* The merged-usr symlink /NAME of the empty root (/usr bound, /NAME not,
 * the host's /NAME a symlink into usr/): true and its target in buf. */
bool kist_sandbox_usr_link (const struct kist_sandbox_opts *o, const char *name, char *buf,
                            size_t size);
/* The shared root (KIST_SANDBOX_ROOT_DIR) for o: 1 with *path and *lock_fd
 * (its shared flock) when o can use one and it verifies (made when
 * missing), else 0 (a private root is needed). */
int kist_sandbox_shared_root (int rootfd, const char *root_path, const struct kist_sandbox_opts *o,
                              char **path, int *lock_fd);
/* kist gc: remove the shared roots no sandbox holds; fn is told each one
 * (name relative to ROOT; error NULL or why it could not be removed).
 * Returns 1 when one failed, else 0. */
typedef void (*kist_sandbox_root_fn) (const char *name, const char *error, void *arg);
int kist_sandbox_root_sweep (int rootfd, bool dry_run, kist_sandbox_root_fn fn, void *arg);

/* Make ROOT/~sandbox (0700, verified: a directory owned by us, not a
 * symlink), ROOT/~sandbox/ID, the empty root dir (without --rootfs) with the
 * merged-usr symlinks when /usr is bound, and the --keep work dir (owned by
 * the sandbox user).  root_path is the resolved state root of rootfd.  On
 * failure nothing is left. */
int kist_sandbox_dir_create (int rootfd, const char *root_path, const char *id,
                             const struct kist_sandbox_opts *o, struct kist_sandbox_dir *out,
                             struct kist_error **err);

/* Remove ROOT/~sandbox/ID and everything in it, and verify it is gone.
 * The --workspace upper and ovl-work dirs in it are removed first (any
 * depth: kist_workspace_remove).
 * Never follows a symlink (they are unlinked) and never crosses into a
 * mount point or another filesystem: those, a non-directory ROOT/~sandbox/ID
 * and a tree deeper than kist makes are refused with an error naming the
 * path.  keep_work: a `work` directory in it (the scratch dir of --keep)
 * stays, and with it ROOT/~sandbox/ID; *kept (when kept is not NULL) is then
 * its path, newly allocated, else NULL.  root_path is the resolved state
 * root of rootfd (for messages).  Returns 1 when the directory was there
 * (removed, or all but the work dir), 0 when it was not, negative with *err. */
int kist_sandbox_dir_remove (int rootfd, const char *root_path, const char *id, bool keep_work,
                             char **kept, struct kist_error **err);

/* Annotation of the sandbox's config saying how its user namespace maps were
 * chosen (the caller's /etc/subuid range, or why only the caller is mapped);
 * idmap.c appends it to the detail of idmap.uid and idmap.gid. */
#define KIST_SANDBOX_IDMAP_ANNOTATION KIST_IDMAP_NOTE_ANNOTATION /* layer.h */

/* --memory, --pids and --cpus as linux.resources (NULL: none given), for
 * kist_create_opts.resources: filled directly, not written into the
 * config's JSON. */
struct kist_resources *kist_sandbox_resources (const struct kist_sandbox_opts *o);

/* The Landlock rules of the sandbox (landlock.h), for
 * kist_create_opts.landlock: paths as the command sees them.  Read-only: /
 * and every --ro; writable: the workdir, every --rw and --tmpfs, /tmp;
 * /proc, /dev and its ttys with what they need; /dev/shm for POSIX shm,
 * without mkdir (the filesystem probe).  TCP bind and connect denied unless
 * --net host; signals and abstract unix sockets scoped. */
struct kist_landlock_rules *kist_sandbox_landlock (const struct kist_sandbox_opts *o,
                                                   const struct kist_sandbox_dir *d,
                                                   struct kist_error **err);

/* The config.json of the sandbox (compact JSON, newly allocated).  euid/egid:
 * the caller's; non-zero euid gets a user namespace mapping o->uid/o->gid to
 * them (size 1). */
char *kist_sandbox_config_json (const struct kist_sandbox_opts *o, const struct kist_sandbox_dir *d,
                                uid_t euid, gid_t egid, size_t *len, struct kist_error **err);

/* process in the config (the caller's JSON generator): user, args, env,
 * cwd (the workdir unless --cwd; cwd_override when not NULL), no
 * capabilities but the bounding set given (NULL: none), rlimits,
 * noNewPrivileges. */
struct kist_jgen;
void kist_sandbox_gen_process (struct kist_jgen *g, const struct kist_sandbox_opts *o,
                               const char *cwd_override, const char *const *bounding);
/* The finished config of g (freed), newly allocated; NULL with *err when a
 * string was not valid UTF-8. */
char *kist_sandbox_gen_take (struct kist_jgen *g, size_t *len, struct kist_error **err);

/* ---- the Landlock fallback (sandbox_fallback.c) */

/* What kist_fallback_row records, shared with the container's init. */
struct kist_sandbox_fallback
{
  unsigned wanted_ns;   /* 1u << KIST_NS_*: the namespaces the sandbox would have had */
  int errnum;           /* why the user namespace cannot be made (the probe's errno) */
  char *why;            /* that, with the sysctl and its fix when one is set */
  char *replaced;       /* "landlock ABI 7, seccomp strict, rlimits, ..." */
};
void kist_sandbox_fallback_clear (struct kist_sandbox_fallback *fb);

/* Can this process make a user namespace (and a mount namespace in it, which
 * an AppArmor restriction denies although the unshare succeeds)?  A forked
 * child tries unshare(CLONE_NEWUSER | CLONE_NEWNS) and exits; 0, or the
 * errno it failed with. */
int kist_sandbox_userns_probe (void);

/* Options the fallback cannot give (no mount namespace, the caller's own
 * ids): an error naming the option.  uid_set/gid_set/hostname_set: given on
 * the command line. */
int kist_sandbox_fallback_check (const struct kist_sandbox_opts *o, bool uid_set, bool gid_set,
                                 bool hostname_set, struct kist_error **err);

/* The fallback's config.json: no namespaces, root.path "/" (the host's, not
 * pivoted), the caller's uid/gid, cwd the scratch dir d->work (or --cwd),
 * no capabilities (the bounding set stays: an unprivileged process cannot
 * drop it, and no_new_privileges keeps execve from raising anything). */
char *kist_sandbox_fallback_config_json (const struct kist_sandbox_opts *o,
                                         const struct kist_sandbox_dir *d, size_t *len,
                                         struct kist_error **err);

/* Decide, before anything is made, whether this sandbox runs in the
 * Landlock fallback: only for a caller that needs a user namespace, allowed
 * to fall back (requested: --fallback landlock; or policy lets every
 * namespace.* it would have degrade), and whose probe cannot make one.  1:
 * the fallback (o->fallback, o->uid/gid the caller's, *fb filled); 0: the
 * namespaced sandbox; -1 with *err (exit 125): it would fall back, but
 * Landlock or an option stands in the way. */
int kist_sandbox_fallback_decide (struct kist_sandbox_opts *o, bool requested, const char *policy,
                                  bool uid_set, bool gid_set, bool hostname_set,
                                  struct kist_sandbox_fallback *fb, struct kist_error **err);
/* The policy with every namespace.* allowed to degrade (the fallback's
 * namespace entries are requested and not applied); *storage owns it. */
const char *kist_sandbox_fallback_policy (const char *pol, char **storage);
/* A non-root create refused for want of a user namespace: add the
 * --fallback landlock hint to *err. */
void kist_sandbox_fallback_hint (struct kist_error **err);
/* True (with *err) when the landlock entry is not applied: the fallback
 * never runs without its Landlock domain, whatever the policy. */
bool kist_sandbox_fallback_unconfined (const struct kist_report *r, struct kist_error **err);
/* --timeout or --grace: the init (killed already) and everything under it,
 * which comes to kist as the subreaper; the init's status (128+N). */
int kist_sandbox_fallback_kill_all (pid_t init);
/* The fallback's Landlock rules, on host paths (landlock.h). */
struct kist_landlock_rules;
struct kist_landlock_rules *kist_sandbox_fallback_landlock (const struct kist_sandbox_opts *o,
                                                            const struct kist_sandbox_dir *d);

/* ---- the exit channel (sandbox_status.c) */

#include "lifecycle.h"
#include "report.h"

/* How the command ended and what it used, gathered by kist sandbox. */
struct kist_sb_end
{
  int status;                    /* kist's exit status for it */
  bool timed_out, graced;        /* --timeout expired; killed --grace after a signal */
  int64_t wall_ms;               /* from the start to the end */
  struct kist_init_status init;  /* what kist's init wrote */
  struct kist_usage cg;          /* the scope's counters */
};
/* --status-fd: {"event":"started","child-pid":...,"command-pid":...,
 * "<ns>-namespace":INODE...} on one line (nothing if fd < 0). */
void kist_sb_status_started (int fd, pid_t init);
/* The entries "exit" and "usage", and the "exited" object on status_fd. */
void kist_sb_record_end (struct kist_report *r, const struct kist_sb_end *e, int status_fd);

#endif
