"""Archive safety, one test per attack (pure: zips built in memory)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from sless.config import ArchiveLimits
from sless.validation import Verdict, extract_archive, inspect_archive

LIMITS = ArchiveLimits(
    max_files=10, max_total_bytes=4 * 1024 * 1024, max_file_bytes=3 * 1024 * 1024
)


def _zip(
    members: list[tuple[zipfile.ZipInfo | str, bytes]], compression: int = zipfile.ZIP_DEFLATED
) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for info, data in members:
            archive.writestr(info, data)
    return buffer.getvalue()


def _rules(data: bytes, limits: ArchiveLimits = LIMITS) -> list[str]:
    findings, _ = inspect_archive(data, limits)
    return [f.rule for f in findings]


def _typed(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = mode << 16
    return info


def test_a_clean_archive_extracts_with_fixed_permissions(tmp_path: Path) -> None:
    data = _zip([("handler.py", b"x = 1\n"), ("pkg/mod.py", b"y = 2\n"), ("pkg/", b"")])
    result = extract_archive(data, tmp_path / "out", LIMITS)
    assert result.stage.verdict is Verdict.ALLOW
    assert result.files == 2
    assert (tmp_path / "out/pkg/mod.py").read_text() == "y = 2\n"
    assert (tmp_path / "out/handler.py").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(
    "name",
    ["../evil.py", "a/../../evil.py", "/etc/passwd", "C:/windows/x", "a\\..\\b", "./../x.py"],
)
def test_zip_slip_and_absolute_paths_are_refused(name: str) -> None:
    assert _rules(_zip([(name, b"x")])) == ["archive-unsafe-path"]


def test_symlink_is_refused() -> None:
    assert _rules(_zip([(_typed("link", 0o120777), b"/etc/passwd")])) == ["archive-special-file"]


@pytest.mark.parametrize("mode", [0o020644, 0o060644, 0o010644, 0o140644])
def test_device_fifo_and_socket_entries_are_refused(mode: int) -> None:
    assert _rules(_zip([(_typed("dev", mode), b"")])) == ["archive-special-file"]


def test_hard_link_style_duplicate_entries_are_refused() -> None:
    # zip has no hard links; the closest trick is two members with the same path, where
    # which one wins depends on the extractor
    data = _zip([("handler.py", b"a"), ("Handler.py", b"b")])
    assert _rules(data) == ["archive-duplicate-member"]


def test_too_many_files() -> None:
    data = _zip([(f"f{i}.py", b"") for i in range(11)])
    assert _rules(data) == ["archive-too-many-files"]


def test_zip_bomb_ratio_is_refused() -> None:
    data = _zip([("bomb.txt", b"\0" * (2 * 1024 * 1024))])
    assert _rules(data) == ["archive-compression-ratio"]


def test_total_and_file_size_limits() -> None:
    big = bytes(range(256)) * (13 * 1024)  # ~3.3 MB, does not compress
    assert _rules(_zip([("a.bin", big)], zipfile.ZIP_STORED)) == ["archive-file-too-large"]
    two = _zip([("a.bin", big[:2_500_000]), ("b.bin", big[:2_500_000])], zipfile.ZIP_STORED)
    assert _rules(two) == ["archive-too-large"]


def test_declared_sizes_are_not_trusted(tmp_path: Path) -> None:
    data = bytearray(_zip([("a.txt", b"A" * 5000)], zipfile.ZIP_STORED))
    # shrink the declared uncompressed size in the central directory to 10 bytes
    central = data.rfind(b"PK\x01\x02")
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")
    result = extract_archive(bytes(data), tmp_path / "out", LIMITS)
    assert result.stage.verdict is Verdict.REJECT
    assert result.stage.findings[0].rule in {"archive-size-mismatch", "archive-corrupt"}


def test_not_a_zip() -> None:
    assert _rules(b"hello") == ["archive-not-zip"]


def test_encrypted_member_is_refused() -> None:
    data = bytearray(_zip([("a.py", b"x")], zipfile.ZIP_STORED))
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature)
        data[at + offset] |= 0x1
    assert _rules(bytes(data)) == ["archive-encrypted"]


def test_never_extracts_into_an_existing_directory(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    with pytest.raises(FileExistsError):
        extract_archive(_zip([("a.py", b"")]), tmp_path / "out", LIMITS)


def test_report_shows_names_printably() -> None:
    findings, _ = inspect_archive(_zip([("../\x1b[31mred", b"")]), LIMITS)
    assert findings[0].file is not None
    assert "\x1b" not in findings[0].file
