"""The shell integration's rc files: one folder in the data dir for every terminal, named by their text."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from app.terminal.persistence import TerminalMeta
from app.terminal.shell_integration import RC_FILES, launch, rc_folder


def test_the_rc_files_are_written_once_private_and_named_by_their_text(tmp_path: Path) -> None:
    folder = rc_folder(tmp_path)
    assert folder.parent == tmp_path / "shell" and len(folder.name) == 16
    assert sorted(p.name for p in folder.iterdir()) == sorted(RC_FILES)
    assert all((folder / name).stat().st_mode & 0o777 == 0o600 for name in RC_FILES)
    assert folder.stat().st_mode & 0o777 == 0o700
    assert (folder / "bashrc").read_text().startswith("# lookout shell integration for bash")
    inode = (folder / "bashrc").stat().st_ino
    assert rc_folder(tmp_path) == folder and (folder / "bashrc").stat().st_ino == inode, "not written again"


def test_a_changed_missing_or_linked_rc_file_is_written_again(tmp_path: Path) -> None:
    folder = rc_folder(tmp_path)
    text = (folder / "bashrc").read_bytes()
    (folder / "bashrc").write_bytes(text[:100])  # torn
    (folder / ".zshrc").unlink()
    outside = tmp_path / "outside"
    outside.write_text("keep")
    (folder / ".zshenv").unlink()
    os.symlink(outside, folder / ".zshenv")
    assert rc_folder(tmp_path) == folder
    assert (folder / "bashrc").read_bytes() == text and (folder / ".zshrc").is_file()
    assert not (folder / ".zshenv").is_symlink() and outside.read_text() == "keep"


def test_a_shell_launched_after_its_rc_files_were_removed_gets_them_back(tmp_path: Path) -> None:
    folder = rc_folder(tmp_path)
    shutil.rmtree(tmp_path / "shell")
    meta = TerminalMeta(id="t_0123456789", name="bash", command="bash", argv=["bash"], cwd="/", cols=80, rows=24,
                        engine="avt", shell=True, shell_integration=True)  # fmt: skip
    started = launch(meta, tmp_path, {})
    assert started.argv == ["bash", "--rcfile", str(folder / "bashrc")] and started.nonce
    assert (folder / "bashrc").read_text().startswith("# lookout shell integration for bash")
