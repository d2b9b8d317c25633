// SPDX-License-Identifier: GPL-2.0
/*
 * rlbench: cost of one readlink() call.
 *
 * usage: rlbench PATH ITERATIONS [BUFLEN]
 *
 * Prints exactly one line: ns_per_op=<ns, 3 decimals> ret=<last return>.
 * Exit 1 if any call fails or returns something other than the first
 * call did (a benchmark of a failing or changing call measures nothing
 * useful), 2 on usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WARMUP		1000
#define DEFAULT_BUFLEN	4096
#define MAX_BUFLEN	(1 << 20)

static void print_usage(void)
{
	fprintf(stderr, "usage: rlbench PATH ITERATIONS [BUFLEN]\n");
	exit(2);
}

static unsigned long parse_ulong(const char *s, unsigned long min,
				 unsigned long max)
{
	unsigned long v;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		print_usage();
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		print_usage();
	return v;
}

static void check(const char *path, ssize_t ret, int err, ssize_t first,
		  unsigned long i)
{
	if (ret < 0) {
		fprintf(stderr, "rlbench: call %lu: readlink %s: %s\n", i, path,
			strerror(err));
		exit(1);
	}
	if (ret != first) {
		fprintf(stderr, "rlbench: call %lu returned %zd, first %zd\n",
			i, ret, first);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	unsigned long iters, buflen = DEFAULT_BUFLEN, i;
	struct timespec t0, t1;
	const char *path;
	ssize_t first, ret = 0;
	int err = 0;
	double ns;
	char *buf;

	if (argc < 3 || argc > 4)
		print_usage();
	path = argv[1];
	iters = parse_ulong(argv[2], 1, ULONG_MAX);
	if (argc == 4)
		buflen = parse_ulong(argv[3], 1, MAX_BUFLEN);

	buf = malloc(buflen);
	if (!buf) {
		fprintf(stderr, "rlbench: out of memory\n");
		return 1;
	}

	first = readlink(path, buf, buflen);
	check(path, first, errno, first, 0);
	for (i = 1; i < WARMUP; i++) {
		ret = readlink(path, buf, buflen);
		check(path, ret, errno, first, i);
	}

	/* Only the cheapest possible check inside the timed loop. */
	if (clock_gettime(CLOCK_MONOTONIC, &t0))
		return 1;
	for (i = 0; i < iters; i++) {
		ret = readlink(path, buf, buflen);
		if (ret != first) {
			err = errno;
			break;
		}
	}
	if (clock_gettime(CLOCK_MONOTONIC, &t1))
		return 1;
	if (i < iters)
		check(path, ret, err, first, WARMUP + i);

	ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 +
	     (double)(t1.tv_nsec - t0.tv_nsec);
	printf("ns_per_op=%.3f ret=%zd\n", ns / (double)iters, ret);
	return 0;
}
