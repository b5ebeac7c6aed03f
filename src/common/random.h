/*
 * random.h
 *		The server's random source for the core's samplers.
 */
#ifndef CONTCOUNT_RANDOM_H
#define CONTCOUNT_RANDOM_H

#include "core/noise.h"

extern cc_rng *strong_rng(void);

#endif							/* CONTCOUNT_RANDOM_H */
