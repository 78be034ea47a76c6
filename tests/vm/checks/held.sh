#!/bin/sh
# Run by `kinstr count|cover -c`, while that kinstr (our parent: $PPID) holds its functions: what
# another session is told of them. Each output line has that process's pid as OUTER.
#   held.sh cover FUNC OTHER: cover FUNC (held), then cover -k FUNC OTHER (FUNC left out, OTHER covered)
#   held.sh count FUNC: count FUNC's entry (held: a code cache runs it)
outer=$PPID
say() { sed "s/pid $outer\b/pid OUTER/g"; }
case $1 in
cover)
	build/kinstr cover -d 1 "$2" > /tmp/held.out 2>&1; rc=$?
	grep -v 'no DWARF' /tmp/held.out | say; echo "cover status $rc"
	build/kinstr cover --dry-run --json "$2" | say
	echo
	build/kinstr cover -k -d 1 "$2" "$3" > /tmp/held-k.out 2> /tmp/held-k.err; rc=$?
	grep -v 'no DWARF' /tmp/held-k.err | say; grep -v '^  ' /tmp/held-k.out | say; echo "cover -k status $rc"
	;;
count)
	build/kinstr count -d 1 "$2" > /tmp/held.out 2>&1; rc=$?
	say < /tmp/held.out; echo "count status $rc"
	;;
esac
