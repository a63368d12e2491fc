#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# stage-time.sh DIR NAME CMD...: run one stage of make check and record
# how long it took as "NAME SECONDS" in DIR/stage-times (summary.sh prints
# them), so that the time budget can be read from every run.  Exits with
# CMD's status.

set -uo pipefail
dir=${1:?usage: stage-time.sh DIR NAME CMD...}
name=${2:?usage: stage-time.sh DIR NAME CMD...}
shift 2
start=$EPOCHSECONDS
"$@"
rc=$?
mkdir -p "$dir"
echo "$name $((EPOCHSECONDS - start))" >>"$dir/stage-times"
echo "make check: $name took $((EPOCHSECONDS - start)) s"
exit $rc
