"""A page that reads the facade's insides (what tests/test_architecture.py must catch); never imported."""

from scansnap.ui.resources import service

steps = service().store.steps("run")
