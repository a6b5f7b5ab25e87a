"""Atomic writes (`codegen._support.atomic_write`): the file is replaced whole or not at all, an unchanged
file is not touched, a replaced file keeps its permissions, a new one gets the umask's, and a
failure is a `UsageError` that leaves no temporary file behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from codegen._support import atomic_write as write
from codegen.errors import UsageError


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_a_new_file_is_written_with_the_umask_and_its_folders_made(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "sdk.py"
    old = os.umask(0o027)
    try:
        assert write.write_text(target, "x = 1\n") is True
    finally:
        os.umask(old)
    assert target.read_text() == "x = 1\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert leftovers(target.parent) == []


def test_writing_never_sets_the_umask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the umask means setting it, for a moment, for every thread of the process
    (another thread's file would be created world-writable): writes leave it to the kernel."""

    def refuse(mask: int) -> int:
        raise AssertionError(f"os.umask({mask:o}) called")

    monkeypatch.setattr(os, "umask", refuse)
    write.write_text(tmp_path / "new.py", "x = 1\n")
    write.write_bytes(tmp_path / "private", b"k", new_mode=0o600)
    write.write_text(tmp_path / "new.py", "x = 2\n")
    assert stat.S_IMODE((tmp_path / "private").stat().st_mode) == 0o600
    assert (tmp_path / "new.py").read_text() == "x = 2\n"


def test_an_unchanged_file_is_not_touched(tmp_path: Path) -> None:
    target = tmp_path / "sdk.py"
    target.write_text("same\n")
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))
    assert write.write_text(target, "same\n") is False
    assert target.stat().st_mtime_ns == 1_000_000_000


@pytest.mark.parametrize("new", ["other\n", "longer text\n", "é\n"])
def test_a_changed_file_is_replaced_and_keeps_its_mode(tmp_path: Path, new: str) -> None:
    target = tmp_path / "sdk.py"
    target.write_text("same\n")
    target.chmod(0o604)
    inode = target.stat().st_ino
    assert write.write_text(target, new) is True
    assert target.read_text(encoding="utf-8") == new
    assert stat.S_IMODE(target.stat().st_mode) == 0o604
    assert target.stat().st_ino != inode  # a new file renamed over the old one
    assert leftovers(tmp_path) == []


def test_a_symbolic_link_to_the_same_bytes_is_left_alone(tmp_path: Path) -> None:
    real = tmp_path / "real.py"
    real.write_text("same\n")
    link = tmp_path / "link.py"
    link.symlink_to(real)
    assert write.write_text(link, "same\n") is False
    assert link.is_symlink()


def test_a_folder_in_the_way_is_a_usage_error_and_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "sdk.py"
    target.mkdir()
    with pytest.raises(UsageError, match=r"sdk\.py: cannot write"):
        write.write_text(target, "x\n")
    assert target.is_dir()
    assert leftovers(tmp_path) == []


def test_a_file_in_place_of_a_folder_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match="cannot write"):
        write.write_text(tmp_path / "file" / "sdk.py", "x\n")


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "sdk.py"
    target.write_text("old\n")

    def no_rename(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(write.os, "replace", no_rename)
    with pytest.raises(UsageError, match="No space left on device"):
        write.write_text(target, "new\n")
    assert target.read_text() == "old\n"
    assert leftovers(tmp_path) == []


def test_remove_file(tmp_path: Path) -> None:
    target = tmp_path / "gone.pickle"
    target.write_bytes(b"x")
    write.remove_file(target)
    assert not target.exists()
    write.remove_file(target)  # already gone: nothing to do
    with pytest.raises(UsageError, match="cannot remove"):
        write.remove_file(tmp_path)  # a folder is not removed
