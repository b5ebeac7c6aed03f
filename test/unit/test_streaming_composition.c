/*
 * test_streaming_composition.c
 *		Theorem 4 of seed 002 against the exact coupled-worlds privacy of
 *		small streams, enumerated.
 *
 * A stream model: rows are bits drawn independently, 1 with probability p;
 * a database holds k rows, and each step replaces its oldest row (blocks of
 * one row, c = 1/k), so t steps read rows r_0 .. r_(k+t-2), step i the rows
 * r_i .. r_(i+k-1).  The mechanism M outputs one of nout values with a law
 * that depends on the database's oldest row o and its count s.  The
 * scrubbed database alt(X) has its oldest row replaced by a fresh bit, 1
 * with probability q, drawn anew at each step (the seed's P^1 runs M(alt(.))
 * at each step: a channel applied step by step).  What an adversary knows
 * is z, the rows of the last database but its oldest (X_t's lower blocks).
 *
 * Everything is computed exactly by enumeration: the laws P^0(y | z) and
 * P^1(y | z) of the composite's outputs y = (y_1 .. y_t), the composite's
 * epsilon (largest |log P^0 / P^1| where both are positive, over every z)
 * and its delta at the theorem's epsilon (the hockey stick sum (P^a -
 * e^epsilon P^b)_+ both ways, over every z), and the per-step epsilon_max,
 * delta_max (mass where the other law is zero) and gamma.  No randomness:
 * every check is exact.
 */
#include "unit.h"

#include <math.h>
#include <stdlib.h>

#include "streaming_composition.h"

#define MAX_K 3
#define MAX_OUT 6
#define MAX_T 5

typedef struct stream_model
{
	const char *name;
	int			k;
	double		p;				/* P(row = 1) */
	double		q;				/* P(replacement = 1) in alt */
	int			nout;
	double		m[2][MAX_K + 1][MAX_OUT];	/* P(y | oldest row, count) */
} stream_model;

/* The exact privacy of a composite of t steps (t = 1: of one step). */
typedef struct composite
{
	double		epsilon;		/* largest |log P0/P1| on common support */
	double		delta_inf;		/* largest mass where the other law is 0 */
	double		gamma;			/* t = 1: largest log P^a(y|z)/P^b(y|z') */
} composite;

static double
row_p(const stream_model *m, int bit)
{
	return bit ? m->p : 1 - m->p;
}

/* P(M(X) = y) for the database of rows x[0 .. k-1], scrubbed or not */
static double
step_law(const stream_model *m, const int *x, int y, bool scrubbed)
{
	int			s = 0;

	for (int i = 0; i < m->k; i++)
		s += x[i];
	if (!scrubbed)
		return m->m[x[0]][s][y];
	return (1 - m->q) * m->m[0][s - x[0]][y] + m->q * m->m[1][s - x[0] + 1][y];
}

/*
 * law[b][zi][yi]: P^b(y | z) for every z (bits of zi, rows r_t ..) and
 * every output tuple yi (base nout digits, y_1 lowest).
 */
static double *
composite_laws(const stream_model *m, int t, int *nz, int *ny)
{
	int			rows = m->k + t - 1;
	double	   *law;

	*nz = 1 << (m->k - 1);
	*ny = 1;
	for (int i = 0; i < t; i++)
		*ny *= m->nout;
	law = calloc((size_t) 2 * *nz * *ny, sizeof(double));
	for (int b = 0; b < 2; b++)
		for (int zi = 0; zi < *nz; zi++)
			for (int fi = 0; fi < (1 << t); fi++)
			{
				int			r[MAX_K + MAX_T];
				double		pf = 1;

				for (int j = 0; j < t; j++)
				{
					r[j] = (fi >> j) & 1;
					pf *= row_p(m, r[j]);
				}
				for (int j = t; j < rows; j++)
					r[j] = (zi >> (j - t)) & 1;
				for (int yi = 0; yi < *ny; yi++)
				{
					double		pr = pf;
					int			rest = yi;

					for (int i = 0; i < t; i++, rest /= m->nout)
						pr *= step_law(m, r + i, rest % m->nout, b == 1);
					law[((size_t) b * *nz + zi) * *ny + yi] += pr;
				}
			}
	return law;
}

