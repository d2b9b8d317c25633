// SPDX-License-Identifier: GPL-2.0
/*
 * procdiff: path walks through /proc/<pid>, knob off vs on.
 *
 * usage: procdiff -k KNOB [-p PROC] [-u UID] [-n]
 *        procdiff churn SECONDS [PROC]
 *        procdiff stat N PATH
 *        procdiff owner KNOB VALUE
 *
 * The differential forks processes and keeps them asleep: as root, set to
 * uid 1000, not dumpable, with a second thread, with a zombie child; and
 * one that has exited and been reaped.  For each of them, for pid 1 and
 * for itself, it walks a list of names under PROC/<pid> (default /proc)
 * with stat(), lstat(), access(R_OK), readlink() and open() plus a read of
 * up to 512 bytes, and records each answer: the error, mode, owner and
 * link count (not the inode number or times, which a new inode of the
 * same entry changes), the link text, the bytes read.  Four passes, the
 * knob at 0, 1, 0, 1: an answer on which the two passes at 0, or the two
 * at 1, disagree is volatile (CPU times, a state letter) and left out;
 * one the passes at 0 agree on and the passes at 1 agree on otherwise is
 * a mismatch.  -u UID: the passes run as UID (the processes stay as they
 * are).  -n: processes and passes in a new pid and mount namespace, with
 * a proc of that namespace mounted on PROC.
 *
 * churn: for SECONDS, one process forks children that exit at once (every
 * other one after setuid(1000)) while another walks PROC/<pid>/status and
 * PROC/<pid>/task/<pid>/comm of the newest; every answer must be success
 * or ENOENT, and a successful stat() must name uid 0 or 1000.
 *
 * stat: N stat() calls of PATH, for counting what each one does.
 *
 * owner: with the knob at VALUE, a process running as root becomes uid
 * 1000 while another process, as uid 1000, checks access(R_OK) of the
 * first one's /proc/<pid>/fd (mode 0500) before and after: the inode's
 * owner, which a revalidation updates, decides.  Prints
 * "owner: before=E after=E" (errno values; stock: 13 then 0).
 *
 * Output: MISMATCH lines, then one line
 *   procdiff: answers=A volatile=V mismatches=M
 * or, for churn, "procdiff: walks=W ok=O gone=G bad=B".  Exit 0 iff M
 * (B) is 0 and A (W) is not, 1 otherwise, 2 on usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAXPIDS 32
#define PASSES 4

/* %T: the process's own tid; %2: its second thread's (or the first's). */
static const char *const names[] = {
	"", "status", "stat", "statm", "cmdline", "comm", "environ", "maps",
	"fd", "fd/0", "fdinfo/0", "exe", "cwd", "root", "ns", "ns/pid", "task",
	"task/%T", "task/%T/status", "task/%T/comm", "task/%2", "task/%2/stat",
	"attr", "attr/current", "loginuid", "mem", "cgroup", "mountinfo",
	"oom_score_adj", "net", "net/unix", "missing", "status/x", "task/999999",
};

struct target {
	pid_t pid;
	pid_t tid2;
};

static struct target targets[MAXPIDS];
static int ntargets;
static char **answers[PASSES];
static int nanswers;

static void add(pid_t pid, pid_t tid2)
{
	targets[ntargets].pid = pid;
	targets[ntargets].tid2 = tid2 ? tid2 : pid;
	ntargets++;
}

static int tid_pipe;

/* The second thread: says its tid, then sleeps. */
static void *second_thread(void *arg)
{
	pid_t t = (pid_t)syscall(SYS_gettid);

	(void)arg;
	if (write(tid_pipe, &t, sizeof(t)) != sizeof(t))
		_exit(3);
	for (;;)
		pause();
	return NULL;
}

/*
 * Forks one sleeping process of @kind: 0 root, 1 uid 1000, 2 not
 * dumpable, 3 with a second thread (its tid in *@tid2), 4 with a zombie
 * child.  Returns once it is set up.
 */
static pid_t spawn(int kind, pid_t *tid2)
{
	pid_t pid, t = 0;
	int p[2];

	if (pipe(p))
		exit(2);
	pid = fork();
	if (pid < 0)
		exit(2);
	if (pid == 0) {
		pthread_t th;

		close(p[0]);
		tid_pipe = p[1];
		switch (kind) {
		case 1:
			if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
				_exit(3);
			break;
		case 2:
			prctl(PR_SET_DUMPABLE, 0);
			break;
		case 4:
			if (fork() == 0)
				_exit(0);
			/* Until the child is a zombie. */
			usleep(50000);
			break;
		}
		if (kind == 3) {
			if (pthread_create(&th, NULL, second_thread, NULL))
				_exit(3);
		} else if (write(p[1], &t, sizeof(t)) != sizeof(t)) {
			_exit(3);
		}
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], &t, sizeof(t)) != sizeof(t))
		t = 0;
	close(p[0]);
	*tid2 = t;
	return pid;
}

static unsigned int crc(const unsigned char *b, ssize_t n)
{
	unsigned int c = 0xffffffff;
	ssize_t i;
	int k;

	for (i = 0; i < n; i++) {
		c ^= b[i];
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320 & -(c & 1));
	}
	return ~c;
}

