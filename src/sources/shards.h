/*
 * shards.h
 *		Releases over sharded sources: the coordinator's side.
 *
 * A source whose table is hash-partitioned by its unit column keeps each
 * person's rows in one partition.  A partition that is a postgres_fdw
 * foreign table on a server whose `extensions` option lists contcount is a
 * shard: its rows are bounded there, by contcount.shard_bounded_counts()
 * (shard_counts.c), which returns the exact bounded counts to the
 * coordinator's connection user only; the coordinator adds them up, draws
 * the noise once and charges its own ledgers (source.c).
 */
#ifndef CONTCOUNT_SHARDS_H
#define CONTCOUNT_SHARDS_H

#include "access/attnum.h"
#include "datatype/timestamp.h"
#include "nodes/pg_list.h"

/* What a shard is asked: the release's rule, keys, steps and filters. */
typedef struct ShardAsk
{
	Oid			relid;			/* the partitioned table */
	AttrNumber	unit;
	AttrNumber	time;
	AttrNumber	dimension;		/* InvalidAttrNumber: one key of all rows */
	Datum		keys;			/* text[], or 0 without a dimension */
	int			nkeys;
	int32		max_rows;
	int32		max_groups;
	bool		persons;		/* count each unit once a group */
	TimestampTz start;
	int64		step_usec;		/* 0: one step of all rows */
	int64		nsteps;
	int			nfilters;
	const AttrNumber *filters;
	const Datum *filter_keys;	/* text[] each */
	bool		window;			/* a window of blocks: [window_from, window_to) */
	TimestampTz window_from;
	TimestampTz window_to;
} ShardAsk;

/* One shard's call, under way or done; conn NULL before it connects. */
typedef struct ShardCall
{
	Oid			partition;
	char	   *server;
	void	   *conn;			/* a PGconn */
	/*
	 * The step worker's call: a connect_timeout and TCP keepalives of its
	 * own unless the server's options set them (shards.c), so
	 * that a shard that vanished fails the call in seconds, not hours.
	 */
	bool		watchful;
} ShardCall;

/*
 * The partitions of relid when it is hash-partitioned by the unit column
 * alone (the type's default hash operator class, the column's collation),
 * so that each person's rows are all in one of them; NIL otherwise, and the
 * release bounds every row at the coordinator.
 */
extern List *shards_partitions(Oid relid, AttrNumber unit);

/* Is this partition a shard (a foreign table whose server lists contcount)? */
extern bool shards_is_shard(Oid partition);

/*
 * Connect to the shard of call->partition through its foreign server and
 * the user mapping of the current user (the extension's owner, in a
 * release), and send it the ask; the answer is read by shards_collect.
 */
extern void shards_send(ShardCall *call, const ShardAsk *ask);

/*
 * Connect call to the shard of call->partition through its foreign server
 * and the current user's mapping (or PUBLIC's), as shards_send does.
 */
extern void shards_open(ShardCall *call);

/*
 * The same for a server named by its oid: a shard reached when the
 * partition that led to it may be gone (a dropped counter's feeds).
 */
extern void shards_open_server(ShardCall *call, Oid serverid);

/* Send one statement with text parameters (NULL: SQL's null) to an open call. */
extern void shards_send_sql(ShardCall *call, const char *sql, int nparams,
							const char *const *params);

/*
 * Wait for the statement's one row of ncols columns, as text (NULL: SQL's
 * null), and for the statement's end, its commit included: an error there
 * is the call's error, so that a row read is one the shard kept.
 */
extern char **shards_collect_row(ShardCall *call, int ncols);

/*
 * The shard's names of the partition's table and of the unit column of
 * relid (the partitioned table): the foreign table's schema_name,
 * table_name and column_name options, or the local names.
 */
extern void shards_remote_names(Oid relid, Oid partition, AttrNumber unit, char **schema,
								char **table, char **unit_column);

/* Wait for a shard's answer and add its counts (nkeys * nsteps) to counts. */
extern void shards_collect(ShardCall *call, const ShardAsk *ask, int64 *counts);

/* Cancel a call still running and close its connection; nothing if none. */
extern void shards_close(ShardCall *call);

/*
 * The shard's side (shard_counts.c): the shard's table named, if the calling
 * role may read all of its rows (SELECT on it, and no row level security
 * that would hide some from a plain SELECT); 42501 otherwise.
 */
extern Oid	shard_counts_table(const char *schema, const char *table);

#endif							/* CONTCOUNT_SHARDS_H */
