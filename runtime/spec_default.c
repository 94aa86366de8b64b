/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kist: the default config.json written by `kist spec` (runc's defaults,
 * with hostname "kist", terminal false, no linux.resources, and the
 * annotation run.kist.seccomp.profile=default instead of an inline filter). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "json.h"
#include "spec.h"
#include "util.h"

void
kist_spec_gen_mount (struct kist_jgen *g, const char *dest, const char *type, const char *source,
                     const char *const *options)
{
  kist_jgen_map_open (g);
  kist_jgen_kstr (g, "destination", dest);
  kist_jgen_kstr (g, "type", type);
  kist_jgen_kstr (g, "source", source);
  if (options)
    kist_jgen_kstrv (g, "options", options);
  kist_jgen_map_close (g);
}

void
kist_spec_gen_idmaps (struct kist_jgen *g, const char *key, const struct kist_idmap *m, size_t n)
{
  kist_jgen_str (g, key);
  kist_jgen_array_open (g);
  for (size_t i = 0; i < n; i++)
    {
      kist_jgen_map_open (g);
      kist_jgen_kint (g, "containerID", m[i].container_id);
      kist_jgen_kint (g, "hostID", m[i].host_id);
      kist_jgen_kint (g, "size", m[i].size);
      kist_jgen_map_close (g);
    }
  kist_jgen_array_close (g);
}

/* uid or gid 0 inside -> host_id (the caller), the only id mapped. */
static void
g_idmap (struct kist_jgen *g, const char *k, unsigned host_id)
{
  const struct kist_idmap m = { .container_id = 0, .host_id = host_id, .size = 1 };
  kist_spec_gen_idmaps (g, k, &m, 1);
}

static void
g_process (struct kist_jgen *g)
{
  static const char *const args[] = { "sh", NULL };
  static const char *const env[]
      = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm", NULL };
  static const char *const caps[] = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL };

  kist_jgen_str (g, "process");
  kist_jgen_map_open (g);
  kist_jgen_kbool (g, "terminal", false);
  kist_jgen_str (g, "user");
  kist_jgen_map_open (g);
  kist_jgen_kint (g, "uid", 0);
  kist_jgen_kint (g, "gid", 0);
  kist_jgen_map_close (g);
  kist_jgen_kstrv (g, "args", args);
  kist_jgen_kstrv (g, "env", env);
  kist_jgen_kstr (g, "cwd", "/");
  kist_jgen_str (g, "capabilities");
  kist_jgen_map_open (g);
  kist_jgen_kstrv (g, "bounding", caps);
  kist_jgen_kstrv (g, "effective", caps);
  kist_jgen_kstrv (g, "permitted", caps);
  kist_jgen_map_close (g);
  kist_jgen_str (g, "rlimits");
  kist_jgen_array_open (g);
  kist_jgen_map_open (g);
  kist_jgen_kstr (g, "type", "RLIMIT_NOFILE");
  kist_jgen_kint (g, "hard", 1024);
  kist_jgen_kint (g, "soft", 1024);
  kist_jgen_map_close (g);
  kist_jgen_array_close (g);
  kist_jgen_kbool (g, "noNewPrivileges", true);
  kist_jgen_map_close (g);
}

