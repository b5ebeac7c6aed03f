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

#endif							/* CONTCOUNT_ARGS_H */
