# lookout shell integration for zsh, step 1: zsh reads this first because lookout pointed ZDOTDIR here.
# Run the user's own .zshenv from their ZDOTDIR (or HOME), then point ZDOTDIR back here so that zsh reads
# lookout's .zshrc next; that one restores the user's ZDOTDIR before anything else.
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
