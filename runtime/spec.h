/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: config.json (OCI runtime-spec 1.2) -> typed structs.
 *
 * The parser checks JSON types and shapes and reports the JSON path of the
 * first problem ("process.args[1]: expected string").  It does not check that
 * a request can be applied on this kernel: that is each layer's job, and its
 * report entry says so.  Values that may not be representable here (unknown
 * capability names, rlimit names, sysctl keys, mount options) are kept as
 * given and resolved by the layer. */
#ifndef KIST_SPEC_H
#define KIST_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <yajl/yajl_tree.h>

#include "error.h"

/* config.json larger than this is refused (runc has no bound; 4 MiB is
 * generous for any real config and stops memory exhaustion). */
#define KIST_SPEC_MAX_SIZE (4u * 1024 * 1024)

enum kist_ns_type
{
  KIST_NS_USER = 0,
  KIST_NS_MOUNT,
  KIST_NS_PID,
  KIST_NS_NET,
  KIST_NS_UTS,
  KIST_NS_IPC,
  KIST_NS_CGROUP,
  KIST_NS_TIME,
  KIST_NS_COUNT
};

struct kist_namespace
{
  bool present;   /* listed in linux.namespaces */
  char *path;     /* join this one (NULL: create a new one) */
};

struct kist_idmap
{
  uint32_t container_id, host_id, size;
};

struct kist_mount
{
  char *destination;   /* required, absolute after validation */
  char *type;          /* may be NULL (then bind if options say so) */
  char *source;        /* may be NULL */
  char **options;      /* NULL-terminated, may be NULL */
  /* uidMappings/gidMappings of an idmapped mount (mounts_idmap.c); NULL when absent. */
  struct kist_idmap *uid_mappings, *gid_mappings;
  size_t n_uid_mappings, n_gid_mappings;
};

struct kist_rlimit
{
  char *type;          /* "RLIMIT_NOFILE" as given */
  uint64_t soft, hard;
};

struct kist_capabilities
{
  /* Each set: NULL-terminated vector of names as given; NULL when the set is
   * absent from the config (an absent set means empty). */
  char **bounding, **effective, **inheritable, **permitted, **ambient;
};

struct kist_user
{
  uint32_t uid, gid;
  bool has_umask;
  uint32_t umask;
  uint32_t *additional_gids;
  size_t n_additional_gids;
  bool has_additional_gids;
};

/* process.ioPriority: class is IOPRIO_CLASS_RT (1), _BE (2) or _IDLE (3),
 * priority 0 (highest) .. 7 (lowest). */
struct kist_io_priority
{
  int klass;
  int priority;
};

/* process.scheduler: policy is SCHED_* (SCHED_ISO: 4, which mainline Linux
 * does not have: the layer says so), flags the SCHED_FLAG_* bits. */
struct kist_scheduler
{
  int policy;
  int32_t nice, priority;
  uint64_t flags;
  uint64_t runtime, deadline, period;
};

/* process.execCPUAffinity: CPU lists as given ("0-3,7"), syntax checked;
 * NULL when absent or empty. */
struct kist_exec_cpu_affinity
{
  char *initial, *final;
};

/* linux.personality: the domain as personality(2) takes it (PER_LINUX 0,
 * PER_LINUX32 8). */
struct kist_personality
{
  unsigned long domain;
};

/* linux.memoryPolicy: mode MPOL_* (without flags), flags the MPOL_F_* bits,
 * nodes as given ("0-3,7", syntax checked; NULL when absent or empty). */
struct kist_memory_policy
{
  int mode;
  unsigned flags;
  char *nodes;
};

/* Largest CPU / NUMA node number a list may name (bits of the masks kist
 * passes to the kernel). */
#define KIST_IDLIST_MAX 4096

/* "0-3,7" -> bits (nbits of them, zeroed first).  0, or -EINVAL (syntax:
 * *bad points at the offending character) or -ERANGE (a number >= nbits). */
int kist_idlist_parse (const char *s, unsigned long *bits, size_t nbits, const char **bad);
/* bits -> "0-3,7" ("" when none is set); newly allocated. */
char *kist_idlist_format (const unsigned long *bits, size_t nbits);

/* Names <-> numbers for the five settings above (NULL / -1 when unknown). */
const char *kist_sched_policy_name (int policy);
const char *kist_ioprio_class_name (int klass);
const char *kist_mempolicy_mode_name (int mode);

struct kist_process
{
  bool terminal;
  bool has_console_size;
  unsigned console_height, console_width;
  struct kist_user user;
  char **args;         /* NULL-terminated, at least one element */
  char **env;          /* NULL-terminated, may be empty; each "K=V" */
  char *cwd;           /* absolute */
  struct kist_capabilities *capabilities; /* NULL when absent */
  struct kist_rlimit *rlimits;
  size_t n_rlimits;
  bool no_new_privileges;
  bool has_oom_score_adj;
  int oom_score_adj;
  char *apparmor_profile;  /* not implemented: reported + fails closed */
  char *selinux_label;     /* not implemented: reported + fails closed */
  /* process.ioPriority, scheduler, execCPUAffinity (sched.c); has_*: present. */
  bool has_io_priority, has_scheduler, has_exec_cpu_affinity;
  struct kist_io_priority io_priority;
  struct kist_scheduler scheduler;
  struct kist_exec_cpu_affinity exec_cpu_affinity;
};

