"""The toy kind's page side: how the Runs and Compare pages name its runs (no page opens one)."""

from scansnap.ui.kind_views import KindView

VIEW = KindView(
    "toy",
    noun="toy",
    export_note="A toy run's zip holds config.json and x (step, x).",
    first_metric="x",
    compare_note="Toy runs: x, one line each.",
)
