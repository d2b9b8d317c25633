// SPDX-License-Identifier: GPL-2.0
/*
 * rlloop: readlink() correctness loop, run while the knob is toggled or
 * the module is unloaded under it.
 *
 * usage: rlloop STOPFILE PATH...
 *
 * Each PATH's target is read once at start; then every path is read again
 * and again, with a full buffer and with a buffer of half the target's
 * length, until STOPFILE exists.  Every result must match exactly: return
 * value, the bytes, and the 16 bytes after them left untouched.
 * Prints "rlloop: iterations=N ok" and exits 0, or exits 1 on the first
 * mismatch, 2 on usage error.
 *
 * It naps for a microsecond every NAP_EVERY rounds.  The suite's guests
 * run their vCPUs round-robin on one host thread, and qemu moves to the
 * next vCPU only when the running one halts or its 100 ms slice ends: a
 * kernel that waits for an IPI to a vCPU busy in this loop (text_poke_bp()'s
 * syncs, 6.12's livepatch re-patching its preemption static calls) waited a
 * whole slice per IPI.  With the nap, a vCPU with nothing else to run halts
 * within a round.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define FULL_LEN	8192
#define GUARD		16
#define FILL		0xA5
#define STOP_EVERY	256
#define NAP_EVERY	4

struct target {
	const char *path;
	char *exp;
	int len;
};

static char buf[FULL_LEN + GUARD];

static void print_usage(void)
{
	fprintf(stderr, "usage: rlloop STOPFILE PATH...\n");
	exit(2);
}

static void check(const struct target *t, int buflen, unsigned long iter)
{
	int want = t->len < buflen ? t->len : buflen;
	const char *what = NULL;
	ssize_t ret;
	int err, i;

	memset(buf, FILL, want + GUARD);
	ret = readlink(t->path, buf, buflen);
	err = ret < 0 ? errno : 0;
	if (ret != want) {
		what = "ret";
	} else if (memcmp(buf, t->exp, want)) {
		what = "bytes";
	} else {
		for (i = 0; i < GUARD; i++)
			if ((unsigned char)buf[want + i] != FILL)
				what = "overrun";
	}
	if (!what)
		return;
	printf("rlloop: MISMATCH path=");
	put_escaped(stdout, t->path);
	printf(" buflen=%d ret=%zd errno=%d expected=%d what=%s iteration=%lu\n",
	       buflen, ret, err, want, what, iter);
	exit(1);
}

int main(int argc, char **argv)
{
	const char *stopfile;
	struct target *t;
	const struct timespec nap = { 0, 1000 };
	unsigned long iter;
	int n, i;
	ssize_t r;

	if (argc < 3)
		print_usage();
	stopfile = argv[1];
	n = argc - 2;
	t = calloc(n, sizeof(*t));
	if (!t) {
		fprintf(stderr, "rlloop: out of memory\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		t[i].path = argv[i + 2];
		r = readlink(t[i].path, buf, FULL_LEN);
		if (r < 0) {
			fprintf(stderr, "rlloop: readlink %s: %s\n", t[i].path,
				strerror(errno));
			return 1;
		}
		t[i].len = r;
		t[i].exp = malloc(r ? r : 1);
		if (!t[i].exp) {
			fprintf(stderr, "rlloop: out of memory\n");
			return 1;
		}
		memcpy(t[i].exp, buf, r);
	}

	/* access() is a syscall too: checking rarely keeps the rate high. */
	for (iter = 0; ; iter++) {
		if (!(iter % STOP_EVERY) && !access(stopfile, F_OK))
			break;
		if (!(iter % NAP_EVERY))
			nanosleep(&nap, NULL);
		for (i = 0; i < n; i++) {
			check(&t[i], FULL_LEN, iter);
			if (t[i].len / 2 >= 1)
				check(&t[i], t[i].len / 2, iter);
		}
	}
	printf("rlloop: iterations=%lu ok\n", iter);
	return 0;
}
