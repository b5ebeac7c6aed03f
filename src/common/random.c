/*
 * random.c
 *		Random words for the samplers, from pg_strong_random only.
 *
 * Words are read in batches to spread the cost of each call.  The batch is
 * tied to the process that read it: a forked child must never reuse its
 * parent's words, or two processes would draw the same noise.  Each batch
 * overwrites the last.  A failure of the strong source is an error; there
 * is no fallback, and setseed()/random() have no part in it.
 *
 * IDENTIFICATION
 *	  src/common/random.c
 */
#include "postgres.h"

#include "miscadmin.h"

#include "common/random.h"

#define BATCH_WORDS 4096

static uint64 batch[BATCH_WORDS];
static int	batch_pid = 0;

static void
refill(cc_rng *rng)
{
	if (!pg_strong_random(batch, sizeof(batch)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate secure random numbers for noise")));
	batch_pid = MyProcPid;
	rng->words = batch;
	rng->next = 0;
	rng->count = BATCH_WORDS;
}

cc_rng *
strong_rng(void)
{
	static cc_rng rng = {.refill = refill};

	/* words and spare bits belong to the process that drew them */
	if (batch_pid != MyProcPid)
	{
		rng.next = rng.count = 0;
		rng.nbits = 0;
	}
	return &rng;
}
