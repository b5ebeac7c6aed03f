/*
 * store_room.c
 *		The room of the ledger store's shared tables: refusing a new ledger or
 *		block when the server, a role or a ledger holds its share, and saying who
 *		holds the room as far as the caller may see.
 *
 * What it owns: the refusals and their details; the tables are
 * ledger_store.c's.  Each function runs under StoreShared->lock as its
 * comment says (the protocol is at the top of ledger_store.c); catalog
 * lookups (role names) are made outside it.
 *
 * IDENTIFICATION
 *	  src/ledger/store_room.c
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/builtins.h"

#include "common/settings.h"
#include "ledger/ledger_store.h"
#include "ledger/store_internal.h"

/*
 * Who holds the room of a shared table, for a refusal: keys (roles or
 * ledgers, with a ledger's database) and how many entries each holds.
 */
typedef struct RoomHolder
{
	int64		key;
	int64		count;
	Oid			database;
} RoomHolder;

/* Count one more entry of key among the n holders; returns the new n. */
static int
count_holder(RoomHolder *holders, int n, int64 key)
{
	for (int i = 0; i < n; i++)
		if (holders[i].key == key)
		{
			holders[i].count++;
			return n;
		}
	holders[n].key = key;
	holders[n].count = 1;
	holders[n].database = InvalidOid;
	return n + 1;
}

static int
holder_order(const void *a, const void *b)
{
	const RoomHolder *x = a;
	const RoomHolder *y = b;

	return x->count > y->count ? -1 : x->count < y->count;
}

/*
 * "lead key (count), ...", the five that hold most, for a superuser: roles
 * by name (a catalog lookup: not under the store lock), or ledgers by id
 * and database.
 */
static char *
room_detail(const char *lead, const RoomHolder *holders, int n, bool roles)
{
	StringInfoData detail;

	initStringInfo(&detail);
	appendStringInfoString(&detail, lead);
	for (int i = 0; i < n && i < 5; i++)
	{
		const char *name = roles ? GetUserNameFromId((Oid) holders[i].key, true) : NULL;

		if (roles)
			appendStringInfo(&detail, "%s role %s (" INT64_FORMAT ")", i > 0 ? "," : "",
							 name ? quote_identifier(name) : "(dropped)", holders[i].count);
		else
			appendStringInfo(&detail, "%s ledger id " INT64_FORMAT " of database %u (" INT64_FORMAT ")",
							 i > 0 ? "," : "", holders[i].key, holders[i].database, holders[i].count);
	}
	appendStringInfoString(&detail, n > 5 ? ", and others." : ".");
	return detail.data;
}

/* A role's name for a message, or "?".  Not under the store lock. */
const char *
store_role_name(Oid role)
{
	const char *name = GetUserNameFromId(role, true);

	return name ? name : "?";
}

/* How many ledgers role created that the store holds.  Lock held. */
static int64
role_ledgers(Oid role)
{
	HASH_SEQ_STATUS scan;
	LedgerSum  *sum;
	int64		n = 0;

	hash_seq_init(&scan, store_sums);
	while ((sum = hash_seq_search(&scan)) != NULL)
		n += sum->created_by == role;
	return n;
}

/* The roles that created the store's ledgers, most first.  Lock held. */
static int
ledger_room_holders(RoomHolder **holders)
{
	HASH_SEQ_STATUS scan;
	LedgerSum  *sum;
	int			n = 0;

	*holders = palloc_array(RoomHolder, hash_get_num_entries(store_sums) + 1);
	hash_seq_init(&scan, store_sums);
	while ((sum = hash_seq_search(&scan)) != NULL)
		n = count_holder(*holders, n, sum->created_by);
	qsort(*holders, n, sizeof(RoomHolder), holder_order);
	return n;
}

/*
 * Refuse a new ledger when the server holds contcount.max_ledgers, saying
 * who created them as far as the caller may see: a superuser, the five
 * roles that created most; any other role, its own count.  Exclusive lock
 * held; released before the message is made (it looks names up).
 */
