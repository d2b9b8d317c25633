/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vfsfast_strlen(): strlen() reading 16-byte blocks.
 *
 * No includes on purpose: the kernel build includes it after
 * <linux/kernel.h> and <linux/bitops.h>, and tests/host/word_strlen_test.c
 * after shims of the few kernel definitions it uses, to check it against
 * the C library's strlen() at every alignment and length, next to an
 * unmapped page.
 */
#ifndef _VFSFAST_WORD_STRLEN_H
#define _VFSFAST_WORD_STRLEN_H

/* The host test counts the "maybe" answers; nothing else does. */
#ifndef VFSFAST_STRLEN_MAYBE
#define VFSFAST_STRLEN_MAYBE() do { } while (0)
#endif

/*
 * Where the first zero byte of the 16 bytes @a, @b is (0..15), or -1.
 *
 * The first test asks only "might there be a zero byte?": a zero byte
 * turns (x - 0x01..01) & 0x80..80 non-zero, since the bytes below the
 * first zero one cannot borrow.  Bytes of 0x81 and above answer yes too,
 * so a yes is checked again with has_zero()'s exact test, which also
 * clears the bits of bytes that had their top bit set: it leaves 0x80 in
 * the place of the first zero byte and of some bytes above it, never
 * below, so on little-endian x86 __ffs() finds exactly the first NUL.
 * @minus_ones and @high are the constants, which the caller keeps in
 * registers.
 */
static __always_inline long vfsfast_block_nul(unsigned long a, unsigned long b,
					      unsigned long minus_ones,
					      unsigned long high)
{
	unsigned long bits;

	if (likely(!(((a + minus_ones) | (b + minus_ones)) & high)))
		return -1;
	VFSFAST_STRLEN_MAYBE();
	/*
	 * Recompute a - ones and b - ones here: keeping them live from the
	 * first test costs a move in every block.
	 */
	OPTIMIZER_HIDE_VAR(a);
	OPTIMIZER_HIDE_VAR(b);
	bits = (a + minus_ones) & ~a & high;
	if (bits)
		return __ffs(bits) >> 3;
	bits = (b + minus_ones) & ~b & high;
	if (bits)
		return sizeof(long) + (__ffs(bits) >> 3);
	return -1;
}

#define VFSFAST_LOAD(p) READ_ONCE_NOCHECK(*(const unsigned long *)(p))
#define VFSFAST_BLOCK_NUL(p) \
	vfsfast_block_nul(VFSFAST_LOAD(p), VFSFAST_LOAD((p) + sizeof(long)), \
			  minus_ones, high)

/*
 * Reads never cross into a page the string does not reach, so reading
 * past the NUL cannot fault even when the string ends just before an
 * unmapped page.  The over-read is intended, so KASAN is not asked about
 * it (READ_ONCE_NOCHECK(), as read_word_at_a_time() does).
 *
 * Most links are short: the first 64 bytes are read straight from @s, in
 * four unrolled blocks, when they all lie in @s's page.  No byte before
 * the string takes part, whatever @s's alignment (ext4's i_data is only
 * 8-byte aligned), and no loop counter is kept.  Past them, and for a
 * string that starts in the last 64 bytes of a page, aligned blocks
 * follow: an aligned block never straddles a page, so the one that holds
 * the NUL can be read whole.
 */
static __always_inline size_t vfsfast_strlen(const char *s)
{
	const unsigned long ones = REPEAT_BYTE(0x01);
	unsigned long minus_ones = -ones, high = REPEAT_BYTE(0x80);
	unsigned long offset, a, b, before;
	const char *p;
	long i;

	/* Load the constants once, not once per unrolled block. */
	OPTIMIZER_HIDE_VAR(minus_ones);
	OPTIMIZER_HIDE_VAR(high);

	if (likely(((unsigned long)s & (PAGE_SIZE - 1)) <= PAGE_SIZE - 64)) {
		i = VFSFAST_BLOCK_NUL(s);
		if (i >= 0)
			return i;
		i = VFSFAST_BLOCK_NUL(s + 16);
		if (i >= 0)
			return 16 + i;
		i = VFSFAST_BLOCK_NUL(s + 32);
		if (i >= 0)
			return 32 + i;
		i = VFSFAST_BLOCK_NUL(s + 48);
		if (i >= 0)
			return 48 + i;
		/* Bytes read twice here are all non-zero: no harm. */
		p = (const char *)(((unsigned long)s + 64) & ~15UL);
	} else {
		/*
		 * The bytes of the first aligned block that come before the
		 * string become 0x01: not zero, and not 0x80 or above, which
		 * would cost a false "maybe".
		 */
		offset = (unsigned long)s & 15;
		p = s - offset;
		a = VFSFAST_LOAD(p);
		b = VFSFAST_LOAD(p + sizeof(long));
		before = (1UL << ((offset & 7) * 8)) - 1;
		if (offset & sizeof(long)) {
			a = ones;
			b = (b & ~before) | (before & ones);
		} else {
			a = (a & ~before) | (before & ones);
		}
		i = vfsfast_block_nul(a, b, minus_ones, high);
		if (i >= 0)
			return p - s + i;
		p += 16;
	}
	for (;;) {
		i = VFSFAST_BLOCK_NUL(p);
		if (i >= 0)
			return p - s + i;
		p += 16;
	}
}

#endif /* _VFSFAST_WORD_STRLEN_H */
