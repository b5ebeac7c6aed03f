/*
 * release.h
 *		A release as a row of type contcount.release: t, noisy_count,
 *		stddev, bound; and the items array the series functions read.
 */
#ifndef CONTCOUNT_RELEASE_H
#define CONTCOUNT_RELEASE_H

#include "fmgr.h"
#include "nodes/execnodes.h"
#include "utils/arrayaccess.h"

#include "core/mechanism.h"

#define RELEASE_NATTS 4

/*
 * The items of a series function: argument argno, a one-dimensional bigint
 * array, whose nulls count as 0.  release_items_open checks it.
 */
typedef struct ReleaseItems
{
	int			n;
	array_iter	iter;
} ReleaseItems;

extern void release_items_open(FunctionCallInfo fcinfo, int argno, ReleaseItems *items);

/* Item i, called for i = 0 .. n - 1 in turn. */
extern int64 release_items_next(ReleaseItems *items, int i);

/* Add the release as a row to a materialized set function's result. */
extern void release_put(ReturnSetInfo *rsinfo, const cc_release *release);

/*
 * Post-process a whole released series, in place, into the nearest
 * non-negative non-decreasing one (the option monotone): reads only the
 * released values, so it costs nothing.
 */
extern void release_monotone(cc_release *series, int64 n);

/* How a function returning contcount.release builds its rows; in fn_mcxt. */
typedef struct ReleaseRowType ReleaseRowType;
extern ReleaseRowType *release_row_type(FunctionCallInfo fcinfo);

/* The release as a row, in the current memory context. */
extern Datum release_row(const ReleaseRowType *type, const cc_release *release);

#endif							/* CONTCOUNT_RELEASE_H */
