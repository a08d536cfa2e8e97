# lookout shell integration for bash, read by the bash of every terminal (bash --rcfile /dev/fd/3).
# The holder hands this text over on descriptor $LOOKOUT_RC_FD, a sealed memfd that nothing can change, not
# a file: no program can decide what a later shell runs before it reads its nonce. It is closed first.
# It runs what bash would have run (~/.bashrc; bash itself still reads the system bashrc), then adds marks:
#   OSC 133 A (prompt start) and B (prompt end), 633 E (the command line) and 133 C (output start) once per
#   command line, 133 D;<status> when it finished, and 633 P;Cwd=<cwd>. Each 133/633 mark ends with
#   `nonce=<this terminal's nonce>`, so output that merely looks like a mark is ignored by lookout.
# The nonce comes through a pipe that only this shell holds (descriptor $LOOKOUT_NONCE_FD): it is read and
# the pipe closed first of all (only the system bashrc runs earlier), and then lives only in unexported
# shell variables, so the programs the shell runs never see it. This file holds no secret.
# Needs bash >= 4.4 (PS0); older versions run without marks.

if [[ ${LOOKOUT_RC_FD-} =~ ^[0-9]+$ ]]; then exec {LOOKOUT_RC_FD}<&-; fi
builtin unset LOOKOUT_RC_FD
__lookout_nonce=
if [[ ${LOOKOUT_NONCE_FD-} =~ ^[0-9]+$ ]]; then
    builtin read -r __lookout_nonce <&"$LOOKOUT_NONCE_FD"
    exec {LOOKOUT_NONCE_FD}<&-
fi
builtin unset LOOKOUT_NONCE_FD
builtin declare +x __lookout_nonce  # even under `set -a`

if [ -f ~/.bashrc ]; then . ~/.bashrc; fi

if ((BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4))); then
    case $- in *a*) __lookout_allexport=1; set +a ;; *) __lookout_allexport= ;; esac

    __lookout_running=
    __lookout_b=$'\e]133;B;nonce='$__lookout_nonce$'\a'
    __lookout_ps0='$(__lookout_preexec)${__lookout_set[__lookout_running=1]-}'

    # HISTCONTROL=ignorespace would keep a command line out of `history 1`, which is where the command
    # text comes from: let such lines in, and take them out again once they have run.
    __lookout_hide_space=
    if [[ :${HISTCONTROL-}: == *:ignorespace:* || :${HISTCONTROL-}: == *:ignoreboth:* ]]; then
        __lookout_hide_space=1
        HISTCONTROL=${HISTCONTROL//ignoreboth/ignoredups}
        HISTCONTROL=${HISTCONTROL//ignorespace/}
    fi

    __lookout_mark() { builtin printf '\e]%s;nonce=%s\a' "$1" "$__lookout_nonce"; }

    # The command line in OSC 633 escaping (\\, \x3b for ';', \xHH below 0x20), at most 1000 characters
    # (the mark must stay under lookout's 4 KiB limit), into REPLY.
    __lookout_escape() {
        local s=$1 c h i
        s=${s//\\/\\\\}
        s=${s//;/\\x3b}
        if [[ $s == *[[:cntrl:]]* ]]; then
            for i in {1..31} 127; do
                builtin printf -v h %02x "$i"
                builtin printf -v c "\\x$h"
                s=${s//"$c"/\\x$h}
            done
        fi
        REPLY=${s:0:1000}
    }

    # Runs in PS0's command substitution, once per command, after it was read and before it runs. Several
    # commands read from one input line (a multi-line paste) run without a prompt between them: the
    # previous one ends here.
    __lookout_preexec() {
        local code=$? line
        if [[ -n $__lookout_running ]]; then __lookout_mark "133;D;$code"; fi
        line=$(HISTTIMEFORMAT= builtin history 1)
        [[ $line =~ ^\ *[0-9]+[\ *]\ (.*)$ ]] && line=${BASH_REMATCH[1]} || line=
        __lookout_escape "$line"
        __lookout_mark "633;E;$REPLY"
        __lookout_mark "133;C"
    }

    # First in PROMPT_COMMAND: report how the command line ended, then the new prompt and the cwd.
    __lookout_precmd() {
        local code=$? line
        if [[ -n $__lookout_running ]]; then
            __lookout_running=
            __lookout_mark "133;D;$code"
            if [[ -n $__lookout_hide_space ]]; then
                line=$(HISTTIMEFORMAT= builtin history 1)
                [[ $line =~ ^\ *([0-9]+)[\ *]\ \  ]] && builtin history -d "${BASH_REMATCH[1]}"
            fi
        fi
        __lookout_mark "133;A"
        __lookout_escape "$PWD"
        __lookout_mark "633;P;Cwd=$REPLY"
        return $code
    }

    # Last in PROMPT_COMMAND: make sure PS0 and PS1 carry the marks once (a prompt theme may have
    # rewritten them); both need promptvars. PS1 refers to the B mark by name, so the nonce is not in PS1
    # even if PS1 is exported.
    __lookout_prompt() {
        shopt -q promptvars || return 0
        [[ ${PS0-} == *"$__lookout_ps0"* ]] || PS0+=$__lookout_ps0
        [[ $PS1 == *'\[${__lookout_b}\]'* ]] || PS1+='\[${__lookout_b}\]'
    }

    if ((BASH_VERSINFO[0] > 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] >= 1))); then
        PROMPT_COMMAND=(__lookout_precmd "${PROMPT_COMMAND[@]}" __lookout_prompt)
    else
        PROMPT_COMMAND=$'__lookout_precmd\n'"${PROMPT_COMMAND:+$PROMPT_COMMAND$'\n'}__lookout_prompt"
    fi

    if [[ -n $__lookout_allexport ]]; then set -a; fi
    unset __lookout_allexport
fi
