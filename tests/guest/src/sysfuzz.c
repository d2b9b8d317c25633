// SPDX-License-Identifier: GPL-2.0
/*
 * sysfuzz: random invalid writes to a sysfs bool knob.
 *
 * usage: sysfuzz FILE COUNT SEED WATCHED...
 *
 * Makes COUNT single write() calls to FILE, each a fresh open, with data
 * that is never one of the valid values ("0", "1", "on", "off", each with
 * at most one trailing newline): random binary of length 0..4096, huge and
 * signed numbers, valid words with extra whitespace, signs, case or
 * padding, and prefixes of valid words.  Every non-empty write must fail
 * with EINVAL (an empty one never reaches the driver and writes 0 bytes),
 * and every WATCHED file must read the same after each write as before
 * the first.  Prints "sysfuzz: writes=N einval=N empty=N bad=N changed=N"
 * and exits 0 when bad and changed are 0, else 1; 2 on usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define MAXW	16
#define SNAP	65536

static unsigned long long rng;

static unsigned int next(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return rng >> 33;
}

static int watched[MAXW];

/* Kept open: a read at offset 0 makes sysfs show the value afresh. */
static int snapshot(int n, char *out)
{
	size_t used = 0;
	int i;

	for (i = 0; i < n; i++) {
		ssize_t r = pread(watched[i], out + used, SNAP / MAXW - 1, 0);

		if (r < 0)
			return -1;
		used += r;
		out[used++] = '|';
	}
	out[used] = 0;
	return 0;
}

static int is_valid(const char *b, size_t len)
{
	static const char *const words[] = { "0", "1", "on", "off" };
	size_t i;

	if (len && b[len - 1] == '\n')
		len--;
	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (len == strlen(words[i]) && !memcmp(b, words[i], len))
			return 1;
	return 0;
}

/* One candidate value into buf; returns its length. */
static size_t make(char *buf)
{
	static const char *const words[] = { "0", "1", "on", "off", "yes",
		"no", "true", "false", "y", "n", "ON", "Off", "enable", "o",
		"of", "onn", "offf", "01", "10", "0x1", "1.0", "+1", "-0" };
	static const char *const pads[] = { " ", "\t", "\n", "\n\n", "\r",
		"\v", "\f", "\0", "\\0", " \n", "\n ", "x" };
	size_t len, i;

	switch (next() % 5) {
	case 0:		/* random binary */
		len = next() % 4097;
		for (i = 0; i < len; i++)
			buf[i] = next();
		return len;
	case 1:		/* huge or signed numbers */
		return sprintf(buf, "%s%llu%llu%s", next() % 2 ? "-" : "+",
			       (unsigned long long)next() * next(),
			       (unsigned long long)next(), next() % 2 ? "\n" : "");
	default:	/* words with padding before and/or after */
		len = 0;
		if (next() % 2) {
			const char *p = pads[next() % ARRAY_SIZE(pads)];
			size_t l = p[0] ? strlen(p) : 1;

			memcpy(buf, p, l);
			len = l;
		}
		i = next() % ARRAY_SIZE(words);
		memcpy(buf + len, words[i], strlen(words[i]));
		len += strlen(words[i]);
		if (next() % 2) {
			const char *p = pads[next() % ARRAY_SIZE(pads)];
			size_t l = p[0] ? strlen(p) : 1;

			memcpy(buf + len, p, l);
			len += l;
		}
		return len;
	}
}

int main(int argc, char **argv)
{
	static char before[SNAP], after[SNAP], buf[8192];
	unsigned long writes = 0, einval = 0, empty = 0, bad = 0, changed = 0;
	long count;
	int n;

	if (argc < 5 || argc - 4 > MAXW) {
		fprintf(stderr, "usage: sysfuzz FILE COUNT SEED WATCHED...\n");
		return 2;
	}
	count = atol(argv[2]);
	rng = strtoull(argv[3], NULL, 0);
	n = argc - 4;
	for (int i = 0; i < n; i++) {
		watched[i] = open(argv[4 + i], O_RDONLY);
		if (watched[i] < 0) {
			perror(argv[4 + i]);
			return 2;
		}
	}
	if (snapshot(n, before)) {
		perror("snapshot");
		return 2;
	}
	while ((long)writes < count) {
		size_t len = make(buf);
		ssize_t r;
		int fd;

		if (is_valid(buf, len))
			continue;
		fd = open(argv[1], O_WRONLY);
		if (fd < 0) {
			perror(argv[1]);
			return 2;
		}
		r = write(fd, buf, len);
		if (r < 0 && errno == EINVAL)
			einval++;
		else if (r == 0 && len == 0)
			empty++;
		else if (bad++ < 5)
			fprintf(stderr, "sysfuzz: %zu bytes: returned %zd (%s)\n",
				len, r, r < 0 ? strerror(errno) : "accepted");
		close(fd);
		writes++;
		if (snapshot(n, after) || strcmp(before, after)) {
			if (changed++ < 5)
				fprintf(stderr, "sysfuzz: state changed after write %lu\n",
					writes);
		}
	}
	printf("sysfuzz: writes=%lu einval=%lu empty=%lu bad=%lu changed=%lu\n",
	       writes, einval, empty, bad, changed);
	return bad || changed;
}
