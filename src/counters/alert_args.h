/*
 * alert_args.h
 *		What every kind of alert checks when it is created: its arguments and
 *		the room its creator holds.
 */
#ifndef CONTCOUNT_ALERT_ARGS_H
#define CONTCOUNT_ALERT_ARGS_H

#include "fmgr.h"

/* The alerts a role that is not a superuser may hold, of every kind. */
#define ALERTS_PER_ROLE 100

/* A text argument: null is refused (22004, naming what). */
extern char *alert_text_arg(FunctionCallInfo fcinfo, int argno, const char *what);

/*
 * The channel: a name NOTIFY takes (22023 otherwise), checked at creation so
 * that no step fails on it.
 */
extern char *alert_channel_arg(FunctionCallInfo fcinfo, int argno);

/*
 * A role that is not a superuser holds at most ALERTS_PER_ROLE alerts
 * (53400).  Owner scope.
 */
extern void alert_require_room(Oid caller);

/*
 * The key argument (argno) of an alert on the counter (id, named counter):
 * for a counter over a dimension, one its dimension declares (0A000 without
 * one, 42704 if it declares no such key); for one without, none (NULL; 42704
 * for any).  Owner scope.
 */
extern text *alert_key_arg(FunctionCallInfo fcinfo, int argno, const char *counter, int64 id);

#endif							/* CONTCOUNT_ALERT_ARGS_H */
