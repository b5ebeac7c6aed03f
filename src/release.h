/*
 * release.h
 *		A release as a row of type contcount.release: t, noisy_count,
 *		stddev, bound.
 */
#ifndef CONTCOUNT_RELEASE_H
#define CONTCOUNT_RELEASE_H

#include "fmgr.h"

#include "mechanism.h"

#define RELEASE_NATTS 4

extern void release_values(const cc_release *release, Datum *values, bool *nulls);

/* The row type of a function returning contcount.release, in fn_mcxt. */
extern TupleDesc release_tupdesc(FunctionCallInfo fcinfo);

extern Datum release_datum(TupleDesc tupdesc, const cc_release *release);

#endif							/* CONTCOUNT_RELEASE_H */
