/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vfsfast_strlen(): strlen() reading aligned 16-byte blocks.
 *
 * No includes on purpose: the kernel build includes it after
 * <asm/word-at-a-time.h>, and tests/host/word_strlen_test.c after shims of
 * the few kernel definitions it uses, to check it against the C library's
 * strlen() at every alignment and length, next to an unmapped page.
 */
#ifndef _VFSFAST_WORD_STRLEN_H
#define _VFSFAST_WORD_STRLEN_H

/*
 * An aligned block never straddles a page, so reading the whole block that holds the terminating
 * NUL cannot fault even when the string ends just before an unmapped page.
 * The over-read is intended, so KASAN is not asked about it
 * (READ_ONCE_NOCHECK(), as read_word_at_a_time() does for its part).
 *
 * The loop asks only "might this block hold a zero byte?": a zero byte
 * turns (x - 0x01..01) & 0x80..80 non-zero, since the bytes below the
 * first zero one cannot borrow.  Bytes of 0x81 and above answer yes too,
 * so a yes is checked again with has_zero(), which is exact: it leaves
 * 0x80 in the place of the first zero byte and of some bytes above it,
 * never below, so on little-endian x86 __ffs() finds exactly the first
 * NUL.
 */
static __always_inline size_t vfsfast_strlen(const char *s)
{
	const struct word_at_a_time constants = WORD_AT_A_TIME_CONSTANTS;
	const unsigned long ones = REPEAT_BYTE(0x01), high = REPEAT_BYTE(0x80);
	unsigned long offset = (unsigned long)s & (2 * sizeof(long) - 1);
	const unsigned long *p = (const unsigned long *)(s - offset);
	unsigned long a = READ_ONCE_NOCHECK(p[0]);
	unsigned long b = READ_ONCE_NOCHECK(p[1]);
	unsigned long bits, before;

	if (unlikely(offset)) {
		/*
		 * OR-ing 0x01 into the bytes before the string makes them
		 * non-zero for has_zero(); those of 0x80 and above may still
		 * cost one false "maybe".  A word wholly before the string
		 * becomes all 0x01.
		 */
		before = ((1UL << ((offset & 7) * 8)) - 1) & ones;
		if (offset & sizeof(long)) {
			a = ones;
			b |= before;
		} else {
			a |= before;
		}
	}
	for (;;) {
		if (unlikely(((a - ones) | (b - ones)) & high)) {
			/*
			 * Not worth keeping a - ones and b - ones live
			 * through the loop for: recompute them here.
			 */
			OPTIMIZER_HIDE_VAR(a);
			OPTIMIZER_HIDE_VAR(b);
			if (has_zero(a, &bits, &constants))
				break;
			if (has_zero(b, &bits, &constants)) {
				p++;
				break;
			}
		}
		p += 2;
		a = READ_ONCE_NOCHECK(p[0]);
		b = READ_ONCE_NOCHECK(p[1]);
	}
	return (const char *)p - s + (__ffs(bits) >> 3);
}

#endif /* _VFSFAST_WORD_STRLEN_H */