static void expand(char *out, size_t len, const char *proc, const struct target *t,
		   const char *name)
{
	char rel[128];
	const char *s;
	size_t o = 0;

	for (s = name; *s && o < sizeof(rel) - 16; s++) {
		if (s[0] == '%' && (s[1] == 'T' || s[1] == '2')) {
			o += snprintf(rel + o, sizeof(rel) - o, "%d",
				      s[1] == 'T' ? t->pid : t->tid2);
			s++;
		} else {
			rel[o++] = *s;
		}
	}
	rel[o] = 0;
	snprintf(out, len, "%s/%d%s%s", proc, t->pid, *rel ? "/" : "", rel);
}

static void record(int pass, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		exit(2);
	va_end(ap);
	if (pass == 0) {
		answers[0] = realloc(answers[0], (nanswers + 1) * sizeof(char *));
		if (!answers[0])
			exit(2);
		answers[0][nanswers++] = s;
	} else {
		static int idx[PASSES];

		if (!answers[pass])
			answers[pass] = calloc(nanswers, sizeof(char *));
		if (idx[pass] < nanswers)
			answers[pass][idx[pass]++] = s;
		else
			free(s);
	}
}

static void walk_pass(int pass, const char *proc)
{
	unsigned char buf[512];
	char path[256], link[256];
	struct stat st;
	int i, n, r, fd;
	ssize_t len;

	for (i = 0; i < ntargets; i++) {
		for (n = 0; n < (int)ARRAY_SIZE(names); n++) {
			expand(path, sizeof(path), proc, &targets[i], names[n]);
			r = stat(path, &st);
			record(pass, "%s stat e=%d m=%o u=%d g=%d n=%lu", path, r ? errno : 0,
			       r ? 0 : st.st_mode, r ? -1 : (int)st.st_uid,
			       r ? -1 : (int)st.st_gid, r ? 0 : (unsigned long)st.st_nlink);
			r = lstat(path, &st);
			record(pass, "%s lstat e=%d m=%o u=%d g=%d", path, r ? errno : 0,
			       r ? 0 : st.st_mode, r ? -1 : (int)st.st_uid,
			       r ? -1 : (int)st.st_gid);
			r = access(path, R_OK);
			record(pass, "%s access e=%d", path, r ? errno : 0);
			len = readlink(path, link, sizeof(link) - 1);
			if (len >= 0)
				link[len] = 0;
			record(pass, "%s readlink e=%d t=%s", path, len < 0 ? errno : 0,
			       len < 0 ? "" : link);
			fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			len = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
			record(pass, "%s open e=%d read=%zd crc=%08x", path, fd < 0 ? errno : 0,
			       len, len > 0 ? crc(buf, len) : 0);
			if (fd >= 0)
				close(fd);
		}
	}
}

/* The passes and the comparison, in the walker process. */
static int compare(int knob, const char *proc)
{
	int volatile_ = 0, mismatches = 0;

	for (int pass = 0; pass < PASSES; pass++) {
		if (pwrite(knob, pass & 1 ? "1" : "0", 1, 0) != 1) {
			perror("procdiff: knob");
			return 2;
		}
		walk_pass(pass, proc);
	}
	if (pwrite(knob, "0", 1, 0) != 1)
		return 2;
	for (int a = 0; a < nanswers; a++) {
		if (strcmp(answers[0][a], answers[2][a]) ||
		    strcmp(answers[1][a], answers[3][a])) {
			volatile_++;
		} else if (strcmp(answers[0][a], answers[1][a])) {
			printf("MISMATCH off: %.200s\n          on: %.200s\n",
			       answers[0][a], answers[1][a]);
			mismatches++;
		}
	}
	printf("procdiff: answers=%d volatile=%d mismatches=%d\n", nanswers, volatile_,
	       mismatches);
	return mismatches || !nanswers ? 1 : 0;
}

