# lookout shell integration for zsh, step 2 (see .zshenv): the user's ZDOTDIR and .zshrc, then marks:
#   OSC 133 A (prompt start) and B (prompt end), 633 E (the command line) and 133 C (output start) once per
#   command line, 133 D;<status> when it finished, and 633 P;Cwd=<cwd>. Each 133/633 mark ends with
#   `nonce=<this terminal's nonce>`, so output that merely looks like a mark is ignored by lookout.
# The nonce (read by lookout's .zshenv) lives only in unexported shell parameters: the programs the shell
# runs never see it.
if [[ -n ${__lookout_user_zdotdir+x} ]]; then ZDOTDIR=$__lookout_user_zdotdir; else unset ZDOTDIR; fi
unset __lookout_user_zdotdir
if [[ -f ${ZDOTDIR:-$HOME}/.zshrc ]]; then builtin source ${ZDOTDIR:-$HOME}/.zshrc; fi

() {
    setopt localoptions noallexport
    typeset -g __lookout_running=
    typeset -g __lookout_b=$'%{\e]133;B;nonce='$__lookout_nonce$'\a%}'

    __lookout_mark() { builtin printf '\e]%s;nonce=%s\a' "$1" "$__lookout_nonce"; }

    # The command line in OSC 633 escaping (\\, \x3b for ';', \xHH below 0x20), at most 1000 characters
    # (the mark must stay under lookout's 4 KiB limit), into REPLY.
    __lookout_escape() {
        local s=$1 c h i
        s=${s//\\/\\\\}
        s=${s//;/\\x3b}
        if [[ $s == *[[:cntrl:]]* ]]; then
            for i in {1..31} 127; do
                builtin printf -v h %02x $i
                builtin printf -v c "\\x$h"
                s=${s//$c/\\x$h}
            done
        fi
        REPLY=${s:0:1000}
    }

    # First precmd hook: report how the command line ended, then the new prompt and the cwd.
    __lookout_precmd() {
        local code=$?
        if [[ -n $__lookout_running ]]; then
            __lookout_running=
            __lookout_mark "133;D;$code"
        fi
        __lookout_mark "133;A"
        __lookout_escape "$PWD"
        __lookout_mark "633;P;Cwd=$REPLY"
    }

    # Last precmd hook: the B mark at the end of PS1 (a prompt theme may have rewritten PS1), unless PS1
    # is exported, which would show the nonce to every program.
    __lookout_prompt() {
        [[ ${(t)PS1} == *export* || $PS1 == *"$__lookout_b"* ]] || PS1+=$__lookout_b
    }

    # Last preexec hook: $1 is the line as typed (even when history keeps it out), $2 as expanded.
    __lookout_preexec() {
        local REPLY
        __lookout_running=1
        __lookout_escape "${1:-$2}"
        __lookout_mark "633;E;$REPLY"
        __lookout_mark "133;C"
    }

    precmd_functions=(__lookout_precmd $precmd_functions __lookout_prompt)
    preexec_functions+=(__lookout_preexec)
}
