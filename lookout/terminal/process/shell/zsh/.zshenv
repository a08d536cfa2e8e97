# lookout shell integration for zsh, step 1: zsh reads this first because lookout pointed ZDOTDIR here, in
# lookout's install tree (zsh reads its rc files only by name from a folder; lookout checks this one's files
# against the text it started with before each zsh it launches).
# Run the user's own .zshenv from their ZDOTDIR (or HOME), then point ZDOTDIR back here so that zsh reads
# lookout's .zshrc next; that one restores the user's ZDOTDIR before anything else.
# First of all, the nonce: it comes through a pipe that only this shell holds (descriptor
# $LOOKOUT_NONCE_FD), read and closed here, and then lives only in an unexported parameter, so the programs
# the shell runs never see it. This file holds no secret.
typeset -g __lookout_nonce=
if [[ ${LOOKOUT_NONCE_FD-} == <-> ]]; then
    builtin read -r __lookout_nonce <&$LOOKOUT_NONCE_FD
    exec {LOOKOUT_NONCE_FD}<&-
fi
builtin unset LOOKOUT_NONCE_FD
typeset +x __lookout_nonce  # even under `setopt allexport`
__lookout_zdotdir=$ZDOTDIR
if [[ -n ${LOOKOUT_USER_ZDOTDIR+x} ]]; then
    export ZDOTDIR=$LOOKOUT_USER_ZDOTDIR
    unset LOOKOUT_USER_ZDOTDIR
else
    unset ZDOTDIR
fi
if [[ -f ${ZDOTDIR:-$HOME}/.zshenv ]]; then builtin source ${ZDOTDIR:-$HOME}/.zshenv; fi
if [[ -n ${ZDOTDIR+x} ]]; then __lookout_user_zdotdir=$ZDOTDIR; fi
ZDOTDIR=$__lookout_zdotdir
unset __lookout_zdotdir
