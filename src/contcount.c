/*
 * contcount.c
 *		Module entry point.
 */
#include "postgres.h"

#include "fmgr.h"

PG_MODULE_MAGIC;
