"""What every kind's trainer raises, and what a command says of its user's input."""


class DivergedError(RuntimeError):
    """A run's loss or parameters stopped being finite; ``step``: the last good step (a runner stores
    the run as ``diverged`` with the message, which says what to change)."""

    def __init__(self, step: int, message: str):
        self.step = step
        super().__init__(message)


class BadInputError(Exception):
    """A command's input is wrong (a kind's command may raise it too): printed as one line, exit code 2."""
