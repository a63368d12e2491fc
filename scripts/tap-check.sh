# SPDX-License-Identifier: GPL-2.0
# The command-line tests' one assertion, sourced by tools/*/test-*.sh.
#
# check NAME WANT-STATUS STDERR-PATTERN STDOUT-PATTERN -- ARGS...
# runs ARGS (stdin /dev/null, stdout and stderr into $tmp/out and
# $tmp/err), counts a test in $n and prints its TAP line ("not ok" also
# counts in $failed, with the reasons as comments).  An empty pattern means
# that stream must be empty, '*' anything; patterns are grep's basic
# regular expressions, fixed strings when $check_fixed is set; stderr must
# also hold $also when that is set.  With $dry set (counting the tests
# only) nothing runs.
check() {
	name=$1 want=$2 epat=$3 opat=$4
	shift 5
	n=$((n + 1))
	[ -n "$dry" ] && return 0
	"$@" > "$tmp/out" 2> "$tmp/err" < /dev/null
	st=$?
	ok=1
	if [ "$st" -ne "$want" ]; then
		echo "#   exit status $st, expected $want"
		ok=0
	fi
	for s in err out; do
		if [ $s = err ]; then pat=$epat; else pat=$opat; fi
		if [ -z "$pat" ]; then
			if [ -s "$tmp/$s" ]; then
				echo "#   std$s not empty:"
				sed -n '1,20s/^/#     /p' "$tmp/$s"
				ok=0
			fi
		elif [ "$pat" != "*" ] &&
		     ! grep -q ${check_fixed:+-F} -e "$pat" "$tmp/$s"; then
			echo "#   std$s lacks '$pat':"
			sed -n '1,20s/^/#     /p' "$tmp/$s"
			ok=0
		fi
	done
	if [ -n "$also" ] && ! grep -q -F -e "$also" "$tmp/err"; then
		echo "#   stderr lacks '$also'"
		ok=0
	fi
	if [ $ok = 1 ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		failed=$((failed + 1))
	fi
}
