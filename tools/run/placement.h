/* SPDX-License-Identifier: GPL-2.0 */
/* percs-run: which HFI each rank's window goes on. */
#ifndef PERCS_RUN_PLACEMENT_H
#define PERCS_RUN_PLACEMENT_H

enum run_policy { RUN_SPREAD, RUN_PACKED, RUN_MAP };

struct run_place {
	unsigned int hub;
	unsigned int unit;
};

/**
 * run_place() - choose every rank's HFI
 * @policy: RUN_SPREAD, RUN_PACKED or RUN_MAP
 * @map: RUN_MAP's file: line i (blank lines and # comments skipped) is
 *	"HUB UNIT" for rank i
 * @n: ranks
 * @out: @n places
 *
 * Asks HFI 0 of hub 0 for the system's shape and checks every place
 * against it.  Prints why on failure.
 * Return: 0; 2 for a bad map file; 1 when the system cannot be read.
 */
int run_place(enum run_policy policy, const char *map, unsigned int n,
	      struct run_place *out);

#endif /* PERCS_RUN_PLACEMENT_H */
