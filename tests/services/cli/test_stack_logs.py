"""``make run``'s logs rotate by size while the services keep writing."""

from __future__ import annotations

import os

from services.cli.stack import rotate_log


def test_a_log_past_its_size_is_copied_and_truncated_keeping_n(tmp_path) -> None:
    path = tmp_path / "match.log"
    writer = open(path, "ab", buffering=0)  # noqa: SIM115 - held open as a service holds it
    try:
        assert not rotate_log(path, max_bytes=100, keep=2)  # missing or small: no-op
        for generation in range(4):
            writer.write(f"{generation}".encode() * 150 + b"\n")
            assert rotate_log(path, max_bytes=100, keep=2)
            assert path.stat().st_size == 0
        writer.write(b"after\n")  # the writer goes on at the new end
    finally:
        writer.close()
    assert path.read_bytes() == b"after\n"
    assert (tmp_path / "match.log.1").read_bytes().startswith(b"3" * 150)
    assert (tmp_path / "match.log.2").read_bytes().startswith(b"2" * 150)
    assert not (tmp_path / "match.log.3").exists()
    assert not rotate_log(path, max_bytes=100, keep=2)
    assert sorted(os.listdir(tmp_path)) == ["match.log", "match.log.1", "match.log.2"]
