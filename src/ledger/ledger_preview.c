/*
 * ledger_preview.c
 *		What a ledger can still pay for: releases_left(), and the charge a
 *		preview shows (ledger_preview_charge).  Nothing here writes.
 *
 * A ledger's remaining budget is read as committed now, as a charge reads
 * it, and only for a caller that sees the ledger in contcount.ledgers: the
 * answer is what that view's remaining column says, divided by what one
 * release costs the ledger in its accounting (a pure release on a zCDP
 * ledger: its epsilon^2 / 2, rounded up, as it is charged).  It says
 * nothing of contcount.max_epsilon_per_statement, nor of a source's ledger
 * or blocks, which a release from a source pays too.
 *
 * IDENTIFICATION
 *	  src/ledger/ledger_preview.c
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "common/report.h"
#include "core/mechanism.h"
#include "ledger/ledger.h"

/* What one release of cost charges the ledger, and how many it can pay. */
static void
preview_charge(const char *ledger, bool by_source, cc_cost cost, LedgerPreview *preview)
{
	bool		shown;
	uint64		remaining = ledger_remaining(ledger, by_source, &preview->name,
											 &preview->accounting, &shown);

	/* ZB003 for a release the ledger cannot account for, as the charge */
	preview->units = ledger_store_release_units(preview->accounting, preview->name, cost);
	preview->releases_left = shown ? (int64) (remaining / Max(preview->units, 1)) : -1;
}

void
ledger_preview_charge(const char *ledger, cc_cost cost, LedgerPreview *preview)
{
	preview_charge(ledger, false, cost, preview);
}

void
ledger_preview_source_charge(const char *source_ledger, cc_cost cost, LedgerPreview *preview)
{
	preview_charge(source_ledger, true, cost, preview);
}

/* The cost of one release of epsilon or rho, exactly one of them given. */
static cc_cost
cost_of(NullableDatum epsilon, NullableDatum rho)
{
	uint64_t	units;
	cc_status	status;

	if (epsilon.isnull == rho.isnull)
		ereport(ERROR,
				(errcode(epsilon.isnull ? ERRCODE_NULL_VALUE_NOT_ALLOWED : ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("releases_left takes epsilon or rho, one of them"),
				 errhint("Give epsilon for a pure (Laplace) release, rho for a Gaussian (zCDP) one.")));
	if (!epsilon.isnull)
	{
		status = cc_epsilon_units(DatumGetFloat8(epsilon.value), &units);
		if (status != CC_OK)
			report_status(status, NULL, 0);
		return cc_pure_cost(units);
	}
	status = cc_rho_units(DatumGetFloat8(rho.value), &units);
	if (status != CC_OK)
		report_status(status, NULL, 0);
	return cc_zcdp_cost(units);
}

/*
 * releases_left(epsilon, rho, ledger): how many releases of that cost the
 * ledger (NULL: contcount.ledger's) can still pay for.  Charges nothing.
 */
PG_FUNCTION_INFO_V1(contcount_releases_left);
Datum
contcount_releases_left(PG_FUNCTION_ARGS)
{
	cc_cost		cost = cost_of(fcinfo->args[0], fcinfo->args[1]);
	char	   *ledger = PG_ARGISNULL(2) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(2));
	LedgerPreview preview;

	ledger_preview_charge(ledger, cost, &preview);
	PG_RETURN_INT64(preview.releases_left);
}
