#!/usr/bin/env bash
# The bash completion (cli/completion/kinstr) in the guest, as bash calls it: COMP_WORDS and
# COMP_CWORD set, _kinstr called, COMPREPLY read. One line per case, and the time each took:
#   cold   the first completion of a function after boot (the per-boot cache is made)
#   warm   the same again in that shell; fresh: in a new shell (the cache made, no memo)
#   not root, without $XDG_RUNTIME_DIR: no cache
# With MODULE: the cache is made again once a module is loaded, whose functions then complete.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
export PATH=$PWD/build:$PATH
source cli/completion/kinstr

# comp WORD...: complete the last word; REPLY the candidates on one line, MS the milliseconds
comp() {
	local s e
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	s=$EPOCHREALTIME
	_kinstr
	e=$EPOCHREALTIME
	REPLY=" ${COMPREPLY[*]} "
	MS=$(((${e/./} - ${s/./}) / 1000))
}
has() { [[ $REPLY == *" $1 "* ]] && echo yes || echo no; }

rm -f /run/kinstr/complete-funcs
comp kinstr count vfs_rea
echo "cold count vfs_rea: $(wc -w <<<"$REPLY") candidates, vfs_read $(has vfs_read), $MS ms"
comp kinstr count vfs_rea
echo "warm count vfs_rea: $(wc -w <<<"$REPLY") candidates, vfs_read $(has vfs_read), $MS ms"
fresh=$(bash -c 'source cli/completion/kinstr; COMP_WORDS=(kinstr count vfs_rea); COMP_CWORD=2; s=$EPOCHREALTIME
	_kinstr; e=$EPOCHREALTIME; echo "${COMPREPLY[*]} $(((${e/./} - ${s/./}) / 1000))"')
echo "fresh count vfs_rea: vfs_read $([[ " $fresh " == *" vfs_read "* ]] && echo yes || echo no), ${fresh##* } ms"
comp kinstr co
echo "command co:$REPLY($MS ms)"
comp kinstr count --ev
echo "option --ev:$REPLY($MS ms)"
comp kinstr trace 'vfs_read%'
echo "return vfs_read%:$REPLY"
comp kinstr help --man sp
echo "help --man sp:$REPLY"
echo "cache $(wc -l </run/kinstr/complete-funcs) lines"
# not root, no $XDG_RUNTIME_DIR: no cache, /proc/kallsyms read each time (its names are readable to all)
nr=$(setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_RUNTIME_DIR bash -c 'source cli/completion/kinstr
	COMP_WORDS=(kinstr count vfs_rea); COMP_CWORD=2; s=$EPOCHREALTIME; _kinstr; e=$EPOCHREALTIME
	echo "${COMPREPLY[*]} $(((${e/./} - ${s/./}) / 1000))"' 2>&1)
echo "not root count vfs_rea: vfs_read $([[ " $nr " == *" vfs_read "* ]] && echo yes || echo no), ${nr##* } ms"

if [[ ${1:-} == MODULE ]]; then
	insmod kmod/kinstr.ko || exit 1
	f=$(awk '$4 == "[kinstr]" && ($2 == "t" || $2 == "T") && $3 !~ /^__(pfx|cfi)_/ { print $3; exit }' /proc/kallsyms)
	comp kinstr count "${f%?}"
	echo "module function $f after insmod: $(has "$f")"
fi
