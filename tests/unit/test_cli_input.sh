#!/usr/bin/env bash
# The CLI refuses bad command lines before it opens anything (no module needed: this runs on the
# host, where /dev/kinstr does not exist, so a check that came too late would fail differently).
# One line per case: PASS name / FAIL name: why. Needs build/kinstr (make user).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
k=build/kinstr
fail=0
if [ ! -x "$k" ]; then
	echo "FAIL cli_input: $k not built (make user)"
	exit 1
fi

# case NAME EXIT REGEX -- ARGS...: kinstr ARGS exits EXIT and its stderr matches REGEX
case_() {
	local name=$1 want=$2 re=$3 out rc
	shift 4
	out=$(timeout 10 "$k" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL $name: exit $rc, not $want ($(printf '%s' "$out" | head -n1))"
		fail=1
	elif ! printf '%s\n' "$out" | grep -qE -- "$re"; then
		echo "FAIL $name: stderr '$(printf '%s' "$out" | head -n1)' does not match '$re'"
		fail=1
	else
		echo "PASS $name"
	fi
}

for cmd in count trace profile; do
	case_ "${cmd}_duration_abc" 2 "^kinstr: --duration: not a number of seconds: 'abc'$" -- $cmd -d abc vfs_read
	case_ "${cmd}_duration_0" 2 "^kinstr: --duration: must be more than 0 seconds, not '0'$" -- $cmd -d 0 vfs_read
	case_ "${cmd}_duration_neg" 2 "^kinstr: --duration: must be more than 0 seconds, not '-1'$" -- $cmd -d -1 vfs_read
	case_ "${cmd}_duration_trailing" 2 "^kinstr: --duration: not a number of seconds: '2s'$" -- $cmd -d 2s vfs_read
	case_ "${cmd}_duration_nan" 2 "^kinstr: --duration: not a number of seconds: 'nan'$" -- $cmd --duration nan vfs_read
done
for cmd in count profile drill; do
	case_ "${cmd}_interval_0" 2 "^kinstr: --interval: must be more than 0 seconds, not '0'$" -- $cmd -i 0 vfs_read
	case_ "${cmd}_interval_x" 2 "^kinstr: --interval: not a number of seconds: '1x'$" -- $cmd -i 1x vfs_read
done
case_ drill_threshold_0 2 "^kinstr: --threshold: must be more than 0 and less than 100, not '0'$" -- drill -t 0 vfs_read
case_ drill_threshold_abc 2 "^kinstr: --threshold: not a number: 'abc'$" -- drill -t abc vfs_read
case_ drill_depth_0 2 "^kinstr: --depth: must be 1 to 64, not '0'$" -- drill -D 0 vfs_read
case_ drill_depth_x 2 "^kinstr: --depth: not an integer: '2x'$" -- drill -D 2x vfs_read
case_ sites_top_neg 2 "^kinstr: --top: must be 0 to 1000000, not '-1'$" -- sites --top -1 vfs_read
case_ trace_buffer_neg 2 "^kinstr: --buffer-size: not a size: '-1'" -- trace --buffer-size -1 -o /tmp/x vfs_read
case_ trace_buffer_junk 2 "^kinstr: --buffer-size: not a size: '1Q'" -- trace --buffer-size 1Q -o /tmp/x vfs_read
case_ trace_buffer_small 2 "^kinstr: --buffer-size: must be 8192 to 4294967295 bytes, not '4K'$" -- \
	trace --buffer-size 4K -o /tmp/x vfs_read
case_ trace_subbuf_junk 2 "^kinstr: --subbuf-size: not a size: 'abc'" -- trace --subbuf-size abc -o /tmp/x vfs_read
case_ trace_subbuf_pow2 2 "^kinstr: --subbuf-size: a power of two of at least 4K$" -- \
	trace --subbuf-size 5K -o /tmp/x vfs_read
case_ trace_max_size_small 2 "^kinstr: --max-size: must be 65536 to " -- trace --max-size 1K -o /tmp/x vfs_read
case_ trace_max_size_junk 2 "^kinstr: --max-size: not a size: '1.5M'" -- trace --max-size 1.5M -o /tmp/x vfs_read
case_ profile_pid_abc 2 "^kinstr: --pid: not a process id: 'abc'$" -- profile -p abc vfs_read
case_ profile_pid_0 2 "^kinstr: --pid: not a process id: '0'$" -- profile -p 0 vfs_read
case_ profile_pid_gone 1 "^kinstr: --pid: no process 999999999$" -- profile -p 999999999 vfs_read
# the scope's options, shared by every probing subcommand, checked before the device is opened
case_ scope_pid_list 2 "^kinstr: --pid: not a process id: '1,x'$" -- count --pid 1,x vfs_read
case_ scope_tid_0 2 "^kinstr: --tid: not a thread id: '0'$" -- trace --tid 0 vfs_read
case_ scope_comm_long 2 "^kinstr: --comm: '0123456789abcdefg': a comm is 1 to 15 bytes$" -- \
	span --comm 0123456789abcdefg vfs_read 'vfs_read%return'
case_ scope_cpu_range 2 "^kinstr: --cpu: not a list of CPUs \(e.g. 0,2-3\): '1-0'$" -- count --cpu 1-0 vfs_read
case_ scope_cpu_none 2 "^kinstr: --cpu: CPU 4095: this machine has CPUs 0-[0-9]+$" -- profile --cpu 4095 vfs_read
case_ scope_follow 2 "^kinstr: --follow: follows the processes --pid names: give --pid$" -- attach --follow x.o vfs_read
case_ scope_every_block 2 "^kinstr: --every-block takes -c, -d, -k, --json and --dry-run only$" -- \
	count --every-block --comm sh vfs_read
case_ count_returnx 2 "^kinstr: vfs_read%returnx: unknown suffix '%returnx' \(FUNC%return\)$" -- count 'vfs_read%returnx'
case_ trace_returnx 2 "^kinstr: vfs_read%returnx: unknown suffix '%returnx' \(FUNC%return\)$" -- \
	trace -o /tmp/x 'vfs_read%returnx(ret)'
case_ count_offset_neg 2 "^kinstr: vfs_read\+-1: bad offset '-1' \(FUNC\+0xOFF\)$" -- count 'vfs_read+-1'
case_ count_offset_junk 2 "^kinstr: vfs_read\+zz: bad offset 'zz' \(FUNC\+0xOFF\)$" -- count 'vfs_read+zz'
case_ count_glob_offset 2 "^kinstr: vfs_\*\+5: a glob takes no offset" -- count 'vfs_*+5'
case_ count_no_name 2 "^kinstr: \+5: no function name" -- count '+5'
case_ count_output_unwritable 1 "^kinstr: cannot write /proc/nope: No such file or directory$" -- \
	count -o /proc/nope -d 1 vfs_read
case_ profile_offset 2 "^kinstr: vfs_read\+5: profile takes function names or globs" -- profile vfs_read+5
case_ profile_output_unwritable 1 "^kinstr: cannot write /proc/nope: No such file or directory$" -- \
	profile -o /proc/nope -d 1 vfs_read

# --help tells the truth: every option each subcommand's --help lists, the parser takes (both are
# drawn from one table, cli/opts.c; this catches an option parsed apart from it, or listed and not
# taken), an option it does not list is refused as unrecognised, and no shared help is left with
# its %V/%P (the subcommand's verb and participle) unfilled.
for cmd in $("$k" --help | sed -n 's/^  \([a-z]*\) .*/\1/p') -l; do
	opts=$("$k" $cmd --help | grep -E '^(  -., |      )--[a-z]' | sed -E 's/^ *(-., )?(--[a-z-]+)( [A-Z][A-Z:]*)?.*/\2\3/')
	n=0 bad=""
	while read -r opt arg; do
		[ -n "$opt" ] || continue
		n=$((n + 1))
		out=$(timeout 10 "$k" $cmd "$opt" ${arg:+1} </dev/null 2>&1 >/dev/null)
		case $out in *"unrecognized option"*|*"requires an argument"*|*"doesn't allow an argument"*) bad="$bad $opt";; esac
	done <<EOT
$opts
EOT
	out=$(timeout 10 "$k" $cmd --no-such-option 2>&1 >/dev/null)
	unfilled=$("$k" $cmd --help | grep -c '%[VP]')
	if [ "$unfilled" -ne 0 ]; then
		echo "FAIL help_truth_$cmd: $unfilled lines of --help hold a %V or %P the subcommand's verb did not fill"
		fail=1
	elif [ "$n" -eq 0 ] && [ "$cmd" != batch ]; then
		echo "FAIL help_truth_$cmd: --help lists no option"
		fail=1
	elif [ -n "$bad" ]; then
		echo "FAIL help_truth_$cmd: listed in --help, refused by the parser:$bad"
		fail=1
	elif ! printf '%s\n' "$out" | grep -q "unrecognized option '--no-such-option'"; then
		echo "FAIL help_truth_$cmd: an option --help does not list was not refused"
		fail=1
	else
		echo "PASS help_truth_$cmd: the $n options --help lists are taken, another is refused"
	fi
done
exit $fail
