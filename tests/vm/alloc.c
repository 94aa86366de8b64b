/* alloc.c: touch N MiB of anonymous memory, one page at a time, then exit 0.
 * Built statically by tests/vm/run.sh and put into the container rootfs of the
 * VM tests, where a memory.max below N must OOM-kill it (exit by SIGKILL).
 * Usage: alloc MIB [HOLD_SECONDS]
 * Prints "alloc: touched N MiB" on success; prints progress every 8 MiB to
 * stderr so a test can see how far it got. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc < 2 || argc > 3)
    {
      fprintf (stderr, "usage: %s MIB [HOLD_SECONDS]\n", argv[0]);
      return 2;
    }
  char *end;
  errno = 0;
  unsigned long mib = strtoul (argv[1], &end, 10);
  if (errno != 0 || *end != '\0' || mib == 0 || mib > 65536)
    {
      fprintf (stderr, "alloc: `%s`: expected a number of MiB in 1..65536\n", argv[1]);
      return 2;
    }
  unsigned long hold = argc == 3 ? strtoul (argv[2], NULL, 10) : 0;

  size_t len = (size_t) mib << 20;
  char *p = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    {
      fprintf (stderr, "alloc: mmap %lu MiB: %s\n", mib, strerror (errno));
      return 1;
    }
  long page = sysconf (_SC_PAGESIZE);
  for (size_t off = 0; off < len; off += (size_t) page)
    {
      p[off] = 1;
      if (off % (8UL << 20) == 0 && off > 0)
        fprintf (stderr, "alloc: %zu MiB\n", off >> 20);
    }
  printf ("alloc: touched %lu MiB\n", mib);
  fflush (stdout);
  if (hold > 0)
    sleep ((unsigned int) hold);
  return 0;
}
