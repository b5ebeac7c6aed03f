/*
 * key_rows.h
 *		The rows of each key that a step of a counter over a dimension takes:
 *		from the source's log (counter_keys.c) and from its shards
 *		(shard_counters.c), which both fill them.
 */
#ifndef CONTCOUNT_KEY_ROWS_H
#define CONTCOUNT_KEY_ROWS_H

/* A key's rows in a step, bounded. */
typedef struct KeyRows
{
	char	   *key;
	int64		rows;
} KeyRows;

/* What a step of a counter over a dimension took: each key's rows, bounded. */
typedef struct KeyTaken
{
	int			n;
	KeyRows    *rows;			/* sorted by key (strcmp), only keys with rows */
} KeyTaken;

#endif							/* CONTCOUNT_KEY_ROWS_H */
