/*
 * release.h
 *		A release as a row of type contcount.release: t, noisy_count,
 *		stddev, bound.
 */
#ifndef CONTCOUNT_RELEASE_H
#define CONTCOUNT_RELEASE_H

#include "fmgr.h"

#include "core/mechanism.h"

#define RELEASE_NATTS 4

extern void release_values(const cc_release *release, Datum *values, bool *nulls);

/* How a function returning contcount.release builds its rows; in fn_mcxt. */
typedef struct ReleaseRowType ReleaseRowType;
extern ReleaseRowType *release_row_type(FunctionCallInfo fcinfo);

/* The release as a row, in the current memory context. */
extern Datum release_row(const ReleaseRowType *type, const cc_release *release);

#endif							/* CONTCOUNT_RELEASE_H */
