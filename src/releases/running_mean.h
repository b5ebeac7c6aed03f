/*
 * running_mean.h
 *		One stream of the continual mean, as SQL feeds it: the parameters of a
 *		contcount.mean_mechanism checked, units of any hashable type mapped to
 *		the core's record slots, samples pushed, releases read as
 *		contcount.mean_release fields.  Used by the running_mean aggregate and
 *		by source_running_mean (src/sources/source_mean.c).
 */
#ifndef CONTCOUNT_RUNNING_MEAN_H
#define CONTCOUNT_RUNNING_MEAN_H

#include "fmgr.h"

#include "core/continual_mean.h"

/* The parameters of a call, checked. */
typedef struct MeanSpec
{
	cc_mean_plan plan;
	double		lo;
	double		hi;
	char	   *ledger;			/* NULL: contcount.ledger */
} MeanSpec;

/* What every stream of one call shares: the spec, the plan's state, the units' type. */
typedef struct MeanSite MeanSite;

/* One stream: its state, its units' records and their slots. */
typedef struct MeanStream MeanStream;

/* contcount.mean_release's fields: t, mean, covered, stddev, bound */
#define MEAN_RELEASE_NATTS 5

/*
 * The spec of a contcount.mean_mechanism value, checked (22023, 22004), in
 * the current memory context.
 */
extern void mean_spec_from_composite(Datum mechanism, MeanSpec *spec);

/*
 * The shared part of the streams of spec over units of unit_type (hashed and
 * compared under collation; 42883 if the type cannot be), in context.
 */
extern MeanSite *mean_site_make(const MeanSpec *spec, Oid unit_type, Oid collation,
								MemoryContext context);
extern const MeanSpec *mean_site_spec(const MeanSite *site);

/* A new stream, in context, which its records and units grow in. */
extern MeanStream *mean_stream_start(const MeanSite *site, MemoryContext context);

/*
 * Push sample x (clamped to [lo, hi]; NaN refused, 22023) of unit; the
 * core's refusals as errors (54000 past the horizon or the declared units).
 */
extern void mean_stream_push(MeanStream *ms, double x, Datum unit);

/* The release after the samples pushed so far, as contcount.mean_release's fields. */
extern void mean_stream_release(const MeanStream *ms, Datum *values, bool *nulls);

#endif							/* CONTCOUNT_RUNNING_MEAN_H */