#define LAW(b, zi, yi) law[((size_t) (b) * nz + (zi)) * ny + (yi)]

static void
composite_privacy(const stream_model *m, int t, composite *c)
{
	int			nz,
				ny;
	double	   *law = composite_laws(m, t, &nz, &ny);

	*c = (composite)
	{
		0, 0, 0
	};
	for (int zi = 0; zi < nz; zi++)
		for (int a = 0; a < 2; a++)
		{
			double		orphan = 0;

			for (int yi = 0; yi < ny; yi++)
			{
				double		pa = LAW(a, zi, yi),
							pb = LAW(1 - a, zi, yi);

				if (pb == 0)
					orphan += pa;
				else if (pa > 0)
					c->epsilon = fmax(c->epsilon, log(pa / pb));
				/* gamma: z against every z' (one step only) */
				for (int zj = 0; zj < nz && t == 1; zj++)
					if (pa > 0 && LAW(1 - a, zj, yi) > 0)
						c->gamma = fmax(c->gamma, log(pa / LAW(1 - a, zj, yi)));
			}
			c->delta_inf = fmax(c->delta_inf, orphan);
		}
	free(law);
}

/* the composite's delta at epsilon: the largest hockey stick sum */
static double
composite_delta(const stream_model *m, int t, double epsilon)
{
	int			nz,
				ny;
	double	   *law = composite_laws(m, t, &nz, &ny);
	double		delta = 0;

	for (int zi = 0; zi < nz; zi++)
		for (int a = 0; a < 2; a++)
		{
			double		sum = 0;

			for (int yi = 0; yi < ny; yi++)
				sum += fmax(0, LAW(a, zi, yi) - exp(epsilon) * LAW(1 - a, zi, yi));
			delta = fmax(delta, sum);
		}
	free(law);
	return delta;
}

/*
 * M: a count with two-sided geometric noise of ratio r truncated to 0 .. k;
 * leak > 0 adds an output nout - 1 taken with probability leak when the
 * oldest row is 1 (a mechanism that sometimes shows the row that leaves).
 */
static stream_model
geometric_model(const char *name, int k, double p, double q, double r, double leak)
{
	stream_model m = {.name = name,.k = k,.p = p,.q = q,.nout = k + 1 + (leak > 0)};

	for (int o = 0; o < 2; o++)
		for (int s = 0; s <= k; s++)
		{
			double		total = 0;

			for (int y = 0; y <= k; y++)
				total += pow(r, abs(y - s));
			for (int y = 0; y <= k; y++)
				m.m[o][s][y] = pow(r, abs(y - s)) / total * (o ? 1 - leak : 1);
			if (leak > 0)
				m.m[o][s][k + 1] = o ? leak : 0;
		}
	return m;
}

/*
 * Check the theorem for t = 1 .. MAX_T: the composite's epsilon is at most
 * epsilon_max + (t - 1) gamma, and its delta there at most t delta_max.
 * Returns the largest epsilon_t / bound over t >= 2.
 */
static double
check_theorem(const stream_model *m, composite *step, composite *last)
{
	double		tightest = 0;

	composite_privacy(m, 1, step);
	for (int t = 1; t <= MAX_T; t++)
	{
		cc_stream_bound bound;
		composite	c;
		double		delta;

		CHECK(cc_streaming_composition(step->epsilon, step->delta_inf, step->gamma,
									   t, &bound) == CC_STREAM_OK, "%s", m->name);
		composite_privacy(m, t, &c);
		delta = composite_delta(m, t, bound.epsilon);
		CHECK(c.epsilon <= bound.epsilon * (1 + 1e-12),
			  "%s: t = %d, epsilon %.6f above the bound %.6f", m->name, t,
			  c.epsilon, bound.epsilon);
		CHECK(delta <= bound.delta * (1 + 1e-12) + 1e-15,
			  "%s: t = %d, delta %.3g above the bound %.3g", m->name, t,
			  delta, bound.delta);
		if (t >= 2 && bound.epsilon > 0)
			tightest = fmax(tightest, c.epsilon / bound.epsilon);
		*last = c;
	}
	return tightest;
}

