#!/bin/bash
# Interleaved pgbench runs of one successful password grant's statements, before (the lookup, then the session's
# refresh token with the failure count cleared) and after issue 38 (statement L, then statement S), one client,
# prepared statements, each database of its own schema and the project's seed. Two settings: the benchmark's
# throw-away cluster (fsync, synchronous_commit and full_page_writes off) and PostgreSQL's durable defaults.
set -euo pipefail
B=${PGBIN:-/usr/lib/postgresql/15/bin}/pgbench
H=${PGHOST:-/tmp/pgt}; P=${PGPORT:-5499}
for round in 1 2 3 4 5; do
  for mode in bench durable; do
    for set in before after; do
      opts=""; [ $mode = bench ] && opts="-c synchronous_commit=off"
      lat=$(PGOPTIONS="$opts" $B -h $H -p $P -U postgres -n -M prepared -c 1 -T ${SECONDS_PER_RUN:-5} -f $set.sql db_$([ $set = before ] && echo old || echo new) 2>&1 | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
      echo "$round $mode $set $lat"
    done
  done
done