struct kist_device
{
  char *path;          /* absolute, inside the container */
  char type;           /* 'c', 'b', 'u' (== 'c') or 'p' */
  int64_t major, minor;
  bool has_file_mode, has_uid, has_gid;
  uint32_t file_mode, uid, gid;
};

struct kist_sysctl
{
  char *key, *value;
};

struct kist_time_offset
{
  int64_t secs;
  uint32_t nanosecs;
  bool present;
};

struct kist_hook
{
  char *path;
  char **args;
  char **env;
  bool has_timeout;
  int timeout;
};

struct kist_hooks
{
  struct kist_hook *prestart, *create_runtime, *create_container, *start_container, *poststart,
      *poststop;
  size_t n_prestart, n_create_runtime, n_create_container, n_start_container, n_poststart,
      n_poststop;
};

/* A hooks object alone (the state dir's copy; doc names it in messages). */
int kist_hooks_parse (const char *json, size_t len, const char *doc, struct kist_hooks **out,
                      struct kist_error **err);
void kist_hooks_free (struct kist_hooks *h);
static inline void
kist_hooks_freep (struct kist_hooks **h)
{
  kist_hooks_free (*h);
  *h = NULL;
}
#define _cleanup_hooks_ __attribute__ ((cleanup (kist_hooks_freep)))

/* linux.netDevices: a device of the runtime's network namespace moved into
 * the container's (net_devices.c). */
struct kist_net_device
{
  char *host; /* the key: its name in the runtime's network namespace */
  char *name; /* its name inside (the key when "name" is absent or "") */
};

struct kist_annotation
{
  char *key, *value;
};

struct kist_linux
{
  struct kist_namespace ns[KIST_NS_COUNT];
  struct kist_idmap *uid_mappings, *gid_mappings;
  size_t n_uid_mappings, n_gid_mappings;
  struct kist_time_offset time_monotonic, time_boottime;
  struct kist_device *devices;
  size_t n_devices;
  struct kist_sysctl *sysctl;
  size_t n_sysctl;
  char *cgroups_path;
  struct kist_resources *resources; /* linux.resources (resources.h), NULL when absent */
  yajl_val seccomp;        /* linux.seccomp, borrowed; parsed by kist_seccomp_choose (seccomp.h) */
  char *rootfs_propagation; /* "private", "rprivate", "slave", "rslave", "shared", "rshared", "unbindable", "runbindable" or NULL */
  char **masked_paths;     /* NULL-terminated or NULL */
  char **readonly_paths;   /* NULL-terminated or NULL */
  char *mount_label;       /* not implemented */
  bool has_intel_rdt, has_personality, has_memory_policy;
  struct kist_net_device *net_devices; /* linux.netDevices, in config order */
  size_t n_net_devices;
  struct kist_personality personality;        /* personality.c */
  struct kist_memory_policy memory_policy;    /* personality.c */
};

struct kist_spec
{
  char *oci_version;
  char *root_path;         /* as given (relative to the bundle or absolute) */
  bool root_readonly;
  char *hostname;          /* NULL when absent */
  char *domainname;        /* NULL when absent */
  struct kist_mount *mounts;
  size_t n_mounts;
  struct kist_process *process;   /* NULL when absent (error for create) */
  struct kist_linux *linux_;      /* NULL when absent */
  struct kist_hooks *hooks;       /* NULL when absent */
  struct kist_annotation *annotations;
  size_t n_annotations;
  yajl_val tree;                  /* owned: the parsed document */
};

/* Parse a config.json document (len bytes, need not be NUL-terminated).
 * On error *err says what and where ("config.json: process.args[1]: expected string"). */
int kist_spec_parse (const char *json, size_t len, struct kist_spec **out, struct kist_error **err);

/* Read dirfd/"config.json" (size-bounded, O_NOFOLLOW not required) and parse it. */
int kist_spec_load (int bundle_dirfd, struct kist_spec **out, struct kist_error **err);

/* Parse a standalone OCI "process" object (exec --process FILE). */
int kist_process_parse (const char *json, size_t len, struct kist_process **out,
                        struct kist_error **err);

void kist_spec_free (struct kist_spec *s);
void kist_process_free (struct kist_process *p);
static inline void
kist_spec_freep (struct kist_spec **s)
{
  kist_spec_free (*s);
  *s = NULL;
}
#define _cleanup_spec_ __attribute__ ((cleanup (kist_spec_freep)))

/* Name used in linux.namespaces[].type and in report layer names ("net", ...). */
const char *kist_ns_name (enum kist_ns_type t);
/* CLONE_NEW* flag for the type. */
unsigned long kist_ns_clone_flag (enum kist_ns_type t);

/* Value of an annotation, or NULL. */
const char *kist_spec_annotation (const struct kist_spec *s, const char *key);

/* The default config.json that `kist spec` writes (rootless: the rootless
 * variant).  Returned as a newly allocated, pretty-printed JSON string.
 */
char *kist_spec_default_json (bool rootless);

/* Pieces of a generated config.json (spec_default.c; kist sandbox's config
 * uses them too).  A mount entry (options: NULL-terminated, NULL for none),
 * and "key": [ {containerID, hostID, size} ... ] for the n entries of m. */
struct kist_jgen;
void kist_spec_gen_mount (struct kist_jgen *g, const char *dest, const char *type,
                          const char *source, const char *const *options);
void kist_spec_gen_idmaps (struct kist_jgen *g, const char *key, const struct kist_idmap *m,
                           size_t n);

#endif