static void
test_theorem_on_streams(void)
{
	stream_model fresh = geometric_model("fresh", 3, 0.5, 0.5, 0.3, 0);
	stream_model scrub = geometric_model("scrub", 3, 0.3, 0.0, 0.4, 0);
	stream_model pair = geometric_model("pair", 2, 0.5, 0.2, 0.2, 0);
	stream_model leak = geometric_model("leak", 3, 0.5, 0.0, 0.4, 0.02);
	composite	step,
				last;
	double		tight;

	/*
	 * alt draws the row afresh from the rows' own law: each step alone is
	 * 0-private (the oldest row is unknown either way), yet the composite
	 * is not, since in P^0 the steps share that row and in P^1 they do
	 * not.  Basic composition of the per-step epsilons (t * 0) is wrong
	 * here; the theorem's (t - 1) gamma holds.
	 */
	tight = check_theorem(&fresh, &step, &last);
	CHECK(step.epsilon < 1e-12 && step.gamma > 0.1,
		  "fresh: epsilon_max %.3g, gamma %.3g", step.epsilon, step.gamma);
	CHECK(last.epsilon > 0.05, "fresh: composite epsilon %.3g, basic composition 0",
		  last.epsilon);
	printf("streaming composition: fresh, t = %d: epsilon %.4f, bound %.4f (gamma %.4f); "
		   "largest ratio %.3f\n", MAX_T, last.epsilon, (MAX_T - 1) * step.gamma,
		   step.gamma, tight);

	tight = check_theorem(&scrub, &step, &last);
	CHECK(step.epsilon > 0.1 && step.gamma >= step.epsilon, "scrub: %.3g %.3g",
		  step.epsilon, step.gamma);
	printf("streaming composition: scrub, t = %d: epsilon %.4f, bound %.4f "
		   "(epsilon_max %.4f, gamma %.4f); largest ratio %.3f\n", MAX_T, last.epsilon,
		   step.epsilon + (MAX_T - 1) * step.gamma, step.epsilon, step.gamma, tight);

	tight = check_theorem(&pair, &step, &last);
	printf("streaming composition: pair, t = %d: epsilon %.4f, bound %.4f; largest ratio %.3f\n",
		   MAX_T, last.epsilon, step.epsilon + (MAX_T - 1) * step.gamma, tight);

	/*
	 * A mechanism that shows the leaving row with probability 0.02: delta
	 * of the composite is 1 - (1 - p leak)^t, close to t delta_max = t p
	 * leak, and above (t - 1) delta_max: the delta part is nearly tight.
	 */
	check_theorem(&leak, &step, &last);
	{
		double		delta = last.delta_inf;

		CHECK(fabs(step.delta_inf - 0.01) < 1e-12, "leak: delta_max %.6g", step.delta_inf);
		CHECK(fabs(delta - (1 - pow(1 - 0.01, MAX_T))) < 1e-12, "leak: delta %.6g", delta);
		CHECK(delta > (MAX_T - 1) * step.delta_inf, "leak: delta %.6g", delta);
		printf("streaming composition: leak, t = %d: delta %.6f, bound %.6f\n", MAX_T,
			   delta, MAX_T * step.delta_inf);
	}
}

