/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the seccomp layer (issue 3).
 *
 *   seccomp_profile.c  the OCI linux.seccomp object (and profile files in the
 *                      same format) -> resolved rules; the canonical form and
 *                      its hash; the names (actions, operators, archs, flags)
 *                      and the `kist features` part
 *   seccomp_compile.c  resolved rules -> a BPF program with libseccomp, plus
 *                      kist's ENOSYS prefix; loading a program
 *   seccomp_cache.c    STATE_ROOT/~seccomp-cache/<sha256>.bpf
 *   seccomp_notify.c   SCMP_ACT_NOTIFY: hand the listener fd to listenerPath
 *   seccomp.c          the layer: choose the profile, prepare in the parent
 *                      (before clone), load + verify in the container init
 *
 * Flow: the load step of create and exec calls kist_seccomp_choose(), which
 * parses the profile with the config, before any state exists; the parent
 * calls kist_seccomp_prepare() before clone; it hashes the profile's
 * canonical form (a built-in profile: its source key, without parsing it)
 * and either reads the compiled program
 * from the cache (no libseccomp rule calls at all) or compiles it and stores
 * it.  The init inherits ctx->seccomp and only loads the ready program
 * (kist_seccomp_apply_early / kist_seccomp_apply), checks it through
 * /proc/self/status opened before the load, and the parent verifies it from
 * outside in /proc/PID/status (verify.h). */
#ifndef KIST_SECCOMP_H
#define KIST_SECCOMP_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "layer.h"
#include "error.h"
#include "report.h"
#include "sha256.h"

/* The annotation naming a profile: a built-in name, a path (contains '/',
 * relative paths are relative to the bundle) or "none". */
#define KIST_SECCOMP_ANNOTATION "run.kist.seccomp.profile"
/* The cache directory, under the state root. */
/* "~" is not an id character: the cache cannot clash with a container. */
#define KIST_SECCOMP_CACHE_DIR "~seccomp-cache"
/* Profile files larger than this are refused (same bound as config.json). */
#define KIST_SECCOMP_PROFILE_MAX (4u * 1024 * 1024)
/* The kernel's limit for one filter program (BPF_MAXINSNS). */
#define KIST_SECCOMP_MAX_INSNS 4096

/* ---- the resolved profile (seccomp_profile.c) */

struct kist_seccomp_arg
{
  unsigned index;          /* 0..5 */
  unsigned op;             /* enum scmp_compare */
  uint64_t value, value_two;
};

struct kist_seccomp_rule
{
  char *name;              /* syscall name as given */
  int nr;                  /* native number (libseccomp's negative pseudo
                              number for a syscall only other arches have) */
  uint32_t action;         /* SCMP_ACT_* including the errno / trace data */
  unsigned n_args;
  struct kist_seccomp_arg args[6];
  size_t entry;            /* index in syscalls[], for messages */
};

struct kist_seccomp_profile
{
  uint32_t default_action; /* SCMP_ACT_* including the errno data */
  uint32_t native;         /* native arch token */
  uint32_t *arches;        /* architectures[] (and archMap) tokens, sorted, unique,
                              only those this kernel can run (native + compat) */
  size_t n_arches;
  uint32_t flags;          /* SECCOMP_FILTER_FLAG_* to load with (requested + implied) */
  char *listener_path;     /* linux.seccomp.listenerPath, may be NULL */
  char *listener_metadata; /* linux.seccomp.listenerMetadata, may be NULL */
  struct kist_seccomp_rule *rules; /* in profile order; rules that repeat the
                                      default action are left out */
  size_t n_rules;
  char **skipped;          /* names libseccomp does not know (NULL-terminated, unique) */
  size_t n_skipped;
  size_t n_gated;          /* syscalls[] entries left out by includes/excludes */
  int max_nr;              /* highest native syscall number the profile names, -1 if none */
  bool enosys;             /* native syscalls above max_nr return ENOSYS (see seccomp_compile.c) */
  bool notify;             /* has SCMP_ACT_NOTIFY rules (loads with NEW_LISTENER) */
};

/* What includes/excludes are evaluated against. */
struct kist_seccomp_env
{
  char *const *bounding;   /* process.capabilities.bounding (NULL: empty) */
  uint32_t arch;           /* native arch token; 0 = seccomp_arch_native() */
  const char *kernel;      /* kernel release for minKernel; NULL = uname() */
};

/* Parse a linux.seccomp object.  where prefixes every JSON path in messages,
 * e.g. "config.json: linux.seccomp." or "seccomp profile `default`: ".
 * Unknown actions, operators, archs and flags are errors naming the path; a
 * syscall name libseccomp does not know is skipped and listed in skipped. */
