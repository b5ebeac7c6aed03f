/*
 * shmem.h
 *		contcount's shared memory: the ledger store's sums and the counters.
 */
#ifndef CONTCOUNT_SHMEM_H
#define CONTCOUNT_SHMEM_H

/* From _PG_init, under shared_preload_libraries. */
extern void shmem_install(void);

#endif							/* CONTCOUNT_SHMEM_H */