static void
test_bound_arithmetic(void)
{
	cc_stream_bound b;

	CHECK(cc_streaming_composition(0.5, 1e-6, 0.75, 1, &b) == CC_STREAM_OK &&
		  b.epsilon == 0.5 && b.delta >= 1e-6 && b.delta < 1e-6 * (1 + 1e-15) &&
		  !b.vacuous, "one step: %.17g %.17g", b.epsilon, b.delta);
	CHECK(cc_streaming_composition(0.5, 1e-6, 0.75, 11, &b) == CC_STREAM_OK &&
		  b.epsilon >= 8.0 && b.epsilon < 8.0 * (1 + 1e-15) &&
		  b.delta >= 1.1e-5 && b.delta < 1.1e-5 * (1 + 1e-15),
		  "eleven steps: %.17g %.17g", b.epsilon, b.delta);
	CHECK(cc_streaming_composition(0, 0, 0, 1000, &b) == CC_STREAM_OK &&
		  b.epsilon == 0 && b.delta == 0 && !b.vacuous, "zero: %g %g", b.epsilon, b.delta);
	CHECK(cc_streaming_composition(0.1, 0.01, 0.2, 100, &b) == CC_STREAM_OK &&
		  b.delta == 1 && b.vacuous, "t delta_max = 1: vacuous");
	CHECK(cc_streaming_composition(0.1, 0.01, 0.2, 99, &b) == CC_STREAM_OK &&
		  b.delta < 1 && !b.vacuous, "t delta_max = 0.99");
	CHECK(cc_streaming_composition(1, 0, 1e300, INT64_MAX, &b) == CC_STREAM_OK &&
		  isinf(b.epsilon) && b.vacuous, "overflow to infinity: vacuous");

	CHECK(cc_streaming_composition(-0.1, 0, 1, 2, &b) == CC_STREAM_BAD_EPSILON, "negative epsilon");
	CHECK(cc_streaming_composition(NAN, 0, 1, 2, &b) == CC_STREAM_BAD_EPSILON, "NaN epsilon");
	CHECK(cc_streaming_composition(INFINITY, 0, INFINITY, 2, &b) == CC_STREAM_BAD_EPSILON,
		  "infinite epsilon");
	CHECK(cc_streaming_composition(1, -1e-9, 1, 2, &b) == CC_STREAM_BAD_DELTA, "negative delta");
	CHECK(cc_streaming_composition(1, 1.5, 1, 2, &b) == CC_STREAM_BAD_DELTA, "delta above 1");
	CHECK(cc_streaming_composition(1, NAN, 1, 2, &b) == CC_STREAM_BAD_DELTA, "NaN delta");
	CHECK(cc_streaming_composition(1, 0, 0.5, 2, &b) == CC_STREAM_BAD_GAMMA,
		  "gamma below epsilon_max");
	CHECK(cc_streaming_composition(1, 0, INFINITY, 2, &b) == CC_STREAM_BAD_GAMMA,
		  "infinite gamma");
	CHECK(cc_streaming_composition(1, 0, 1, 0, &b) == CC_STREAM_BAD_STEPS, "zero steps");
	CHECK(cc_streaming_composition(1, 0, 1, INT64_MIN, &b) == CC_STREAM_BAD_STEPS,
		  "negative steps");
}

/* The per-step epsilon of a release from its privacy curve. */
static void
test_step_epsilon(void)
{
	cc_cost		pure = cc_pure_cost(CC_EPSILON_UNITS_PER_ONE);
	double		e,
				rr;

	CHECK(cc_stream_step_epsilon(pure, 0, NULL, &e) == CC_STREAM_OK &&
		  fabs(e - 1) < 1e-9, "epsilon 1 at delta 0: %.12f", e);
	/* randomized response: delta(e') = (e^1 - e^e') / (1 + e^1) */
	rr = log(exp(1) - 0.1 * (1 + exp(1)));
	CHECK(cc_stream_step_epsilon(pure, 0.1, NULL, &e) == CC_STREAM_OK &&
		  e >= rr * (1 - 1e-12) && e < rr + 1e-3, "epsilon 1 at delta 0.1: %.9f, %.9f", e, rr);
	CHECK(cc_stream_step_epsilon(pure, 1.5, NULL, &e) == CC_STREAM_BAD_DELTA, "delta above 1");
}

void
test_streaming_composition(void)
{
	test_bound_arithmetic();
	test_step_epsilon();
	test_theorem_on_streams();
}
