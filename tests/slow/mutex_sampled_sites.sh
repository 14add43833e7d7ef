#!/usr/bin/env bash
# tests/integration/mutex_sampled.sh with the per-site check of
# LOCKBLAME_MUTEX=sampled too: each site's blame within 15% of the total
# CPU time of the contended holds, which the holders' samples see. In the
# slow tier: it holds on a quiet machine; beside busy processes the
# samples of a preempted holder can be owed to the other site (20-30% of
# the total off in runs beside two busy loops).
MUTEX_SAMPLED_SITE_MODES="sampled auto exact" exec bash "$(dirname "$0")/../integration/mutex_sampled.sh"
