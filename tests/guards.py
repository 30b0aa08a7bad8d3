"""The one guard timeout of the tests: how long a test waits for a worker, a run, a job's status, a
subprocess or a store state before it fails.  A guard, never the behaviour a test asserts."""

GUARD_S = 300  # a hang detector, not a claim: a loaded 2-core host is only slower (pytest-timeout ends a test at 600 s)
GUARD_MS = GUARD_S * 1000  # the same guard in Playwright's milliseconds
