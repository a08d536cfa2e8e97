"""`python -m lookout.terminal.holder`: the fork server (lookout.terminal.holder.server), specs on stdin, answers on
stdout."""

from lookout.terminal.holder.server import serve

serve()
