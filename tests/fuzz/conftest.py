"""The fuzz run works in the fault suite's directory (tests/faults/conftest.py says why)."""

from tests.faults.conftest import fault_dir

__all__ = ["fault_dir"]