int kist_seccomp_profile_parse (yajl_val v, const char *where, const struct kist_seccomp_env *env,
                                struct kist_seccomp_profile **out, struct kist_error **err);
/* The same at the path jp already holds (jp->doc the document, jp's path
 * the object's: "config.json: " and "linux.seccomp"); jp is as before on
 * success. */
struct jpath;
int kist_seccomp_profile_parse_at (struct jpath *jp, yajl_val v, const struct kist_seccomp_env *env,
                                   struct kist_seccomp_profile **out, struct kist_error **err);
/* The same from JSON text (a profile file). */
int kist_seccomp_profile_parse_json (const char *json, size_t len, const char *where,
                                     const struct kist_seccomp_env *env,
                                     struct kist_seccomp_profile **out, struct kist_error **err);
void kist_seccomp_profile_free (struct kist_seccomp_profile *p);
static inline void
kist_seccomp_profile_freep (struct kist_seccomp_profile **p)
{
  kist_seccomp_profile_free (*p);
  *p = NULL;
}
#define _cleanup_seccomp_profile_ __attribute__ ((cleanup (kist_seccomp_profile_freep)))

/* The canonical, stable serialisation of everything that determines the
 * program: format version, kist and libseccomp versions, native arch,
 * arches, default action, flags, the ENOSYS bound and every rule.  Newly
 * allocated text. */
char *kist_seccomp_canonical (const struct kist_seccomp_profile *p, size_t *len);
/* The cache key of a parsed profile: SHA-256 over the canonical form's
 * fields in a binary layout (no text formatting). */
void kist_seccomp_key (const struct kist_seccomp_profile *p, uint8_t key[KIST_SHA256_LEN]);

/* "SCMP_ACT_ERRNO(1)", "SCMP_ACT_ALLOW", ... for messages, written into buf. */
const char *kist_seccomp_action_str (uint32_t action, char buf[32]);
/* Can this kernel load a filter with these SECCOMP_FILTER_FLAG_* bits?
 * (seccomp() with a NULL program: EFAULT = known flags, EINVAL = not.) */
bool kist_seccomp_flags_supported (uint32_t flags);

/* The seccomp part of `kist features` (runc's features.json "seccomp"
 * object): {"enabled":true,"actions":[...],"operators":[...],"archs":[...],
 * "knownFlags":[...],"supportedFlags":[...]}.  Newly allocated JSON text. */
char *kist_seccomp_features_json (void);

/* ---- compiling and loading (seccomp_compile.c) */

/* Build the program with libseccomp (seccomp_init, seccomp_arch_add,
 * seccomp_rule_add_array, seccomp_export_bpf into a memfd), prepend the
 * ENOSYS prefix when p->enosys, and shrink it (kist_seccomp_shrink).
 * *insns is newly allocated.  _unshrunk: without the last step (tests
 * compare the two). */
int kist_seccomp_compile_unshrunk (const struct kist_seccomp_profile *p, struct sock_filter **insns,
                                   size_t *n_insns, struct kist_error **err);
int kist_seccomp_compile (const struct kist_seccomp_profile *p, struct sock_filter **insns,
                          size_t *n_insns, struct kist_error **err);
/* seccomp(SECCOMP_SET_MODE_FILTER, flags, prog).  With
 * SECCOMP_FILTER_FLAG_NEW_LISTENER the listener fd is stored in *listener
 * (else -1).  Returns 0 or -errno. */
int kist_seccomp_load (const struct sock_filter *insns, size_t n_insns, uint32_t flags,
                       int *listener);
/* What the program answers (SECCOMP_RET_*) for syscall nr with args (NULL:
 * all 0) on this architecture, computed in user space (classic BPF). */
uint32_t kist_seccomp_simulate (const struct sock_filter *insns, size_t n, int nr,
                                const uint64_t args[6]);
/* The same for any seccomp_data (another architecture's). */
uint32_t kist_seccomp_simulate_data (const struct sock_filter *insns, size_t n,
                                     const struct seccomp_data *d);
/* seccomp_shrink.c: the program *prog (xmalloc'ed, *n_insns long) replaced
 * by a shorter one with the same answer for every seccomp_data, when its
 * syscall dispatch can be written as a tree of ranges (else left as it
 * is). */
void kist_seccomp_shrink (struct sock_filter **prog, size_t *n_insns);
/* Would a process under the program be let through (ALLOW, LOG, or left to
 * a tracer or notify agent) for syscall nr with args? */
bool kist_seccomp_lets_through (const struct sock_filter *insns, size_t n, int nr,
                                const uint64_t args[6]);

