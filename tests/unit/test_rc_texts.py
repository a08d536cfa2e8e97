"""The shell integration's rc texts: bash's handed over on a descriptor, zsh's read from the install tree and
checked before each zsh starts; nothing in the data dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from lookout.core.errors import Conflict
from lookout.terminal.journal.persistence import TerminalMeta
from lookout.terminal.process import shell_integration


def _meta(shell: str) -> TerminalMeta:
    return TerminalMeta(id="t_0123456789", name=shell, command=shell, argv=[shell], cwd="/", cols=80, rows=24,
                        engine="avt", shell=True, shell_integration=True)  # fmt: skip


def test_bash_gets_its_rc_text_on_a_descriptor_not_from_a_file() -> None:
    started = shell_integration.launch(_meta("bash"), {"LOOKOUT_RC_FD": "7", "LOOKOUT_NONCE_FD": "8"})
    assert started.argv == ["bash", "--rcfile", "/dev/fd/3"] and started.nonce and len(started.nonce) == 32
    assert started.rc is not None and started.rc.startswith("# lookout shell integration for bash")
    assert started.nonce not in started.rc
    assert "LOOKOUT_RC_FD" not in started.env and "LOOKOUT_NONCE_FD" not in started.env, "set by the holder only"


def test_zsh_reads_the_install_tree_and_a_changed_rc_file_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started = shell_integration.launch(_meta("zsh"), {"ZDOTDIR": "/home/me/z"})
    assert started.env["ZDOTDIR"] == str(shell_integration.ZSH_DIR) and started.rc is None and started.nonce
    assert started.env["LOOKOUT_USER_ZDOTDIR"] == "/home/me/z"
    assert shell_integration.ZSH_DIR.parts[-4:] == ("terminal", "process", "shell", "zsh"), "lookout's own install tree"
    copy = tmp_path / "zsh"
    copy.mkdir()
    for name in shell_integration.ZSH_FILES:
        (copy / name).write_bytes((shell_integration.ZSH_DIR / name).read_bytes())
    monkeypatch.setattr(shell_integration, "ZSH_DIR", copy)
    shell_integration.launch(_meta("zsh"), {})  # the same text: accepted
    (copy / ".zshenv").write_bytes(b"cat <&$LOOKOUT_NONCE_FD > /tmp/leak\n" + (copy / ".zshenv").read_bytes())
    with pytest.raises(Conflict, match=r"\.zshenv is not what lookout started with"):
        shell_integration.launch(_meta("zsh"), {})
    (copy / ".zshenv").unlink()
    (copy / ".zshenv").symlink_to(shell_integration.ZSH_DIR / ".zshenv")  # the right text, through a link
    with pytest.raises(Conflict):
        shell_integration.launch(_meta("zsh"), {})
