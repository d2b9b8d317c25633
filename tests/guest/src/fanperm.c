// SPDX-License-Identifier: GPL-2.0
/*
 * fanperm: a fanotify permission listener that takes its time.
 *
 * usage: fanperm MOUNTPOINT DELAY_US STOPFILE
 *
 * Marks the mount at MOUNTPOINT for FAN_OPEN_PERM and FAN_ACCESS_PERM and
 * answers every event with FAN_ALLOW after DELAY_US microseconds, so that
 * whoever opens or reads a file there sleeps inside the kernel's
 * fsnotify permission path meanwhile.  Prints "ready" once the mark is in
 * place; when STOPFILE exists, prints "fanperm: events=N" and exits 0.
 * Exits 1 if a response is refused, 2 on usage error or when fanotify is
 * not available.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fanotify.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[4096] __attribute__((aligned(8)));
	unsigned long events = 0;
	struct pollfd pfd;
	useconds_t delay;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: fanperm MOUNTPOINT DELAY_US STOPFILE\n");
		return 2;
	}
	delay = strtoul(argv[2], NULL, 10);
	fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY);
	if (fd < 0 || fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MOUNT,
				    FAN_OPEN_PERM | FAN_ACCESS_PERM,
				    AT_FDCWD, argv[1])) {
		perror("fanotify");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (access(argv[3], F_OK)) {
		struct fanotify_event_metadata *m;
		ssize_t len;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		len = read(fd, buf, sizeof(buf));
		if (len <= 0)
			continue;
		for (m = (void *)buf; FAN_EVENT_OK(m, len);
		     m = FAN_EVENT_NEXT(m, len)) {
			struct fanotify_response r = { .fd = m->fd,
						       .response = FAN_ALLOW };

			if (m->mask & (FAN_OPEN_PERM | FAN_ACCESS_PERM)) {
				usleep(delay);
				if (write(fd, &r, sizeof(r)) != sizeof(r)) {
					perror("fanotify response");
					return 1;
				}
			}
			if (m->fd >= 0)
				close(m->fd);
			events++;
		}
	}
	printf("fanperm: events=%lu\n", events);
	return 0;
}
