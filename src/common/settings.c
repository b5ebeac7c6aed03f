/*
 * settings.c
 *		The contcount.* configuration parameters.
 *
 * IDENTIFICATION
 *	  src/common/settings.c
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_db_role_setting.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "common/seal.h"
#include "common/settings.h"

char	   *contcount_ledger = NULL;
/* where contcount_ledger's value came from (kept by its hooks) */
static GucSource ledger_source = PGC_S_DEFAULT;
int			contcount_max_ledgers = 1000;
int			contcount_max_blocks = 10000;
int			contcount_max_counters = 100;
char	   *contcount_database = NULL;
int			contcount_max_ledgers_per_role = 100;
int			contcount_max_blocks_per_ledger = 5000;
int			contcount_max_counters_per_role = 25;
bool		contcount_replay_legacy_wal = true;
bool		contcount_write_legacy_wal_id = false;
double		contcount_max_epsilon_per_statement = 0;
double		contcount_max_rho_per_statement = 0;
bool		contcount_step_worker = false;

/*
 * Each role's (or ledger's) share of the server-wide room, so that one role
 * cannot fill what every database shares.  PGC_SUSET: a superuser sets them
 * for the server, or per role with ALTER ROLE ... SET to give one role more;
 * a role cannot raise its own.  Checked where the room is taken, so they
 * need no server start.  See docs/fair-shares.md.
 */
