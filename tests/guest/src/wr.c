// SPDX-License-Identifier: GPL-2.0
/*
 * wr: exactly one write() to a file, for testing sysfs stores.
 *
 * usage: wr FILE HEX
 *
 * HEX is the data as hex digits ("310a" is "1\n", "" is a zero-length
 * write).  A shell's echo cannot send a lone NUL, omit the newline
 * portably, or guarantee a single write() call; this can.
 * Prints "ok <n>" or "err <ERRNAME>" and exits 0 after the write attempt;
 * prints "open <ERRNAME>" and exits 2 if FILE cannot be opened, exits 2 on
 * usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define E(x) { x, #x }
static const struct { int num; const char *name; } errnames[] = {
	E(EINVAL), E(EBUSY), E(EPERM), E(ENOENT), E(EOPNOTSUPP), E(ENOMEM),
	E(EFAULT), E(E2BIG), E(ENODEV), E(EACCES), E(EAGAIN), E(EIO),
	E(ENOSPC), E(ERANGE), E(EEXIST), E(ENXIO), E(EROFS), E(EISDIR),
	E(EINTR), E(ETIMEDOUT), E(ENAMETOOLONG), E(ESRCH),
	E(EDEADLK), E(ENOEXEC), E(EBADF), E(ENOTDIR), E(EFBIG), E(ENOTTY),
	E(ELOOP), E(EMSGSIZE), E(EOVERFLOW), E(ENOTCONN), E(ENOKEY),
	E(ENOTEMPTY), E(EALREADY), E(EINPROGRESS),
};
#undef E

static void print_usage(void)
{
	fprintf(stderr, "usage: wr FILE HEX\n");
	exit(2);
}

static void put_errno(const char *what, int err)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(errnames); i++) {
		if (errnames[i].num == err) {
			printf("%s %s\n", what, errnames[i].name);
			return;
		}
	}
	printf("%s %d\n", what, err);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int main(int argc, char **argv)
{
	size_t hexlen, len, i;
	unsigned char *data;
	ssize_t n;
	int fd;

	if (argc != 3)
		print_usage();
	hexlen = strlen(argv[2]);
	if (hexlen % 2)
		print_usage();
	len = hexlen / 2;
	/* Never NULL, even for a zero-length write. */
	data = malloc(len + 1);
	if (!data) {
		fprintf(stderr, "wr: out of memory\n");
		return 2;
	}
	for (i = 0; i < len; i++) {
		int hi = hexval(argv[2][2 * i]);
		int lo = hexval(argv[2][2 * i + 1]);

		if (hi < 0 || lo < 0)
			print_usage();
		data[i] = hi << 4 | lo;
	}

	fd = open(argv[1], O_WRONLY);
	if (fd < 0) {
		put_errno("open", errno);
		return 2;
	}
	n = write(fd, data, len);
	if (n < 0)
		put_errno("err", errno);
	else
		printf("ok %zd\n", n);
	/* A sysfs store reports its error at write(), not at close(). */
	close(fd);
	return 0;
}
