"""The toy kind's science: the one metric it records."""

from scansnap.core.metrics import Metric

METRICS = (Metric("x", "the toy's decaying number x", False),)
