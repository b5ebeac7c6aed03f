/*
 * noise.h
 *		Exact discrete Laplace noise from an injected source of random bits.
 *
 * Pure C: no PostgreSQL headers.  Everything on the path from random bits to
 * a noise value is integer arithmetic (Canonne, Kamath and Steinke 2020), so
 * no floating-point rounding can bias or leak through the noise.  Doubles
 * appear only in cc_dlap_variance(), which describes the noise for error bars.
 */
#ifndef CC_NOISE_H
#define CC_NOISE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A source of uniformly random 64-bit words, read from a buffer that refill
 * fills: words[next] up to words[count - 1] are unused.  refill must either
 * fill it (next = 0, count > 0) or not return at all: the server's source
 * raises an error when the strong random source fails, so the core never
 * sees a failure and never falls back to weaker bits.  The words are read
 * inline, so that a draw costs no call per word.
 */
typedef struct cc_rng
{
	uint64_t   *words;
	int			next;
	int			count;
	void		(*refill) (struct cc_rng *rng);
	void	   *ctx;
	/* unused bits of the last word taken for single bits; start at zero */
	uint64_t	bits;
	int			nbits;
} cc_rng;

static inline uint64_t
cc_next_word(cc_rng *rng)
{
	if (rng->next >= rng->count)
		rng->refill(rng);
	return rng->words[rng->next++];
}

/* A noise scale b = num / den, kept exact; both are at least 1. */
typedef struct cc_scale
{
	uint64_t	num;
	uint64_t	den;
} cc_scale;

/* One uniform random bit: a 64-bit word serves 64 of them. */
static inline bool
cc_random_bit(cc_rng *rng)
{
	bool		bit;

	if (rng->nbits == 0)
	{
		rng->bits = cc_next_word(rng);
		rng->nbits = 64;
	}
	bit = (rng->bits & 1) != 0;
	rng->bits >>= 1;
	rng->nbits--;
	return bit;
}

/* 32 uniform random bits, from the same store of spare bits. */
static inline uint32_t
cc_random_bits32(cc_rng *rng)
{
	uint32_t	bits;

	if (rng->nbits < 32)
	{
		rng->bits = cc_next_word(rng);
		rng->nbits = 64;
	}
	bits = (uint32_t) rng->bits;
	rng->bits >>= 32;
	rng->nbits -= 32;
	return bits;
}

/*
 * Uniform integer in [0, n), n >= 1, by rejection (no modulo bias).  Always
 * inlined: the samplers call it in their inner loops.
 */
static inline __attribute__((always_inline)) uint64_t
cc_uniform_below(cc_rng *rng, uint64_t n)
{
	/*
	 * Lemire's method: the high word of r * n is uniform on [0, n) once the
	 * products whose low word falls below 2^64 mod n are rejected.  The
	 * division that computes that threshold is needed only when the low word
	 * is small, which is rare.  Below 2^32 the same on 32 bits, so that a
	 * word serves two draws: the samplers' moduli are mostly small.
	 */
	unsigned __int128 m;
	uint64_t	low;

	if (n == 1)
		return 0;
	if (n <= UINT32_MAX)
	{
		uint64_t	m32 = (uint64_t) cc_random_bits32(rng) * n;
		uint32_t	low32 = (uint32_t) m32;

		if (low32 < (uint32_t) n)
		{
			uint32_t	threshold = (uint32_t) (0 - (uint32_t) n) % (uint32_t) n;	/* 2^32 mod n */

			while (low32 < threshold)
			{
				m32 = (uint64_t) cc_random_bits32(rng) * n;
				low32 = (uint32_t) m32;
			}
		}
		return m32 >> 32;
	}
	m = (unsigned __int128) cc_next_word(rng) * n;
	low = (uint64_t) m;
	if (low < n)
	{
		uint64_t	threshold = (0 - n) % n;	/* 2^64 mod n */

		while (low < threshold)
		{
			m = (unsigned __int128) cc_next_word(rng) * n;
			low = (uint64_t) m;
		}
	}
	return (uint64_t) (m >> 64);
}

/* Bernoulli(exp(-num/den)), num >= 0, den >= 1. */
extern bool cc_bernoulli_exp(cc_rng *rng, uint64_t num, uint64_t den);

/*
 * Discrete Laplace with scale b: P(X = x) proportional to exp(-|x| / b).
 * The scale must satisfy cc_scale_ok(); values then stay far inside int64.
 */
extern int64_t cc_discrete_laplace(cc_rng *rng, cc_scale b);

/* Exact variance 2p / (1 - p)^2 with p = exp(-1/b). */
extern double cc_dlap_variance(cc_scale b);

/*
 * The scale as a double, for error bars only.  Inline: a window reads it
 * every row; whole scales, the usual ones, need no division.
 */
static inline double
cc_scale_value(cc_scale b)
{
	return b.den == 1 ? (double) b.num : (double) b.num / (double) b.den;
}

/* The greatest common divisor; cc_gcd(a, 0) = a. */
extern uint64_t cc_gcd(uint64_t a, uint64_t b);

/* Largest scale the samplers accept: noise of this scale cannot overflow. */
#define CC_MAX_SCALE 1e15

/*
 * Build the scale mult / epsilon, with epsilon = eps_num / eps_den, reduced.
 * Returns false when it would overflow or exceed CC_MAX_SCALE.
 */
extern bool cc_scale_make(uint64_t mult, uint64_t eps_num, uint64_t eps_den,
						  cc_scale *out);

#endif							/* CC_NOISE_H */
