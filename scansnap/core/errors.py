"""What every kind's trainer raises."""


class DivergedError(RuntimeError):
    """A run's loss or parameters stopped being finite; ``step``: the last good step (a runner stores
    the run as ``diverged`` with the message, which says what to change)."""

    def __init__(self, step: int, message: str):
        self.step = step
        super().__init__(message)