/* ---- the compiled-filter cache (seccomp_cache.c)
 * Entry (format 2): a header (magic, format version, insn count, the full
 * key, a 64-bit checksum over key + program + what follows it), the
 * sock_filter array, then what the report and the load need from the
 * parsed profile (struct kist_seccomp_meta), so that a hit keyed by a
 * built-in profile's source key never parses it.  Directory 0700 and files
 * 0600, owned by the euid; anything else is ignored as foreign. */

/* What a prepared filter needs from its parsed profile besides the program. */
struct kist_seccomp_meta
{
  uint32_t flags;          /* SECCOMP_FILTER_FLAG_* to load with */
  int max_nr;              /* the ENOSYS bound, when enosys */
  uint32_t n_gated;        /* entries left out by includes/excludes */
  bool enosys, notify;
  char *listener_path;     /* NULL: none */
  char *listener_metadata; /* NULL: none */
  char *skipped;           /* the detail's "; skipped unknown syscalls: ..." or "" (never NULL
                              once filled) */
};
void kist_seccomp_meta_clear (struct kist_seccomp_meta *m);

/* Create/open STATE_ROOT/seccomp-cache.  Returns the directory fd. */
int kist_seccomp_cache_open (int state_rootfd, struct kist_error **err);
/* 1: hit (*insns newly allocated; *meta, if not NULL, filled: clear it with
 * kist_seccomp_meta_clear).  0: miss; *why (newly allocated) says why
 * ("absent", "corrupt: checksum mismatch", "foreign: owner 0", ...). */
int kist_seccomp_cache_load (int cachefd, const uint8_t key[KIST_SHA256_LEN],
                             struct sock_filter **insns, size_t *n_insns,
                             struct kist_seccomp_meta *meta, char **why);
/* Write the entry atomically (temp file + rename), mode 0600.  meta NULL:
 * no flags, no listener, nothing skipped. */
int kist_seccomp_cache_store (int cachefd, const uint8_t key[KIST_SHA256_LEN],
                              const struct sock_filter *insns, size_t n_insns,
                              const struct kist_seccomp_meta *meta, struct kist_error **err);
/* "<64 hex digits>.bpf" into name (at least 69 bytes). */
void kist_seccomp_cache_name (const uint8_t key[KIST_SHA256_LEN], char name[69]);
/* The entry checksum: over the key and the len bytes after the header. */
uint64_t kist_seccomp_cache_checksum (const uint8_t key[KIST_SHA256_LEN], const void *body,
                                      size_t len);
/* The source key of the built-in profile name (its JSON text json, len
 * bytes) resolved under env: SHA-256 over kist's version, the cache and
 * canonical formats, libseccomp's version, the native arch, the kernel
 * release, the bounding set as the parser reads it, the name and a 64-bit
 * fingerprint of the built-in text (part of kist's own binary).  Everything
 * the parse of that text depends on, so that an entry under this key holds
 * what the parse and compile gave. */
void kist_seccomp_builtin_key (const char *name, const void *json, size_t len,
                               const struct kist_seccomp_env *env,
                               uint8_t key[KIST_SHA256_LEN]);

/* ---- built-in profiles: generated at build time from seccomp-profiles/
 * (runtime/seccomp_builtin.c, see Makefile.am).  NULL-terminated names;
 * data[i] is the JSON text of names[i], sizes[i] bytes. */
extern const char *const kist_seccomp_builtin_names[];
extern const unsigned char *const kist_seccomp_builtin_data[];
extern const size_t kist_seccomp_builtin_sizes[];

/* ---- the layer (seccomp.c) */

/* What the load step chose (kist_seccomp_choose), the parent prepared
 * (kist_seccomp_prepare) and the init loads. */
struct kist_seccomp
{
  struct kist_seccomp_profile *profile; /* chosen and parsed (NULL while deferred); freed by
                                          prepare */
  char *label;             /* "profile NAME" or "linux.seccomp", for the detail */
  struct sock_filter *insns;
  size_t n_insns;
  uint32_t flags;          /* SECCOMP_FILTER_FLAG_* */
  char *requested;         /* report "requested": profile name, path or "linux.seccomp" */
  char *detail;            /* "profile default; 812 BPF insns; cache hit; ..." */
  char *listener_path;     /* NOTIFY: where the parent sends the listener fd */
  char *listener_metadata;
  /* A built-in profile chosen with a bundle is parsed only on a cache miss
   * (kist_seccomp_prepare): its source key, text and parse inputs. */
  bool deferred;
  uint8_t source_key[KIST_SHA256_LEN];
  const char *builtin_json;
  size_t builtin_len;
  char *where;             /* "built-in seccomp profile `NAME`: " */
  struct kist_seccomp_env env; /* bounding borrowed from the spec */
  bool prepared;           /* kist_seccomp_prepare ran */
  bool done;               /* init: loaded; parent: failure recorded and degraded */
};

