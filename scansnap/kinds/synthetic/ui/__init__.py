"""The Lab: the synthetic kind's page body (URL state, actions, live area, charts, the view of one run)."""
