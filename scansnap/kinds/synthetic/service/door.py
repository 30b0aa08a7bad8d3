"""The synthetic kind's own methods on the facade (``LabService.door("synthetic")``): its P(l|n) table
upload, read and written as CSV."""

from __future__ import annotations

from typing import Any

from scansnap.kinds.synthetic.service.table_upload import TABLE_UPLOAD, table_from_csv, table_to_csv


class SyntheticDoor:
    """What the Lab asks of the service beyond what every kind's run has."""

    TABLE_UPLOAD = TABLE_UPLOAD  # what the P(l|n) uploader takes

    def __init__(self, lab: Any):
        self._lab = lab

    @staticmethod
    def table_from_csv(data: bytes) -> tuple[list[list[float]], list[int]]:
        """(table, psi) of a P(l|n) CSV upload (ConfigError saying what is wrong)."""
        return table_from_csv(data)

    @staticmethod
    def table_to_csv(table: list[list[float]], psi: list[int]) -> str:
        """The CSV that :meth:`table_from_csv` reads back exactly."""
        return table_to_csv(table, psi)
