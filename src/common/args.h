/*
 * args.h
 *		Reading the arguments of contcount's SQL functions.
 */
#ifndef CONTCOUNT_ARGS_H
#define CONTCOUNT_ARGS_H

#include "fmgr.h"
#include "datatype/timestamp.h"

/* A text argument as a C string; 22004 naming what if it is null. */
extern char *arg_text(FunctionCallInfo fcinfo, int argno, const char *what);

/* An argument that must not be null (22004 naming what), as a Datum. */
extern Datum arg_required(FunctionCallInfo fcinfo, int argno, const char *what);

/*
 * A length of time as microseconds: days (of 24 hours), hours, minutes and
 * seconds, at least one second; months are not all the same length.  22023
 * naming what otherwise.
 */
extern int64 interval_usecs(Interval *interval, const char *what);

/* The same for a step of a release or counter. */
extern int64 step_usecs(Interval *step);

/*
 * The end of step k of a schedule that starts at start with steps of
 * step_usecs (start + k * step_usecs), into *end; false if it is not a
 * timestamp (beyond the range, or beyond int64).
 */
extern bool step_end(TimestampTz start, int64 k, int64 step_usecs, TimestampTz *end);

#endif							/* CONTCOUNT_ARGS_H */
