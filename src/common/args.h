/*
 * args.h
 *		Reading the arguments of contcount's SQL functions.
 */
#ifndef CONTCOUNT_ARGS_H
#define CONTCOUNT_ARGS_H

#include "fmgr.h"

/* A text argument as a C string; 22004 naming what if it is null. */
extern char *arg_text(FunctionCallInfo fcinfo, int argno, const char *what);

#endif							/* CONTCOUNT_ARGS_H */
