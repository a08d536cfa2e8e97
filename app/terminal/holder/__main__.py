"""`python -m app.terminal.holder`: the fork server (app.terminal.holder.server), specs on stdin, answers on
stdout."""

from app.terminal.holder.server import serve

serve()