static int differential(int knob, const char *proc, int uid)
{
	pid_t pids[10], dead, walker, t2;
	int i, kind, status;

	for (i = 0, kind = 0; kind < 5; kind++) {
		pids[i] = spawn(kind, &t2);
		add(pids[i++], t2);
		pids[i] = spawn(kind, &t2);
		add(pids[i++], t2);
	}
	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	add(dead, 0);
	add(1, 0);
	/* The walker walks its own entries too; this process kills the rest. */
	fflush(stdout);
	walker = fork();
	if (walker == 0) {
		add(getpid(), 0);
		if (uid >= 0 && (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
				 setresuid(uid, uid, uid))) {
			perror("procdiff: setresuid");
			_exit(2);
		}
		i = compare(knob, proc);
		fflush(stdout);
		_exit(i);
	}
	if (walker < 0 || waitpid(walker, &status, 0) != walker)
		status = 2 << 8;
	for (i = 0; i < 10; i++)
		kill(pids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

static int churn(int seconds, const char *proc)
{
	pid_t *newest = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long walks = 0, ok = 0, gone = 0, bad = 0;
	char path[128];
	struct stat st;
	time_t end;
	pid_t forker;
	int i;

	if (newest == MAP_FAILED)
		return 2;
	forker = fork();
	if (forker == 0) {
		for (i = 0;; i++) {
			pid_t c = fork();

			if (c == 0) {
				if (i & 1 && (setresgid(1000, 1000, 1000) ||
					      setresuid(1000, 1000, 1000)))
					_exit(3);
				_exit(0);
			}
			if (c > 0) {
				__atomic_store_n(newest, c, __ATOMIC_RELAXED);
				waitpid(c, NULL, 0);
			}
		}
	}
	end = time(NULL) + seconds;
	while (time(NULL) < end) {
		pid_t p = __atomic_load_n(newest, __ATOMIC_RELAXED);

		if (!p)
			continue;
		for (i = 0; i < 2; i++) {
			if (i)
				snprintf(path, sizeof(path), "%s/%d/task/%d/comm", proc, p, p);
			else
				snprintf(path, sizeof(path), "%s/%d/status", proc, p);
			walks++;
			if (!stat(path, &st)) {
				if (st.st_uid == 0 || st.st_uid == 1000) {
					ok++;
				} else {
					bad++;
					printf("BAD: %s uid %d\n", path, (int)st.st_uid);
				}
			} else if (errno == ENOENT || errno == ESRCH) {
				gone++;
			} else {
				bad++;
				printf("BAD: %s: %s\n", path, strerror(errno));
			}
		}
	}
	kill(forker, SIGKILL);
	while (wait(NULL) > 0)
		;
	printf("procdiff: walks=%ld ok=%ld gone=%ld bad=%ld\n", walks, ok, gone, bad);
	return bad || !walks ? 1 : 0;
}

/* As uid 1000, in a child: access(R_OK) of @path, 0 or errno. */
static int access_as_user(const char *path)
{
	int status;
	pid_t c = fork();

	if (c == 0) {
		if (setgroups(0, NULL) || setresgid(1000, 1000, 1000) ||
		    setresuid(1000, 1000, 1000))
			_exit(255);
		_exit(access(path, R_OK) ? errno : 0);
	}
	if (c < 0 || waitpid(c, &status, 0) != c || !WIFEXITED(status))
		return 255;
	return WEXITSTATUS(status);
}

static int owner(const char *knob, const char *value)
{
	int kfd = open(knob, O_WRONLY), go[2], done[2], before, after;
	char path[64], b = 0;
	pid_t c;

	if (kfd < 0 || pwrite(kfd, value, strlen(value), 0) != (ssize_t)strlen(value) ||
	    pipe(go) || pipe(done))
		return 2;
	c = fork();
	if (c == 0) {
		/* Dumpable again: a uid change clears it, and then root owns. */
		if (read(go[0], &b, 1) != 1 || setresgid(1000, 1000, 1000) ||
		    setresuid(1000, 1000, 1000) || prctl(PR_SET_DUMPABLE, 1) ||
		    write(done[1], &b, 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	snprintf(path, sizeof(path), "/proc/%d/fd", c);
	before = access_as_user(path);
	if (write(go[1], &b, 1) != 1 || read(done[0], &b, 1) != 1)
		return 2;
	after = access_as_user(path);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	printf("%s: before=%d after=%d\n", __func__, before, after);
	return 0;
}

int main(int argc, char **argv)
{
	const char *knob = NULL, *proc = "/proc";
	int c, uid = -1, ns = 0, kfd, status;
	struct stat st;

	if (argc == 4 && !strcmp(argv[1], "stat")) {
		long n = atol(argv[2]);

		for (long i = 0; i < n; i++)
			if (stat(argv[3], &st))
				return 1;
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "owner"))
		return owner(argv[2], argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "churn"))
		return churn(atoi(argv[2]), argc > 3 ? argv[3] : "/proc");
	while ((c = getopt(argc, argv, "k:p:u:n")) != -1) {
		switch (c) {
		case 'k':
			knob = optarg;
			break;
		case 'p':
			proc = optarg;
			break;
		case 'u':
			uid = atoi(optarg);
			break;
		case 'n':
			ns = 1;
			break;
		default:
			knob = NULL;
			optind = argc + 1;
			break;
		}
	}
	if (!knob || optind != argc) {
		fprintf(stderr,
			"usage: procdiff -k KNOB [-p PROC] [-u UID] [-n] | churn SECONDS [PROC] | stat N PATH | owner KNOB VALUE\n");
		return 2;
	}
	kfd = open(knob, O_WRONLY);
	if (kfd < 0) {
		perror(knob);
		return 2;
	}
	if (!ns)
		return differential(kfd, proc, uid);
	if (unshare(CLONE_NEWPID | CLONE_NEWNS)) {
		perror("procdiff: unshare");
		return 2;
	}
	c = fork();
	if (c == 0) {
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("proc", proc, "proc", 0, NULL)) {
			perror("procdiff: mount proc");
			_exit(2);
		}
		fflush(stdout);
		_exit(differential(kfd, proc, uid));
	}
	if (c < 0 || waitpid(c, &status, 0) != c || !WIFEXITED(status))
		return 2;
	return WEXITSTATUS(status);
}