void kist_seccomp_free (struct kist_seccomp *s);
static inline void
kist_seccomp_freep (struct kist_seccomp **s)
{
  kist_seccomp_free (*s);
  *s = NULL;
}
#define _cleanup_seccomp_ __attribute__ ((cleanup (kist_seccomp_freep)))

/* Load step of create and exec (with the exec's process), before any state
 * exists: choose the profile (inline linux.seccomp wins over the
 * annotation; a relative path is relative to bundle_fd, -1: the cwd), read
 * and parse it, resolved for the spec's process.capabilities.bounding and
 * this kernel.  *out is NULL when seccomp is not requested.  A profile that
 * cannot be read or parsed is a config error, with the JSON path
 * ("config.json: linux.seccomp.syscalls[2].action: ...").
 * A built-in profile (annotation) with a bundle (bundle_fd >= 0) is not
 * parsed here: kist ships it, and the parent looks up its source key
 * (kist_seccomp_builtin_key) in the cache first; a miss parses it then, and
 * a parse error is still a config error (not a layer failure).  Without a
 * bundle (bundle_fd -1: callers that compile ->profile themselves, such as
 * the sandbox probe) it is parsed here. */
int kist_seccomp_choose (const struct kist_spec *s, int bundle_fd, struct kist_seccomp **out,
                         struct kist_error **err);

/* Parent, before clone: ctx->seccomp's program from the cache under
 * state_rootfd (-1: no cache) or compiled from the chosen profile and
 * stored; no JSON here.  Nothing to do when ctx->seccomp is NULL (not
 * requested).  A failure (libseccomp refuses the rules) is recorded as the
 * "seccomp" layer; when that layer may degrade, returns 0 with
 * ctx->seccomp->done set. */
int kist_seccomp_prepare (struct kist_ctx *ctx, int state_rootfd, struct kist_report *r,
                          struct kist_error **err);

/* Init: load the filter early, while CAP_SYS_ADMIN is still held, when
 * process.noNewPrivileges is false (the kernel then requires CAP_SYS_ADMIN
 * in the container's user namespace).  Does nothing (and records nothing)
 * when noNewPrivileges is true: kist_seccomp_apply_last loads it then, right
 * before execve.
 * Goes in the init's layer table right before kist_user_apply. */
int kist_seccomp_apply_early (struct kist_ctx *ctx, struct kist_report *r, struct kist_error **err);
/* kist_seccomp_apply (container.h): record "seccomp" as not requested when
 * there is no filter; load a filter with a notify listener.
 * kist_seccomp_apply_last (container.h): load unless already done. */

/* Is seccomp requested by this config (inline or by the annotation, not
 * "none")?  *what (may be NULL) is the report's "requested" value. */
bool kist_seccomp_requested (const struct kist_spec *s, const char **what);

/* ---- Read-backs inside the container, under its own filter (seccomp.c).
 * The parent verifies every fact it can see from outside (verify.h); what
 * the child checks itself must never need a syscall the container's filter
 * may deny or kill on: /proc/self/status is opened before the filter. */

/* Does the filter kist loaded into this process (none yet: yes) let syscall
 * nr with args (NULL: all zero) through? */
bool kist_inside_allows (const struct kist_ctx *ctx, int nr, const uint64_t args[6]);
/* Open /proc/self/status of the container's proc once, into
 * ctx->inside_status, unless a filter is loaded already (then it stays
 * closed, EPERM).  kist_seccomp_apply_early calls it right before loading;
 * kist_inside_status calls it when nothing was opened yet. */
void kist_inside_status_open (struct kist_ctx *ctx);
/* The status text read through that fd into buf (size bytes), or NULL with
 * *why: ENOENT or EXDEV (no procfs at /proc in the container), EPERM (the
 * filter denies pread64, or it was loaded before anything was opened), or
 * the read's errno. */
const char *kist_inside_status (struct kist_ctx *ctx, char *buf, size_t size, int *why);
/* "no procfs at /proc", "the container's seccomp filter denies it" ... for
 * a *why of kist_inside_status. */
const char *kist_inside_why (int why);

/* ---- SCMP_ACT_NOTIFY (seccomp_notify.c) */

/* The runtime-spec "container process state" sent with the listener fd:
 * {"ociVersion","fds":["seccompFd"],"pid","metadata","state":{...}}.  */
char *kist_seccomp_notify_state_json (const struct kist_ctx *ctx, const char *metadata);
/* Parent: connect to ctx->seccomp->listener_path (unix stream socket) and
 * send the state JSON with listener_fd as SCM_RIGHTS.  Does not close
 * listener_fd. */
int kist_seccomp_notify_forward (const struct kist_ctx *ctx, int listener_fd,
                                 struct kist_error **err);

#endif
