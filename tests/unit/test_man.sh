#!/usr/bin/env bash
# The manual pages say what --help says. make man writes a page for every command the CLI lists
# (kinstr help --commands: a new command is checked without an edit here); for each, the options
# of 'kinstr CMD --help', of its rendered page's OPTIONS and of the getopt table its parser builds
# (kinstr help --options) must be one set, with the same arguments, and a missing one is named.
# Every page renders without a warning from groff -ww or man --warnings, no line past 80 columns,
# with the sections man-pages(7) asks for (EXAMPLES where --help has examples). And the check
# itself finds an option taken out of a page. Needs build/kinstr (make user), man and groff.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
k=build/kinstr
fail=0
if [ ! -x "$k" ]; then
	echo "FAIL man: $k not built (make user)"
	exit 1
fi
if ! command -v man >/dev/null || ! command -v groff >/dev/null; then
	echo "SKIP man: man or groff is not installed"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MANWIDTH=80 LC_ALL=C.UTF-8

# the pages as make man writes them (into a scratch folder: build/man may be in use)
if ! out=$(make -s --no-print-directory man MAN_DIR="$tmp/man" 2>&1); then
	echo "FAIL man_make: make man failed: $(printf '%s' "$out" | tail -n1)"
	exit 1
fi
cmds=$("$k" help --commands)
want=$( (echo kinstr; printf '%s\n' "$cmds" | awk '{print $2}') | sort)
got=$(cd "$tmp/man" && ls -- *.8 | sed 's/\.8$//' | sort)
if [ "$want" != "$got" ]; then
	echo "FAIL man_pages: make man wrote [$(echo $got)], the CLI's commands ask for [$(echo $want)]"
	fail=1
else
	echo "PASS man_pages: make man wrote kinstr.8 and one page per command, $(echo "$cmds" | wc -l) of them"
fi

# OPT lines (--NAME[ -X][ ARG]) of --help's text
help_opts() {
	sed -nE 's/^  -(.), --([a-z][a-z-]*)( ([A-Z][^ ]*))?( .*)?$/--\2 -\1\3/p; s/^      --([a-z][a-z-]*)( ([A-Z][^ ]*))?( .*)?$/--\1\2/p' | sort
}
# the same of a rendered page's OPTIONS section (tags at column 8)
man_opts() {
	awk '/^[A-Z]/ { on = ($0 == "OPTIONS") } on' |
		sed -nE 's/^       -(.), --([a-z][a-z-]*)( ([A-Z][^ ]*))?( .*)?$/--\2 -\1\3/p; s/^       --([a-z][a-z-]*)( ([A-Z][^ ]*))?( .*)?$/--\1\2/p' |
		sed -E 's/ +$//' | sort
}
# the getopt table (--NAME[=ARG][ -X]), --help itself left out (--help lists it nowhere)
getopt_opts() {
	sed -n '2,$p' | grep -v '^--help -h$' | sed -E 's/^(--[a-z-]+)(=([^ ]*))?( (-.))?$/\1 \5 \3/; s/ +/ /g; s/ $//' | sort
}
# compare NAME WHAT-A A WHAT-B B: each line of one missing from the other, named
compare() {
	local name=$1 wa=$2 a=$3 wb=$4 b=$5 miss
	miss=$(comm -23 <(printf '%s\n' "$a") <(printf '%s\n' "$b") | grep . | tr '\n' ';')
	[ -z "$miss" ] || echo "in $wa, not in $wb: $miss"
	miss=$(comm -13 <(printf '%s\n' "$a") <(printf '%s\n' "$b") | grep . | tr '\n' ';')
	[ -z "$miss" ] || echo "in $wb, not in $wa: $miss"
}

while read -r cmd page; do
	name=${page#kinstr-}
	h=$("$k" "$cmd" --help | help_opts)
	g=$("$k" help --options -- "$cmd" | getopt_opts)
	text=$(man -l "$tmp/man/$page.8" 2>/dev/null)
	m=$(printf '%s\n' "$text" | man_opts)
	why=$(compare "$cmd" "--help" "$h" "$page(8)" "$m"; compare "$cmd" "--help" "$h" "the getopt table" "$g")
	if [ -n "$why" ]; then
		echo "FAIL man_options_$name: $(echo $why)"
		fail=1
	elif [ -z "$h" ] && [ "$cmd" != batch ]; then
		echo "FAIL man_options_$name: no option found in --help"
		fail=1
	else
		echo "PASS man_options_$name: the $(printf '%s' "$h" | grep -c .) options of --help, $page(8) and the getopt table agree"
	fi

	warn=$( { groff -ww -man -z "$tmp/man/$page.8"; man --warnings -l "$tmp/man/$page.8" >/dev/null; } 2>&1)
	long=$(printf '%s\n' "$text" | awk 'length($0) > 80 { print NR ": " $0; exit }')
	sections=$(printf '%s\n' "$text" | grep -E '^[A-Z][A-Z ]+$' | tr '\n' ',')
	need="NAME,SYNOPSIS,DESCRIPTION,OPTIONS,EXIT STATUS,"
	# (grep -q on the output, not on a pipe: under pipefail, --help killed by SIGPIPE would fail it)
	usage=$("$k" "$cmd" --help)
	grep -q '^examples:$' <<<"$usage" && need="${need}EXAMPLES,"
	need="${need}SEE ALSO,"
	if [ -n "$warn" ]; then
		echo "FAIL man_render_$name: $(printf '%s' "$warn" | head -n1)"
		fail=1
	elif [ -n "$long" ]; then
		echo "FAIL man_render_$name: a line past 80 columns: $long"
		fail=1
	elif [ "$sections" != "$need" ]; then
		echo "FAIL man_render_$name: sections $sections, not $need"
		fail=1
	elif ! grep -q "^       $page - " <<<"$text"; then
		echo "FAIL man_render_$name: NAME is not '$page - ...'"
		fail=1
	else
		echo "PASS man_render_$name: $page(8) renders without warnings, sections ${need%,}"
	fi
done <<EOF
$cmds
EOF

# kinstr(8): every command under COMMANDS, every page under SEE ALSO
text=$(man -l "$tmp/man/kinstr.8" 2>/dev/null)
warn=$( { groff -ww -man -z "$tmp/man/kinstr.8"; man --warnings -l "$tmp/man/kinstr.8" >/dev/null; } 2>&1)
missing=""
while read -r cmd page; do
	grep -qx "       kinstr $cmd" <<<"$text" || missing="$missing $cmd"
	grep -q "$page(8)" <<<"$(awk '/^SEE ALSO/ { on = 1 } on' <<<"$text")" || missing="$missing $page(8)"
done <<EOF
$cmds
EOF
if [ -n "$warn$missing" ]; then
	echo "FAIL man_main: ${warn:+$(printf '%s' "$warn" | head -n1); }missing:$missing"
	fail=1
else
	echo "PASS man_main: kinstr(8) renders without warnings and names every command and its page"
fi

# the check finds what it is for: count's page without --every-block is caught, by name
sed '/^\\fB\\-\\-every\\-block\\fR$/,/^\.TP$/d' "$tmp/man/kinstr-count.8" > "$tmp/broken.8"
why=$(compare count "--help" "$("$k" count --help | help_opts)" "the page" "$(man -l "$tmp/broken.8" 2>/dev/null | man_opts)")
if [ "$why" = "in --help, not in the page: --every-block;" ]; then
	echo "PASS man_check_finds: an option taken out of kinstr-count(8) is named ($why)"
else
	echo "FAIL man_check_finds: count's page without --every-block gave '$why'"
	fail=1
fi
exit $fail
