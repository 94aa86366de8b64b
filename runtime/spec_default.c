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

#include "spec.h"
#include "util.h"

struct gen
{
  yajl_gen g;
  bool failed;
};

static void
g_check (struct gen *g, yajl_gen_status st)
{
  if (st != yajl_gen_status_ok)
    g->failed = true;
}

static void
g_str (struct gen *g, const char *s)
{
  g_check (g, yajl_gen_string (g->g, (const unsigned char *) s, strlen (s)));
}

static void
g_key_str (struct gen *g, const char *k, const char *v)
{
  g_str (g, k);
  g_str (g, v);
}

static void
g_key_bool (struct gen *g, const char *k, bool v)
{
  g_str (g, k);
  g_check (g, yajl_gen_bool (g->g, v));
}

static void
g_key_int (struct gen *g, const char *k, long long v)
{
  g_str (g, k);
  g_check (g, yajl_gen_integer (g->g, v));
}

static void
g_open_map (struct gen *g)
{
  g_check (g, yajl_gen_map_open (g->g));
}

static void
g_close_map (struct gen *g)
{
  g_check (g, yajl_gen_map_close (g->g));
}

static void
g_open_array (struct gen *g)
{
  g_check (g, yajl_gen_array_open (g->g));
}

static void
g_close_array (struct gen *g)
{
  g_check (g, yajl_gen_array_close (g->g));
}

/* "key": [strings...] with a NULL-terminated list. */
static void
g_key_strv (struct gen *g, const char *k, const char *const *v)
{
  g_str (g, k);
  g_open_array (g);
  for (; *v; v++)
    g_str (g, *v);
  g_close_array (g);
}

static void
g_mount (struct gen *g, const char *dest, const char *type, const char *source,
         const char *const *options)
{
  g_open_map (g);
  g_key_str (g, "destination", dest);
  g_key_str (g, "type", type);
  g_key_str (g, "source", source);
  if (options)
    g_key_strv (g, "options", options);
  g_close_map (g);
}

static void
g_idmap (struct gen *g, const char *k, unsigned host_id)
{
  g_str (g, k);
  g_open_array (g);
  g_open_map (g);
  g_key_int (g, "containerID", 0);
  g_key_int (g, "hostID", host_id);
  g_key_int (g, "size", 1);
  g_close_map (g);
  g_close_array (g);
}

static void
g_process (struct gen *g)
{
  static const char *const args[] = { "sh", NULL };
  static const char *const env[]
      = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm", NULL };
  static const char *const caps[] = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL };

  g_str (g, "process");
  g_open_map (g);
  g_key_bool (g, "terminal", false);
  g_str (g, "user");
  g_open_map (g);
  g_key_int (g, "uid", 0);
  g_key_int (g, "gid", 0);
  g_close_map (g);
  g_key_strv (g, "args", args);
  g_key_strv (g, "env", env);
  g_key_str (g, "cwd", "/");
  g_str (g, "capabilities");
  g_open_map (g);
  g_key_strv (g, "bounding", caps);
  g_key_strv (g, "effective", caps);
  g_key_strv (g, "permitted", caps);
  g_close_map (g);
  g_str (g, "rlimits");
  g_open_array (g);
  g_open_map (g);
  g_key_str (g, "type", "RLIMIT_NOFILE");
  g_key_int (g, "hard", 1024);
  g_key_int (g, "soft", 1024);
  g_close_map (g);
  g_close_array (g);
  g_key_bool (g, "noNewPrivileges", true);
  g_close_map (g);
}

static void
g_mounts (struct gen *g, bool rootless)
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

  g_str (g, "mounts");
  g_open_array (g);
  g_mount (g, "/proc", "proc", "proc", NULL);
  g_mount (g, "/dev", "tmpfs", "tmpfs", dev);
  g_mount (g, "/dev/pts", "devpts", "devpts", rootless ? pts_rootless : pts);
  g_mount (g, "/dev/shm", "tmpfs", "shm", shm);
  g_mount (g, "/dev/mqueue", "mqueue", "mqueue", mqueue);
  g_mount (g, "/sys", "sysfs", "sysfs", sys);
  g_mount (g, "/sys/fs/cgroup", "cgroup2", "cgroup", cgroup);
  g_close_array (g);
}

static void
g_linux (struct gen *g, bool rootless)
{
  static const char *const ns[] = { "pid", "network", "ipc", "uts", "mount", "cgroup", NULL };
  static const char *const masked[]
      = { "/proc/acpi",         "/proc/asound",    "/proc/kcore",       "/proc/keys",
          "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
          "/sys/firmware",      "/proc/scsi",      NULL };
  static const char *const readonly[]
      = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL };

  g_str (g, "linux");
  g_open_map (g);
  if (rootless)
    {
      g_idmap (g, "uidMappings", (unsigned) geteuid ());
      g_idmap (g, "gidMappings", (unsigned) getegid ());
    }
  g_str (g, "namespaces");
  g_open_array (g);
  for (const char *const *n = ns; *n; n++)
    {
      g_open_map (g);
      g_key_str (g, "type", *n);
      g_close_map (g);
    }
  if (rootless)
    {
      g_open_map (g);
      g_key_str (g, "type", "user");
      g_close_map (g);
    }
  g_close_array (g);
  g_key_strv (g, "maskedPaths", masked);
  g_key_strv (g, "readonlyPaths", readonly);
  g_close_map (g);
}

char *
kist_spec_default_json (bool rootless)
{
  struct gen g = { .g = yajl_gen_alloc (NULL) };
  if (g.g == NULL)
    return NULL;
  yajl_gen_config (g.g, yajl_gen_beautify, 1);
  yajl_gen_config (g.g, yajl_gen_indent_string, "  ");

  g_open_map (&g);
  g_key_str (&g, "ociVersion", "1.2.0");
  g_process (&g);
  g_str (&g, "root");
  g_open_map (&g);
  g_key_str (&g, "path", "rootfs");
  g_key_bool (&g, "readonly", true);
  g_close_map (&g);
  g_key_str (&g, "hostname", "kist");
  g_mounts (&g, rootless);
  g_linux (&g, rootless);
  /* The built-in seccomp allowlist (seccomp-profiles/default.json, see
   * kist-seccomp-profile(5)); an inline linux.seccomp would win over it. */
  g_str (&g, "annotations");
  g_open_map (&g);
  g_key_str (&g, "run.kist.seccomp.profile", "default");
  g_close_map (&g);
  g_close_map (&g);

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
