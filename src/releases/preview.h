/*
 * preview.h
 *		Free previews, as the previews of releases from sources use them.
 */
#ifndef CONTCOUNT_PREVIEW_H
#define CONTCOUNT_PREVIEW_H

#include "fmgr.h"

#include "core/mechanism.h"
#include "ledger/ledger.h"

/* Most steps one preview shows: a table, not a stream. */
#define PREVIEW_MAX_STEPS 1000000

/* 54000 for a preview of more than PREVIEW_MAX_STEPS steps. */
extern void preview_require_steps(int64 steps);

/*
 * The result of a set-returning function (t, stddev, bound): steps 1 ..
 * steps of a release with prepared parameters, as it would show them.
 */
extern void preview_put_steps(FunctionCallInfo fcinfo, const cc_params *params, int64 steps);

/*
 * The first columns of a preview of a charge, values[0..6] and nulls[0..6]:
 * the mechanism, its epsilon or rho, and the paying ledger's name,
 * accounting, charge and releases left.
 */
extern void preview_charge_columns(const cc_params *params, const LedgerPreview *charge,
								   Datum *values, bool *nulls);

#endif							/* CONTCOUNT_PREVIEW_H */
