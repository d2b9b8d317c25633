// SPDX-License-Identifier: GPL-2.0
/*
 * module/word_strlen.h against the C library's strlen(), in user space.
 *
 * The guests can only reach the alignments their filesystems happen to
 * give a link (kmalloc'd and page-cache links start 16-byte aligned, ext4
 * fast links 8-byte aligned); this covers every start offset in a 16-byte
 * block, every length up to 300 and the bytes before and after the string
 * that could fool a zero-byte test (0x00, 0x01, 0x7f, 0x80, 0x81, 0xff),
 * with the string ending just before an unmapped page, so that a read past
 * the block that holds the NUL would fault.  For strings of bytes below
 * 0x80 it also checks that the cost does not depend on the bytes around
 * them: exactly one "maybe" (the block with the NUL), whatever precedes
 * the string.  Prints
 * "N passed, N failed" (one check per offset, length and pattern).
 *
 * The shims are the kernel's definitions, for x86-64.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define unlikely(x) __builtin_expect(!!(x), 0)
#define READ_ONCE_NOCHECK(x) (*(const volatile unsigned long *)&(x))
#define OPTIMIZER_HIDE_VAR(var) __asm__ ("" : "=r" (var) : "0" (var))
#define likely(x) __builtin_expect(!!(x), 1)
#define REPEAT_BYTE(x) ((~0UL / 0xff) * (x))
#define PAGE_SIZE 4096UL

static inline unsigned long __ffs(unsigned long word)
{
	return __builtin_ctzl(word);
}

static unsigned long maybes;
#define VFSFAST_STRLEN_MAYBE() (maybes++)

#include "../../module/word_strlen.h"

static const unsigned char tricky[] = { 0x00, 0x01, 0x7f, 0x80, 0x81, 0xff };

#define MAXLEN 300

int main(void)
{
	long page = PAGE_SIZE;
	unsigned long passed = 0, failed = 0;
	unsigned char *map, *end;
	unsigned int seed = 1;

	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED || mprotect(map + page, page, PROT_NONE)) {
		perror("mmap");
		return 2;
	}
	end = map + page;
	for (int where = 0; where < 2; where++)
	for (int pat = 0; pat < 8; pat++) {
		for (int len = 0; len <= MAXLEN; len++) {
			for (int off = 0; off < 16; off++) {
				/*
				 * where 0: NUL at end - 1 - off, so the last
				 * block may end at the page, and short strings
				 * start in its last 64 bytes.  where 1: start
				 * at 16 * k + off in mid-page.
				 */
				unsigned char *s = where ? map + 256 + off :
					end - 1 - off - len;
				size_t got, want;

				/* Before the string: one of the tricky bytes, or random. */
				for (unsigned char *q = map; q < s; q++)
					*q = pat < 6 ? tricky[pat] : rand_r(&seed);
				for (int i = 0; i < len; i++) {
					unsigned char c = pat & 1 ? 0x80 + rand_r(&seed) % 0x80 :
						1 + rand_r(&seed) % 0x7f;
					s[i] = c ? c : 1;
				}
				s[len] = 0;
				/* After the NUL, up to the page: zeros or high bytes. */
				memset(s + len + 1, pat & 2 ? 0xff : 0, end - (s + len + 1));
				maybes = 0;
				got = vfsfast_strlen((const char *)s);
				want = strlen((const char *)s);
				if (got == want && want == (size_t)len &&
				    (pat & 1 || maybes == 1)) {
					passed++;
				} else {
					failed++;
					if (failed < 10)
						printf("not ok: where %d, pattern %d, length %d, end offset %d (start %% 16 = %lu): got %zu, want %zu, %lu maybes\n",
						       where, pat, len, off,
						       (unsigned long)s % 16, got, want,
						       maybes);
				}
			}
		}
	}
	printf("%lu passed, %lu failed\n", passed, failed);
	return failed ? 1 : 0;
}