static void
g_mounts (struct kist_jgen *g, bool rootless)
{
  static const char *const dev[] = { "nosuid", "strictatime", "mode=755", "size=65536k", NULL };
  static const char *const pts[]
      = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5", NULL };
  /* Rootless: gid 5 (tty) is not mapped in the user namespace, so devpts
   * would refuse gid=5. */
  static const char *const pts_rootless[]
      = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", NULL };
  static const char *const shm[]
      = { "nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL };
  static const char *const mqueue[] = { "nosuid", "noexec", "nodev", NULL };
  static const char *const sys[] = { "nosuid", "noexec", "nodev", "ro", NULL };
  static const char *const cgroup[] = { "nosuid", "noexec", "nodev", "relatime", "ro", NULL };

  kist_jgen_str (g, "mounts");
  kist_jgen_array_open (g);
  kist_spec_gen_mount (g, "/proc", "proc", "proc", NULL);
  kist_spec_gen_mount (g, "/dev", "tmpfs", "tmpfs", dev);
  kist_spec_gen_mount (g, "/dev/pts", "devpts", "devpts", rootless ? pts_rootless : pts);
  kist_spec_gen_mount (g, "/dev/shm", "tmpfs", "shm", shm);
  kist_spec_gen_mount (g, "/dev/mqueue", "mqueue", "mqueue", mqueue);
  kist_spec_gen_mount (g, "/sys", "sysfs", "sysfs", sys);
  kist_spec_gen_mount (g, "/sys/fs/cgroup", "cgroup2", "cgroup", cgroup);
  kist_jgen_array_close (g);
}

static void
g_linux (struct kist_jgen *g, bool rootless)
{
  static const char *const ns[] = { "pid", "network", "ipc", "uts", "mount", "cgroup", NULL };
  static const char *const masked[]
      = { "/proc/acpi",         "/proc/asound",    "/proc/kcore",       "/proc/keys",
          "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
          "/sys/firmware",      "/proc/scsi",      NULL };
  static const char *const readonly[]
      = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL };

  kist_jgen_str (g, "linux");
  kist_jgen_map_open (g);
  if (rootless)
    {
      g_idmap (g, "uidMappings", (unsigned) geteuid ());
      g_idmap (g, "gidMappings", (unsigned) getegid ());
    }
  kist_jgen_str (g, "namespaces");
  kist_jgen_array_open (g);
  for (const char *const *n = ns; *n; n++)
    {
      kist_jgen_map_open (g);
      kist_jgen_kstr (g, "type", *n);
      kist_jgen_map_close (g);
    }
  if (rootless)
    {
      kist_jgen_map_open (g);
      kist_jgen_kstr (g, "type", "user");
      kist_jgen_map_close (g);
    }
  kist_jgen_array_close (g);
  kist_jgen_kstrv (g, "maskedPaths", masked);
  kist_jgen_kstrv (g, "readonlyPaths", readonly);
  kist_jgen_map_close (g);
}

char *
kist_spec_default_json (bool rootless)
{
  struct kist_jgen g = { .g = yajl_gen_alloc (NULL) };
  if (g.g == NULL)
    return NULL;
  yajl_gen_config (g.g, yajl_gen_beautify, 1);
  yajl_gen_config (g.g, yajl_gen_indent_string, "  ");

  kist_jgen_map_open (&g);
  kist_jgen_kstr (&g, "ociVersion", "1.2.0");
  g_process (&g);
  kist_jgen_str (&g, "root");
  kist_jgen_map_open (&g);
  kist_jgen_kstr (&g, "path", "rootfs");
  kist_jgen_kbool (&g, "readonly", true);
  kist_jgen_map_close (&g);
  kist_jgen_kstr (&g, "hostname", "kist");
  g_mounts (&g, rootless);
  g_linux (&g, rootless);
  /* The built-in seccomp allowlist (seccomp-profiles/default.json, see
   * kist-seccomp-profile(5)); an inline linux.seccomp would win over it. */
  kist_jgen_str (&g, "annotations");
  kist_jgen_map_open (&g);
  kist_jgen_kstr (&g, "run.kist.seccomp.profile", "default");
  kist_jgen_map_close (&g);
  kist_jgen_map_close (&g);

  char *out = NULL;
  const unsigned char *buf = NULL;
  size_t len = 0;
  if (!g.failed && yajl_gen_get_buf (g.g, &buf, &len) == yajl_gen_status_ok)
    {
      /* yajl's beautifier already ends the document with a newline; make sure. */
      bool nl = len > 0 && buf[len - 1] == '\n';
      out = xmalloc (len + 2);
      memcpy (out, buf, len);
      if (!nl)
        out[len++] = '\n';
      out[len] = '\0';
    }
  yajl_gen_free (g.g);
  return out;
}
