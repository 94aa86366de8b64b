/* swap SECONDS[:MAXPAUSE_US] A B [A B ...]: exchange each pair with
 * renameat2 RENAME_EXCHANGE, over and over, for SECONDS; prints the exchange
 * count.  With MAXPAUSE_US, each exchange is followed by a random pause of
 * 0..MAXPAUSE_US microseconds, so every state lasts from nothing to a while:
 * some racers see a swap in the middle of their work and some a state that
 * holds still (a loop with no pause can leave no racer a whole window, and a
 * test that needs both outcomes then sees only one). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int
main (int argc, char **argv)
{
  if (argc < 4 || argc % 2)
    return 2;
  char *colon;
  long seconds = strtol (argv[1], &colon, 10);
  long max_pause = *colon == ':' ? strtol (colon + 1, NULL, 10) : 0;
  time_t end = time (NULL) + seconds;
  unsigned long n = 0;
  unsigned int seed = (unsigned int) time (NULL);
  while (time (NULL) < end)
    for (int i = 2; i + 1 < argc; i += 2)
      {
        if (renameat2 (AT_FDCWD, argv[i], AT_FDCWD, argv[i + 1], RENAME_EXCHANGE) == 0)
          n++;
        if (max_pause > 0)
          {
            long us = rand_r (&seed) % (max_pause + 1);
            struct timespec ts = { 0, us * 1000 };
            nanosleep (&ts, NULL);
          }
      }
  printf ("%lu\n", n);
  return 0;
}