static void
shares_define(void)
{
	DefineCustomIntVariable("contcount.max_ledgers_per_role",
							"Most live privacy budget ledgers a role that is not a superuser may have created, in all databases.",
							"A dropped ledger no longer counts.",
							&contcount_max_ledgers_per_role,
							100, 0, 1000000,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("contcount.max_blocks_per_ledger",
							"Most blocks of per-block budgets one ledger may hold.",
							"Retired blocks count too, until their ledger is dropped.",
							&contcount_max_blocks_per_ledger,
							5000, 0, 10000000,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("contcount.max_counters_per_role",
							"Most counters a role that is not a superuser may own.",
							NULL,
							&contcount_max_counters_per_role,
							25, 0, 100000,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);
}

/*
 * Records written under 128 that no node could replay would stop crash
 * recovery and every standby: the test switch needs the legacy reader.
 */
static bool
check_write_legacy(bool *newval, void **extra pg_attribute_unused(), GucSource source pg_attribute_unused())
{
	if (!*newval || contcount_replay_legacy_wal)
		return true;
	GUC_check_errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
	GUC_check_errdetail("Records under resource manager id 128 are replayed only with contcount.replay_legacy_wal on.");
	return false;
}

/*
 * The resource manager id of 0.5's WAL records (src/ledger/store_internal.h):
 * whether it is registered, so that its records replay, and a developer's
 * switch that writes records under it, since the tests of that replay
 * cannot build 0.5.  The switch is a superuser's, hidden from SHOW ALL and
 * the sample file, and refused in postgresql.conf and by ALTER SYSTEM, so
 * that it is not left on for a server.  Defined at server start only, as
 * the store is.
 */
static void
legacy_wal_define(void)
{
	DefineCustomBoolVariable("contcount.replay_legacy_wal",
							 "Replays the ledger's WAL records written by contcount 0.5 and earlier (resource manager id 128).",
							 "Turn off, to leave id 128 to another extension, only once no WAL or base backup from before 0.6 will be replayed on this node.",
							 &contcount_replay_legacy_wal,
							 true,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("contcount.write_legacy_wal_id",
							 "Writes this session's ledger records under resource manager id 128, as contcount 0.5 did; for tests only.",
							 NULL,
							 &contcount_write_legacy_wal_id,
							 false,
							 PGC_SUSET,
							 GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE | GUC_DISALLOW_IN_FILE,
							 check_write_legacy, NULL, NULL);
}

/*
 * What one top-level statement may spend in all (docs/operations.md): a
 * GROUP BY pays for every group, and the number of groups is the data's.
 * PGC_SUSET, so that a superuser sets them per role or database and the role
 * cannot raise its own; 0: no cap.  Checked where releases are charged
 * (src/ledger/statement_cap.c).
 */
static void
statement_caps_define(void)
{
	DefineCustomRealVariable("contcount.max_epsilon_per_statement",
							 "Most epsilon the releases of one statement may cost in all; 0: no cap.",
							 "Pure (Laplace) releases count their epsilon; a release beyond it is refused.",
							 &contcount_max_epsilon_per_statement,
							 0, 0, 1e9,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomRealVariable("contcount.max_rho_per_statement",
							 "Most rho the releases of one statement may cost in all; 0: no cap.",
							 "Gaussian (zCDP) releases count their rho; a release beyond it is refused.",
							 &contcount_max_rho_per_statement,
							 0, 0, 1e9,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
}

/*
 * The check hook keeps the source of each value in its extra (malloc'd, as
 * guc.c frees it), which the assign hook receives with the value in force:
 * the source of a value restored at the end of a transaction is restored
 * with it.
 */
static bool
check_ledger(char **newval pg_attribute_unused(), void **extra, GucSource source)
{
	GucSource  *from = malloc(sizeof(GucSource));

	if (from == NULL)
		return false;
	*from = source;
	*extra = from;
	return true;
}

static void
assign_ledger(const char *newval pg_attribute_unused(), void *extra)
{
	ledger_source = extra ? *(GucSource *) extra : PGC_S_DEFAULT;
}

/* The value of contcount.ledger in a setconfig array, palloc'd, or NULL. */
static char *
ledger_item(ArrayType *setconfig)
{
	static const char prefix[] = "contcount.ledger=";
	Datum	   *items;
	int			n;
	char	   *value = NULL;

	deconstruct_array(setconfig, TEXTOID, -1, false, TYPALIGN_INT, &items, NULL, &n);
	for (int i = 0; i < n && value == NULL; i++)
	{
		char	   *item = TextDatumGetCString(items[i]);

		if (pg_strncasecmp(item, prefix, sizeof(prefix) - 1) == 0)
			value = pstrdup(item + sizeof(prefix) - 1);
		pfree(item);
	}
	return value;
}

/*
 * contcount.ledger as pg_db_role_setting holds it now for (database, role),
 * InvalidOid for all, or NULL.  The catalog snapshot is fresh: this catalog
 * invalidates it at every change.
 */
static char *
stored_ledger(Relation settings, Oid database, Oid role)
{
	ScanKeyData keys[2];
	SysScanDesc scan;
	HeapTuple	tuple;
	char	   *value = NULL;
	bool		isnull;
	Datum		setconfig;

	ScanKeyInit(&keys[0], Anum_pg_db_role_setting_setdatabase, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(database));
	ScanKeyInit(&keys[1], Anum_pg_db_role_setting_setrole, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(role));
	scan = systable_beginscan(settings, DbRoleSettingDatidRolidIndexId, true, NULL, 2, keys);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		setconfig = heap_getattr(tuple, Anum_pg_db_role_setting_setconfig,
								 RelationGetDescr(settings), &isnull);
		if (!isnull)
			value = ledger_item(DatumGetArrayTypeP(setconfig));
	}
	systable_endscan(scan);
	return value;
}

/*
 * contcount.ledger as the role's and database's settings give it now, for a
 * new connection of the session's login, in the order PostgreSQL applies
 * them: the role in this database, the role, the database, every role.
 * NULL when none names a ledger.
 */
static char *
stored_ledger_now(void)
{
	static const bool database_level[4] = {true, false, true, false};
	static const bool role_level[4] = {true, true, false, false};
	Relation	settings;
	char	   *value = NULL;

	settings = table_open(DbRoleSettingRelationId, AccessShareLock);
	for (int i = 0; i < 4 && value == NULL; i++)
		value = stored_ledger(settings, database_level[i] ? MyDatabaseId : InvalidOid,
							  role_level[i] ? GetAuthenticatedUserId() : InvalidOid);
	table_close(settings, AccessShareLock);
	return value;
}

/*
 * A session takes its role's and database's settings once, at connection:
 * a pooled connection would go on spending a ledger the DBA has since taken
 * from the role.  So a value that did not come from the session itself (SET
 * by a superuser, or the client's options) is read again, once a
 * transaction (a few microseconds).  With no setting naming a ledger, the
 * session's value stays if it came from the server's configuration or its
 * default, and no ledger is selected if it came from a setting since
 * removed.
 */
const char *
settings_ledger(void)
{
	static LocalTransactionId read_in = InvalidLocalTransactionId;
	static char *stored = NULL;

	if (ledger_source > PGC_S_DATABASE_USER || !OidIsValid(MyDatabaseId))
		return contcount_ledger;
	if (read_in != MyProc->lxid)
	{
		SealedUsage usage;
		char	   *value;

		/* the catalog read is contcount's, not the caller's to see in EXPLAIN */
		seal_usage_save(&usage);
		value = stored_ledger_now();
		seal_usage_restore(&usage);
		if (stored != NULL)
			pfree(stored);
		stored = value ? MemoryContextStrdup(TopMemoryContext, value) : NULL;
		read_in = MyProc->lxid;
	}
	if (stored != NULL)
		return stored;
	return ledger_source >= PGC_S_GLOBAL ? NULL : contcount_ledger;
}

void
settings_define(bool preloading)
{
	/*
	 * PGC_SUSET: only a superuser, or ALTER ROLE/DATABASE ... SET run by one,
	 * decides which budget a role spends.  An analyst cannot switch ledgers.
	 */
	DefineCustomStringVariable("contcount.ledger",
							   "Privacy budget ledger that pays for this session's releases.",
							   "Set by a superuser per role or database, with ALTER ROLE or ALTER DATABASE ... SET.",
							   &contcount_ledger,
							   "",
							   PGC_SUSET,
							   0,
							   check_ledger, assign_ledger, NULL);
	shares_define();
	statement_caps_define();
	/* server-start settings can only be defined at server start */
	if (preloading)
	{
		DefineCustomIntVariable("contcount.max_ledgers",
								"Most privacy budget ledgers the server can hold, in all databases.",
								NULL,
								&contcount_max_ledgers,
								1000, 1, 1000000,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);
		DefineCustomIntVariable("contcount.max_blocks",
								"Most blocks of per-block budgets the server can hold, in all databases.",
								"Retired blocks count too: each keeps what it spent.",
								&contcount_max_blocks,
								10000, 1, 10000000,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);
		DefineCustomIntVariable("contcount.max_counters",
								"Most counters the server can hold.",
								NULL,
								&contcount_max_counters,
								100, 1, 100000,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);
		DefineCustomStringVariable("contcount.database",
								   "Database whose counters the step worker closes.",
								   "Counters can only be created in this database.",
								   &contcount_database,
								   "postgres",
								   PGC_POSTMASTER,
								   0,
								   NULL, NULL, NULL);
		legacy_wal_define();
	}
	/*
	 * Only at server start: loaded later by a trigger, the server-start
	 * settings are not defined, and reserving the prefix would warn the
	 * application about them on its first counted insert.
	 */
	if (preloading)
		MarkGUCPrefixReserved("contcount");
}