void
store_require_ledger_room(Oid role, bool superuser)
{
	RoomHolder *holders = NULL;
	int			n = 0;
	int64		own;

	if (hash_get_num_entries(store_sums) < contcount_max_ledgers)
		return;
	if (superuser)
		n = ledger_room_holders(&holders);
	own = role_ledgers(role);
	LWLockRelease(store_state->lock);
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("the server already holds contcount.max_ledgers = %d ledgers",
					contcount_max_ledgers),
			 superuser ? errdetail("%s", room_detail("Created by", holders, n, true)) :
			 errdetail("Role \"%s\" created " INT64_FORMAT " of them.", store_role_name(role), own),
			 errhint("Drop a ledger, or raise contcount.max_ledgers and restart the server.")));
}

/*
 * A role that is not a superuser holds at most
 * contcount.max_ledgers_per_role live ledgers, in all databases: its share
 * of contcount.max_ledgers.  Lock held.
 */
void
store_require_ledger_share(Oid role, const char *name)
{
	int64		held = role_ledgers(role);

	if (held >= contcount_max_ledgers_per_role)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("role \"%s\" already holds contcount.max_ledgers_per_role = %d ledgers",
						name, contcount_max_ledgers_per_role),
				 errdetail("It created " INT64_FORMAT " ledgers that are not dropped, in all databases.", held),
				 errhint("Drop a ledger it created, or ask a superuser to raise contcount.max_ledgers_per_role.")));
}

/* How many blocks ledger holds, retired ones included.  Lock held. */
static int64
ledger_blocks(int64 ledger)
{
	HASH_SEQ_STATUS scan;
	BlockSum   *block;
	int64		n = 0;

	hash_seq_init(&scan, store_block_sums);
	while ((block = hash_seq_search(&scan)) != NULL)
		n += block->key.ledger == ledger;
	return n;
}

/*
 * Who holds the blocks' room, as far as the caller may see: a superuser,
 * the five ledgers that hold most (by id, as contcount.ledger shows it, and
 * database); any other role, the count of the ledger it charges.  Lock
 * held: no catalog access.
 */
static char *
block_holders(int64 ledger, const char *name, bool superuser)
{
	HASH_SEQ_STATUS scan;
	BlockSum   *block;
	RoomHolder *holders;
	int			n = 0;

	if (!superuser)
		return psprintf("Ledger \"%s\" holds " INT64_FORMAT " of them.", name, ledger_blocks(ledger));
	holders = palloc_array(RoomHolder, hash_get_num_entries(store_block_sums) + 1);
	hash_seq_init(&scan, store_block_sums);
	while ((block = hash_seq_search(&scan)) != NULL)
		n = count_holder(holders, n, block->key.ledger);
	for (int i = 0; i < n; i++)
	{
		LedgerSum  *sum = hash_search(store_sums, &holders[i].key, HASH_FIND, NULL);

		holders[i].database = sum ? sum->database : InvalidOid;
	}
	qsort(holders, n, sizeof(RoomHolder), holder_order);
	return room_detail("Held by", holders, n, false);
}

/*
 * Room for fresh more blocks of ledger: within its share,
 * contcount.max_blocks_per_ledger, and within the server's,
 * contcount.max_blocks; else 53400, saying who holds the room.  Lock held.
 */
void
store_require_block_room(int64 ledger, const char *name, int64 fresh, bool superuser)
{
	int64		held = ledger_blocks(ledger);

	if (held + fresh > contcount_max_blocks_per_ledger)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("ledger \"%s\" would hold more than contcount.max_blocks_per_ledger = %d blocks",
						name, contcount_max_blocks_per_ledger),
				 errdetail("It holds " INT64_FORMAT " blocks, retired ones included; the release needs "
						   INT64_FORMAT " more.  No block was charged.", held, fresh),
				 errhint("Release a shorter range of time, or ask a superuser to raise "
						 "contcount.max_blocks_per_ledger.")));
	if (hash_get_num_entries(store_block_sums) + fresh > contcount_max_blocks)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("the server holds room for contcount.max_blocks = %d blocks", contcount_max_blocks),
				 errdetail("%s", block_holders(ledger, name, superuser)),
				 errhint("Raise contcount.max_blocks and restart the server.")));
}
